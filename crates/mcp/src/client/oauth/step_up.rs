//! Scope step-up during a session: a server that answers 403 `insufficient_scope` with a
//! `scope` its login lacks gets a new authorization for the union of the scopes granted and
//! the scopes it named, and the request is sent again with the new token.
//!
//! A running command opens a browser for it only when one can be opened without a terminal
//! ([`can_open_browser`]: `$BROWSER` or a desktop session) and waits for it at most
//! [`STEP_UP_TIMEOUT`]; a headless process (SSH, a container, CI) never starts an
//! authorization nobody can finish: it says which `toolhost mcp login NAME --no-browser
//! --scope …` grants the scopes. No step-up is started for scopes the login already holds (the server refuses
//! them anyway: a new authorization cannot help), and at most [`STEP_UP_LIMIT`] per
//! connection, so a server that keeps asking cannot loop.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationCallback, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::InsufficientScopeError;
use tokio::sync::Mutex;

use super::browser::{Callback, can_open_browser, open_browser};
use super::login::refusal;
use super::store::TokenStore;

/// How many step-ups one connection may start.
pub const STEP_UP_LIMIT: u32 = 2;

/// How long a step-up waits for the browser to come back.
pub const STEP_UP_TIMEOUT: Duration = Duration::from_secs(120);

/// What a step-up needs to authorize again as the login did.
pub(crate) struct StepUp {
    /// The server's name, for the messages.
    server: String,
    /// Where the login's tokens and granted scopes are.
    store: TokenStore,
    /// The client the login used.
    client_id: String,
    /// A confidential client's secret.
    client_secret: Option<String>,
    /// `oauth.callback_port` (0: any free port).
    callback_port: u16,
    /// `oauth.callback_url`.
    callback_url: Option<String>,
    attempts: AtomicU32,
    /// Counts completed step-ups: a request refused before the last one completed is sent
    /// again with the new token instead of starting another.
    generation: AtomicU64,
}

impl std::fmt::Debug for StepUp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the secret.
        formatter
            .debug_struct("StepUp")
            .field("server", &self.server)
            .field("client_id", &self.client_id)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl StepUp {
    /// The step-up of a login made with `client_id` (and `client_secret`).
    pub(crate) fn new(
        server: &str,
        store: TokenStore,
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

    /// How many step-ups completed: read before a request is sent, and handed to
    /// [`Self::authorize`] when it is refused.
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Authorizes the scopes `refused` names with those granted, in the browser; `Ok` when
    /// the request should be sent again (a new token is stored), else why not.
    pub(super) async fn authorize(
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
                 can be opened here (no $BROWSER, no display): run `toolhost mcp login {name} \
                 --no-browser{flags}`"
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
    pub(super) async fn still_refused(&self, refused: &InsufficientScopeError) -> String {
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
