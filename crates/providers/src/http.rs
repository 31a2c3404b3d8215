//! The one HTTP client behind every wire format: it sends the request, applies the named
//! timeouts, reads the event stream into a response, and retries what is worth retrying.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use reqwest::{Client, Response, Url};
use tokio::time::{Instant, sleep, timeout, timeout_at};
use tokio_util::sync::CancellationToken;
use toolhost_core::ToolSpec;
use toolhost_core::conversation::AssistantMessage;

use crate::accumulate::{Emitter, ResponseBuilder};
use crate::config::ProviderConfig;
use crate::provider::{
    DeferredLoading, EventSink, ModelProvider, ModelRequest, ProviderError, StreamEvent,
};
use crate::retry::{delay_before, retryable_status, server_delay};
use crate::sse::SseDecoder;
use crate::stream_format::{Progress, StreamFailure};
use crate::wire;

/// How much of an error response's body is read for its message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// How much of an unreadable error body is quoted.
const MAX_QUOTED_BODY: usize = 500;

/// A provider speaking one of the wire formats over HTTP.
pub(crate) struct HttpProvider {
    config: ProviderConfig,
    url: Url,
    headers: HeaderMap,
    client: Client,
    tools: RenderedTools,
}

/// The last tool set sent, with its definitions as JSON text: a loop offers the same set every
/// turn, and rendering it (every schema copied into a `Value`, then written) was most of what
/// a turn cost the loop itself. Keyed by the `Arc`'s identity; holding the `Arc` keeps that
/// address from being reused by another set.
#[derive(Default)]
struct RenderedTools(Mutex<Option<Rendered>>);

/// A tool set, the names of its deferred tools, and its definitions' JSON text.
type Rendered = (Arc<[ToolSpec]>, Arc<BTreeSet<String>>, Arc<str>);

impl RenderedTools {
    fn get(&self, config: &ProviderConfig, request: &ModelRequest) -> Option<Arc<str>> {
        let (tools, deferred) = (&request.tools, &request.deferred_tools);
        if tools.is_empty() {
            return None;
        }
        let mut last = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((set, flagged, json)) = last.as_ref()
            && Arc::ptr_eq(set, tools)
            && Arc::ptr_eq(flagged, deferred)
        {
            return Some(Arc::clone(json));
        }
        let json: Arc<str> = wire::tools_json(config, tools, deferred).into();
        *last = Some((Arc::clone(tools), Arc::clone(deferred), Arc::clone(&json)));
        Some(json)
    }
}

/// What to do after a failed attempt.
#[derive(Debug)]
enum Retry {
    /// Give up.
    Never,
    /// Try again after a backoff, or after the server's delay if it gave one.
    Backoff(Option<Duration>),
    /// The stream broke after it began: start the response again (once).
    Restart,
}

/// A failed attempt.
#[derive(Debug)]
struct Failure {
    error: ProviderError,
    retry: Retry,
}

