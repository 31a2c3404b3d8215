//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use toolhost_agent::{Config, Permissions};
use toolhost_core::ToolRegistry;
use toolhost_script::{ScriptHost, discover_and_load_custom_tools};
use toolhost_tools::{Workspace, builtin_tools};

use crate::script_host::{PermissionExecGate, WorkspaceFileSystem};

/// Where each custom tool came from, by name (built-ins are absent).
pub type CustomToolSources = BTreeMap<String, PathBuf>;

/// The registry for this workspace: every built-in tool, with the configured limits and the
/// permission system, then the custom tools discovered on disk (R33–R35). A custom tool that
/// fails to load or clashes is logged as a warning; the others still load.
pub async fn build_registry(
    workspace: &Path,
    config: &Config,
    permissions: &Permissions,
) -> anyhow::Result<(ToolRegistry, CustomToolSources)> {
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
        .file_system(Arc::new(WorkspaceFileSystem(Arc::clone(&workspace))));
    if let Some(bash) = registry.get("Bash") {
        host = host.exec_gate(Arc::new(PermissionExecGate {
            policy: Arc::clone(permissions.policy()),
            bash,
        }));
    }
    let host = host.build();
    let builtin_names = registry.names();
    let discovery =
        discover_and_load_custom_tools(&host, &[], workspace_root, &builtin_names).await;
    let mut sources = CustomToolSources::new();
    for loaded in discovery.tools {
        let name = loaded.tool.name().to_owned();
        match registry.register_arc(loaded.tool) {
            Ok(()) => {
                sources.insert(name, loaded.path);
            }
            Err(error) => tracing::warn!(
                "custom tool '{name}' from {} is refused: {error}",
                loaded.path.display()
            ),
        }
    }
    Ok((registry, sources))
}
