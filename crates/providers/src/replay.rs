//! Test support: plays recorded SSE bytes through a format's decoder, cut into chunks at
//! every kind of boundary, and checks that the cut never changes the outcome.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use toolhost_core::conversation::AssistantMessage;

use crate::accumulate::{Emitter, ResponseBuilder};
use crate::config::Api;
use crate::provider::{EventSink, StreamEvent};
use crate::sse::SseDecoder;
use crate::stream_format::{Progress, StreamFailure};
use crate::wire;

/// How one play of a stream ended.
#[derive(Debug, PartialEq)]
pub enum Ending {
    /// The format's last event came (or the body ended where that is allowed).
    Complete(AssistantMessage),
    /// The body ended too soon.
    Cut,
    /// The decoder refused the stream.
    Failed(StreamFailure),
}

/// The outcome and the events reported on the way.
#[derive(Debug, PartialEq)]
pub struct Replay {
    pub ending: Ending,
    pub events: Vec<StreamEvent>,
}

impl Replay {
    /// The message of a complete stream.
    pub fn message(&self) -> &AssistantMessage {
        match &self.ending {
            Ending::Complete(message) => message,
            other => panic!("the stream did not complete: {other:?}"),
        }
    }
}

/// Plays `bytes` in the given chunks.
pub fn play<'a>(api: Api, chunks: impl IntoIterator<Item = &'a [u8]>) -> Replay {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let sink: EventSink = Arc::new(move |event| seen.lock().unwrap().push(event));
    let mut out = Emitter::new(sink);
    let mut sse = SseDecoder::default();
    let mut decoder = wire::decoder(api);
    let mut builder = ResponseBuilder::default();
    let mut ending = None;
    'chunks: for chunk in chunks {
        for event in sse.push(chunk) {
            match decoder.event(&event, &mut builder, &mut out) {
                Ok(Progress::Continue) => {}
                Ok(Progress::Done) => {
                    ending = Some(Ok(()));
                    break 'chunks;
                }
                Err(failure) => {
                    ending = Some(Err(failure));
                    break 'chunks;
                }
            }
        }
    }
    if ending.is_none()
        && let Some(event) = sse.finish()
    {
        ending = match decoder.event(&event, &mut builder, &mut out) {
            Ok(Progress::Done) => Some(Ok(())),
            Ok(Progress::Continue) => None,
            Err(failure) => Some(Err(failure)),
        };
    }
    let ending = match ending {
        Some(Ok(())) => Ending::Complete(builder.finish()),
        Some(Err(failure)) => Ending::Failed(failure),
        None if decoder.complete_without_end() => Ending::Complete(builder.finish()),
        None => Ending::Cut,
    };
    let events = events.lock().unwrap().clone();
    Replay { ending, events }
}

/// Plays `bytes` whole, in pieces of 1 (every boundary a cut at once), 2, 3, 7 and 64 bytes,
/// and cut once at a few hundred places spread over the stream; asserts that every play gives
/// the same message and the same events (no cut splits an event in two), and returns it.
/// (`sse.rs` checks its decoder at every single cut; these plays check the formats on top.)
pub fn play_every_way(api: Api, bytes: &[u8]) -> Replay {
    let whole = play(api, [bytes]);
    for size in [1, 2, 3, 7, 64] {
        assert_eq!(
            play(api, bytes.chunks(size)),
            whole,
            "pieces of {size} bytes"
        );
    }
    let stride = (bytes.len() / 300).max(1);
    for cut in (1..bytes.len()).step_by(stride) {
        let (head, tail) = bytes.split_at(cut);
        assert_eq!(play(api, [head, tail]), whole, "cut at byte {cut}");
    }
    whole
}

/// Joins SSE events written as `(event name, JSON)` pairs into a stream body; an empty name
/// writes a plain `data:` event.
pub fn sse(events: &[(&str, &str)]) -> Vec<u8> {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.into_bytes()
}

