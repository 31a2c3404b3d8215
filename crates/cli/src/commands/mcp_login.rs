//! `toolhost mcp login NAME` and `toolhost mcp logout NAME`: OAuth for a remote server (the
//! flow is `toolhost_mcp::client::oauth`), and the auth state `mcp list` shows.

use std::io::BufRead as _;
use std::process::ExitCode;

use clap::Args;
use toolhost_config::McpOAuthGrant;
use toolhost_mcp::client::oauth::login::{LoginOptions, browser_available, login};
use toolhost_mcp::client::oauth::machine_login;
use toolhost_mcp::client::oauth::store::{TokenStore, describe};
use toolhost_mcp::{McpServerConfig, McpTransport};

// Arguments of `toolhost mcp login` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server's name.
    name: String,
    /// Do not open a browser: print the authorization URL, and read back the address the
    /// browser was sent to (paste it from the address bar). The default where no browser can
    /// be opened (no $BROWSER, no display).
    #[arg(long)]
    no_browser: bool,
    /// The port on 127.0.0.1 of the callback server (default: the server's
    /// `oauth.callback_port`, else any free port). Every option below defaults likewise to
    /// the server's `oauth` settings.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    callback_port: u16,
    /// The redirect URI to use instead of http://127.0.0.1:PORT/callback (one a static client
    /// registered); its port is listened on.
    #[arg(long, value_name = "URL")]
    callback_url: Option<String>,
    /// A client registered with the authorization server beforehand (no registration).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The environment variable holding that client's secret.
    #[arg(long, value_name = "VAR", requires = "client_id")]
    client_secret_env: Option<String>,
    /// The HTTPS URL of a client-id metadata document, used when the authorization server
    /// supports them (before dynamic registration).
    #[arg(long, value_name = "URL")]
    client_metadata_url: Option<String>,
    /// A scope to ask for (repeatable); default: the scope the server's 401 names, else its
    /// metadata's `scopes_supported`, else none.
    #[arg(long, value_name = "SCOPE")]
    scope: Vec<String>,
}

impl LoginArgs {
    /// The server named.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// `mcp login`.
pub async fn run_login(server: &McpServerConfig, args: LoginArgs) -> anyhow::Result<ExitCode> {
    let url = remote_url(server)?;
    let store = user_store(url).await?;
    let kept = store.where_kept();
    if server.oauth.grant == McpOAuthGrant::ClientCredentials {
        return match machine_login(&args.name, url, &server.oauth, store).await {
            Ok(issuer) => {
                println!(
                    "Logged in to {} ({url}) with {issuer}, as the client {} (client \
                     credentials: every connection gets its own token)",
                    args.name,
                    server.oauth.client_id.as_deref().unwrap_or("")
                );
                println!("The tokens are kept {kept}.");
                Ok(ExitCode::SUCCESS)
            }
            Err(error) => {
                eprintln!("error: {error}");
                Ok(ExitCode::FAILURE)
            }
        };
    }
    // The flags win over the server's [mcp_servers.NAME.oauth] (or .mcp.json's oauth).
    let configured = &server.oauth;
    let (client_id, secret_env, secret_source) = match args.client_id {
        Some(id) => (Some(id), args.client_secret_env, "--client-secret-env"),
        None => (
            configured.client_id.clone(),
            configured.client_secret_env.clone(),
            "oauth.client_secret_env",
        ),
    };
    let client_secret = match &secret_env {
        Some(variable) => Some(std::env::var(variable).map_err(|_| {
            anyhow::anyhow!("{secret_source}: the environment variable {variable} is not set")
        })?),
        None => None,
    };
    let headless = !args.no_browser && !browser_available();
    let no_browser = args.no_browser || headless;
    let options = LoginOptions {
        open_browser: !no_browser,
        callback_port: match args.callback_port {
            0 => configured.callback_port.unwrap_or(0),
            port => port,
        },
        callback_url: args.callback_url.or(configured.callback_url.clone()),
        client_id,
        client_secret,
        client_metadata_url: args
            .client_metadata_url
            .or(configured.client_metadata_url.clone()),
        scopes: if args.scope.is_empty() {
            configured.scopes.clone()
        } else {
            args.scope
        },
        auth_server_metadata_url: configured.auth_server_metadata_url.clone(),
    };
    let say = move |authorize: &str| {
        if headless {
            println!("No browser can be opened here (no $BROWSER, no display).");
        }
        if no_browser {
            println!("Open this address in a browser and log in:\n\n  {authorize}\n");
            println!(
                "Then paste here the address the browser ends on (it starts with the callback URL):"
            );
        } else {
            println!(
                "Opening the browser to log in; if it does not open, visit:\n\n  {authorize}\n"
            );
        }
    };
    let paste = || {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).ok()?;
        Some(line)
    };
    match login(url, store, options, say, paste).await {
        Ok(issuer) => {
            println!("Logged in to {} ({url}) with {issuer}.", args.name);
            println!("The tokens are kept {kept}.");
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `mcp logout`: the tokens go from every store the configuration reads (with `auto` and
/// `keyring`, the keyring and the file an older login may have used).
pub async fn run_logout(server: &McpServerConfig) -> anyhow::Result<ExitCode> {
    let url = remote_url(server)?;
    let store = user_store(url).await?;
    let kept = store.where_kept();
    let removed = tokio::task::spawn_blocking(move || store.remove())
        .await?
        .map_err(anyhow::Error::msg)?;
    if removed {
        println!(
            "Logged out of {} ({url}): its tokens are deleted (they were kept {kept}).",
            server.name
        );
    } else {
        println!("{} ({url}) had no stored login.", server.name);
    }
    Ok(ExitCode::SUCCESS)
}

/// The auth state of a remote server for `mcp list` and `doctor`, with the store holding its
/// tokens: `None` for a stdio server.
pub async fn auth_state(server: &McpServerConfig) -> Option<String> {
    let (McpTransport::Http { url, .. } | McpTransport::Sse { url, .. }) = &server.transport else {
        return None;
    };
    let url = url.clone();
    let stored = tokio::task::spawn_blocking(move || {
        TokenStore::for_user(&url).and_then(|store| store.read_with_holder())
    })
    .await
    .unwrap_or_else(|error| Err(error.to_string()));
    let state = match stored {
        Ok(Some((credentials, holder))) => {
            format!("oauth: {}, kept {holder}", describe(&credentials))
        }
        Ok(None) => "oauth: not logged in".to_owned(),
        Err(error) => format!("oauth: {error}"),
    };
    Some(state)
}

fn remote_url(server: &McpServerConfig) -> anyhow::Result<&str> {
    match &server.transport {
        McpTransport::Http { url, .. } | McpTransport::Sse { url, .. } => Ok(url),
        _ => anyhow::bail!(
            "'{}' is a {} server: OAuth logins are for remote servers (url = …, Streamable HTTP \
             or SSE)",
            server.name,
            server.transport.kind()
        ),
    }
}

/// The store of `url`'s tokens, as `mcp_oauth_store` says (it may reach the keyring, which
/// blocks).
async fn user_store(url: &str) -> anyhow::Result<TokenStore> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || TokenStore::for_user(&url))
        .await?
        .map_err(anyhow::Error::msg)
}
