//! OAuth access tokens for a transport that sets its own `Authorization` header (the legacy
//! SSE transport; for Streamable HTTP rmcp's `AuthClient` does it): the stored token,
//! refreshed before it expires, and once more when the server answers 401.

use std::sync::Arc;

use oauth2::TokenResponse as _;
use reqwest::header::WWW_AUTHENTICATE;
use reqwest::{RequestBuilder, Response, StatusCode};
use rmcp::transport::auth::{AuthError, AuthorizationManager};
use tokio::sync::Mutex;

use super::login_needed;

/// The login of one server, giving its access tokens.
#[derive(Clone)]
pub(crate) struct BearerTokens {
    manager: Arc<Mutex<AuthorizationManager>>,
    server: Arc<str>,
    url: Arc<str>,
}

impl BearerTokens {
    /// The tokens `manager` gives for the server `server` at `url`.
    pub(crate) fn new(manager: AuthorizationManager, server: &str, url: &str) -> Self {
        Self {
            manager: Arc::new(Mutex::new(manager)),
            server: server.into(),
            url: url.into(),
        }
    }

    /// The access token to send now, refreshed first when it is about to expire.
    ///
    /// # Errors
    /// The login is gone (the message says to log in again), or the refresh failed.
    pub(crate) async fn current(&self) -> Result<String, String> {
        let manager = self.manager.lock().await;
        manager
            .get_access_token()
            .await
            .map_err(|error| self.explain(error))
    }

    /// The token to send again after the server refused `sent` with 401: one another process
    /// stored since, else a refreshed one.
    ///
    /// # Errors
    /// No new token can be had: the message says to log in again.
    pub(crate) async fn after_refusal(&self, sent: &str) -> Result<String, String> {
        let manager = self.manager.lock().await;
        let stored = manager
            .get_access_token()
            .await
            .map_err(|error| self.explain(error))?;
        if stored != sent {
            return Ok(stored);
        }
        let refreshed = manager
            .refresh_token()
            .await
            .map_err(|error| self.explain(error))?;
        let fresh = refreshed.access_token().secret().clone();
        if fresh == sent {
            return Err(self.login_needed());
        }
        Ok(fresh)
    }

    /// What to do when the server refuses every token toolhost can get.
    pub(crate) fn login_needed(&self) -> String {
        login_needed(&self.server, &self.url)
    }

    fn explain(&self, error: AuthError) -> String {
        match error {
            AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
                self.login_needed()
            }
            other => format!("cannot use the OAuth login of {}: {other}", self.url),
        }
    }
}

/// Why a request got no answer.
pub(crate) enum Failure {
    /// It could not be sent.
    Http(reqwest::Error),
    /// No access token the server takes can be had.
    Token(String),
}

/// Sends what `build` makes, with the access token of `tokens` when there is a login; a 401
/// gets one more try with a refreshed token, and a second 401 says to log in again.
pub(crate) async fn send_with_token(
    tokens: Option<&BearerTokens>,
    build: impl Fn() -> RequestBuilder,
) -> Result<Response, Failure> {
    let Some(tokens) = tokens else {
        return build().send().await.map_err(Failure::Http);
    };
    let token = tokens.current().await.map_err(Failure::Token)?;
    let response = build()
        .bearer_auth(&token)
        .send()
        .await
        .map_err(Failure::Http)?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return Ok(response);
    }
    let fresh = tokens.after_refusal(&token).await.map_err(Failure::Token)?;
    let response = build()
        .bearer_auth(&fresh)
        .send()
        .await
        .map_err(Failure::Http)?;
    if response.status() == StatusCode::UNAUTHORIZED {
        return Err(Failure::Token(tokens.login_needed()));
    }
    Ok(response)
}

/// Whether a 401 asks for an OAuth bearer token (rather than, say, a password).
pub(crate) fn bearer_challenge(response: &Response) -> bool {
    response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("bearer")
        })
}
