//! Reaching a remote server (Streamable HTTP or legacy SSE): the checks of its entry that no
//! retry can change, the headers every request carries, and the errors of a failed connection.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use rmcp::ServiceExt as _;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::time::Instant;

use rmcp::transport::auth::AuthClient;

use super::config::{McpServerConfig, McpTransport};
use super::events::{ClientEvents, LastWords};
use super::http_session::StaleSessionAware;
use super::oauth;
use super::oauth::bearer::BearerTokens;
use super::oauth::reauthorizing::Reauthorizing;
use super::session::Service;
use super::sse::{SseClientTransport, http_url};
use super::transport_error::chain;
use toolhost_config::McpOAuth;

/// What is wrong with a remote entry in a way that waiting cannot fix (a URL that is not
/// `http(s)://`, a header that is not valid, a `bearer_token_env` variable that is not set);
/// `None` for a usable entry or another transport. Such an entry is reported once, like a
/// configuration problem, and not retried.
pub(super) fn config_problem(transport: &McpTransport) -> Option<String> {
    match transport {
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        }
        | McpTransport::Sse {
            url,
            headers,
            bearer_token_env,
        } => http_url(url, transport.kind())
            .and_then(|_| request_headers(headers, bearer_token_env.as_deref()))
            .err(),
        McpTransport::Stdio { .. } | McpTransport::InProcess => None,
    }
}

/// The headers every request to a remote server carries: `headers` as configured, and
/// `Authorization: Bearer …` with the value of the variable `bearer_token_env` names (in place
/// of a configured `Authorization`).
pub(super) fn request_headers(
    headers: &BTreeMap<String, String>,
    bearer_token_env: Option<&str>,
) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|error| format!("the header name '{name}': {error}"))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|error| format!("the value of header '{name}': {error}"))?;
        map.insert(header, value);
    }
    if let Some(variable) = bearer_token_env {
        let token = std::env::var(variable).map_err(|_| {
            format!("bearer_token_env: the environment variable {variable} is not set")
        })?;
        let value = HeaderValue::try_from(format!("Bearer {token}")).map_err(|error| {
            format!("bearer_token_env: the value of {variable} is not a valid header: {error}")
        })?;
        map.insert(AUTHORIZATION, value);
    }
    Ok(map)
}

/// A Streamable HTTP session. rmcp's client follows same-origin 307/308 redirects only, and
/// starts a new session when the server no longer knows this one ([`StaleSessionAware`]).
/// With OAuth credentials from `toolhost mcp login` for `url`, every request carries the
/// access token, refreshed before it expires; a 401 refreshes once, then says to log in again;
/// then a new token is had if it can be ([`Reauthorizing`]: a scope step-up, a machine client's
/// new token).
pub(super) async fn connect_http(
    events: ClientEvents,
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    bearer_token_env: Option<&str>,
    oauth: &McpOAuth,
) -> Result<Service, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    let mut custom = HashMap::new();
    for (name, value) in request_headers(headers, bearer_token_env)? {
        let Some(name) = name else { continue };
        // rmcp sends the bearer token itself; another scheme (Basic …) goes as it is.
        if name == AUTHORIZATION
            && let Some(token) = value.to_str().ok().and_then(|v| v.strip_prefix("Bearer "))
        {
            config = config.auth_header(token);
            continue;
        }
        custom.insert(name, value);
    }
    let config = config.custom_headers(custom);
    let served = match oauth::authorized_manager(name, url, oauth).await? {
        Some(authorized) => {
            let client = Reauthorizing::new(
                AuthClient::new(StaleSessionAware::new()?, authorized.manager),
                authorized.reauthorization,
            );
            events
                .serve(StreamableHttpClientTransport::with_client(client, config))
                .await
        }
        None => {
            events
                .serve(StreamableHttpClientTransport::with_client(
                    StaleSessionAware::new()?,
                    config,
                ))
                .await
        }
    };
    served.map_err(|error| connect_error(name, url, &error))
}

