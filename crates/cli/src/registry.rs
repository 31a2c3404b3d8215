//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use toolhost_agent::{Config, Permissions};
use toolhost_core::ToolRegistry;
use toolhost_script::{CustomTools, ScriptHost, ScriptLimits};
use toolhost_tools::{Workspace, builtin_tools};

use crate::script_host::{PermissionExecGate, WorkspaceFileSystem};

/// Where each custom tool came from, by name (built-ins are absent).
pub type CustomToolSources = BTreeMap<String, PathBuf>;

/// The registry for this workspace: every built-in tool, with the configured limits and the
/// permission system, then the custom tools discovered on disk (R33–R35). A custom tool that
/// fails to load or clashes is logged as a warning; the others still load. The returned
/// [`CustomTools`] can reload them when their files change (`toolhost serve`).
pub async fn build_registry(
    workspace: &Path,
    config: &Config,
    permissions: &Permissions,
) -> anyhow::Result<(ToolRegistry, CustomTools)> {
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
    Ok((registry, custom))
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
