//! From MCP to toolhost: a server's tool becomes a [`ToolSpec`], a `tools/call` result a
//! [`ToolOutput`]. Both work on the JSON form, so that fields rmcp adds in later protocol
//! versions pass through untouched.

use serde_json::{Map, Value, json};
use toolhost_core::{
    ContentBlock, ForwardedDefinition, Sensitivity, ToolAnnotations, ToolOrigin, ToolOutput,
    ToolSpec,
};

use super::naming::server_segment;

/// Keys that model providers refuse at the top of a parameters schema (OpenAI wants a plain
/// object schema). They are dropped there; the server still validates its own arguments.
const REFUSED_TOP_LEVEL_KEYS: &[&str] = &["oneOf", "anyOf", "allOf", "not", "enum", "$schema"];

/// The spec of a server tool (`tool` is the JSON of an MCP `Tool`), named `name`, its origin
/// the server (so `mcp__<server>` rules name it, whatever its name became).
/// MCP tools always keep [`Sensitivity::Sensitive`]: they ask unless rules allow them (R29).
/// Permissions read the hints with MCP's defaults for those the server left out; the
/// definition served again holds the server's `outputSchema` and only the hints it gave.
pub fn tool_spec(name: &str, server: &str, tool: &Value) -> ToolSpec {
    let original = tool.get("name").and_then(Value::as_str).unwrap_or(name);
    let title = tool
        .get("title")
        .or_else(|| tool.pointer("/annotations/title"))
        .and_then(Value::as_str);
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .map_or_else(
            || format!("The tool '{original}' of the MCP server '{server}'."),
            str::to_owned,
        );
    let hint = |key: &str, default: bool| {
        tool.pointer(&format!("/annotations/{key}"))
            .and_then(Value::as_bool)
            .unwrap_or(default)
    };
    let annotations = ToolAnnotations {
        read_only: hint("readOnlyHint", false),
        destructive: hint("destructiveHint", true),
        idempotent: hint("idempotentHint", false),
        open_world: hint("openWorldHint", true),
    };
    let forwarded = ForwardedDefinition {
        annotations: tool
            .get("annotations")
            .and_then(Value::as_object)
            .filter(|annotations| !annotations.is_empty())
            .cloned(),
    };
    let spec = ToolSpec::new(name, description)
        .with_label(title.map_or_else(|| format!("{server}: {original}"), str::to_owned))
        .with_parameters(sanitize_schema(tool.get("inputSchema")))
        .with_annotations(annotations)
        .with_sensitivity(Sensitivity::Sensitive)
        .with_origin(ToolOrigin::mcp(server_segment(server)))
        .with_forwarded(forwarded);
    match tool.get("outputSchema").filter(|schema| schema.is_object()) {
        Some(schema) => spec.with_output_schema(schema.clone()),
        None => spec,
    }
}

/// A parameters schema every provider accepts: an object schema with `type: "object"` and
/// `properties`, without the top-level combinators providers refuse.
pub fn sanitize_schema(schema: Option<&Value>) -> Value {
    let mut object = match schema {
        Some(Value::Object(object)) => object.clone(),
        _ => Map::new(),
    };
    for key in REFUSED_TOP_LEVEL_KEYS {
        object.remove(*key);
    }
    object.insert("type".to_owned(), json!("object"));
    if !object.get("properties").is_some_and(Value::is_object) {
        object.insert("properties".to_owned(), json!({}));
    }
    if object
        .get("required")
        .is_some_and(|value| !value.is_array())
    {
        object.remove("required");
    }
    Value::Object(object)
}

/// The permissive schema used when a server's schema does not compile at all.
pub fn permissive_schema() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": true })
}

