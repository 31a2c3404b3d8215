//! OAuth 2.1 for remote MCP servers (`toolhost mcp login NAME`): the login flow
//! ([`login`]), where the tokens are kept ([`store`]), and what a connection does with them.

pub mod login;
pub mod store;

use rmcp::transport::auth::AuthorizationManager;

use store::FileCredentialStore;

/// An authorization manager holding the logged-in credentials of `url`, ready to give access
/// tokens (refreshing them); `None` when nobody logged in to it (the server is reached
/// without a token, and a 401 says to log in).
///
/// # Errors
/// The credentials file cannot be read, or the server's authorization metadata cannot be
/// found again.
pub(crate) async fn authorized_manager(url: &str) -> Result<Option<AuthorizationManager>, String> {
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
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| format!("cannot use the OAuth login of {url}: {error}"))?;
    manager.set_credential_store(store);
    let usable = manager
        .initialize_from_store()
        .await
        .map_err(|error| format!("cannot use the OAuth login of {url}: {error}"))?;
    Ok(usable.then_some(manager))
}

/// What a server that wants a login says.
pub(crate) fn login_needed(name: &str, url: &str) -> String {
    format!(
        "{url} needs an OAuth login (it answered 401, and no token it accepts is stored): \\
         run `toolhost mcp login {name}`"
    )
}
