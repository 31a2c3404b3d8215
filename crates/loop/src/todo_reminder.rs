//! The session's todo list in the loop: rebuilt from the conversation when a run starts (a
//! resumed or branched session finds the list its last `TodoWrite` call wrote), and a reminder
//! to the model when the list has open tasks and it has not written it for
//! [`AgentLoop::todo_reminder_turns`](super::AgentLoop::todo_reminder_turns) turns (the
//! `todo_reminder` session event fires with it).

use toolhost_core::SessionState;
use toolhost_core::conversation::{Message, ToolCall};
use toolhost_tools::control::{TODO_WRITE, TodoList};

/// How many turns without `TodoWrite` pass, while the list has open tasks, before the model is
/// reminded of it (`[todo] reminder_turns`).
pub use toolhost_config::DEFAULT_TODO_REMINDER_TURNS;

/// Sets the session's list from the last `TodoWrite` call of `messages`, when there is one
/// (otherwise the list the session holds stays: a compacted conversation keeps it).
pub(super) fn restore(state: &SessionState, messages: &[Message]) {
    let calls = messages.iter().flat_map(|message| match message {
        Message::Assistant(assistant) => assistant
            .tool_calls()
            .filter(|call| call.name == TODO_WRITE)
            .map(|call| call.arguments.as_str())
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    });
    TodoList::of(state).restore(calls);
}

/// After a turn that made `calls`: the reminder to add, if one is due.
pub(super) fn after_turn(state: &SessionState, calls: &[ToolCall], every: usize) -> Option<String> {
    if calls.iter().any(|call| call.name == TODO_WRITE) {
        return None;
    }
    TodoList::of(state).turn_passed(every)
}
