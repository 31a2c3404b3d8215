//! The permission flags and configuration layers through the real `toolhost` binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use assert_cmd::Command;
use predicates::prelude::*;
use toolhost_test_support::{HomeAndWorkspace, write_file};

fn toolhost(dirs: &HomeAndWorkspace) -> Command {
    support::toolhost_with_home(&dirs.workspace, &dirs.home)
}

#[test]
fn config_show_merges_every_layer_and_names_each_source() {
    let dirs = HomeAndWorkspace::new();
    let user = dirs.user_config();
    let project = dirs.project_config();
    let local = dirs.workspace.join(".toolhost/config.local.toml");
    let extra = dirs.workspace.join("ci.toml");
    write_file(
        &user,
        "[permissions]\nmode = \"plan\"\nallow = [\"Read\"]\n",
    );
    write_file(
        &project,
        "[permissions]\nallow = [\"Bash(git status)\"]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    write_file(&local, "[limits]\nmax_result_chars = 1000\n");
    write_file(&extra, "[permissions]\nask = [\"Bash(git push:*)\"]\n");
    let output = toolhost(&dirs)
        .arg("--config")
        .arg(&extra)
        .args([
            "--mode",
            "acceptEdits",
            "--allow",
            "Bash(cargo test:*)",
            "--deny",
            "WebFetch(domain:evil.example)",
        ])
        .args(["config", "show"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(output).unwrap();
    let expected_lines = [
        format!(
            "# files read, in order: {}, {}, {}, {}",
            user.display(),
            project.display(),
            local.display(),
            extra.display()
        ),
        format!(
            "max_result_chars = 1000                  # {}:2",
            local.display()
        ),
        "mode = \"acceptEdits\"                     # --mode".to_owned(),
        format!(
            "  \"Read\",                                # {}:3",
            user.display()
        ),
        format!(
            "  \"Bash(git status)\",                    # {}:2",
            project.display()
        ),
        "  \"Bash(cargo test:*)\",                  # --allow".to_owned(),
        format!(
            "  \"Bash(git push:*)\",                    # {}:2",
            extra.display()
        ),
        format!(
            "  \"Bash(rm:*)\",                          # {}:3",
            project.display()
        ),
        "  \"WebFetch(domain:evil.example)\",       # --deny".to_owned(),
    ];
    for line in expected_lines {
        assert!(
            text.lines().any(|got| got == line),
            "missing line {line:?} in:\n{text}"
        );
    }
    // The output is TOML itself.
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(parsed["permissions"]["allow"].as_array().unwrap().len(), 3);
}

#[test]
fn a_bad_rule_in_a_layer_stops_every_command_with_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    let local = dirs.workspace.join(".toolhost/config.local.toml");
    write_file(
        &local,
        "[permissions]\nallow = [\n  \"Read\",\n  \"Bash(git status\",\n]\n",
    );
    for command in [&["tools"][..], &["config", "show"], &["call", "Read", "{}"]] {
        toolhost(&dirs)
            .args(command)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "invalid config file {}: line 4: invalid permission rule 'Bash(git status'",
                local.display()
            )));
    }
}

#[test]
fn a_user_file_that_does_not_parse_is_found_through_home() {
    let dirs = HomeAndWorkspace::new();
    let user = dirs.user_config();
    write_file(&user, "[permissions\nmode = \"plan\"\n");
    toolhost(&dirs)
        .arg("tools")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "invalid config file {}: line 1:",
            user.display()
        )));
}

#[test]
fn bad_flags_are_usage_errors_that_say_what_to_write() {
    let dirs = HomeAndWorkspace::new();
    toolhost(&dirs)
        .args(["--allow", "Bash(", "tools"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid --allow 'Bash(': a specifier must be closed by ')'",
        ));
    toolhost(&dirs)
        .args(["--mode", "yolo", "tools"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown permission mode 'yolo'"));
}

#[test]
fn an_audit_log_that_cannot_be_opened_stops_the_command() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[permissions]\naudit_log = \"/proc/toolhost-audit.jsonl\"\n",
    );
    toolhost(&dirs)
        .args(["call", "Read", "{}"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot open the audit log /proc/toolhost-audit.jsonl",
        ));
}

#[test]
fn a_hook_that_rewrites_a_path_onto_a_denied_file_is_refused() {
    let dirs = HomeAndWorkspace::new();
    write_file(dirs.workspace.join("notes.txt"), "harmless notes");
    write_file(dirs.workspace.join(".env"), "SECRET=hunter2");
    write_file(
        dirs.project_config(),
        "[permissions]\ndeny = [\"Read(.env)\"]\n\n[[hooks.PreToolUse]]\nmatcher = \"Read\"\n\
         command = \"echo '{\\\"updated_input\\\": {\\\"path\\\": \\\".env\\\"}}'\"\n",
    );
    toolhost(&dirs)
        .args(["call", "Read", r#"{"path": "notes.txt"}"#])
        .assert()
        .failure()
        .stdout(predicate::str::contains("hunter2").not())
        .stderr(
            predicate::str::contains("denied by the permission rule 'Read(.env)'")
                .and(predicate::str::contains("hunter2").not()),
        );
}
