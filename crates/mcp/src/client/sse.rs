//! The legacy HTTP+SSE transport (protocol 2024-11-05), for which rmcp 3.11 has no client.
//!
//! The client opens one long-lived `GET` with `Accept: text/event-stream`. The server's first
//! event, `endpoint`, names the URI (usually relative, with a session id in its query) to which
//! every client message is then `POST`ed; the server's own messages (responses, progress,
//! `tools/list_changed`) come back as `message` events on the stream. Implementing rmcp's
//! [`Transport`] keeps everything above it (handshake, timeouts, progress, cancellation,
//! restarts) the same as for the other transports. With an OAuth login (`toolhost mcp login`)
//! every request carries its access token, refreshed before it expires and once more on a 401,
//! as Streamable HTTP does.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, LOCATION};
use reqwest::{Client, Response, StatusCode, Url, redirect};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::Sse;
use tokio::time::Instant;

use super::events::LastWords;
use super::oauth::bearer::{BearerTokens, Failure, bearer_challenge, send_with_token};
use super::transport_error::chain;

/// The largest event (all its lines) accepted on a server's SSE stream, in bytes. MCP results
/// can be large (a file, an image in base64), but an event without end would otherwise grow
/// in memory until toolhost is killed; a larger one breaks the stream, naming the server.
pub const MAX_SSE_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// How much of a refusal's body is read, in bytes: enough to say why, and a server that
/// answers with an endless body cannot make toolhost read it all.
const REFUSAL_BODY_BYTES: usize = 4 * 1024;

/// How much of a refusal's body an error message quotes, in characters.
const REFUSAL_EXCERPT_CHARS: usize = 300;

/// How long one `POST` of a message may take. A legacy server answers `202 Accepted` at once
/// and sends the result on the stream, so a slow `POST` means the server is stuck.
const POST_TIMEOUT: Duration = Duration::from_secs(30);

/// The most redirects (on the same origin) that one request follows.
const MAX_REDIRECTS: usize = 10;

type Events = BoxStream<'static, Result<Sse, sse_stream::Error>>;

/// A connected legacy SSE session: the open event stream and where to post messages.
pub(crate) struct SseClientTransport {
    poster: Poster,
    /// `None` once the stream ended or the transport was closed.
    events: Option<Events>,
    /// Where a broken stream's reason goes, for the calls that were waiting on it.
    last_words: Arc<LastWords>,
}

/// What sending needs; cloned into each send, which rmcp may run concurrently.
#[derive(Clone)]
struct Poster {
    server: Arc<str>,
    http: Client,
    endpoint: Url,
    headers: HeaderMap,
    tokens: Option<BearerTokens>,
}

/// Why a message could not be sent, or why the stream broke; the text names the server.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SseTransportError(String);

impl SseClientTransport {
    /// Opens the event stream of `url` and waits, until `deadline` (`startup_timeout` from
    /// the start), for its `endpoint` event. Every request carries `headers`, and the access
    /// token of `tokens` when there is a login. Why the stream broke, if it does, goes to
    /// `last_words`.
    pub(crate) async fn connect(
        server: &str,
        url: &str,
        headers: HeaderMap,
        tokens: Option<BearerTokens>,
        deadline: Instant,
        startup_timeout: Duration,
        last_words: Arc<LastWords>,
    ) -> Result<Self, String> {
        let stream_url = http_url(url, "SSE")?;
        // The configured headers (often credentials) must not go to another origin, and
        // reqwest's default policy would send them there: same-origin redirects only. The
        // stream may follow any of them; a `POST` only those that keep its body (307, 308).
        let client = |keeps_body_only| {
            Client::builder()
                .redirect(same_origin_redirects(keeps_body_only))
                .build()
                .map_err(|error| format!("cannot make an HTTP client: {}", chain(&error)))
        };
        let stream_http = client(false)?;
        let http = client(true)?;
        let opening = async {
            let response = send_with_token(tokens.as_ref(), || {
                stream_http
                    .get(stream_url.clone())
                    .headers(headers.clone())
                    .header(ACCEPT, "text/event-stream")
            })
            .await
            .map_err(|failure| match failure {
                Failure::Http(error) => format!("cannot connect to {url}: {}", chain(&error)),
                Failure::Token(reason) => reason,
            })?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && bearer_challenge(&response) {
                return Err(super::oauth::login_needed(server, url));
            }
            if !status.is_success() {
                return Err(format!("GET {url} {}", refusal(response).await));
            }
            // A relative endpoint is relative to where the stream is, after redirects.
            let final_url = response.url().clone();
            let mut events = limited_events(server, response);
            let endpoint = first_endpoint(&mut events)
                .await
                .map_err(|reason| format!("{url} {reason}"))?;
            Ok((events, final_url, endpoint))
        };
        let no_endpoint = |_| {
            format!(
                "{url} sent no `endpoint` event within {}s (startup_timeout); is it the SSE \
                 endpoint of a legacy MCP server (often /sse)? A Streamable HTTP server is \
                 configured with type = \"http\"",
                startup_timeout.as_secs()
            )
        };
        let (events, final_url, endpoint) = tokio::time::timeout_at(deadline, opening)
            .await
            .map_err(no_endpoint)??;
        let endpoint = final_url.join(endpoint.trim()).map_err(|error| {
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
                tokens,
            },
            events: Some(events),
            last_words,
        })
    }
}

