//! The filesystem tools through the real `toolhost` binary: `tools` lists them, `call` runs
//! them in the `--workspace` folder and refuses paths outside it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use predicates::prelude::*;
use support::toolhost;

#[test]
fn tools_lists_the_built_ins_in_r9_order_with_the_built_in_mcp_provider_before_notify() {
    let dir = tempfile::tempdir().unwrap();
    let output = toolhost(dir.path()).arg("tools").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(
        names,
        [
            "Read",
            "Write",
            "Edit",
            "MultiEdit",
            "ListDir",
            "Glob",
            "Grep",
            "Bash",
            "WebSearch",
            "WebFetch",
            "list_skills",
            "read_skill",
            "skillhub_search",
            "skillhub_install",
            "spawn_agent",
            "subagent_list",
            "subagent_status",
            "slash_command",
            "mcp__toolhost__status",
            "SessionsSpawn",
            "SessionsList",
            "SessionsSend",
            "SessionsHistory",
            "SessionsYield",
            "Notify",
            "TodoWrite"
        ]
    );
}

#[test]
fn write_edit_read_grep_glob_list_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .args([
            "call",
            "Write",
            r#"{"path": "src/main.rs", "content": "fn main() {\n    old();\n}\n"}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("Created src/main.rs: 3 lines"));
    toolhost(dir.path())
        .args([
            "call",
            "Edit",
            r#"{"path": "src/main.rs", "old_string": "old()", "new_string": "new()"}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("     2\t    new();"));
    toolhost(dir.path())
        .args([
            "call",
            "Read",
            r#"{"path": "src/main.rs", "offset": "2", "limit": 1}"#,
        ])
        .assert()
        .success()
        .stdout("     2\t    new();\n\n[Showing lines 2-2 of 3. Use offset=3 to continue.]\n");
    toolhost(dir.path())
        .args([
            "call",
            "Grep",
            r#"{"pattern": "new\\(", "output_mode": "content"}"#,
        ])
        .assert()
        .success()
        .stdout("src/main.rs:2:    new();\n");
    // A named file without the text: the result says to Read it (the local model guessed a
    // key name, got "No matches" and made the answer up).
    toolhost(dir.path())
        .args([
            "call",
            "Grep",
            r#"{"pattern": "server_port", "path": "src/main.rs"}"#,
        ])
        .assert()
        .success()
        .stdout(
            "No matches for \"server_port\" in src/main.rs. The file exists: Read src/main.rs \
             to see what it holds.\n",
        );
    toolhost(dir.path())
        .args(["call", "Glob", r#"{"pattern": "**/*.rs"}"#])
        .assert()
        .success()
        .stdout("src/main.rs\n");
    toolhost(dir.path())
        .args(["call", "ListDir", r#"{"path": "src"}"#])
        .assert()
        .success()
        .stdout(predicate::str::contains("main.rs  (25 B)"));
}

#[test]
fn paths_outside_the_workspace_fail_with_the_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    std::fs::write(dir.path().join("secret"), "s").unwrap();
    toolhost(&dir.path().join("ws"))
        .args(["call", "Read", r#"{"path": "../secret"}"#])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is outside the workspace"))
        .stderr(predicate::str::contains(
            "[Analyze the error above and try a different approach.]",
        ));
    toolhost(&dir.path().join("ws"))
        .args([
            "call",
            "Write",
            r#"{"path": "../secret", "content": "pwned"}"#,
        ])
        .assert()
        .code(1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("secret")).unwrap(),
        "s"
    );
}

#[test]
fn a_missing_workspace_is_a_usage_error() {
    toolhost(std::path::Path::new("/definitely/not/here"))
        .arg("tools")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot use /definitely/not/here as the workspace",
        ));
}
