//! The OpenAI Responses API: `POST {base_url}/responses` with `stream: true`.
//!
//! The system prompt goes in `instructions`; the conversation becomes input items — user and
//! assistant `message`s, `function_call`s, `function_call_output`s and `reasoning` items. The
//! request sets `store: false` and asks for `reasoning.encrypted_content`, so that nothing is
//! kept on OpenAI's side and the reasoning of earlier turns is passed back whole: a
//! [`AssistantPart::Reasoning`](toolhost_core::conversation::AssistantPart) keeps the item's
//! `rs_…` id in `id` and its encrypted content in `signature`.
//!
//! Deferred tools are sent natively, with the API's client-executed tool search: every tool
//! is in `tools`, the deferred ones with `defer_loading: true`, and our `tool_search` goes
//! as `{"type": "tool_search", "execution": "client", "description", "parameters"}`. The
//! model then emits a `tool_search_call` item (its `arguments` an object), read as a call of
//! `tool_search`; it is sent back as that item, and its result as a `tool_search_output`
//! item whose `tools` are the definitions of the tools it loaded, as they are in `tools` —
//! the tools list never changes. Whether a request does this is decided per request (it
//! defers tools and offers `tool_search`), so a conversation recorded with any provider
//! renders either way: a call of `tool_search` is a `tool_search_call` here exactly when the
//! request searches natively.
//!
//! The stream is typed events: `response.output_item.added` opens an item at an
//! `output_index`, deltas (`response.output_text.delta`,
//! `response.reasoning_summary_text.delta`, `response.function_call_arguments.delta`) extend
//! it, `response.output_item.done` closes it with its final form, and `response.completed`
//! (or `response.incomplete`) ends the response with its usage; `response.failed` and `error`
//! report errors.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolhost_core::conversation::{AssistantPart, Message, StopReason, ToolResultMessage, Usage};
use toolhost_core::deferral::TOOL_SEARCH_NAME;
use toolhost_core::{ContentBlock, ToolSpec};

use crate::accumulate::{Emitter, ResponseBuilder};
use crate::config::ProviderConfig;
use crate::provider::ModelRequest;
use crate::sse::SseEvent;
use crate::stream_format::{Progress, StreamDecoder, StreamFailure, error_object, parse_json};

/// The request body, but for the tools ([`tools_body`]).
pub(crate) fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    let native = searches_natively(&request.tools, &request.deferred_tools);
    let mut input = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { content } => input.push(json!({
                "type": "message",
                "role": "user",
                "content": content.iter().map(input_part).collect::<Vec<_>>(),
            })),
            Message::Assistant(assistant) => {
                for part in &assistant.content {
                    input.extend(assistant_item(part, native));
                }
            }
            Message::ToolResult(result) if native && result.tool_name == TOOL_SEARCH_NAME => {
                input.push(tool_search_output(result, request));
            }
            Message::ToolResult(result) => {
                // Tool references degrade to text: only a native search's output loads tools.
                let output = match result.content.as_slice() {
                    blocks
                        if blocks.iter().all(|b| {
                            matches!(
                                b,
                                ContentBlock::Text { .. } | ContentBlock::ToolReference { .. }
                            )
                        }) =>
                    {
                        Value::String(crate::stream_format::text_only(blocks))
                    }
                    blocks => blocks.iter().map(input_part).collect(),
                };
                input.push(json!({
                    "type": "function_call_output",
                    "call_id": result.tool_call_id,
                    "output": output,
                }));
            }
        }
    }
    let mut body = json!({
        "model": config.model,
        "input": input,
        "stream": true,
        "store": false,
        "include": ["reasoning.encrypted_content"],
    });
    if !request.system.is_empty() {
        body["instructions"] = request.system.as_str().into();
    }
    if let Some(temperature) = config.temperature {
        body["temperature"] = temperature.into();
    }
    if let Some(max) = request.max_output_tokens.or(config.max_output_tokens) {
        body["max_output_tokens"] = max.into();
    }
    if let Some(effort) = request.reasoning_effort {
        body["reasoning"] = json!({"effort": effort.openai()});
    }
    body
}

