//! Session lifecycle events that tools may listen to (R4).

use serde::{Deserialize, Serialize};

/// A lifecycle event of the session a tool runs in (R4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEvent {
    /// A session started.
    Start,
    /// The user switched to another session.
    Switch,
    /// The conversation branched.
    Branch,
    /// The session tree changed.
    Tree,
    /// The session is shutting down.
    Shutdown,
    /// Automatic context compaction started.
    AutoCompactionStart,
    /// Automatic context compaction ended.
    AutoCompactionEnd,
    /// An automatic retry of a model request started.
    AutoRetryStart,
    /// An automatic retry of a model request ended.
    AutoRetryEnd,
    /// A time-to-stream-response rule triggered.
    TtsrTriggered,
    /// The todo list reminder fired.
    TodoReminder,
}

impl SessionEvent {
    /// The event's name as it appears in logs and in custom tools (`"auto_retry_start"`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Switch => "switch",
            Self::Branch => "branch",
            Self::Tree => "tree",
            Self::Shutdown => "shutdown",
            Self::AutoCompactionStart => "auto_compaction_start",
            Self::AutoCompactionEnd => "auto_compaction_end",
            Self::AutoRetryStart => "auto_retry_start",
            Self::AutoRetryEnd => "auto_retry_end",
            Self::TtsrTriggered => "ttsr_triggered",
            Self::TodoReminder => "todo_reminder",
        }
    }
}

/// A listener that failed on an event; logged as a warning, never fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionListenerFailure {
    /// The tool whose `on_session` failed.
    pub tool: String,
    /// What it reported (or the panic message).
    pub message: String,
}
