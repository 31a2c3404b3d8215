//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use toolhost_agent::{Config, Permissions};
use toolhost_core::ToolRegistry;
use toolhost_tools::{Workspace, builtin_tools};

/// The registry for this workspace: every built-in tool, with the configured limits and the
/// permission system.
pub fn build_registry(
    workspace: &Path,
    config: &Config,
    permissions: &Permissions,
) -> anyhow::Result<ToolRegistry> {
    let mut builder = permissions.install(ToolRegistry::builder());
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    let registry = builder.build();
    let workspace = Workspace::new(workspace)
        .with_context(|| format!("cannot use {} as the workspace", workspace.display()))?;
    let refused = registry.register_all(builtin_tools(
        Arc::new(workspace),
        config.shell.bash_settings(),
    ));
    if let Some(error) = refused.into_iter().next() {
        return Err(error.into());
    }
    Ok(registry)
}
