//! Configured MCP servers through the `toolhost` binary: the gateway (`toolhost serve`
//! re-exposing a server's tools next to the built-ins), a server's `tools/list_changed`,
//! `toolhost mcp list | get | add | remove | test`, `required`, a legacy SSE server, and a server
//! that `serve` starts again after it failed at start-up. The servers are real:
//! `@modelcontextprotocol/server-everything` and a small server on the official TypeScript SDK
//! (`fixtures/growing_server.cjs`), installed by `tests/mcp-clients/setup.sh`, which exports
//! `TOOLHOST_TEST_NODE_MODULES`. Without it these tests fail: run `scripts/test.sh`, or
//! `eval "$(tests/mcp-clients/setup.sh)"` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::json;
use support::{ServeProcess, toolhost};
use toolhost_test_support::{
    EverythingHttp, free_port, is_running, node, node_modules, npm_entry_point, read_pid,
    write_project_config,
};

/// `[mcp_servers.NAME]` running server-everything over stdio.
fn everything_entry(name: &str) -> String {
    let script = npm_entry_point("@modelcontextprotocol/server-everything");
    format!(
        "[mcp_servers.{name}]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node(),
        script.display().to_string()
    )
}

fn text_of(result: &serde_json::Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn serve_re_exposes_a_configured_servers_tools_next_to_the_builtins_under_one_policy() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(dir.path(), &everything_entry("ev"));
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__ev__echo"]);
    server.initialize();

    let names = server.tool_names_with("mcp__ev__get-sum");
    for expected in ["Read", "Bash", "mcp__ev__echo", "mcp__ev__get-sum"] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} not in {names:?}"
        );
    }
    let echo = server.call(2, "mcp__ev__echo", json!({"message": "hi"}));
    assert_eq!(
        (text_of(&echo), &echo["isError"]),
        ("Echo: hi".to_owned(), &json!(false))
    );
    // Not allowed by a rule, and this client cannot confirm: refused like any sensitive tool.
    let sum = server.call(3, "mcp__ev__get-sum", json!({"a": 1, "b": 2}));
    assert_eq!(sum["isError"], true, "{sum}");
}

#[test]
fn a_servers_tools_list_changed_updates_the_served_registry() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/growing_server.cjs");
    write_project_config(
        dir.path(),
        &format!(
            "[mcp_servers.grow]\ncommand = {:?}\nargs = [{:?}, {:?}]\n",
            node(),
            fixture.display().to_string(),
            node_modules().display().to_string()
        ),
    );
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__grow"]);
    server.initialize();
    let before = server.tool_names_with("mcp__grow__grow");
    assert!(
        !before.contains(&"mcp__grow__extra".to_owned()),
        "{before:?}"
    );

    let grown = server.call(2, "mcp__grow__grow", json!({}));
    assert_eq!(text_of(&grown), "grown");
    server.wait_for("tools/list_changed notification", |m| {
        m["method"] == "notifications/tools/list_changed"
    });
    // The server also announced a change when it started: poll until the new tool is served.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut id = 3;
    loop {
        let names = server.tool_names(id);
        if names.contains(&"mcp__grow__extra".to_owned()) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "mcp__grow__extra never served: {names:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
        id += 1;
    }
    let extra = server.call(1000, "mcp__grow__extra", json!({}));
    assert_eq!(text_of(&extra), "extra!");
}

