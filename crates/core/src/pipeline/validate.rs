//! Full JSON Schema validation with errors that name the parameter (R12).

use std::fmt::Write as _;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

/// A tool's parameters schema, compiled once: at registration for a schema from elsewhere
/// (an MCP server, a JavaScript module), so that a bad one is refused there; on the first call
/// for one derived from a Rust type, which always compiles — so start-up builds no validator
/// (nor the meta-schema validator that checks each schema) for tools that may never be called.
pub(crate) struct ArgumentValidator {
    compiled: OnceLock<Result<Validator, String>>,
}

impl ArgumentValidator {
    /// Compiles `schema` now; the error says what the compiler rejected.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let validator = compile(schema)?;
        Ok(Self {
            compiled: OnceLock::from(Ok(validator)),
        })
    }

    /// Compiles the schema on the first [`Self::check`], once, whichever thread gets there
    /// first (a schema that is not an object is reported then).
    pub(crate) fn deferred() -> Self {
        Self {
            compiled: OnceLock::new(),
        }
    }

    /// Checks `args`; on failure, a message for the model listing every problem.
    pub(crate) fn check(&self, tool: &str, schema: &Value, args: &Value) -> Result<(), String> {
        let validator = match self.compiled.get_or_init(|| compile(schema)) {
            Ok(validator) => validator,
            Err(reason) => {
                return Err(format!(
                    "The parameters schema of tool '{tool}' does not compile ({reason}), so the \
                     call was not run. Tell the user: the tool is broken."
                ));
            }
        };
        if validator.is_valid(args) {
            return Ok(());
        }
        let mut message = format!("Invalid arguments for tool '{tool}':");
        for error in validator.iter_errors(args) {
            let _ = write!(message, "\n- {}", describe(&error));
        }
        if let Some(signature) = parameter_signature(schema) {
            let _ = write!(message, "\nExpected parameters: {signature}");
        }
        Err(message)
    }
}

const NOT_AN_OBJECT: &str = "the parameters schema must be a JSON object";

fn compile(schema: &Value) -> Result<Validator, String> {
    if !schema.is_object() {
        return Err(NOT_AN_OBJECT.to_owned());
    }
    jsonschema::validator_for(schema).map_err(|error| error.to_string())
}

/// One validation error as `parameter: problem`.
fn describe(error: &ValidationError<'_>) -> String {
    let location = parameter_name(error.instance_path().as_str());
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let property = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let path = join_path(&location, &property);
            format!("'{path}': missing required parameter")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected
                .iter()
                .map(|name| join_path(&location, name))
                .collect();
            format!(
                "unexpected parameter(s) {}: not part of the schema",
                quote_all(&names)
            )
        }
        _ if location.is_empty() => format!("arguments: {error}"),
        _ => format!("'{location}': {error}"),
    }
}

/// `/edits/0/old_string` → `edits[0].old_string`; the root is the empty string.
fn parameter_name(pointer: &str) -> String {
    let mut name = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if segment.parse::<usize>().is_ok() && !name.is_empty() {
            let _ = write!(name, "[{segment}]");
        } else {
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(&segment);
        }
    }
    name
}

fn join_path(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

fn quote_all(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("'{name}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `path: string (required), limit: integer` from a schema's top-level properties.
fn parameter_signature(schema: &Value) -> Option<String> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return Some("none".to_owned());
    }
    let required = schema.get("required").and_then(Value::as_array);
    let parts: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let kind = type_label(property);
            let is_required =
                required.is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)));
            if is_required {
                format!("{name}: {kind} (required)")
            } else {
                format!("{name}: {kind}")
            }
        })
        .collect();
    Some(parts.join(", "))
}

fn type_label(property: &Value) -> String {
    match property.get("type") {
        Some(Value::String(name)) => name.clone(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| *name != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ if property.get("enum").is_some() => "enum".to_owned(),
        _ => "any".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_become_parameter_paths() {
        assert_eq!(parameter_name(""), "");
        assert_eq!(parameter_name("/path"), "path");
        assert_eq!(parameter_name("/edits/0/old_string"), "edits[0].old_string");
        assert_eq!(parameter_name("/a~1b"), "a/b");
    }
}
