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
fn a_request_longer_than_the_read_buffer_is_served_whole() {
    use std::io::{BufRead as _, Write as _};
    // A Write of 220 kB is one line over three times the 64 KiB that serve looks at for
    // tools/call requests; the line after it must still be read.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let content: String = (0..20_000).map(|n| format!("line {n:05}\n")).collect();
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "Write", "arguments": {"path": "big.txt", "content": content}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "Read", "arguments": {"path": "a.txt"}}}),
    ]
    .iter()
    .map(|message| format!("{message}\n"))
    .collect::<String>();
    // Stdin stays open until the replies are in: a client that hangs up does not wait for
    // them.
    let mut serve = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("--workspace")
        .arg(dir.path())
        .args(["serve", "--yes"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let mut lines = std::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    let mut stdout = Vec::new();
    for _ in 0..3 {
        let line = lines.next().expect("serve ended early").unwrap();
        stdout.extend_from_slice(line.as_bytes());
        stdout.push(b'\n');
    }
    drop(stdin);
    assert!(serve.wait().unwrap().success());
    let replies = messages(&stdout);
    assert_eq!(replies[1]["result"]["isError"], false, "{replies:#?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("big.txt")).unwrap(),
        content
    );
    assert!(
        replies[2]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("alpha"),
        "{replies:#?}"
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