#[test]
fn mcp_add_list_get_test_and_remove_keep_the_rest_of_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let original = "# my settings\n[limits]\nmax_result_chars = 40000  # roomy\n\n\
                    [mcp_servers.remote]\nurl = \"http://127.0.0.1:9/mcp\"\n";
    let path = write_project_config(dir.path(), original);
    let script = npm_entry_point("@modelcontextprotocol/server-everything");

    toolhost(dir.path())
        .args([
            "mcp",
            "add",
            "ev",
            "--env",
            "SECRET=hidden-value",
            "--tool-timeout",
            "9",
        ])
        .args(["--required", "--", &node()])
        .arg(&script)
        .arg("stdio")
        .assert()
        .success()
        .stdout(predicate::str::contains("Added the MCP server 'ev'"));
    let edited = std::fs::read_to_string(&path).unwrap();
    assert!(edited.starts_with(original), "{edited}");
    assert!(edited.contains("[mcp_servers.ev]"), "{edited}");
    toolhost(dir.path())
        .args(["mcp", "add", "ev", "--", "true"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("already has [mcp_servers.ev]"));

    let listed = toolhost(dir.path())
        .args(["mcp", "list"])
        .assert()
        .success();
    let listed = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(listed.contains("ev  stdio  "), "{listed}");
    assert!(
        listed.contains("remote  http  http://127.0.0.1:9/mcp"),
        "{listed}"
    );

    let shown = toolhost(dir.path())
        .args(["mcp", "get", "ev"])
        .assert()
        .success();
    let shown = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    for line in [
        "type: stdio",
        "env: SECRET",
        "required: true",
        "tool_timeout: 9s",
    ] {
        assert!(shown.contains(line), "{line} not in {shown}");
    }
    assert!(
        !shown.contains("hidden-value"),
        "env values are hidden: {shown}"
    );
    toolhost(dir.path())
        .args(["mcp", "get", "nope"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no MCP server is named 'nope'"))
        .stderr(predicate::str::contains("ev, remote"));

    toolhost(dir.path())
        .args(["mcp", "test", "ev"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ev: started"))
        .stdout(predicate::str::contains("mcp__ev__echo  (echo)"));
    toolhost(dir.path())
        .args(["mcp", "test", "remote"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("the MCP server 'remote'"));

    toolhost(dir.path())
        .args(["mcp", "remove", "ev"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().trim_end(),
        original.trim_end()
    );
    toolhost(dir.path())
        .args(["mcp", "remove", "ev"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("has no [mcp_servers.ev]"));
}

/// A stdio server that writes a line on stderr and exits before the handshake.
fn broken_entry(required: bool) -> String {
    format!(
        "[mcp_servers.broken]\ncommand = \"/bin/sh\"\n\
         args = [\"-c\", \"echo 'cannot open the database' >&2; exit 3\"]\nrequired = {required}\n"
    )
}

#[test]
fn a_required_server_that_fails_stops_the_command_with_its_name_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(dir.path(), &broken_entry(true));
    toolhost(dir.path())
        .arg("tools")
        .assert()
        .failure()
        .stderr(predicate::str::contains("the MCP server 'broken'"))
        .stderr(predicate::str::contains("cannot open the database"))
        .stderr(predicate::str::contains("required = true"));
}

#[test]
fn a_server_that_fails_without_required_is_reported_and_the_others_still_serve() {
    let dir = tempfile::tempdir().unwrap();
    write_project_config(
        dir.path(),
        &format!("{}\n{}", broken_entry(false), everything_entry("ev")),
    );
    toolhost(dir.path())
        .arg("tools")
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: the MCP server 'broken'"))
        .stderr(predicate::str::contains("cannot open the database"))
        .stdout(predicate::str::contains("mcp__ev__echo"))
        .stdout(predicate::str::contains("mcp__broken").not());
}

#[test]
fn serve_starts_again_a_server_that_failed_at_start_up_and_announces_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    let tries = dir.path().join("tries");
    let script = npm_entry_point("@modelcontextprotocol/server-everything");
    // Fails its first two starts (like a server waiting for its database), then serves; shell
    // built-ins only, as the server's environment is a clean one.
    let shell = format!(
        "n=0; [ -e '{tries}' ] && read n < '{tries}'; \
         if [ \"$n\" -ge 2 ]; then exec '{node}' '{script}' stdio; fi; \
         echo $((n + 1)) > '{tries}'; echo 'not ready yet' >&2; exit 3",
        tries = tries.display(),
        node = node(),
        script = script.display(),
    );
    write_project_config(
        dir.path(),
        &format!("[mcp_servers.late]\ncommand = \"/bin/sh\"\nargs = [\"-c\", {shell:?}]\n"),
    );
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__late"]);
    server.initialize();
    let before = server.tool_names(1);
    assert!(
        !before.iter().any(|name| name.starts_with("mcp__late")),
        "{before:?}"
    );

    // Retried after 1 s (fails again), then 2 s later (starts).
    server.wait_for("tools/list_changed notification", |m| {
        m["method"] == "notifications/tools/list_changed"
    });
    let after = server.tool_names(2);
    assert!(after.contains(&"mcp__late__echo".to_owned()), "{after:?}");
    let echo = server.call(3, "mcp__late__echo", json!({"message": "late"}));
    assert_eq!(text_of(&echo), "Echo: late");
    assert_eq!(
        std::fs::read_to_string(&tries).unwrap().trim(),
        "2",
        "two failed starts"
    );
}

#[test]
fn a_legacy_sse_server_from_the_config_is_called_and_one_that_is_down_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    write_project_config(
        dir.path(),
        &format!("[mcp_servers.old]\ntype = \"sse\"\nurl = \"http://127.0.0.1:{port}/sse\"\n"),
    );
    toolhost(dir.path())
        .arg("tools")
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: the MCP server 'old'"))
        .stderr(predicate::str::contains("cannot connect to"));

    let _server = EverythingHttp::start("sse", port, &[], &[]);
    toolhost(dir.path())
        .args([
            "call",
            "mcp__old__echo",
            r#"{"message": "over sse"}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("Echo: over sse"));
}

#[test]
fn the_built_in_toolhost_provider_reports_the_workspace_and_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    toolhost(dir.path())
        .arg("tools")
        .assert()
        .success()
        .stdout(predicate::str::contains("mcp__toolhost__status"));
    let workspace = dir.path().canonicalize().unwrap();
    toolhost(dir.path())
        .args(["call", "mcp__toolhost__status", "{}", "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "workspace: {}",
            workspace.display()
        )))
        .stdout(predicate::str::contains(
            " Read, SessionsHistory, SessionsList, SessionsSend, SessionsSpawn, SessionsYield, \
             TodoWrite, WebFetch, WebSearch, Write, list_skills, mcp__toolhost__status, read_skill, \
             skillhub_install, skillhub_search, slash_command, spawn_agent, subagent_list, \
             subagent_status)",
        ));
}

#[test]
fn serve_stops_its_stdio_servers_and_their_helpers_when_the_client_disconnects() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("helper.pid");
    let stopped = dir.path().join("helper.stopped");
    let script = npm_entry_point("@modelcontextprotocol/server-everything");
    // A server that leaves a helper behind in its process group: the shell execs into the
    // server, the helper stays. The helper notes a SIGTERM, which only a graceful stop sends
    // (a process that exits without stopping its servers at best SIGKILLs them).
    let shell = format!(
        "(trap 'echo stopped > \"{stopped}\"; exit 0' TERM; sleep 300 & wait) & \
         echo $! > '{pids}'; exec '{node}' '{script}' stdio",
        stopped = stopped.display(),
        pids = pid_file.display(),
        node = node(),
        script = script.display(),
    );
    write_project_config(
        dir.path(),
        &format!("[mcp_servers.grouped]\ncommand = \"/bin/sh\"\nargs = [\"-c\", {shell:?}]\n"),
    );
    let mut server = ServeProcess::start(dir.path(), &[]);
    server.initialize();
    server.tool_names_with("mcp__grouped__echo");
    let helper = read_pid(&pid_file);
    assert!(is_running(helper), "the helper runs while the server does");

    let status = server.close_stdin_and_wait(Duration::from_secs(20));
    assert!(
        status.is_some_and(|status| status.success()),
        "serve did not end well on EOF: {status:?}"
    );
    // serve stops the server's group before it exits; a moment for the kernel to reap.
    let deadline = Instant::now() + Duration::from_secs(2);
    while is_running(helper) {
        if Instant::now() > deadline {
            // Not left behind for the next test run, whatever the outcome.
            let _ = std::process::Command::new("kill")
                .arg(helper.to_string())
                .status();
            panic!("the server's helper {helper} outlived toolhost serve");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_to_string(&stopped).unwrap_or_default().trim(),
        "stopped",
        "the helper was not stopped gracefully (SIGTERM first)"
    );
}

/// A project `.mcp.json` that gives Claude Code toolhost's tools (`toolhost serve`) is read
/// by toolhost too: the entry that is toolhost itself on this workspace is left out with a
/// message, instead of each `serve` starting another one without end.
#[test]
fn a_mcp_json_entry_running_this_toolhost_on_this_workspace_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("toolhost");
    let entry = json!({"mcpServers": {"self": {"command": binary, "args": ["serve"]}}});
    std::fs::write(dir.path().join(".mcp.json"), entry.to_string()).unwrap();
    toolhost(dir.path())
        .arg("tools")
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .stderr(predicate::str::contains("'self' runs this toolhost"))
        .stderr(predicate::str::contains("would start itself again"))
        .stdout(predicate::str::contains("Read"))
        .stdout(predicate::str::contains("mcp__self").not());
}

/// The same loop through a wrapper the direct check cannot see through (`sh -c`): every level
/// tells its servers how deep it is, and the third toolhost below starts no more servers, so
/// the command ends with the levels that did start.
#[test]
fn a_chain_of_toolhost_serving_itself_through_a_wrapper_ends() {
    let dir = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("toolhost");
    let line = format!("exec '{}' serve", binary.display());
    let entry = json!({"mcpServers": {"self": {"command": "/bin/sh", "args": ["-c", line]}}});
    std::fs::write(dir.path().join(".mcp.json"), entry.to_string()).unwrap();
    let output = toolhost(dir.path())
        .args(["tools", "--format", "json"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The first level below serves its built-ins to this one.
    assert!(stdout.contains("mcp__self__Read"), "{stdout}");
}

/// The gateway answers `initialize` before it starts its servers: starting a process holds
/// the thread a moment, which the client's first answer does not wait for. The server starts
/// once the client has completed its handshake.
#[test]
fn serve_starts_its_servers_after_the_clients_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    write_project_config(
        dir.path(),
        &format!(
            "[mcp_servers.late]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch '{}'; exec cat\"]\n",
            marker.display()
        ),
    );
    let mut server = ServeProcess::start(dir.path(), &[]);
    server.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}}));
    server.wait_for("initialize reply", |message| message["id"] == 0);
    assert!(
        !marker.exists(),
        "the server started before initialize was answered"
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the server never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}
