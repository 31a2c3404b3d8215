//! Bash through the real `toolhost` binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use predicates::prelude::*;

fn toolhost(workspace: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("toolhost").unwrap();
    command.arg("--workspace").arg(workspace);
    command
}

#[test]
fn bash_runs_in_the_workspace_and_reports_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi there\n").unwrap();
    toolhost(dir.path())
        .args([
            "call",
            "Bash",
            r#"{"command": "cat hello.txt && ls"}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "hi there\nhello.txt\n[exit code 0 after ",
        ));
}

#[test]
fn a_failing_command_exits_1_with_its_output_and_the_hint() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args(["call", "Bash", r#"{"command": "ls no-such-file"}"#, "--yes"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No such file or directory"))
        .stderr(predicate::str::contains("[exit code 2 after "))
        .stderr(predicate::str::contains("[Analyze the error above"));
}

#[test]
fn a_denied_command_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args([
            "call",
            "Bash",
            r#"{"command": "echo hi; rm -rf --no-preserve-root /"}"#,
            "--yes",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("Refused: "))
        .stderr(predicate::str::contains("deny list"));
}

#[test]
fn the_json_result_carries_the_exit_code_in_details() {
    let dir = tempfile::tempdir().unwrap();
    let output = toolhost(dir.path())
        .args([
            "call",
            "Bash",
            r#"{"command": "exit 4"}"#,
            "--json",
            "--yes",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let result: serde_json::Value = serde_json::from_slice(&output).unwrap();
    assert_eq!(result["details"]["exit_code"], 4);
    assert_eq!(result["is_error"], true);
}
