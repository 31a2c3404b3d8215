//! A scripted mock model server: one HTTP server on 127.0.0.1 that speaks one wire format and
//! plays a script of [`Step`]s, one per request, recording every request it gets.
//!
//! See the crate documentation for an example.

mod anthropic;
mod connection;
mod openai_chat;
mod responses;
mod script;
mod server;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::Value;

pub use script::{Fault, Reply, Step, Stop};

/// The `created` / `created_at` timestamp every response reports, so frames are reproducible.
const CREATED: u64 = 1_700_000_000;

/// A model API's wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// OpenAI chat completions, `POST /v1/chat/completions`.
    OpenAiChat,
    /// The OpenAI Responses API, `POST /v1/responses`.
    OpenAiResponses,
    /// Anthropic messages, `POST /v1/messages`.
    Anthropic,
}

impl WireFormat {
    /// The path requests of this format are posted to.
    pub fn path(self) -> &'static str {
        match self {
            Self::OpenAiChat => openai_chat::PATH,
            Self::OpenAiResponses => responses::PATH,
            Self::Anthropic => anthropic::PATH,
        }
    }

    /// The SSE frames of `reply` in this format (see [`sse_frames`]).
    fn stream_frames(self, reply: &Reply, context: &ResponseContext) -> Vec<String> {
        match self {
            Self::OpenAiChat => openai_chat::stream_frames(reply, context),
            Self::OpenAiResponses => responses::stream_frames(reply, context),
            Self::Anthropic => anthropic::stream_frames(reply, context),
        }
    }

    /// The non-streaming body of `reply` in this format.
    fn response_body(self, reply: &Reply, context: &ResponseContext) -> Value {
        match self {
            Self::OpenAiChat => openai_chat::response_body(reply, context),
            Self::OpenAiResponses => responses::response_body(reply, context),
            Self::Anthropic => anthropic::response_body(reply, context),
        }
    }

    /// The error event that ends a stream failing after `sent` events.
    fn stream_error_frame(self, reply: &Reply, context: &ResponseContext, sent: usize) -> String {
        match self {
            Self::OpenAiChat => openai_chat::stream_error_frame(),
            Self::OpenAiResponses => responses::stream_error_frame(reply, context, sent),
            Self::Anthropic => anthropic::stream_error_frame(),
        }
    }

    /// The status a non-streaming request gets where a stream would have failed.
    fn overloaded_status(self) -> u16 {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => 500,
            Self::Anthropic => 529,
        }
    }

    /// An error body in this format's shape.
    fn error_body(self, status: u16, message: &str) -> Value {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => openai_chat::error_body(status, message),
            Self::Anthropic => anthropic::error_body(status, message),
        }
    }
}

/// The SSE frames the server sends for `reply` as the answer to the first step of a script,
/// to a request with `"stream": true` (and, for chat completions,
/// `"stream_options": {"include_usage": true}`). Each string is one whole frame, blank line
/// included (`"event: ping\ndata: {\"type\": \"ping\"}\n\n"`); their concatenation is the
/// response body. Faults that shape the stream ([`Fault::SplitDeltas`],
/// [`Fault::NameAfterId`], [`Fault::InterleaveCalls`]) apply; the others act on the connection
/// and do not show here.
pub fn sse_frames(format: WireFormat, reply: &Reply) -> Vec<String> {
    format.stream_frames(reply, &ResponseContext::FIRST)
}

/// The JSON body the server sends for `reply` as the answer to the first step of a script, to
/// a request without `"stream": true`.
pub fn response_body(format: WireFormat, reply: &Reply) -> Value {
    format.response_body(reply, &ResponseContext::FIRST)
}

/// What a response depends on besides its [`Reply`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResponseContext {
    /// The 1-based position of the step in the script; ids are numbered by it
    /// (`chatcmpl-3`, `resp_3`, `msg_3`), so a retried step keeps its ids.
    pub(crate) number: usize,
    /// Chat completions only: the request asked for `stream_options.include_usage`.
    pub(crate) include_usage: bool,
}

impl ResponseContext {
    const FIRST: Self = Self {
        number: 1,
        include_usage: true,
    };
}

/// One SSE frame of a `data:` line only (chat completions).
pub(crate) fn data_frame(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// One SSE frame of an `event:` line and a `data:` line (Responses, Anthropic).
pub(crate) fn event_frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// One request the server received, recorded before it was answered.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// The HTTP method (`POST`).
    pub method: String,
    /// The path, without the query (`/v1/messages`).
    pub path: String,
    /// The headers, names lowercased; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON: `Null` when empty, a JSON string of the raw text when it is
    /// not JSON (the server answers 400 then).
    pub body: Value,
    /// The body as sent, byte for byte (lossy UTF-8), for what JSON equality cannot tell
    /// (the order of members, whitespace).
    pub raw_body: String,
}

impl RecordedRequest {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// A mock model server on `127.0.0.1`, playing a script in one wire format. Dropping it stops
/// the server (connections already open finish what they are sending).
///
/// It needs a Tokio runtime; under `#[tokio::test]`'s current-thread runtime it serves while
/// the test awaits.
#[derive(Debug)]
pub struct MockModel {
    address: SocketAddr,
    format: WireFormat,
    state: Arc<server::ServerState>,
    task: tokio::task::JoinHandle<()>,
}

impl MockModel {
    /// Starts a server for `format` on `127.0.0.1` and a free port, playing `script`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound: the test environment is broken then, and a test
    /// fixture has no better answer. [`MockModel::try_start`] returns the error instead.
    pub async fn start(format: WireFormat, script: impl IntoIterator<Item = Step>) -> MockModel {
        match Self::try_start(format, script).await {
            Ok(model) => model,
            Err(error) => panic!("mock model: cannot listen on 127.0.0.1: {error}"),
        }
    }

    /// Like [`MockModel::start`], returning the error when no loopback port can be bound.
    pub async fn try_start(
        format: WireFormat,
        script: impl IntoIterator<Item = Step>,
    ) -> std::io::Result<MockModel> {
        let state = Arc::new(server::ServerState::new(format, script));
        let (address, task) = server::spawn(Arc::clone(&state)).await?;
        Ok(MockModel {
            address,
            format,
            state,
            task,
        })
    }

    /// `http://127.0.0.1:PORT`: the base URL for Anthropic clients.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// `http://127.0.0.1:PORT/v1`: the base URL for OpenAI clients.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The wire format this server speaks.
    pub fn format(&self) -> WireFormat {
        self.format
    }

    /// Every request received so far, in order of arrival, those answered with an error
    /// included.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// How many steps are not yet played (a step whose drop fault fired counts until its clean
    /// retry has been played).
    pub fn remaining(&self) -> usize {
        self.state.remaining()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}
