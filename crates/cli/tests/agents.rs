//! `--agent NAME` through the `toolhost` binary: the user servers an agent selects, its direct
//! stdio servers, its `allowed_tools`, and the bridge its Bash commands reach the built-in
//! providers through. The servers are real: `@modelcontextprotocol/server-everything` and
//! `server-filesystem` (npm) and `mcp-server-git` (PyPI), installed by
//! `tests/mcp-clients/setup.sh`, which exports `TOOLHOST_TEST_NODE_MODULES` and
//! `TOOLHOST_TEST_VENV`. Without them these tests fail: run `scripts/test.sh`, or
//! `eval "$(tests/mcp-clients/setup.sh)"` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use predicates::prelude::*;
use support::toolhost;
use toolhost_test_support::{node, npm_entry_point, venv, write_project_config};

/// `command = …` and `args = […]` running the npm server `package` on node.
fn node_server(package: &str, args: &[&str]) -> String {
    let mut all = vec![npm_entry_point(package).display().to_string()];
    all.extend(args.iter().map(|arg| (*arg).to_owned()));
    format!("command = {:?}\nargs = {all:?}\n", node())
}

/// The names `toolhost --agent AGENT tools` lists.
fn tool_names(workspace: &Path, agent: &str) -> Vec<String> {
    let output = toolhost(workspace)
        .args(["--agent", agent, "tools", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let specs: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    specs
        .iter()
        .map(|spec| spec["name"].as_str().unwrap().to_owned())
        .collect()
}

fn mcp_servers_of(names: &[String]) -> Vec<String> {
    let mut servers: Vec<String> = names
        .iter()
        .filter_map(|name| name.strip_prefix("mcp__"))
        .filter_map(|rest| rest.split("__").next())
        .map(str::to_owned)
        .collect();
    servers.dedup();
    servers
}

#[test]
fn an_agent_starts_the_user_servers_it_selects_and_its_direct_servers() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(workspace)
        .status()
        .unwrap();
    assert!(status.success());
    let git_server = venv().join("bin/mcp-server-git");
    write_project_config(
        workspace,
        &format!(
            "[mcp_servers.ev]\n{}\n[mcp_servers.fs]\n{}\n\
             [agents.gitbot]\ndescription = \"Works on the repository\"\nmcp_servers = [\"ev\"]\n\n\
             [agents.gitbot.direct_mcp_servers.git]\ncommand = {:?}\n\
             args = [\"--repository\", \"${{TOOLHOST_TEST_REPOSITORY:-{}}}\"]\n\
             enabled_tools = [\"git_status\"]\n",
            node_server("@modelcontextprotocol/server-everything", &["stdio"]),
            node_server(
                "@modelcontextprotocol/server-filesystem",
                &[&workspace.display().to_string()]
            ),
            git_server.display().to_string(),
            workspace.display()
        ),
    );

    let main = tool_names(workspace, "main");
    assert_eq!(mcp_servers_of(&main), ["ev", "fs", "toolhost"]);
    let gitbot = tool_names(workspace, "gitbot");
    assert_eq!(mcp_servers_of(&gitbot), ["ev", "git", "toolhost"]);
    assert!(
        gitbot.contains(&"mcp__git__git_status".to_owned()),
        "{gitbot:?}"
    );
    assert!(gitbot.contains(&"Bash".to_owned()), "{gitbot:?}");

    // A direct server's tool goes through the same pipeline: it asks unless a rule allows it.
    toolhost(workspace)
        .args(["--agent", "gitbot", "call", "mcp__git__git_status"])
        .arg(format!(
            r#"{{"repo_path": {:?}}}"#,
            workspace.display().to_string()
        ))
        .assert()
        .failure()
        .stderr(predicate::str::contains("mcp__git__git_status"));
    toolhost(workspace)
        .args(["--agent", "gitbot", "--allow", "mcp__git", "call"])
        .arg("mcp__git__git_status")
        .arg(format!(
            r#"{{"repo_path": {:?}}}"#,
            workspace.display().to_string()
        ))
        .assert()
        .success()
        .stdout(predicate::str::contains("Repository status"));
    // The main agent has no such server.
    toolhost(workspace)
        .args(["--allow", "mcp__git", "call", "mcp__git__git_status", "{}"])
        .assert()
        .failure();
}

#[test]
fn allowed_tools_narrow_what_is_listed_and_what_may_be_called() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    std::fs::write(workspace.join("notes.txt"), "remember the milk\n").unwrap();
    write_project_config(
        workspace,
        "[agents.reader]\nallowed_tools = [\"Read\", \"mcp__toolhost\"]\n",
    );
    // A `Read` entry covers the read tools, as in permission rules.
    assert_eq!(
        tool_names(workspace, "reader"),
        ["Read", "ListDir", "Glob", "Grep", "mcp__toolhost__status"]
    );
    toolhost(workspace)
        .args([
            "--agent",
            "reader",
            "call",
            "Read",
            r#"{"path": "notes.txt"}"#,
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("remember the milk"));
    toolhost(workspace)
        .args(["--agent", "reader", "call", "--yes", "Bash"])
        .arg(r#"{"command": "touch made-by-bash"}"#)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "The agent 'reader' is not offered the tool 'Bash': its allowed_tools are Read, \
             mcp__toolhost.",
        ));
    assert!(!workspace.join("made-by-bash").exists());
}

