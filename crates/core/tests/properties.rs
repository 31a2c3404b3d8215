//! Property tests: coercion never turns a valid argument invalid, and the pipeline never
//! panics, whatever JSON a model sends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolhost_core::{ERROR_HINT, ToolRegistry, coerce_arguments};
use toolhost_test_support::test_tools::*;

/// Schemas with the features coercion walks: types and type lists, nesting, arrays,
/// `anyOf`, `$ref`, `additionalProperties`, enums and ranges.
fn schemas() -> Vec<Value> {
    vec![
        toolhost_core::schema_for_params::<EchoParams>(),
        json!({
            "type": "object",
            "properties": {
                "id": {"type": ["integer", "string"]},
                "when": {"anyOf": [{"type": "number"}, {"type": "boolean"}, {"type": "null"}]},
                "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
                "mode": {"enum": ["fast", "slow", 3]},
            },
            "additionalProperties": {"type": "number"},
            "$defs": {
                "item": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "size": {"type": "integer", "minimum": 0}},
                    "required": ["name"]
                }
            }
        }),
        json!({
            "type": "object",
            "properties": {
                "list": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "string"}], "items": {"type": "integer"}},
                "either": {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "array", "items": {"type": "string"}}]},
                "free": {},
            }
        }),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        Just(json!(5.0)),
        prop_oneof![
            "[a-z]{0,6}",
            Just("5".to_owned()),
            Just("true".to_owned()),
            Just("[1, 2]".to_owned()),
            Just("{\"name\": \"n\"}".to_owned()),
            Just("2.5".to_owned()),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("text".to_owned()),
                        Just("count".to_owned()),
                        Just("shout".to_owned()),
                        Just("options".to_owned()),
                        Just("separator".to_owned()),
                        Just("tags".to_owned()),
                        Just("ratio".to_owned()),
                        Just("id".to_owned()),
                        Just("when".to_owned()),
                        Just("items".to_owned()),
                        Just("name".to_owned()),
                        Just("size".to_owned()),
                        Just("mode".to_owned()),
                        Just("list".to_owned()),
                        Just("either".to_owned()),
                        Just("free".to_owned()),
                        "[a-z]{1,4}",
                    ],
                    inner,
                ),
                0..6
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn coercion_never_turns_a_valid_argument_invalid(value in any_json(), which in 0usize..3) {
        let schema = &schemas()[which];
        let validator = jsonschema::validator_for(schema).unwrap();
        if validator.is_valid(&value) {
            let mut coerced = value.clone();
            coerce_arguments(schema, &mut coerced);
            prop_assert!(
                validator.is_valid(&coerced),
                "valid {value} became invalid {coerced}"
            );
        }
    }

    #[test]
    fn coercion_is_idempotent(value in any_json(), which in 0usize..3) {
        let schema = &schemas()[which];
        let mut once = value;
        coerce_arguments(schema, &mut once);
        let mut twice = once.clone();
        coerce_arguments(schema, &mut twice);
        prop_assert_eq!(once, twice);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn the_pipeline_never_panics_and_errors_always_carry_the_hint(
        args in any_json(),
        name in prop_oneof![Just("Echo".to_owned()), Just("Lines".to_owned()), "[A-Za-z]{0,6}"],
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let registry = ToolRegistry::new();
        registry.register(Echo).unwrap();
        registry.register(Lines).unwrap();
        let result = runtime.block_on(registry.execute("p", &name, args));
        if result.is_error {
            prop_assert!(result.text().ends_with(ERROR_HINT));
        }
        prop_assert_eq!(result.tool_name, name);
    }
}
