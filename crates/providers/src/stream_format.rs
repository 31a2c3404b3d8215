//! What every wire format's code shares, below the dispatch over formats in `wire`: the
//! decoder trait and its outcomes, reading an event's JSON and an error object, and the two
//! conversions every encoder makes (arguments as sent back, tool results as text).

use serde_json::Value;
use toolhost_core::{ContentBlock, tool_reference_text};

use crate::accumulate::{Emitter, ResponseBuilder};
use crate::sse::SseEvent;

/// What one event did to the response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    /// More is to come.
    Continue,
    /// The response is complete.
    Done,
}

/// Why a stream could not be read to its end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamFailure {
    /// The server sent something the format does not allow.
    Protocol(String),
    /// The server reported an error inside the stream.
    Server {
        /// Its message, with its type or code when it gave one.
        message: String,
        /// Whether it is an overload, rate limit or server fault worth retrying.
        retryable: bool,
    },
}

/// Reads one format's events into a [`ResponseBuilder`].
pub(crate) trait StreamDecoder: Send {
    /// Takes one event.
    fn event(
        &mut self,
        event: &SseEvent,
        response: &mut ResponseBuilder,
        out: &mut Emitter,
    ) -> Result<Progress, StreamFailure>;

    /// The body ended before the format's last event: whether what arrived is nevertheless
    /// a whole response (a server that omits `[DONE]` after its finish reason).
    fn complete_without_end(&self) -> bool {
        false
    }
}

/// Tool-call arguments as sent back to a model: the text it wrote when that is JSON, else
/// `{}` — servers that re-parse the history refuse broken JSON, and the call's error result
/// already tells the model what it sent.
pub(crate) fn sendable_arguments(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// The text of tool-result content for formats that carry only text there; images become a
/// note saying so, tool references a line naming the tool.
pub(crate) fn text_only(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { mime_type, .. } => format!("[{mime_type} image not shown]"),
            ContentBlock::ToolReference { tool_name } => tool_reference_text(tool_name),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses an event's JSON data.
pub(crate) fn parse_json(event: &SseEvent) -> Result<Value, StreamFailure> {
    serde_json::from_str(&event.data).map_err(|error| {
        let shown: String = event.data.chars().take(200).collect();
        StreamFailure::Protocol(format!("an event is not JSON ({error}): {shown}"))
    })
}

/// The failure an `{"error": {...}}` object describes: retryable for overloads, rate limits
/// and server faults.
pub(crate) fn error_object(error: &Value) -> StreamFailure {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .unwrap_or("no message")
        .to_owned();
    let kind = error
        .get("type")
        .filter(|kind| !kind.is_null())
        .or_else(|| error.get("code").filter(|code| !code.is_null()))
        .map(|kind| match kind {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let retryable = matches!(
        kind.as_str(),
        "overloaded_error"
            | "api_error"
            | "rate_limit_error"
            | "rate_limit_exceeded"
            | "server_error"
            | "server_is_overloaded"
            | "slow_down"
            | "408"
            | "429"
            | "500"
            | "502"
            | "503"
            | "504"
            | "529"
    );
    StreamFailure::Server {
        message: if kind.is_empty() {
            message
        } else {
            format!("{message} ({kind})")
        },
        retryable,
    }
}
