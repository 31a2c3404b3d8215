//! One call of a server's tool: `tools/call` with progress, cancellation and the tool
//! timeout; what a failed call says, and the one retry of a call that never reached the
//! server.

use std::sync::PoisonError;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, PingRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::Value;
use toolhost_core::{ToolContext, ToolError, ToolOutput};

use super::connection::ServerConnection;
use super::convert;
use super::events::{ProgressRoute, token_key};
use super::transport_error::transport_reason;

/// How long a server whose call timed out has to answer a ping before its session counts as
/// lost.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

impl ServerConnection {
    /// Calls `tool` (the server's own name) with `args`. A call whose request never reached
    /// the server (a Streamable HTTP server that refused the connection: restarting, say) is
    /// made once more on a new session; one that may have reached it is not, lest it run twice.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        match self.call_once(tool, args.clone(), ctx).await {
            Err(CallFailure::NotSent(error)) => {
                tracing::info!(
                    server = self.name(),
                    "the call to '{tool}' did not reach the MCP server ({error}); trying once \
                     more on a new session"
                );
                self.call_once(tool, args, ctx)
                    .await
                    .map_err(CallFailure::into_error)
            }
            other => other.map_err(CallFailure::into_error),
        }
    }

    async fn call_once(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, CallFailure> {
        let peer = self.peer().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = args {
            params = params.with_arguments(arguments);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => return Err(self.failure(tool, &error).await),
        };
        let id = handle.id.clone();
        let _route = ProgressRoute {
            progress: &self.events.progress,
            key: token_key(&handle.progress_token),
        };
        self.events
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(_route.key.clone(), ctx.clone());
        let timeout = self.config.tool_timeout;
        let response = tokio::select! {
            response = handle.await_response() => response,
            () = ctx.cancellation().cancelled() => {
                send_cancelled(&peer, id, "cancelled by the user").await;
                return Err(ToolError::new(format!("the call to '{tool}' was cancelled")).into());
            }
            () = tokio::time::sleep(timeout) => {
                send_cancelled(&peer, id, "timed out").await;
                return Err(self.timed_out(tool, &peer).await.into());
            }
        };
        match response {
            Ok(ServerResult::CallToolResult(result)) => {
                self.state.lock().await.consecutive_failures = 0;
                let json = serde_json::to_value(&result).map_err(|error| {
                    ToolError::new(format!("the result of '{tool}' is not JSON: {error}"))
                })?;
                Ok(convert::call_result(&json))
            }
            Ok(_) => Err(ToolError::new(format!(
                "the MCP server '{}' answered tools/call for '{tool}' with something that is \
                 not a tool result",
                self.name()
            ))
            .into()),
            Err(error) => Err(self.failure(tool, &error).await),
        }
    }

    /// The error of a call that ran past `tool_timeout`. A server that still answers a ping
    /// is slow; one that does not has lost the session (or hangs): it is dropped, and the
    /// message says so instead of advising a longer timeout.
    async fn timed_out(&self, tool: &str, peer: &Peer<RoleClient>) -> ToolError {
        let timeout = self.config.tool_timeout.as_secs();
        let ping = ClientRequest::PingRequest(PingRequest::default());
        let answered = tokio::time::timeout(PING_TIMEOUT, peer.send_request(ping)).await;
        if matches!(answered, Ok(Ok(_))) {
            return ToolError::new(format!(
                "the MCP server '{}' did not finish '{tool}' within {timeout}s (tool_timeout), \
                 so the call was cancelled. If the tool needs longer, raise tool_timeout in \
                 [mcp_servers.{}]",
                self.name(),
                self.name(),
            ));
        }
        self.state.lock().await.drop_session();
        ToolError::new(format!(
            "the MCP server '{}' stopped answering: '{tool}' gave no result within {timeout}s \
             and the server does not answer a ping either, so its session is lost (a server \
             restarted under toolhost, or one that hangs){}. toolhost connects anew on the next \
             call",
            self.name(),
            self.last_words.describe(),
        ))
    }

    /// The error of a failed call; a failure of the connection itself (not a refusal by
    /// the server) drops the session, so that the next call starts the server again.
    async fn failure(&self, tool: &str, error: &ServiceError) -> CallFailure {
        if !matches!(error, ServiceError::McpError(_)) {
            self.state.lock().await.drop_session();
        }
        match error {
            ServiceError::McpError(error) => ToolError::new(format!(
                "the MCP server '{}' refused the call to '{tool}': {}",
                self.name(),
                error.message
            ))
            .into(),
            other if never_sent(other) => CallFailure::NotSent(ToolError::new(format!(
                "the MCP server '{}' cannot be reached for '{tool}': {}. toolhost connects \
                 anew on the next call",
                self.name(),
                transport_reason(self.name(), other),
            ))),
            other => ToolError::new(format!(
                "the MCP server '{}' failed during '{tool}': {}{}. toolhost restarts it on \
                 the next call",
                self.name(),
                transport_reason(self.name(), other),
                self.last_words.describe()
            ))
            .into(),
        }
    }
}

/// Why a call failed.
enum CallFailure {
    /// The request never reached the server: making it again cannot run the tool twice.
    NotSent(ToolError),
    /// Anything else.
    Failed(ToolError),
}

impl CallFailure {
    fn into_error(self) -> ToolError {
        match self {
            Self::NotSent(error) | Self::Failed(error) => error,
        }
    }
}

impl From<ToolError> for CallFailure {
    fn from(error: ToolError) -> Self {
        Self::Failed(error)
    }
}

/// Whether `error` says the request never left: the HTTP connection could not be made.
fn never_sent(error: &ServiceError) -> bool {
    let ServiceError::TransportSend(error) = error else {
        return false;
    };
    matches!(
        error.error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::Client(client)) if client.is_connect()
    )
}

async fn send_cancelled(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let notification = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some(reason.to_owned()),
    ));
    let _ = peer.send_notification(notification.into()).await;
}
