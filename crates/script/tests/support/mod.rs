//! What the script tests share: a host with quick limits, tool modules loaded into a registry.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolhost_core::{ToolCallResult, ToolRegistry};
use toolhost_script::{Discovery, ScriptHost, ScriptLimits, load_custom_tools};
use toolhost_test_support::write_file;

/// Limits short enough for tests.
pub fn quick_limits() -> ScriptLimits {
    ScriptLimits {
        call_time_limit: Duration::from_secs(2),
        load_time_limit: Duration::from_secs(2),
        abort_grace: Duration::from_millis(500),
        ..ScriptLimits::default()
    }
}

/// A host in `dir` with quick limits and no home folder.
pub fn host(dir: &Path) -> Arc<ScriptHost> {
    ScriptHost::builder(dir)
        .home(None)
        .limits(quick_limits())
        .build()
}

/// Loads the modules and panics on any load error.
pub async fn load(host: &Arc<ScriptHost>, paths: &[PathBuf]) -> Discovery {
    let discovery = load_custom_tools(host, paths).await;
    assert!(
        discovery.errors.is_empty(),
        "load errors: {:?}",
        discovery.errors
    );
    discovery
}

/// A registry holding the discovered tools.
pub fn registry(discovery: &Discovery) -> ToolRegistry {
    let registry = ToolRegistry::new();
    for loaded in &discovery.tools {
        registry.register_arc(loaded.tool.clone()).unwrap();
    }
    registry
}

/// Loads one module written from `source` as `name` and returns a registry with its tools.
pub async fn registry_with(dir: &Path, name: &str, source: &str) -> ToolRegistry {
    let path = write_file(dir.join(name), source);
    let host = host(dir);
    registry(&load(&host, &[path]).await)
}

/// Calls a tool through the pipeline.
pub async fn call(registry: &ToolRegistry, tool: &str, args: Value) -> ToolCallResult {
    registry.execute("call-1", tool, args).await
}
