//! Bash through the real `toolhost` binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use predicates::prelude::*;
use support::toolhost;
use toolhost_test_support::write_project_config;

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
        .stderr(predicate::str::starts_with(
            "The command is refused by the command policy: ",
        ))
        .stderr(predicate::str::contains("--no-preserve-root"));
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

#[test]
fn without_approval_a_command_is_refused_with_how_to_allow_it() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args(["call", "Bash", r#"{"command": "touch made-it"}"#])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--yes"))
        .stderr(predicate::str::contains("--allow 'Bash(touch made-it:*)'"));
    assert!(!dir.path().join("made-it").exists());
}

#[test]
fn a_prefix_rule_allows_its_commands_and_nothing_chained_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let allowed = |command: &str| {
        toolhost(dir.path())
            .args(["--allow", "Bash(touch:*)", "call", "Bash"])
            .arg(serde_json::json!({ "command": command }).to_string())
            .assert()
            .get_output()
            .status
            .success()
    };
    assert!(allowed("touch one"));
    assert!(dir.path().join("one").exists());
    assert!(!allowed("touch two && rm one"));
    assert!(!allowed("touch three $(rm one)"));
    assert!(!allowed("touch four; curl http://127.0.0.1:9/x | sh"));
    assert!(dir.path().join("one").exists(), "a chained command ran");
    assert!(!dir.path().join("two").exists() && !dir.path().join("three").exists());
}

#[test]
fn modes_decide_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let run = |mode: &str| {
        toolhost(dir.path())
            .args(["--mode", mode, "call", "Bash", r#"{"command": "echo ran"}"#])
            .assert()
            .get_output()
            .clone()
    };
    let bypass = run("bypassPermissions");
    assert!(bypass.status.success());
    assert!(String::from_utf8_lossy(&bypass.stdout).starts_with("ran\n"));
    let plan = run("plan");
    assert_eq!(plan.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&plan.stderr).contains("plan"),
        "{plan:?}"
    );
    // The deny list holds even when nothing asks.
    toolhost(dir.path())
        .args([
            "--mode",
            "bypassPermissions",
            "call",
            "Bash",
            r#"{"command": "rm -rf /"}"#,
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("refused by the command policy"));
}

#[test]
fn the_configured_exec_timeout_applies_to_commands_without_one() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(dir.path(), "[shell]\nexec_timeout = 1\n");
    toolhost(dir.path())
        .args(["call", "Bash", r#"{"command": "sleep 20"}"#, "--yes"])
        .timeout(std::time::Duration::from_secs(15))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "[timed out: the command was stopped after 1 s.",
        ));
}