/// A `tools/call` result (its JSON) as a tool output: text and images pass through, resources
/// become text (or an image), audio and links a line saying what they are;
/// `structuredContent` becomes the details (and the text, when there is no other content);
/// `isError` the error flag.
pub fn call_result(result: &Value) -> ToolOutput {
    let mut content: Vec<ContentBlock> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().map(content_block).collect())
        .unwrap_or_default();
    let details = result
        .get("structuredContent")
        .filter(|value| !value.is_null())
        .cloned();
    if content.is_empty()
        && let Some(structured) = &details
    {
        content.push(ContentBlock::text(structured.to_string()));
    }
    ToolOutput {
        content,
        details,
        is_error: result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

fn content_block(block: &Value) -> ContentBlock {
    let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    match field("type") {
        "text" => ContentBlock::text(field("text")),
        "image" => ContentBlock::image(field("data"), field("mimeType")),
        "audio" => ContentBlock::text(format!(
            "[audio ({}), {} bytes of base64 data]",
            field("mimeType"),
            field("data").len()
        )),
        "resource" => resource(block.get("resource").unwrap_or(&Value::Null)),
        "resource_link" => ContentBlock::text(format!(
            "[resource link: {} {}]",
            field("name"),
            field("uri")
        )),
        other => ContentBlock::text(format!("[{other} content: {block}]")),
    }
}

/// An embedded resource (or a `resources/read` content) as a content block: text, an image,
/// or a line saying what it is.
pub(crate) fn resource(resource: &Value) -> ContentBlock {
    let field = |key: &str| resource.get(key).and_then(Value::as_str);
    let uri = field("uri").unwrap_or_default();
    let mime = field("mimeType").unwrap_or("application/octet-stream");
    if let Some(text) = field("text") {
        return ContentBlock::text(format!("[resource {uri}]\n{text}"));
    }
    let blob = field("blob").unwrap_or_default();
    if mime.starts_with("image/") {
        return ContentBlock::image(blob, mime);
    }
    ContentBlock::text(format!(
        "[resource {uri} ({mime}), {} bytes of base64 data]",
        blob.len()
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn schemas_become_plain_object_schemas() {
        assert_eq!(
            sanitize_schema(None),
            json!({ "type": "object", "properties": {} })
        );
        assert_eq!(
            sanitize_schema(Some(&json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "anyOf": [{ "required": ["a"] }],
                "properties": { "a": { "type": "string" } },
                "required": "a"
            }))),
            json!({ "properties": { "a": { "type": "string" } }, "type": "object" })
        );
    }

    #[test]
    fn results_map_content_structured_content_and_errors() {
        let output = call_result(&json!({
            "content": [
                { "type": "text", "text": "hello" },
                { "type": "image", "data": "AAAA", "mimeType": "image/png" },
                { "type": "resource", "resource": { "uri": "file:///a", "text": "body" } },
                { "type": "resource", "resource": { "uri": "file:///b", "blob": "AAAA", "mimeType": "application/zip" } },
                { "type": "resource_link", "uri": "file:///c", "name": "c" }
            ],
            "structuredContent": { "n": 1 },
            "isError": true
        }));
        assert_eq!(
            output,
            ToolOutput {
                content: vec![
                    ContentBlock::text("hello"),
                    ContentBlock::image("AAAA", "image/png"),
                    ContentBlock::text("[resource file:///a]\nbody"),
                    ContentBlock::text(
                        "[resource file:///b (application/zip), 4 bytes of base64 data]"
                    ),
                    ContentBlock::text("[resource link: c file:///c]"),
                ],
                details: Some(json!({ "n": 1 })),
                is_error: true,
            }
        );
        let structured_only =
            call_result(&json!({ "content": [], "structuredContent": { "n": 2 } }));
        assert_eq!(structured_only.joined_text(), r#"{"n":2}"#);
    }

    #[test]
    fn specs_keep_descriptions_hints_and_always_ask() {
        let spec = tool_spec(
            "mcp__s__echo",
            "s",
            &json!({ "name": "echo", "inputSchema": { "type": "object" },
                     "annotations": { "readOnlyHint": true } }),
        );
        assert_eq!(spec.description, "The tool 'echo' of the MCP server 's'.");
        assert_eq!(spec.label, "s: echo");
        assert!(spec.annotations.read_only);
        assert_eq!(spec.sensitivity, Sensitivity::Sensitive);
    }
}
