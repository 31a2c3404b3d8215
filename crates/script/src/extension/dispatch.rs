//! The events whose handlers answer, combined across extensions as pi's runner combines them:
//! each extension's handlers see what the previous ones left, in load order.

use serde_json::{Value, json};

use super::Extensions;
use toolhost_core::ContentBlock;

/// The names pi gives toolhost's built-in tools: pi extensions test `event.toolName` against
/// these (`"bash"`, `"read"`, …).
const PI_TOOL_NAMES: &[(&str, &str)] = &[
    ("Bash", "bash"),
    ("Read", "read"),
    ("Edit", "edit"),
    ("Write", "write"),
    ("Grep", "grep"),
    ("Glob", "find"),
    ("ListDir", "ls"),
];

/// The name a pi extension knows `tool` by.
pub fn pi_tool_name(tool: &str) -> &str {
    PI_TOOL_NAMES
        .iter()
        .find(|(ours, _)| *ours == tool)
        .map_or(tool, |(_, pi)| pi)
}

/// What the `tool_call` handlers decided about a call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolCallVerdict {
    /// Run it as asked.
    Proceed,
    /// Run it with these arguments instead (a handler changed `event.input`).
    Rewrite(Value),
    /// Do not run it; the reason goes to the model.
    Block(String),
}

/// What the `tool_result` handlers changed about a result (`None`: left as it was).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResultChange {
    /// New content.
    pub content: Option<Vec<ContentBlock>>,
    /// New details.
    pub details: Option<Value>,
    /// A new error flag.
    pub is_error: Option<bool>,
}

/// What the `input` handlers made of the user's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputOutcome {
    /// Send it as it is.
    Continue,
    /// Send this text instead.
    Transform(String),
    /// An extension dealt with it: send nothing.
    Handled,
}

impl Extensions {
    /// The `tool_call` handlers on a call of `tool` with `input`.
    pub async fn tool_call(&self, tool: &str, call_id: &str, input: &Value) -> ToolCallVerdict {
        let mut current = input.clone();
        for extension in &self.loaded {
            let payload = json!({
                "toolName": pi_tool_name(tool),
                "toolCallId": call_id,
                "input": current,
            });
            let (result, tools) = extension.emit("tool_call", &payload).await;
            self.keep_new_tools(tools);
            if result.get("block").and_then(Value::as_bool) == Some(true) {
                let reason = result.get("reason").and_then(Value::as_str).map_or_else(
                    || format!("blocked by the extension {}", extension.path().display()),
                    str::to_owned,
                );
                return ToolCallVerdict::Block(reason);
            }
            if let Some(input) = result.get("input").filter(|input| input.is_object()) {
                current = input.clone();
            }
        }
        if &current == input {
            ToolCallVerdict::Proceed
        } else {
            ToolCallVerdict::Rewrite(current)
        }
    }

    /// The `tool_result` handlers on a result of `tool` called with `input`.
    pub async fn tool_result(
        &self,
        tool: &str,
        call_id: &str,
        input: &Value,
        content: &[ContentBlock],
        details: Option<&Value>,
        is_error: bool,
    ) -> ToolResultChange {
        let mut change = ToolResultChange::default();
        let mut content = serde_json::to_value(content).unwrap_or(Value::Null);
        let mut details = details.cloned().unwrap_or(Value::Null);
        let mut is_error = is_error;
        for extension in &self.loaded {
            let payload = json!({
                "toolName": pi_tool_name(tool),
                "toolCallId": call_id,
                "input": input,
                "content": content,
                "details": details,
                "isError": is_error,
            });
            let (result, tools) = extension.emit("tool_result", &payload).await;
            self.keep_new_tools(tools);
            if result.is_null() {
                continue;
            }
            if let Some(new) = result.get("content").filter(|new| **new != content)
                && let Ok(blocks) = serde_json::from_value::<Vec<ContentBlock>>(new.clone())
            {
                content = new.clone();
                change.content = Some(blocks);
            }
            if let Some(new) = result.get("details").filter(|new| **new != details) {
                details = new.clone();
                change.details = Some(details.clone());
            }
            if let Some(new) = result.get("isError").and_then(Value::as_bool)
                && new != is_error
            {
                is_error = new;
                change.is_error = Some(new);
            }
        }
        change
    }

    /// The `before_agent_start` handlers for a run starting with `prompt` under
    /// `system_prompt`: the system prompt for the run, and the messages they added
    /// (`{customType, content, display, details}`).
    pub async fn before_agent_start(
        &self,
        prompt: &str,
        system_prompt: &str,
    ) -> (String, Vec<Value>) {
        let mut system = system_prompt.to_owned();
        let mut messages = Vec::new();
        for extension in &self.loaded {
            let payload = json!({ "prompt": prompt, "systemPrompt": system });
            let (result, tools) = extension.emit("before_agent_start", &payload).await;
            self.keep_new_tools(tools);
            if let Some(text) = result.get("systemPrompt").and_then(Value::as_str) {
                text.clone_into(&mut system);
            }
            if let Some(added) = result.get("messages").and_then(Value::as_array) {
                messages.extend(added.iter().cloned());
            }
        }
        (system, messages)
    }

    /// The `input` handlers on what the user typed (`source`: `interactive` or `rpc`).
    pub async fn input(&self, text: &str, source: &str) -> InputOutcome {
        let mut current = text.to_owned();
        for extension in &self.loaded {
            let payload = json!({ "text": current, "source": source });
            let (result, tools) = extension.emit("input", &payload).await;
            self.keep_new_tools(tools);
            match result.get("action").and_then(Value::as_str) {
                Some("handled") => return InputOutcome::Handled,
                Some("transform") => {
                    if let Some(new) = result.get("text").and_then(Value::as_str) {
                        new.clone_into(&mut current);
                    }
                }
                _ => {}
            }
        }
        if current == text {
            InputOutcome::Continue
        } else {
            InputOutcome::Transform(current)
        }
    }

    /// The `context` handlers on the messages about to be sent (as JSON): the messages to
    /// send instead, when a handler changed them.
    pub async fn context(&self, messages: &Value) -> Option<Value> {
        let mut current = messages.clone();
        for extension in &self.loaded {
            let (result, tools) = extension
                .emit("context", &json!({ "messages": current }))
                .await;
            self.keep_new_tools(tools);
            if let Some(new) = result.get("messages").filter(|new| new.is_array()) {
                current = new.clone();
            }
        }
        (&current != messages).then_some(current)
    }

    /// `session_before_compact`: the answer of the handler that cancelled it (`{cancel:
    /// true}`), else that of the last one that gave a summary (`{compaction: {summary}}`), else
    /// `null`.
    pub async fn before_compact(&self, payload: &Value) -> Value {
        let mut chosen = Value::Null;
        for extension in &self.loaded {
            let (result, tools) = extension.emit("session_before_compact", payload).await;
            self.keep_new_tools(tools);
            if result.get("cancel").and_then(Value::as_bool) == Some(true) {
                return result;
            }
            if result
                .pointer("/compaction/summary")
                .is_some_and(Value::is_string)
            {
                chosen = result;
            }
        }
        chosen
    }

    /// A `session_before_*` event: `true` when a handler cancelled what is about to happen.
    pub async fn cancelled(&self, event: &str, payload: &Value) -> bool {
        for extension in &self.loaded {
            let (result, tools) = extension.emit(event, payload).await;
            self.keep_new_tools(tools);
            if result.get("cancel").and_then(Value::as_bool) == Some(true) {
                return true;
            }
        }
        false
    }
}
