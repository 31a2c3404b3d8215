//! The local HTTP bridge: the eligible built-in providers, served to external CLIs (a child
//! agent such as Claude Code or Codex) over one Streamable HTTP endpoint on 127.0.0.1, with a
//! random port and a random bearer token. The child learns both from
//! [`BRIDGE_URL_VARIABLE`] and [`BRIDGE_TOKEN_VARIABLE`] ([`ProviderBridge::environment`]).
//!
//! A [`BridgePolicy`] says which tools it serves and who authorises their calls, so that the
//! bridge offers an agent no more than its own tool list does and applies the same permission
//! rules, mode and audit trail.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolhost_core::{
    AllowAll, Authorization, Authorizer, CallRequest, ResultHandler, Tool, ToolContext, ToolError,
    ToolOrigin, ToolOutput, ToolRegistry, ToolSpec,
};

use super::McpProvider;
use crate::client::naming::{sanitize, server_segment};
use crate::{HttpOptions, HttpServer, McpServer, ServeError};

/// The environment variable that hands the bridge's URL to a child agent or CLI.
pub const BRIDGE_URL_VARIABLE: &str = "TOOLHOST_MCP_URL";

/// The environment variable that hands the bridge's bearer token to a child agent or CLI.
pub const BRIDGE_TOKEN_VARIABLE: &str = "TOOLHOST_MCP_TOKEN";

/// How many random bytes make a token (hex-encoded: twice as many characters).
const TOKEN_BYTES: usize = 32;

/// Why the bridge did not start.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The operating system gave no random bytes for the token.
    #[error("cannot make a random token for the MCP bridge: {0}")]
    Random(String),
    /// A provider's tool could not be served.
    #[error("{0}")]
    Tool(String),
    /// The HTTP server could not bind.
    #[error(transparent)]
    Serve(#[from] ServeError),
}

/// Which provider tools a bridge serves and who authorises their calls. Both see a tool as
/// the agent knows it ([`agent_tool_spec`]: named `mcp__<provider>__<tool>`, its origin the
/// provider), whereas the bridge serves it as `<provider>__<tool>` (the external CLI adds its
/// own `mcp__<server>__`).
#[derive(Clone)]
pub struct BridgePolicy {
    /// Whether the tool is served.
    pub serves: Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>,
    /// Decides on every call, as a registry's authoriser does.
    pub authorizer: Arc<dyn Authorizer>,
    /// Sees every result before it is returned, as a registry's result handler does
    /// (PostToolUse hooks); `None`: results go back as the tool made them.
    pub result_handler: Option<Arc<dyn ResultHandler>>,
}

impl BridgePolicy {
    /// Every tool, every call allowed: for tests, and for a bridge whose token is the only
    /// guard wanted.
    pub fn allow_all() -> Self {
        Self {
            serves: Arc::new(|_| true),
            authorizer: Arc::new(AllowAll),
            result_handler: None,
        }
    }
}

impl fmt::Debug for BridgePolicy {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("BridgePolicy")
            .finish_non_exhaustive()
    }
}

/// A running bridge; stops when [`Self::shutdown`] is called or it is dropped.
pub struct ProviderBridge {
    url: String,
    token: String,
    tools: Vec<String>,
    stop: CancellationToken,
    task: JoinHandle<Result<(), ServeError>>,
}

