//! What a failed transport says, in one line: the cause reqwest holds several sources down
//! rather than rmcp's debug form of it, and what to do about an OAuth refusal.

use rmcp::service::ServiceError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

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

/// What went wrong with the transport, in a line: the cause reqwest holds several sources
/// down (refused, reset, a certificate) rather than rmcp's debug form of it.
pub(super) fn transport_reason(server: &str, error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(error) => {
            match error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(StreamableHttpError::Client(client)) => chain(client),
                // rmcp already refreshed the token once and sent the request again.
                Some(StreamableHttpError::AuthRequired(_)) => format!(
                    "it refused the OAuth token (401) even after a refresh: run \
                     `toolhost mcp login {server}`"
                ),
                Some(StreamableHttpError::InsufficientScope(scope)) => format!(
                    "the OAuth token lacks a scope it needs (403 insufficient_scope: {}): run \
                     `toolhost mcp login {server}` to grant it",
                    scope.www_authenticate_header
                ),
                _ => chain(error.error.as_ref()),
            }
        }
        other => other.to_string(),
    }
}
