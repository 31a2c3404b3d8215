//! Anthropic messages (`POST /v1/messages`): SSE `event: <type>` / `data: {…}` frames —
//! `message_start`, a `content_block_start` / `content_block_delta`… / `content_block_stop`
//! run per block, a `ping` after the first block starts, `message_delta` with the stop
//! reason and output tokens, `message_stop` — or one `message` object. As the API does, the
//! two kinds of start event pad their JSON with spaces before the last brace.

use serde_json::{Value, json};

use super::script::{CallEvent, Reply, Stop};
use super::{ResponseContext, event_frame};

/// The path this format is served on.
pub(crate) const PATH: &str = "/v1/messages";

/// The `ping` frame, byte for byte as Anthropic sends it (with a space after the colon).
const PING: &str = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

/// Anthropic pads the JSON of `message_start` and `content_block_start` with spaces before
/// its last brace; a parser must take JSON whitespace where it comes.
const START_PADDING: &str = "            ";

/// The SSE frames of `reply`.
pub(crate) fn stream_frames(reply: &Reply, context: &ResponseContext) -> Vec<String> {
    let mut frames = vec![padded_event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": message_id(context),
            "type": "message",
            "role": "assistant",
            "model": reply.model(),
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": usage(reply, 1),
        }}),
    )];
    let mut blocks = Blocks::default();

    if let Some(reasoning) = &reply.reasoning {
        let index = blocks.start(
            &mut frames,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        );
        for piece in reply.pieces(&reasoning.text) {
            frames.push(delta(
                index,
                json!({"type": "thinking_delta", "thinking": piece}),
            ));
        }
        if let Some(signature) = &reasoning.signature {
            frames.push(delta(
                index,
                json!({"type": "signature_delta", "signature": signature}),
            ));
        }
        frames.push(stop(index));
    }

    if !reply.text.is_empty() {
        let index = blocks.start(&mut frames, json!({"type": "text", "text": ""}));
        for piece in reply.pieces(&reply.text) {
            frames.push(delta(index, json!({"type": "text_delta", "text": piece})));
        }
        frames.push(stop(index));
    }

    let first_call = blocks.next;
    for event in reply.call_plan() {
        match event {
            CallEvent::Start(call) => {
                let scripted = &reply.tool_calls[call];
                let index = blocks.start(
                    &mut frames,
                    json!({"type": "tool_use", "id": scripted.id, "name": scripted.name,
                           "input": {}}),
                );
                frames.push(delta(
                    index,
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
            }
            CallEvent::Arguments(call, piece) => frames.push(delta(
                first_call + call,
                json!({"type": "input_json_delta", "partial_json": piece}),
            )),
            CallEvent::End(call) => frames.push(stop(first_call + call)),
        }
    }

    if blocks.next == 0 {
        frames.push(PING.to_owned());
    }
    frames.push(event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason(reply.stop()), "stop_sequence": null},
               "usage": {"output_tokens": reply.usage.output}}),
    ));
    frames.push(event("message_stop", json!({"type": "message_stop"})));
    frames
}

/// The whole `message` object of `reply`, for a request without `"stream": true`. A tool
/// call's `input` is its arguments parsed; arguments that are not JSON go as a string.
pub(crate) fn response_body(reply: &Reply, context: &ResponseContext) -> Value {
    let mut content = Vec::new();
    if let Some(reasoning) = &reply.reasoning {
        content.push(json!({
            "type": "thinking",
            "thinking": reasoning.text,
            "signature": reasoning.signature.as_deref().unwrap_or(""),
        }));
    }
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.text}));
    }
    for call in &reply.tool_calls {
        let input = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    json!({
        "id": message_id(context),
        "type": "message",
        "role": "assistant",
        "model": reply.model(),
        "content": content,
        "stop_reason": stop_reason(reply.stop()),
        "stop_sequence": null,
        "usage": usage(reply, reply.usage.output),
    })
}

/// The `error` event of a stream that fails after it began.
pub(crate) fn stream_error_frame() -> String {
    event("error", error_body(529, "Overloaded"))
}

/// An Anthropic error body, its `error.type` following the status as the API documents it.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn message_id(context: &ResponseContext) -> String {
    format!("msg_{}", context.number)
}

fn stop_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
        Stop::MaxTokens => "max_tokens",
    }
}

/// Anthropic counts cache reads and writes apart from `input_tokens`.
fn usage(reply: &Reply, output_tokens: u64) -> Value {
    let usage = reply.usage;
    json!({
        "input_tokens": usage.input.saturating_sub(usage.cached + usage.cache_write),
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cached,
        "output_tokens": output_tokens,
    })
}

fn event(kind: &str, data: Value) -> String {
    event_frame(kind, &data)
}

/// An event whose JSON ends in [`START_PADDING`] and the closing brace.
fn padded_event(kind: &str, data: Value) -> String {
    let json = data.to_string();
    let body = json.strip_suffix('}').unwrap_or(&json);
    format!("event: {kind}\ndata: {body}{START_PADDING}}}\n\n")
}

fn delta(index: usize, delta: Value) -> String {
    event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn stop(index: usize) -> String {
    event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

/// Numbers the content blocks and sends the `ping` after the first one starts.
#[derive(Default)]
struct Blocks {
    next: usize,
}

impl Blocks {
    fn start(&mut self, frames: &mut Vec<String>, block: Value) -> usize {
        let index = self.next;
        self.next += 1;
        frames.push(padded_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        ));
        if index == 0 {
            frames.push(PING.to_owned());
        }
        index
    }
}
