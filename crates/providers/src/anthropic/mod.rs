//! Anthropic messages: `POST {base_url}/v1/messages` with `stream: true`, `x-api-key` and
//! `anthropic-version: 2023-06-01`.
//!
//! The system prompt goes as a text block; the conversation alternates `user` and `assistant`
//! messages of content blocks: tool calls are `tool_use` blocks, their results `tool_result`
//! blocks (with `is_error`) in the next user message — consecutive results and user text are
//! merged into one user message. Thinking goes back as `thinking` blocks with their
//! `signature` (a [`AssistantPart::Reasoning`] with a signature and no id), redacted thinking
//! as `redacted_thinking` (id [`REDACTED_THINKING`], the data in `signature`); reasoning from
//! other providers is left out.
//!
//! Deferred tools are sent natively: every tool is in `tools`, the deferred ones with
//! `defer_loading: true`, and a `tool_search` result goes back as the `tool_reference`
//! blocks of the tools it loaded, which the API expands into their definitions in the
//! conversation — the tools list never changes, so its cache is kept.
//!
//! With the prompt cache on, breakpoints (`cache_control: {"type": "ephemeral"}`) go on the
//! last tool not deferred, the system block and the last block of the last two user
//! messages — four, the most the API allows — so that each turn reads the prefix the previous one wrote.
//!
//! The stream: `message_start` (input usage), then per content block `content_block_start`,
//! `content_block_delta`s (`text_delta`, `thinking_delta`, `signature_delta`,
//! `input_json_delta`) and `content_block_stop`, then `message_delta` (stop reason, output
//! usage) and `message_stop`; `ping`s anywhere, and `error` events for overloads and faults.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};
use toolhost_core::conversation::{AssistantPart, Message, StopReason, Usage};
use toolhost_core::{ContentBlock, DefinitionFormat, ToolSpec};

use crate::accumulate::{Emitter, ResponseBuilder};
use crate::config::{DEFAULT_ANTHROPIC_MAX_OUTPUT_TOKENS, ProviderConfig};
use crate::provider::ModelRequest;
use crate::sse::SseEvent;
use crate::stream_format::{Progress, StreamDecoder, StreamFailure, error_object, parse_json};

/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// The [`AssistantPart::Reasoning`] id marking a `redacted_thinking` block, whose opaque data
/// is kept in `signature`.
pub const REDACTED_THINKING: &str = "redacted_thinking";

/// Tokens kept for the answer above the thinking budget of an `effort`, when `max_tokens`
/// would leave less.
pub const THINKING_ANSWER_ROOM: u32 = 4_096;

/// How many user messages, counted from the end, get a cache breakpoint.
const CACHED_USER_TURNS: usize = 2;

/// The request body, but for the tools ([`tools_body`]).
pub(crate) fn request_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    let cache = config.prompt_cache;
    let mut messages = conversation(&request.messages, &request.deferred_tools);
    if cache {
        let mut marked = 0;
        for message in messages.iter_mut().rev() {
            if marked == CACHED_USER_TURNS {
                break;
            }
            if message["role"] == "user"
                && let Some(last) = message["content"].as_array_mut().and_then(|c| c.last_mut())
            {
                mark_cached(last);
                marked += 1;
            }
        }
    }
    let mut body = json!({
        "model": config.model,
        "max_tokens": request
            .max_output_tokens
            .or(config.max_output_tokens)
            .unwrap_or(DEFAULT_ANTHROPIC_MAX_OUTPUT_TOKENS),
        "messages": messages,
        "stream": true,
    });
    if let Some(effort) = request.reasoning_effort {
        // Thinking counts against `max_tokens`, which must leave room for the answer; and
        // Anthropic refuses a temperature with thinking on.
        let budget = effort.thinking_budget();
        let max_tokens = body["max_tokens"].as_u64().unwrap_or_default();
        let floor = u64::from(budget) + u64::from(THINKING_ANSWER_ROOM);
        body["max_tokens"] = max_tokens.max(floor).into();
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(temperature) = config.temperature {
        body["temperature"] = temperature.into();
    }
    if !request.system.is_empty() {
        let mut block = json!({"type": "text", "text": request.system});
        if cache {
            mark_cached(&mut block);
        }
        body["system"] = json!([block]);
    }
    body
}