impl HttpProvider {
    /// Checks the configuration and builds the client.
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let url = endpoint(&config)?;
        let headers = wire::headers(&config)?;
        if config.model.trim().is_empty() {
            return Err(ProviderError::Config(format!(
                "provider `{}` names no model",
                config.name
            )));
        }
        let mut client = Client::builder().connect_timeout(config.timeouts.connect);
        if !needs_tls_roots(&url) {
            // Loading the system's root certificates reads and parses every file of
            // /etc/ssl/certs: ~20 ms, most of a run's start-up, for nothing when the server
            // is a plain-http one (a local model). A redirect to https then fails to verify.
            client = client.tls_certs_only(std::iter::empty());
        }
        let client = client.build().map_err(|error| {
            ProviderError::Config(format!(
                "provider `{}`: cannot build an HTTP client: {error}",
                config.name
            ))
        })?;
        Ok(Self {
            config,
            url,
            headers,
            client,
            tools: RenderedTools::default(),
        })
    }

    fn provider(&self) -> String {
        self.config.name.clone()
    }

    fn failure(&self, retry: Retry, message: impl Into<String>) -> Failure {
        Failure {
            error: ProviderError::Connection {
                provider: self.provider(),
                message: message.into(),
            },
            retry,
        }
    }

    fn timed_out(&self, which: &'static str, after: Duration, retry: Retry) -> Failure {
        Failure {
            error: ProviderError::Timeout {
                provider: self.provider(),
                which,
                after,
            },
            retry,
        }
    }

    /// One request and its response, start to end.
    async fn attempt(&self, body: &[u8], out: &mut Emitter) -> Result<AssistantMessage, Failure> {
        let timeouts = self.config.timeouts;
        let first_byte_deadline = Instant::now() + timeouts.first_byte;
        let send = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body.to_vec())
            .send();
        let response = match timeout_at(first_byte_deadline, send).await {
            Err(_) => {
                return Err(self.timed_out(
                    "first byte",
                    timeouts.first_byte,
                    Retry::Backoff(None),
                ));
            }
            Ok(Err(error)) if error.is_connect() && error.is_timeout() => {
                return Err(self.timed_out("connect", timeouts.connect, Retry::Backoff(None)));
            }
            Ok(Err(error)) => {
                return Err(self.failure(Retry::Backoff(None), describe(&error)));
            }
            Ok(Ok(response)) => response,
        };
        if !response.status().is_success() {
            return Err(self.status_failure(response).await);
        }
        if let Some(kind) = response.headers().get(CONTENT_TYPE)
            && kind.to_str().is_ok_and(|kind| kind.contains("json"))
        {
            let text = read_capped(response, timeouts.idle).await;
            return Err(Failure {
                error: ProviderError::Protocol {
                    provider: self.provider(),
                    message: format!(
                        "expected an event stream, got JSON (does the server stream?): {}",
                        quote(&text)
                    ),
                },
                retry: Retry::Never,
            });
        }

        self.read_stream(response, first_byte_deadline, out).await
    }

    /// Reads the event stream of an accepted response into a message.
    async fn read_stream(
        &self,
        response: Response,
        first_byte_deadline: Instant,
        out: &mut Emitter,
    ) -> Result<AssistantMessage, Failure> {
        let idle = self.config.timeouts.idle;
        let mut chunks = response.bytes_stream();
        let mut sse = SseDecoder::default();
        let mut decoder = wire::decoder(self.config.api);
        let mut builder = ResponseBuilder::default();
        let mut begun = false;
        loop {
            let next = if begun {
                timeout(idle, chunks.next()).await
            } else {
                timeout_at(first_byte_deadline, chunks.next()).await
            };
            let (events, ended) = match next {
                Err(_) if begun => return Err(self.timed_out("idle", idle, Retry::Restart)),
                Err(_) => {
                    let after = self.config.timeouts.first_byte;
                    return Err(self.timed_out("first byte", after, Retry::Backoff(None)));
                }
                Ok(Some(Ok(bytes))) => {
                    begun |= !bytes.is_empty();
                    (sse.push(&bytes), false)
                }
                Ok(Some(Err(error))) => {
                    let retry = if begun {
                        Retry::Restart
                    } else {
                        Retry::Backoff(None)
                    };
                    let message = format!("the stream broke: {}", describe(&error));
                    return Err(self.failure(retry, message));
                }
                Ok(None) => (sse.finish().into_iter().collect(), true),
            };
            for event in &events {
                let progress = decoder
                    .event(event, &mut builder, out)
                    .map_err(|failure| self.stream_failure(failure))?;
                if progress == Progress::Done {
                    return Ok(builder.finish());
                }
            }
            if ended {
                return if decoder.complete_without_end() {
                    Ok(builder.finish())
                } else if begun {
                    let message = "the stream ended before the response was complete";
                    Err(self.failure(Retry::Restart, message))
                } else {
                    let message = "the server closed the response before its first byte";
                    Err(self.failure(Retry::Backoff(None), message))
                };
            }
        }
    }

    fn stream_failure(&self, failure: StreamFailure) -> Failure {
        match failure {
            StreamFailure::Protocol(message) => Failure {
                error: ProviderError::Protocol {
                    provider: self.provider(),
                    message,
                },
                retry: Retry::Never,
            },
            StreamFailure::Server { message, retryable } => Failure {
                error: ProviderError::Server {
                    provider: self.provider(),
                    message,
                },
                retry: if retryable {
                    Retry::Backoff(None)
                } else {
                    Retry::Never
                },
            },
        }
    }

    /// The failure an error status describes, with the server's message.
    async fn status_failure(&self, response: Response) -> Failure {
        let status = response.status();
        let retry = if retryable_status(status) {
            Retry::Backoff(server_delay(response.headers(), SystemTime::now()))
        } else {
            Retry::Never
        };
        let body = read_capped(response, self.config.timeouts.idle).await;
        Failure {
            error: ProviderError::Status {
                provider: self.provider(),
                status: status.as_u16(),
                message: error_message(&body).unwrap_or_else(|| {
                    status.canonical_reason().unwrap_or("no message").to_owned()
                }),
            },
            retry,
        }
    }
}

