//! The legacy SSE client against servers that misbehave on purpose: redirects to another
//! origin, an event without end (at start-up, and as the answer to a call), an endless error
//! body. Each server is a few lines of raw HTTP/1.1 written here on tokio, listening on
//! 127.0.0.1 and stopped when its test ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use toolhost_mcp::client::MAX_SSE_EVENT_BYTES;
use toolhost_mcp::{McpClients, McpServerConfig, McpTransport};

/// What a test server does with one request, given its head (request line and headers).
type Answer = Arc<dyn Fn(&str, TcpStream) -> tokio::task::JoinHandle<()> + Send + Sync>;

/// A raw HTTP server on 127.0.0.1 that keeps the head of every request; stopped when dropped.
struct TestServer {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    async fn start(answer: Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&heads);
        let task = tokio::spawn(async move {
            let mut connections = Vec::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                let Some(head) = read_head(&mut stream).await else {
                    continue;
                };
                seen.lock().unwrap().push(head.clone());
                connections.push(answer(&head, stream));
            }
        });
        Self { port, heads, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The request line and headers, up to the blank line (a body, if any, is left unread).
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// Writes `response`, then holds the connection open until the client goes. (One request per
/// connection: a response that the client may follow on the same connection says
/// `Connection: close`.)
fn reply(mut stream: TcpStream, response: Vec<u8>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if stream.write_all(&response).await.is_ok() {
            let mut rest = [0u8; 1024];
            while matches!(stream.read(&mut rest).await, Ok(n) if n > 0) {}
        }
    })
}

fn sse_config(url: String, headers: &[(&str, &str)], startup_secs: u64) -> McpServerConfig {
    let mut config = McpServerConfig::new(
        "hostile",
        McpTransport::Sse {
            url,
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect::<BTreeMap<_, _>>(),
            bearer_token_env: None,
        },
    );
    config.startup_timeout = Duration::from_secs(startup_secs);
    config
}

async fn start_failing(config: McpServerConfig) -> (Arc<McpClients>, String) {
    let workspace = tempfile::tempdir().unwrap();
    let (clients, report) = McpClients::start([config], workspace.path()).await;
    assert_eq!(report.failures.len(), 1, "{report:?}");
    (clients, report.failures[0].to_string())
}

#[tokio::test]
async fn headers_do_not_follow_a_redirect_to_another_origin() {
    let elsewhere = TestServer::start(Arc::new(|_, stream| {
        reply(
            stream,
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
        )
    }))
    .await;
    let target = elsewhere.url("/sse");
    let redirecting = TestServer::start(Arc::new(move |_, stream| {
        let response = format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n"
        );
        reply(stream, response.into_bytes())
    }))
    .await;
    let config = sse_config(
        redirecting.url("/sse"),
        &[("X-API-Key", "sekrit"), ("Authorization", "Bearer sekrit")],
        5,
    );
    let (clients, message) = start_failing(config).await;
    assert!(
        redirecting.heads()[0].contains("sekrit"),
        "{:?}",
        redirecting.heads()
    );
    assert!(
        elsewhere
            .heads()
            .iter()
            .all(|head| !head.contains("sekrit")),
        "the credentials reached the other origin: {:?}",
        elsewhere.heads()
    );
    assert!(
        message.contains("307") && message.contains(&elsewhere.url("/sse")),
        "{message}"
    );
    assert!(message.contains("same origin only"), "{message}");
    clients.shutdown().await;
}