/// The tool definitions (`tools`): those `deferred` names with `defer_loading: true`, and
/// the last of the others with a cache breakpoint when the cache is on (deferred tools are
/// not part of the cached prefix; what a search loads arrives in the conversation).
pub(crate) fn tools_body(
    config: &ProviderConfig,
    tools: &[ToolSpec],
    deferred: &BTreeSet<String>,
) -> Value {
    let mut tools: Vec<(bool, Value)> = tools
        .iter()
        .map(|spec| {
            let mut definition = DefinitionFormat::Anthropic.render(spec);
            let is_deferred = deferred.contains(&spec.name);
            if is_deferred && let Some(object) = definition.as_object_mut() {
                object.insert("defer_loading".into(), true.into());
            }
            (is_deferred, definition)
        })
        .collect();
    if config.prompt_cache
        && let Some((_, last)) = tools.iter_mut().rev().find(|(deferred, _)| !deferred)
    {
        mark_cached(last);
    }
    tools
        .into_iter()
        .map(|(_, definition)| definition)
        .collect()
}

fn mark_cached(block: &mut Value) {
    if let Some(object) = block.as_object_mut() {
        object.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
}

/// The messages: user-side messages in a row merged into one (tool results first, as they
/// come), assistant messages with nothing to send left out. `deferred` names the tools the
/// request sends deferred, which a result's tool references load.
fn conversation(messages: &[Message], deferred: &BTreeSet<String>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            Message::User { content } => ("user", content.iter().filter_map(block).collect()),
            Message::ToolResult(result) => {
                let mut tool_result = Map::new();
                tool_result.insert("type".into(), "tool_result".into());
                tool_result.insert("tool_use_id".into(), result.tool_call_id.clone().into());
                let content = tool_result_content(&result.content, deferred);
                if !content.is_empty() {
                    tool_result.insert("content".into(), content.into());
                }
                if result.is_error {
                    tool_result.insert("is_error".into(), true.into());
                }
                ("user", vec![Value::Object(tool_result)])
            }
            Message::Assistant(assistant) => (
                "assistant",
                assistant
                    .content
                    .iter()
                    .filter_map(assistant_block)
                    .collect::<Vec<_>>(),
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => out.push(json!({"role": role, "content": blocks})),
        }
    }
    out
}

/// A tool result's content. A result that references tools this request defers (a
/// `tool_search` result) is sent as those `tool_reference` blocks alone — the shape of a
/// custom tool search's result, which the API expands into the tools' definitions; the text
/// beside them only describes those tools. References to tools not deferred here (sent in
/// full, gone, or a conversation resumed without native deferral) become text.
fn tool_result_content(content: &[ContentBlock], deferred: &BTreeSet<String>) -> Vec<Value> {
    let references: Vec<Value> = content
        .iter()
        .filter_map(ContentBlock::as_tool_reference)
        .filter(|name| deferred.contains(*name))
        .map(|name| json!({"type": "tool_reference", "tool_name": name}))
        .collect();
    if references.is_empty() {
        content.iter().filter_map(block).collect()
    } else {
        references
    }
}

/// A text or image block; empty text is left out, as the API refuses it. A tool reference
/// here is one that cannot load anything: its text.
fn block(content: &ContentBlock) -> Option<Value> {
    match content {
        ContentBlock::Text { text } if text.is_empty() => None,
        ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
        ContentBlock::Image { data, mime_type } => Some(json!({
            "type": "image",
            "source": {"type": "base64", "media_type": mime_type, "data": data},
        })),
        ContentBlock::ToolReference { tool_name } => {
            Some(json!({"type": "text", "text": toolhost_core::tool_reference_text(tool_name)}))
        }
    }
}

