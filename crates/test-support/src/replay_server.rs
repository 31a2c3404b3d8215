//! A server on 127.0.0.1 that replays canned HTTP responses byte for byte: each request gets
//! the next [`CannedResponse`] — a status, headers, and a body in [`BodyPiece`]s with pauses
//! and a dropped connection where the script says — and is recorded. It can also hang up on
//! new connections before reading them.
//!
//! Where [`MockModel`](crate::MockModel) speaks the wire formats, this speaks whatever bytes a
//! test writes: for a client's parser fed exact, odd or broken streams, and for its retries.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::RecordedRequest;

/// One piece of a reply body.
#[derive(Clone, Debug)]
pub enum BodyPiece {
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
pub struct CannedResponse {
    status: u16,
    headers: Vec<(String, String)>,
    before_headers: Duration,
    pieces: Vec<BodyPiece>,
}

impl CannedResponse {
    /// 200 with an event stream of these bytes, sent in one piece.
    pub fn sse(bytes: impl Into<Vec<u8>>) -> Self {
        Self::sse_pieces(vec![BodyPiece::Bytes(bytes.into())])
    }

    /// 200 with an event stream of these pieces.
    pub fn sse_pieces(pieces: Vec<BodyPiece>) -> Self {
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
            pieces.push(BodyPiece::Bytes(chunk.to_vec()));
            pieces.push(BodyPiece::Wait(Duration::from_millis(1)));
        }
        Self::sse_pieces(pieces)
    }

    /// An error status with a JSON body.
    pub fn status(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            before_headers: Duration::ZERO,
            pieces: vec![BodyPiece::Bytes(body.to_string().into_bytes())],
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

struct Script {
    replies: Mutex<VecDeque<CannedResponse>>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// The running server; it stops with the test's runtime.
pub struct ReplayServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    script: Arc<Script>,
    hang_ups: Arc<AtomicUsize>,
}

impl ReplayServer {
    /// Starts a server that plays `replies` in order (a request past the end gets 418).
    pub async fn start(replies: Vec<CannedResponse>) -> Self {
        let script = Arc::new(Script {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        });
        let hang_ups = Arc::new(AtomicUsize::new(0));
        let tcp = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("cannot listen on 127.0.0.1: {error}"));
        let addr = tcp
            .local_addr()
            .unwrap_or_else(|error| panic!("no local address: {error}"));
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
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.script.requests).clone()
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
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    lock(&script.requests).push(RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("?").to_owned()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw_body: String::from_utf8_lossy(&body).into_owned(),
    });
    let next = lock(&script.replies).pop_front();
    let Some(reply) = next else {
        return Response::builder()
            .status(StatusCode::IM_A_TEAPOT)
            .body(Body::from(
                r#"{"error":{"message":"no more replies scripted"}}"#,
            ))
            .unwrap_or_else(|error| panic!("cannot build the 418 response: {error}"));
    };
    tokio::time::sleep(reply.before_headers).await;
    let pieces = futures::stream::unfold(reply.pieces.into_iter(), |mut pieces| async move {
        loop {
            match pieces.next()? {
                BodyPiece::Bytes(bytes) => return Some((Ok(Bytes::from(bytes)), pieces)),
                BodyPiece::Wait(delay) => tokio::time::sleep(delay).await,
                BodyPiece::Drop => {
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
    response
        .body(Body::from_stream(pieces))
        .unwrap_or_else(|error| panic!("a canned response has a bad status or header: {error}"))
}

/// The value behind `mutex`, even if a test thread panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
