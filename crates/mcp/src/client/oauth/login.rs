//! `toolhost mcp login`: the OAuth 2.1 authorization-code flow with PKCE for one remote
//! server, on rmcp's `auth` support (protected-resource and authorization-server metadata,
//! resource indicators, the `iss` check of RFC 9207, scope selection).
//!
//! The client is registered in the order the MCP specification gives: a configured static
//! `client_id` (and secret), else a client-id metadata document when the authorization server
//! supports them and one is configured, else dynamic registration. The authorization
//! server redirects the browser to a callback server on 127.0.0.1 (a configurable port, or
//! a callback URL); without a browser the URL is printed and the address the browser ended
//! on is pasted back.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, AuthorizationSession};

use super::browser::{Callback, can_open_browser, open_browser};
use super::store::TokenStore;

/// How long `login` waits for the browser to come back.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the first, unauthenticated request that asks the server for its challenge waits.
const CHALLENGE_TIMEOUT: Duration = Duration::from_secs(30);

/// How the login goes.
#[derive(Clone, Debug, Default)]
pub struct LoginOptions {
    /// Open a browser on the authorization page (otherwise the URL is only printed and the
    /// redirect read from standard input).
    pub open_browser: bool,
    /// The callback server's port on 127.0.0.1; 0 picks a free one.
    pub callback_port: u16,
    /// The redirect URI to register and send, when it is not `http://127.0.0.1:PORT/callback`
    /// (a static client's registered URI). Its port is the one listened on.
    pub callback_url: Option<String>,
    /// A static client, registered with the authorization server out of band.
    pub client_id: Option<String>,
    /// The static client's secret.
    pub client_secret: Option<String>,
    /// The HTTPS URL of a client-id metadata document.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for; empty: the scope of the server's 401 challenge, else its
    /// protected-resource metadata's `scopes_supported`, else none (the parameter omitted).
    pub scopes: Vec<String>,
    /// Where the authorization server's metadata is, when it is not where discovery looks
    /// (`oauth.auth_server_metadata_url`).
    pub auth_server_metadata_url: Option<String>,
}

/// Whether a browser can be opened here (`$BROWSER`, or a desktop session): without one,
/// `mcp login` prints the address and reads the redirect back, as with `--no-browser`.
pub fn browser_available() -> bool {
    can_open_browser()
}

/// Logs in to the server at `server_url`, saving the tokens in `store`; `say` prints what
/// the user must see (the URL to open) and `paste` reads the redirect back when there is no
/// browser. Answers the issuer that minted the tokens.
///
/// # Errors
/// Discovery, registration or the token exchange failed, the user did not come back in
/// [`LOGIN_TIMEOUT`], or the callback carried an error.
pub async fn login(
    server_url: &str,
    store: TokenStore,
    options: LoginOptions,
    say: impl Fn(&str),
    paste: impl FnOnce() -> Option<String> + Send + 'static,
) -> Result<String, String> {
    let mut manager = AuthorizationManager::new(server_url)
        .await
        .map_err(|error| format!("cannot use {server_url} for OAuth: {error}"))?;
    manager.set_credential_store(store.clone());
    let challenge = challenge(server_url).await;
    super::discover(
        &mut manager,
        challenge.as_deref(),
        options.auth_server_metadata_url.as_deref(),
    )
    .await
    .map_err(|error| format!("authorization with {server_url} cannot start: {error}"))?;
    let callback = Callback::bind(options.callback_port, options.callback_url.as_deref()).await?;

    let mut request = AuthorizationRequest::new(callback.redirect_uri())
        .with_client_name("toolhost")
        .with_initial_scope_selection();
    if let Some(client_id) = &options.client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = &options.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(document) = &options.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    if !options.scopes.is_empty() {
        request = request.with_scopes(options.scopes.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, error)| format!("authorization with {server_url} cannot start: {error}"))?;
    let authorize = session.get_authorization_url().to_owned();
    say(&authorize);
    let redirected = if options.open_browser {
        open_browser(&authorize);
        callback
            .wait(LOGIN_TIMEOUT, "run `toolhost mcp login` again")
            .await?
    } else {
        drop(callback);
        tokio::task::spawn_blocking(paste)
            .await
            .map_err(|error| error.to_string())?
            .filter(|line| !line.trim().is_empty())
            .ok_or("no redirect address was pasted")?
            .trim()
            .to_owned()
    };
    if let Some(error) = refusal(&redirected) {
        return Err(format!("the authorization server refused: {error}"));
    }
    session
        .handle_callback_url(&redirected)
        .await
        .map_err(|error| format!("the login did not complete: {error}"))?;
    let saved = tokio::task::spawn_blocking(move || store.read())
        .await
        .map_err(|error| error.to_string())??;
    Ok(saved
        .and_then(|credentials| credentials.issuer)
        .unwrap_or_else(|| server_url.to_owned()))
}

/// The `error` a redirect carries when the authorization server refused.
pub(crate) fn refusal(redirected: &str) -> Option<String> {
    url::Url::parse(redirected).ok().and_then(|url| {
        url.query_pairs()
            .find(|(key, _)| key == "error")
            .map(|(_, value)| value.into_owned())
    })
}

/// The `WWW-Authenticate` challenge the server answers an unauthenticated request with:
/// where its protected-resource metadata is and the scope it wants, which discovery then
/// starts from. A Streamable HTTP server is sent an `initialize`; a legacy SSE server, which
/// takes nothing but its stream's `GET` there, is asked for that. `None` when it answers
/// without one (its metadata is then looked for at the well-known addresses).
pub(crate) async fn challenge(server_url: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(CHALLENGE_TIMEOUT)
        .build()
        .ok()?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "toolhost", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let posted = client
        .post(server_url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(initialize.to_string())
        .send()
        .await
        .ok()?;
    if let Some(challenge) = challenge_of(&posted) {
        return Some(challenge);
    }
    // The stream is not read: dropping the answer closes it.
    let streamed = client
        .get(server_url)
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .ok()?;
    challenge_of(&streamed)
}

/// The `WWW-Authenticate` of a 401 or 403.
fn challenge_of(response: &reqwest::Response) -> Option<String> {
    let status = response.status().as_u16();
    if status != 401 && status != 403 {
        return None;
    }
    response
        .headers()
        .get(WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_owned)
}
