//! `[mcp_servers.NAME]` in the TOML layers, and Claude Code's `.mcp.json` read as it is.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::mcp_server::expand_variables;
use crate::mcp_server::{McpOAuth, McpOAuthGrant, McpServerConfig, McpTransport};
use serde::Deserialize;

/// Claude Code's project file of MCP servers, in the workspace root.
pub const CLAUDE_MCP_JSON: &str = ".mcp.json";

/// One `[mcp_servers.NAME]` table; every key is checked.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileMcpServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    headers: BTreeMap<String, String>,
    bearer_token_env: Option<String>,
    headers_helper: Option<String>,
    enabled: Option<bool>,
    enabled_tools: Option<Vec<String>>,
    disabled_tools: Vec<String>,
    /// Seconds.
    startup_timeout: Option<u64>,
    /// Seconds.
    tool_timeout: Option<u64>,
    required: Option<bool>,
    oauth: Option<FileOAuth>,
}

/// `[mcp_servers.NAME.oauth]`; every key is checked.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileOAuth {
    client_id: Option<String>,
    client_secret_env: Option<String>,
    callback_port: Option<u16>,
    callback_url: Option<String>,
    client_metadata_url: Option<String>,
    scopes: Vec<String>,
    auth_server_metadata_url: Option<String>,
    grant: Option<String>,
}

/// `.mcp.json`'s `oauth` object, as Claude Code writes it (`claude mcp add --client-id …
/// --callback-port …`); keys toolhost has no use for are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeOAuth {
    #[serde(rename = "clientId")]
    client_id: Option<String>,
    #[serde(rename = "callbackPort")]
    callback_port: Option<u16>,
    /// One space-separated string.
    scopes: Option<String>,
    #[serde(rename = "authServerMetadataUrl")]
    auth_server_metadata_url: Option<String>,
}

impl From<ClaudeOAuth> for FileOAuth {
    fn from(oauth: ClaudeOAuth) -> Self {
        Self {
            client_id: oauth.client_id,
            callback_port: oauth.callback_port,
            scopes: oauth
                .scopes
                .map(|scopes| scopes.split_whitespace().map(str::to_owned).collect())
                .unwrap_or_default(),
            auth_server_metadata_url: oauth.auth_server_metadata_url,
            ..Self::default()
        }
    }
}

/// One server of `.mcp.json`: Claude Code's keys, others ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeMcpServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    url: Option<String>,
    headers: BTreeMap<String, String>,
    #[serde(rename = "headersHelper")]
    headers_helper: Option<String>,
    oauth: Option<ClaudeOAuth>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeMcpJson {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ClaudeMcpServer>,
}

impl From<ClaudeMcpServer> for FileMcpServer {
    fn from(server: ClaudeMcpServer) -> Self {
        Self {
            kind: server.kind,
            command: server.command,
            args: server.args,
            env: server.env,
            url: server.url,
            headers: server.headers,
            oauth: server.oauth.map(FileOAuth::from),
            ..Self::default()
        }
    }
}

