//! Scope step-up during a session: a server that answers 403 `insufficient_scope` with a
//! `scope` its login lacks gets a new authorization for the union of the scopes granted and
//! the scopes it named, and the request is sent again with the new token.
//!
//! A running command opens a browser for it only when one can be opened without a terminal
//! ([`can_open_browser`]: `$BROWSER` or a desktop session) and waits for it at most
//! [`STEP_UP_TIMEOUT`]; a headless process (SSH, a container, CI) never starts an
//! authorization nobody can finish: it says which `toolhost mcp login NAME --scope …` grants
//! the scopes. No step-up is started for scopes the login already holds (the server refuses
//! them anyway: a new authorization cannot help), and at most [`STEP_UP_LIMIT`] per
//! connection, so a server that keeps asking cannot loop.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthClient, AuthorizationCallback, AuthorizationManager, OAuthClientConfig,
};
use rmcp::transport::streamable_http_client::{
    InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::sync::Mutex;

use super::browser::{Callback, can_open_browser, open_browser};
use super::login::refusal;
use super::store::FileCredentialStore;

/// How many step-ups one connection may start.
pub const STEP_UP_LIMIT: u32 = 2;

/// How long a step-up waits for the browser to come back.
pub const STEP_UP_TIMEOUT: Duration = Duration::from_secs(120);

/// What a step-up needs to authorize again as the login did.
#[derive(Debug)]
pub(crate) struct StepUp {
    /// The server's name, for the messages.
    pub server: String,
    /// Where the login's tokens and granted scopes are.
    pub store: FileCredentialStore,
    /// The client the login used.
    pub client_id: String,
    /// A confidential client's secret.
    pub client_secret: Option<String>,
    /// `oauth.callback_port` (0: any free port).
    pub callback_port: u16,
    /// `oauth.callback_url`.
    pub callback_url: Option<String>,
    attempts: AtomicU32,
    /// Counts completed step-ups: a request refused before the last one completed is sent
    /// again with the new token instead of starting another.
    generation: AtomicU64,
}

impl StepUp {
    /// The step-up of a login made with `client_id` (and `client_secret`).
    pub(crate) fn new(
        server: &str,
        store: FileCredentialStore,
        client_id: String,
        client_secret: Option<String>,
        oauth: &toolhost_config::McpOAuth,
    ) -> Self {
        Self {
            server: server.to_owned(),
            store,
            client_id,
            client_secret,
            callback_port: oauth.callback_port.unwrap_or(0),
            callback_url: oauth.callback_url.clone(),
            attempts: AtomicU32::new(0),
            generation: AtomicU64::new(0),
        }
    }

    /// Authorizes the scopes `refused` names with those granted, in the browser; `Ok` when
    /// the request should be sent again (a new token is stored), else why not.
    async fn authorize(
        &self,
        manager: &Mutex<AuthorizationManager>,
        refused: &InsufficientScopeError,
        sent_in: u64,
    ) -> Result<(), String> {
        let name = &self.server;
        let wanted: Vec<String> = refused
            .required_scope
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if wanted.is_empty() {
            return Err(format!(
                "{name} refused the OAuth token for want of a scope it does not name"
            ));
        }
        // One step-up at a time: the others wait here, then find the new grant.
        let manager = manager.lock().await;
        if self.generation.load(Ordering::SeqCst) != sent_in {
            return Ok(());
        }
        let store = self.store.clone();
        let granted = tokio::task::spawn_blocking(move || store.read())
            .await
            .map_err(|error| error.to_string())??
            .map(|credentials| credentials.granted_scopes)
            .unwrap_or_default();
        let mut scopes = granted.clone();
        for scope in &wanted {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let flags: String = scopes
            .iter()
            .map(|scope| format!(" --scope {scope}"))
            .collect();
        let login = format!("run `toolhost mcp login {name}{flags}`");
        let wanted = wanted.join(" ");
        if scopes.len() == granted.len() {
            return Err(format!(
                "{name} refused the OAuth token for want of the scope '{wanted}', which the \
                 login already grants: authorizing again would not help (the server's \
                 administrator decides what the scope allows)"
            ));
        }
        if self.attempts.load(Ordering::SeqCst) >= STEP_UP_LIMIT {
            return Err(format!(
                "{name} asks for the scope '{wanted}' after {STEP_UP_LIMIT} step-ups in this \
                 session: {login}"
            ));
        }
        if !can_open_browser() {
            return Err(format!(
                "{name} asks for the scope '{wanted}', which its login lacks, and no browser \
                 can be opened here (no $BROWSER, no display): {login}"
            ));
        }
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let callback = Callback::bind(self.callback_port, self.callback_url.as_deref()).await?;
        let mut client = OAuthClientConfig::new(self.client_id.clone(), callback.redirect_uri());
        if let Some(secret) = &self.client_secret {
            client = client.with_client_secret(secret);
        }
        client.application_type = None;
        let mut authorizing = manager;
        authorizing
            .configure_client(client)
            .map_err(|error| error.to_string())?;
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let authorize = authorizing
            .get_authorization_url(&scope_refs)
            .await
            .map_err(|error| format!("the step-up authorization cannot start: {error}"))?;
        tracing::warn!(
            "{name} asks for the scope '{wanted}', which its login lacks: opening the browser to \
             authorize {}; if it does not open, visit {authorize}",
            scopes.join(" ")
        );
        open_browser(&authorize);
        let redirected = callback.wait(STEP_UP_TIMEOUT, &login).await?;
        if let Some(error) = refusal(&redirected) {
            return Err(format!(
                "the authorization server refused the scopes {}: {error}",
                scopes.join(" ")
            ));
        }
        let answer = AuthorizationCallback::from_redirect_url(&redirected)
            .map_err(|error| format!("the step-up did not complete: {error}"))?;
        authorizing
            .exchange_code_for_token_with_issuer(
                &answer.code,
                &answer.csrf_token,
                answer.issuer.as_deref(),
            )
            .await
            .map_err(|error| format!("the step-up did not complete: {error}"))?;
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    /// Why a request refused again right after a step-up was: the authorization server
    /// granted less than was asked (or the server wants yet another scope).
    async fn still_refused(&self, refused: &InsufficientScopeError) -> String {
        let store = self.store.clone();
        let granted = tokio::task::spawn_blocking(move || store.read())
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
            .map(|credentials| credentials.granted_scopes.join(" "))
            .unwrap_or_default();
        format!(
            "{} still refuses the OAuth token for want of the scope '{}' after the step-up: the \
             authorization server granted '{granted}'",
            self.server,
            refused.required_scope.as_deref().unwrap_or("")
        )
    }
}

/// rmcp's [`AuthClient`] (tokens, refresh, one retry on a 401) with scope step-up on a 403.
#[derive(Clone)]
pub(crate) struct ScopeStepUp<C> {
    inner: AuthClient<C>,
    step_up: Arc<StepUp>,
}

impl<C> ScopeStepUp<C> {
    /// `inner` stepping up as `step_up` says.
    pub(crate) fn new(inner: AuthClient<C>, step_up: StepUp) -> Self {
        Self {
            inner,
            step_up: Arc::new(step_up),
        }
    }
}

impl<C> ScopeStepUp<C>
where
    C: StreamableHttpClient + Send + Sync,
{
    /// Runs `call`; on a 403 `insufficient_scope`, steps up and runs it once more.
    async fn stepping_up<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let sent_in = self.step_up.generation.load(Ordering::SeqCst);
        match call().await {
            Err(StreamableHttpError::InsufficientScope(refused)) => {
                match self
                    .step_up
                    .authorize(&self.inner.auth_manager, &refused, sent_in)
                    .await
                {
                    Ok(()) => match call().await {
                        Err(StreamableHttpError::InsufficientScope(again)) => {
                            tracing::warn!("{}", self.step_up.still_refused(&again).await);
                            Err(StreamableHttpError::InsufficientScope(again))
                        }
                        other => other,
                    },
                    Err(reason) => {
                        tracing::warn!("{reason}");
                        Err(StreamableHttpError::InsufficientScope(refused))
                    }
                }
            }
            other => other,
        }
    }
}

impl<C> std::fmt::Debug for ScopeStepUp<C> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ScopeStepUp")
            .field("step_up", &self.step_up)
            .finish_non_exhaustive()
    }
}

impl<C> StreamableHttpClient for ScopeStepUp<C>
where
    C: StreamableHttpClient + Send + Sync,
{
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stepping_up(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
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
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stepping_up(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
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
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stepping_up(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
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
        self.inner
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
        self.inner
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
