//! pi's lifecycle events in the loop: `before_agent_start` (which may change the system
//! prompt for the run), `agent_start` / `agent_end`, `turn_start` / `turn_end`, `context`
//! (which may change the messages sent), and the messages extensions queued meanwhile. With
//! no extension listening, each is a check of a flag.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use toolhost_core::conversation::{AssistantMessage, Message};
use toolhost_core::{ContentBlock, SessionEvent, ToolRegistry, ToolSpec};

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use toolhost_core::conversation::ToolCall;
use toolhost_script::{
    CompactRequest, CompactVerdict, CompactionDone, ExtensionSession, pi_tool_name,
};

use super::{AgentEvent, AgentEventSink};
use crate::compaction::{Compacted, CompactionError};

/// The loop's view of a session's extensions (none by default).
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopExtensions(Option<Arc<ExtensionSession>>);

pub(crate) fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis())
}

fn last_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::User { content } => Some(
                content
                    .iter()
                    .filter_map(ContentBlock::as_text)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

impl LoopExtensions {
    pub(crate) fn new(session: Arc<ExtensionSession>) -> Self {
        Self(Some(session))
    }

    pub(crate) fn listening(&self, event: &str) -> Option<&Arc<ExtensionSession>> {
        self.0
            .as_ref()
            .filter(|session| session.extensions().listens_to(event))
    }

    /// `before_agent_start` then `agent_start`: the system prompt for this run.
    pub(crate) async fn run_start(&self, messages: &[Message], system: &str) -> Option<String> {
        let mut changed = None;
        if let Some(session) = self.listening("before_agent_start") {
            let (prompt, _) = session
                .extensions()
                .before_agent_start(&last_user_text(messages), system)
                .await;
            session.apply();
            changed = (prompt != system).then_some(prompt);
        }
        self.notify("agent_start", &json!({})).await;
        changed
    }

    /// `agent_end`, with the conversation.
    pub(crate) async fn run_end(&self, messages: &[Message]) {
        if self.listening("agent_end").is_some() {
            self.notify("agent_end", &json!({ "messages": messages }))
                .await;
        } else {
            self.apply();
        }
        if let Some(session) = &self.0 {
            session.end_run();
        }
    }

    /// The tools to offer this turn: `tools`, and after them the tools extensions registered
    /// since loading (from a handler or a command) that `registry` holds, so that the model is
    /// offered them from the turn after their registration; of these, only those the last
    /// `pi.setActiveTools` named, when an extension named any.
    pub(crate) fn offered_tools(
        &self,
        tools: &Arc<[ToolSpec]>,
        registry: &ToolRegistry,
    ) -> Arc<[ToolSpec]> {
        let Some(session) = &self.0 else {
            return Arc::clone(tools);
        };
        let added: Vec<ToolSpec> = session
            .tools_added_after_load()
            .iter()
            .filter(|name| !tools.iter().any(|spec| &spec.name == *name))
            .filter_map(|name| registry.spec(name))
            .collect();
        let active = session.active_tools();
        if added.is_empty() && active.is_none() {
            return Arc::clone(tools);
        }
        let chosen = |spec: &ToolSpec| {
            active.as_ref().is_none_or(|names| {
                names
                    .iter()
                    .any(|name| *name == spec.name || name == pi_tool_name(&spec.name))
            })
        };
        tools
            .iter()
            .cloned()
            .chain(added)
            .filter(|spec| chosen(spec))
            .collect()
    }

    /// What the tool calls of a turn report to: `events`, and, when an extension listens to
    /// `tool_execution_update`, a sink that also queues each update for [`Self::tell_updates`],
    /// which must run beside the calls (the sink is synchronous, handlers are not).
    pub(crate) fn with_updates(
        &self,
        calls: &[ToolCall],
        events: &AgentEventSink,
    ) -> (AgentEventSink, Option<UnboundedReceiver<Value>>) {
        if self.listening("tool_execution_update").is_none() {
            return (Arc::clone(events), None);
        }
        let (sender, receiver) = unbounded_channel();
        let calls: Vec<(String, String, Value)> = calls
            .iter()
            .map(|call| {
                let args = call.parsed_arguments().unwrap_or(Value::Null);
                (call.id.clone(), pi_tool_name(&call.name).to_owned(), args)
            })
            .collect();
        let events = Arc::clone(events);
        let sink: AgentEventSink = Arc::new(move |event| {
            if let AgentEvent::ToolCallUpdate { call_id, update } = &event
                && let Some((_, name, args)) = calls.iter().find(|(id, _, _)| id == call_id)
            {
                // The receiver lives as long as the calls run; a closed one means no listener.
                let _ = sender.send(json!({
                    "toolCallId": call_id,
                    "toolName": name,
                    "args": args,
                    "partialResult": { "content": update.content, "details": update.details },
                }));
            }
            events(event);
        });
        (sink, Some(receiver))
    }

    /// `tool_execution_update` for each update queued by [`Self::with_updates`]'s sink, in
    /// order, until the sink is dropped.
    pub(crate) async fn tell_updates(&self, receiver: Option<UnboundedReceiver<Value>>) {
        let Some(mut receiver) = receiver else {
            return;
        };
        while let Some(payload) = receiver.recv().await {
            self.notify("tool_execution_update", &payload).await;
        }
    }

    /// `message_end` for a model's response, once it arrived whole, in pi's message shape
    /// (`{ role: "assistant", content: [{type: "text"|"thinking"|"toolCall", …}], usage,
    /// stopReason, model, timestamp }`; `message_start` and `message_update` came before it).
    pub(crate) async fn assistant_message(&self, message: &AssistantMessage) {
        if self.listening("message_end").is_none() {
            return;
        }
        let pi_message = toolhost_script::pi_messages::assistant_message(message, now_ms());
        self.notify("message_end", &json!({ "message": pi_message }))
            .await;
    }

    /// The compaction an extension asked for with `ctx.compact()`, if one did.
    pub(crate) fn compact_request(&self) -> Option<CompactRequest> {
        self.0.as_ref()?.take_compact_request()
    }

    /// `session_before_compact`: whether the compaction goes on, and with whose summary.
    pub(crate) async fn before_compact(
        &self,
        instructions: Option<&str>,
        tokens_before: u64,
    ) -> CompactVerdict {
        match &self.0 {
            Some(session) => session.before_compact(instructions, tokens_before).await,
            None => CompactVerdict::Proceed,
        }
    }

    /// `session_compact` after a compaction that happened, and the callbacks of the
    /// `ctx.compact()` that asked for it.
    pub(crate) async fn compacted(
        &self,
        request: Option<&CompactRequest>,
        outcome: &Result<Compacted, CompactionError>,
        from_extension: bool,
    ) {
        let Some(session) = &self.0 else {
            return;
        };
        let outcome = match outcome {
            Ok(done) => Ok(CompactionDone {
                summary: &done.summary,
                tokens_before: done.tokens_before,
                files_read: &done.files_read,
                files_modified: &done.files_modified,
                from_extension,
            }),
            Err(error) => Err(error.to_string()),
        };
        session.compacted(request, outcome).await;
    }

    /// `turn_start`.
    pub(crate) async fn turn_start(&self, turn: usize) {
        self.notify(
            "turn_start",
            &json!({ "turnIndex": turn.saturating_sub(1), "timestamp": now_ms() }),
        )
        .await;
    }

    /// `turn_end`, with the model's message and the results of its calls.
    pub(crate) async fn turn_end(&self, turn: usize, message: &Message, results: &[Message]) {
        if self.listening("turn_end").is_some() {
            self.notify(
                "turn_end",
                &json!({
                    "turnIndex": turn.saturating_sub(1),
                    "message": message,
                    "toolResults": results,
                }),
            )
            .await;
        } else {
            self.apply();
        }
    }

    /// `context`: the messages to send instead, when a handler changed them (and they still
    /// read as messages).
    pub(crate) async fn context(&self, messages: &[Message]) -> Option<Vec<Message>> {
        let session = self.listening("context")?;
        let json = serde_json::to_value(messages).ok()?;
        let changed = session.extensions().context(&json).await;
        session.apply();
        match serde_json::from_value::<Vec<Message>>(changed?) {
            Ok(messages) => Some(messages),
            Err(error) => {
                tracing::warn!(
                    "a context handler's messages are not messages, so the originals are sent: {error}"
                );
                None
            }
        }
    }

    /// A session lifecycle event, under pi's name for it (`start` is [`ExtensionSession::start`]'s:
    /// it carries the session's state).
    pub(crate) async fn session_event(&self, event: &SessionEvent, details: &Value) {
        let name = match event {
            SessionEvent::Switch => "session_switch",
            SessionEvent::Branch => "session_fork",
            SessionEvent::Tree => "session_tree",
            SessionEvent::Shutdown => "session_shutdown",
            // Compaction is told by `before_compact` and `compacted`, whatever started it.
            _ => return,
        };
        self.notify(name, details).await;
    }

    /// Messages extensions queued (`sendUserMessage`, `sendMessage`), for the next turn.
    pub(crate) fn queued(&self) -> Vec<String> {
        self.0
            .as_ref()
            .map(|session| session.take_queued())
            .unwrap_or_default()
    }

    pub(crate) async fn notify(&self, event: &str, payload: &Value) {
        if let Some(session) = &self.0 {
            session.notify(event, payload).await;
        }
    }

    fn apply(&self) {
        if let Some(session) = &self.0 {
            session.apply();
        }
    }
}
