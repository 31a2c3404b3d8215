//! rmcp's reqwest client for Streamable HTTP, knowing one more answer to a stale session.
//!
//! A server restarted under a running toolhost no longer knows the session id toolhost
//! sends. The transport says so with 404, which rmcp answers by initialising a new session
//! and sending the request again (once). But servers on the official TypeScript SDK's
//! examples (and `server-everything`) answer 400 with a JSON-RPC error "Bad Request: No
//! valid session ID provided", which rmcp passes on as the server's answer: every later call
//! is refused, or, when the error carries no id, waits out the tool timeout. This client
//! turns such an answer into rmcp's "session expired", so that the same recovery runs. The
//! server refused the request without running it, so sending it again is safe.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// How many same-origin redirects one request follows (as rmcp's own client).
const MAX_REDIRECTS: usize = 10;

/// JSON-RPC error codes the SDKs answer a session they do not know with: the TypeScript
/// and Python SDKs' -32000 ("Bad Request: No valid session ID provided"), -32001 ("Session
/// not found") and -32600 (Invalid Request).
const SESSION_ERROR_CODES: [i32; 3] = [-32000, -32001, -32600];

/// [`reqwest::Client`] as rmcp's transport uses it, seeing the stale-session answers rmcp
/// does not (see the module's documentation).
#[derive(Clone)]
pub(super) struct StaleSessionAware(reqwest::Client);

type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

impl StaleSessionAware {
    /// The client rmcp's transport would make: no idle connections kept (they stall on
    /// delayed ACKs), only same-origin 307/308 redirects followed.
    pub(super) fn new() -> Result<Self, String> {
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()
            .map(Self)
            .map_err(|error| format!("cannot make an HTTP client: {error}"))
    }
}

/// `posted` as rmcp should see it: a request sent in a session and refused with an error
/// that says the session is unknown (or carries no id, so that it cannot answer the
/// request) becomes [`StreamableHttpError::SessionExpired`].
fn expired_session(
    session_attached: bool,
    message: &ClientJsonRpcMessage,
    posted: Posted,
) -> Posted {
    let is_request = matches!(message, ClientJsonRpcMessage::Request(_));
    if let Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _)) = &posted
        && session_attached
        && is_request
    {
        let code = error.error.code.0;
        let names_session = error.error.message.to_lowercase().contains("session");
        if error.id.is_none() || (SESSION_ERROR_CODES.contains(&code) && names_session) {
            tracing::debug!(
                "the MCP server does not know the session ({code}: {}); starting a new one",
                error.error.message
            );
            return Err(StreamableHttpError::SessionExpired);
        }
    }
    posted
}

impl StreamableHttpClient for StaleSessionAware {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Posted {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            {
                let mut limits = StreamableHttpResponseLimits::default();
                limits.max_sse_event_size = max_sse_event_size;
                limits
            },
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted {
        let session_attached = session_id.is_some();
        let kept = message.clone();
        let posted = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        expired_session(session_attached, &kept, posted)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// Same-origin 307 and 308 only, as rmcp's own client: they keep the method and body, and
/// another origin would be sent the session id and the configured headers.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;

    fn answer(body: serde_json::Value) -> Posted {
        Ok(StreamableHttpPostResponse::Json(
            serde_json::from_value(body).unwrap(),
            None,
        ))
    }

    fn call() -> ClientJsonRpcMessage {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}}}))
        .unwrap()
    }

    fn is_expired(posted: &Posted) -> bool {
        matches!(posted, Err(StreamableHttpError::SessionExpired))
    }

    #[test]
    fn a_refused_session_counts_as_expired_and_a_tool_error_does_not() {
        let stale = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32000,
            "message": "Bad Request: No valid session ID provided"}});
        assert!(is_expired(&expired_session(
            true,
            &call(),
            answer(stale.clone())
        )));
        // Without a session there was none to lose.
        assert!(!is_expired(&expired_session(false, &call(), answer(stale))));
        let anonymous = json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Bad"}});
        assert!(is_expired(&expired_session(
            true,
            &call(),
            answer(anonymous)
        )));
        let refused = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602,
            "message": "the session argument is missing"}});
        assert!(!is_expired(&expired_session(
            true,
            &call(),
            answer(refused)
        )));
    }
}
