//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::path::Path;

use toolhost_agent::{Config, Permissions};
use toolhost_core::ToolRegistry;

/// The registry for this workspace: every built-in tool, with the configured limits and the
/// permission system.
pub fn build_registry(
    _workspace: &Path,
    config: &Config,
    permissions: &Permissions,
) -> anyhow::Result<ToolRegistry> {
    let mut builder = permissions.install(ToolRegistry::builder());
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    Ok(builder.build())
}
