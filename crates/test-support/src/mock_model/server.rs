//! The HTTP side: one axum fallback handler records each request, takes the next step of the
//! script and answers it, injecting the step's faults into the connection.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::connection::{ConnectionCut, CuttableListener};
use super::script::{Fault, Reply, Step};
use super::{RecordedRequest, ResponseContext, WireFormat};

/// The largest request body read; a conversation bigger than this is not a test.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// How long a stream that is about to be dropped pauses first, so the events before the cut
/// leave the server's buffers and reach the client.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(30);

/// Binds `127.0.0.1:0` and serves `state` on a task of its own.
pub(crate) async fn spawn(state: Arc<ServerState>) -> io::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    let service = Router::new()
        .fallback(answer)
        .with_state(state)
        .into_make_service_with_connect_info::<ConnectionCut>();
    let task = tokio::spawn(async move {
        // `serve` only returns when the listener fails for good, and ours retries every
        // failed accept: there is nothing to report here.
        let _ = axum::serve(CuttableListener { inner: listener }, service).await;
    });
    Ok((address, task))
}

/// The script and the requests, shared by the handler and the [`MockModel`](super::MockModel).
#[derive(Debug)]
pub(crate) struct ServerState {
    format: WireFormat,
    script: Mutex<Script>,
}

#[derive(Debug)]
struct Script {
    steps: VecDeque<Step>,
    /// Steps played to the end; the next step's number is one more.
    consumed: usize,
    /// Requests that took a step (a dropped attempt and its retry count twice).
    answered: usize,
    requests: Vec<RecordedRequest>,
}

/// What the handler does with one request.
enum Play {
    /// The request is not `POST` on the format's path.
    WrongPath,
    /// The body is not JSON.
    BadJson(String),
    /// No step is left.
    Exhausted { answered: usize },
    /// An error status.
    Fail {
        status: u16,
        retry_after: Option<u64>,
        message: String,
    },
    /// A reply, maybe with the one-shot fault that breaks this attempt.
    Respond {
        reply: Reply,
        number: usize,
        one_shot: Option<Fault>,
    },
}

impl ServerState {
    pub(crate) fn new(format: WireFormat, script: impl IntoIterator<Item = Step>) -> Self {
        Self {
            format,
            script: Mutex::new(Script {
                steps: script.into_iter().collect(),
                consumed: 0,
                answered: 0,
                requests: Vec::new(),
            }),
        }
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    pub(crate) fn remaining(&self) -> usize {
        self.lock().steps.len()
    }

    /// A test that panicked while holding the lock leaves the script as it was: still usable.
    fn lock(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `request`, then decides how to answer it, taking a step when it is one for the
    /// script.
    fn record_and_take(&self, request: RecordedRequest, json_error: Option<String>) -> Play {
        let on_path = request.method == Method::POST.as_str() && request.path == self.format.path();
        let mut script = self.lock();
        script.requests.push(request);
        if !on_path {
            return Play::WrongPath;
        }
        if let Some(error) = json_error {
            return Play::BadJson(error);
        }
        let Some(step) = script.steps.pop_front() else {
            return Play::Exhausted {
                answered: script.answered,
            };
        };
        script.answered += 1;
        let number = script.consumed + 1;
        match step {
            Step::Fail {
                status,
                retry_after,
                body,
            } => {
                script.consumed += 1;
                Play::Fail {
                    status,
                    retry_after,
                    message: body,
                }
            }
            Step::Respond(reply) => match reply.take_one_shot() {
                Some((one_shot, rest)) => {
                    script.steps.push_front(Step::Respond(rest.clone()));
                    Play::Respond {
                        reply: rest,
                        number,
                        one_shot: Some(one_shot),
                    }
                }
                None => {
                    script.consumed += 1;
                    Play::Respond {
                        reply,
                        number,
                        one_shot: None,
                    }
                }
            },
        }
    }
}

/// The one handler: every method, every path.
async fn answer(
    State(state): State<Arc<ServerState>>,
    ConnectInfo(cut): ConnectInfo<ConnectionCut>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let (body, raw_body, json_error) = match to_bytes(body, MAX_REQUEST_BYTES).await {
        Ok(bytes) => {
            let (body, json_error) = parse_body(&bytes);
            (
                body,
                String::from_utf8_lossy(&bytes).into_owned(),
                json_error,
            )
        }
        Err(error) => (
            Value::Null,
            String::new(),
            Some(format!("cannot read the body: {error}")),
        ),
    };
    let stream = body.get("stream") == Some(&Value::Bool(true));
    let include_usage = body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: header_map(&parts.headers),
        body,
        raw_body,
    };
    let format = state.format;
    let asked = format!("{} {}", recorded.method, recorded.path);
    match state.record_and_take(recorded, json_error) {
        Play::WrongPath => error(
            format,
            404,
            None,
            &format!(
                "mock model: this server speaks {format:?}; POST to {}, not {asked}",
                format.path()
            ),
        ),
        Play::BadJson(reason) => error(
            format,
            400,
            None,
            &format!("mock model: the body is not JSON: {reason}"),
        ),
        Play::Exhausted { answered } => error(
            format,
            500,
            None,
            &format!("mock model: script exhausted after {answered} requests"),
        ),
        Play::Fail {
            status,
            retry_after,
            message,
        } => error(format, status, retry_after, &message),
        Play::Respond {
            reply,
            number,
            one_shot,
        } => {
            if let Some(delay) = reply.first_byte_delay() {
                tokio::time::sleep(delay).await;
            }
            let context = ResponseContext {
                number,
                include_usage,
            };
            let mut cut_after = None;
            match one_shot {
                Some(Fault::DropBeforeFirstByte) => {
                    cut.cut();
                    return Response::new(Body::empty());
                }
                Some(Fault::DropMidStream { after_events }) => cut_after = Some(after_events),
                Some(Fault::StreamError { after_events }) if stream => {
                    let mut frames = format.stream_frames(&reply, &context);
                    frames.truncate(after_events);
                    let sent = frames.len();
                    frames.push(format.stream_error_frame(&reply, &context, sent));
                    return stream_response(frames, reply.delay_per_event, None, cut);
                }
                Some(Fault::StreamError { .. }) => {
                    let message = "mock model: the server failed";
                    return error(format, format.overloaded_status(), None, message);
                }
                _ => {}
            }
            if stream {
                let frames = format.stream_frames(&reply, &context);
                stream_response(frames, reply.delay_per_event, cut_after, cut)
            } else {
                let body = format.response_body(&reply, &context).to_string();
                json_response(body, cut_after.is_some(), cut)
            }
        }
    }
}

/// The body as JSON, or the raw text as a JSON string and why it is not JSON.
fn parse_body(bytes: &[u8]) -> (Value, Option<String>) {
    if bytes.is_empty() {
        return (Value::Null, None);
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => (value, None),
        Err(error) => (
            Value::String(String::from_utf8_lossy(bytes).into_owned()),
            Some(error.to_string()),
        ),
    }
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut map = BTreeMap::<String, String>::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        map.entry(name.as_str().to_owned())
            .and_modify(|joined| {
                joined.push_str(", ");
                joined.push_str(&value);
            })
            .or_insert_with(|| value.into_owned());
    }
    map
}

