//! OAuth 2.1 for remote MCP servers (`toolhost mcp login NAME`): the login flow
//! ([`login`]), where the tokens are kept ([`store`]), the browser's round trip
//! ([`browser`]), what a connection does with the tokens (rmcp's `AuthClient` for Streamable
//! HTTP, [`bearer`] for the legacy SSE transport), and the scope step-up a 403
//! `insufficient_scope` starts during a session ([`step_up`]).

pub(crate) mod bearer;
mod browser;
pub mod login;
pub(crate) mod step_up;
pub mod store;

use std::time::Duration;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata, OAuthClientConfig};
use toolhost_config::McpOAuth;

use store::FileCredentialStore;

/// How long reading the authorization server's metadata from a configured URL may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);

/// A login ready for a connection: the manager giving access tokens, and what a scope
/// step-up needs to authorize again with the same client.
pub(crate) struct Authorized {
    /// Gives the access tokens, refreshing them.
    pub manager: AuthorizationManager,
    /// Where the tokens are.
    pub store: FileCredentialStore,
    /// The client the login registered or was configured with.
    pub client_id: String,
    /// A confidential client's secret (`oauth.client_secret_env`).
    pub client_secret: Option<String>,
}

/// An authorization manager holding the logged-in credentials of `url`, ready to give access
/// tokens (refreshing them); `None` when nobody logged in to it (the server is reached
/// without a token, and a 401 says to log in). A confidential client's secret
/// (`oauth.client_secret_env`) is not stored with the tokens: it is read here, so that a
/// refresh can authenticate the client.
///
/// # Errors
/// The credentials file cannot be read, the server's authorization metadata cannot be found
/// again, or the configured secret's variable is not set.
pub(crate) async fn authorized_manager(
    url: &str,
    oauth: &McpOAuth,
) -> Result<Option<Authorized>, String> {
    let Some(store) = FileCredentialStore::for_user(url) else {
        return Ok(None);
    };
    let reading = store.clone();
    let stored = tokio::task::spawn_blocking(move || reading.read())
        .await
        .map_err(|error| error.to_string())??;
    if stored.is_none_or(|credentials| credentials.token_response.is_none()) {
        return Ok(None);
    }
    let cannot = |error: String| format!("cannot use the OAuth login of {url}: {error}");
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| cannot(error.to_string()))?;
    if let Some(metadata_url) = &oauth.auth_server_metadata_url {
        discover(&mut manager, None, Some(metadata_url))
            .await
            .map_err(cannot)?;
    }
    manager.set_credential_store(store.clone());
    let usable = manager
        .initialize_from_store()
        .await
        .map_err(|error| cannot(error.to_string()))?;
    if !usable {
        return Ok(None);
    }
    let client_id = stored_client_id(&manager).await?;
    let client_secret = match &oauth.client_secret_env {
        Some(variable) => Some(std::env::var(variable).map_err(|_| {
            format!(
                "oauth.client_secret_env: the environment variable {variable} is not set (the \
                 client's secret, needed to refresh the login of {url})"
            )
        })?),
        None => None,
    };
    if let Some(secret) = &client_secret {
        let redirect = oauth
            .callback_url
            .clone()
            .unwrap_or_else(|| "http://127.0.0.1/callback".to_owned());
        let mut client =
            OAuthClientConfig::new(client_id.clone(), redirect).with_client_secret(secret);
        // Keep the application type the stored login set.
        client.application_type = None;
        manager
            .configure_client(client)
            .map_err(|error| cannot(error.to_string()))?;
    }
    Ok(Some(Authorized {
        manager,
        store,
        client_id,
        client_secret,
    }))
}

/// Finds the authorization server of the server `manager` is for and sets its metadata, as
/// the specification orders it: from the `WWW-Authenticate` challenge of a 401 when there is
/// one, else the protected-resource metadata at its well-known addresses, else RFC 8414
/// metadata at the server itself, else the 2025-03-26 default endpoints (`/authorize`,
/// `/token`, `/register`). With `metadata_url` (`oauth.auth_server_metadata_url`) the
/// authorization server's metadata is read there instead; the protected-resource metadata is
/// still read when the server has some, for the resource indicator and the scopes.
///
/// # Errors
/// Discovery failed (an authorization server named but not answering, an issuer that is not
/// the one asked for), or the configured metadata cannot be read.
pub(crate) async fn discover(
    manager: &mut AuthorizationManager,
    challenge: Option<&str>,
    metadata_url: Option<&str>,
) -> Result<(), String> {
    let discovered = manager.resolve_metadata_from_challenge(challenge).await;
    let metadata = match metadata_url {
        Some(metadata_url) => metadata_from(metadata_url).await?,
        None => discovered.map_err(|error| error.to_string())?.metadata,
    };
    manager.set_metadata(metadata);
    Ok(())
}

/// The authorization server metadata (RFC 8414) at `url`.
async fn metadata_from(url: &str) -> Result<AuthorizationMetadata, String> {
    let failed = |error: String| format!("oauth.auth_server_metadata_url {url}: {error}");
    let response = reqwest::Client::builder()
        .timeout(METADATA_TIMEOUT)
        .build()
        .map_err(|error| failed(error.to_string()))?
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|error| failed(super::sse::chain(&error)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(failed(format!("it answered {status}")));
    }
    let body = response
        .bytes()
        .await
        .map_err(|error| failed(error.to_string()))?;
    serde_json::from_slice(&body).map_err(|error| {
        failed(format!(
            "not authorization server metadata (RFC 8414): {error}"
        ))
    })
}

/// The client id the login registered (or was configured with), as stored with its tokens.
async fn stored_client_id(manager: &AuthorizationManager) -> Result<String, String> {
    let (client_id, _) = manager
        .get_credentials()
        .await
        .map_err(|error| format!("cannot read the stored OAuth login: {error}"))?;
    Ok(client_id)
}

/// What a server that wants a login says.
pub(crate) fn login_needed(name: &str, url: &str) -> String {
    format!(
        "{url} needs an OAuth login (it answered 401, and no token it accepts is stored): \\
         run `toolhost mcp login {name}`"
    )
}
