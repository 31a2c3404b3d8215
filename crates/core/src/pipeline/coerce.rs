//! Schema-guided repair of the type mistakes models make most often (R11).
//!
//! Coercion only touches a value whose JSON type the schema does not accept, so an argument
//! that was already valid stays valid (a property test checks this). The one exception is
//! harmless: an integral float such as `5.0` where an integer is expected becomes `5`, which
//! both JSON Schema and serde's integer parsing accept.

use serde_json::{Map, Number, Value};

/// How deep coercion follows nested schemas and `$ref`s before it leaves a value alone.
const MAX_DEPTH: usize = 32;

/// Repairs `args` in place against `schema`; returns whether anything changed.
///
/// At the top level, `null` for an object schema becomes `{}` (a model calling a tool without
/// arguments). Below it:
/// - a string becomes a number, integer or boolean when it spells one;
/// - JSON text becomes the object or array it encodes;
/// - a lone value becomes a one-element array;
/// - a number or boolean becomes a string where a string is expected;
/// - `null` for an optional property whose schema does not allow `null` is removed;
/// - a required property that is missing and whose schema has a `default` gets the default
///   (the server would fill it in: Playwright MCP's `browser_take_screenshot` requires
///   `scale`, which defaults to `"css"`).
pub fn coerce_arguments(schema: &Value, args: &mut Value) -> bool {
    if args.is_null() && accepted_types(schema, schema).contains(JsonType::Object) {
        *args = Value::Object(Map::new());
        return true;
    }
    Coercer { root: schema }.coerce(schema, args, 0)
}

struct Coercer<'s> {
    root: &'s Value,
}

impl<'s> Coercer<'s> {
    fn coerce(&self, schema: &'s Value, value: &mut Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let schema = resolve_ref(self.root, schema, depth);
        if let Some(branches) = alternatives(schema) {
            return self.coerce_alternatives(branches, value, depth);
        }
        let types = accepted_types(self.root, schema);
        let mut changed = false;
        if !types.is_empty() && !types.accepts(value) {
            if let Some(converted) = types.iter().find_map(|target| convert(value, target)) {
                *value = converted;
                changed = true;
            }
        } else if types.contains(JsonType::Integer)
            && !types.contains(JsonType::Number)
            && let Some(integer) = integral_float(value)
        {
            *value = integer;
            changed = true;
        }
        changed | self.coerce_children(schema, value, depth)
    }

    /// `anyOf` / `oneOf`: recurse only when exactly one branch takes the value's type, so a
    /// value valid under another branch is never rewritten; convert only when none takes it.
    fn coerce_alternatives(&self, branches: &'s [Value], value: &mut Value, depth: usize) -> bool {
        let resolved: Vec<&Value> = branches
            .iter()
            .map(|branch| resolve_ref(self.root, branch, depth + 1))
            .collect();
        let accepting: Vec<&Value> = resolved
            .iter()
            .copied()
            .filter(|branch| {
                let types = accepted_types(self.root, branch);
                types.is_empty() || types.accepts(value)
            })
            .collect();
        match accepting.as_slice() {
            [only] => self.coerce(only, value, depth + 1),
            [] => {
                for branch in resolved {
                    let types = accepted_types(self.root, branch);
                    if let Some(converted) = types.iter().find_map(|target| convert(value, target))
                    {
                        *value = converted;
                        self.coerce_children(branch, value, depth + 1);
                        return true;
                    }
                }
                false
            }
            _ => false,
        }
    }

    fn coerce_children(&self, schema: &'s Value, value: &mut Value, depth: usize) -> bool {
        match value {
            Value::Object(object) => self.coerce_properties(schema, object, depth),
            Value::Array(items) => self.coerce_items(schema, items, depth),
            _ => false,
        }
    }

    fn coerce_properties(
        &self,
        schema: &'s Value,
        object: &mut Map<String, Value>,
        depth: usize,
    ) -> bool {
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties").filter(|s| s.is_object());
        let required = schema.get("required").and_then(Value::as_array);
        let is_required = |name: &str| {
            required.is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
        };
        let mut changed = false;
        let mut nulls_to_drop = Vec::new();
        for (name, child) in object.iter_mut() {
            let Some(child_schema) = properties.and_then(|p| p.get(name)).or(additional) else {
                continue;
            };
            if child.is_null() && !is_required(name) && !self.accepts_null(child_schema, depth) {
                nulls_to_drop.push(name.clone());
                continue;
            }
            changed |= self.coerce(child_schema, child, depth + 1);
        }
        for name in &nulls_to_drop {
            object.remove(name);
        }
        changed
            | !nulls_to_drop.is_empty()
            | self.fill_defaults(properties, required, object, depth)
    }

    /// Adds each required property that is missing and has a `default`, with that value.
    fn fill_defaults(
        &self,
        properties: Option<&'s Map<String, Value>>,
        required: Option<&'s Vec<Value>>,
        object: &mut Map<String, Value>,
        depth: usize,
    ) -> bool {
        let (Some(properties), Some(required)) = (properties, required) else {
            return false;
        };
        let mut changed = false;
        for name in required.iter().filter_map(Value::as_str) {
            if object.contains_key(name) {
                continue;
            }
            let default = properties
                .get(name)
                .map(|schema| resolve_ref(self.root, schema, depth + 1))
                .and_then(|schema| schema.get("default"));
            if let Some(default) = default {
                object.insert(name.to_owned(), default.clone());
                changed = true;
            }
        }
        changed
    }

