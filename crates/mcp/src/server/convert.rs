//! From toolhost's types to MCP's: a [`ToolSpec`] becomes a `tools/list` entry, a
//! [`ToolCallResult`] becomes a `tools/call` result.

use std::sync::Arc;

use rmcp::model::{self, CallToolResult, JsonObject};
use serde_json::{Map, Value};
use toolhost_core::{ContentBlock, ToolCallResult, ToolSpec};

/// The key that holds `details` in `structuredContent` when they are not a JSON object.
///
/// MCP requires `structuredContent` to be an object; `details` may be any JSON value, so an
/// array, string, number or boolean is wrapped as `{"value": ...}` rather than dropped: a
/// client that reads structured content then sees everything the tool reported.
pub const WRAPPED_DETAILS_KEY: &str = "value";

/// The `tools/list` entry of a tool, as [`toolhost_core::DefinitionFormat::Mcp`] renders it:
/// name, title (the label), description, `inputSchema`, `outputSchema` when the tool has
/// one, and the four behaviour hints, or, for a tool re-served from another server, only
/// the annotations that server gave.
pub fn tool_from_spec(spec: &ToolSpec) -> model::Tool {
    let schema = match &spec.parameters {
        Value::Object(schema) => schema.clone(),
        // The registry refuses schemas that do not compile; a non-object one still compiles
        // (`true`), and MCP clients need an object.
        _ => empty_object_schema(),
    };
    let mut tool = model::Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_title(spec.label.clone());
    if let Some(Value::Object(output)) = &spec.output_schema {
        tool.output_schema = Some(Arc::new(output.clone()));
    }
    let annotations = match &spec.forwarded {
        // Annotations rmcp cannot read are the server's business: left out.
        Some(forwarded) => forwarded.annotations.as_ref().and_then(|given| {
            serde_json::from_value::<model::ToolAnnotations>(Value::Object(given.clone())).ok()
        }),
        None => Some(
            model::ToolAnnotations::with_title(spec.label.clone())
                .read_only(spec.annotations.read_only)
                .destructive(spec.annotations.destructive)
                .idempotent(spec.annotations.idempotent)
                .open_world(spec.annotations.open_world),
        ),
    };
    match annotations {
        Some(annotations) => tool.with_annotations(annotations),
        None => tool,
    }
}

/// The `tools/call` result of a pipeline result: content blocks as they are, `details` as
/// `structuredContent` (see [`WRAPPED_DETAILS_KEY`]), `is_error` as `isError`.
pub fn call_result_from(result: ToolCallResult) -> CallToolResult {
    let content = result.content.into_iter().map(content_block).collect();
    let mut converted = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    converted.structured_content = result.details.and_then(structured_content);
    converted
}

/// `details` as a `structuredContent` object; `null` means "no details" and is omitted.
fn structured_content(details: Value) -> Option<Value> {
    match details {
        Value::Null => None,
        Value::Object(_) => Some(details),
        other => {
            let mut wrapped = Map::new();
            wrapped.insert(WRAPPED_DETAILS_KEY.to_owned(), other);
            Some(Value::Object(wrapped))
        }
    }
}

fn content_block(block: ContentBlock) -> model::ContentBlock {
    match block {
        ContentBlock::Text { text } => model::ContentBlock::text(text),
        ContentBlock::Image { data, mime_type } => model::ContentBlock::image(data, mime_type),
        // MCP has no such block; a client learns of the tool from `tools/list_changed`.
        ContentBlock::ToolReference { tool_name } => {
            model::ContentBlock::text(toolhost_core::tool_reference_text(&tool_name))
        }
    }
}

fn empty_object_schema() -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".to_owned(), Value::String("object".to_owned()));
    schema.insert("properties".to_owned(), Value::Object(Map::new()));
    schema
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use serde_json::json;
    use toolhost_core::{DefinitionFormat, ToolAnnotations};

    use super::*;

    fn result(details: Option<Value>, is_error: bool) -> ToolCallResult {
        ToolCallResult {
            tool_call_id: "1".to_owned(),
            tool_name: "T".to_owned(),
            content: vec![ContentBlock::text("hello")],
            details,
            is_error,
            truncated: false,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn a_listed_tool_matches_the_registry_mcp_definition() {
        let spec = ToolSpec::new("Read", "Reads a file.")
            .with_label("Read file")
            .with_annotations(ToolAnnotations::READ_ONLY)
            .with_parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}));
        let listed = serde_json::to_value(tool_from_spec(&spec)).unwrap();
        assert_eq!(listed, DefinitionFormat::Mcp.render(&spec));
    }

    #[test]
    fn a_re_served_tool_keeps_its_output_schema_and_only_the_hints_its_server_gave() {
        let upstream = json!({
            "name": "write_file",
            "description": "Writes a file.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "outputSchema": {"type": "object", "properties": {"written": {"type": "integer"}}},
            "annotations": {"destructiveHint": true}
        });
        let spec = crate::client::convert::tool_spec("mcp__fs__write_file", "fs", &upstream);
        let listed = serde_json::to_value(tool_from_spec(&spec)).unwrap();
        assert_eq!(listed, DefinitionFormat::Mcp.render(&spec));
        assert_eq!(listed["annotations"], json!({"destructiveHint": true}));
        assert_eq!(listed["outputSchema"], upstream["outputSchema"]);
        // Permissions still read MCP's defaults for the hints left out.
        assert!(!spec.annotations.read_only);

        let bare = json!({"name": "ping", "inputSchema": {"type": "object"}});
        let spec = crate::client::convert::tool_spec("mcp__fs__ping", "fs", &bare);
        let listed = serde_json::to_value(tool_from_spec(&spec)).unwrap();
        assert_eq!(listed, DefinitionFormat::Mcp.render(&spec));
        assert_eq!(listed.get("annotations"), None);
        assert_eq!(listed.get("outputSchema"), None);
    }

    #[test]
    fn object_details_become_structured_content() {
        let converted = call_result_from(result(Some(json!({"lines": 3})), false));
        assert_eq!(converted.structured_content, Some(json!({"lines": 3})));
        assert_eq!(converted.is_error, Some(false));
    }

    #[test]
    fn other_details_are_wrapped_and_null_is_omitted() {
        let converted = call_result_from(result(Some(json!([1, 2])), true));
        assert_eq!(converted.structured_content, Some(json!({"value": [1, 2]})));
        assert_eq!(converted.is_error, Some(true));
        let converted = call_result_from(result(Some(Value::Null), false));
        assert_eq!(converted.structured_content, None);
        let converted = call_result_from(result(None, false));
        assert_eq!(converted.structured_content, None);
    }
}