/// The environment the values expand from.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A server from its table: the transport from `type` or from `command` / `url`, `${VAR}`
/// expanded in every string value (a variable that is not set makes the server report a
/// problem when it starts, rather than stopping every command), `cwd` resolved against the
/// workspace. `table` is the entry's key as written (`mcp_servers.git`), for messages. `Err`
/// says what is wrong with the table.
pub(super) fn server_config(
    name: &str,
    table: &str,
    file: FileMcpServer,
    origin: String,
    workspace: &Path,
    lookup: Lookup<'_>,
) -> Result<McpServerConfig, String> {
    let mut problem = None;
    let mut expand = |text: String| match expand_variables(&text, lookup) {
        Ok(expanded) => expanded,
        Err(error) => {
            problem.get_or_insert(format!("{error} ({origin})"));
            text
        }
    };
    let kind = file.kind.as_deref().map(str::to_ascii_lowercase);
    let transport = match (kind.as_deref(), file.command, file.url) {
        (Some("stdio") | None, Some(command), None) => McpTransport::Stdio {
            command: expand(command),
            args: file.args.into_iter().map(&mut expand).collect(),
            env: file
                .env
                .into_iter()
                .map(|(key, value)| (key, expand(value)))
                .collect(),
            cwd: file.cwd.map(|cwd| workspace.join(expand(cwd))),
        },
        (Some("http" | "streamable-http" | "streamable_http") | None, None, Some(url)) => {
            McpTransport::Http {
                url: expand(url),
                headers: expand_map(file.headers, &mut expand),
                bearer_token_env: file.bearer_token_env,
            }
        }
        (Some("sse"), None, Some(url)) => McpTransport::Sse {
            url: expand(url),
            headers: expand_map(file.headers, &mut expand),
            bearer_token_env: file.bearer_token_env,
        },
        (_, Some(_), Some(_)) => {
            return Err(format!(
                "{table} has both command and url: give command (a stdio server) or \
                 url (an HTTP server)"
            ));
        }
        (_, None, None) => {
            return Err(format!(
                "{table} has neither command nor url: give command = \"program\" for \
                 a stdio server or url = \"https://…\" for an HTTP server"
            ));
        }
        (Some(other), _, _) => {
            return Err(format!(
                "{table}: type '{other}' does not fit its keys; use \"stdio\" with \
                 command, or \"http\" / \"sse\" with url"
            ));
        }
    };
    let headers_helper = match (file.headers_helper, &transport) {
        (Some(_), McpTransport::Stdio { .. }) => {
            return Err(format!(
                "{table}.headers_helper is for http and sse servers (it prints their headers); \
                 a stdio server takes env"
            ));
        }
        (helper, _) => helper.map(&mut expand),
    };
    let seconds = |key: &str, value: Option<u64>, default: Duration| match value {
        Some(0) => Err(format!(
            "{table}.{key} of 0 seconds would stop every server: give at least 1"
        )),
        Some(seconds) => Ok(Duration::from_secs(seconds)),
        None => Ok(default),
    };
    let oauth = match file.oauth {
        Some(_)
            if !matches!(
                transport,
                McpTransport::Http { .. } | McpTransport::Sse { .. }
            ) =>
        {
            return Err(format!(
                "{table}.oauth: OAuth logins are for remote servers (url = …, Streamable HTTP or \
                 SSE), and this is a {} server",
                transport.kind()
            ));
        }
        Some(oauth) => McpOAuth {
            grant: match oauth.grant.as_deref() {
                None | Some("authorization_code") => McpOAuthGrant::AuthorizationCode,
                Some("client_credentials")
                    if oauth.client_id.is_some() && oauth.client_secret_env.is_some() =>
                {
                    McpOAuthGrant::ClientCredentials
                }
                Some("client_credentials") => {
                    return Err(format!(
                        "{table}.oauth.grant = \"client_credentials\" needs the client: set \
                         client_id and client_secret_env"
                    ));
                }
                Some(other) => {
                    return Err(format!(
                        "{table}.oauth.grant: '{other}' is not a grant toolhost knows; use \
                         \"authorization_code\" (a user logs in) or \"client_credentials\" (a \
                         machine client)"
                    ));
                }
            },
            client_id: oauth.client_id.map(&mut expand),
            client_secret_env: oauth.client_secret_env,
            callback_port: oauth.callback_port,
            callback_url: oauth.callback_url.map(&mut expand),
            client_metadata_url: oauth.client_metadata_url.map(&mut expand),
            scopes: oauth.scopes,
            auth_server_metadata_url: oauth.auth_server_metadata_url.map(&mut expand),
        },
        None => McpOAuth::default(),
    };
    let mut config = McpServerConfig::new(name, transport);
    config.oauth = oauth;
    config.startup_timeout = seconds(
        "startup_timeout",
        file.startup_timeout,
        config.startup_timeout,
    )?;
    config.tool_timeout = seconds("tool_timeout", file.tool_timeout, config.tool_timeout)?;
    config.enabled = file.enabled.unwrap_or(true);
    config.required = file.required.unwrap_or(false);
    config.enabled_tools = file.enabled_tools;
    config.disabled_tools = file.disabled_tools;
    config.origin = origin;
    config.problem = problem;
    config.headers_helper = headers_helper;
    Ok(config)
}

