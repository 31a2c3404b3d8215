//! The loop's events as `session/update` notifications: answer text and reasoning as message
//! and thought chunks, each tool call as a `tool_call` (kind, title, locations, input) and its
//! progress and end as `tool_call_update`s (status, output, diffs), a todo list written as a
//! `plan`. One [`UpdateTranslator`] serves one session; it keeps what it learnt when a call
//! started until the call ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::v1::schema::{
    Content, ContentBlock, ContentChunk, SessionUpdate, Terminal, ToolCall, ToolCallContent,
    ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::Value;
use toolhost_agent::agent_loop::AgentEvent;
use toolhost_core::ToolRegistry;

use crate::plan::plan_update;
use crate::tool_calls::CallFacts;

/// Turns one session's events into updates.
pub struct UpdateTranslator {
    registry: Mutex<Arc<ToolRegistry>>,
    /// The calls running: what their start said, and their arguments.
    running: Mutex<HashMap<String, (CallFacts, Value)>>,
}

impl UpdateTranslator {
    /// A translator that looks tools up in `registry`.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        Self {
            registry: Mutex::new(registry),
            running: Mutex::new(HashMap::new()),
        }
    }

    /// The updates `event` makes (none for the events an editor has no place for).
    pub fn updates(&self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::TextDelta { text } => {
                vec![SessionUpdate::AgentMessageChunk(chunk(text))]
            }
            AgentEvent::ReasoningDelta { text } => {
                vec![SessionUpdate::AgentThoughtChunk(chunk(text))]
            }
            AgentEvent::ToolCallStart { call } => {
                let args = call.parsed_arguments().unwrap_or(Value::Null);
                let registry =
                    Arc::clone(&self.registry.lock().unwrap_or_else(PoisonError::into_inner));
                let facts = CallFacts::of(&registry, &call.name, &args);
                let update = tool_call(&call.id, &facts, &args);
                self.running
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(call.id.clone(), (facts, args));
                vec![update]
            }
            AgentEvent::ToolCallUpdate { call_id, update } => {
                let content: Vec<ToolCallContent> = update
                    .content
                    .iter()
                    .filter_map(toolhost_core::ContentBlock::as_text)
                    .map(|text| {
                        ToolCallContent::Content(Content::new(ContentBlock::from(text.to_owned())))
                    })
                    .collect();
                if content.is_empty() {
                    return Vec::new();
                }
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    ToolCallId::new(call_id.as_str()),
                    ToolCallUpdateFields::new().content(content),
                ))]
            }
            AgentEvent::ToolCallEnd { result } => {
                let (facts, args) = self
                    .running
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&result.tool_call_id)
                    .unwrap_or_default();
                let status = if result.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                // A command the editor's terminal ran stays shown in that terminal.
                let terminal = result
                    .details
                    .as_ref()
                    .and_then(|details| details.get("terminal_id"))
                    .and_then(Value::as_str)
                    .map(|id| ToolCallContent::Terminal(Terminal::new(id.to_owned())));
                let content = terminal
                    .into_iter()
                    .chain(facts.content_after(result, &args))
                    .collect::<Vec<_>>();
                let mut updates = vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    ToolCallId::new(result.tool_call_id.as_str()),
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(content)
                        .raw_output(
                            result
                                .details
                                .clone()
                                .or_else(|| Some(Value::String(result.text()))),
                        ),
                ))];
                if !result.is_error {
                    updates.extend(plan_update(
                        &result.tool_name,
                        result.details.as_ref().unwrap_or(&args),
                    ));
                }
                updates
            }
            _ => Vec::new(),
        }
    }

    /// Whether the editor was told of call `id` and has not heard of its end yet.
    pub fn is_running(&self, id: &str) -> bool {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(id)
    }

    /// From the next call on, tools are looked up in `registry` (the mode changed).
    pub fn set_registry(&self, registry: Arc<ToolRegistry>) {
        *self.registry.lock().unwrap_or_else(PoisonError::into_inner) = registry;
    }
}

/// A chunk of text.
pub fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_owned()))
}

/// The `tool_call` that announces a call.
pub fn tool_call(id: &str, facts: &CallFacts, args: &Value) -> SessionUpdate {
    let mut call = ToolCall::new(ToolCallId::new(id), facts.title.clone())
        .status(ToolCallStatus::InProgress)
        .locations(facts.locations())
        .raw_input(args.clone());
    if let Some(kind) = facts.kind {
        call = call.kind(kind);
    }
    SessionUpdate::ToolCall(call)
}
