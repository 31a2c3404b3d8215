//! Compaction: when a conversation nears the model's context window, the older part is
//! summarised by the model into one message, and the recent turns stay verbatim.
//!
//! The cut is never between a tool call and its result: what is kept starts at a user or an
//! assistant message, so every kept result still follows its call. The summary names the files
//! the summarised part read and changed (found through each tool's permission family, not its
//! name), so the model knows where to look again.

use std::collections::HashSet;

use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::{AssistantPart, Message, Usage};
use toolhost_core::{ContentBlock, PermissionFamily, ToolRegistry, tool_reference_text};
use toolhost_providers::{ModelProvider, ModelRequest, complete};

/// The context window assumed when the provider's configuration gives none.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// How the summariser is told to work.
const SUMMARY_SYSTEM_PROMPT: &str = "You summarise the earlier part of a coding agent's \
     conversation so that the agent can go on from the summary alone. Write plain text with \
     these parts: the user's goal and requests; decisions made and why; what was done and \
     found (with file paths, names and values that matter); what is unfinished; the next \
     steps. Be complete about facts and brief in words. Do not call tools.";

/// The most characters of one tool result the summariser reads (the rest is cut).
const RESULT_CHARS_FOR_SUMMARY: usize = 4_000;

/// When and how much to compact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactionPolicy {
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// Compact when the conversation passes this share of the window (0 turns it off).
    pub compact_at: f64,
}

impl CompactionPolicy {
    /// The token count past which a conversation is compacted; `None` when off.
    pub fn threshold(&self) -> Option<u64> {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        (self.compact_at > 0.0).then_some((self.context_window as f64 * self.compact_at) as u64)
    }

    /// How many tokens of recent messages stay verbatim: a quarter of the threshold.
    fn keep_recent(&self) -> u64 {
        self.threshold().unwrap_or(self.context_window) / 4
    }
}

/// A finished compaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Compacted {
    /// The model's summary.
    pub summary: String,
    /// How many messages at the end stayed verbatim.
    pub kept_messages: usize,
    /// The conversation's estimated size before.
    pub tokens_before: u64,
    /// Files the summarised part read, in the order first seen.
    pub files_read: Vec<String>,
    /// Files it changed.
    pub files_modified: Vec<String>,
    /// What the summary cost.
    pub usage: Usage,
    /// The conversation afterwards: the summary message, then the kept messages.
    pub messages: Vec<Message>,
}

/// Why a conversation could not be compacted.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// Nothing before the recent turns to summarise.
    #[error("nothing to compact: the conversation is only its latest turn")]
    NothingToCompact,
    /// The model could not summarise.
    #[error("the model could not summarise the conversation: {0}")]
    Provider(#[from] toolhost_providers::ProviderError),
    /// The model answered with no text.
    #[error("the model's summary was empty")]
    EmptySummary,
    /// A pi extension's `session_before_compact` handler cancelled it.
    #[error("{0}")]
    Cancelled(String),
    /// The session could not keep the compaction; the conversation stays as it was.
    #[error("the compaction could not be saved: {0}")]
    NotSaved(String),
}

/// A rough token count of `messages`: four characters a token, the usual estimate when no
/// tokenizer is at hand.
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(message_chars).sum::<usize>() as u64 / 4
}

fn message_chars(message: &Message) -> usize {
    match message {
        Message::User { content } => blocks_chars(content),
        Message::ToolResult(result) => blocks_chars(&result.content) + result.tool_name.len(),
        Message::Assistant(assistant) => assistant
            .content
            .iter()
            .map(|part| match part {
                AssistantPart::Text { text } | AssistantPart::Reasoning { text, .. } => text.len(),
                AssistantPart::ToolCall(call) => call.name.len() + call.arguments.len(),
            })
            .sum(),
    }
}

fn blocks_chars(blocks: &[ContentBlock]) -> usize {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.len(),
            // An image costs the model about a thousand tokens, whatever its bytes.
            ContentBlock::Image { .. } => 4_000,
            // As text; loaded natively it is the tool's definition, which the provider's
            // count of the next response includes.
            ContentBlock::ToolReference { tool_name } => tool_reference_text(tool_name).len(),
        })
        .sum()
}