/// A direct server of an agent (`[agents.AGENT.direct_mcp_servers.ID]`): the keys of a
/// `[mcp_servers]` table, parsed the same way, but stdio only, since the agent owns the
/// process. `table` is the entry's key as written, for messages.
pub(super) fn direct_server_config(
    id: &str,
    table: &str,
    file: FileMcpServer,
    origin: String,
    workspace: &Path,
    lookup: Lookup<'_>,
) -> Result<McpServerConfig, String> {
    let remote_keys: Vec<&str> = [
        ("url", file.url.is_some()),
        ("headers", !file.headers.is_empty()),
        ("bearer_token_env", file.bearer_token_env.is_some()),
        ("headers_helper", file.headers_helper.is_some()),
        (
            "type",
            file.kind
                .as_deref()
                .is_some_and(|kind| !kind.eq_ignore_ascii_case("stdio")),
        ),
    ]
    .into_iter()
    .filter_map(|(key, set)| set.then_some(key))
    .collect();
    if !remote_keys.is_empty() {
        return Err(format!(
            "{table}: direct MCP servers are stdio servers that the agent starts, so {} is not \
             allowed here; declare an HTTP server under [mcp_servers.{id}] and list it in the \
             agent's mcp_servers",
            remote_keys.join(", ")
        ));
    }
    server_config(id, table, file, origin, workspace, lookup)
}

fn expand_map(
    map: BTreeMap<String, String>,
    expand: &mut impl FnMut(String) -> String,
) -> BTreeMap<String, String> {
    map.into_iter()
        .map(|(key, value)| (key, expand(value)))
        .collect()
}

/// One server as Claude Code writes it (an entry of `.mcp.json`'s `mcpServers`, or an inline
/// server of an agent file's `mcpServers`), `${VAR}` expanded; `Err` says why it cannot be
/// used. `origin` names where it is written (`path:line`).
pub fn claude_mcp_server(
    name: &str,
    entry: serde_json::Value,
    origin: String,
    lookup: Lookup<'_>,
) -> Result<McpServerConfig, String> {
    let server: ClaudeMcpServer = serde_json::from_value(entry)
        .map_err(|error| format!("the server '{name}' does not read as a server: {error}"))?;
    let headers_helper = server.headers_helper.clone();
    // Claude Code's entries have no `cwd`: the workspace is never joined.
    let mut config = server_config(
        name,
        &format!("mcpServers.{name}"),
        server.into(),
        origin,
        Path::new(""),
        lookup,
    )?;
    if !matches!(config.transport, McpTransport::Stdio { .. }) {
        config.headers_helper = headers_helper;
    }
    Ok(config)
}

/// The usable servers of a `.mcp.json`, and a warning for each one left out.
pub type ClaudeServers = (Vec<McpServerConfig>, Vec<String>);

/// The servers of a `.mcp.json` text, and a warning for each server left out because it is not
/// usable (no `command` nor `url`, say); `Err((line, message))` when the file does not parse.
pub fn claude_mcp_json(
    path: &Path,
    text: &str,
    workspace: &Path,
    lookup: Lookup<'_>,
) -> Result<ClaudeServers, (Option<usize>, String)> {
    let mut file: ClaudeMcpJson =
        serde_json::from_str(text).map_err(|error| (Some(error.line()), error.to_string()))?;
    // Plugins' `.mcp.json` often holds the servers without the `mcpServers` wrapper.
    if file.mcp_servers.is_empty()
        && !text.contains("\"mcpServers\"")
        && let Ok(servers) = serde_json::from_str::<BTreeMap<String, ClaudeMcpServer>>(text)
    {
        file.mcp_servers = servers;
    }
    let line_of = |name: &str| {
        text.find(&format!("\"{name}\""))
            .map(|offset| text[..offset].matches('\n').count() + 1)
    };
    let mut servers = Vec::new();
    let mut warnings = Vec::new();
    for (name, server) in file.mcp_servers {
        let line = line_of(&name);
        let origin = format!("{}:{}", path.display(), line.unwrap_or(1));
        let headers_helper = server.headers_helper.clone();
        match server_config(
            &name,
            &format!("mcp_servers.{name}"),
            server.into(),
            origin.clone(),
            workspace,
            lookup,
        ) {
            Ok(mut server) => {
                if let Some(helper) = headers_helper {
                    if matches!(server.transport, McpTransport::Stdio { .. }) {
                        warnings.push(format!(
                            "{origin}: the server '{name}' has a headersHelper, which only a \
                             remote (http or sse) server uses; it is ignored"
                        ));
                    } else {
                        server.headers_helper = Some(helper);
                    }
                }
                servers.push(server);
            }
            Err(message) => {
                warnings.push(format!(
                    "{origin}: {message}; the server '{name}' is left out"
                ));
            }
        }
    }
    Ok((servers, warnings))
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
