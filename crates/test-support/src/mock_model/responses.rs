//! The OpenAI Responses API (`POST /v1/responses`): SSE `event: <type>` / `data: {…}` frames
//! whose `type` matches the event name and which carry a `sequence_number` from 0, or one
//! `response` object. There is no `[DONE]`: `response.completed` (or `response.incomplete`)
//! ends the stream. A tool-search call is a `tool_search_call` item, `output_item.added`
//! then `output_item.done` with its `arguments` object whole (no argument deltas: the shape
//! Codex CLI's test server streams).

use serde_json::{Map, Value, json};

use super::script::{CallEvent, CallKind, Reasoning, Reply, Stop};
use super::{CREATED, ResponseContext, event_frame};

/// The path this format is served on.
pub(crate) const PATH: &str = "/v1/responses";

/// The SSE frames of `reply`.
pub(crate) fn stream_frames(reply: &Reply, context: &ResponseContext) -> Vec<String> {
    let mut events = Events::default();
    let ids = ItemIds::new(context);
    let started = response(reply, context, "in_progress", Vec::new(), Value::Null);
    events.push("response.created", json!({"response": started}));
    events.push("response.in_progress", json!({"response": started}));

    let mut output_index = 0;
    if let Some(reasoning) = &reply.reasoning {
        let id = &ids.reasoning;
        let at = output_index;
        let part = json!({"type": "summary_text", "text": reasoning.text});
        events.push(
            "response.output_item.added",
            json!({"output_index": at, "item": {"id": id, "type": "reasoning", "summary": []}}),
        );
        events.push(
            "response.reasoning_summary_part.added",
            json!({"item_id": id, "output_index": at, "summary_index": 0,
                   "part": {"type": "summary_text", "text": ""}}),
        );
        for piece in reply.pieces(&reasoning.text) {
            events.push(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": at, "summary_index": 0, "delta": piece}),
            );
        }
        events.push(
            "response.reasoning_summary_text.done",
            json!({"item_id": id, "output_index": at, "summary_index": 0,
                   "text": reasoning.text}),
        );
        events.push(
            "response.reasoning_summary_part.done",
            json!({"item_id": id, "output_index": at, "summary_index": 0, "part": part}),
        );
        events.push(
            "response.output_item.done",
            json!({"output_index": at, "item": reasoning_item(reasoning, &ids)}),
        );
        output_index += 1;
    }

    if !reply.text.is_empty() {
        let id = &ids.message;
        let at = output_index;
        events.push(
            "response.output_item.added",
            json!({"output_index": at, "item": {"id": id, "type": "message",
                   "status": "in_progress", "content": [], "role": "assistant"}}),
        );
        events.push(
            "response.content_part.added",
            json!({"item_id": id, "output_index": at, "content_index": 0,
                   "part": {"type": "output_text", "annotations": [], "text": ""}}),
        );
        for piece in reply.pieces(&reply.text) {
            events.push(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": at, "content_index": 0,
                       "delta": piece, "logprobs": []}),
            );
        }
        events.push(
            "response.output_text.done",
            json!({"item_id": id, "output_index": at, "content_index": 0,
                   "text": reply.text, "logprobs": []}),
        );
        events.push(
            "response.content_part.done",
            json!({"item_id": id, "output_index": at, "content_index": 0,
                   "part": output_text(reply)}),
        );
        events.push(
            "response.output_item.done",
            json!({"output_index": at, "item": message_item(reply, &ids)}),
        );
        output_index += 1;
    }

    for event in reply.call_plan() {
        match event {
            CallEvent::Start(index) if is_search(reply, index) => events.push(
                "response.output_item.added",
                json!({"output_index": output_index + index, "item": {
                    "id": ids.call(reply, index), "type": "tool_search_call",
                    "status": "in_progress", "call_id": reply.tool_calls[index].id,
                    "execution": "client", "arguments": {},
                }}),
            ),
            CallEvent::Arguments(index, _) if is_search(reply, index) => {}
            CallEvent::End(index) if is_search(reply, index) => events.push(
                "response.output_item.done",
                json!({"output_index": output_index + index,
                       "item": call_item(reply, &ids, index)}),
            ),
            CallEvent::Start(index) => {
                let call = &reply.tool_calls[index];
                events.push(
                    "response.output_item.added",
                    json!({"output_index": output_index + index, "item": {
                        "id": ids.call(reply, index), "type": "function_call", "status": "in_progress",
                        "arguments": "", "call_id": call.id, "name": call.name,
                    }}),
                );
            }
            CallEvent::Arguments(index, piece) => events.push(
                "response.function_call_arguments.delta",
                json!({"item_id": ids.call(reply, index), "output_index": output_index + index,
                       "delta": piece}),
            ),
            CallEvent::End(index) => {
                events.push(
                    "response.function_call_arguments.done",
                    json!({"item_id": ids.call(reply, index), "output_index": output_index + index,
                           "arguments": reply.tool_calls[index].arguments}),
                );
                events.push(
                    "response.output_item.done",
                    json!({"output_index": output_index + index,
                           "item": call_item(reply, &ids, index)}),
                );
            }
        }
    }

    let finished = response_body(reply, context);
    let end = match reply.stop() {
        Stop::MaxTokens => "response.incomplete",
        Stop::EndTurn | Stop::ToolUse => "response.completed",
    };
    events.push(end, json!({"response": finished}));
    events.frames
}

