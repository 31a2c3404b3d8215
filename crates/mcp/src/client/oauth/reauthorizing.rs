//! What a Streamable HTTP connection with OAuth does when the server refuses its token in a
//! way rmcp leaves to the client: rmcp's [`AuthClient`] gives the tokens, refreshes them and
//! retries once on a 401; [`Reauthorizing`] then gets a new token — a scope step-up in the
//! browser for a user's login ([`StepUp`]), a new client-credentials token for a machine
//! client ([`MachineClient`]) — and sends the request once more.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::streamable_http_client::{
    InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::sync::Mutex;

use super::client_credentials::MachineClient;
use super::step_up::StepUp;

/// How a refused token is replaced.
#[derive(Debug)]
pub(crate) enum Reauthorization {
    /// A user's login: a 403 `insufficient_scope` steps up in the browser ([`StepUp`]).
    StepUp(StepUp),
    /// A machine client: a 401 or a 403 gets a new token ([`MachineClient`]).
    Machine(MachineClient),
}

impl Reauthorization {
    /// Read before a request is sent: the step-ups completed so far (a request refused before
    /// the last one is sent again with its token rather than starting another).
    pub(crate) fn generation(&self) -> u64 {
        match self {
            Self::StepUp(step_up) => step_up.generation(),
            Self::Machine(_) => 0,
        }
    }

    /// A new token with the scopes a 403 `insufficient_scope` (`refused`, answered to a
    /// request sent at `sent_in`) names: `Ok` when the request should be sent again, else why
    /// not.
    pub(crate) async fn more_scopes(
        &self,
        manager: &Mutex<AuthorizationManager>,
        refused: &InsufficientScopeError,
        sent_in: u64,
    ) -> Result<(), String> {
        match self {
            Self::StepUp(step_up) => step_up.authorize(manager, refused, sent_in).await,
            Self::Machine(machine) => machine.more_scopes(manager, refused).await,
        }
    }

    /// What to say when a request is refused again right after [`Self::more_scopes`].
    pub(crate) async fn still_refused(&self, refused: &InsufficientScopeError) -> Option<String> {
        match self {
            Self::StepUp(step_up) => Some(step_up.still_refused(refused).await),
            Self::Machine(_) => None,
        }
    }

    /// A new token after a 401 that a refresh did not answer: a machine client gets one;
    /// a user's login cannot (`Err(None)`: the caller's message, to log in, stands).
    pub(crate) async fn renew(
        &self,
        manager: &Mutex<AuthorizationManager>,
    ) -> Result<(), Option<String>> {
        match self {
            Self::StepUp(_) => Err(None),
            Self::Machine(machine) => machine.renew(manager).await.map_err(Some),
        }
    }
}

/// rmcp's [`AuthClient`] (tokens, refresh, one retry on a 401), and what rmcp leaves to the
/// client when the server still refuses: a new token, then the request once more.
#[derive(Clone)]
pub(crate) struct Reauthorizing<C> {
    inner: AuthClient<C>,
    how: Arc<Reauthorization>,
}

impl<C> Reauthorizing<C> {
    /// `inner`, replacing refused tokens as `how` says.
    pub(crate) fn new(inner: AuthClient<C>, how: Reauthorization) -> Self {
        Self {
            inner,
            how: Arc::new(how),
        }
    }
}

impl<C> Reauthorizing<C>
where
    C: StreamableHttpClient + Send + Sync,
{
    /// Runs `call`; when the server refuses the token in a way a new one can answer, gets it
    /// and runs `call` once more.
    async fn stepping_up<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let manager = &self.inner.auth_manager;
        let sent_in = self.how.generation();
        match call().await {
            Err(StreamableHttpError::InsufficientScope(refused)) => {
                if let Err(reason) = self.how.more_scopes(manager, &refused, sent_in).await {
                    tracing::warn!("{reason}");
                    return Err(StreamableHttpError::InsufficientScope(refused));
                }
                match call().await {
                    Err(StreamableHttpError::InsufficientScope(again)) => {
                        if let Some(why) = self.how.still_refused(&again).await {
                            tracing::warn!("{why}");
                        }
                        Err(StreamableHttpError::InsufficientScope(again))
                    }
                    other => other,
                }
            }
            // rmcp refreshed once already; a machine client can still get a new token.
            Err(StreamableHttpError::AuthRequired(refused)) => {
                match self.how.renew(manager).await {
                    Ok(()) => call().await,
                    Err(reason) => {
                        if let Some(reason) = reason {
                            tracing::warn!("{reason}");
                        }
                        Err(StreamableHttpError::AuthRequired(refused))
                    }
                }
            }
            other => other,
        }
    }
}

impl<C> std::fmt::Debug for Reauthorizing<C> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Reauthorizing")
            .field("how", &self.how)
            .finish_non_exhaustive()
    }
}

impl<C> StreamableHttpClient for Reauthorizing<C>
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
