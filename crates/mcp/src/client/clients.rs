//! Every configured server of a session: started together, their tools registered, kept in
//! step with `tools/list_changed`, stopped together.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use serde_json::Value;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use toolhost_core::{RegistryError, Tool, ToolRegistry, ToolSpec};

use super::background::{
    Adopter, Destination, FirstTry, PendingStart, ToolFilter, start_until_adopted,
};
use super::config::{McpServerConfig, McpTransport};
use super::connection::ServerConnection;
use super::convert;
use super::naming::ToolNamer;
pub use super::report::{McpServerFailure, McpStartReport};
use super::tool::McpTool;
use crate::provider::McpProvider;

/// What [`McpClients::start_with`] waits for before it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpStartup {
    /// Every server, until it has started or failed: for a command whose first model request
    /// must hold every tool (`run`, `chat`, `call`, `tools`).
    WaitForAll,
    /// Only the `required` servers (and the built-in providers, which need no start): the
    /// others start in the background, and each one's tools join the registry that
    /// [`McpClients::keep_in_sync`] keeps, once it is ready; one that fails is logged and
    /// tried again. For a gateway, which must answer its client at once whatever a server
    /// does.
    Background,
}

/// The MCP servers of a session and their tools.
pub struct McpClients {
    /// The servers that started.
    pub(super) servers: Mutex<Vec<Arc<ServerConnection>>>,
    /// The servers that did not start and are not `required`: [`Self::keep_in_sync`] tries
    /// them again.
    failed: Mutex<Vec<Arc<ServerConnection>>>,
    /// The starts under way in the background ([`McpStartup::Background`]):
    /// [`Self::keep_in_sync`] waits for them.
    pending: Mutex<Vec<PendingStart>>,
    namer: Mutex<ToolNamer>,
    /// The current tools of each server, by server name.
    tools: Mutex<BTreeMap<String, Vec<Arc<McpTool>>>>,
    /// Cancelled by [`Self::shutdown`]: ends the retries.
    stopping: CancellationToken,
    /// The tasks that retry servers that failed at start-up; [`Self::shutdown`] waits for them.
    retries: Mutex<Vec<JoinHandle<()>>>,
    /// What the start returned, for `toolhost doctor`.
    report: McpStartReport,
    /// Turned true by [`Self::release_background_starts`]: the background starts wait for it.
    released: tokio::sync::watch::Sender<bool>,
}

