//! `toolhost serve` as a process: MCP over stdio, flags and refusals. The official SDK
//! clients run against it from `tests/mcp-clients/run.sh` (see `scripts/test.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

/// The replies in request order (requests run concurrently, so replies come in any order).
fn messages(stdout: &[u8]) -> Vec<Value> {
    let mut replies: Vec<Value> = String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    replies.sort_by_key(|reply| reply["id"].as_u64());
    replies
}

#[test]
fn stdio_answers_initialize_list_and_call_and_logs_nothing_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "Read", "arguments": {"path": "a.txt"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "Write", "arguments": {"path": "b.txt", "content": "x"}}}),
    ]
    .iter()
    .map(|message| format!("{message}\n"))
    .collect::<String>();
    let output = Command::cargo_bin("toolhost")
        .unwrap()
        .arg("--workspace")
        .arg(dir.path())
        .arg("serve")
        .env("TOOLHOST_LOG", "debug")
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success()
        .get_output()
        .clone();
    let replies = messages(&output.stdout);
    assert_eq!(replies.len(), 4, "{replies:#?}");
    assert_eq!(replies[0]["result"]["serverInfo"]["name"], "toolhost");
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-11-25");
    let tools: Vec<&str> = replies[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"Read") && tools.contains(&"Bash"),
        "{tools:?}"
    );
    assert_eq!(replies[2]["result"]["isError"], false);
    assert!(
        replies[2]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("alpha")
    );
    // This client cannot confirm (no elicitation) and --yes was not given.
    assert_eq!(replies[3]["result"]["isError"], true);
    assert!(!dir.path().join("b.txt").exists());
}

#[test]
fn yes_allows_calls_that_need_confirmation_when_the_client_cannot_ask() {
    let dir = tempfile::tempdir().unwrap();
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "Write", "arguments": {"path": "b.txt", "content": "x"}}}),
    ]
    .iter()
    .map(|message| format!("{message}\n"))
    .collect::<String>();
    let output = Command::cargo_bin("toolhost")
        .unwrap()
        .arg("--workspace")
        .arg(dir.path())
        .args(["serve", "--yes"])
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success()
        .get_output()
        .clone();
    let replies = messages(&output.stdout);
    assert_eq!(replies[1]["result"]["isError"], false, "{replies:#?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "x"
    );
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("toolhost")
        .unwrap()
        .arg("--workspace")
        .arg(dir.path())
        .args(["serve", "--http", "0.0.0.0:0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("without a bearer token"));
}

#[test]
fn a_missing_token_variable_is_named() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("toolhost")
        .unwrap()
        .arg("--workspace")
        .arg(dir.path())
        .args([
            "serve",
            "--http",
            "0",
            "--token-env",
            "TOOLHOST_NO_SUCH_VAR",
        ])
        .env_remove("TOOLHOST_NO_SUCH_VAR")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("TOOLHOST_NO_SUCH_VAR is not set"));
}