    fn coerce_items(&self, schema: &'s Value, items: &mut [Value], depth: usize) -> bool {
        let prefix = schema.get("prefixItems").and_then(Value::as_array);
        let rest = schema.get("items").filter(|s| s.is_object());
        let mut changed = false;
        for (index, item) in items.iter_mut().enumerate() {
            let item_schema = prefix.and_then(|p| p.get(index)).or(rest);
            if let Some(item_schema) = item_schema {
                changed |= self.coerce(item_schema, item, depth + 1);
            }
        }
        changed
    }

    /// Whether `null` may stand here; a schema that does not constrain types allows it.
    fn accepts_null(&self, schema: &'s Value, depth: usize) -> bool {
        let schema = resolve_ref(self.root, schema, depth);
        if let Some(branches) = alternatives(schema) {
            return branches
                .iter()
                .any(|branch| self.accepts_null(branch, depth + 1));
        }
        let types = accepted_types(self.root, schema);
        types.is_empty() || types.contains(JsonType::Null)
    }
}

/// Follows a local `$ref` (`#/$defs/...`, `#/definitions/...`) within the root schema.
fn resolve_ref<'s>(root: &'s Value, schema: &'s Value, depth: usize) -> &'s Value {
    let mut current = schema;
    for _ in depth..MAX_DEPTH {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => match reference.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => current = target,
                None => return current,
            },
            None => return current,
        }
    }
    current
}

fn alternatives(schema: &Value) -> Option<&[Value]> {
    if schema.get("type").is_some() {
        return None;
    }
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JsonType {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "null" => Self::Null,
            "boolean" => Self::Boolean,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "string" => Self::String,
            "array" => Self::Array,
            "object" => Self::Object,
            _ => return None,
        })
    }

    fn accepts(self, value: &Value) -> bool {
        match (self, value) {
            (Self::Null, Value::Null)
            | (Self::Boolean, Value::Bool(_))
            | (Self::Number, Value::Number(_))
            | (Self::String, Value::String(_))
            | (Self::Array, Value::Array(_))
            | (Self::Object, Value::Object(_)) => true,
            (Self::Integer, Value::Number(number)) => is_integral(number),
            _ => false,
        }
    }
}

/// The set of JSON types a schema's `type` keyword allows, in the order it lists them.
/// Empty means unconstrained.
#[derive(Default)]
struct TypeSet {
    types: [Option<JsonType>; 7],
}

impl TypeSet {
    fn is_empty(&self) -> bool {
        self.types[0].is_none()
    }

    fn iter(&self) -> impl Iterator<Item = JsonType> + '_ {
        self.types.iter().map_while(|t| *t)
    }

    fn contains(&self, wanted: JsonType) -> bool {
        self.iter().any(|t| t == wanted)
    }

    fn accepts(&self, value: &Value) -> bool {
        self.iter().any(|t| t.accepts(value))
    }
}

fn accepted_types(root: &Value, schema: &Value) -> TypeSet {
    let schema = resolve_ref(root, schema, 0);
    let mut set = TypeSet::default();
    let names: Vec<&str> = match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for (slot, parsed) in set
        .types
        .iter_mut()
        .zip(names.into_iter().filter_map(JsonType::parse))
    {
        *slot = Some(parsed);
    }
    set
}

fn is_integral(number: &Number) -> bool {
    number.is_i64()
        || number.is_u64()
        || number
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

fn integral_float(value: &Value) -> Option<Value> {
    let number = value.as_number().filter(|n| n.is_f64())?;
    let float = number.as_f64()?;
    // Only floats that an i64 holds exactly; 2^63 and beyond stay as they are.
    if float.fract() == 0.0 && float.abs() < 9.2e18 {
        #[allow(clippy::cast_possible_truncation)]
        return Some(Value::from(float as i64));
    }
    None
}

/// Converts `value` to `target`, or `None` when it does not spell a value of that type.
fn convert(value: &Value, target: JsonType) -> Option<Value> {
    match (target, value) {
        (JsonType::Integer, Value::String(text)) => parse_integer(text.trim()),
        (JsonType::Number, Value::String(text)) => parse_number(text.trim()),
        (JsonType::Boolean, Value::String(text)) => match text.trim().to_ascii_lowercase().as_str()
        {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        (JsonType::String, Value::Number(number)) => Some(Value::String(number.to_string())),
        (JsonType::String, Value::Bool(flag)) => Some(Value::String(flag.to_string())),
        (JsonType::Object, Value::String(text)) => parse_json(text, '{').filter(Value::is_object),
        (JsonType::Array, Value::String(text)) => Some(
            parse_json(text, '[')
                .filter(Value::is_array)
                .unwrap_or_else(|| Value::Array(vec![value.clone()])),
        ),
        (JsonType::Array, Value::Null) => None,
        (JsonType::Array, other) => Some(Value::Array(vec![other.clone()])),
        _ => None,
    }
}

fn parse_integer(text: &str) -> Option<Value> {
    if let Ok(integer) = text.parse::<i64>() {
        return Some(Value::from(integer));
    }
    if let Ok(integer) = text.parse::<u64>() {
        return Some(Value::from(integer));
    }
    let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    integral_float(&Value::from(float))
}

fn parse_number(text: &str) -> Option<Value> {
    parse_integer(text).or_else(|| {
        let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
        Number::from_f64(float).map(Value::Number)
    })
}

fn parse_json(text: &str, opening: char) -> Option<Value> {
    let trimmed = text.trim();
    if !trimmed.starts_with(opening) {
        return None;
    }
    serde_json::from_str(trimmed).ok()
}