#[test]
fn an_unknown_agent_is_an_error_listing_the_agents() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(dir.path(), "[agents.reader]\nallowed_tools = [\"Read\"]\n");
    toolhost(dir.path())
        .args(["--agent", "writer", "tools"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown agent 'writer': the agents are main, reader",
        ));
}

#[test]
fn a_bash_command_reaches_the_built_in_providers_through_the_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    std::fs::write(workspace.join("bridge_client.py"), support::BRIDGE_CLIENT).unwrap();
    write_project_config(
        workspace,
        "[agents.runner]\nallowed_tools = [\"Bash\", \"mcp__toolhost\"]\n",
    );
    let output = toolhost(workspace)
        .args(["--agent", "runner", "call", "--yes", "Bash"])
        .arg(r#"{"command": "/usr/bin/python3 bridge_client.py"}"#)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("without token: 401"), "{stdout}");
    assert!(
        stdout.contains(&format!("workspace: {}", workspace.display())),
        "{stdout}"
    );
    // `status` lists what the agent is offered.
    assert!(
        stdout.contains("tools: 2 (Bash, mcp__toolhost__status)"),
        "{stdout}"
    );
}

#[test]
fn bash_commands_get_the_bridge_variables_and_nothing_else_of_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let output = toolhost(dir.path())
        .env("SOME_PARENT_SECRET", "hidden")
        .args(["call", "--yes", "Bash"])
        .arg(r#"{"command": "echo \"url=$TOOLHOST_MCP_URL secret=${SOME_PARENT_SECRET:-none} token=${#TOOLHOST_MCP_TOKEN}\""}"#)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.starts_with("url=http://127.0.0.1:"), "{stdout}");
    assert!(stdout.contains("/mcp secret=none token=64\n"), "{stdout}");
}

#[test]
fn serve_offers_the_agents_tools_and_its_bash_commands_share_one_bridge() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(
        dir.path(),
        "[agents.runner]\nallowed_tools = [\"Bash\", \"mcp__toolhost\"]\n",
    );
    let mut server =
        support::ServeProcess::start(dir.path(), &["--agent", "runner", "--allow", "Bash"]);
    server.initialize();
    assert_eq!(server.tool_names(1), ["Bash", "mcp__toolhost__status"]);
    let echo_url = serde_json::json!({"command": "echo \"$TOOLHOST_MCP_URL\""});
    let first = server.call(2, "Bash", echo_url.clone());
    let second = server.call(3, "Bash", echo_url);
    let url_of = |result: &serde_json::Value| {
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    assert!(url_of(&first).starts_with("http://127.0.0.1:"), "{first}");
    assert_eq!(url_of(&first), url_of(&second));
}

