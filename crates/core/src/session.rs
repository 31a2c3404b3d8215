//! The session a call belongs to: who is calling, what tools keep for the length of the
//! session, and the lifecycle events tools may listen to (R4).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// Who is calling: the session and model a call belongs to, when there is one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session id, when the call belongs to a session.
    pub session_id: Option<String>,
    /// The model that asked for the call, when a model did.
    pub model: Option<String>,
    /// What tools keep for the length of the session. `Default` makes a new, empty one: a
    /// call without a session has a state of its own.
    pub state: SessionState,
}

/// What tools keep for the length of one session — an agent's conversation, a sub-agent's,
/// one MCP client's connection: one value per type, made on first use (the files a session
/// has read, which Write and Edit check). Clones share the values; two states are equal
/// when they are the same state.
#[derive(Clone, Default)]
pub struct SessionState(Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>);

impl SessionState {
    /// The session's `T`, made with `T::default()` the first time it is asked for.
    pub fn get_or_default<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        let mut values = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let value = values
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()));
        match Arc::clone(value).downcast::<T>() {
            Ok(value) => value,
            // Unreachable: the entry of `TypeId::of::<T>()` holds a `T`.
            Err(_) => Arc::new(T::default()),
        }
    }
}

impl PartialEq for SessionState {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SessionState {}

impl fmt::Debug for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionState")
    }
}

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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[derive(Default)]
    struct Counter(AtomicUsize);

    #[test]
    fn a_session_state_keeps_one_value_per_type_shared_by_its_clones_only() {
        let state = SessionState::default();
        state
            .get_or_default::<Counter>()
            .0
            .fetch_add(1, Ordering::Relaxed);
        let clone = state.clone();
        assert_eq!(
            clone.get_or_default::<Counter>().0.load(Ordering::Relaxed),
            1
        );
        assert_eq!(state, clone);
        let other = SessionState::default();
        assert_eq!(
            other.get_or_default::<Counter>().0.load(Ordering::Relaxed),
            0
        );
        assert_ne!(state, other);
    }
}
