//! The `toolhost` provider: what an agent (or an external CLI through the bridge) may ask
//! toolhost about itself.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_core::{Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::{McpProvider, ProviderContext};

/// The names of the tools the session offers, read when `status` runs (the registry is
/// assembled after the provider is made).
pub type ToolNames = Arc<dyn Fn() -> Vec<String> + Send + Sync>;

/// The built-in provider `toolhost`, seen by every agent. Its one tool, `status`, reports the
/// workspace, the toolhost version and the tools the session offers.
pub struct ToolhostProvider {
    workspace: PathBuf,
    tool_names: ToolNames,
}

impl ToolhostProvider {
    /// The provider's name, so its tool is `mcp__toolhost__status`.
    pub const NAME: &'static str = "toolhost";

    /// A provider for `workspace`, listing the tools that `tool_names` gives.
    pub fn new(workspace: impl Into<PathBuf>, tool_names: ToolNames) -> Self {
        Self {
            workspace: workspace.into(),
            tool_names,
        }
    }
}

impl McpProvider for ToolhostProvider {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn is_eligible(&self, _ctx: &ProviderContext) -> bool {
        // Read-only and about toolhost itself: nothing to hide from any agent.
        true
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(StatusTool {
            workspace: self.workspace.clone(),
            tool_names: Arc::clone(&self.tool_names),
        })]
    }
}

struct StatusTool {
    workspace: PathBuf,
    tool_names: ToolNames,
}

#[async_trait::async_trait]
impl Tool for StatusTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "status",
            "Reports toolhost's workspace (the folder file paths are relative to), its version \
             and the tools this session offers.",
        )
        .with_label("toolhost status")
        .with_annotations(ToolAnnotations::READ_ONLY)
    }

    fn schema_is_trusted(&self) -> bool {
        true
    }

    async fn execute(&self, _args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let mut tools = (self.tool_names)();
        tools.sort();
        let text = format!(
            "workspace: {}\ntoolhost: {}\ntools: {} ({})",
            self.workspace.display(),
            env!("CARGO_PKG_VERSION"),
            tools.len(),
            tools.join(", ")
        );
        let details = json!({
            "workspace": self.workspace.display().to_string(),
            "version": env!("CARGO_PKG_VERSION"),
            "tool_count": tools.len(),
            "tools": tools,
        });
        Ok(ToolOutput::text(text).with_details(details))
    }
}
