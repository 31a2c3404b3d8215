//! A server's tool as a toolhost [`Tool`]: same pipeline, permissions and truncation as the
//! built-ins.

use std::sync::Arc;

use serde_json::Value;
use toolhost_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::connection::ServerConnection;

/// One tool of one MCP server, named `mcp__<server>__<tool>`.
pub struct McpTool {
    server: Arc<ServerConnection>,
    original_name: String,
    spec: ToolSpec,
}

impl McpTool {
    pub(crate) fn new(
        server: Arc<ServerConnection>,
        original_name: String,
        spec: ToolSpec,
    ) -> Self {
        Self {
            server,
            original_name,
            spec,
        }
    }

    /// The same tool with another spec (a permissive schema when the server's does not
    /// compile).
    pub(crate) fn with_spec(&self, spec: ToolSpec) -> Self {
        Self::new(Arc::clone(&self.server), self.original_name.clone(), spec)
    }

    /// The configured name of the server.
    pub fn server_name(&self) -> &str {
        &self.server.config.name
    }

    /// The tool's name on its server, used in `tools/call`.
    pub fn original_name(&self) -> &str {
        &self.original_name
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.server.call(&self.original_name, args, &ctx).await
    }

    /// A built-in provider's schema is this program's own; a server's is checked when the
    /// tool is registered (and replaced by a permissive one if it does not compile).
    fn schema_is_trusted(&self) -> bool {
        self.server.is_in_process()
    }
}