/// An error status with its body in `format`'s shape.
fn error(format: WireFormat, status: u16, retry_after: Option<u64>, message: &str) -> Response {
    let mut response = Response::new(Body::from(format.error_body(status, message).to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    if let Some(seconds) = retry_after {
        headers.insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
    }
    response
}

/// What the body stream does next.
enum Emit {
    Bytes(String),
    Pause(Duration),
    /// Close the connection without ending the response.
    Cut,
}

/// A streamed body playing `emits`; after a [`Emit::Cut`] nothing more is sent.
fn streamed_body(emits: Vec<Emit>, cut: ConnectionCut) -> Body {
    let chunks = futures::stream::iter(emits)
        .then(move |emit| {
            let cut = cut.clone();
            async move {
                match emit {
                    Emit::Bytes(bytes) => Some(Ok(bytes)),
                    Emit::Pause(delay) => {
                        tokio::time::sleep(delay).await;
                        None
                    }
                    Emit::Cut => {
                        tokio::time::sleep(FLUSH_BEFORE_CUT).await;
                        cut.cut();
                        Some(Err(io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            "mock model: stream dropped by the script",
                        )))
                    }
                }
            }
        })
        .filter_map(std::future::ready);
    Body::from_stream(chunks)
}

/// An SSE response of `frames`, paced by `delay` and cut after `cut_after` frames.
fn stream_response(
    frames: Vec<String>,
    delay: Option<Duration>,
    cut_after: Option<usize>,
    cut: ConnectionCut,
) -> Response {
    let mut emits = Vec::new();
    for (sent, frame) in frames.into_iter().enumerate() {
        if cut_after == Some(sent) {
            break;
        }
        if let Some(delay) = delay.filter(|_| sent > 0) {
            emits.push(Emit::Pause(delay));
        }
        emits.push(Emit::Bytes(frame));
    }
    if cut_after.is_some() {
        emits.push(Emit::Cut);
    }
    let mut response = Response::new(streamed_body(emits, cut));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    response
}

/// A JSON response of `body`; with `drop_half`, only its first half is sent before the
/// connection closes.
fn json_response(body: String, drop_half: bool, cut: ConnectionCut) -> Response {
    let mut response = if drop_half {
        let mut half = body.len() / 2;
        while !body.is_char_boundary(half) {
            half -= 1;
        }
        let emits = vec![Emit::Bytes(body[..half].to_owned()), Emit::Cut];
        Response::new(streamed_body(emits, cut))
    } else {
        Response::new(Body::from(body))
    };
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}
