//! Read before overwrite and stale-read protection (R47) in every kind of session, through
//! the real binary: an agent run against the scripted mock model, a sub-agent, an MCP
//! `serve` connection; `[tools] read_before_write = false` turns it off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use agent_runs::*;
use serde_json::json;
use toolhost_test_support::Reply;

const UNREAD: &str = "has not been read in this session";
const CHANGED: &str = "has changed on disk since this session last read it";

#[test]
fn an_agent_writes_over_a_file_only_after_reading_it_as_it_is_now() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call(
            "c1",
            "Write",
            json!({"path": "hello.txt", "content": "one line\n"}),
        )
        .into(),
        Reply::tool_call("c2", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call(
            "c3",
            "Bash",
            json!({"command": "echo appended by a command >> hello.txt"}),
        )
        .into(),
        Reply::tool_call(
            "c4",
            "Edit",
            json!({"path": "hello.txt", "old_string": "Hello", "new_string": "Hi"}),
        )
        .into(),
        Reply::tool_call("c5", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call(
            "c6",
            "Write",
            json!({"path": "hello.txt", "content": "rewritten\n"}),
        )
        .into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &["--mode", "bypassPermissions", "Rewrite hello.txt"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 7);
    let write = last(&requests[1], "tool");
    assert!(
        write.contains(&format!("hello.txt already exists and {UNREAD}")),
        "{write}"
    );
    let edit = last(&requests[4], "tool");
    assert!(edit.contains(&format!("hello.txt {CHANGED}")), "{edit}");
    let rewrite = last(&requests[6], "tool");
    assert!(rewrite.contains("Replaced"), "{rewrite}");
    assert_eq!(
        std::fs::read_to_string(fixture.path("hello.txt")).unwrap(),
        "rewritten\n"
    );
}

#[test]
fn a_sub_agent_keeps_its_own_reads() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        // The parent reads the file, then a child tries to replace it without reading it.
        Reply::tool_call("p1", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call("p2", "spawn_agent", json!({"prompt": "Replace hello.txt."})).into(),
        Reply::tool_call(
            "k1",
            "Write",
            json!({"path": "hello.txt", "content": "lost\n"}),
        )
        .into(),
        Reply::text("I could not.").into(),
        Reply::text("The child could not.").into(),
    ]);
    let output = fixture
        .run(&model, &["--mode", "bypassPermissions", "Delegate"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    let child_write = last(&requests[3], "tool");
    assert!(child_write.contains(UNREAD), "{child_write}");
    assert_eq!(
        std::fs::read_to_string(fixture.path("hello.txt")).unwrap(),
        "Hello from the workspace.\n"
    );
}

#[test]
fn an_mcp_session_reads_before_it_overwrites_unless_the_config_turns_it_off() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "keep\n").unwrap();
    let mut server = support::ServeProcess::start(dir.path(), &["--mode", "bypassPermissions"]);
    server.initialize();
    let refused = server.call(1, "Write", json!({"path": "notes.txt", "content": "new\n"}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused.to_string().contains(UNREAD), "{refused}");
    server.call(2, "Read", json!({"path": "notes.txt"}));
    let written = server.call(3, "Write", json!({"path": "notes.txt", "content": "new\n"}));
    assert_eq!(written["isError"], false, "{written}");
    drop(server);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "new\n"
    );

    toolhost_test_support::write_file(
        dir.path().join(".toolhost/config.toml"),
        "[tools]\nread_before_write = false\n",
    );
    let mut server = support::ServeProcess::start(dir.path(), &["--mode", "bypassPermissions"]);
    server.initialize();
    let written = server.call(
        1,
        "Write",
        json!({"path": "notes.txt", "content": "unchecked\n"}),
    );
    assert_eq!(written["isError"], false, "{written}");
}

#[test]
fn a_one_shot_call_checks_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "keep\n").unwrap();
    support::toolhost(dir.path())
        .args([
            "call",
            "Write",
            r#"{"path":"f.txt","content":"x"}"#,
            "--yes",
            "--read-before-write",
        ])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(UNREAD));
    support::toolhost(dir.path())
        .args([
            "call",
            "Write",
            r#"{"path":"f.txt","content":"x"}"#,
            "--yes",
        ])
        .assert()
        .success();
}
