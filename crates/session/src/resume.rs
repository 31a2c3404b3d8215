//! From a stored path to what a resumed run starts with.

use std::collections::HashSet;

use toolhost_core::ContentBlock;
use toolhost_core::conversation::{Message, ToolCall};
use toolhost_core::permission::PermissionMode;

use crate::{Compaction, Entry, EntryKind, TurnContext};

/// What the model reads first in place of the compacted entries.
pub const COMPACTION_PREAMBLE: &str =
    "The earlier part of this conversation was compacted; here is its summary.";

/// What the model reads where the conversation came back from another branch.
pub const BRANCH_PREAMBLE: &str =
    "The conversation came back to this point from another branch; this is what happened there.";

/// A conversation ready to continue.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resume {
    /// The messages the model reads: the last compaction's summary, then what follows it.
    pub messages: Vec<Message>,
    /// The last turn context on the path.
    pub turn_context: Option<TurnContext>,
    /// The provider and model in force at the leaf (a model change after the turn context
    /// wins).
    pub model: Option<(String, String)>,
    /// The permission mode in force at the leaf.
    pub mode: Option<PermissionMode>,
    /// Tool calls of the path that have no result (the process died while they ran): the
    /// model needs a result for each before it can go on.
    pub interrupted_calls: Vec<ToolCall>,
}

impl Resume {
    /// Reads a path, root first, as [`crate::SessionStore::conversation`] returns it.
    pub fn from_path(path: Vec<Entry>) -> Self {
        let mut resume = Self::default();
        for entry in &path {
            match &entry.kind {
                EntryKind::TurnContext(context) => {
                    resume.model = Some((context.provider.clone(), context.model.clone()));
                    resume.mode = Some(context.permission_mode);
                    resume.turn_context = Some(context.clone());
                }
                EntryKind::ModelChange { provider, model } => {
                    resume.model = Some((provider.clone(), model.clone()));
                }
                EntryKind::ModeChange { mode } => resume.mode = Some(*mode),
                _ => {}
            }
        }
        // The last compaction, and where what it keeps starts: the entries before that are
        // replaced by its summary.
        let compaction = path
            .iter()
            .enumerate()
            .rev()
            .find_map(|(at, entry)| match &entry.kind {
                EntryKind::Compaction(compaction) => {
                    let kept_from = compaction
                        .first_kept
                        .and_then(|kept| path[..at].iter().position(|entry| entry.id == kept))
                        .unwrap_or(at);
                    Some((at, kept_from, compaction_message(compaction)))
                }
                _ => None,
            });
        let (kept_from, compaction) = match compaction {
            None => (0, None),
            Some((at, kept_from, summary)) => {
                resume.messages.push(summary);
                (kept_from, Some(at))
            }
        };
        resume.messages.extend(
            path.into_iter()
                .enumerate()
                .filter(|(at, _)| *at >= kept_from && Some(*at) != compaction)
                .filter_map(|(_, entry)| message(entry.kind)),
        );
        resume.interrupted_calls = unanswered(&resume.messages);
        resume
    }
}

fn message(kind: EntryKind) -> Option<Message> {
    match kind {
        EntryKind::UserMessage { content } => Some(Message::User { content }),
        EntryKind::AssistantMessage(message) => Some(Message::Assistant(message)),
        EntryKind::ToolResult { message, .. } => Some(Message::ToolResult(message)),
        EntryKind::BranchSummary { summary, .. } => Some(Message::User {
            content: vec![ContentBlock::text(format!(
                "{BRANCH_PREAMBLE}\n\n{summary}"
            ))],
        }),
        EntryKind::Compaction(_)
        | EntryKind::ModelChange { .. }
        | EntryKind::ModeChange { .. }
        | EntryKind::Label { .. }
        | EntryKind::TurnContext(_)
        | EntryKind::Custom { .. } => None,
    }
}

/// The message that stands for the entries a compaction replaced: the preamble, the summary,
/// and the files read and modified. The agent loop shows the model the same message when it
/// compacts, so a live and a resumed conversation read alike.
pub fn compaction_message(compaction: &Compaction) -> Message {
    let mut text = format!("{COMPACTION_PREAMBLE}\n\n{}", compaction.summary);
    for (title, files) in [
        ("Files read", &compaction.files_read),
        ("Files modified", &compaction.files_modified),
    ] {
        if !files.is_empty() {
            text.push_str(&format!("\n\n{title}:"));
            for file in files {
                text.push_str(&format!("\n- {}", file.display()));
            }
        }
    }
    Message::User {
        content: vec![ContentBlock::text(text)],
    }
}

fn unanswered(messages: &[Message]) -> Vec<ToolCall> {
    let answered: HashSet<&str> = messages
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult(result) => Some(result.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Assistant(assistant) => Some(assistant.tool_calls()),
            _ => None,
        })
        .flatten()
        .filter(|call| !answered.contains(call.id.as_str()))
        .cloned()
        .collect()
}
