//! A conversation with a model, independent of any provider's wire format.
//!
//! Providers (`toolhost-providers`) translate these types to and from OpenAI chat
//! completions, the OpenAI Responses API and Anthropic messages; the agent loop builds them;
//! the session store (`toolhost-session`) keeps them. They live in `core` so that the three
//! agree without depending on each other.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{ContentBlock, ToolCallResult};

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user (or the host, on the user's behalf) said.
    User {
        /// Text and images.
        content: Vec<ContentBlock>,
    },
    /// What the model answered.
    Assistant(AssistantMessage),
    /// The result of one tool call the model asked for.
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User {
            content: vec![ContentBlock::text(text)],
        }
    }
}

/// One response of the model: text, reasoning and tool calls, in the order they came.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The parts of the response.
    pub content: Vec<AssistantPart>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Tokens this response cost.
    #[serde(default)]
    pub usage: Usage,
    /// The model that answered, as the provider reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl AssistantMessage {
    /// The tool calls of this response, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|part| match part {
            AssistantPart::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The text parts joined (reasoning left out).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|part| match part {
                AssistantPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// One part of a model's response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantPart {
    /// Text for the user.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning ("thinking"), when the provider shows it.
    Reasoning {
        /// The reasoning text (may be empty when the provider only returns it encrypted).
        text: String,
        /// What the provider needs back to continue from this reasoning (Anthropic's
        /// `signature`, the Responses API's encrypted content); opaque.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// The provider's id of this item, when it has one (the Responses API's `rs_…`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A tool call.
    ToolCall(ToolCall),
}

/// A tool call as the model wrote it.
///
/// `arguments` keeps the JSON text exactly as it arrived: a model may send an empty or
/// truncated string, which must come back to it as an error result, not crash the loop.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call; the result refers to it.
    pub id: String,
    /// The tool the model asked for.
    pub name: String,
    /// The arguments as JSON text, as received.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as a JSON object. An empty string is `{}` (models send it for
    /// tools without parameters); anything else that is not a JSON object is an error that
    /// says what was received.
    pub fn parsed_arguments(&self) -> Result<Value, String> {
        let text = self.arguments.trim();
        if text.is_empty() {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => Ok(value),
            Ok(other) => Err(format!(
                "the arguments of {} must be a JSON object, got {}",
                self.name,
                json_kind(&other)
            )),
            Err(error) => Err(format!(
                "the arguments of {} are not valid JSON ({error}); received: {}",
                self.name,
                preview(text)
            )),
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// At most 200 characters of `text`, for error messages.
fn preview(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text.to_owned(),
    }
}

/// The result of one tool call, as the model will read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The tool's name (Anthropic and the Responses API do not need it; some gateways do).
    pub tool_name: String,
    /// Text and images.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
}

impl From<&ToolCallResult> for ToolResultMessage {
    fn from(result: &ToolCallResult) -> Self {
        Self {
            tool_call_id: result.tool_call_id.clone(),
            tool_name: result.tool_name.clone(),
            content: result.content.clone(),
            is_error: result.is_error,
        }
    }
}

/// Why a model stopped answering.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    #[default]
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran into its output token limit.
    MaxTokens,
    /// The provider refused to answer (a content filter, a refusal).
    Refusal,
    /// Anything else the provider reported, as it spelled it.
    Other(String),
}

/// Tokens one response (or a whole run) cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Generated tokens, reasoning included.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn call(arguments: &str) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "Read".into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn empty_arguments_are_an_empty_object() {
        assert_eq!(call("  ").parsed_arguments(), Ok(serde_json::json!({})));
    }

    #[test]
    fn truncated_arguments_are_an_error_naming_the_tool_and_the_text() {
        let error = call(r#"{"path": "a.t"#).parsed_arguments().unwrap_err();
        assert!(
            error.starts_with("the arguments of Read are not valid JSON"),
            "{error}"
        );
        assert!(error.ends_with(r#"received: {"path": "a.t"#), "{error}");
    }

    #[test]
    fn arguments_that_are_not_an_object_are_an_error() {
        assert_eq!(
            call("[1]").parsed_arguments(),
            Err("the arguments of Read must be a JSON object, got an array".into())
        );
    }
}
