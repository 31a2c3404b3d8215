//! A scripted model server on 127.0.0.1: it answers each request with the next scripted
//! reply (canned SSE bytes, an error status, pauses, a dropped connection), records what it
//! was sent, and can hang up on new connections before reading them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use toolhost_providers::{Api, EventSink, ProviderConfig, RetryPolicy, StreamEvent, Timeouts};

/// One piece of a reply body.
#[derive(Clone, Debug)]
pub enum Piece {
    /// Bytes, written as one chunk.
    Bytes(Vec<u8>),
    /// A pause.
    Wait(Duration),
    /// The connection drops here (hyper sends what came before only if a `Wait` lets it
    /// flush first: with none, the client sees the connection close before any response).
    Drop,
}

/// The answer to one request.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    before_headers: Duration,
    pieces: Vec<Piece>,
}

impl Reply {
    /// 200 with an event stream of these bytes, sent in one piece.
    pub fn sse(bytes: impl Into<Vec<u8>>) -> Self {
        Self::sse_pieces(vec![Piece::Bytes(bytes.into())])
    }

    /// 200 with an event stream of these pieces.
    pub fn sse_pieces(pieces: Vec<Piece>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            before_headers: Duration::ZERO,
            pieces,
        }
    }

    /// 200 whose bytes come in pieces of `size` bytes, each its own write.
    pub fn sse_in_pieces(bytes: &[u8], size: usize) -> Self {
        let mut pieces = Vec::new();
        for chunk in bytes.chunks(size) {
            pieces.push(Piece::Bytes(chunk.to_vec()));
            pieces.push(Piece::Wait(Duration::from_millis(1)));
        }
        Self::sse_pieces(pieces)
    }

    /// An error status with a JSON body.
    pub fn status(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            before_headers: Duration::ZERO,
            pieces: vec![Piece::Bytes(body.to_string().into_bytes())],
        }
    }

    /// The same reply with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply, its headers sent only after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.before_headers = delay;
        self
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

struct Script {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
}

/// The running server; it stops with the test's runtime.
pub struct MockServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    script: Arc<Script>,
    hang_ups: Arc<AtomicUsize>,
}

impl MockServer {
    /// Starts a server that plays `replies` in order (a request past the end gets 418).
    pub async fn start(replies: Vec<Reply>) -> Self {
        let script = Arc::new(Script {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        });
        let hang_ups = Arc::new(AtomicUsize::new(0));
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let (forward, accepted) = mpsc::unbounded_channel();
        let pending_hang_ups = hang_ups.clone();
        tokio::spawn(async move {
            while let Ok((stream, peer)) = tcp.accept().await {
                let hang_up = pending_hang_ups
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if hang_up {
                    drop(stream);
                } else if forward.send((stream, peer)).is_err() {
                    break;
                }
            }
        });
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(script.clone());
        let listener = Forwarded { accepted, addr };
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{addr}"),
            script,
            hang_ups,
        }
    }

    /// Closes the next `count` new connections before reading anything from them.
    pub fn hang_up_on_next_connections(&self, count: usize) {
        self.hang_ups.store(count, Ordering::SeqCst);
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.requests.lock().unwrap().clone()
    }
}

struct Forwarded {
    accepted: mpsc::UnboundedReceiver<(TcpStream, SocketAddr)>,
    addr: SocketAddr,
}

impl axum::serve::Listener for Forwarded {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        match self.accepted.recv().await {
            Some(connection) => connection,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}

async fn answer(
    State(script): State<Arc<Script>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    script.requests.lock().unwrap().push(Recorded {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("?").to_owned()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let next = script.replies.lock().unwrap().pop_front();
    let Some(reply) = next else {
        return Response::builder()
            .status(StatusCode::IM_A_TEAPOT)
            .body(Body::from(
                r#"{"error":{"message":"no more replies scripted"}}"#,
            ))
            .unwrap();
    };
    tokio::time::sleep(reply.before_headers).await;
    let pieces = futures::stream::unfold(reply.pieces.into_iter(), |mut pieces| async move {
        loop {
            match pieces.next()? {
                Piece::Bytes(bytes) => return Some((Ok(Bytes::from(bytes)), pieces)),
                Piece::Wait(delay) => tokio::time::sleep(delay).await,
                Piece::Drop => {
                    let error = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "dropped");
                    return Some((Err(error), pieces));
                }
            }
        }
    });
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    response.body(Body::from_stream(pieces)).unwrap()
}

/// A sink that keeps every event, and the list it fills.
pub fn recorder() -> (EventSink, Arc<Mutex<Vec<StreamEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    (
        Arc::new(move |event| seen.lock().unwrap().push(event)),
        events,
    )
}

/// A configuration for the mock: quick retries, short timeouts, a key.
pub fn config(api: Api, server: &MockServer) -> ProviderConfig {
    let base = match api {
        Api::Anthropic => server.url.clone(),
        _ => format!("{}/v1", server.url),
    };
    let mut config = ProviderConfig::new("mock", api, base, "test-model").with_api_key("test-key");
    config.retry = RetryPolicy {
        max_attempts: 4,
        initial_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(50),
    };
    config.timeouts = Timeouts {
        connect: Duration::from_secs(5),
        first_byte: Duration::from_secs(10),
        idle: Duration::from_secs(10),
        request: Duration::from_secs(30),
    };
    config
}

/// Writes `(event name, data)` pairs as an event stream; an empty name writes `data:` only.
pub fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.into_bytes()
}

/// A chat-completions chunk with this delta.
pub fn chat_chunk(delta: Value, finish: Option<&str>) -> (&'static str, Value) {
    (
        "",
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

/// A whole chat-completions stream answering `text` in two pieces, with usage and `[DONE]`.
pub fn chat_text(text: &str) -> Vec<u8> {
    let (head, tail) = text.split_at(text.len() / 2);
    let mut bytes = sse(&[
        chat_chunk(json!({"role": "assistant", "content": ""}), None),
        chat_chunk(json!({"content": head}), None),
        chat_chunk(json!({"content": tail}), None),
        chat_chunk(json!({}), Some("stop")),
        (
            "",
            json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                   "prompt_tokens_details": {"cached_tokens": 8}}}),
        ),
    ]);
    bytes.extend_from_slice(b"data: [DONE]\n\n");
    bytes
}

/// An Anthropic stream answering `text`.
pub fn anthropic_text(text: &str) -> Vec<u8> {
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "model": "test-model",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 4}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// The text deltas among `events`, joined.
pub fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
