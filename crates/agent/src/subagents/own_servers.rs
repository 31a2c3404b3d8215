//! The MCP servers a sub-agent's definition names that its parent does not run, started for
//! that sub-agent alone.

use std::sync::Arc;

use toolhost_config::AgentConfig;
use toolhost_core::ToolRegistry;
use toolhost_mcp::McpClients;

use super::SubAgents;

impl SubAgents {
    /// Starts the MCP servers the definition names that the parent does not run (its direct
    /// servers, user servers its parent does not see); their tools join `registry`.
    pub(super) async fn start_own_servers(
        &self,
        definition: &AgentConfig,
        parent: &ToolRegistry,
        registry: &ToolRegistry,
    ) -> Option<Arc<McpClients>> {
        let running: Vec<String> = parent
            .specs()
            .iter()
            .filter_map(|spec| spec.origin.mcp_server().map(str::to_owned))
            .collect();
        let config = &self.hub.context.config;
        let own: Vec<_> = definition
            .mcp_servers
            .iter()
            .flatten()
            .filter_map(|id| config.mcp_servers.get(id))
            .chain(definition.direct_mcp_servers.values())
            .filter(|server| !running.contains(&server.name))
            .cloned()
            .collect();
        if own.is_empty() {
            return None;
        }
        let (clients, report) = McpClients::start(own, self.workspace()).await;
        for failure in &report.failures {
            tracing::warn!("sub-agent '{}': {failure}", definition.name);
        }
        for refused in clients.register_into(registry) {
            tracing::warn!("an MCP tool is refused: {refused}");
        }
        Some(clients)
    }
}