impl McpClients {
    /// No servers.
    pub fn empty() -> Self {
        Self {
            servers: Mutex::default(),
            failed: Mutex::default(),
            pending: Mutex::default(),
            namer: Mutex::new(ToolNamer::new()),
            tools: Mutex::new(BTreeMap::new()),
            stopping: CancellationToken::new(),
            retries: Mutex::default(),
            report: McpStartReport::default(),
            released: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Lets the servers left to start in the background ([`McpStartup::Background`]) start
    /// now: a gateway calls it once its client has its first answer. Without a call they start
    /// after [`BACKGROUND_START_HOLD`](super::background::BACKGROUND_START_HOLD).
    pub fn release_background_starts(&self) {
        self.released.send_replace(true);
    }

    /// Starts every enabled server at once, each within its `startup_timeout`; stdio servers
    /// run in `workspace` unless their `cwd` says otherwise. A server that fails is reported
    /// and left out; only [`Self::keep_in_sync`] (for long-running commands) tries it again.
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
        Self::start_with(configs, providers, workspace, McpStartup::WaitForAll).await
    }

    /// [`Self::start_with_providers`], waiting for what `startup` says. With
    /// [`McpStartup::Background`] the report holds only the servers waited for; the others
    /// start meanwhile, and [`Self::keep_in_sync`] adds their tools when they are ready.
    pub async fn start_with(
        configs: impl IntoIterator<Item = McpServerConfig>,
        providers: Vec<Arc<dyn McpProvider>>,
        workspace: &Path,
        startup: McpStartup,
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
        let mut pending = Vec::new();
        let released = tokio::sync::watch::Sender::new(false);
        for server in configured.collect::<Vec<_>>().into_iter().chain(built_in) {
            let server = Arc::new(server);
            // A problem of the entry fails at once, and a provider starts at once: only a
            // real start is worth leaving to the background.
            if startup == McpStartup::Background
                && !server.config.required
                && server.config.problem.is_none()
                && !server.is_in_process()
            {
                pending.push(PendingStart::spawn(server, released.subscribe()));
                continue;
            }
            starting.spawn(async move {
                let listed = server.start().await;
                (server, listed)
            });
        }
        let mut started = Vec::new();
        let mut failed = Vec::new();
        while let Some(joined) = starting.join_next().await {
            let Ok((server, listed)) = joined else {
                continue;
            };
            match listed {
                Ok(tools) => started.push((server, tools)),
                Err(message) => {
                    report.failures.push(McpServerFailure {
                        server: server.config.name.clone(),
                        origin: server.config.origin.clone(),
                        required: server.config.required,
                        message,
                    });
                    // Waiting fixes neither a configuration problem (a variable not set) nor a
                    // built-in provider that fails (a bug).
                    if !server.config.required
                        && server.config.problem.is_none()
                        && !matches!(server.config.transport, McpTransport::InProcess)
                    {
                        failed.push(server);
                    }
                }
            }
        }
        failed.sort_by(|a, b| a.config.name.cmp(&b.config.name));
        // Name tools server by server in the order of the servers' names (not the order in
        // which they answered), so that collisions resolve the same way each time. A server
        // that starts later, on a retry, names its tools after all of these.
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
        let clients = Self {
            servers: Mutex::new(servers),
            failed: Mutex::new(failed),
            pending: Mutex::new(pending),
            report: report.clone(),
            released,
            ..clients
        };
        (Arc::new(clients), report)
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

    /// What the start reported: the servers it waited for that started (with their tool
    /// counts), those that failed and those disabled.
    pub fn start_report(&self) -> &McpStartReport {
        &self.report
    }

    /// The started servers.
    pub(super) fn started(&self) -> Vec<Arc<ServerConnection>> {
        self.servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The names of the started servers.
    pub fn server_names(&self) -> Vec<String> {
        self.servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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

    /// Keeps `registry` in step with the servers, for a long-running command: on
    /// `tools/list_changed` (or after a restart) a server's tools are listed again, and its
    /// tools in `registry` replaced by those that `keep` accepts. A server that failed at
    /// start-up (and is not `required`) is started again in the background, after
    /// [`FIRST_START_RETRY`](super::FIRST_START_RETRY), then twice as long after each failure up to
    /// [`MAX_RESTART_BACKOFF`](super::MAX_RESTART_BACKOFF); once it starts, its tools join
    /// `registry`, as do those of a server left to start in the background
    /// ([`McpStartup::Background`]) once it is ready. Runs until the clients are shut down or
    /// dropped.
    pub fn keep_in_sync(
        self: &Arc<Self>,
        registry: Arc<ToolRegistry>,
        keep: impl Fn(&ToolSpec) -> bool + Send + Sync + 'static,
    ) {
        let keep: ToolFilter = Arc::new(keep);
        let servers = self
            .servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for server in servers {
            self.follow(server, Arc::clone(&registry), Arc::clone(&keep));
        }
        let failed =
            std::mem::take(&mut *self.failed.lock().unwrap_or_else(PoisonError::into_inner));
        let pending =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        let later = failed
            .into_iter()
            .map(|server| (server, FirstTry::Failed))
            .chain(
                pending
                    .into_iter()
                    .map(|start| (start.server, FirstTry::UnderWay(start.start))),
            );
        let mut retries = self.retries.lock().unwrap_or_else(PoisonError::into_inner);
        for (server, first) in later {
            let clients: Weak<McpClients> = Arc::downgrade(self);
            let destination = Destination {
                clients,
                registry: Arc::clone(&registry),
                keep: Arc::clone(&keep),
                stopping: self.stopping.clone(),
            };
            retries.push(tokio::spawn(start_until_adopted(
                server,
                first,
                destination,
            )));
        }
    }

    /// Lists `server`'s tools again whenever it says they changed.
    pub(super) fn follow(
        self: &Arc<Self>,
        server: Arc<ServerConnection>,
        registry: Arc<ToolRegistry>,
        keep: ToolFilter,
    ) {
        let clients = Arc::downgrade(self);
        let changed = Arc::clone(&server.events.tools_changed);
        let stopping = self.stopping.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = changed.notified() => {}
                    () = stopping.cancelled() => return,
                }
                let Some(clients) = clients.upgrade() else {
                    return;
                };
                clients.relist(&server, &registry, &keep).await;
            }
        });
    }

