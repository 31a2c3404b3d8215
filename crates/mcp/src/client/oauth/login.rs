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

use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, OAuthState};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::store::TokenStore;

/// How long `login` waits for the browser to come back.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

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
    /// The scopes to ask for; empty: what the server's metadata suggests.
    pub scopes: Vec<String>,
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
    let port = match options
        .callback_url
        .as_deref()
        .map(url::Url::parse)
        .transpose()
        .map_err(|error| format!("the callback URL: {error}"))?
    {
        Some(url) => url.port_or_known_default().unwrap_or(options.callback_port),
        None => options.callback_port,
    };
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|error| format!("cannot listen for the callback on 127.0.0.1:{port}: {error}"))?;
    let port = listener
        .local_addr()
        .map_err(|error| error.to_string())?
        .port();
    let redirect_uri = options
        .callback_url
        .clone()
        .unwrap_or_else(|| format!("http://127.0.0.1:{port}/callback"));

    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name("toolhost");
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
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(request)
        .await
        .map_err(|error| format!("authorization with {server_url} cannot start: {error}"))?;
    let OAuthState::Session(session) = &state else {
        return Err("authorization did not start a session".to_owned());
    };
    let authorize = session.get_authorization_url().to_owned();
    say(&authorize);
    let redirected = if options.open_browser {
        open_browser(&authorize);
        tokio::time::timeout(LOGIN_TIMEOUT, callback(&listener, &redirect_uri))
            .await
            .map_err(|_| {
                "no answer from the browser in time: run `toolhost mcp login` again".to_owned()
            })??
    } else {
        drop(listener);
        tokio::task::spawn_blocking(paste)
            .await
            .map_err(|error| error.to_string())?
            .filter(|line| !line.trim().is_empty())
            .ok_or("no redirect address was pasted")?
            .trim()
            .to_owned()
    };
    if let Some(error) = url::Url::parse(&redirected).ok().and_then(|url| {
        url.query_pairs()
            .find(|(key, _)| key == "error")
            .map(|(_, value)| value.into_owned())
    }) {
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

/// Serves one callback request on `listener`: the full redirect URL it carried.
async fn callback(listener: &TcpListener, redirect_uri: &str) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|error| format!("the callback server failed: {error}"))?;
        let mut buffer = vec![0u8; 16 * 1024];
        let mut read = 0;
        while read < buffer.len() {
            let n = stream.read(&mut buffer[read..]).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            read += n;
            if buffer[..read]
                .windows(4)
                .any(|window| window == b"\r\n\r\n")
            {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buffer[..read]);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.split_whitespace().nth(1))
            .unwrap_or("");
        let Some((_, query)) = target.split_once('?') else {
            // A favicon or a probe: not the redirect.
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            continue;
        };
        let body = "toolhost: the login is complete; you can close this window.\n";
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(answer.as_bytes()).await;
        let base = redirect_uri.split('?').next().unwrap_or(redirect_uri);
        return Ok(format!("{base}?{query}"));
    }
}

/// Opens `url` in the desktop's browser when there is one (`$BROWSER`, `xdg-open`, `open`).
fn open_browser(url: &str) {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|browser| !browser.is_empty());
    let candidates = browser
        .into_iter()
        .chain(["xdg-open".to_owned(), "open".to_owned()]);
    for program in candidates {
        let started = std::process::Command::new(&program)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if started.is_ok() {
            return;
        }
    }
}
