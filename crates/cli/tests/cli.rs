//! The `toolhost` binary as a user runs it: flags, exit codes and messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use assert_cmd::Command;
use predicates::prelude::*;
use support::toolhost;

#[test]
fn help_lists_the_commands() {
    Command::cargo_bin("toolhost")
        .unwrap()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("tools").and(predicate::str::contains("call")));
}

/// The commands' arguments are made only for the command given (clap's `defer`): each
/// command's help still starts with its own description, lists its arguments, and a wrong
/// flag is still refused with the command named.
#[test]
fn each_command_help_has_its_description_and_arguments_though_they_are_made_on_demand() {
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["serve"],
            "Serve the registry as an MCP server",
            "--defer-tools",
        ),
        (
            &["call"],
            "Run one tool call through the full pipeline",
            "--json",
        ),
        (
            &["run"],
            "Run the agent on one prompt, headless",
            "--output-format",
        ),
        (&["tools"], "List the tools in the registry", "--format"),
        (&["sessions", "list"], "", "--limit"),
        (&["mcp", "add"], "", "--bearer-token-env"),
    ];
    for (command, about, flag) in cases {
        let output = Command::cargo_bin("toolhost")
            .unwrap()
            .args(command)
            .arg("--help")
            .output()
            .unwrap();
        assert!(output.status.success(), "{command:?}");
        let help = String::from_utf8(output.stdout).unwrap();
        let first_line = help.lines().next().unwrap_or_default();
        assert!(first_line.starts_with(about), "{command:?}: {help}");
        assert!(!help.contains("Arguments of"), "{command:?}: {help}");
        assert!(help.contains(flag), "{command:?} lists {flag}: {help}");
    }
    Command::cargo_bin("toolhost")
        .unwrap()
        .args(["serve", "--no-such-flag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--no-such-flag"))
        .stderr(predicate::str::contains("toolhost serve"));
}

#[test]
fn an_unknown_tool_is_an_error_result_with_exit_status_1() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args(["call", "NoSuchTool", "{}"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Unknown tool 'NoSuchTool'."))
        .stderr(predicate::str::contains(
            "[Analyze the error above and try a different approach.]",
        ));
}

#[test]
fn json_output_carries_the_whole_result() {
    let dir = tempfile::tempdir().unwrap();
    let output = toolhost(dir.path())
        .args(["call", "NoSuchTool", "--json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let result: serde_json::Value = serde_json::from_slice(&output).unwrap();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["tool_name"], "NoSuchTool");
    assert_eq!(result["truncated"], false);
    assert!(result["duration_ms"].is_u64());
    assert_eq!(result["content"][0]["type"], "text");
}

#[test]
fn arguments_that_are_not_json_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args(["call", "Read", "{path: nope}"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the arguments are not valid JSON"));
}

#[test]
fn arguments_can_come_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args(["call", "NoSuchTool", "-"])
        .write_stdin("not json")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not valid JSON"));
}

#[test]
fn a_config_file_that_does_not_parse_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[limits]\nmax_result_chars = \"lots\"\n").unwrap();
    toolhost(dir.path())
        .arg("--config")
        .arg(&config)
        .arg("tools")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "invalid config file {}: line 2:",
            config.display()
        )));
}

#[test]
fn an_unknown_config_key_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[limits]\nmax_chars = 10\n").unwrap();
    toolhost(dir.path())
        .arg("--config")
        .arg(&config)
        .arg("tools")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `max_chars`"));
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    Command::cargo_bin("toolhost")
        .unwrap()
        .args(["tools", "--format", "yaml"])
        .assert()
        .code(2);
}

#[test]
fn doctor_reports_the_sandbox_the_shell_and_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let output = toolhost(dir.path())
        .arg("doctor")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(output).unwrap();
    let line = |name: &str| {
        text.lines()
            .find(|line| line.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in:\n{text}"))
            .to_owned()
    };
    // This project's machines run kernels with Landlock (see shared/CRATES.md).
    assert!(
        line("sandbox").starts_with("ok    sandbox    Landlock enforced"),
        "{text}"
    );
    assert!(line("shell").contains("bash 5."), "{text}");
    assert!(
        line("tools").contains("Read, Write, Edit, MultiEdit, ListDir, Glob, Grep, Bash"),
        "{text}"
    );
    assert!(line("workspace").contains(&dir.path().canonicalize().unwrap().display().to_string()));
}

#[test]
fn a_reader_that_stops_early_ends_the_call_quietly() {
    use std::io::Read as _;
    let dir = tempfile::tempdir().unwrap();
    let line = "x".repeat(200);
    let text: String = (0..1500).map(|_| format!("{line}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), text).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
        .arg("--workspace")
        .arg(dir.path())
        .args(["call", "Read", r#"{"path": "big.txt"}"#])
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -c 100`: read a little of the ~300 KB result, then close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut start = [0u8; 100];
    stdout.read_exact(&mut start).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(String::from_utf8_lossy(&start).contains("xxxx"));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
}
