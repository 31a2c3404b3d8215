//! toolhost's messages in the shapes pi's extensions read them (`AgentMessage` of
//! `pi-agent-core`): an assistant message is `{ role: "assistant", content: [text | thinking |
//! toolCall parts], usage, stopReason, model, timestamp }`, a user message `{ role: "user",
//! content, timestamp }`, a tool's result `{ role: "toolResult", toolCallId, toolName, content,
//! details, isError, timestamp }`. The events (`message_end`, `turn_end`) and
//! `ctx.sessionManager` give them out in these shapes.

use serde_json::{Value, json};
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{AssistantMessage, AssistantPart, ToolResultMessage};

/// pi's assistant message for `message`, stamped `timestamp` (milliseconds since 1970).
pub fn assistant_message(message: &AssistantMessage, timestamp: u128) -> Value {
    let content: Vec<Value> = message
        .content
        .iter()
        .map(|part| match part {
            AssistantPart::Text { text } => json!({ "type": "text", "text": text }),
            AssistantPart::Reasoning { text, .. } => {
                json!({ "type": "thinking", "thinking": text })
            }
            AssistantPart::ToolCall(call) => json!({
                "type": "toolCall",
                "id": call.id,
                "name": call.name,
                "arguments": call.parsed_arguments().unwrap_or(Value::Null),
            }),
        })
        .collect();
    let usage = &message.usage;
    json!({
        "role": "assistant",
        "content": content,
        "usage": {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "cacheRead": usage.cache_read_tokens,
            "cacheWrite": usage.cache_write_tokens,
            "totalTokens": usage.input_tokens + usage.output_tokens,
        },
        "stopReason": if message.tool_calls().next().is_some() { "toolUse" } else { "stop" },
        "model": message.model,
        "timestamp": timestamp,
    })
}

/// pi's user message of `content`.
pub fn user_message(content: &[ContentBlock], timestamp: u128) -> Value {
    json!({ "role": "user", "content": content, "timestamp": timestamp })
}

/// pi's tool result message for `result`, with the tool's `details`.
pub fn tool_result_message(
    result: &ToolResultMessage,
    details: Option<&Value>,
    timestamp: u128,
) -> Value {
    json!({
        "role": "toolResult",
        "toolCallId": result.tool_call_id,
        "toolName": crate::pi_tool_name(&result.tool_name),
        "content": result.content,
        "details": details,
        "isError": result.is_error,
        "timestamp": timestamp,
    })
}
