//! OpenAI chat completions (`POST /v1/chat/completions`), as OpenAI, llama.cpp, vLLM and most
//! gateways speak it: SSE `data: {chunk}` frames ended by `data: [DONE]`, or one
//! `chat.completion` object.

use serde_json::{Value, json};

use super::script::{CallEvent, Fault, Reply, Stop};
use super::{CREATED, ResponseContext, data_frame};

/// The path this format is served on.
pub(crate) const PATH: &str = "/v1/chat/completions";

/// The SSE frames of `reply`, `[DONE]` included.
pub(crate) fn stream_frames(reply: &Reply, context: &ResponseContext) -> Vec<String> {
    let chunks = Chunks {
        id: completion_id(context),
        model: reply.model(),
        include_usage: context.include_usage,
    };
    let mut frames = vec![chunks.delta(json!({"role": "assistant", "content": ""}))];
    if let Some(reasoning) = &reply.reasoning {
        for piece in reply.pieces(&reasoning.text) {
            frames.push(chunks.delta(json!({"reasoning_content": piece})));
        }
    }
    for piece in reply.pieces(&reply.text) {
        frames.push(chunks.delta(json!({"content": piece})));
    }
    for event in reply.call_plan() {
        match event {
            CallEvent::Start(index) => {
                let call = &reply.tool_calls[index];
                if reply.has_fault(Fault::NameAfterId) {
                    frames.push(chunks.tool_call(json!({
                        "index": index, "id": call.id, "type": "function",
                    })));
                    frames.push(chunks.tool_call(json!({
                        "index": index, "function": {"name": call.name},
                    })));
                } else {
                    frames.push(chunks.tool_call(json!({
                        "index": index, "id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    })));
                }
            }
            CallEvent::Arguments(index, piece) => {
                frames.push(chunks.tool_call(json!({
                    "index": index, "function": {"arguments": piece},
                })));
            }
            CallEvent::End(_) => {}
        }
    }
    frames.push(chunks.finish(finish_reason(reply.stop())));
    if context.include_usage {
        frames.push(chunks.usage(usage(reply)));
    }
    frames.push("data: [DONE]\n\n".to_owned());
    frames
}

/// The whole `chat.completion` object of `reply`, for a request without `"stream": true`.
pub(crate) fn response_body(reply: &Reply, context: &ResponseContext) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": if reply.text.is_empty() { Value::Null } else { json!(reply.text) },
        "refusal": null,
    });
    if let Some(reasoning) = &reply.reasoning {
        message["reasoning_content"] = json!(reasoning.text);
    }
    if !reply.tool_calls.is_empty() {
        message["tool_calls"] = reply
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
    }
    json!({
        "id": completion_id(context),
        "object": "chat.completion",
        "created": CREATED,
        "model": reply.model(),
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(reply.stop()),
        }],
        "usage": usage(reply),
    })
}

/// The chunk of a stream that fails after it began: the error body as a `data:` frame, as
/// OpenAI-compatible servers send it.
pub(crate) fn stream_error_frame() -> String {
    data_frame(&error_body(500, "mock model: the server failed mid-stream"))
}

/// An OpenAI error body (`{"error":{…}}`), shared by chat completions and the Responses API.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        400 | 404 | 413 | 422 => ("invalid_request_error", Value::Null),
        401 => ("invalid_request_error", json!("invalid_api_key")),
        403 => ("permission_error", Value::Null),
        429 => ("requests", json!("rate_limit_exceeded")),
        _ => ("server_error", Value::Null),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

fn completion_id(context: &ResponseContext) -> String {
    format!("chatcmpl-{}", context.number)
}

fn finish_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "stop",
        Stop::ToolUse => "tool_calls",
        Stop::MaxTokens => "length",
    }
}

fn usage(reply: &Reply) -> Value {
    let usage = reply.usage;
    json!({
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    })
}

/// Writes the `chat.completion.chunk` frames of one completion.
struct Chunks<'a> {
    id: String,
    model: &'a str,
    /// With `stream_options.include_usage`, every chunk carries `"usage": null` and a last
    /// chunk with empty `choices` carries the usage.
    include_usage: bool,
}

impl Chunks<'_> {
    fn delta(&self, delta: Value) -> String {
        self.frame(json!([{
            "index": 0, "delta": delta, "logprobs": null, "finish_reason": null,
        }]))
    }

    fn tool_call(&self, call: Value) -> String {
        self.delta(json!({"tool_calls": [call]}))
    }

    fn finish(&self, reason: &str) -> String {
        self.frame(json!([{
            "index": 0, "delta": {}, "logprobs": null, "finish_reason": reason,
        }]))
    }

    fn usage(&self, usage: Value) -> String {
        let mut chunk = self.chunk(json!([]));
        chunk["usage"] = usage;
        data_frame(&chunk)
    }

    fn frame(&self, choices: Value) -> String {
        let mut chunk = self.chunk(choices);
        if self.include_usage {
            chunk["usage"] = Value::Null;
        }
        data_frame(&chunk)
    }

    fn chunk(&self, choices: Value) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": choices,
        })
    }
}
