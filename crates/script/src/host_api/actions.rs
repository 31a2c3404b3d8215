//! What a pi extension asks of the session it runs in (`pi.appendEntry`, `pi.sendMessage`,
//! `ctx.abort()`, …): queued on the host, in order, for the program running the session to
//! take after the event or command that made them ([`crate::ScriptHost::take_extension_actions`]).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

/// One request of an extension to its session.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionAction {
    /// The module that asked.
    pub module: PathBuf,
    /// What it asked.
    pub kind: ExtensionActionKind,
}

/// What an extension may ask of its session.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", content = "payload", rename_all = "snake_case")]
pub enum ExtensionActionKind {
    /// `ctx.abort()`: stop the run in progress.
    Abort,
    /// `ctx.shutdown()`: end the session when the run is over.
    Shutdown,
    /// `ctx.compact({ customInstructions, onComplete, onError })`: compact the conversation
    /// before the next request to the model.
    Compact {
        /// What the summary should keep.
        #[serde(default, rename = "customInstructions")]
        instructions: Option<String>,
        /// The extension's number for the request, when it passed callbacks to answer.
        #[serde(default, rename = "requestId")]
        request: Option<u64>,
    },
    /// `ctx.reload()` of a command: reload the extensions.
    Reload,
    /// `pi.sendMessage(message, options)`: a custom message for the conversation.
    SendMessage {
        /// `{customType, content, display, details}`.
        message: Value,
        /// `{triggerTurn, deliverAs}`.
        #[serde(default)]
        options: Value,
    },
    /// `pi.sendUserMessage(content, options)`: a message as from the user.
    SendUserMessage {
        /// Text, or content blocks.
        content: Value,
        /// `{deliverAs}`.
        #[serde(default)]
        options: Value,
    },
    /// `pi.setSessionName(name)`.
    SetSessionName {
        /// The name.
        name: String,
    },
    /// `pi.setActiveTools(names)`: only these tools are offered from now on.
    SetActiveTools {
        /// The tool names.
        names: Vec<String>,
    },
    /// `pi.events.emit(channel, data)`: for the `pi.events` handlers of the other extensions.
    BusEmit {
        /// The channel.
        channel: String,
        /// What was emitted (as JSON).
        #[serde(default)]
        data: Value,
    },
}

impl ExtensionActionKind {
    /// The action JavaScript sent as `kind` and JSON `payload`; `None` when it is not one.
    pub(crate) fn parse(kind: &str, payload: &str) -> Option<Self> {
        let payload: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
        let tagged = serde_json::json!({ "kind": kind, "payload": payload });
        // Unit variants carry no payload.
        let tagged = if payload.is_null() {
            serde_json::json!({ "kind": kind })
        } else {
            tagged
        };
        serde_json::from_value(tagged).ok()
    }

    /// The text of a message's content (a string, or text blocks joined by new lines).
    pub fn text_of(content: &Value) -> String {
        match content {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    Value::String(text) => Some(text.as_str()),
                    block => block.get("text").and_then(Value::as_str),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn actions_are_read_from_their_kind_and_payload() {
        assert_eq!(
            ExtensionActionKind::parse("abort", "null"),
            Some(ExtensionActionKind::Abort)
        );
        assert_eq!(
            ExtensionActionKind::parse("set_session_name", r#"{"name":"refactoring"}"#),
            Some(ExtensionActionKind::SetSessionName {
                name: "refactoring".into(),
            })
        );
        assert_eq!(ExtensionActionKind::parse("nonsense", "null"), None);
    }
}
