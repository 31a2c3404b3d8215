//! The MCP servers an editor names in `session/new` and `session/load`, joined to the
//! configured ones.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::McpServer;
use toolhost_config::{McpServerConfig, McpTransport};

/// Adds the editor's MCP servers to the configured ones (and to those the agent sees, when
/// its definition lists them); a configured server of the same name wins.
pub fn join_editor_servers(
    configured: &mut BTreeMap<String, McpServerConfig>,
    agent_servers: &mut Option<Vec<String>>,
    editor: &[McpServer],
) {
    for server in editor {
        let (name, transport) = match server {
            McpServer::Stdio(stdio) => (
                stdio.name.clone(),
                McpTransport::Stdio {
                    command: stdio.command.display().to_string(),
                    args: stdio.args.clone(),
                    env: stdio
                        .env
                        .iter()
                        .map(|variable| (variable.name.clone(), variable.value.clone()))
                        .collect(),
                    cwd: None,
                },
            ),
            McpServer::Http(http) => (
                http.name.clone(),
                McpTransport::Http {
                    url: http.url.clone(),
                    headers: headers(&http.headers),
                    bearer_token_env: None,
                },
            ),
            McpServer::Sse(sse) => (
                sse.name.clone(),
                McpTransport::Sse {
                    url: sse.url.clone(),
                    headers: headers(&sse.headers),
                    bearer_token_env: None,
                },
            ),
            _ => continue,
        };
        if configured.contains_key(&name) {
            tracing::warn!(
                "the editor's MCP server '{name}' is not started: a configured server has that name"
            );
            continue;
        }
        let mut entry = McpServerConfig::new(name.clone(), transport);
        entry.origin = "the editor (session/new)".to_owned();
        configured.insert(name.clone(), entry);
        if let Some(listed) = agent_servers {
            listed.push(name);
        }
    }
}

fn headers(headers: &[agent_client_protocol::v1::schema::HttpHeader]) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|header| (header.name.clone(), header.value.clone()))
        .collect()
}
