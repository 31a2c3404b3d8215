//! What a session is made of: entries in a tree, each with a typed payload.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{AssistantMessage, ToolResultMessage, Usage};
use toolhost_core::permission::PermissionMode;

use crate::{EntryId, SessionId};

/// One stored entry: a node of its session's tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Its id.
    pub id: EntryId,
    /// The session it belongs to.
    pub session: SessionId,
    /// The entry it follows; `None` for a root.
    pub parent: Option<EntryId>,
    /// When it was appended.
    pub created_at: SystemTime,
    /// What it holds.
    pub kind: EntryKind,
}

/// What an entry holds. Stored as JSON, `{"kind": …, "data": …}`; the names are part of the
/// schema. (Adjacent tagging, with the tag first, deserializes without buffering the payload:
/// a resume reads thousands of these.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum EntryKind {
    /// What the user said.
    UserMessage {
        /// Text and images.
        content: Vec<ContentBlock>,
    },
    /// One response of the model: text, reasoning, tool calls, usage.
    AssistantMessage(AssistantMessage),
    /// The result of one tool call, as the model read it, with what renderers need.
    ToolResult {
        /// What the model read.
        message: ToolResultMessage,
        /// The tool's structured details (for renderers and the tool's own state).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// The session moved to another model from here on.
    ModelChange {
        /// The provider's name.
        provider: String,
        /// The model.
        model: String,
    },
    /// The permission mode changed from here on.
    ModeChange {
        /// The new mode.
        mode: PermissionMode,
    },
    /// A summary that stands in for the entries before it on the path (compaction).
    Compaction(Compaction),
    /// The conversation came back here from another branch, with what that branch did.
    BranchSummary {
        /// The leaf of the branch that was left.
        from_leaf: EntryId,
        /// What happened there, for the model.
        summary: String,
    },
    /// A name for this point of the conversation (`/tree` shows it; the model does not).
    Label {
        /// The name.
        name: String,
    },
    /// What a turn ran with, so that a resumed turn runs the same way.
    TurnContext(TurnContext),
    /// State an extension keeps in the session (pi's `appendEntry`): never sent to the model,
    /// given back to the extension when the session is resumed.
    Custom {
        /// The extension's name for this kind of entry.
        custom_type: String,
        /// Its data.
        #[serde(default)]
        data: Value,
    },
}

impl EntryKind {
    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::UserMessage {
            content: vec![ContentBlock::text(text)],
        }
    }

    /// The name stored in the `kind` column (the JSON tag).
    pub fn name(&self) -> &'static str {
        match self {
            Self::UserMessage { .. } => "user_message",
            Self::AssistantMessage(_) => "assistant_message",
            Self::ToolResult { .. } => "tool_result",
            Self::ModelChange { .. } => "model_change",
            Self::ModeChange { .. } => "mode_change",
            Self::Compaction(_) => "compaction",
            Self::BranchSummary { .. } => "branch_summary",
            Self::Label { .. } => "label",
            Self::TurnContext(_) => "turn_context",
            Self::Custom { .. } => "custom",
        }
    }

    /// The tokens this entry cost, counted into its session's totals when it is appended.
    pub(crate) fn usage(&self) -> Usage {
        match self {
            Self::AssistantMessage(message) => message.usage,
            _ => Usage::default(),
        }
    }

    /// The text full-text search finds this entry by, if any.
    pub(crate) fn searchable_text(&self) -> Option<String> {
        let text = match self {
            Self::UserMessage { content } => blocks_text(content),
            Self::AssistantMessage(message) => {
                let mut text = message.text();
                for call in message.tool_calls() {
                    push_line(&mut text, &format!("{} {}", call.name, call.arguments));
                }
                text
            }
            Self::ToolResult { message, .. } => blocks_text(&message.content),
            Self::Compaction(compaction) => compaction.summary.clone(),
            Self::BranchSummary { summary, .. } => summary.clone(),
            Self::Label { name } => name.clone(),
            Self::ModelChange { .. }
            | Self::ModeChange { .. }
            | Self::TurnContext(_)
            | Self::Custom { .. } => String::new(),
        };
        (!text.is_empty()).then_some(text)
    }
}

fn blocks_text(content: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in content {
        if let Some(part) = block.as_text() {
            push_line(&mut text, part);
        }
    }
    text
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

/// A compaction: the model's summary of the path before it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The summary the model reads instead of what it replaces.
    pub summary: String,
    /// The first entry kept verbatim after the summary (an ancestor of the compaction); every
    /// entry on the path before it is replaced. `None`: everything before is replaced.
    pub first_kept: Option<EntryId>,
    /// The conversation's size in tokens before compacting.
    pub tokens_before: u64,
    /// Files the replaced part read, so that the model knows them after.
    #[serde(default)]
    pub files_read: Vec<PathBuf>,
    /// Files the replaced part changed.
    #[serde(default)]
    pub files_modified: Vec<PathBuf>,
}

/// What a turn ran with. Appended when a run starts and whenever any of it changes, so that
/// a resume rebuilds the same request: the same provider, model, mode, tools and prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnContext {
    /// The provider's name.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The permission mode.
    pub permission_mode: PermissionMode,
    /// The tools offered, in order.
    pub tools: Vec<String>,
    /// The response token limit, if one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// What the system prompt was made of.
    pub system_prompt: PromptInputs,
}

/// The inputs of the system prompt (the agent's `SystemPromptInputs`, minus the tools, which
/// [`TurnContext::tools`] holds), and the prompt they made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptInputs {
    /// The workspace root.
    pub workspace: PathBuf,
    /// The date the prompt names, `YYYY-MM-DD`.
    pub date: String,
    /// The operating system and architecture.
    pub platform: String,
    /// The context files (`AGENTS.md`, …) with the text the prompt carried.
    pub context_files: Vec<PromptFile>,
    /// The prompt exactly as sent.
    pub text: String,
}

/// One context file as the prompt carried it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text (possibly cut).
    pub text: String,
    /// Whether it was cut.
    pub truncated: bool,
}
