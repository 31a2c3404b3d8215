//! Built-in MCP providers (R30): MCP servers that run inside toolhost, each deciding with
//! [`McpProvider::is_eligible`] which agents see it.
//!
//! A provider is a name and a set of tools. Toolhost serves those tools as an MCP server in
//! process (an rmcp session over an in-memory pipe) and connects its MCP client to it exactly
//! as to a configured server, so that its tools become `mcp__<provider>__<tool>` through the
//! one adapter: the same naming, schema sanitising, result conversion, confirmation (R29) and
//! truncation. [`ProviderBridge`] serves the eligible
//! providers to external CLIs over one local Streamable HTTP endpoint.

mod bridge;
mod status;

use std::fmt;
use std::sync::Arc;

use toolhost_core::permission::PermissionMode;
use toolhost_core::{Tool, ToolRegistry};

pub use bridge::{
    BRIDGE_TOKEN_VARIABLE, BRIDGE_URL_VARIABLE, BridgeError, BridgePolicy, ProviderBridge,
    agent_tool_spec,
};
pub use status::{ToolNames, ToolhostProvider};

/// Who would see a provider's tools: the agent, its session and its permission mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderContext {
    /// The agent's name (`main` for the top-level agent and the CLI).
    pub agent: String,
    /// The session's id, when there is one.
    pub session: Option<String>,
    /// The permission mode the agent runs in.
    pub mode: PermissionMode,
}

impl ProviderContext {
    /// The context of agent `agent` in `mode`, without a session.
    pub fn new(agent: impl Into<String>, mode: PermissionMode) -> Self {
        Self {
            agent: agent.into(),
            session: None,
            mode,
        }
    }

    /// The same context in session `session`.
    #[must_use]
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }
}

/// An MCP server that runs in process.
pub trait McpProvider: Send + Sync + 'static {
    /// The provider's name: its tools are named `mcp__<name>__<tool>`.
    fn name(&self) -> &str;

    /// Whether the agent of `ctx` sees this provider's tools.
    fn is_eligible(&self, ctx: &ProviderContext) -> bool;

    /// The tools it serves, under their own names (`status`, not `mcp__…`).
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// Why a provider was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProviderError {
    /// Another provider already has this name.
    #[error(
        "a built-in MCP provider named '{0}' is already registered; give this one another name"
    )]
    DuplicateName(String),
}

/// Every built-in provider of a process, in registration order.
#[derive(Clone, Default)]
pub struct McpProviders {
    providers: Vec<Arc<dyn McpProvider>>,
}

impl fmt::Debug for McpProviders {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.names()).finish()
    }
}

impl McpProviders {
    /// No providers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `provider`; names are unique.
    pub fn register(&mut self, provider: Arc<dyn McpProvider>) -> Result<(), ProviderError> {
        if self.names().contains(&provider.name()) {
            return Err(ProviderError::DuplicateName(provider.name().to_owned()));
        }
        self.providers.push(provider);
        Ok(())
    }

    /// The names of every provider.
    pub fn names(&self) -> Vec<&str> {
        self.providers
            .iter()
            .map(|provider| provider.name())
            .collect()
    }

    /// The providers that the agent of `ctx` sees.
    pub fn eligible(&self, ctx: &ProviderContext) -> Vec<Arc<dyn McpProvider>> {
        self.providers
            .iter()
            .filter(|provider| provider.is_eligible(ctx))
            .cloned()
            .collect()
    }
}

/// The registry a provider is served from: its tools, no permission policy (the client side
/// asks, as for any MCP tool) and no truncation of its own beyond the registry default.
pub(crate) fn provider_registry(provider: &dyn McpProvider) -> Result<ToolRegistry, String> {
    let registry = ToolRegistry::builder().build();
    if let Some(refused) = registry.register_all(provider.tools()).into_iter().next() {
        return Err(format!(
            "the built-in MCP provider '{}' has a tool that cannot be served: {refused}",
            provider.name()
        ));
    }
    Ok(registry)
}
