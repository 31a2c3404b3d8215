//! The MCP client over the legacy HTTP+SSE transport, and a server that comes up after the
//! client did (retried by `keep_in_sync`), against the real
//! `@modelcontextprotocol/server-everything` run with its `sse` transport (npm, installed by
//! `tests/mcp-clients/setup.sh`, which exports `TOOLHOST_TEST_NODE_MODULES`). Each server is
//! made to listen on 127.0.0.1 only by `tests/mcp-clients/node/listen_loopback.cjs` and is
//! killed when its test ends. Without the packages these tests fail: run `scripts/test.sh`, or
//! `eval "$(tests/mcp-clients/setup.sh)"` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_core::{CallOptions, ToolRegistry};
use toolhost_mcp::{McpClients, McpServerConfig, McpTransport};
use toolhost_test_support::{EverythingHttp, free_port};

/// server-everything speaking the legacy SSE transport on `port` (0: any free port).
fn sse_everything(port: u16) -> EverythingHttp {
    EverythingHttp::start("sse", port, &[], &[])
}

/// The SSE endpoint of `server`.
fn url(server: &EverythingHttp) -> String {
    format!("http://127.0.0.1:{}/sse", server.port)
}

fn sse_config(name: &str, url: String) -> McpServerConfig {
    McpServerConfig::new(
        name,
        McpTransport::Sse {
            url,
            headers: Default::default(),
            bearer_token_env: None,
        },
    )
}

async fn start_one(config: McpServerConfig) -> (Arc<McpClients>, ToolRegistry, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let (clients, report) = McpClients::start([config], workspace.path()).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let registry = ToolRegistry::builder().build();
    assert!(clients.register_into(&registry).is_empty());
    (clients, registry, workspace)
}

#[tokio::test]
async fn tools_of_a_legacy_sse_server_are_listed_and_called_with_progress_and_errors() {
    let server = sse_everything(0);
    let (clients, registry, _workspace) = start_one(sse_config("old", url(&server))).await;
    let names = registry.names();
    for expected in [
        "mcp__old__echo",
        "mcp__old__get-sum",
        "mcp__old__trigger-long-running-operation",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} not in {names:?}"
        );
    }

    let echo = registry
        .execute("1", "mcp__old__echo", json!({"message": "over sse"}))
        .await;
    assert_eq!(
        (echo.text().as_str(), echo.is_error),
        ("Echo: over sse", false)
    );

    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&updates);
    let options = CallOptions {
        on_update: Some(Arc::new(move |update| sink.lock().unwrap().push(update))),
        ..CallOptions::default()
    };
    let long = registry
        .execute_with(
            "2",
            "mcp__old__trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            options,
        )
        .await;
    assert!(!long.is_error, "{}", long.text());
    let progress: Vec<_> = updates
        .lock()
        .unwrap()
        .iter()
        .filter_map(|update| update.progress)
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);

    // The server's own error result comes back as an error, and the session goes on.
    let refused = registry
        .execute(
            "3",
            "mcp__old__get-resource-reference",
            json!({"resourceId": -1}),
        )
        .await;
    assert!(
        refused.is_error && refused.text().contains("Invalid resourceId"),
        "{}",
        refused.text()
    );
    let sum = registry
        .execute("4", "mcp__old__get-sum", json!({"a": 2, "b": 3}))
        .await;
    assert!(sum.text().contains('5'), "{}", sum.text());
    clients.shutdown().await;
}

#[tokio::test]
async fn a_legacy_sse_server_killed_mid_session_is_reconnected_on_a_later_call() {
    let mut server = sse_everything(0);
    let port = server.port;
    let (clients, registry, _workspace) = start_one(sse_config("old", url(&server))).await;
    let first = registry
        .execute("1", "mcp__old__echo", json!({"message": "one"}))
        .await;
    assert_eq!(first.text(), "Echo: one");

    server.kill();
    // The closed stream counts as a stopped server: calls fail clearly until it is back.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let down = registry
        .execute("2", "mcp__old__echo", json!({"message": "down"}))
        .await;
    assert!(
        down.is_error && down.text().contains("'old'"),
        "{}",
        down.text()
    );

    let _server = sse_everything(port);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut attempt = 0;
    let last = loop {
        attempt += 1;
        let result = registry
            .execute(
                &format!("r{attempt}"),
                "mcp__old__echo",
                json!({"message": "two"}),
            )
            .await;
        if !result.is_error || Instant::now() > deadline {
            break result.text();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(last, "Echo: two");
    clients.shutdown().await;
}

#[tokio::test]
async fn an_sse_url_that_does_not_answer_fails_clearly_naming_the_server() {
    let workspace = tempfile::tempdir().unwrap();
    // Nothing listens on the first; the second accepts connections but never answers.
    let refused = sse_config("nobody", format!("http://127.0.0.1:{}/sse", free_port()));
    let silent_socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut silent = sse_config(
        "mute",
        format!("http://{}/sse", silent_socket.local_addr().unwrap()),
    );
    silent.startup_timeout = Duration::from_secs(1);
    let not_http = sse_config("ftp", "ftp://127.0.0.1/sse".to_owned());

    let started = Instant::now();
    let (clients, report) = McpClients::start([refused, silent, not_http], workspace.path()).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(report.started.is_empty(), "{report:?}");
    let messages: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].contains("'ftp'") && messages[0].contains("not an http:// or https:// URL"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("'mute'")
            && messages[1].contains("no `endpoint` event within 1s (startup_timeout)"),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].contains("'nobody'") && messages[2].contains("cannot connect to"),
        "{}",
        messages[2]
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn a_server_that_comes_up_after_the_client_is_retried_and_its_tools_added() {
    let port = free_port();
    let workspace = tempfile::tempdir().unwrap();
    let late = sse_config("late", format!("http://127.0.0.1:{port}/sse"));
    let (clients, report) = McpClients::start([late], workspace.path()).await;
    assert_eq!(report.failures.len(), 1, "{report:?}");

    let registry = Arc::new(ToolRegistry::builder().build());
    let mut changes = registry.subscribe_changes();
    clients.keep_in_sync(Arc::clone(&registry), |_| true);
    assert!(
        registry
            .names()
            .iter()
            .all(|name| !name.starts_with("mcp__"))
    );

    let _server = sse_everything(port);
    // Retries come after 1 s, 2 s, 4 s…: the server is up for the first or second.
    tokio::time::timeout(Duration::from_secs(30), async {
        while !registry.names().contains(&"mcp__late__echo".to_owned()) {
            changes.changed().await.unwrap();
        }
    })
    .await
    .expect("the late server's tools never joined the registry");
    assert!(clients.server_names().contains(&"late".to_owned()));
    let echo = registry
        .execute("1", "mcp__late__echo", json!({"message": "late"}))
        .await;
    assert_eq!(echo.text(), "Echo: late");
    clients.shutdown().await;
}

#[tokio::test]
async fn one_shot_start_does_not_retry_a_failed_server() {
    let port = free_port();
    let workspace = tempfile::tempdir().unwrap();
    let (clients, report) = McpClients::start(
        [sse_config("late", format!("http://127.0.0.1:{port}/sse"))],
        workspace.path(),
    )
    .await;
    assert_eq!(report.failures.len(), 1, "{report:?}");
    let _server = sse_everything(port);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(clients.server_names().is_empty());
    assert!(clients.tools().is_empty());
}
