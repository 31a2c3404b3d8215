//! A session's record: who it is, where it ran, how it stands, what it cost.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use toolhost_core::conversation::Usage;

use crate::{EntryId, SessionId};

/// A stored session.
#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    /// Its id.
    pub id: SessionId,
    /// Its title, once it has one.
    pub title: Option<String>,
    /// The workspace it ran in.
    pub workspace: Option<PathBuf>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When it last changed.
    pub updated_at: SystemTime,
    /// The session and tool call that spawned it, for a sub-agent's session.
    pub spawned_by: Option<SpawnedBy>,
    /// How it stands.
    pub status: SessionStatus,
    /// Tokens spent over its whole life, every branch included.
    pub usage: Usage,
    /// The entry the conversation ends at (where the next append goes); `None` while empty.
    pub leaf: Option<EntryId>,
    /// How many entries it holds, every branch included.
    pub entry_count: u64,
}

/// The parent of a sub-agent's session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnedBy {
    /// The parent session (`None` once that session was deleted).
    pub session: Option<SessionId>,
    /// The parent's tool call that started the sub-agent.
    pub tool_call_id: Option<String>,
}

/// What a new session starts with.
#[derive(Clone, Debug, Default)]
pub struct NewSession {
    /// A title, if known already.
    pub title: Option<String>,
    /// The workspace it runs in.
    pub workspace: Option<PathBuf>,
    /// For a sub-agent: the parent session.
    pub parent: Option<SessionId>,
    /// For a sub-agent: the parent's tool call that spawned it.
    pub spawned_by_call: Option<String>,
}

/// How a session stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// Running, or open to continue.
    #[default]
    Active,
    /// Its run ended normally.
    Completed,
    /// Its run failed.
    Failed,
    /// Its run was cancelled.
    Cancelled,
}

impl SessionStatus {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        [Self::Active, Self::Completed, Self::Failed, Self::Cancelled]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// One full-text search match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    /// The session.
    pub session: SessionId,
    /// The entry that matched.
    pub entry: EntryId,
    /// The entry's kind (`user_message`, `tool_result`, …).
    pub kind: String,
    /// The matching text around the match, the matched words in `[` `]`.
    pub snippet: String,
}
