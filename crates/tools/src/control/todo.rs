//! `TodoWrite`: the model's task list for the session, in Claude Code's shape (a whole list of
//! `{content, status, activeForm}` each call). The list lives in the session's state
//! ([`TodoList::of`]), so the front end can show it, the loop can remind the model of open
//! items, and a resumed or branched session can rebuild it from the last call
//! ([`TodoList::restore`]).

use std::sync::{Mutex, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolhost_core::{
    Sensitivity, SessionEvent, SessionInfo, SessionState, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

/// The tool's name, as Claude Code's models call it.
pub const TODO_WRITE: &str = "TodoWrite";

/// Where a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (one at a time).
    InProgress,
    /// Done.
    Completed,
}

/// One task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    /// Where it is.
    pub status: TodoStatus,
    /// The same in the present continuous, shown while it is in progress ("Running the
    /// tests").
    pub active_form: String,
}

impl Todo {
    /// Whether it is still to do.
    pub fn is_open(&self) -> bool {
        self.status != TodoStatus::Completed
    }

    /// One line: a box for its status and its text.
    pub fn line(&self) -> String {
        match self.status {
            TodoStatus::Pending => format!("[ ] {}", self.content),
            TodoStatus::InProgress => format!("[~] {}", self.active_form),
            TodoStatus::Completed => format!("[x] {}", self.content),
        }
    }
}

/// Parameters of `TodoWrite`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoWriteParams {
    /// The whole updated list (it replaces the previous one).
    pub todos: Vec<Todo>,
}

/// The session's list, and how many turns have passed since the model last wrote it.
#[derive(Debug, Default)]
pub struct TodoList(Mutex<TodoState>);

#[derive(Debug, Default)]
struct TodoState {
    todos: Vec<Todo>,
    turns_since_written: usize,
}

impl TodoList {
    /// The list of the session whose state is `state`.
    pub fn of(state: &SessionState) -> std::sync::Arc<Self> {
        state.get_or_default::<Self>()
    }

    /// The tasks, in order.
    pub fn todos(&self) -> Vec<Todo> {
        self.lock().todos.clone()
    }

    /// Replaces the list (the model wrote it).
    pub fn set(&self, todos: Vec<Todo>) {
        let mut state = self.lock();
        state.todos = todos;
        state.turns_since_written = 0;
    }

    /// Rebuilds the list from a conversation's `TodoWrite` calls (their JSON arguments, in
    /// order): the last one that parses is the list. `false` when none does.
    pub fn restore<'a>(&self, calls: impl IntoIterator<Item = &'a str>) -> bool {
        let last = calls
            .into_iter()
            .filter_map(|arguments| serde_json::from_str::<TodoWriteParams>(arguments).ok())
            .last();
        match last {
            Some(params) => {
                self.set(params.todos);
                true
            }
            None => false,
        }
    }

    /// A model turn passed without the list being written: the reminder to send when the
    /// list has open tasks and `every` turns have passed since it was written (or since the
    /// last reminder). `every` 0: never.
    pub fn turn_passed(&self, every: usize) -> Option<String> {
        let mut state = self.lock();
        state.turns_since_written += 1;
        let open: Vec<&Todo> = state.todos.iter().filter(|todo| todo.is_open()).collect();
        if every == 0 || open.is_empty() || state.turns_since_written < every {
            return None;
        }
        let mut note = format!(
            "[toolhost] Reminder: your todo list has {} open task{} and has not been updated \
             for {} turns. If you have finished a task, mark it completed with TodoWrite; keep \
             the list in step with your work:",
            open.len(),
            if open.len() == 1 { "" } else { "s" },
            state.turns_since_written
        );
        for todo in &state.todos {
            note.push('\n');
            note.push_str(&todo.line());
        }
        state.turns_since_written = 0;
        Some(note)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TodoState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes the session's task list.
#[derive(Debug, Default)]
pub struct TodoWrite;

impl TypedTool for TodoWrite {
    type Params = TodoWriteParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            TODO_WRITE,
            "Keeps your task list for this session, which the user sees. Use it for work of \
             three steps or more: write the whole list each time (it replaces the last one), \
             each task with `content` (imperative: \"Run the tests\"), `activeForm` (\"Running \
             the tests\") and `status` (pending, in_progress, completed). Keep one task \
             in_progress at a time and mark each completed as soon as it is done.",
        )
        .with_label("Todo list")
        .with_annotations(ToolAnnotations {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        })
        .with_sensitivity(Sensitivity::Safe)
    }

    async fn run(
        &self,
        params: TodoWriteParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(empty) = params
            .todos
            .iter()
            .position(|todo| todo.content.trim().is_empty() || todo.active_form.trim().is_empty())
        {
            return Err(ToolError::new(format!(
                "todos[{empty}] has an empty content or activeForm: give both, e.g. \
                 {{\"content\": \"Run the tests\", \"activeForm\": \"Running the tests\", \
                 \"status\": \"pending\"}}"
            )));
        }
        let count = |status: TodoStatus| params.todos.iter().filter(|t| t.status == status).count();
        let (done, doing, open) = (
            count(TodoStatus::Completed),
            count(TodoStatus::InProgress),
            count(TodoStatus::Pending),
        );
        let mut text =
            format!("Todo list updated: {doing} in progress, {open} pending, {done} completed.");
        if doing > 1 {
            text.push_str(" Keep one task in progress at a time.");
        }
        for todo in &params.todos {
            text.push('\n');
            text.push_str(&todo.line());
        }
        let details = json!({ "todos": params.todos });
        TodoList::of(&ctx.session().state).set(params.todos);
        Ok(ToolOutput::text(text).with_details(details))
    }

    async fn on_session(
        &self,
        event: &SessionEvent,
        session: &SessionInfo,
    ) -> Result<(), ToolError> {
        // A branch starts from an earlier point: its list is rebuilt from its own calls.
        if matches!(event, SessionEvent::Branch | SessionEvent::Switch) {
            TodoList::of(&session.state).set(Vec::new());
        }
        Ok(())
    }
}
