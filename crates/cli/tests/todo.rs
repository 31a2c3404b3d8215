//! TodoWrite through the real binary, a scripted model on 127.0.0.1 calling it as Claude
//! Code's models do: the list is shown in `chat`, the model is reminded of open tasks after
//! `[todo] reminder_turns` turns without it (the `todo_reminder` session event fires), and a
//! continued session finds the list its last call wrote.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use agent_runs::{Fixture, last};
use serde_json::{Value, json};
use toolhost_test_support::{Reply, write_file};

/// A custom tool that answers with the session events it heard, in order.
const LISTENER: &str = r#"
const heard = [];
export default () => ({
  name: "listener",
  description: "The session events heard so far.",
  parameters: { type: "object", properties: {} },
  onSession(event) { heard.push(event.type); },
  async execute() { return { content: [{ type: "text", text: heard.join(",") }] }; },
});
"#;

fn plan() -> Value {
    json!({"todos": [
        {"content": "Read hello.txt", "status": "in_progress", "activeForm": "Reading hello.txt"},
        {"content": "Summarize it", "status": "pending", "activeForm": "Summarizing it"},
        {"content": "Find the file", "status": "completed", "activeForm": "Finding the file"}
    ]})
}

#[test]
fn open_tasks_are_recalled_after_the_configured_turns_and_a_continued_session_keeps_the_list() {
    let fixture = Fixture::new();
    fixture.config("[todo]\nreminder_turns = 2\n\n[permissions]\nallow = [\"listener\"]\n");
    write_file(fixture.path(".toolhost/tools/listener.js"), LISTENER);
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "TodoWrite", plan()).into(),
        Reply::tool_call("call_2", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call("call_3", "Grep", json!({"pattern": "Hello"})).into(),
        Reply::tool_call("call_4", "listener", json!({})).into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture.run(&model, &["Plan and read."]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert!(
        last(&requests[1], "tool")
            .contains("Todo list updated: 1 in progress, 1 pending, 1 completed."),
        "{:?}",
        last(&requests[1], "tool")
    );
    // One turn without TodoWrite: no reminder yet; two: the reminder rides on the result.
    assert!(!last(&requests[2], "tool").contains("Reminder"));
    let reminded = last(&requests[3], "tool");
    assert!(
        reminded.contains(
            "Reminder: your todo list has 2 open tasks and has not been updated for 2 turns"
        ) && reminded.contains("[~] Reading hello.txt")
            && reminded.contains("[ ] Summarize it"),
        "{reminded}"
    );
    assert_eq!(last(&requests[4], "tool"), "start,todo_reminder");

    // A continued session rebuilds the list from the conversation.
    fixture.config("[todo]\nreminder_turns = 1\n");
    let resumed = fixture.model(vec![
        Reply::tool_call("call_5", "Read", json!({"path": "hello.txt"})).into(),
        Reply::text("Still done.").into(),
    ]);
    let output = fixture
        .run(&resumed, &["--continue", "Go on."])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let reminded = last(&resumed.requests()[1], "tool");
    assert!(
        reminded.contains("2 open tasks") && reminded.contains("[ ] Summarize it"),
        "{reminded}"
    );

    // Off: no reminder.
    fixture.config("[todo]\nreminder_turns = 0\n");
    let quiet = fixture.model(vec![
        Reply::tool_call("call_6", "Read", json!({"path": "hello.txt"})).into(),
        Reply::text("Quiet.").into(),
    ]);
    let output = fixture
        .run(&quiet, &["--continue", "Again."])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(!last(&quiet.requests()[1], "tool").contains("Reminder"));
}

#[test]
fn chat_shows_the_list_the_model_writes() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "TodoWrite", plan()).into(),
        Reply::text("Planned.").into(),
    ]);
    let output = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .env("TERM", "dumb")
        .arg("chat")
        .write_stdin("Make a plan.\n")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{output:?}");
    for line in [
        "    [~] Reading hello.txt",
        "    [ ] Summarize it",
        "    [x] Find the file",
    ] {
        assert!(stdout.contains(line), "{line:?} not in:\n{stdout}");
    }
    assert!(stdout.contains("Planned."), "{stdout}");
}
