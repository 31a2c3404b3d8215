//! OAuth 2.1 for remote MCP servers (`toolhost mcp login NAME`): the login flow
//! ([`login`]), where the tokens are kept ([`store`]: the OS keyring ([`os_keyring`]) or the
//! 0600 file ([`token_file`])), the browser's round trip
//! ([`browser`]), what a connection does with the tokens (rmcp's `AuthClient` for Streamable
//! HTTP, [`bearer`] for the legacy SSE transport), the new token it gets when the server
//! refuses one ([`reauthorizing`]: the scope step-up of [`step_up`], or a new token of a
//! machine client, [`client_credentials`]).

pub(crate) mod bearer;
mod browser;
mod client_credentials;
pub mod login;
pub mod os_keyring;
pub(crate) mod reauthorizing;
mod step_up;
pub mod store;
pub mod token_file;

use std::time::Duration;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata, OAuthClientConfig};
use toolhost_config::{McpOAuth, McpOAuthGrant};

use client_credentials::machine_manager;
use reauthorizing::Reauthorization;
use step_up::StepUp;
use store::TokenStore;

/// How long reading the authorization server's metadata from a configured URL may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);

/// A login ready for a connection: the manager giving access tokens, and how a token the
/// server refuses is replaced.
pub(crate) struct Authorized {
    /// Gives the access tokens, refreshing them.
    pub manager: AuthorizationManager,
    /// A scope step-up for a user's login, a new token for a machine client.
    pub reauthorization: Reauthorization,
}

/// An authorization manager holding the logged-in credentials of the server `server` at
/// `url`, ready to give access tokens (refreshing them); `None` when nobody logged in to it
/// (the server is reached without a token, and a 401 says to log in). A confidential client's
/// secret (`oauth.client_secret_env`) is not stored with the tokens: it is read here, so that
/// a refresh can authenticate the client. A machine client (`oauth.grant =
/// "client_credentials"`) needs no login: its token is the stored one or a new one.
///
/// # Errors
/// The token store cannot be read, the server's authorization metadata cannot be found
/// again, the configured secret's variable is not set, or a machine client's credentials are
/// refused.
pub(crate) async fn authorized_manager(
    server: &str,
    url: &str,
    oauth: &McpOAuth,
) -> Result<Option<Authorized>, String> {
    let server_url = url.to_owned();
    let found = tokio::task::spawn_blocking(move || {
        // Without a store (no home folder, or `keyring` and none answers) no login can be
        // used, but the server may need none: it is reached without a token.
        match TokenStore::for_user(&server_url) {
            Ok(store) => Some(store),
            Err(why) => {
                tracing::warn!("no OAuth login is used for {server_url}: {why}");
                None
            }
        }
    })
    .await
    .map_err(|error| error.to_string())?;
    let Some(store) = found else {
        return Ok(None);
    };
    if oauth.grant == McpOAuthGrant::ClientCredentials {
        let (manager, machine) = machine_manager(server, url, oauth, store, false).await?;
        return Ok(Some(Authorized {
            manager,
            reauthorization: Reauthorization::Machine(machine),
        }));
    }
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
    let step_up = StepUp::new(server, store, client_id, client_secret, oauth);
    Ok(Some(Authorized {
        manager,
        reauthorization: Reauthorization::StepUp(step_up),
    }))
}

/// `toolhost mcp login` for a machine client (`oauth.grant = "client_credentials"`): a new
/// token is asked for now, which checks the credentials (every connection would get one
/// anyway). Answers the issuer that minted it.
///
/// # Errors
/// As [`authorized_manager`] for a machine client.
pub async fn machine_login(
    server: &str,
    url: &str,
    oauth: &McpOAuth,
    store: TokenStore,
) -> Result<String, String> {
    let reading = store.clone();
    machine_manager(server, url, oauth, store, true).await?;
    let saved = tokio::task::spawn_blocking(move || reading.read())
        .await
        .map_err(|error| error.to_string())??;
    Ok(saved
        .and_then(|credentials| credentials.issuer)
        .unwrap_or_else(|| url.to_owned()))
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
        .map_err(|error| failed(super::transport_error::chain(&error)))?;
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
