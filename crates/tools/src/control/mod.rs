//! The control tools (R28): Notify, and TodoWrite (the session's task list).

mod notify;
mod todo;

pub use notify::{DBUS_TIMEOUT, Delivery, Notify, NotifyParams, terminal_escape};
pub use todo::{TODO_WRITE, Todo, TodoList, TodoStatus, TodoWrite, TodoWriteParams};
