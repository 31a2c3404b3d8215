//! The registry's operations (R7, R8, R16) and the definition formats.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_core::{
    DefinitionFormat, RegistryError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry,
    ToolSpec,
};
use toolhost_test_support::test_tools::*;

/// A tool whose schema is only known at run time, as MCP and JavaScript tools are.
struct Dynamic {
    name: String,
    schema: Value,
}

#[toolhost_core::async_trait]
impl Tool for Dynamic {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name.clone(), "A dynamic tool.").with_parameters(self.schema.clone())
    }

    async fn execute(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.to_string()))
    }
}

fn dynamic(name: &str) -> Dynamic {
    Dynamic {
        name: name.into(),
        schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
    }
}

#[test]
fn r7_register_get_has_all_names_and_unregister() {
    let registry = ToolRegistry::new();
    assert!(registry.is_empty());
    registry.register(Echo).unwrap();
    registry.register(dynamic("Dyn")).unwrap();
    let errors = registry.register_all([Arc::new(Lines) as Arc<dyn Tool>, Arc::new(Failing)]);
    assert!(errors.is_empty());

    assert_eq!(registry.names(), vec!["Echo", "Dyn", "Lines", "Failing"]);
    assert_eq!(registry.len(), 4);
    assert!(registry.has("Dyn"));
    assert!(!registry.has("dyn"));
    assert_eq!(registry.get("Echo").unwrap().spec().label, "Echo text");
    assert_eq!(registry.all().len(), 4);
    assert_eq!(registry.spec("Lines").unwrap().name, "Lines");
    // A tool's name without its spec: typed (schema not derived) and dynamic alike.
    assert_eq!(Echo.name(), Echo.spec().name);
    assert_eq!(dynamic("Dyn").name(), "Dyn");
    assert!(registry.any_spec(|spec| spec.label == "Echo text"));
    assert!(!registry.any_spec(|spec| spec.name == "Missing"));

    assert!(registry.unregister("Dyn"));
    assert!(!registry.unregister("Dyn"));
    assert_eq!(registry.names(), vec!["Echo", "Lines", "Failing"]);
}

#[test]
fn r8_a_name_that_exists_is_refused_and_the_first_tool_stays() {
    let registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    let error = registry.register(dynamic("Echo")).unwrap_err();
    assert!(matches!(&error, RegistryError::Duplicate(name) if name == "Echo"));
    assert_eq!(
        error.to_string(),
        "a tool named 'Echo' is already registered"
    );
    assert_eq!(
        registry.get("Echo").unwrap().spec().description,
        "Echoes text."
    );

    let refused = registry.register_all([
        Arc::new(dynamic("Echo")) as Arc<dyn Tool>,
        Arc::new(dynamic("Fresh")),
    ]);
    assert_eq!(refused.len(), 1);
    assert_eq!(registry.names(), vec!["Echo", "Fresh"]);
}

#[test]
fn names_that_providers_reject_are_refused_with_the_reason() {
    let registry = ToolRegistry::new();
    for (name, reason) in [
        ("", "it is empty"),
        ("has space", "it contains a character other than"),
        ("dot.ted", "it contains a character other than"),
        (&"x".repeat(65), "it is longer than 64 characters"),
    ] {
        let error = registry.register(dynamic(name)).unwrap_err().to_string();
        assert!(error.contains(reason), "{name:?}: {error}");
    }
    registry.register(dynamic(&"x".repeat(64))).unwrap();
    registry.register(dynamic("mcp__server-1__tool_2")).unwrap();
}

#[test]
fn a_schema_that_does_not_compile_is_refused_at_registration() {
    let registry = ToolRegistry::new();
    let bad = Dynamic {
        name: "Bad".into(),
        schema: json!({"type": "object", "properties": {"n": {"type": "integr"}}}),
    };
    let error = registry.register(bad).unwrap_err().to_string();
    assert!(
        error.starts_with("tool 'Bad' has an invalid parameters schema:"),
        "{error}"
    );
    let not_object = Dynamic {
        name: "Bad".into(),
        schema: json!(true),
    };
    let error = registry.register(not_object).unwrap_err().to_string();
    assert!(error.contains("must be a JSON object"), "{error}");
    assert!(registry.is_empty());
}