/// Where the kept part of `messages` starts: the earliest user or assistant message from
/// which the rest fits in `keep` tokens, and never the first message (something must be
/// summarised). `None` when there is no such place.
fn cut_point(messages: &[Message], keep: u64) -> Option<usize> {
    let mut kept_tokens = 0;
    let mut cut = None;
    for at in (1..messages.len()).rev() {
        kept_tokens += message_chars(&messages[at]) as u64 / 4;
        let starts_a_turn = !matches!(messages[at], Message::ToolResult(_));
        if kept_tokens > keep && cut.is_some() {
            break;
        }
        if starts_a_turn {
            cut = Some(at);
        }
    }
    cut
}

/// Summarises `messages` but their recent part, by asking `provider`.
pub async fn compact(
    provider: &dyn ModelProvider,
    registry: &ToolRegistry,
    messages: &[Message],
    policy: &CompactionPolicy,
    instructions: Option<&str>,
    cancel: CancellationToken,
) -> Result<Compacted, CompactionError> {
    let cut = cut_point(messages, policy.keep_recent()).ok_or(CompactionError::NothingToCompact)?;
    let mut ask = format!(
        "Summarise this conversation between a user and a coding agent (toolhost).\n\n{}",
        transcript_text(&messages[..cut])
    );
    if let Some(instructions) = instructions.filter(|text| !text.trim().is_empty()) {
        ask.push_str("\n\nWhen you summarise, follow these instructions too:\n");
        ask.push_str(instructions.trim());
    }
    let request = ModelRequest {
        system: SUMMARY_SYSTEM_PROMPT.to_owned(),
        messages: vec![Message::user(ask)],
        ..ModelRequest::default()
    };
    let response = complete(provider, &request, cancel).await?;
    replaced_at(registry, messages, cut, &response.text(), response.usage)
}

/// Compacts `messages` as [`compact`] does, with a summary someone else wrote (a pi
/// extension's `session_before_compact` handler): the same part is replaced, no model is asked.
pub fn compact_with_summary(
    registry: &ToolRegistry,
    messages: &[Message],
    policy: &CompactionPolicy,
    summary: &str,
) -> Result<Compacted, CompactionError> {
    let cut = cut_point(messages, policy.keep_recent()).ok_or(CompactionError::NothingToCompact)?;
    replaced_at(registry, messages, cut, summary, Usage::default())
}

/// `messages` with everything before `cut` replaced by `summary`.
fn replaced_at(
    registry: &ToolRegistry,
    messages: &[Message],
    cut: usize,
    summary: &str,
    usage: Usage,
) -> Result<Compacted, CompactionError> {
    let summary = summary.trim().to_owned();
    if summary.is_empty() {
        return Err(CompactionError::EmptySummary);
    }
    let (old, kept) = messages.split_at(cut);
    let (files_read, files_modified) = files_touched(registry, old);
    let mut compacted_messages = vec![summary_message(&summary, &files_read, &files_modified)];
    compacted_messages.extend_from_slice(kept);
    Ok(Compacted {
        summary,
        kept_messages: kept.len(),
        tokens_before: estimate_tokens(messages),
        files_read,
        files_modified,
        usage,
        messages: compacted_messages,
    })
}

/// The message that stands for the summarised part; the same text a resumed session reads.
fn summary_message(summary: &str, files_read: &[String], files_modified: &[String]) -> Message {
    toolhost_session::compaction_message(&toolhost_session::Compaction {
        summary: summary.to_owned(),
        first_kept: None,
        tokens_before: 0,
        files_read: files_read.iter().map(Into::into).collect(),
        files_modified: files_modified.iter().map(Into::into).collect(),
    })
}

