//! The model's todo list (`TodoWrite`) as the editor's plan: after each `TodoWrite` call that
//! succeeded, a `plan` update with every entry. A todo has no priority, and ACP's entries need
//! one: each is `medium`.

use agent_client_protocol::v1::schema::{
    Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
};
use serde::Deserialize as _;
use serde_json::Value;
use toolhost_tools::control::{TODO_WRITE, TodoStatus, TodoWriteParams};

/// The `plan` update a call of `tool` whose list (its arguments, or its result's details: both
/// are `{"todos": [...]}`) is `todos` makes; `None` for any other tool, or a list that does not
/// read.
pub fn plan_update(tool: &str, todos: &Value) -> Option<SessionUpdate> {
    if tool != TODO_WRITE {
        return None;
    }
    let params = TodoWriteParams::deserialize(todos).ok()?;
    let entries = params
        .todos
        .into_iter()
        .map(|todo| {
            let status = match todo.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(todo.content, PlanEntryPriority::Medium, status)
        })
        .collect();
    Some(SessionUpdate::Plan(Plan::new(entries)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn each_todo_is_an_entry_of_medium_priority() {
        let update = plan_update(
            TODO_WRITE,
            &json!({"todos": [
                {"content": "Read", "activeForm": "Reading", "status": "completed"},
                {"content": "Edit", "activeForm": "Editing", "status": "in_progress"},
                {"content": "Test", "activeForm": "Testing", "status": "pending"}
            ]}),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(update).unwrap(),
            json!({"sessionUpdate": "plan", "entries": [
                {"content": "Read", "priority": "medium", "status": "completed"},
                {"content": "Edit", "priority": "medium", "status": "in_progress"},
                {"content": "Test", "priority": "medium", "status": "pending"}
            ]})
        );
    }

    #[test]
    fn other_tools_and_unreadable_lists_make_no_plan() {
        assert_eq!(plan_update("Read", &json!({"todos": []})), None);
        assert_eq!(plan_update(TODO_WRITE, &json!({"todos": "none"})), None);
    }
}
