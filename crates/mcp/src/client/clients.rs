//! Every configured server of a session: started together, their tools registered, kept in
//! step with `tools/list_changed`, stopped together.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::task::JoinSet;
use toolhost_core::{RegistryError, Tool, ToolRegistry, ToolSpec};

use super::config::McpServerConfig;
use super::connection::ServerConnection;
use super::convert;
use super::naming::ToolNamer;
use super::tool::McpTool;
use crate::provider::McpProvider;

/// A server that did not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerFailure {
    /// The configured name.
    pub server: String,
    /// Where it was configured (`path:line`).
    pub origin: String,
    /// Whether it was `required`: then the command must stop.
    pub required: bool,
    /// What went wrong, with the end of its stderr for a stdio server.
    pub message: String,
}

impl fmt::Display for McpServerFailure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "the MCP server '{}' ({}) did not start: {}",
            self.server, self.origin, self.message
        )
    }
}

/// What [`McpClients::start`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpStartReport {
    /// The servers that started, with how many tools each gave.
    pub started: Vec<(String, usize)>,
    /// The servers that did not.
    pub failures: Vec<McpServerFailure>,
    /// The servers skipped because `enabled = false`.
    pub disabled: Vec<String>,
}

impl McpStartReport {
    /// The first failure of a `required` server.
    pub fn required_failure(&self) -> Option<&McpServerFailure> {
        self.failures.iter().find(|failure| failure.required)
    }
}

type ToolFilter = Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>;

/// The MCP servers of a session and their tools.
pub struct McpClients {
    servers: Vec<Arc<ServerConnection>>,
    namer: Mutex<ToolNamer>,
    /// The current tools of each server, by server name.
    tools: Mutex<BTreeMap<String, Vec<Arc<McpTool>>>>,
}

impl McpClients {
    /// No servers.
    pub fn empty() -> Self {
        Self {
            servers: Vec::new(),
            namer: Mutex::new(ToolNamer::new()),
            tools: Mutex::new(BTreeMap::new()),
        }
    }

    /// Starts every enabled server at once, each within its `startup_timeout`; stdio servers
    /// run in `workspace` unless their `cwd` says otherwise. A server that fails is reported
    /// and left out; it is not retried until [`Self::start`] runs again.
    pub async fn start(
        configs: impl IntoIterator<Item = McpServerConfig>,
        workspace: &Path,
    ) -> (Arc<Self>, McpStartReport) {
        Self::start_with_providers(configs, Vec::new(), workspace).await
    }

    /// [`Self::start`], with built-in `providers` (the eligible ones) next to the configured
    /// servers: each is served in process and reached through the same client, so that its
    /// tools are named, converted, confirmed and truncated like any server's.
    pub async fn start_with_providers(
        configs: impl IntoIterator<Item = McpServerConfig>,
        providers: Vec<Arc<dyn McpProvider>>,
        workspace: &Path,
    ) -> (Arc<Self>, McpStartReport) {
        let mut report = McpStartReport::default();
        let mut starting = JoinSet::new();
        let configured = configs.into_iter().filter_map(|config| {
            if config.enabled {
                Some(ServerConnection::new(config, workspace.to_path_buf()))
            } else {
                report.disabled.push(config.name);
                None
            }
        });
        let built_in = providers
            .into_iter()
            .map(|provider| ServerConnection::in_process(provider, workspace.to_path_buf()));
        for server in configured.collect::<Vec<_>>().into_iter().chain(built_in) {
            let server = Arc::new(server);
            starting.spawn(async move {
                let listed = server.start().await;
                (server, listed)
            });
        }
        let mut started = Vec::new();
        while let Some(joined) = starting.join_next().await {
            let Ok((server, listed)) = joined else {
                continue;
            };
            match listed {
                Ok(tools) => started.push((server, tools)),
                Err(message) => report.failures.push(McpServerFailure {
                    server: server.config.name.clone(),
                    origin: server.config.origin.clone(),
                    required: server.config.required,
                    message,
                }),
            }
        }
        // Name tools in configuration order, so that collisions resolve the same way each time.
        started.sort_by(|(a, _), (b, _)| a.config.name.cmp(&b.config.name));
        report.failures.sort_by(|a, b| a.server.cmp(&b.server));
        let clients = Self::empty();
        let mut servers = Vec::new();
        for (server, listed) in started {
            report
                .started
                .push((server.config.name.clone(), listed.len()));
            let tools = clients.make_tools(&server, &listed);
            clients
                .tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(server.config.name.clone(), tools);
            servers.push(server);
        }
        (Arc::new(Self { servers, ..clients }), report)
    }