/// The `response.failed` event of a stream that fails after `sequence_number` events.
pub(crate) fn stream_error_frame(
    reply: &Reply,
    context: &ResponseContext,
    sequence_number: usize,
) -> String {
    let mut failed = response(reply, context, "failed", Vec::new(), Value::Null);
    failed["error"] = json!({
        "code": "server_error",
        "message": "mock model: the server failed mid-stream",
    });
    let mut events = Events {
        frames: Vec::new(),
        first_sequence_number: sequence_number,
    };
    events.push("response.failed", json!({"response": failed}));
    events.frames.concat()
}

/// The finished `response` object of `reply`, for a request without `"stream": true` (and
/// the payload of `response.completed`).
pub(crate) fn response_body(reply: &Reply, context: &ResponseContext) -> Value {
    let ids = ItemIds::new(context);
    let mut output = Vec::new();
    if let Some(reasoning) = &reply.reasoning {
        output.push(reasoning_item(reasoning, &ids));
    }
    if !reply.text.is_empty() {
        output.push(message_item(reply, &ids));
    }
    output.extend((0..reply.tool_calls.len()).map(|index| call_item(reply, &ids, index)));
    let status = match reply.stop() {
        Stop::MaxTokens => "incomplete",
        Stop::EndTurn | Stop::ToolUse => "completed",
    };
    let usage = reply.usage;
    let usage = json!({
        "input_tokens": usage.input,
        "input_tokens_details": {
            "cached_tokens": usage.cached,
            "cache_write_tokens": usage.cache_write,
        },
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input + usage.output,
    });
    response(reply, context, status, output, usage)
}

/// A `response` object. The API echoes the request's `tools`, `tool_choice` and
/// `parallel_tool_calls` in it; the mock, which answers without reading the request, gives
/// no tools and the defaults.
fn response(
    reply: &Reply,
    context: &ResponseContext,
    status: &str,
    output: Vec<Value>,
    usage: Value,
) -> Value {
    let incomplete = match status {
        "incomplete" => json!({"reason": "max_output_tokens"}),
        _ => Value::Null,
    };
    json!({
        "id": format!("resp_{}", context.number),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "error": null,
        "incomplete_details": incomplete,
        "model": reply.model(),
        "output": output,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    })
}

fn reasoning_item(reasoning: &Reasoning, ids: &ItemIds) -> Value {
    let mut item = json!({
        "id": ids.reasoning,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": reasoning.text}],
    });
    if let Some(signature) = &reasoning.signature {
        item["encrypted_content"] = json!(signature);
    }
    item
}

fn output_text(reply: &Reply) -> Value {
    json!({"type": "output_text", "annotations": [], "text": reply.text})
}

fn message_item(reply: &Reply, ids: &ItemIds) -> Value {
    json!({
        "id": ids.message,
        "type": "message",
        "status": "completed",
        "content": [output_text(reply)],
        "role": "assistant",
    })
}

fn is_search(reply: &Reply, index: usize) -> bool {
    reply.tool_calls[index].kind == CallKind::ToolSearch
}

fn call_item(reply: &Reply, ids: &ItemIds, index: usize) -> Value {
    let call = &reply.tool_calls[index];
    if call.kind == CallKind::ToolSearch {
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        return json!({
            "id": ids.call(reply, index),
            "type": "tool_search_call",
            "status": "completed",
            "call_id": call.id,
            "execution": "client",
            "arguments": arguments,
        });
    }
    json!({
        "id": ids.call(reply, index),
        "type": "function_call",
        "status": "completed",
        "arguments": call.arguments,
        "call_id": call.id,
        "name": call.name,
    })
}

/// The deterministic ids of one response's output items.
struct ItemIds {
    number: usize,
    reasoning: String,
    message: String,
}

impl ItemIds {
    fn new(context: &ResponseContext) -> Self {
        Self {
            number: context.number,
            reasoning: format!("rs_{}", context.number),
            message: format!("msg_{}", context.number),
        }
    }

    fn call(&self, reply: &Reply, index: usize) -> String {
        let prefix = match reply.tool_calls[index].kind {
            CallKind::Function => "fc",
            CallKind::ToolSearch => "tsc",
        };
        format!("{prefix}_{}_{}", self.number, index + 1)
    }
}

/// The frames written so far; the next `sequence_number` follows from their count.
#[derive(Default)]
struct Events {
    frames: Vec<String>,
    first_sequence_number: usize,
}

impl Events {
    /// Appends an event: `type` first, then `sequence_number`, then `fields`.
    fn push(&mut self, kind: &str, fields: Value) {
        let mut event = Map::new();
        event.insert("type".to_owned(), json!(kind));
        let sequence_number = self.first_sequence_number + self.frames.len();
        event.insert("sequence_number".to_owned(), json!(sequence_number));
        if let Value::Object(fields) = fields {
            event.extend(fields);
        }
        self.frames.push(event_frame(kind, &Value::Object(event)));
    }
}