fn assistant_block(part: &AssistantPart) -> Option<Value> {
    match part {
        AssistantPart::Text { text } if text.is_empty() => None,
        AssistantPart::Text { text } => Some(json!({"type": "text", "text": text})),
        AssistantPart::Reasoning {
            text,
            signature: Some(signature),
            id: None,
        } => Some(json!({"type": "thinking", "thinking": text, "signature": signature})),
        AssistantPart::Reasoning {
            signature: Some(data),
            id: Some(id),
            ..
        } if id == REDACTED_THINKING => Some(json!({"type": "redacted_thinking", "data": data})),
        AssistantPart::Reasoning { .. } => None,
        AssistantPart::ToolCall(call) => Some(json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": crate::stream_format::sendable_arguments(&call.arguments),
        })),
    }
}

/// Reads Anthropic message events.
#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    /// Tool-use blocks with no `input_json_delta` yet → the `input` their start carried.
    pending_input: HashMap<u64, String>,
}

impl StreamDecoder for MessagesDecoder {
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
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                let message = data.get("message").unwrap_or(&Value::Null);
                if let Some(model) = message.get("model").and_then(Value::as_str) {
                    response.model = Some(model.to_owned());
                }
                if let Some(usage) = message.get("usage") {
                    read_usage(usage, &mut response.usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let field = |name: &str| block.get(name).and_then(Value::as_str);
                match field("type") {
                    Some("text") => {
                        response.keyed_text(index);
                        response.text_at(out, index, field("text").unwrap_or_default());
                    }
                    Some("thinking") => {
                        response.reasoning_start(Some(index), None);
                        response.reasoning(out, Some(index), field("thinking").unwrap_or_default());
                        if let Some(signature) = field("signature").filter(|s| !s.is_empty()) {
                            response.reasoning_signature(index, signature);
                        }
                    }
                    Some("redacted_thinking") => {
                        response.reasoning_start(Some(index), Some(REDACTED_THINKING.to_owned()));
                        response.reasoning_seal(index, field("data").map(str::to_owned), None);
                    }
                    Some("tool_use") => {
                        response.tool_call(out, index, field("id"), field("name"), None);
                        let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                        self.pending_input.insert(index, input.to_string());
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let field =
                    |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or_default();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => response.text_at(out, index, field("text")),
                    Some("thinking_delta") => {
                        response.reasoning(out, Some(index), field("thinking"))
                    }
                    Some("signature_delta") => {
                        response.reasoning_signature(index, field("signature"))
                    }
                    Some("input_json_delta") => {
                        self.pending_input.remove(&index);
                        response.tool_call(out, index, None, None, Some(field("partial_json")));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(input) = self.pending_input.remove(&index) {
                    response.tool_call_arguments_done(out, index, &input);
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    response.stop_reason = Some(stop_reason(reason));
                }
                if let Some(usage) = data.get("usage") {
                    read_usage(usage, &mut response.usage);
                }
            }
            "message_stop" => return Ok(Progress::Done),
            "error" => return Err(error_object(data.get("error").unwrap_or(&data))),
            _ => {}
        }
        Ok(Progress::Continue)
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

/// Folds a usage object in: `message_start` has the input side, `message_delta` the
/// cumulative output (and, from some servers, the input again). Anthropic's `input_tokens`
/// leaves out cached tokens; [`Usage::input_tokens`] counts them.
fn read_usage(usage: &Value, total: &mut Usage) {
    let number = |name: &str| usage.get(name).and_then(Value::as_u64);
    let uncached = number("input_tokens").unwrap_or_else(|| {
        total
            .input_tokens
            .saturating_sub(total.cache_read_tokens)
            .saturating_sub(total.cache_write_tokens)
    });
    if let Some(read) = number("cache_read_input_tokens") {
        total.cache_read_tokens = read;
    }
    if let Some(written) = number("cache_creation_input_tokens") {
        total.cache_write_tokens = written;
    }
    total.input_tokens = uncached + total.cache_read_tokens + total.cache_write_tokens;
    if let Some(output) = number("output_tokens") {
        total.output_tokens = output;
    }
}

#[cfg(test)]
mod tests;
