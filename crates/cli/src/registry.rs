//! Assembles the registry the CLI serves from the workspace and the configuration.

use std::path::Path;

use toolhost_core::ToolRegistry;

use crate::config::Config;

/// The registry for this workspace: every built-in tool, with the configured limits.
pub fn build_registry(_workspace: &Path, config: &Config) -> anyhow::Result<ToolRegistry> {
    let mut builder = ToolRegistry::builder();
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    Ok(builder.build())
}