/// The paths that calls to Read-family and Edit-family tools named.
fn files_touched(registry: &ToolRegistry, messages: &[Message]) -> (Vec<String>, Vec<String>) {
    let mut read = Vec::new();
    let mut modified = Vec::new();
    let mut seen = HashSet::new();
    for message in messages {
        let Message::Assistant(assistant) = message else {
            continue;
        };
        for call in assistant.tool_calls() {
            let Some(spec) = registry.spec(&call.name) else {
                continue;
            };
            let list = match spec.family {
                PermissionFamily::Read => &mut read,
                PermissionFamily::Edit => &mut modified,
                _ => continue,
            };
            let Ok(arguments) = call.parsed_arguments() else {
                continue;
            };
            let path = ["path", "file_path"]
                .iter()
                .find_map(|key| arguments.get(*key).and_then(serde_json::Value::as_str));
            if let Some(path) = path
                && seen.insert((spec.family, path.to_owned()))
            {
                list.push(path.to_owned());
            }
        }
    }
    (read, modified)
}

/// The conversation as plain text for the summariser (tool results cut to a few KB).
fn transcript_text(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        match message {
            Message::User { content } => {
                text.push_str("\n[user]\n");
                push_blocks(&mut text, content, usize::MAX);
            }
            Message::Assistant(assistant) => {
                text.push_str("\n[assistant]\n");
                for part in &assistant.content {
                    match part {
                        AssistantPart::Text { text: said } => text.push_str(said),
                        AssistantPart::Reasoning { .. } => {}
                        AssistantPart::ToolCall(call) => {
                            text.push_str(&format!("(calls {} {})", call.name, call.arguments));
                        }
                    }
                    text.push('\n');
                }
            }
            Message::ToolResult(result) => {
                let status = if result.is_error { " (error)" } else { "" };
                text.push_str(&format!("\n[{} result{status}]\n", result.tool_name));
                push_blocks(&mut text, &result.content, RESULT_CHARS_FOR_SUMMARY);
            }
        }
    }
    text
}

fn push_blocks(text: &mut String, blocks: &[ContentBlock], max_chars: usize) {
    let mut all = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text: part } => all.push_str(part),
            ContentBlock::Image { mime_type, .. } => all.push_str(&format!("[{mime_type} image]")),
            ContentBlock::ToolReference { tool_name } => {
                all.push_str(&tool_reference_text(tool_name));
            }
        }
        all.push('\n');
    }
    if all.chars().count() > max_chars {
        let cut: String = all.chars().take(max_chars).collect();
        text.push_str(&cut);
        text.push_str("\n[… cut for the summary]\n");
    } else {
        text.push_str(&all);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use toolhost_core::conversation::{AssistantMessage, ToolCall, ToolResultMessage};

    use super::*;

    fn call(id: &str) -> Message {
        Message::Assistant(AssistantMessage {
            content: vec![AssistantPart::ToolCall(ToolCall {
                id: id.into(),
                name: "Read".into(),
                arguments: "{\"path\":\"a.txt\"}".into(),
            })],
            ..AssistantMessage::default()
        })
    }

    fn result(id: &str, chars: usize) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "Read".into(),
            content: vec![ContentBlock::text("x".repeat(chars))],
            is_error: false,
        })
    }

    #[test]
    fn the_cut_never_separates_a_call_from_its_result() {
        // user, call, big result, call, result: keeping ~10 tokens would start at the last
        // result; the cut moves back to the call before it.
        let messages = vec![
            Message::user("start"),
            call("1"),
            result("1", 4_000),
            call("2"),
            result("2", 40),
        ];
        let cut = cut_point(&messages, 10).unwrap();
        assert_eq!(cut, 3);
        assert!(!matches!(messages[cut], Message::ToolResult(_)));
        // Room for everything: the cut is as early as it may be, after the first message.
        assert_eq!(cut_point(&messages, 1_000_000), Some(1));
        // One message: nothing to summarise.
        assert_eq!(cut_point(&messages[..1], 10), None);
    }

    #[test]
    fn the_threshold_is_the_share_of_the_window() {
        let policy = CompactionPolicy {
            context_window: 10_000,
            compact_at: 0.8,
        };
        assert_eq!(policy.threshold(), Some(8_000));
        assert_eq!(policy.keep_recent(), 2_000);
        let off = CompactionPolicy {
            compact_at: 0.0,
            ..policy
        };
        assert_eq!(off.threshold(), None);
    }
}