#[async_trait::async_trait]
impl ModelProvider for HttpProvider {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn context_window(&self) -> Option<u64> {
        self.config.context_window
    }

    fn deferred_loading(&self) -> DeferredLoading {
        if wire::native_deferral(&self.config) {
            DeferredLoading::Native
        } else {
            DeferredLoading::Injected
        }
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        events: EventSink,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError> {
        let tools = self.tools.get(&self.config, request);
        let body = wire::encode(&wire::body(&self.config, request), tools.as_deref());
        let body = body.map_err(|error| ProviderError::Protocol {
            provider: self.provider(),
            message: format!("cannot write the request: {error}"),
        })?;
        let policy = self.config.retry;
        let request_timeout = self.config.timeouts.request;
        let mut out = Emitter::new(events);
        let mut attempt = 0;
        let mut restarted = false;
        loop {
            attempt += 1;
            out.reset();
            out.notice(StreamEvent::RequestSent { attempt });
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                result = timeout(request_timeout, self.attempt(&body, &mut out)) => result,
            };
            let failure = match result {
                Ok(Ok(message)) => return Ok(message),
                Ok(Err(failure)) => failure,
                Err(_) => {
                    return Err(ProviderError::Timeout {
                        provider: self.provider(),
                        which: "request",
                        after: request_timeout,
                    });
                }
            };
            tracing::debug!(provider = %self.config.name, attempt, error = %failure.error, retry = ?failure.retry, "model request failed");
            match failure.retry {
                Retry::Restart if !restarted && policy.max_attempts > 1 => {
                    restarted = true;
                    out.notice(StreamEvent::Restarted);
                }
                Retry::Backoff(server) if attempt < policy.max_attempts => {
                    if out.emitted_content() {
                        out.notice(StreamEvent::Restarted);
                    }
                    let delay = delay_before(&policy, attempt + 1, server);
                    out.notice(StreamEvent::RetryScheduled {
                        attempt: attempt + 1,
                        delay,
                        reason: failure.error.to_string(),
                    });
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                        () = sleep(delay) => {}
                    }
                }
                Retry::Never | Retry::Restart | Retry::Backoff(_) => return Err(failure.error),
            }
        }
    }
}

/// The endpoint URL: the base URL, checked, with the format's path appended.
/// Whether requests to `url` need the system's root certificates (an https URL).
fn needs_tls_roots(url: &Url) -> bool {
    url.scheme() != "http"
}