/// A legacy HTTP+SSE session with `headers` (the configured ones and the helper's) and the
/// OAuth login's access token when there is one; waits for the `endpoint` event until
/// `deadline`.
pub(super) async fn connect_sse(
    events: ClientEvents,
    config: &McpServerConfig,
    headers: &BTreeMap<String, String>,
    deadline: Instant,
    last_words: &Arc<LastWords>,
) -> Result<Service, String> {
    let McpTransport::Sse {
        url,
        bearer_token_env,
        ..
    } = &config.transport
    else {
        return Err(format!("'{}' is not an SSE server", config.name));
    };
    let headers = request_headers(headers, bearer_token_env.as_deref())?;
    // A configured `Authorization` wins, as over Streamable HTTP.
    let tokens = if headers.contains_key(AUTHORIZATION) {
        None
    } else {
        oauth::authorized_manager(&config.name, url, &config.oauth)
            .await?
            .map(|authorized| BearerTokens::new(authorized, &config.name, url))
    };
    last_words.forget_break();
    let transport = SseClientTransport::connect(
        &config.name,
        url,
        headers,
        tokens,
        deadline,
        config.startup_timeout,
        Arc::clone(last_words),
    )
    .await?;
    events
        .serve(transport)
        .await
        .map_err(|error| format!("the MCP handshake over SSE failed: {error}"))
}

/// Why a Streamable HTTP server could not be reached, with the cause rmcp's message leaves
/// out (the transport error holds it several sources down: refused, a certificate …).
fn connect_error(name: &str, url: &str, error: &rmcp::service::ClientInitializeError) -> String {
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            use rmcp::transport::streamable_http_client::StreamableHttpError;
            // rmcp's `Client` variant does not declare reqwest's error as its source.
            let reason = match error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(StreamableHttpError::Client(client)) => chain(client),
                Some(StreamableHttpError::AuthRequired(_)) => {
                    return oauth::login_needed(name, url);
                }
                Some(StreamableHttpError::InsufficientScope(_)) => {
                    return format!(
                        "{url} refused the token for want of a scope (403 insufficient_scope): \
                         run `toolhost mcp login {name}` to grant it"
                    );
                }
                _ => chain(error.error.as_ref()),
            };
            format!("cannot connect to {url}: {reason} (when {context})")
        }
        other => format!("cannot connect to {url}: {other}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn sse(url: &str, headers: &[(&str, &str)], bearer_token_env: Option<&str>) -> McpTransport {
        McpTransport::Sse {
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            bearer_token_env: bearer_token_env.map(str::to_owned),
        }
    }

    #[test]
    fn entries_that_no_retry_can_fix_are_problems() {
        let problem = |transport| config_problem(&transport).unwrap_or_default();
        assert!(problem(sse("ftp://h/sse", &[], None)).contains("not an http:// or https://"));
        assert!(problem(sse("no url", &[], None)).contains("is not a URL"));
        assert!(problem(sse("http://h", &[("bad name", "v")], None)).contains("header name"));
        assert!(problem(sse("http://h", &[("X-A", "a\nb")], None)).contains("value of header"));
        let unset = "TOOLHOST_TEST_SURELY_UNSET_TOKEN";
        assert!(problem(sse("http://h", &[], Some(unset))).contains(unset));
        assert_eq!(
            config_problem(&sse("https://h/sse", &[("X-A", "a")], None)),
            None
        );
    }

    #[test]
    fn a_bearer_token_env_becomes_the_authorization_header() {
        // PATH is set in any test run; its value is as good a token as any.
        let path = std::env::var("PATH").unwrap();
        let headers = [("Authorization".to_owned(), "Basic x".to_owned())].into();
        let map = request_headers(&headers, Some("PATH")).unwrap();
        assert_eq!(map[AUTHORIZATION], format!("Bearer {path}").as_str());
        assert_eq!(map.len(), 1);
    }
}