#[tokio::test]
async fn a_same_origin_redirect_is_followed_and_the_endpoint_is_relative_to_where_it_led() {
    let server = TestServer::start(Arc::new(|head, stream| {
        let response: &[u8] = if head.starts_with("GET /old/sse ") {
            b"HTTP/1.1 301 Moved Permanently\r\nLocation: /v2/sse\r\nContent-Length: 0\r\n\
              Connection: close\r\n\r\n"
        } else if head.starts_with("GET /v2/sse ") {
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n\
              event: endpoint\ndata: messages?session=1\n\n"
        } else {
            // The handshake is posted here; its answer never comes on the stream.
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        };
        reply(stream, response.to_vec())
    }))
    .await;
    let (clients, message) = start_failing(sse_config(server.url("/old/sse"), &[], 2)).await;
    let posts: Vec<String> = server
        .heads()
        .iter()
        .filter_map(|head| head.lines().next())
        .filter(|line| line.starts_with("POST"))
        .map(str::to_owned)
        .collect();
    assert!(
        posts
            .iter()
            .any(|line| line.starts_with("POST /v2/messages?session=1 ")),
        "{posts:?} {message}"
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn an_event_over_the_size_limit_breaks_the_stream_naming_the_server_and_the_limit() {
    let server = TestServer::start(Arc::new(|_, stream| {
        // An `endpoint` event that never ends, one byte over the limit.
        let mut response =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: "
                .to_vec();
        response.resize(response.len() + MAX_SSE_EVENT_BYTES + 1, b'x');
        reply(stream, response)
    }))
    .await;
    let started = Instant::now();
    let (clients, message) = start_failing(sse_config(server.url("/sse"), &[], 60)).await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        message.contains("'hostile'")
            && message.contains("over 16 MiB")
            && message.contains("MAX_SSE_EVENT_BYTES"),
        "{message}"
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn an_endless_error_body_is_quoted_from_its_start() {
    let server = TestServer::start(Arc::new(|_, mut stream| {
        tokio::spawn(async move {
            let head = b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n";
            if stream.write_all(head).await.is_err() {
                return;
            }
            let chunk = format!("1000\r\n{}\r\n", "no luck ".repeat(512));
            // Until the client stops reading.
            while stream.write_all(chunk.as_bytes()).await.is_ok() {}
        })
    }))
    .await;
    let (clients, message) = start_failing(sse_config(server.url("/sse"), &[], 10)).await;
    assert!(
        message.contains("answered 500 Internal Server Error: no luck no luck"),
        "{message}"
    );
    assert!(message.chars().count() < 1000, "{message}");
    clients.shutdown().await;
}

/// A legacy SSE MCP server written out by hand: it opens the stream with its `endpoint`,
/// answers `initialize` and `tools/list` (one tool, `huge`) on the stream, and answers a call
/// of `huge` with an event that never ends, one byte over the limit.
fn scripted_server() -> Answer {
    let stream_slot: Arc<tokio::sync::Mutex<Option<TcpStream>>> = Arc::default();
    Arc::new(move |head, mut stream| {
        let stream_slot = Arc::clone(&stream_slot);
        let is_stream = head.starts_with("GET ");
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().ok())?
            })
            .unwrap_or(0);
        tokio::spawn(async move {
            if is_stream {
                let open = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n\
                             event: endpoint\ndata: /messages\n\n";
                if stream.write_all(open).await.is_ok() {
                    *stream_slot.lock().await = Some(stream);
                }
                return;
            }
            let mut body = vec![0u8; length];
            if stream.read_exact(&mut body).await.is_err() {
                return;
            }
            let accepted =
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(accepted).await;
            let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let id = message["id"].clone();
            let event = match message["method"].as_str() {
                Some("initialize") => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}}),
                Some("tools/list") => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                    "tools": [{"name": "huge", "inputSchema": {"type": "object"}}]}}),
                Some("tools/call") => {
                    let mut endless = b"event: message\ndata: ".to_vec();
                    endless.resize(endless.len() + MAX_SSE_EVENT_BYTES + 1, b'x');
                    if let Some(events) = stream_slot.lock().await.as_mut() {
                        let _ = events.write_all(&endless).await;
                    }
                    return;
                }
                _ => return,
            };
            if let Some(events) = stream_slot.lock().await.as_mut() {
                let text = format!("event: message\ndata: {event}\n\n");
                let _ = events.write_all(text.as_bytes()).await;
            }
        })
    })
}

#[tokio::test]
async fn a_call_whose_answer_breaks_the_size_limit_says_so() {
    let server = TestServer::start(scripted_server()).await;
    let workspace = tempfile::tempdir().unwrap();
    let (clients, report) =
        McpClients::start([sse_config(server.url("/sse"), &[], 10)], workspace.path()).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let registry = toolhost_core::ToolRegistry::builder().build();
    assert!(clients.register_into(&registry).is_empty());
    let result = registry
        .execute("1", "mcp__hostile__huge", serde_json::json!({}))
        .await;
    let text = result.text();
    assert!(result.is_error, "{text}");
    assert!(
        text.contains("'hostile'") && text.contains("over 16 MiB"),
        "the call says why the stream broke: {text}"
    );
    clients.shutdown().await;
}