impl fmt::Debug for ProviderBridge {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token stays out of logs.
        formatter
            .debug_struct("ProviderBridge")
            .field("url", &self.url)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl ProviderBridge {
    /// Serves the tools of `providers` (the eligible ones: see
    /// [`McpProviders::eligible`](super::McpProviders::eligible)) that `policy` serves, on
    /// 127.0.0.1 with a random port and token. Each tool is served as `<provider>__<tool>` (sanitised as
    /// the client names them);
    /// every call goes through `policy.authorizer` under the name `mcp__<provider>__<tool>`,
    /// and a refusal comes back as an error result with its reason. The token keeps other
    /// local users out; the external CLI may also ask its own user, as for any server.
    pub async fn start(
        providers: &[Arc<dyn McpProvider>],
        policy: BridgePolicy,
    ) -> Result<Self, BridgeError> {
        let mut builder =
            ToolRegistry::builder().authorizer(Arc::new(AgentNames(policy.authorizer)));
        if let Some(handler) = policy.result_handler {
            builder = builder.result_handler(Arc::new(AgentNames(handler)));
        }
        let registry = builder.build();
        for provider in providers {
            for tool in provider.tools() {
                let spec = agent_tool_spec(provider.name(), tool.spec());
                if !(policy.serves)(&spec) {
                    continue;
                }
                // The agent's name less its `mcp__`.
                let name = spec.name.trim_start_matches("mcp__").to_owned();
                let renamed = Renamed {
                    spec: ToolSpec { name, ..spec },
                    tool,
                };
                registry
                    .register(renamed)
                    .map_err(|error| BridgeError::Tool(error.to_string()))?;
            }
        }
        let tools = registry.names();
        let token = random_token()?;
        let options = HttpOptions {
            bearer_token: Some(token.clone()),
            ..HttpOptions::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        };
        let http = HttpServer::bind(McpServer::new(Arc::new(registry)), options).await?;
        let url = http.url();
        let stop = CancellationToken::new();
        let task = tokio::spawn(http.run(stop.clone()));
        tracing::info!(%url, ?tools, "MCP bridge for the built-in providers");
        Ok(Self {
            url,
            token,
            tools,
            stop,
            task,
        })
    }

    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bearer token every request must carry.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The names of the tools served.
    pub fn tools(&self) -> &[String] {
        &self.tools
    }

    /// The variables to give a child agent or CLI: [`BRIDGE_URL_VARIABLE`] and
    /// [`BRIDGE_TOKEN_VARIABLE`].
    pub fn environment(&self) -> [(&'static str, String); 2] {
        [
            (BRIDGE_URL_VARIABLE, self.url.clone()),
            (BRIDGE_TOKEN_VARIABLE, self.token.clone()),
        ]
    }

    /// Stops serving and waits for the server to end.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        let _ = (&mut self.task).await;
    }
}

impl Drop for ProviderBridge {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A provider's tool as the agent knows it, through the in-process client: named
/// `mcp__<provider>__<tool>` (sanitised as the client names tools), its origin the provider.
pub fn agent_tool_spec(provider: &str, spec: ToolSpec) -> ToolSpec {
    let segment = server_segment(provider);
    ToolSpec {
        name: format!("mcp__{segment}__{}", sanitize(&spec.name)),
        origin: ToolOrigin::mcp(segment),
        ..spec
    }
}

/// Hands the authoriser and the result handler the name the agent knows a tool by: `mcp__` and
/// the bridge's name.
struct AgentNames<T: ?Sized>(Arc<T>);

/// The spec of a bridge call under the name the agent knows the tool by.
fn agent_spec(request: &CallRequest<'_>) -> ToolSpec {
    ToolSpec {
        name: format!("mcp__{}", request.spec.name),
        ..request.spec.clone()
    }
}

#[async_trait::async_trait]
impl Authorizer for AgentNames<dyn Authorizer> {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        let spec = agent_spec(&request);
        self.0
            .authorize(CallRequest {
                spec: &spec,
                ..request
            })
            .await
    }

    fn wants_subject(&self, spec: &ToolSpec) -> bool {
        self.0.wants_subject(&ToolSpec {
            name: format!("mcp__{}", spec.name),
            ..spec.clone()
        })
    }
}

#[async_trait::async_trait]
impl ResultHandler for AgentNames<dyn ResultHandler> {
    async fn handle(&self, request: CallRequest<'_>, output: &mut ToolOutput) {
        let spec = agent_spec(&request);
        self.0
            .handle(
                CallRequest {
                    spec: &spec,
                    ..request
                },
                output,
            )
            .await;
    }
}

/// A provider's tool under the bridge's name for it.
struct Renamed {
    spec: ToolSpec,
    tool: Arc<dyn Tool>,
}

#[async_trait::async_trait]
impl Tool for Renamed {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.tool.execute(args, ctx).await
    }

    fn schema_is_trusted(&self) -> bool {
        self.tool.schema_is_trusted()
    }
}

fn random_token() -> Result<String, BridgeError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|error| BridgeError::Random(error.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}
