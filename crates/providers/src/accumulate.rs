//! Builds one [`AssistantMessage`] from the pieces a stream delivers, and reports each piece
//! as a [`StreamEvent`].
//!
//! The wire formats differ in how they name the piece a delta belongs to (a tool call's
//! `index`, a content block's `index`, an output item's `output_index`); each decoder maps its
//! key to a slot here with [`ResponseBuilder::tool_call`]. Tool-call arguments are kept as the
//! exact text that arrived — empty or cut short included — and judged by the agent loop.

use std::collections::HashMap;

use toolhost_core::conversation::{AssistantMessage, AssistantPart, StopReason, ToolCall, Usage};

use crate::provider::{EventSink, StreamEvent};

/// Reports events and remembers whether anything of this response reached the caller.
pub(crate) struct Emitter {
    sink: EventSink,
    emitted_content: bool,
}

impl Emitter {
    pub fn new(sink: EventSink) -> Self {
        Self {
            sink,
            emitted_content: false,
        }
    }

    /// Reports an event about the request itself (sent, retry), not its content.
    pub fn notice(&self, event: StreamEvent) {
        (self.sink)(event);
    }

    /// Reports a piece of the response.
    fn content(&mut self, event: StreamEvent) {
        self.emitted_content = true;
        (self.sink)(event);
    }

    /// Whether the caller has seen part of a response since the last [`Self::reset`].
    pub fn emitted_content(&self) -> bool {
        self.emitted_content
    }

    /// A new attempt begins.
    pub fn reset(&mut self) {
        self.emitted_content = false;
    }
}

#[derive(Debug)]
enum Part {
    Text(String),
    Reasoning {
        text: String,
        signature: Option<String>,
        id: Option<String>,
    },
    ToolCall {
        /// Position among the response's tool calls (the events' `index`).
        ordinal: usize,
        id: String,
        name: String,
        arguments: String,
        /// Whether `ToolCallStart` went out.
        announced: bool,
    },
}

/// The response so far.
#[derive(Debug, Default)]
pub(crate) struct ResponseBuilder {
    parts: Vec<Part>,
    /// Wire key of a part (tool-call index, content-block index, output index) → its slot.
    keys: HashMap<u64, usize>,
    tool_calls: usize,
    /// Usage as last reported.
    pub usage: Usage,
    /// Why the model stopped, once known.
    pub stop_reason: Option<StopReason>,
    /// The model that answered, as the server named it.
    pub model: Option<String>,
}