/// Runs `command` with Bash as `agent` (with `flags`) and returns its stdout.
fn bash_as(workspace: &Path, agent: &str, flags: &[&str], command: &str) -> String {
    let output = toolhost(workspace)
        .args(["--agent", agent, "call"])
        .args(flags)
        .arg("Bash")
        .arg(serde_json::json!({ "command": command }).to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_bridge_serves_only_what_the_agent_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(
        dir.path(),
        "[agents.shell]\nallowed_tools = [\"Bash\"]\n\
         [agents.runner]\nallowed_tools = [\"Bash\", \"mcp__toolhost\"]\n",
    );
    let echo = "echo \"url=${TOOLHOST_MCP_URL:-none}\"";
    // `shell` is not offered mcp__toolhost__status: no bridge, no variables.
    let stdout = bash_as(dir.path(), "shell", &["--yes"], echo);
    assert_eq!(stdout.lines().next(), Some("url=none"), "{stdout}");
    let stdout = bash_as(dir.path(), "runner", &["--yes"], echo);
    assert!(stdout.starts_with("url=http://127.0.0.1:"), "{stdout}");
}

#[test]
fn bridge_calls_go_through_the_permission_rules_and_the_audit_trail() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    std::fs::write(workspace.join("bridge_client.py"), support::BRIDGE_CLIENT).unwrap();
    write_project_config(
        workspace,
        "[permissions]\naudit_log = \"audit.jsonl\"\n\
         [agents.runner]\nallowed_tools = [\"Bash\", \"mcp__toolhost\"]\n",
    );
    let client = "/usr/bin/python3 bridge_client.py";

    // Nobody can be asked from inside the command: a call that would ask is refused.
    let stdout = bash_as(workspace, "runner", &["--allow", "Bash"], client);
    assert!(
        stdout.contains(
            "'mcp__toolhost__status' needs confirmation before it runs. The call was not run: \
             it needs the user's approval and nobody can be asked here."
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("workspace: "), "{stdout}");

    // A deny rule applies there as anywhere.
    let stdout = bash_as(
        workspace,
        "runner",
        &["--yes", "--deny", "mcp__toolhost"],
        client,
    );
    assert!(
        stdout.contains("denied by the permission rule 'mcp__toolhost'"),
        "{stdout}"
    );

    // So does the mode (plan mode refuses the Bash command itself).
    let stdout = bash_as(
        workspace,
        "runner",
        &["--mode", "bypassPermissions"],
        client,
    );
    assert!(stdout.contains("workspace: "), "{stdout}");

    // An allow rule lets the call run, and the audit trail records it.
    let stdout = bash_as(
        workspace,
        "runner",
        &["--allow", "Bash", "--allow", "mcp__toolhost"],
        client,
    );
    assert!(
        stdout.contains(&format!("workspace: {}", workspace.display())),
        "{stdout}"
    );
    let audit = std::fs::read_to_string(workspace.join("audit.jsonl")).unwrap();
    let bridged: Vec<serde_json::Value> = audit
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["tool"] == "mcp__toolhost__status")
        .collect();
    let decisions: Vec<&str> = bridged
        .iter()
        .map(|entry| entry["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["deny", "deny", "allow", "allow"], "{audit}");
}

#[test]
fn post_tool_use_hooks_see_bridge_calls_by_the_agents_name_for_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    std::fs::write(workspace.join("bridge_client.py"), support::BRIDGE_CLIENT).unwrap();
    write_project_config(
        workspace,
        "[agents.runner]\nallowed_tools = [\"Bash\", \"mcp__toolhost\"]\n\
         [[hooks.PostToolUse]]\nmatcher = \"mcp__toolhost__status\"\n\
         command = \"echo '{\\\"updated_result\\\": {\\\"content\\\": \\\"redacted by the hook\\\"}}'\"\n",
    );
    let stdout = bash_as(
        workspace,
        "runner",
        &["--allow", "Bash", "--allow", "mcp__toolhost"],
        "/usr/bin/python3 bridge_client.py",
    );
    assert!(stdout.contains("redacted by the hook"), "{stdout}");
    assert!(!stdout.contains("workspace: "), "{stdout}");
}

#[test]
fn commands_kept_off_the_network_get_no_bridge() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(dir.path(), "[shell]\nnetwork = false\n");
    let stdout = bash_as(
        dir.path(),
        "main",
        &["--yes"],
        "echo \"url=${TOOLHOST_MCP_URL:-none}\"",
    );
    assert_eq!(stdout.lines().next(), Some("url=none"), "{stdout}");
}

#[test]
fn mcp_list_get_and_test_know_the_agents_direct_servers() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(workspace)
        .status()
        .unwrap();
    assert!(status.success());
    let git_server = venv().join("bin/mcp-server-git");
    write_project_config(
        workspace,
        &format!(
            "[agents.reviewer.direct_mcp_servers.lint]\ncommand = {:?}\n\
             args = [\"--repository\", {:?}]\nenabled_tools = [\"git_status\"]\n",
            git_server.display().to_string(),
            workspace.display().to_string()
        ),
    );
    toolhost(workspace)
        .args(["mcp", "list"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!(
            "lint (agent reviewer)  stdio  {}",
            git_server.display()
        )));
    toolhost(workspace)
        .args(["mcp", "get", "lint"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "'lint' is a direct MCP server of another agent: add --agent reviewer",
        ));
    toolhost(workspace)
        .args(["--agent", "reviewer", "mcp", "get", "lint"])
        .assert()
        .success()
        .stdout(predicate::str::contains("name: lint\n"));
    toolhost(workspace)
        .args(["mcp", "test", "lint", "--agent", "reviewer"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "lint: started, 1 tools\n  mcp__lint__git_status",
        ));
}

#[test]
fn an_allowed_tools_entry_that_names_no_tool_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(
        dir.path(),
        "[agents.reader]\nallowed_tools = [\"Read\", \"Raed\"]\n",
    );
    toolhost(dir.path())
        .args(["--agent", "reader", "tools"])
        .assert()
        .success()
        .stderr(
            predicate::str::is_match(
                "(?m)^warning: agent 'reader': allowed_tools entry 'Raed' names no tool",
            )
            .unwrap(),
        );
}