fn endpoint(config: &ProviderConfig) -> Result<Url, ProviderError> {
    let bad = |why: String| {
        ProviderError::Config(format!(
            "provider `{}`: base_url `{}` {why}; give an http:// or https:// URL such as {}",
            config.name,
            config.base_url,
            match config.api {
                crate::Api::Anthropic => crate::config::ANTHROPIC_BASE_URL,
                _ => crate::config::OPENAI_BASE_URL,
            }
        ))
    };
    let mut url = Url::parse(config.base_url.trim())
        .map_err(|error| bad(format!("is not a valid URL ({error})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!("has the scheme `{}`", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("names no host".into()));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("has a query or fragment".into()));
    }
    let path = format!(
        "{}/{}",
        url.path().trim_end_matches('/'),
        wire::endpoint_path(config.api)
    );
    url.set_path(&path);
    Ok(url)
}

/// A reqwest error with its causes, which hold the useful part ("connection refused").
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// At most [`MAX_ERROR_BODY`] bytes of a body, as text; what arrived when it stalls.
async fn read_capped(response: Response, limit: Duration) -> String {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while body.len() < MAX_ERROR_BODY {
        match timeout(limit, chunks.next()).await {
            Ok(Some(Ok(bytes))) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    body.truncate(MAX_ERROR_BODY);
    String::from_utf8_lossy(&body).into_owned()
}

/// The message of an error body: `error.message` (OpenAI, Anthropic), a string `error`, a
/// top-level `message`, or the start of the text.
fn error_message(body: &str) -> Option<String> {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let error = json.get("error");
        let message = error
            .and_then(|error| error.get("message"))
            .or(error.filter(|error| error.is_string()))
            .or_else(|| json.get("message"))
            .and_then(serde_json::Value::as_str);
        if let Some(message) = message {
            return Some(message.to_owned());
        }
    }
    let text = body.trim();
    (!text.is_empty()).then(|| quote(text))
}

fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_BODY) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::config::Api;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_tool_set_is_rendered_once_and_a_new_set_again() {
        let config = ProviderConfig::new("local", Api::OpenAiChat, "http://127.0.0.1:1/v1", "m");
        let cache = RenderedTools::default();
        let offering = |tools: &Arc<[ToolSpec]>| ModelRequest {
            tools: Arc::clone(tools),
            ..ModelRequest::default()
        };
        let first: Arc<[ToolSpec]> = vec![ToolSpec::new("Read", "Reads.")].into();
        let request = offering(&first);
        let rendered = cache.get(&config, &request).unwrap();
        assert!(rendered.contains("\"Read\""));
        assert!(Arc::ptr_eq(
            &rendered,
            &cache.get(&config, &request).unwrap()
        ));

        // An equal set in another allocation is another set: rendered anew, not mixed up.
        let second: Arc<[ToolSpec]> = vec![ToolSpec::new("Grep", "Searches.")].into();
        let again = cache.get(&config, &offering(&second)).unwrap();
        assert!(again.contains("\"Grep\"") && !again.contains("\"Read\""));
        assert_eq!(cache.get(&config, &offering(&Arc::from(Vec::new()))), None);
    }

    fn url(api: Api, base: &str) -> Result<String, String> {
        let config = ProviderConfig::new("local", api, base, "m");
        endpoint(&config)
            .map(String::from)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn endpoints_append_the_format_path_to_the_base() {
        assert_eq!(
            url(Api::OpenAiChat, "https://api.openai.com/v1").unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            url(Api::OpenAiResponses, "http://127.0.0.1:8091/v1/").unwrap(),
            "http://127.0.0.1:8091/v1/responses"
        );
        assert_eq!(
            url(Api::Anthropic, "https://api.anthropic.com").unwrap(),
            "https://api.anthropic.com/v1/messages"
        );
    }

    #[test]
    fn only_https_servers_need_the_root_certificates() {
        let parse = |url: &str| Url::parse(url).unwrap();
        assert!(!needs_tls_roots(&parse("http://127.0.0.1:8091/v1")));
        assert!(needs_tls_roots(&parse("https://api.openai.com/v1")));
    }

    #[tokio::test]
    async fn a_plain_http_provider_builds_without_the_root_certificates() {
        let config = ProviderConfig::new("local", Api::OpenAiChat, "http://127.0.0.1:9/v1", "qwen");
        assert!(HttpProvider::new(config).is_ok());
    }

    #[test]
    fn a_bad_base_url_is_an_error_naming_it() {
        let error = url(Api::OpenAiChat, "localhost:8091/v1").unwrap_err();
        assert!(
            error.starts_with("provider `local`: base_url `localhost:8091/v1`"),
            "{error}"
        );
        let error = url(Api::Anthropic, "api.anthropic.com").unwrap_err();
        assert!(error.contains("is not a valid URL"), "{error}");
        assert!(error.contains("https://api.anthropic.com"), "{error}");
    }

    #[test]
    fn error_bodies_give_their_message() {
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}"#;
        assert_eq!(
            error_message(anthropic).unwrap(),
            "max_tokens: Field required"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#).unwrap(),
            "model not found"
        );
        assert_eq!(error_message("  Bad Gateway \n").unwrap(), "Bad Gateway");
        assert_eq!(error_message(""), None);
    }
}
