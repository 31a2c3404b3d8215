//! `api.pushPendingAction`: previews a tool registers for a hidden resolve tool.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// An action a tool proposed and a resolve step may apply or reject later. Its callbacks
/// (`apply`, `reject`) stay in the tool's engine; the host sees what describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingAction {
    /// Its id in the tool's engine, for [`crate::ScriptTool::resolve_pending_action`].
    pub id: u32,
    /// The module that registered it.
    pub module: PathBuf,
    /// Its label.
    pub label: Option<String>,
    /// What it would do.
    pub description: Option<String>,
    /// The tool that proposed it.
    pub source_tool_name: Option<String>,
    /// Structured details for a preview.
    pub details: Option<Value>,
}

impl PendingAction {
    pub(crate) fn from_json(id: u32, module: &Path, json: &str) -> Self {
        let value: Value = serde_json::from_str(json).unwrap_or(Value::Null);
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        Self {
            id,
            module: module.to_path_buf(),
            label: text("label"),
            description: text("description"),
            source_tool_name: text("sourceToolName"),
            details: value.get("details").filter(|d| !d.is_null()).cloned(),
        }
    }
}