/// Whether a request with these tools uses the API's tool search: it defers some (only a
/// provider that defers natively is given any) and offers `tool_search`, which runs it.
fn searches_natively(tools: &[ToolSpec], deferred: &BTreeSet<String>) -> bool {
    !deferred.is_empty() && tools.iter().any(|spec| spec.name == TOOL_SEARCH_NAME)
}

/// The tool definitions (`tools`): functions, those `deferred` names with
/// `defer_loading: true`, and `tool_search` as the client-executed tool search when the
/// request searches natively.
pub(crate) fn tools_body(tools: &[ToolSpec], deferred: &BTreeSet<String>) -> Value {
    let native = searches_natively(tools, deferred);
    tools
        .iter()
        .map(|spec| {
            if native && spec.name == TOOL_SEARCH_NAME {
                json!({
                    "type": "tool_search",
                    "execution": "client",
                    "description": spec.description,
                    "parameters": spec.parameters,
                })
            } else {
                function_tool(spec, deferred.contains(&spec.name))
            }
        })
        .collect()
}

/// A function tool, as `tools` lists it and a `tool_search_output` loads it.
fn function_tool(spec: &ToolSpec, deferred: bool) -> Value {
    // `strict` would demand schemas with every property required; ours are not.
    let mut tool = json!({
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": false,
    });
    if deferred {
        tool["defer_loading"] = true.into();
    }
    tool
}

/// The `tool_search_output` answering a `tool_search_call`: the definitions of the deferred
/// tools its result references, in its order. A reference to a tool the request does not
/// defer (sent in full, or gone) loads nothing; an error result loads nothing either.
fn tool_search_output(result: &ToolResultMessage, request: &ModelRequest) -> Value {
    let tools: Vec<Value> = result
        .content
        .iter()
        .filter_map(ContentBlock::as_tool_reference)
        .filter(|name| request.deferred_tools.contains(*name))
        .filter_map(|name| request.tools.iter().find(|spec| spec.name == name))
        .map(|spec| function_tool(spec, true))
        .collect();
    json!({
        "type": "tool_search_output",
        "call_id": result.tool_call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    })
}

fn input_part(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "input_text", "text": text}),
        ContentBlock::Image { data, mime_type } => json!({
            "type": "input_image",
            "image_url": format!("data:{mime_type};base64,{data}"),
        }),
        ContentBlock::ToolReference { tool_name } => {
            json!({"type": "input_text", "text": toolhost_core::tool_reference_text(tool_name)})
        }
    }
}

/// The input item for one part of an earlier response. Reasoning goes back only when it came
/// from this API (an `rs_…` id and encrypted content): other providers' reasoning means
/// nothing here. A call of `tool_search` is the `tool_search_call` it was when the request
/// searches `native`ly, its arguments an object.
fn assistant_item(part: &AssistantPart, native: bool) -> Option<Value> {
    match part {
        AssistantPart::Text { text } if text.is_empty() => None,
        AssistantPart::Text { text } => Some(json!({
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        })),
        AssistantPart::Reasoning {
            text,
            signature: Some(encrypted),
            id: Some(id),
        } if id.starts_with("rs_") => {
            let summary: Vec<Value> = if text.is_empty() {
                Vec::new()
            } else {
                vec![json!({"type": "summary_text", "text": text})]
            };
            Some(json!({
                "type": "reasoning",
                "id": id,
                "summary": summary,
                "encrypted_content": encrypted,
            }))
        }
        AssistantPart::Reasoning { .. } => None,
        AssistantPart::ToolCall(call) if native && call.name == TOOL_SEARCH_NAME => Some(json!({
            "type": "tool_search_call",
            "call_id": call.id,
            "execution": "client",
            "status": "completed",
            "arguments": crate::stream_format::sendable_arguments(&call.arguments),
        })),
        AssistantPart::ToolCall(call) => Some(json!({
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": crate::stream_format::sendable_arguments(&call.arguments).to_string(),
        })),
    }
}

/// Reads Responses API events.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    refused: bool,
}

