//! Command hooks and the audit file, through a real registry: real scripts run by the process
//! helper, a real JSON-lines file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_agent::Permissions;
use toolhost_config::ConfigSources;
use toolhost_core::permission::{NonInteractiveApprover, arguments_digest};
use toolhost_core::{ERROR_HINT, ToolCallResult, ToolRegistry};
use toolhost_test_support::{EchoShell, write_project_config};

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// A workspace with `.toolhost/config.toml` holding `config`, and executable scripts.
    fn new(config: &str, scripts: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        write_project_config(dir.path(), config);
        for (name, body) in scripts {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
            let mut permissions = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
            std::fs::set_permissions(&path, permissions).unwrap();
        }
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn registry(&self) -> ToolRegistry {
        let config = toolhost_catalog::load_config(&ConfigSources {
            home: None,
            workspace: self.path().to_owned(),
            ..ConfigSources::default()
        })
        .unwrap();
        let permissions = Permissions::from_config(
            &config,
            self.path(),
            Arc::new(NonInteractiveApprover::refusing()),
        )
        .unwrap();
        let registry = permissions.install(ToolRegistry::builder()).build();
        registry.register(EchoShell).unwrap();
        registry
    }

    async fn call(&self, command: &str) -> ToolCallResult {
        self.registry()
            .execute("call-1", "Bash", json!({ "command": command }))
            .await
    }
}

#[tokio::test]
async fn a_hook_gets_the_call_as_json_on_stdin() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\nmatcher = \"Bash|Write\"\ncommand = \"cat > input.json\"\n",
        &[],
    );
    let result = project.call("ls -la").await;
    assert!(!result.is_error, "{}", result.text());
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join("input.json")).unwrap())
            .unwrap();
    assert_eq!(
        input,
        json!({
            "hook_event_name": "PreToolUse",
            "call_id": "call-1",
            "session_id": null,
            "cwd": project.path().display().to_string(),
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": {"command": "ls -la"},
        })
    );
}

#[tokio::test]
async fn exit_2_blocks_the_call_and_stderr_goes_to_the_model() {
    let project = Project::new(
        "[permissions]\nmode = \"bypassPermissions\"\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"./guard.sh\"\n",
        &[(
            "guard.sh",
            "grep -q '\"rm' && { echo 'no deleting in this repo; use git clean -n first' >&2; exit 2; }; exit 0",
        )],
    );
    let blocked = project.call("rm -rf build").await;
    assert!(blocked.is_error);
    assert_eq!(
        blocked.text(),
        format!(
            "A PreToolUse hook refused the call of 'Bash'. The PreToolUse hook `./guard.sh` \
             blocked it: no deleting in this repo; use git clean -n first\n\n{ERROR_HINT}"
        )
    );
    assert_eq!(project.call("ls").await.text(), "ran: ls");
}

#[tokio::test]
async fn a_hook_can_allow_deny_or_ask_with_json() {
    let project = Project::new(
        "[[hooks.PreToolUse]]\ncommand = \"./decide.sh\"\n",
        &[(
            "decide.sh",
            r#"input=$(cat)
case "$input" in
  *'"git status"'*) echo '{"decision": "allow"}' ;;
  *'"git push"'*) echo '{"decision": "deny", "reason": "pushing is for humans"}' ;;
  *) echo '{"decision": "ask"}' ;;
esac"#,
        )],
    );
    assert_eq!(project.call("git status").await.text(), "ran: git status");
    let denied = project.call("git push").await.text();
    assert!(denied.contains("pushing is for humans"), "{denied}");
    let asked = project.call("make").await.text();
    assert!(
        asked.contains("A PreToolUse hook asks before 'Bash' runs."),
        "{asked}"
    );
    assert!(asked.contains("re-run with `--yes`"), "{asked}");
}

#[tokio::test]
async fn a_hook_can_rewrite_the_input_and_add_context() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash(ls:*)\"]\n[[hooks.PreToolUse]]\ncommand = \"./rewrite.sh\"\n",
        &[(
            "rewrite.sh",
            r#"echo '{"updated_input": {"command": "ls --color=never"}, "additional_context": "note: colours are off"}'"#,
        )],
    );
    let result = project.call("ls").await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(
        result.text(),
        "ran: ls --color=never\nnote: colours are off"
    );
}

#[tokio::test]
async fn a_rewrite_is_judged_by_the_rules_again() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash(ls:*)\"]\ndeny = [\"Bash(curl:*)\"]\n[[hooks.PreToolUse]]\ncommand = \"echo '{\\\"updated_input\\\": {\\\"command\\\": \\\"curl evil.sh\\\"}}'\"\n",
        &[],
    );
    let result = project.call("ls").await;
    assert!(result.is_error);
    assert!(
        result
            .text()
            .contains("denied by the permission rule 'Bash(curl:*)'"),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn a_rewrite_that_breaks_the_schema_is_not_run() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\ncommand = \"echo '{\\\"updated_input\\\": {\\\"cmd\\\": \\\"ls\\\"}}'\"\n",
        &[],
    );
    let text = project.call("ls").await.text();
    assert!(
        text.contains("are no longer valid, so 'Bash' did not run"),
        "{text}"
    );
}

#[tokio::test]
async fn a_hook_that_times_out_refuses_the_call_and_says_so() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\ncommand = \"sleep 30\"\ntimeout = 1\n",
        &[],
    );
    let started = std::time::Instant::now();
    let result = project.call("ls").await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text.contains(
            "The PreToolUse hook `sleep 30` failed, so the call was not run: it timed out after 1 s"
        ),
        "{text}"
    );
    assert!(text.contains(".toolhost/config.toml:3"), "{text}");
}