/// Follows a redirect only to the origin of the first request (and, with `keeps_body_only`,
/// only a 307 or 308), up to [`MAX_REDIRECTS`]; otherwise the redirect is the answer.
fn same_origin_redirects(keeps_body_only: bool) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        let keeps_body = matches!(
            attempt.status(),
            StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
        );
        if !same_origin || (keeps_body_only && !keeps_body) {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The event stream of `response`, behind a count of each event's bytes that breaks the
/// stream on an event over [`MAX_SSE_EVENT_BYTES`] (the parser would buffer it whole).
fn limited_events(server: &str, response: Response) -> Events {
    let mut limit = EventSize::new(server, MAX_SSE_EVENT_BYTES);
    let server: Arc<str> = server.into();
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(|error| {
            SseTransportError(format!(
                "the SSE stream of the MCP server '{server}' broke: {}",
                chain(&error)
            ))
        })?;
        limit.feed(&chunk)?;
        Ok::<_, SseTransportError>(chunk)
    });
    sse_stream::SseStream::from_bytes_stream(bytes).boxed()
}

/// The bytes of the event being received, counted up to the blank line that ends it.
struct EventSize {
    server: Arc<str>,
    limit: usize,
    /// Bytes since the end of the last event.
    in_event: usize,
    /// Nothing but line ends since the last line end (or the start).
    line_empty: bool,
    /// The last byte was `\r`, so a `\n` right after belongs to the same line end.
    after_cr: bool,
}

impl EventSize {
    fn new(server: &str, limit: usize) -> Self {
        Self {
            server: server.into(),
            limit,
            in_event: 0,
            line_empty: true,
            after_cr: false,
        }
    }

    /// Counts `chunk`; `Err` once an event is over the limit.
    fn feed(&mut self, chunk: &[u8]) -> Result<(), SseTransportError> {
        let mut counted_from = 0;
        let mut scanned = 0;
        for at in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            if at > scanned {
                self.line_empty = false;
                self.after_cr = false;
            }
            scanned = at + 1;
            let byte = chunk[at];
            if byte == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = byte == b'\r';
            if self.line_empty {
                // A blank line: the event ends here.
                self.check(self.in_event + (at + 1 - counted_from))?;
                self.in_event = 0;
                counted_from = at + 1;
            } else {
                self.line_empty = true;
            }
        }
        if scanned < chunk.len() {
            self.line_empty = false;
            self.after_cr = false;
        }
        self.in_event += chunk.len() - counted_from;
        self.check(self.in_event)
    }

    fn check(&self, size: usize) -> Result<(), SseTransportError> {
        if size <= self.limit {
            return Ok(());
        }
        Err(SseTransportError(format!(
            "the MCP server '{}' sent an SSE event over {} MiB (MAX_SSE_EVENT_BYTES), so \
             toolhost closed its stream",
            self.server,
            self.limit / (1024 * 1024)
        )))
    }
}

