//! The servers' resources as model tools, named as Codex names them: `list_mcp_resources`,
//! `list_mcp_resource_templates` and `read_mcp_resource`. They need confirmation like every
//! MCP tool (R17), so permission rules (`read_mcp_resource`, or a mode) decide, and a call
//! that names a server is also decided by that server's rules (`mcp__docs`,
//! `read_mcp_resource(docs)`).

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::service::Peer;
use serde_json::{Map, Value, json};
use toolhost_core::{
    ContentBlock, McpServerSubject, PermissionFamily, PermissionSubject, Tool, ToolAnnotations,
    ToolContext, ToolError, ToolOutput, ToolSpec,
};

use super::clients::McpClients;
use super::connection::ServerConnection;
use super::convert;
use super::naming::server_segment;

/// Which of the three tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResourceToolKind {
    ListResources,
    ListTemplates,
    Read,
}

/// One of the resource tools, over every started server of `clients`.
pub struct McpResourceTool {
    clients: Arc<McpClients>,
    kind: ResourceToolKind,
}

/// The three resource tools over `clients`' servers (those that start later included).
pub fn resource_tools(clients: &Arc<McpClients>) -> Vec<Arc<dyn Tool>> {
    [
        ResourceToolKind::ListResources,
        ResourceToolKind::ListTemplates,
        ResourceToolKind::Read,
    ]
    .into_iter()
    .map(|kind| {
        Arc::new(McpResourceTool {
            clients: Arc::clone(clients),
            kind,
        }) as Arc<dyn Tool>
    })
    .collect()
}

fn list_parameters(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": format!(
                "The MCP server whose {what} to list; every server's when left out.")},
            "cursor": {"type": "string", "description":
                "The nextCursor of a previous answer, to read on (needs server)."}
        },
        "additionalProperties": false
    })
}

#[async_trait::async_trait]
impl Tool for McpResourceTool {
    fn spec(&self) -> ToolSpec {
        let (name, description, parameters) = match self.kind {
            ResourceToolKind::ListResources => (
                "list_mcp_resources",
                "Lists the resources (files, documents, records) the MCP servers offer, with \
                 their server, uri, name and MIME type. Read one with read_mcp_resource.",
                list_parameters("resources"),
            ),
            ResourceToolKind::ListTemplates => (
                "list_mcp_resource_templates",
                "Lists the resource templates (URI patterns such as file:///{path}) the MCP \
                 servers offer. Fill one in and read it with read_mcp_resource.",
                list_parameters("resource templates"),
            ),
            ResourceToolKind::Read => (
                "read_mcp_resource",
                "Reads one resource of an MCP server by its URI (from list_mcp_resources, or a \
                 template filled in).",
                json!({
                    "type": "object",
                    "properties": {
                        "server": {"type": "string", "description": "The MCP server."},
                        "uri": {"type": "string", "description": "The resource's URI."}
                    },
                    "required": ["server", "uri"],
                    "additionalProperties": false
                }),
            ),
        };
        ToolSpec::new(name, description)
            .with_label(name.replace('_', " "))
            .with_parameters(parameters)
            .with_family(PermissionFamily::McpData)
            .with_annotations(ToolAnnotations {
                open_world: true,
                ..ToolAnnotations::READ_ONLY
            })
    }

    /// The server the call names, so that `mcp__server` rules and `read_mcp_resource(server)`
    /// rules decide as they do for that server's tools. A listing over every server names
    /// none: the servers that rules refuse are left out of it while it runs.
    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        args.get("server")
            .and_then(Value::as_str)
            .map_or(PermissionSubject::None, |server| {
                PermissionSubject::McpServer(server_subject(server))
            })
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        let server = text("server");
        match self.kind {
            ResourceToolKind::Read => {
                let (Some(server), Some(uri)) = (server, text("uri")) else {
                    return Err(ToolError::new("read_mcp_resource needs server and uri"));
                };
                self.read(&server, &uri, &ctx).await
            }
            kind => {
                self.list(kind, server.as_deref(), text("cursor"), &ctx)
                    .await
            }
        }
    }

    fn schema_is_trusted(&self) -> bool {
        true
    }
}

