//! OpenAI chat completions: `POST {base_url}/chat/completions` with `stream: true` — what
//! llama.cpp, vLLM, Ollama, LM Studio, OpenRouter and most gateways speak.
//!
//! The conversation becomes `system`, `user`, `assistant` (text and `tool_calls`) and `tool`
//! messages. The stream is `data:` chunks of `choices[0].delta` ending in `data: [DONE]`, with
//! the usage in a last chunk whose `choices` is empty (`stream_options.include_usage`).
//! Reasoning arrives as `delta.reasoning_content` (DeepSeek, llama.cpp, vLLM) or
//! `delta.reasoning` (OpenRouter, Ollama); it is not sent back, as the format has no place for
//! it. Tool calls arrive as pieces keyed by `index`: the id, the name and the arguments may
//! each come in any piece, and several calls may interleave.

use serde_json::{Map, Value, json};
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{Message, StopReason, Usage};
use toolhost_core::{DefinitionFormat, ToolSpec};

use crate::accumulate::{Emitter, ResponseBuilder};
use crate::config::ProviderConfig;
use crate::provider::ModelRequest;
use crate::sse::SseEvent;
use crate::stream_format::{
    Progress, StreamDecoder, StreamFailure, error_object, parse_json, text_only,
};

/// The request body, but for the tools ([`tools_body`]).
pub(crate) fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        messages.push(match message {
            Message::User { content } => json!({"role": "user", "content": user_content(content)}),
            Message::Assistant(assistant) => {
                let text = assistant.text();
                let calls: Vec<Value> = assistant
                    .tool_calls()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": crate::stream_format::sendable_arguments(&call.arguments).to_string(),
                            },
                        })
                    })
                    .collect();
                let mut object = Map::new();
                object.insert("role".into(), "assistant".into());
                object.insert(
                    "content".into(),
                    if text.is_empty() { Value::Null } else { text.into() },
                );
                if !calls.is_empty() {
                    object.insert("tool_calls".into(), calls.into());
                }
                Value::Object(object)
            }
            Message::ToolResult(result) => json!({
                "role": "tool",
                "tool_call_id": result.tool_call_id,
                "content": text_only(&result.content),
            }),
        });
    }
    let mut body = json!({
        "model": config.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if let Some(temperature) = config.temperature {
        body["temperature"] = temperature.into();
    }
    if let Some(max) = request.max_output_tokens.or(config.max_output_tokens) {
        // OpenAI's reasoning models refuse `max_tokens`; most other servers know only it.
        let key = if config.base_url.contains("api.openai.com") {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[key] = max.into();
    }
    if let Some(effort) = request.reasoning_effort {
        body["reasoning_effort"] = effort.openai().into();
    }
    body
}

/// The tool definitions (`tools`).
pub(crate) fn tools_body(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|spec| DefinitionFormat::OpenAi.render(spec))
        .collect()
}

/// A user message's content: a plain string when it is one text, else parts.
fn user_content(content: &[ContentBlock]) -> Value {
    if let [ContentBlock::Text { text }] = content {
        return text.as_str().into();
    }
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { data, mime_type } => json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{mime_type};base64,{data}")},
            }),
            ContentBlock::ToolReference { tool_name } => {
                json!({"type": "text", "text": toolhost_core::tool_reference_text(tool_name)})
            }
        })
        .collect()
}

/// Reads chat-completion chunks.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    finished: bool,
}

impl StreamDecoder for ChatDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        response: &mut ResponseBuilder,
        out: &mut Emitter,
    ) -> Result<Progress, StreamFailure> {
        if event.data.trim() == "[DONE]" {
            return Ok(Progress::Done);
        }
        let chunk = parse_json(event)?;
        if let Some(error) = chunk.get("error") {
            return Err(error_object(error));
        }
        if event.event == "error" {
            return Err(error_object(&chunk));
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str)
            && !model.is_empty()
        {
            response.model = Some(model.to_owned());
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            response.usage = read_usage(usage);
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if let Some(delta) = choice.get("delta") {
                read_delta(delta, response, out);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finished = true;
                response.stop_reason = Some(stop_reason(reason));
            }
        }
        Ok(Progress::Continue)
    }

    fn complete_without_end(&self) -> bool {
        self.finished
    }
}

fn read_delta(delta: &Value, response: &mut ResponseBuilder, out: &mut Emitter) {
    for key in ["reasoning_content", "reasoning"] {
        if let Some(reasoning) = delta.get(key).and_then(Value::as_str) {
            response.reasoning(out, None, reasoning);
        }
    }
    if let Some(text) = delta.get("content").and_then(Value::as_str) {
        response.text(out, text);
    }
    let calls = delta.get("tool_calls").and_then(Value::as_array);
    for (position, call) in calls.into_iter().flatten().enumerate() {
        // A server that leaves out `index` sends one call per chunk, in order.
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let function = call.get("function");
        let field = |name: &str| function.and_then(|f| f.get(name));
        // A few servers send the arguments as a JSON object rather than its text.
        let arguments = match field("arguments") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(object @ Value::Object(_)) => Some(object.to_string()),
            _ => None,
        };
        response.tool_call(
            out,
            index,
            call.get("id").and_then(Value::as_str),
            field("name").and_then(Value::as_str),
            arguments.as_deref(),
        );
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

fn read_usage(usage: &Value) -> Usage {
    let number = |value: Option<&Value>| value.and_then(Value::as_u64).unwrap_or(0);
    let cached = usage
        .pointer("/prompt_tokens_details/cached_tokens")
        .or_else(|| usage.get("prompt_cache_hit_tokens"));
    Usage {
        input_tokens: number(usage.get("prompt_tokens")),
        output_tokens: number(usage.get("completion_tokens")),
        cache_read_tokens: number(cached),
        cache_write_tokens: 0,
    }
}

#[cfg(test)]
mod tests;