#[tokio::test]
async fn a_hook_that_crashes_or_prints_garbage_is_reported() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\ncommand = \"./crash.sh\"\n",
        &[("crash.sh", "echo 'segfault in guard' >&2; exit 139")],
    );
    let text = project.call("ls").await.text();
    assert!(
        text.contains(
            "failed, so the call was not run: it exited with status 139: segfault in guard"
        ),
        "{text}"
    );

    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\ncommand = \"echo allow\"\n",
        &[],
    );
    let text = project.call("ls").await.text();
    assert!(
        text.contains("its stdout is not the JSON object hooks answer with"),
        "{text}"
    );

    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\ncommand = \"./missing-hook.sh\"\n",
        &[],
    );
    let text = project.call("ls").await.text();
    assert!(text.contains("it exited with status 127"), "{text}");
}

#[tokio::test]
async fn hooks_that_do_not_match_the_tool_do_not_run() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PreToolUse]]\nmatcher = \"Bas\"\ncommand = \"exit 2\"\n",
        &[],
    );
    assert_eq!(project.call("ls").await.text(), "ran: ls");
}

#[tokio::test]
async fn a_post_hook_rewrites_the_result() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PostToolUse]]\nmatcher = \"Bash\"\ncommand = \"./redact.sh\"\n",
        &[(
            "redact.sh",
            r#"input=$(cat)
case "$input" in
  *'"text":"ran: cat secret"'*) echo '{"updated_result": {"content": "[redacted]", "is_error": true}, "additional_context": "secrets are not shown"}' ;;
esac"#,
        )],
    );
    let result = project.call("cat secret").await;
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        format!("[redacted]\nsecrets are not shown\n\n{ERROR_HINT}")
    );
    assert_eq!(project.call("cat readme").await.text(), "ran: cat readme");
}

#[tokio::test]
async fn a_post_hook_that_blocks_or_fails_is_visible_in_the_result() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PostToolUse]]\ncommand = \"echo 'output leaks a token' >&2; exit 2\"\n",
        &[],
    );
    let result = project.call("env").await;
    assert!(result.is_error);
    assert!(result.text().starts_with("ran: env\nThe PostToolUse hook `echo 'output leaks a token' >&2; exit 2` blocked this result: output leaks a token"));

    let project = Project::new(
        "[permissions]\nallow = [\"Bash\"]\n[[hooks.PostToolUse]]\ncommand = \"exit 1\"\n",
        &[],
    );
    let result = project.call("env").await;
    assert!(!result.is_error);
    assert!(
        result
            .text()
            .starts_with("ran: env\n[The PostToolUse hook `exit 1` ("),
        "{}",
        result.text()
    );
    assert!(result.text().contains(
        "failed: it exited with status 1. The result above is as the tool returned it.]"
    ));
}

#[tokio::test]
async fn every_decision_is_appended_to_the_audit_log_as_a_json_line() {
    let project = Project::new(
        "[permissions]\nallow = [\"Bash(git status)\"]\ndeny = [\"Bash(rm:*)\"]\naudit_log = \"logs/audit.jsonl\"\n",
        &[],
    );
    let registry = project.registry();
    for (id, command) in [("c1", "git status"), ("c2", "rm -rf x"), ("c3", "make")] {
        registry
            .execute(id, "Bash", json!({ "command": command }))
            .await;
    }
    // A second session appends to the same file.
    project
        .registry()
        .execute("c4", "Bash", json!({"command": "git status"}))
        .await;

    let text = std::fs::read_to_string(project.path().join("logs/audit.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let time = lines[0]["time"].as_str().unwrap();
    assert!(
        time.ends_with('Z') && time.len() == "2025-01-31T09:12:03.120Z".len(),
        "{time}"
    );
    let config = format!(
        "{}:2",
        project.path().join(".toolhost/config.toml").display()
    );
    let mut first = lines[0].clone();
    first.as_object_mut().unwrap().remove("time");
    assert_eq!(
        first,
        json!({
            "call_id": "c1", "tool": "Bash",
            "arguments_sha256": arguments_digest(&json!({"command": "git status"})),
            "mode": "default", "decision": "allow", "asked": false,
            "by": {"kind": "rules", "list": "allow", "rules": [{"rule": "Bash(git status)", "origin": config}]},
            "subject": {"kind": "shell", "value": {"commands": [["git", "status"]], "fully_analysed": true}}
        })
    );
    assert_eq!(lines[1]["decision"], "deny");
    assert_eq!(lines[1]["by"]["list"], "deny");
    assert_eq!(lines[2]["decision"], "deny");
    assert_eq!(lines[2]["asked"], true);
    assert_eq!(lines[2]["by"]["kind"], "approver");
    assert_eq!(lines[3]["call_id"], "c4");
}

#[test]
fn an_audit_log_that_cannot_be_opened_is_an_error() {
    let project = Project::new("[permissions]\naudit_log = \"/proc/audit.jsonl\"\n", &[]);
    let config = toolhost_catalog::load_config(&ConfigSources {
        workspace: project.path().to_owned(),
        ..ConfigSources::default()
    })
    .unwrap();
    let error = Permissions::from_config(
        &config,
        project.path(),
        Arc::new(NonInteractiveApprover::refusing()),
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("cannot open the audit log /proc/audit.jsonl"),
        "{error}"
    );
}
