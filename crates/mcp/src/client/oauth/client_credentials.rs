//! The client-credentials grant (the MCP extension `io.modelcontextprotocol/oauth-client-
//! credentials`, SEP-1046) for `oauth.grant = "client_credentials"`: a machine client, its id
//! and its secret configured, gets its tokens at the token endpoint itself — no user, no
//! browser, no `mcp login` needed. There is no refresh token: a new token is asked for when
//! the one held is about to expire or is refused (401), and one with more scopes when a 403
//! `insufficient_scope` names them. rmcp does the token requests; this module decides when.

use std::sync::Mutex as StdMutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU32, Ordering};

use rmcp::transport::auth::{AuthorizationManager, ClientCredentialsConfig};
use rmcp::transport::streamable_http_client::InsufficientScopeError;
use tokio::sync::Mutex;
use toolhost_config::McpOAuth;

use super::step_up::STEP_UP_LIMIT;
use super::store::TokenStore;

/// A machine client of one server.
pub(crate) struct MachineClient {
    server: String,
    client_id: String,
    client_secret: String,
    /// The scopes asked for; grows when a 403 names more.
    scopes: StdMutex<Vec<String>>,
    /// The resource indicator (RFC 8707): the server's URL.
    resource: String,
    /// New tokens asked for after a refusal, on this connection.
    renewals: AtomicU32,
}

impl std::fmt::Debug for MachineClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the secret.
        formatter
            .debug_struct("MachineClient")
            .field("server", &self.server)
            .field("client_id", &self.client_id)
            .field("renewals", &self.renewals)
            .finish_non_exhaustive()
    }
}

impl MachineClient {
    fn config(&self) -> ClientCredentialsConfig {
        ClientCredentialsConfig::ClientSecret {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            scopes: self
                .scopes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            resource: Some(self.resource.clone()),
        }
    }

    /// Asks for a new token (saved with the others), with the scopes held now.
    async fn exchange(&self, manager: &AuthorizationManager) -> Result<(), String> {
        manager
            .exchange_client_credentials(&self.config())
            .await
            .map(|_| ())
            .map_err(|error| {
                format!(
                    "the authorization server of {} refused the client credentials of {}: {error}",
                    self.server, self.client_id
                )
            })
    }

    /// After the server refused the token (401): a new one, at most [`STEP_UP_LIMIT`] times
    /// per connection.
    pub(super) async fn renew(&self, manager: &Mutex<AuthorizationManager>) -> Result<(), String> {
        self.count_renewal()?;
        self.exchange(&*manager.lock().await).await
    }

    /// After a 403 `insufficient_scope`: a new token with the scopes it names added.
    pub(super) async fn more_scopes(
        &self,
        manager: &Mutex<AuthorizationManager>,
        refused: &InsufficientScopeError,
    ) -> Result<(), String> {
        let wanted = refused.required_scope.as_deref().unwrap_or("");
        let added = {
            let mut scopes = self.scopes.lock().unwrap_or_else(PoisonError::into_inner);
            let before = scopes.len();
            for scope in wanted.split_whitespace() {
                if !scopes.iter().any(|held| held == scope) {
                    scopes.push(scope.to_owned());
                }
            }
            scopes.len() > before
        };
        if !added {
            return Err(format!(
                "{} refused the token for want of the scope '{wanted}', which the client \
                 credentials already ask for",
                self.server
            ));
        }
        self.count_renewal()?;
        self.exchange(&*manager.lock().await).await
    }

    fn count_renewal(&self) -> Result<(), String> {
        if self.renewals.fetch_add(1, Ordering::SeqCst) >= STEP_UP_LIMIT {
            return Err(format!(
                "{} refused {STEP_UP_LIMIT} new tokens of its client credentials on this \
                 connection; not asking again",
                self.server
            ));
        }
        Ok(())
    }
}

/// A manager for the server at `url` holding a usable token of the machine client
/// `oauth` names: the stored one while it is not about to expire, else (or with `fresh`) a
/// new one.
///
/// # Errors
/// The secret's variable is not set, discovery failed, the authorization server does not take
/// client secrets, or it refused the credentials.
pub(crate) async fn machine_manager(
    server: &str,
    url: &str,
    oauth: &McpOAuth,
    store: TokenStore,
    fresh: bool,
) -> Result<(AuthorizationManager, MachineClient), String> {
    let (Some(client_id), Some(variable)) = (&oauth.client_id, &oauth.client_secret_env) else {
        return Err(
            "oauth.grant = \"client_credentials\" needs client_id and client_secret_env".to_owned(),
        );
    };
    let client_secret = std::env::var(variable).map_err(|_| {
        format!(
            "oauth.client_secret_env: the environment variable {variable} is not set (the \
             secret of the client credentials of {url})"
        )
    })?;
    let cannot = |error: String| format!("cannot use the client credentials for {url}: {error}");
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| cannot(error.to_string()))?;
    let reading = store.clone();
    // A token another client (a user's login) left is not this client's.
    let stored = tokio::task::spawn_blocking(move || reading.read())
        .await
        .map_err(|error| error.to_string())??
        .filter(|credentials| credentials.client_id == *client_id);
    manager.set_credential_store(store);
    let challenge = super::login::challenge(url).await;
    super::discover(
        &mut manager,
        challenge.as_deref(),
        oauth.auth_server_metadata_url.as_deref(),
    )
    .await
    .map_err(cannot)?;
    let mut scopes = if oauth.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        oauth.scopes.clone()
    };
    // The scopes an earlier token needed (a 403 added them) are asked for again.
    for scope in stored
        .iter()
        .flat_map(|credentials| &credentials.granted_scopes)
    {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    let machine = MachineClient {
        server: server.to_owned(),
        client_id: client_id.clone(),
        client_secret,
        scopes: StdMutex::new(scopes),
        resource: url.to_owned(),
        renewals: AtomicU32::new(0),
    };
    let config = machine.config();
    manager
        .validate_client_credentials_metadata(&config)
        .and_then(|()| manager.configure_client_credentials(&config))
        .map_err(|error| cannot(error.to_string()))?;
    if fresh || stored.is_none() || manager.get_access_token().await.is_err() {
        machine.exchange(&manager).await?;
    }
    Ok((manager, machine))
}
