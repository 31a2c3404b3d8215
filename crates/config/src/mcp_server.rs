//! What a configured MCP server is: its transport, its tool filters and its limits (R42).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long a server may take to start and answer `tools/list` when `startup_timeout` does
/// not say.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call may run when `tool_timeout` does not say.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// One `[mcp_servers.NAME]` entry (or one server of `.mcp.json`), values already expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerConfig {
    /// The name as configured; tools are named `mcp__<name>__<tool>` after it is sanitised.
    pub name: String,
    /// How to reach the server.
    pub transport: McpTransport,
    /// `enabled = false` keeps the entry but starts nothing.
    pub enabled: bool,
    /// `enabled_tools`: when set, only these tools (by the server's names) are registered.
    pub enabled_tools: Option<Vec<String>>,
    /// `disabled_tools`: tools (by the server's names) never registered.
    pub disabled_tools: Vec<String>,
    /// `startup_timeout`: start, handshake and first `tools/list`.
    pub startup_timeout: Duration,
    /// `tool_timeout`: the longest one call may run.
    pub tool_timeout: Duration,
    /// `required = true`: a server that fails to start stops the command.
    pub required: bool,
    /// Where it was configured (`path:line`), for messages.
    pub origin: String,
    /// Why the entry cannot be used although it parsed (a `${VAR}` that is not set):
    /// reported when the servers start, like a server that fails.
    pub problem: Option<String>,
    /// `headersHelper` (Claude Code's `.mcp.json`, remote servers): a shell command run each
    /// time toolhost connects, whose stdout, a JSON object of header names and values, is
    /// sent over `headers` (short-lived tokens a script fetches).
    pub headers_helper: Option<String>,
    /// `[mcp_servers.NAME.oauth]`: how `toolhost mcp login` registers with a remote server's
    /// authorization server, and the secret a confidential client refreshes with.
    pub oauth: McpOAuth,
}

/// OAuth settings of a remote server (`[mcp_servers.NAME.oauth]`, or `oauth` in `.mcp.json`):
/// what a server that offers no dynamic registration needs, kept in the configuration so that
/// `toolhost mcp login NAME` needs no flags and a token refresh can send the client's secret.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpOAuth {
    /// `client_id` (`clientId`): a client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// `client_secret_env`: the environment variable holding that client's secret.
    pub client_secret_env: Option<String>,
    /// `callback_port` (`callbackPort`): the port on 127.0.0.1 of the login's callback server.
    pub callback_port: Option<u16>,
    /// `callback_url`: the redirect URI a static client registered, when it is not
    /// `http://127.0.0.1:PORT/callback`.
    pub callback_url: Option<String>,
    /// `client_metadata_url`: the HTTPS URL of a client-id metadata document.
    pub client_metadata_url: Option<String>,
    /// `scopes` (`scopes`, space-separated in `.mcp.json`): the scopes to ask for.
    pub scopes: Vec<String>,
    /// `auth_server_metadata_url` (`authServerMetadataUrl`): where the authorization server's
    /// metadata is, read instead of discovering it.
    pub auth_server_metadata_url: Option<String>,
    /// `grant`: how tokens are obtained.
    pub grant: McpOAuthGrant,
}

/// How a remote server's access tokens are obtained (`oauth.grant`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum McpOAuthGrant {
    /// `"authorization_code"`: a user logs in through a browser (`toolhost mcp login`).
    #[default]
    AuthorizationCode,
    /// `"client_credentials"`: a machine client (`client_id` and `client_secret_env`) gets
    /// its tokens itself, no user and no browser (the MCP client-credentials extension).
    ClientCredentials,
}

/// Where `toolhost mcp login` keeps the OAuth tokens of remote servers: the top-level
/// `mcp_oauth_store` (as Codex's `mcp_oauth_credentials_store`). One choice for the user, not
/// per server: the tokens are the user's, whichever server they open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum McpOAuthStore {
    /// `"auto"`: the OS keyring when one answers, else the 0600 file.
    #[default]
    Auto,
    /// `"keyring"`: the OS keyring (the Secret Service on Linux, the Keychain on macOS, the
    /// Credential Manager on Windows), or an error saying why there is none.
    Keyring,
    /// `"file"`: `~/.toolhost/mcp-oauth.json` only (mode 0600); the keyring is never touched.
    File,
}

