//! The legacy HTTP+SSE transport (protocol 2024-11-05), for which rmcp 3.11 has no client.
//!
//! The client opens one long-lived `GET` with `Accept: text/event-stream`. The server's first
//! event, `endpoint`, names the URI (usually relative, with a session id in its query) to which
//! every client message is then `POST`ed; the server's own messages (responses, progress,
//! `tools/list_changed`) come back as `message` events on the stream. Implementing rmcp's
//! [`Transport`] keeps everything above it (handshake, timeouts, progress, cancellation,
//! restarts) the same as for the other transports.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Url};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::Sse;
use tokio::time::Instant;

/// How much of a refusal's body an error message quotes, in characters.
const REFUSAL_EXCERPT_CHARS: usize = 300;

/// How long one `POST` of a message may take. A legacy server answers `202 Accepted` at once
/// and sends the result on the stream, so a slow `POST` means the server is stuck.
const POST_TIMEOUT: Duration = Duration::from_secs(30);

type Events = BoxStream<'static, Result<Sse, sse_stream::Error>>;

/// A connected legacy SSE session: the open event stream and where to post messages.
pub(crate) struct SseClientTransport {
    poster: Poster,
    /// `None` once the stream ended or the transport was closed.
    events: Option<Events>,
}

/// What sending needs; cloned into each send, which rmcp may run concurrently.
#[derive(Clone)]
struct Poster {
    server: Arc<str>,
    http: Client,
    endpoint: Url,
    headers: HeaderMap,
}

/// Why a message could not be sent; the text names the server and the endpoint.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SseTransportError(String);

impl SseClientTransport {
    /// Opens the event stream of `url` and waits, until `deadline` (`startup_timeout` from
    /// the start), for its `endpoint` event.
    pub(crate) async fn connect(
        server: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        deadline: Instant,
        startup_timeout: Duration,
    ) -> Result<Self, String> {
        let stream_url =
            Url::parse(url).map_err(|error| format!("'{url}' is not a URL: {error}"))?;
        if !matches!(stream_url.scheme(), "http" | "https") {
            return Err(format!(
                "'{url}' is not an http:// or https:// URL, which the SSE transport needs"
            ));
        }
        let headers = header_map(headers)?;
        let http = Client::builder()
            .build()
            .map_err(|error| format!("cannot make an HTTP client: {}", chain(&error)))?;
        let opening = async {
            let response = http
                .get(stream_url.clone())
                .headers(headers.clone())
                .header(ACCEPT, "text/event-stream")
                .send()
                .await
                .map_err(|error| format!("cannot connect to {url}: {}", chain(&error)))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!(
                    "GET {url} answered {status}: {}",
                    excerpt(response).await
                ));
            }
            let mut events: Events =
                sse_stream::SseStream::from_bytes_stream(response.bytes_stream()).boxed();
            let endpoint = first_endpoint(&mut events)
                .await
                .map_err(|reason| format!("{url} {reason}"))?;
            Ok((events, endpoint))
        };
        let no_endpoint = |_| {
            format!(
                "{url} sent no `endpoint` event within {}s (startup_timeout); is it the SSE \
                 endpoint of a legacy MCP server (often /sse)? A Streamable HTTP server is \
                 configured with type = \"http\"",
                startup_timeout.as_secs()
            )
        };
        let (events, endpoint) = tokio::time::timeout_at(deadline, opening)
            .await
            .map_err(no_endpoint)??;
        let endpoint = stream_url.join(endpoint.trim()).map_err(|error| {
            format!("{url} gave the endpoint '{endpoint}', which is not a URI: {error}")
        })?;
        // The configured headers (often credentials) must not go to another origin.
        if endpoint.origin() != stream_url.origin() {
            return Err(format!(
                "{url} gave the endpoint {endpoint}, on another origin; toolhost posts only to \
                 the origin it was configured with"
            ));
        }
        tracing::debug!(server, %endpoint, "legacy SSE session open");
        Ok(Self {
            poster: Poster {
                server: server.into(),
                http,
                endpoint,
                headers,
            },
            events: Some(events),
        })
    }
}

/// The data of the stream's first `endpoint` event; `message` events cannot come before it,
/// since the client has not posted anything yet.
async fn first_endpoint(events: &mut Events) -> Result<String, String> {
    loop {
        match events.next().await {
            Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                return event
                    .data
                    .ok_or_else(|| "sent an `endpoint` event without data".to_owned());
            }
            Some(Ok(_)) => {}
            Some(Err(error)) => return Err(format!("sent a malformed event stream: {error}")),
            None => return Err("closed its event stream before the `endpoint` event".to_owned()),
        }
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let poster = self.poster.clone();
        async move { poster.post(&item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let server = &self.poster.server;
        loop {
            let next = self.events.as_mut()?.next().await;
            let event = match next {
                Some(Ok(event)) => event,
                // The stream ending is the server stopping: rmcp then closes the session,
                // and the next call starts it again.
                Some(Err(error)) => {
                    tracing::warn!(%server, "the MCP server's SSE stream broke: {error}");
                    self.events = None;
                    return None;
                }
                None => {
                    tracing::info!(%server, "the MCP server closed its SSE stream");
                    self.events = None;
                    return None;
                }
            };
            // An event without a type is a `message` (the SSE default); comments and
            // keep-alives carry no data.
            if event.event.as_deref().is_some_and(|kind| kind != "message") {
                continue;
            }
            let Some(data) = event.data else {
                continue;
            };
            match serde_json::from_str(&data) {
                Ok(message) => return Some(message),
                Err(error) => {
                    tracing::warn!(%server, "ignoring an SSE message that is not JSON-RPC: {error}");
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        // Dropping the response ends the GET, which ends the session on the server.
        self.events = None;
        std::future::ready(Ok(()))
    }
}

impl Poster {
    async fn post(&self, message: &TxJsonRpcMessage<RoleClient>) -> Result<(), SseTransportError> {
        let fail = |reason: String| {
            SseTransportError(format!(
                "the MCP server '{}' did not take a message: POST {} {reason}",
                self.server, self.endpoint
            ))
        };
        let body = serde_json::to_vec(message)
            .map_err(|error| fail(format!("(the message is not JSON: {error})")))?;
        let response = self
            .http
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .timeout(POST_TIMEOUT)
            .body(body)
            .send()
            .await
            .map_err(|error| fail(format!("failed: {}", chain(&error))))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        Err(fail(format!(
            "answered {status}: {}",
            excerpt(response).await
        )))
    }
}

fn header_map(headers: &BTreeMap<String, String>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|error| format!("the header name '{name}': {error}"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|error| format!("the value of header '{name}': {error}"))?;
        map.insert(header, value);
    }
    Ok(map)
}

/// The start of a refusal's body, which usually says why.
async fn excerpt(response: reqwest::Response) -> String {
    let body = response.text().await.unwrap_or_default();
    let body = body.trim();
    if body.is_empty() {
        return "(no body)".to_owned();
    }
    let mut cut: String = body.chars().take(REFUSAL_EXCERPT_CHARS).collect();
    if cut.len() < body.len() {
        cut.push('…');
    }
    cut
}

/// An error and its causes, each message once: reqwest's own message rarely says more than
/// "error sending request", the cause ("Connection refused", a certificate that does not
/// verify) is in its sources, and wrappers often repeat their cause's text.
pub(super) fn chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}