    async fn relist(
        &self,
        server: &Arc<ServerConnection>,
        registry: &ToolRegistry,
        keep: &ToolFilter,
    ) {
        let listed = match server.list_tools_now().await {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(
                    server = %server.config.name,
                    "cannot list the MCP server's tools again: {error}"
                );
                return;
            }
        };
        self.replace_tools(server, &listed, registry, keep);
        tracing::info!(
            server = %server.config.name,
            tools = listed.len(),
            "MCP tools listed again"
        );
    }

    /// Puts `listed` in `registry` in place of the server's previous tools.
    pub(super) fn replace_tools(
        &self,
        server: &Arc<ServerConnection>,
        listed: &[Value],
        registry: &ToolRegistry,
        keep: &ToolFilter,
    ) {
        let name = &server.config.name;
        let tools = self.make_tools(server, listed);
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
    }

    /// Stops every server for good (a later call is refused rather than starting it again),
    /// the starts under way and the retries of those that failed, waiting until each of
    /// their servers is stopped too.
    pub async fn shutdown(&self) {
        self.stopping.cancel();
        let pending =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        for start in pending {
            start.abort().await;
        }
        let servers = self
            .servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for server in servers {
            server.shutdown().await;
        }
        let retries =
            std::mem::take(&mut *self.retries.lock().unwrap_or_else(PoisonError::into_inner));
        for retry in retries {
            let _ = retry.await;
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

/// A late start joins the clients under the lock that [`McpClients::shutdown`] takes after
/// cancelling: either the shutdown sees this server, or this sees that it is stopping.
impl Adopter for McpClients {
    fn adopt(
        self: Arc<Self>,
        server: &Arc<ServerConnection>,
        listed: &[Value],
        registry: &Arc<ToolRegistry>,
        keep: &ToolFilter,
        stopping: &CancellationToken,
    ) -> bool {
        {
            let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
            if stopping.is_cancelled() {
                return false;
            }
            servers.push(Arc::clone(server));
        }
        self.replace_tools(server, listed, registry, keep);
        self.follow(Arc::clone(server), Arc::clone(registry), Arc::clone(keep));
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[tokio::test]
    async fn entries_that_no_retry_can_fix_are_reported_once_and_not_retried() {
        let sse = |name: &str, url: &str, headers: &[(&str, &str)], token: Option<&str>| {
            McpServerConfig::new(
                name,
                McpTransport::Sse {
                    url: url.to_owned(),
                    headers: headers
                        .iter()
                        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                        .collect(),
                    bearer_token_env: token.map(str::to_owned),
                },
            )
        };
        let http = McpServerConfig::new(
            "gopher",
            McpTransport::Http {
                url: "gopher://127.0.0.1/mcp".to_owned(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
            },
        );
        let configs = [
            sse(
                "header",
                "http://127.0.0.1:9/sse",
                &[("bad name", "x")],
                None,
            ),
            sse(
                "token",
                "http://127.0.0.1:9/sse",
                &[],
                Some("TOOLHOST_TEST_SURELY_UNSET_TOKEN"),
            ),
            http,
        ];
        let workspace = std::env::temp_dir();
        let (clients, report) = McpClients::start(configs, &workspace).await;
        let messages: Vec<String> = report.failures.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(
            messages[0].contains("not an http:// or https://"),
            "{messages:?}"
        );
        assert!(
            messages[1].contains("header name 'bad name'"),
            "{messages:?}"
        );
        assert!(
            messages[2].contains("TOOLHOST_TEST_SURELY_UNSET_TOKEN is not set"),
            "{messages:?}"
        );
        // `keep_in_sync` retries what is left in `failed`: nothing.
        assert!(clients.failed.lock().unwrap().is_empty());
    }
}
