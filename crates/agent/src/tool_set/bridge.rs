//! The MCP bridge for the built-in providers an agent sees (R30), started on first use: the
//! first Bash command of a command gets `TOOLHOST_MCP_URL` and `TOOLHOST_MCP_TOKEN`, so that
//! an external CLI it launches (Claude Code, Codex, a script) reaches those providers; later
//! commands reuse the same bridge. Commands that run no Bash command start none.
//!
//! The bridge serves only the provider tools the agent is offered, and its calls go through
//! the agent's permission policy ([`BridgePolicy`]) without asking anyone, since nobody can be
//! asked from inside a Bash command.
//!
//! A sub-agent shares its parent's Bash tool, but its commands must not reach the bridge with
//! its parent's permissions when its own are stricter: a command run for another authoriser
//! than the agent's ([`ToolContext::authorizer`]) gets a bridge of its own, started on its
//! first command, whose calls go through that authoriser.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use toolhost_core::{Authorizer, ToolContext, same_authorizer};
use toolhost_mcp::provider::{BridgePolicy, agent_tool_spec};
use toolhost_mcp::{McpProvider, ProviderBridge};
use toolhost_tools::CommandEnvironment;

/// A bridge started on first use.
type Started = Arc<OnceCell<ProviderBridge>>;

/// The bridge for `providers`, not started until a command asks for its variables. It stops
/// when dropped, that is with the registry whose Bash tool holds it.
pub struct LazyBridge {
    providers: Vec<Arc<dyn McpProvider>>,
    policy: BridgePolicy,
    /// The agent's own authoriser, as its registry's pipeline hands it to each call.
    agent: Option<Arc<dyn Authorizer>>,
    bridge: Started,
    /// The bridges of commands run for other authorisers (sub-agents'), one per authoriser.
    others: Mutex<Vec<(Arc<dyn Authorizer>, Started)>>,
}

impl LazyBridge {
    /// A bridge for the tools of the eligible `providers` that `policy` serves; `None` when
    /// it would serve none (nothing to reach).
    ///
    /// `agent` is the authoriser of the registry whose Bash tool holds the bridge: calls it
    /// let through use `policy`; calls another one let through (a sub-agent's) get a bridge of
    /// their own that asks it, without asking anyone. `None`: every command uses `policy`.
    pub fn for_providers(
        providers: Vec<Arc<dyn McpProvider>>,
        policy: BridgePolicy,
        agent: Option<Arc<dyn Authorizer>>,
    ) -> Option<Arc<Self>> {
        let providers: Vec<Arc<dyn McpProvider>> = providers
            .into_iter()
            .filter(|provider| {
                provider
                    .tools()
                    .iter()
                    .any(|tool| (policy.serves)(&agent_tool_spec(provider.name(), tool.spec())))
            })
            .collect();
        (!providers.is_empty()).then(|| {
            Arc::new(Self {
                providers,
                policy,
                agent,
                bridge: Arc::default(),
                others: Mutex::default(),
            })
        })
    }
}

impl fmt::Debug for LazyBridge {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let providers: Vec<&str> = self.providers.iter().map(|p| p.name()).collect();
        formatter
            .debug_struct("LazyBridge")
            .field("providers", &providers)
            .field("bridge", &self.bridge.get())
            .finish()
    }
}

impl LazyBridge {
    /// The bridge for a command run for `caller`, and the policy it starts with.
    fn bridge_for(&self, caller: Option<&Arc<dyn Authorizer>>) -> (Started, BridgePolicy) {
        let caller = match (caller, &self.agent) {
            (Some(caller), Some(agent)) if !same_authorizer(caller, agent) => caller,
            _ => return (Arc::clone(&self.bridge), self.policy.clone()),
        };
        let policy = BridgePolicy {
            authorizer: caller
                .without_asking()
                .unwrap_or_else(|| Arc::clone(caller)),
            ..self.policy.clone()
        };
        let mut others = self.others.lock().unwrap_or_else(PoisonError::into_inner);
        // A sub-agent that is over held the only other handle on its authoriser: its bridge
        // stops.
        others.retain(|(known, _)| Arc::strong_count(known) > 1);
        let started = match others
            .iter()
            .find(|(known, _)| same_authorizer(known, caller))
        {
            Some((_, started)) => Arc::clone(started),
            None => {
                let started = Started::default();
                others.push((Arc::clone(caller), Arc::clone(&started)));
                started
            }
        };
        (started, policy)
    }
}

#[async_trait::async_trait]
impl CommandEnvironment for LazyBridge {
    async fn variables(&self, ctx: &ToolContext) -> Result<Vec<(String, String)>, String> {
        let (started, policy) = self.bridge_for(ctx.authorizer());
        // A start that failed is tried again by the next command.
        let bridge = started
            .get_or_try_init(|| ProviderBridge::start(&self.providers, policy))
            .await
            .map_err(|error| {
                format!(
                    "the MCP bridge for the built-in providers did not start, so this command \
                     has no {} / {}: {error}",
                    toolhost_mcp::provider::BRIDGE_URL_VARIABLE,
                    toolhost_mcp::provider::BRIDGE_TOKEN_VARIABLE
                )
            })?;
        Ok(bridge
            .environment()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use toolhost_mcp::provider::ToolhostProvider;

    use super::*;

    fn call() -> ToolContext {
        ToolContext::new("call", toolhost_core::CallOptions::default())
    }

    fn toolhost_provider() -> Vec<Arc<dyn McpProvider>> {
        vec![Arc::new(ToolhostProvider::new("/w", Arc::new(Vec::new)))]
    }

    #[test]
    fn no_providers_no_bridge() {
        assert!(LazyBridge::for_providers(Vec::new(), BridgePolicy::allow_all(), None).is_none());
        let nothing_served = BridgePolicy {
            serves: Arc::new(|_| false),
            ..BridgePolicy::allow_all()
        };
        assert!(LazyBridge::for_providers(toolhost_provider(), nothing_served, None).is_none());
    }

    #[tokio::test]
    async fn starts_on_first_use_is_reused_and_stops_when_dropped() {
        let bridge =
            LazyBridge::for_providers(toolhost_provider(), BridgePolicy::allow_all(), None)
                .unwrap();
        assert!(bridge.bridge.get().is_none(), "started before any command");
        let first = bridge.variables(&call()).await.unwrap();
        let second = bridge.variables(&call()).await.unwrap();
        assert_eq!(first, second);
        let names: Vec<&str> = first.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["TOOLHOST_MCP_URL", "TOOLHOST_MCP_TOKEN"]);
        let address = first[0]
            .1
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        assert!(std::net::TcpStream::connect(&address).is_ok());

        drop(bridge);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(&address).is_ok() {
            assert!(
                std::time::Instant::now() < deadline,
                "the bridge still listens"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}
