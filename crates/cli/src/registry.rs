//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use toolhost_agent::{Config, Permissions};
use toolhost_core::ToolRegistry;
use toolhost_mcp::McpClients;
use toolhost_script::{CustomTools, ScriptHost, ScriptLimits};
use toolhost_tools::{Workspace, builtin_tools};

use crate::script_host::{PermissionExecGate, WorkspaceFileSystem};

/// Where each custom tool came from, by name (built-ins are absent).
pub type CustomToolSources = BTreeMap<String, PathBuf>;

/// The registry for this workspace: every built-in tool, with the configured limits and the
/// permission system, then the custom tools discovered on disk (R33–R35). A custom tool that
/// fails to load or clashes is logged as a warning; the others still load. The returned
/// [`CustomTools`] can reload them when their files change (`toolhost serve`).
///
/// The configured MCP servers start meanwhile, all at once (R30); their tools come last, named
/// `mcp__<server>__<tool>`. A server that fails is reported on stderr with its name and the
/// end of its stderr and left out, unless it is `required`: then the command stops.
pub async fn build_registry(
    workspace: &Path,
    config: &Config,
    permissions: &Permissions,
) -> anyhow::Result<(ToolRegistry, CustomTools, Arc<McpClients>)> {
    let mcp = tokio::spawn(start_mcp_servers(workspace.to_path_buf(), config.clone()));
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
    Ok((registry, custom, mcp))
}

/// Starts the configured MCP servers; a `required` one that fails is an error.
async fn start_mcp_servers(workspace: PathBuf, config: Config) -> anyhow::Result<Arc<McpClients>> {
    if config.mcp_servers.is_empty() {
        return Ok(Arc::new(McpClients::empty()));
    }
    let (clients, report) = McpClients::start(config.mcp_servers.into_values(), &workspace).await;
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