/// What a stream error says: the limit's or the network's own message as it is.
fn stream_error(error: &sse_stream::Error) -> String {
    match error {
        sse_stream::Error::Body(cause) => cause.to_string(),
        other => format!("sent a malformed event stream: {other}"),
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
            Some(Err(error)) => return Err(stream_error(&error)),
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
                    let reason = stream_error(&error);
                    tracing::warn!(%server, "{reason}");
                    self.last_words.connection_broke(reason);
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
        let response = send_with_token(self.tokens.as_ref(), || {
            self.http
                .post(self.endpoint.clone())
                .headers(self.headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .timeout(POST_TIMEOUT)
                .body(body.clone())
        })
        .await
        .map_err(|failure| match failure {
            Failure::Http(error) => fail(format!("failed: {}", chain(&error))),
            Failure::Token(reason) => SseTransportError(reason),
        })?;
        if response.status().is_success() {
            return Ok(());
        }
        Err(fail(refusal(response).await))
    }
}

/// What a refusal says: its status, where a redirect that was not followed leads, and the
/// start of its body.
async fn refusal(response: Response) -> String {
    let status = response.status();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(LOCATION)
            .and_then(|location| location.to_str().ok())
            .unwrap_or("(no Location)")
            .to_owned();
        return format!(
            "answered {status}, a redirect to {to} that toolhost does not follow: it follows \
             redirects on the same origin only (for a POST only 307 and 308), so that headers \
             go nowhere else. Configure the URL it redirects to"
        );
    }
    format!("answered {status}: {}", excerpt(response).await)
}

/// The start of a refusal's body, which usually says why; at most [`REFUSAL_BODY_BYTES`] are
/// read.
async fn excerpt(mut response: Response) -> String {
    let mut body = Vec::new();
    while body.len() < REFUSAL_BODY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    let cut_short = body.len() > REFUSAL_BODY_BYTES;
    body.truncate(REFUSAL_BODY_BYTES);
    let body = String::from_utf8_lossy(&body);
    let body = body.trim();
    if body.is_empty() {
        return "(no body)".to_owned();
    }
    let mut cut: String = body.chars().take(REFUSAL_EXCERPT_CHARS).collect();
    if cut_short || cut.len() < body.len() {
        cut.push('…');
    }
    cut
}

/// `url` parsed, when it is `http://` or `https://`.
pub(super) fn http_url(url: &str, kind: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|error| format!("'{url}' is not a URL: {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "'{url}' is not an http:// or https:// URL, which the {} transport needs",
            kind.to_uppercase()
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn fits(limit: usize, chunks: &[&[u8]]) -> bool {
        let mut size = EventSize::new("s", limit);
        chunks.iter().all(|chunk| size.feed(chunk).is_ok())
    }

    #[test]
    fn each_event_is_counted_up_to_its_blank_line_whatever_the_line_ends() {
        // Three events of 10 bytes each ("data: abc" and its line end) fit a limit of 11.
        for end in ["\n", "\r\n", "\r"] {
            let event = format!("data: abc{end}{end}");
            let stream = event.repeat(3);
            assert!(fits(event.len(), &[stream.as_bytes()]), "{end:?}");
            // The same, cut at every byte, including between \r and \n.
            let bytes = stream.as_bytes();
            let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
            assert!(fits(event.len(), &chunks), "{end:?} byte by byte");
            assert!(!fits(event.len() - 1, &[bytes]), "{end:?} over the limit");
        }
        // One long event, however it is cut, breaks the limit; the error names the server.
        let long = "data: x\n".repeat(10);
        assert!(!fits(40, &[&long.as_bytes()[..30], &long.as_bytes()[30..]]));
        let error = EventSize::new("big", 1024 * 1024)
            .feed(&vec![b'x'; 1024 * 1024 + 1])
            .unwrap_err();
        assert!(
            error.0.contains("'big'") && error.0.contains("over 1 MiB"),
            "{error}"
        );
    }
}
