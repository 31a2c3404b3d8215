//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock, Weak};

use anyhow::Context as _;
use toolhost_agent::{Config, Permissions};
use toolhost_core::ToolRegistry;
use toolhost_mcp::provider::ToolhostProvider;
use toolhost_mcp::{McpClients, McpProvider, McpProviders, ProviderContext};
use toolhost_script::{CustomTools, ScriptHost, ScriptLimits};
use toolhost_tools::{Workspace, builtin_tools};

use crate::script_host::{PermissionExecGate, WorkspaceFileSystem};

/// Where each custom tool came from, by name (built-ins are absent).
pub type CustomToolSources = BTreeMap<String, PathBuf>;

/// The name of the agent that the CLI's registry is for, as built-in MCP providers see it.
pub const MAIN_AGENT: &str = "main";

/// The registry a command offers (set once it exists), for the `toolhost` provider's
/// `status` tool, which is made before it.
#[derive(Clone, Default)]
pub struct OfferedRegistry(Arc<RwLock<Weak<ToolRegistry>>>);

impl OfferedRegistry {
    /// From now on `status` lists the tools of `registry`.
    pub fn set(&self, registry: &Arc<ToolRegistry>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(registry);
    }

    fn names(&self) -> Vec<String> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade()
            .map(|registry| registry.names())
            .unwrap_or_default()
    }
}

/// The built-in MCP providers (R30): `toolhost` (`mcp__toolhost__status`).
pub fn built_in_providers(workspace: &Path, offered: &OfferedRegistry) -> McpProviders {
    let offered = offered.clone();
    let toolhost = ToolhostProvider::new(workspace, Arc::new(move || offered.names()));
    let mut providers = McpProviders::new();
    // The only one so far: its name cannot clash.
    let _ = providers.register(Arc::new(toolhost));
    providers
}

/// The registry for this workspace: every built-in tool, with the configured limits and the
/// permission system, then the custom tools discovered on disk (R33–R35). A custom tool that
/// fails to load or clashes is logged as a warning; the others still load. The returned
/// [`CustomTools`] can reload them when their files change (`toolhost serve`).
///
/// The configured MCP servers start meanwhile, all at once (R30); their tools come last, named
/// `mcp__<server>__<tool>`, next to the built-in providers eligible for the main agent
/// (`mcp__toolhost__status`). A server that fails is reported on stderr with its name and the
/// end of its stderr and left out, unless it is `required`: then the command stops.
/// `offered` is set to the returned registry.
pub async fn build_registry(
    workspace: &Path,
    config: &Config,
    permissions: &Permissions,
    offered: &OfferedRegistry,
) -> anyhow::Result<(Arc<ToolRegistry>, CustomTools, Arc<McpClients>)> {
    let context = ProviderContext::new(MAIN_AGENT, permissions.mode());
    let providers = built_in_providers(workspace, offered).eligible(&context);
    let mcp = tokio::spawn(start_mcp_servers(
        workspace.to_path_buf(),
        config.clone(),
        providers,
    ));
    let mut builder = permissions.install(ToolRegistry::builder());
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    let registry = builder.build();
    let workspace_root = workspace;
    let workspace = Arc::new(
        Workspace::new(workspace)
            .with_context(|| format!("cannot use {} as the workspace", workspace.display()))?,
    );
    let refused = registry.register_all(builtin_tools(
        Arc::clone(&workspace),
        config.shell.bash_settings(),
    ));
    if let Some(error) = refused.into_iter().next() {
        return Err(error.into());
    }

    let mut host = ScriptHost::builder(workspace.root())
        .version(env!("CARGO_PKG_VERSION"))
        .limits(script_limits(config))
        .file_system(Arc::new(WorkspaceFileSystem(Arc::clone(&workspace))));
    if let Some(bash) = registry.get("Bash") {
        host = host.exec_gate(Arc::new(PermissionExecGate {
            policy: Arc::clone(permissions.policy()),
            bash,
        }));
    }
    let (custom, discovery) = CustomTools::discover(
        host.build(),
        config.custom_tools.paths.clone(),
        workspace_root.to_path_buf(),
        registry.names(),
    )
    .await;
    for error in &discovery.errors {
        tracing::warn!("{error}");
    }
    for refused in registry.register_all(discovery.tools.into_iter().map(|loaded| {
        let tool: Arc<dyn toolhost_core::Tool> = loaded.tool;
        tool
    })) {
        tracing::warn!("a custom tool is refused: {refused}");
    }
    let mcp = mcp.await.context("starting the MCP servers")??;
    for refused in mcp.register_into(&registry) {
        tracing::warn!("an MCP tool is refused: {refused}");
    }
    let registry = Arc::new(registry);
    offered.set(&registry);
    Ok((registry, custom, mcp))
}

/// Starts the configured MCP servers and the built-in `providers`; a `required` server that
/// fails is an error.
async fn start_mcp_servers(
    workspace: PathBuf,
    config: Config,
    providers: Vec<Arc<dyn McpProvider>>,
) -> anyhow::Result<Arc<McpClients>> {
    let (clients, report) =
        McpClients::start_with_providers(config.mcp_servers.into_values(), providers, &workspace)
            .await;
    if let Some(failure) = report.required_failure() {
        clients.shutdown().await;
        anyhow::bail!("{failure} (it is required = true)");
    }
    for failure in &report.failures {
        eprintln!("toolhost: warning: {failure}; its tools are left out");
    }
    Ok(clients)
}

/// Where each custom tool came from, by name.
pub fn custom_tool_sources(custom: &CustomTools) -> CustomToolSources {
    custom
        .tools()
        .iter()
        .map(|loaded| (loaded.tool.name().to_owned(), loaded.path.clone()))
        .collect()
}

/// The engine's limits with the `[custom_tools]` overrides.
fn script_limits(config: &Config) -> ScriptLimits {
    let custom = &config.custom_tools;
    let defaults = ScriptLimits::default();
    ScriptLimits {
        call_time_limit: custom.call_timeout.unwrap_or(defaults.call_time_limit),
        load_time_limit: custom.load_timeout.unwrap_or(defaults.load_time_limit),
        memory_limit: custom
            .memory_limit_mb
            .map_or(defaults.memory_limit, |megabytes| megabytes * 1024 * 1024),
        ..defaults
    }
}