impl McpResourceTool {
    /// The servers to ask: the one named (an error if none is), or every started server that
    /// offers resources.
    async fn servers(
        &self,
        named: Option<&str>,
        ctx: &ToolContext,
    ) -> Result<Vec<(Arc<ServerConnection>, Peer<RoleClient>)>, ToolError> {
        let started: Vec<Arc<ServerConnection>> = self
            .clients
            .started()
            .into_iter()
            .filter(|server| !server.is_in_process())
            .collect();
        let Some(named) = named else {
            let mut offering = Vec::new();
            for server in started {
                if !ctx.allows_mcp_server(&server_subject(&server.config.name)) {
                    continue;
                }
                if let Ok(peer) = server.peer().await
                    && offers_resources(&peer)
                {
                    offering.push((server, peer));
                }
            }
            return Ok(offering);
        };
        let Some(server) = started.iter().find(|server| server.config.name == named) else {
            let names: Vec<&str> = started.iter().map(|s| s.config.name.as_str()).collect();
            return Err(ToolError::new(format!(
                "no MCP server '{named}' is running; the servers are: {}",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        };
        let peer = server.peer().await?;
        if !offers_resources(&peer) {
            return Err(ToolError::new(format!(
                "the MCP server '{named}' offers no resources"
            )));
        }
        Ok(vec![(Arc::clone(server), peer)])
    }

    async fn list(
        &self,
        kind: ResourceToolKind,
        server: Option<&str>,
        cursor: Option<String>,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if cursor.is_some() && server.is_none() {
            return Err(ToolError::new(
                "cursor reads on the list of one server: give server too",
            ));
        }
        let (key, what) = match kind {
            ResourceToolKind::ListTemplates => ("resourceTemplates", "resources/templates/list"),
            _ => ("resources", "resources/list"),
        };
        let mut listed = Vec::new();
        let mut next_cursor = None;
        for (connection, peer) in self.servers(server, ctx).await? {
            let params = Some(PaginatedRequestParams::default().with_cursor(cursor.clone()));
            let page = match kind {
                ResourceToolKind::ListTemplates => peer
                    .list_resource_templates(params)
                    .await
                    .map(|page| serde_json::to_value(page).unwrap_or_default()),
                _ => peer
                    .list_resources(params)
                    .await
                    .map(|page| serde_json::to_value(page).unwrap_or_default()),
            }
            .map_err(|error| {
                ToolError::new(format!(
                    "{what} of the MCP server '{}' failed: {error}",
                    connection.config.name
                ))
            })?;
            for entry in page
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut entry = entry.as_object().cloned().unwrap_or_default();
                entry.insert("server".to_owned(), json!(connection.config.name));
                listed.push(Value::Object(entry));
            }
            if server.is_some() {
                next_cursor = page.get("nextCursor").cloned();
            }
        }
        let mut answer = Map::new();
        answer.insert(key.to_owned(), Value::Array(listed));
        if let Some(cursor) = next_cursor.filter(|cursor| !cursor.is_null()) {
            answer.insert("nextCursor".to_owned(), cursor);
        }
        let answer = Value::Object(answer);
        Ok(ToolOutput {
            content: vec![ContentBlock::text(answer.to_string())],
            details: Some(answer),
            is_error: false,
        })
    }

    async fn read(
        &self,
        server: &str,
        uri: &str,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let servers = self.servers(Some(server), ctx).await?;
        let Some((_, peer)) = servers.first() else {
            return Err(ToolError::new(format!(
                "no MCP server '{server}' is running"
            )));
        };
        let result = peer
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|error| {
                ToolError::new(format!(
                    "reading {uri} from the MCP server '{server}' failed: {error}"
                ))
            })?;
        let json = serde_json::to_value(&result).unwrap_or_default();
        let content: Vec<ContentBlock> = json
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(convert::resource)
            .collect();
        if content.is_empty() {
            return Ok(ToolOutput::text(format!("{uri} has no contents")));
        }
        Ok(ToolOutput {
            content,
            details: None,
            is_error: false,
        })
    }
}

/// `server` as permission rules name it.
fn server_subject(server: &str) -> McpServerSubject {
    McpServerSubject {
        name: server.to_owned(),
        segment: server_segment(server),
    }
}

fn offers_resources(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.resources.is_some())
}