    fn make_tools(&self, server: &Arc<ServerConnection>, listed: &[Value]) -> Vec<Arc<McpTool>> {
        let mut namer = self.namer.lock().unwrap_or_else(PoisonError::into_inner);
        listed
            .iter()
            .filter_map(|tool| {
                let original = tool.get("name")?.as_str()?.to_owned();
                let name = namer.name(&server.config.name, &original);
                let spec = convert::tool_spec(&name, &server.config.name, tool);
                Some(Arc::new(McpTool::new(Arc::clone(server), original, spec)))
            })
            .collect()
    }

    /// The names of the started servers.
    pub fn server_names(&self) -> Vec<String> {
        self.servers
            .iter()
            .map(|server| server.config.name.clone())
            .collect()
    }

    /// Every tool of every started server.
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .flatten()
            .cloned()
            .collect()
    }

    /// Registers every tool in `registry`. A schema the registry cannot compile is replaced
    /// by a permissive one (the server still validates its own arguments); other refusals
    /// are returned.
    pub fn register_into(&self, registry: &ToolRegistry) -> Vec<RegistryError> {
        self.tools()
            .into_iter()
            .filter_map(|tool| register(registry, &tool).err())
            .collect()
    }

    /// Keeps `registry` in step with the servers: on `tools/list_changed` (or after a
    /// restart) a server's tools are listed again, and its tools in `registry` replaced by
    /// those that `keep` accepts. Runs until the clients are dropped.
    pub fn keep_in_sync(
        self: &Arc<Self>,
        registry: Arc<ToolRegistry>,
        keep: impl Fn(&ToolSpec) -> bool + Send + Sync + 'static,
    ) {
        let keep: ToolFilter = Arc::new(keep);
        for server in &self.servers {
            let clients = Arc::downgrade(self);
            let server = Arc::clone(server);
            let registry = Arc::clone(&registry);
            let keep = Arc::clone(&keep);
            let changed = Arc::clone(&server.events.tools_changed);
            tokio::spawn(async move {
                loop {
                    changed.notified().await;
                    let Some(clients) = clients.upgrade() else {
                        return;
                    };
                    clients.relist(&server, &registry, &keep).await;
                }
            });
        }
    }

    async fn relist(
        &self,
        server: &Arc<ServerConnection>,
        registry: &ToolRegistry,
        keep: &ToolFilter,
    ) {
        let name = &server.config.name;
        let listed = match server.list_tools_now().await {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(server = %name, "cannot list the MCP server's tools again: {error}");
                return;
            }
        };
        let tools = self.make_tools(server, &listed);
        let old = self
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.clone(), tools.clone())
            .unwrap_or_default();
        for tool in old {
            registry.unregister(&tool.spec().name);
        }
        for tool in tools.iter().filter(|tool| keep(&tool.spec())) {
            if let Err(error) = register(registry, tool) {
                tracing::warn!(server = %name, "an MCP tool is refused: {error}");
            }
        }
        tracing::info!(server = %name, tools = tools.len(), "MCP tools listed again");
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        for server in &self.servers {
            server.shutdown().await;
        }
    }
}

fn register(registry: &ToolRegistry, tool: &Arc<McpTool>) -> Result<(), RegistryError> {
    let as_tool: Arc<dyn Tool> = Arc::clone(tool) as Arc<dyn Tool>;
    match registry.register_arc(as_tool) {
        Err(RegistryError::InvalidSchema { name, reason }) => {
            tracing::warn!(
                "the MCP tool {name} has a schema that does not compile ({reason}); it accepts \
                 any object instead"
            );
            let spec = tool.spec().with_parameters(convert::permissive_schema());
            registry.register(tool.with_spec(spec))
        }
        other => other,
    }
}
