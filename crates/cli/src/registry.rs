//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::path::Path;

use toolhost_core::{ToolRegistry, ToolRegistryBuilder};

use crate::config::Config;

/// The registry for this workspace: every built-in tool, with the configured limits.
pub fn build_registry(workspace: &Path, config: &Config) -> anyhow::Result<ToolRegistry> {
    build_registry_with(workspace, config, ToolRegistry::builder())
}

/// The same registry, built from `builder` (`toolhost serve` brings its own authorizer).
pub fn build_registry_with(
    _workspace: &Path,
    config: &Config,
    mut builder: ToolRegistryBuilder,
) -> anyhow::Result<ToolRegistry> {
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    Ok(builder.build())
}
