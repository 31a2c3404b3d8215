//! OAuth access tokens for a transport that sets its own `Authorization` header (the legacy
//! SSE transport; for Streamable HTTP rmcp's `AuthClient` and [`super::reauthorizing`] do
//! it): the stored token, refreshed before it expires, once more when the server answers 401
//! (a machine client gets a new one), and a new one with more scopes on a 403
//! `insufficient_scope`, as over Streamable HTTP.

use std::sync::Arc;

use oauth2::TokenResponse as _;
use reqwest::header::WWW_AUTHENTICATE;
use reqwest::{RequestBuilder, Response, StatusCode, Url};
use rmcp::transport::auth::{AuthError, AuthorizationManager, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::InsufficientScopeError;
use tokio::sync::Mutex;

use super::reauthorizing::Reauthorization;
use super::{Authorized, login_needed};

/// The login of one server, giving its access tokens.
#[derive(Clone)]
pub(crate) struct BearerTokens {
    manager: Arc<Mutex<AuthorizationManager>>,
    reauthorization: Arc<Reauthorization>,
    server: Arc<str>,
    url: Arc<str>,
}

impl BearerTokens {
    /// The tokens of `authorized` for the server `server` at `url`.
    pub(crate) fn new(authorized: Authorized, server: &str, url: &str) -> Self {
        Self {
            manager: Arc::new(Mutex::new(authorized.manager)),
            reauthorization: Arc::new(authorized.reauthorization),
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
        let refreshed = {
            let manager = self.manager.lock().await;
            let stored = manager.get_access_token().await;
            if let Ok(stored) = &stored
                && stored != sent
            {
                return Ok(stored.clone());
            }
            manager.refresh_token().await
        };
        match refreshed {
            Ok(tokens) if tokens.access_token().secret() != sent => {
                Ok(tokens.access_token().secret().clone())
            }
            Ok(_) => Err(self.login_needed()),
            // No refresh token: a machine client asks for a new one.
            Err(error) => match self.reauthorization.renew(&self.manager).await {
                Ok(()) => self.current().await,
                Err(Some(reason)) => Err(reason),
                Err(None) => Err(self.explain(error)),
            },
        }
    }

    /// After a 403: the `insufficient_scope` refusal it is, if it is one.
    fn insufficient_scope(&self, response: &Response) -> Option<InsufficientScopeError> {
        let header = response.headers().get(WWW_AUTHENTICATE)?.to_str().ok()?;
        let base = Url::parse(&self.url).ok()?;
        let params = WWWAuthenticateParams::parse(header, &base);
        params
            .is_insufficient_scope()
            .then(|| InsufficientScopeError::new(header.to_owned(), params.scope))
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
/// gets one more try with a refreshed (or new) token, and a second 401 says to log in again;
/// a 403 `insufficient_scope` gets one more try with a token holding the scopes it names
/// (a step-up, or a machine client's new token), and otherwise is the answer.
pub(crate) async fn send_with_token(
    tokens: Option<&BearerTokens>,
    build: impl Fn() -> RequestBuilder,
) -> Result<Response, Failure> {
    let Some(tokens) = tokens else {
        return build().send().await.map_err(Failure::Http);
    };
    let send = |token: String| build().bearer_auth(token).send();
    let sent_in = tokens.reauthorization.generation();
    let token = tokens.current().await.map_err(Failure::Token)?;
    let mut response = send(token.clone()).await.map_err(Failure::Http)?;
    if response.status() == StatusCode::UNAUTHORIZED {
        let fresh = tokens.after_refusal(&token).await.map_err(Failure::Token)?;
        response = send(fresh).await.map_err(Failure::Http)?;
        if response.status() == StatusCode::UNAUTHORIZED {
            return Err(Failure::Token(tokens.login_needed()));
        }
    }
    if response.status() == StatusCode::FORBIDDEN
        && let Some(refused) = tokens.insufficient_scope(&response)
    {
        match tokens
            .reauthorization
            .more_scopes(&tokens.manager, &refused, sent_in)
            .await
        {
            Ok(()) => {
                let fresh = tokens.current().await.map_err(Failure::Token)?;
                response = send(fresh).await.map_err(Failure::Http)?;
                if response.status() == StatusCode::FORBIDDEN
                    && let Some(again) = tokens.insufficient_scope(&response)
                    && let Some(why) = tokens.reauthorization.still_refused(&again).await
                {
                    tracing::warn!("{why}");
                }
            }
            Err(reason) => tracing::warn!("{reason}"),
        }
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
