//! What a tool returns: content blocks for the model, details for renderers and state.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a tool's content, as the model will see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// The MIME type, such as `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A deferred tool this result loads (`tool_search`'s results carry one per tool found).
    /// A provider that defers tools natively sends it as a reference the API expands into
    /// the tool's definition (Anthropic's `tool_reference`); the others, and every provider
    /// when the request does not defer that tool, send a line of text naming it.
    #[serde(rename = "tool_reference")]
    ToolReference {
        /// The tool's name.
        tool_name: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block from base64 data and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A reference to the tool `tool_name`, which this result loads.
    pub fn tool_reference(tool_name: impl Into<String>) -> Self {
        Self::ToolReference {
            tool_name: tool_name.into(),
        }
    }

    /// The text of a text block, `None` for other blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::Image { .. } | Self::ToolReference { .. } => None,
        }
    }

    /// The tool a reference block names, `None` for other blocks.
    pub fn as_tool_reference(&self) -> Option<&str> {
        match self {
            Self::ToolReference { tool_name } => Some(tool_name),
            Self::Text { .. } | Self::Image { .. } => None,
        }
    }
}

/// A tool reference as text, for whoever cannot take it as a reference (a model API without
/// deferred loading, a request that does not defer that tool, an MCP client): a line naming
/// the tool, which the result's own text describes.
pub fn tool_reference_text(tool_name: &str) -> String {
    format!("[loaded tool: {tool_name}]")
}

/// The result a tool's `execute` produces, before the pipeline's final steps.
///
/// `content` is what the model reads; `details` is deterministic, schema-shaped JSON for
/// renderers and for rebuilding state (R2). A tool may return `is_error: true` itself (a shell
/// command that exited non-zero, say) when it has content worth showing with the error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Content for the model.
    pub content: Vec<ContentBlock>,
    /// Structured details for renderers and state; not sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Whether this output reports a failure.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful output with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            details: None,
            is_error: false,
        }
    }

    /// An error output with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }

    /// The same output with these details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// All text blocks joined by newlines.
    pub fn joined_text(&self) -> String {
        join_text(&self.content)
    }
}

/// A partial result streamed while a tool runs (R2's `on_update`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolUpdate {
    /// Content so far, or the newest chunk, as the tool documents.
    pub content: Vec<ContentBlock>,
    /// Structured progress details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Progress in `[0, total]`, when the tool can measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    /// The total that `progress` counts towards, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

impl ToolUpdate {
    /// An update carrying one text chunk.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            ..Self::default()
        }
    }
}

/// The final result of one call, after every step of the pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The id the caller gave this call.
    pub tool_call_id: String,
    /// The tool name as the caller gave it.
    pub tool_name: String,
    /// Content for the model.
    pub content: Vec<ContentBlock>,
    /// Structured details for renderers and state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Whether the call failed; error results end with [`crate::ERROR_HINT`].
    pub is_error: bool,
    /// Whether the text content was truncated to `max_chars`.
    pub truncated: bool,
    /// Wall time of the whole pipeline for this call.
    #[serde(rename = "duration_ms", with = "duration_millis")]
    pub duration: Duration,
}

impl ToolCallResult {
    /// All text blocks joined by newlines.
    pub fn text(&self) -> String {
        join_text(&self.content)
    }
}

fn join_text(content: &[ContentBlock]) -> String {
    let mut texts = content.iter().filter_map(ContentBlock::as_text);
    let Some(first) = texts.next() else {
        return String::new();
    };
    texts.fold(first.to_owned(), |mut joined, text| {
        joined.push('\n');
        joined.push_str(text);
        joined
    })
}

/// Durations travel as whole milliseconds (`"duration_ms": 12`), readable in any language.
mod duration_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        serializer.serialize_u64(millis)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_keep_their_stored_shape_and_a_tool_reference_names_its_tool() {
        let stored = json!([
            {"type": "text", "text": "Loaded 1 tool(s)"},
            {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
            {"type": "tool_reference", "tool_name": "mcp__git__log"},
        ]);
        let blocks: Vec<ContentBlock> = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(
            blocks,
            [
                ContentBlock::text("Loaded 1 tool(s)"),
                ContentBlock::image("iVBORw0K", "image/png"),
                ContentBlock::tool_reference("mcp__git__log"),
            ]
        );
        assert_eq!(serde_json::to_value(&blocks).unwrap(), stored);
        assert_eq!(blocks[2].as_tool_reference(), Some("mcp__git__log"));
        assert_eq!(blocks[2].as_text(), None);
    }
}