impl ResponseBuilder {
    /// Appends answer text to the last text part, or starts one.
    pub fn text(&mut self, out: &mut Emitter, delta: &str) {
        if delta.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Text(text)) => text.push_str(delta),
            _ => self.parts.push(Part::Text(delta.to_owned())),
        }
        out.content(StreamEvent::TextDelta(delta.to_owned()));
    }

    /// Starts answer text under a wire key (a content block or output item).
    pub fn keyed_text(&mut self, key: u64) {
        self.keys.insert(key, self.parts.len());
        self.parts.push(Part::Text(String::new()));
    }

    /// Appends text to the part under `key`, or to the last text part when the key is unknown.
    pub fn text_at(&mut self, out: &mut Emitter, key: u64, delta: &str) {
        match self
            .keys
            .get(&key)
            .and_then(|&slot| self.parts.get_mut(slot))
        {
            Some(Part::Text(text)) => {
                if delta.is_empty() {
                    return;
                }
                text.push_str(delta);
                out.content(StreamEvent::TextDelta(delta.to_owned()));
            }
            _ => self.text(out, delta),
        }
    }

    /// Starts a reasoning part under `key` (`None`: the unkeyed stream of chat completions).
    pub fn reasoning_start(&mut self, key: Option<u64>, id: Option<String>) {
        if let Some(key) = key {
            self.keys.insert(key, self.parts.len());
        }
        self.parts.push(Part::Reasoning {
            text: String::new(),
            signature: None,
            id,
        });
    }

    /// Appends reasoning text to the part under `key` (a new one for a key not seen yet);
    /// without a key, to the last part if it is reasoning, else to a new one.
    pub fn reasoning(&mut self, out: &mut Emitter, key: Option<u64>, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let known = match key {
            Some(key) => self.keys.get(&key).copied(),
            None => match self.parts.last() {
                Some(Part::Reasoning { .. }) => Some(self.parts.len() - 1),
                _ => None,
            },
        };
        let slot = known.unwrap_or_else(|| {
            self.reasoning_start(key, None);
            self.parts.len() - 1
        });
        if let Some(Part::Reasoning { text, .. }) = self.parts.get_mut(slot) {
            text.push_str(delta);
            out.content(StreamEvent::ReasoningDelta(delta.to_owned()));
        }
    }

    /// Sets what the provider needs back with the reasoning under `key`, and its id.
    pub fn reasoning_seal(
        &mut self,
        key: u64,
        new_signature: Option<String>,
        new_id: Option<String>,
    ) {
        if let Some(Part::Reasoning { signature, id, .. }) = self
            .keys
            .get(&key)
            .and_then(|&slot| self.parts.get_mut(slot))
        {
            if new_signature.is_some() {
                *signature = new_signature;
            }
            if new_id.is_some() {
                *id = new_id;
            }
        }
    }

    /// Appends to the signature of the reasoning under `key` (Anthropic sends it in deltas).
    pub fn reasoning_signature(&mut self, key: u64, piece: &str) {
        if let Some(Part::Reasoning { signature, .. }) = self
            .keys
            .get(&key)
            .and_then(|&slot| self.parts.get_mut(slot))
        {
            signature.get_or_insert_default().push_str(piece);
        }
    }

    /// Adds to the tool call under `key`, creating it if needed: any of id, name and a piece
    /// of arguments may come in any chunk. A new id under a key whose call already has a
    /// different one starts a new call (some servers reuse index 0 for every call).
    pub fn tool_call(
        &mut self,
        out: &mut Emitter,
        key: u64,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
    ) {
        let id = id.filter(|id| !id.is_empty());
        let existing = self
            .keys
            .get(&key)
            .copied()
            .filter(|&slot| match (&self.parts[slot], id) {
                (Part::ToolCall { id: old, .. }, Some(new)) => old.is_empty() || old == new,
                (Part::ToolCall { .. }, None) => true,
                _ => false,
            });
        let slot = match existing {
            Some(slot) => slot,
            None => {
                self.keys.insert(key, self.parts.len());
                self.parts.push(Part::ToolCall {
                    ordinal: self.tool_calls,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    announced: false,
                });
                self.tool_calls += 1;
                self.parts.len() - 1
            }
        };
        let Some(Part::ToolCall {
            ordinal,
            id: call_id,
            name: call_name,
            arguments: call_arguments,
            announced,
        }) = self.parts.get_mut(slot)
        else {
            return;
        };
        if let Some(id) = id
            && call_id.is_empty()
        {
            id.clone_into(call_id);
        }
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            // Some servers repeat the whole name in every chunk, others send it in pieces.
            if call_name != name {
                call_name.push_str(name);
            }
        }
        let piece = arguments.unwrap_or_default();
        // Announce once the name is known, so that the caller can show it — or, at the
        // latest, when arguments begin.
        if !*announced && (!call_name.is_empty() || !piece.is_empty()) {
            *announced = true;
            out.content(StreamEvent::ToolCallStart {
                index: *ordinal,
                id: call_id.clone(),
                name: call_name.clone(),
            });
        }
        if !piece.is_empty() {
            call_arguments.push_str(piece);
            out.content(StreamEvent::ToolCallDelta {
                index: *ordinal,
                arguments: piece.to_owned(),
            });
        }
    }

    /// Replaces the arguments of the call under `key` with the complete text when the server
    /// sends it at the end and the deltas missed some (or there were none).
    pub fn tool_call_arguments_done(&mut self, out: &mut Emitter, key: u64, complete: &str) {
        let Some(Part::ToolCall { arguments, .. }) =
            self.keys.get(&key).and_then(|&slot| self.parts.get(slot))
        else {
            return;
        };
        if let Some(rest) = complete.strip_prefix(arguments.as_str()) {
            let rest = rest.to_owned();
            self.tool_call(out, key, None, None, Some(&rest));
        } else if let Some(Part::ToolCall { arguments, .. }) = self
            .keys
            .get(&key)
            .and_then(|&slot| self.parts.get_mut(slot))
        {
            complete.clone_into(arguments);
        }
    }

    /// Whether the response has a tool call.
    pub fn has_tool_calls(&self) -> bool {
        self.tool_calls > 0
    }

    /// The finished message. A response with tool calls that said only "stop" stops for
    /// tool use: some servers report `stop` whatever the model did.
    pub fn finish(self) -> AssistantMessage {
        let has_tool_calls = self.has_tool_calls();
        let mut stop_reason = self.stop_reason.unwrap_or_default();
        if has_tool_calls && stop_reason == StopReason::EndTurn {
            stop_reason = StopReason::ToolUse;
        }
        let content = self
            .parts
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) if text.is_empty() => None,
                Part::Text(text) => Some(AssistantPart::Text { text }),
                Part::Reasoning {
                    text,
                    signature,
                    id,
                } => (!text.is_empty() || signature.is_some() || id.is_some()).then_some(
                    AssistantPart::Reasoning {
                        text,
                        signature,
                        id,
                    },
                ),
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                } => Some(AssistantPart::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                })),
            })
            .collect();
        AssistantMessage {
            content,
            stop_reason,
            usage: self.usage,
            model: self.model,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use pretty_assertions::assert_eq;

    fn recorder() -> (Emitter, Arc<Mutex<Vec<StreamEvent>>>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        let sink: EventSink = Arc::new(move |event| {
            if let Ok(mut events) = seen.lock() {
                events.push(event);
            }
        });
        (Emitter::new(sink), events)
    }

    #[test]
    fn a_name_after_the_id_is_announced_with_the_name() {
        let (mut out, events) = recorder();
        let mut builder = ResponseBuilder::default();
        builder.tool_call(&mut out, 0, Some("call_1"), None, None);
        builder.tool_call(&mut out, 0, None, Some("Read"), None);
        builder.tool_call(&mut out, 0, None, None, Some("{\"pa"));
        builder.tool_call(&mut out, 0, None, Some("Read"), Some("th\":1}"));
        let message = builder.finish();
        assert_eq!(
            message.tool_calls().cloned().collect::<Vec<_>>(),
            vec![ToolCall {
                id: "call_1".into(),
                name: "Read".into(),
                arguments: "{\"path\":1}".into()
            }]
        );
        assert_eq!(message.stop_reason, StopReason::ToolUse);
        let events = events.lock().map(|e| e.clone()).unwrap_or_default();
        assert_eq!(
            events[0],
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_1".into(),
                name: "Read".into()
            }
        );
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn a_new_id_under_a_used_key_is_a_new_call() {
        let (mut out, _) = recorder();
        let mut builder = ResponseBuilder::default();
        builder.tool_call(&mut out, 0, Some("a"), Some("Read"), Some("{}"));
        builder.tool_call(&mut out, 0, Some("b"), Some("Grep"), Some("{}"));
        let names: Vec<_> = builder
            .finish()
            .tool_calls()
            .map(|c| c.name.clone())
            .collect();
        assert_eq!(names, ["Read", "Grep"]);
    }
}
