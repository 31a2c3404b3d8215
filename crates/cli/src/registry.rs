//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use toolhost_core::{ToolRegistry, ToolRegistryBuilder};
use toolhost_tools::{BashSettings, Workspace, builtin_tools};

use crate::config::Config;

/// The registry for this workspace: every built-in tool, with the configured limits.
pub fn build_registry(workspace: &Path, config: &Config) -> anyhow::Result<ToolRegistry> {
    build_registry_with(workspace, config, ToolRegistry::builder())
}

/// The same registry, built from `builder` (`toolhost serve` brings its own authorizer).
pub fn build_registry_with(
    workspace: &Path,
    config: &Config,
    mut builder: ToolRegistryBuilder,
) -> anyhow::Result<ToolRegistry> {
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    let registry = builder.build();
    let workspace = Workspace::new(workspace)
        .with_context(|| format!("cannot use {} as the workspace", workspace.display()))?;
    let refused =
        registry.register_all(builtin_tools(Arc::new(workspace), BashSettings::default()));
    if let Some(error) = refused.into_iter().next() {
        return Err(error.into());
    }
    Ok(registry)
}
