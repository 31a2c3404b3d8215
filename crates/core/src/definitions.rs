//! Tool definitions in the shapes model providers and MCP clients expect (R7).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::spec::ToolSpec;

/// The shape of a tool definition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefinitionFormat {
    /// OpenAI function calling: `{"type":"function","function":{name,description,parameters}}`.
    #[default]
    OpenAi,
    /// Anthropic Messages API: `{name, description, input_schema}`.
    Anthropic,
    /// MCP `tools/list`: `{name, title, description, inputSchema, outputSchema?,
    /// annotations?}`; a re-served tool's annotations as its server gave them.
    Mcp,
}

impl DefinitionFormat {
    /// The definition of `spec` in this format.
    pub fn render(self, spec: &ToolSpec) -> Value {
        match self {
            Self::OpenAi => json!({
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                }
            }),
            Self::Anthropic => json!({
                "name": spec.name,
                "description": spec.description,
                "input_schema": spec.parameters,
            }),
            Self::Mcp => mcp_definition(spec),
        }
    }
}

/// The MCP definition: a toolhost tool's four hints (and its label as the annotations' title);
/// for a tool re-served from another server, the annotations that server gave, if any.
fn mcp_definition(spec: &ToolSpec) -> Value {
    let mut definition = json!({
        "name": spec.name,
        "title": spec.label,
        "description": spec.description,
        "inputSchema": spec.parameters,
    });
    if let Some(schema) = &spec.output_schema {
        definition["outputSchema"] = schema.clone();
    }
    match &spec.forwarded {
        Some(forwarded) => {
            if let Some(annotations) = &forwarded.annotations {
                definition["annotations"] = Value::Object(annotations.clone());
            }
        }
        None => {
            definition["annotations"] = json!({
                "title": spec.label,
                "readOnlyHint": spec.annotations.read_only,
                "destructiveHint": spec.annotations.destructive,
                "idempotentHint": spec.annotations.idempotent,
                "openWorldHint": spec.annotations.open_world,
            });
        }
    }
    definition
}