impl McpOAuthStore {
    /// Every choice, in the order the configuration reference gives them.
    pub const ALL: [Self; 3] = [Self::Auto, Self::Keyring, Self::File];

    /// The value written in a configuration file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Keyring => "keyring",
            Self::File => "file",
        }
    }
}

impl std::str::FromStr for McpOAuthStore {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|choice| choice.as_str() == value)
            .ok_or_else(|| {
                format!(
                    "mcp_oauth_store = {value:?} is not a token store: give \"auto\" (the OS \
                     keyring when one answers, else the file), \"keyring\" or \"file\""
                )
            })
    }
}

impl McpServerConfig {
    /// A server with this name and transport and every default.
    pub fn new(name: impl Into<String>, transport: McpTransport) -> Self {
        Self {
            name: name.into(),
            transport,
            enabled: true,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            required: false,
            origin: String::new(),
            problem: None,
            oauth: McpOAuth::default(),
            headers_helper: None,
        }
    }

    /// Whether the tool the server calls `tool` passes `enabled_tools` and `disabled_tools`.
    pub fn allows_tool(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|enabled| enabled.iter().any(|name| name == tool))
            && !self.disabled_tools.iter().any(|name| name == tool)
    }
}

/// How toolhost talks to a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the clean environment.
        env: BTreeMap<String, String>,
        /// Its working folder (default: the workspace).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint, such as `https://example.com/mcp`.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
        /// The environment variable holding a bearer token.
        bearer_token_env: Option<String>,
    },
    /// The legacy HTTP+SSE transport (protocol 2024-11-05), spoken by toolhost's own client
    /// (rmcp 3.11 has none): a `GET` of `url` opens the event stream, whose `endpoint` event
    /// names where messages are `POST`ed, on the same origin. The stream closing counts as the
    /// server stopping: the next call connects again.
    Sse {
        /// The SSE endpoint (`http://` or `https://`), such as `http://localhost:3001/sse`.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
        /// The environment variable holding a bearer token.
        bearer_token_env: Option<String>,
    },
    /// A built-in provider of the same name, served in process
    /// (`toolhost_mcp::provider::McpProvider`); never read from a config file.
    InProcess,
}

impl McpTransport {
    /// `stdio`, `http` or `sse`, as `type` in `.mcp.json` says (`built-in` for a provider).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
            Self::Sse { .. } => "sse",
            Self::InProcess => "built-in",
        }
    }
}

/// Expands `${VAR}` and `${VAR:-default}` in `text` (Claude Code's syntax); `$` not followed by
/// `{` is kept. A variable that is not set and has no default is an error naming it.
pub fn expand_variables(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("'{text}' has a '${{' without its closing '}}'"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (lookup(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "the environment variable {name} is not set (used as ${{{name}}}); set it, \
                     or write ${{{name}:-default}}"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn lookup(name: &str) -> Option<String> {
        (name == "HOME").then(|| "/home/me".to_owned())
    }

    #[test]
    fn variables_expand_with_defaults_and_missing_ones_are_named() {
        assert_eq!(
            expand_variables("${HOME}/x:${NOPE:-d}$PATH", &lookup).unwrap(),
            "/home/me/x:d$PATH"
        );
        let error = expand_variables("Bearer ${TOKEN}", &lookup).unwrap_err();
        assert!(error.contains("TOKEN is not set"), "{error}");
        assert!(expand_variables("${HOME", &lookup).is_err());
    }

    #[test]
    fn tool_filters_apply_enabled_then_disabled() {
        let mut config = McpServerConfig::new(
            "s",
            McpTransport::Sse {
                url: "http://x".into(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
            },
        );
        assert!(config.allows_tool("a"));
        config.enabled_tools = Some(vec!["a".into(), "b".into()]);
        config.disabled_tools = vec!["b".into()];
        assert!(config.allows_tool("a"));
        assert!(!config.allows_tool("b"));
        assert!(!config.allows_tool("c"));
    }
}
