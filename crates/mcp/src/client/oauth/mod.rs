//! OAuth 2.1 for remote MCP servers (`toolhost mcp login NAME`): the login flow
//! ([`login`]), where the tokens are kept ([`store`]: the OS keyring ([`os_keyring`]) or the
//! 0600 file ([`token_file`])), and what a connection does with them.

pub mod login;
pub mod os_keyring;
pub mod store;
pub mod token_file;

use rmcp::transport::auth::{AuthorizationManager, OAuthClientConfig};
use toolhost_config::McpOAuth;

use store::TokenStore;

/// An authorization manager holding the logged-in credentials of `url`, ready to give access
/// tokens (refreshing them); `None` when nobody logged in to it (the server is reached
/// without a token, and a 401 says to log in). A confidential client's secret
/// (`oauth.client_secret_env`) is not stored with the tokens: it is read here, so that a
/// refresh can authenticate the client.
///
/// # Errors
/// The token store cannot be read, the server's authorization metadata cannot be found
/// again, or the configured secret's variable is not set.
pub(crate) async fn authorized_manager(
    url: &str,
    oauth: &McpOAuth,
) -> Result<Option<AuthorizationManager>, String> {
    let server_url = url.to_owned();
    let found = tokio::task::spawn_blocking(move || {
        // Without a store (no home folder, or `keyring` and none answers) no login can be
        // used, but the server may need none: it is reached without a token.
        let store = match TokenStore::for_user(&server_url) {
            Ok(store) => store,
            Err(why) => {
                tracing::warn!("no OAuth login is used for {server_url}: {why}");
                return Ok(None);
            }
        };
        let stored = store.read()?;
        Ok::<_, String>(Some((store, stored)))
    })
    .await
    .map_err(|error| error.to_string())??;
    let Some((store, stored)) = found else {
        return Ok(None);
    };
    if stored.is_none_or(|credentials| credentials.token_response.is_none()) {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| format!("cannot use the OAuth login of {url}: {error}"))?;
    manager.set_credential_store(store);
    let usable = manager
        .initialize_from_store()
        .await
        .map_err(|error| format!("cannot use the OAuth login of {url}: {error}"))?;
    if !usable {
        return Ok(None);
    }
    if let Some(variable) = &oauth.client_secret_env {
        let secret = std::env::var(variable).map_err(|_| {
            format!(
                "oauth.client_secret_env: the environment variable {variable} is not set (the \
                 client's secret, needed to refresh the login of {url})"
            )
        })?;
        let client_id = stored_client_id(&manager).await?;
        let redirect = oauth
            .callback_url
            .clone()
            .unwrap_or_else(|| "http://127.0.0.1/callback".to_owned());
        let mut client = OAuthClientConfig::new(client_id, redirect).with_client_secret(secret);
        // Keep the application type the stored login set.
        client.application_type = None;
        manager
            .configure_client(client)
            .map_err(|error| format!("cannot use the OAuth login of {url}: {error}"))?;
    }
    Ok(Some(manager))
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
