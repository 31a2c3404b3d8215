//! A stored session told again as updates (`session/load`): each user message as
//! `user_message_chunk`s, each answer as message and thought chunks, each tool call as a
//! `tool_call` and its result as the `tool_call_update` that ends it (and a todo list written
//! as the `plan` it was).

use std::collections::HashMap;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    Content, ContentBlock as AcpBlock, ContentChunk, ImageContent, SessionUpdate, ToolCallContent,
    ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::Value;
use toolhost_core::conversation::{AssistantPart, Message};
use toolhost_core::{ContentBlock, ToolRegistry};

use crate::plan::plan_update;
use crate::tool_calls::CallFacts;
use crate::updates::{chunk, tool_call};

/// The updates that tell `messages` again; `registry` names the tools' kinds and files.
pub fn replay(messages: &[Message], registry: &Arc<ToolRegistry>) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    // The arguments of each call, for the plan a todo list written makes.
    let mut arguments: HashMap<&str, Value> = HashMap::new();
    for message in messages {
        match message {
            Message::User { content } => {
                updates.extend(
                    content
                        .iter()
                        .filter_map(block)
                        .map(|block| SessionUpdate::UserMessageChunk(ContentChunk::new(block))),
                );
            }
            Message::Assistant(answer) => {
                for part in &answer.content {
                    match part {
                        AssistantPart::Text { text } if !text.is_empty() => {
                            updates.push(SessionUpdate::AgentMessageChunk(chunk(text)));
                        }
                        AssistantPart::Reasoning { text, .. } if !text.is_empty() => {
                            updates.push(SessionUpdate::AgentThoughtChunk(chunk(text)));
                        }
                        AssistantPart::ToolCall(call) => {
                            let args = call.parsed_arguments().unwrap_or(Value::Null);
                            // The file as it is now is no "before": no diff in a replay.
                            let facts = CallFacts {
                                before: None,
                                ..CallFacts::of(registry, &call.name, &args)
                            };
                            updates.push(tool_call(&call.id, &facts, &args));
                            arguments.insert(&call.id, args);
                        }
                        _ => {}
                    }
                }
            }
            Message::ToolResult(result) => {
                let status = if result.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                let content = result
                    .content
                    .iter()
                    .filter_map(block)
                    .map(|block| ToolCallContent::Content(Content::new(block)))
                    .collect::<Vec<_>>();
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    ToolCallId::new(result.tool_call_id.as_str()),
                    ToolCallUpdateFields::new().status(status).content(content),
                )));
                if let (false, Some(args)) =
                    (result.is_error, arguments.get(result.tool_call_id.as_str()))
                {
                    updates.extend(plan_update(&result.tool_name, args));
                }
            }
        }
    }
    updates
}

/// A block of a stored message as the editor shows it (a deferred tool's reference as its
/// name).
fn block(block: &ContentBlock) -> Option<AcpBlock> {
    match block {
        ContentBlock::Text { text } => Some(AcpBlock::from(text.clone())),
        ContentBlock::Image { data, mime_type } => Some(AcpBlock::Image(ImageContent::new(
            data.clone(),
            mime_type.clone(),
        ))),
        ContentBlock::ToolReference { tool_name } => Some(AcpBlock::from(tool_name.clone())),
    }
}