/// A conversation with every kind of message: reasoning, text and two tool calls (the second
/// with arguments cut short), their results (one an error, one with an image), and a
/// follow-up question.
pub fn sample_request() -> crate::ModelRequest {
    use toolhost_core::conversation::{
        AssistantMessage, AssistantPart, Message, StopReason, ToolCall, ToolResultMessage,
    };
    use toolhost_core::{ContentBlock, ToolSpec};

    let read = ToolSpec::new("Read", "Reads a file.").with_parameters(serde_json::json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }));
    let grep = ToolSpec::new("Grep", "Searches files.");
    crate::ModelRequest {
        system: "You are terse.".into(),
        messages: vec![
            Message::user("What does hello.txt say?"),
            Message::Assistant(AssistantMessage {
                content: vec![
                    AssistantPart::Reasoning {
                        text: "Read it.".into(),
                        signature: Some("sig-1".into()),
                        id: None,
                    },
                    AssistantPart::Text {
                        text: "Let me look.".into(),
                    },
                    AssistantPart::ToolCall(ToolCall {
                        id: "call_1".into(),
                        name: "Read".into(),
                        arguments: r#"{"path":"hello.txt"}"#.into(),
                    }),
                    AssistantPart::ToolCall(ToolCall {
                        id: "call_2".into(),
                        name: "Grep".into(),
                        arguments: r#"{"pattern": "hel"#.into(),
                    }),
                ],
                stop_reason: StopReason::ToolUse,
                ..AssistantMessage::default()
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "Read".into(),
                content: vec![
                    ContentBlock::text("hello world"),
                    ContentBlock::image("iVBORw0K", "image/png"),
                ],
                is_error: false,
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_2".into(),
                tool_name: "Grep".into(),
                content: vec![ContentBlock::text(
                    "the arguments of Grep are not valid JSON",
                )],
                is_error: true,
            }),
            Message::user("And in French?"),
        ],
        tools: vec![read, grep].into(),
        deferred_tools: std::sync::Arc::default(),
        max_output_tokens: Some(512),
        reasoning_effort: None,
    }
}

/// A conversation past a `tool_search` call: `Read` and `tool_search` sent in full,
/// `mcp__git__log` and `mcp__web__fetch` deferred; the search's result loaded
/// `mcp__git__log`, and an older result references `mcp__old__gone`, deferred no more.
pub fn deferred_search_request() -> crate::ModelRequest {
    use toolhost_core::conversation::{
        AssistantMessage, AssistantPart, Message, StopReason, ToolCall, ToolResultMessage,
    };
    use toolhost_core::{ContentBlock, ToolSpec};

    let search_call = |id: &str| {
        AssistantPart::ToolCall(ToolCall {
            id: id.into(),
            name: "tool_search".into(),
            arguments: r#"{"query":"commit log"}"#.into(),
        })
    };
    let search_result = |id: &str, tool: &str| {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "tool_search".into(),
            content: vec![
                ContentBlock::text(format!("Loaded 1 tool(s):\n- {tool}: Shows the log.")),
                ContentBlock::tool_reference(tool),
            ],
            is_error: false,
        })
    };
    crate::ModelRequest {
        system: String::new(),
        messages: vec![
            Message::user("Show the log."),
            Message::Assistant(AssistantMessage {
                content: vec![search_call("call_1"), search_call("call_2")],
                stop_reason: StopReason::ToolUse,
                ..AssistantMessage::default()
            }),
            search_result("call_1", "mcp__old__gone"),
            search_result("call_2", "mcp__git__log"),
        ],
        tools: vec![
            ToolSpec::new("Read", "Reads a file."),
            ToolSpec::new("tool_search", "Finds deferred tools."),
            ToolSpec::new("mcp__git__log", "Shows the log."),
            ToolSpec::new("mcp__web__fetch", "Fetches a page."),
        ]
        .into(),
        deferred_tools: std::sync::Arc::new(
            ["mcp__git__log", "mcp__web__fetch"]
                .map(String::from)
                .into(),
        ),
        max_output_tokens: None,
        reasoning_effort: None,
    }
}