impl StreamDecoder for ResponsesDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        response: &mut ResponseBuilder,
        out: &mut Emitter,
    ) -> Result<Progress, StreamFailure> {
        let data = parse_json(event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        let index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let text = |name: &str| data.get(name).and_then(Value::as_str).unwrap_or_default();
        match kind {
            "response.created" | "response.in_progress" => {
                if let Some(model) = data.pointer("/response/model").and_then(Value::as_str) {
                    response.model = Some(model.to_owned());
                }
            }
            "response.output_item.added" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                let field = |name: &str| item.get(name).and_then(Value::as_str);
                match field("type") {
                    Some("message") => response.keyed_text(index),
                    Some("reasoning") => {
                        response.reasoning_start(Some(index), field("id").map(str::to_owned));
                    }
                    Some("function_call") => response.tool_call(
                        out,
                        index,
                        field("call_id"),
                        field("name"),
                        field("arguments"),
                    ),
                    Some("tool_search_call") if is_client_search(item) => response.tool_call(
                        out,
                        index,
                        field("call_id").or(field("id")),
                        Some(TOOL_SEARCH_NAME),
                        None,
                    ),
                    _ => {}
                }
            }
            "response.output_text.delta" => response.text_at(out, index, text("delta")),
            "response.refusal.delta" => {
                self.refused = true;
                response.text_at(out, index, text("delta"));
            }
            // Summary parts are paragraphs of one reasoning item.
            "response.reasoning_summary_part.added"
                if data.get("summary_index").and_then(Value::as_u64) > Some(0) =>
            {
                response.reasoning(out, Some(index), "\n\n");
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                response.reasoning(out, Some(index), text("delta"));
            }
            "response.function_call_arguments.delta" => {
                response.tool_call(out, index, None, None, Some(text("delta")));
            }
            "response.function_call_arguments.done" => {
                response.tool_call_arguments_done(out, index, text("arguments"));
            }
            "response.output_item.done" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                let field = |name: &str| item.get(name).and_then(Value::as_str);
                match field("type") {
                    Some("reasoning") => response.reasoning_seal(
                        index,
                        field("encrypted_content").map(str::to_owned),
                        field("id").map(str::to_owned),
                    ),
                    Some("function_call") => {
                        response.tool_call(out, index, field("call_id"), field("name"), None);
                        if let Some(arguments) = field("arguments") {
                            response.tool_call_arguments_done(out, index, arguments);
                        }
                    }
                    // Its arguments arrive whole, as an object, with the finished item.
                    Some("tool_search_call") if is_client_search(item) => {
                        let id = field("call_id").or(field("id"));
                        response.tool_call(out, index, id, Some(TOOL_SEARCH_NAME), None);
                        match item.get("arguments") {
                            None | Some(Value::Null) => {}
                            Some(Value::String(text)) => {
                                response.tool_call_arguments_done(out, index, text);
                            }
                            Some(object) => {
                                response.tool_call_arguments_done(out, index, &object.to_string());
                            }
                        }
                    }
                    _ => {}
                }
            }
            "response.completed" | "response.incomplete" => {
                let body = data.get("response").unwrap_or(&Value::Null);
                if let Some(usage) = body.get("usage").filter(|usage| usage.is_object()) {
                    response.usage = read_usage(usage);
                }
                if let Some(model) = body.get("model").and_then(Value::as_str) {
                    response.model = Some(model.to_owned());
                }
                let reason = body
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str);
                response.stop_reason = Some(match reason {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some("content_filter") => StopReason::Refusal,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None if self.refused => StopReason::Refusal,
                    None if response.has_tool_calls() => StopReason::ToolUse,
                    None => StopReason::EndTurn,
                });
                return Ok(Progress::Done);
            }
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(error_object(error));
            }
            "error" => {
                // `{"type":"error","code":…,"message":…}`: the code says what kind it is.
                let error = data.get("error").cloned().unwrap_or_else(
                    || json!({"message": data.get("message"), "code": data.get("code")}),
                );
                return Err(error_object(&error));
            }
            _ => {}
        }
        Ok(Progress::Continue)
    }
}

/// Whether a `tool_search_call` item is ours to run: not one the server ran itself.
fn is_client_search(item: &Value) -> bool {
    item.get("execution").and_then(Value::as_str) != Some("server")
}

fn read_usage(usage: &Value) -> Usage {
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: number("/input_tokens"),
        output_tokens: number("/output_tokens"),
        cache_read_tokens: number("/input_tokens_details/cached_tokens"),
        // Part of `input_tokens`, as the reads are (absent from older responses: 0).
        cache_write_tokens: number("/input_tokens_details/cache_write_tokens"),
    }
}

#[cfg(test)]
mod tests;