#[tokio::test]
async fn dynamic_tools_get_the_same_coercion_and_validation() {
    let registry = ToolRegistry::new();
    registry.register(dynamic("Dyn")).unwrap();
    let result = registry.execute("c", "Dyn", json!({"n": "12"})).await;
    assert_eq!(result.text(), r#"{"n":12}"#);
    let result = registry.execute("c", "Dyn", json!({"n": "twelve"})).await;
    assert!(result.is_error);
    assert!(
        result
            .text()
            .contains("'n': \"twelve\" is not of type \"integer\""),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn r16_filtered_registries_keep_only_the_allowed_tools_in_registry_order() {
    let registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.register(Lines).unwrap();
    registry.register(Failing).unwrap();
    let filtered = registry.filtered(["Failing", "Echo", "NotThere"]);
    assert_eq!(filtered.names(), vec!["Echo", "Failing"]);
    let refused = filtered.execute("c", "Lines", json!({"lines": 1})).await;
    assert!(refused.is_error);
    assert!(refused.text().contains("Unknown tool 'Lines'"));
    assert_eq!(
        filtered
            .execute("c", "Echo", json!({"text": "ok"}))
            .await
            .text(),
        "ok"
    );
    // The original is untouched.
    assert_eq!(registry.len(), 3);

    let read_only = registry.filter(|spec| spec.annotations.read_only);
    assert_eq!(read_only.names(), vec!["Echo"]);
}

#[tokio::test]
async fn changes_are_announced_to_subscribers() {
    let registry = ToolRegistry::new();
    let mut changes = registry.subscribe_changes();
    registry.register(Echo).unwrap();
    assert!(changes.has_changed().unwrap());
    changes.mark_unchanged();
    assert!(!registry.unregister("Nope"));
    assert!(!changes.has_changed().unwrap());
    assert!(registry.unregister("Echo"));
    assert!(changes.has_changed().unwrap());
}

#[test]
fn definitions_in_openai_anthropic_and_mcp_shapes() {
    let registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.register(dynamic("Dyn")).unwrap();
    insta::assert_json_snapshot!("openai", registry.definitions());
    insta::assert_json_snapshot!(
        "anthropic",
        registry.definitions_as(DefinitionFormat::Anthropic)
    );
    insta::assert_json_snapshot!("mcp", registry.definitions_as(DefinitionFormat::Mcp));
}

/// A dynamic tool with a schema that does not compile, trusted or not.
struct BadSchema {
    trusted: bool,
}

#[async_trait::async_trait]
impl toolhost_core::Tool for BadSchema {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Bad", "has a broken schema")
            .with_parameters(json!({"type": "object", "properties": {"n": {"type": 5}}}))
    }

    async fn execute(
        &self,
        _args: serde_json::Value,
        _ctx: toolhost_core::ToolContext,
    ) -> Result<toolhost_core::ToolOutput, toolhost_core::ToolError> {
        Ok(toolhost_core::ToolOutput::text("ran"))
    }

    fn schema_is_trusted(&self) -> bool {
        self.trusted
    }
}

#[tokio::test]
async fn untrusted_schemas_are_checked_at_registration_and_trusted_ones_on_first_call() {
    let registry = ToolRegistry::new();
    let refused = registry.register(BadSchema { trusted: false }).unwrap_err();
    assert!(refused.to_string().contains("Bad"), "{refused}");
    // A trusted schema costs nothing at start-up; if it were broken, the call says so.
    registry.register(BadSchema { trusted: true }).unwrap();
    let result = registry.execute("c", "Bad", json!({"n": 1})).await;
    assert!(result.is_error);
    assert!(
        result
            .text()
            .contains("The parameters schema of tool 'Bad' does not compile"),
        "{}",
        result.text()
    );
}

/// A trusted tool that counts how often its spec is derived.
struct CountedSpec {
    name: &'static str,
    derived: Arc<std::sync::atomic::AtomicUsize>,
}

#[async_trait::async_trait]
impl toolhost_core::Tool for CountedSpec {
    fn spec(&self) -> ToolSpec {
        self.derived
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ToolSpec::new(self.name, "counts its specs")
            .with_parameters(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
    }

    fn name(&self) -> String {
        self.name.to_owned()
    }

    async fn execute(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.to_string()))
    }

    fn schema_is_trusted(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_trusted_spec_is_derived_on_first_use_once_and_its_name_checked_at_registration() {
    let derived = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = || derived.load(std::sync::atomic::Ordering::SeqCst);
    let registry = ToolRegistry::new();
    registry
        .register(CountedSpec {
            name: "Counted",
            derived: Arc::clone(&derived),
        })
        .unwrap();
    // Registration, names, a copy for a mode that keeps everything: no spec derived.
    let copy = registry.for_mode(toolhost_core::permission::PermissionMode::Default);
    assert_eq!(copy.names(), vec!["Counted".to_owned()]);
    assert_eq!(count(), 0);
    // The first listing derives it, and the copy shares it; calls and listings reuse it.
    assert_eq!(registry.definitions().len(), 1);
    assert_eq!(count(), 1);
    let result = copy.execute("c", "Counted", json!({"n": "7"})).await;
    assert_eq!(result.text(), r#"{"n":7}"#, "coerced by the derived schema");
    assert_eq!(registry.specs()[0].name, "Counted");
    assert_eq!(count(), 1);
    // The name is still checked when the tool is registered.
    let clash = registry.register(CountedSpec {
        name: "Counted",
        derived: Arc::clone(&derived),
    });
    assert!(matches!(clash, Err(RegistryError::Duplicate(name)) if name == "Counted"));
    let invalid = registry.register(CountedSpec {
        name: "has space",
        derived: Arc::clone(&derived),
    });
    assert!(invalid.is_err(), "{invalid:?}");
    assert_eq!(count(), 1);
}
