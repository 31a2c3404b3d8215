//! One connection to one configured server: start (stdio through `toolhost-exec`, Streamable
//! HTTP, or legacy SSE), `tools/list`, and restarting a server that stopped, with backoff
//! (its calls are in `call.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;
use toolhost_core::ToolError;

use super::config::{McpServerConfig, McpTransport};
use super::events::{ClientEvents, LastWords};
use super::headers_helper::with_helper_headers;
use super::remote;
use super::self_start;
use super::session::{self, Session};
use super::transport_error::transport_reason;
use crate::McpServer;
use crate::provider::{McpProvider, provider_registry};
use crate::server::convert::tool_from_spec;

/// The in-memory pipe between toolhost's client and a built-in provider, in bytes.
const IN_PROCESS_PIPE_BYTES: usize = 64 * 1024;

/// The longest wait before restarting a server that keeps stopping.
pub const MAX_RESTART_BACKOFF: Duration = Duration::from_secs(60);

pub(super) struct State {
    session: Option<Session>,
    /// Stops since the last successful call; decides the backoff.
    pub(super) consecutive_failures: u32,
    retry_at: Option<Instant>,
    /// Set by [`ServerConnection::shutdown`]: the server is never started again.
    closed: bool,
}

impl State {
    /// Forgets a session that stopped working, with backoff for the next start. Dropping the
    /// service kills the server's process; what it started is stopped with its group.
    /// Returns whether there was one.
    pub(super) fn drop_session(&mut self) -> bool {
        let Some(session) = self.session.take() else {
            return false;
        };
        drop(session.service);
        if let Some(group) = session.group {
            tokio::spawn(group.stop());
        }
        self.consecutive_failures += 1;
        self.retry_at = Some(Instant::now() + backoff(self.consecutive_failures));
        true
    }
}

/// A configured server and its live session, if any.
pub(crate) struct ServerConnection {
    pub(crate) config: McpServerConfig,
    /// The provider that serves a [`McpTransport::InProcess`] server.
    provider: Option<Arc<dyn McpProvider>>,
    workspace: PathBuf,
    pub(super) state: tokio::sync::Mutex<State>,
    pub(crate) events: ClientEvents,
    pub(crate) last_words: Arc<LastWords>,
}

impl ServerConnection {
    pub(crate) fn new(config: McpServerConfig, workspace: PathBuf) -> Self {
        Self::serving(config, None, workspace)
    }

    /// Whether this is a built-in provider served in process.
    pub(crate) fn is_in_process(&self) -> bool {
        self.provider.is_some()
    }

    /// A built-in provider, reached through the same client as a configured server.
    pub(crate) fn in_process(provider: Arc<dyn McpProvider>, workspace: PathBuf) -> Self {
        let mut config = McpServerConfig::new(provider.name(), McpTransport::InProcess);
        config.origin = "built-in provider".to_owned();
        Self::serving(config, Some(provider), workspace)
    }

    fn serving(
        mut config: McpServerConfig,
        provider: Option<Arc<dyn McpProvider>>,
        workspace: PathBuf,
    ) -> Self {
        // What no retry can fix is a problem of the entry, reported once like a `${VAR}`
        // that is not set.
        if config.problem.is_none() {
            config.problem = remote::config_problem(&config.transport);
        }
        Self {
            config,
            provider,
            workspace,
            state: tokio::sync::Mutex::new(State {
                session: None,
                consecutive_failures: 0,
                retry_at: None,
                closed: false,
            }),
            events: ClientEvents {
                progress: Arc::default(),
                tools_changed: Arc::new(Notify::new()),
            },
            last_words: Arc::default(),
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.config.name
    }

    /// Starts the server and lists its tools (the JSON of each MCP `Tool` that passes the
    /// filters), all within `startup_timeout`. A server that fails, `tools/list` included, is
    /// stopped with its process group: nothing of it is left running.
    pub(crate) async fn start(&self) -> Result<Vec<Value>, String> {
        if self.state.lock().await.closed {
            return Err(self.closed_message());
        }
        if let Some(provider) = &self.provider {
            return self.list_in_process(provider.as_ref());
        }
        let session = self.connect_in_time().await?;
        let listed = self.list_tools(session.service.peer()).await;
        let mut state = self.state.lock().await;
        if listed.is_err() || state.closed {
            drop(state);
            session.stop().await;
            return listed.and_then(|_| Err(self.closed_message()));
        }
        if let Some(previous) = state.session.replace(session) {
            tokio::spawn(previous.stop());
        }
        listed
    }

    /// A built-in provider's tools as its server would list them, without a session: the
    /// handshake waits for the first call, so a run that calls none (most `toolhost call`s)
    /// never makes it.
    fn list_in_process(&self, provider: &dyn McpProvider) -> Result<Vec<Value>, String> {
        Ok(provider_registry(provider)?
            .specs()
            .iter()
            .filter(|spec| self.config.allows_tool(&spec.name))
            .filter_map(|spec| serde_json::to_value(tool_from_spec(spec)).ok())
            .collect())
    }

    fn closed_message(&self) -> String {
        format!(
            "the MCP server '{}' was shut down with its client; it is not started again",
            self.name()
        )
    }

    /// The server's tools that pass `enabled_tools` / `disabled_tools`, as JSON.
    pub(crate) async fn list_tools_now(&self) -> Result<Vec<Value>, String> {
        let peer = self.peer().await.map_err(|error| error.message)?;
        self.list_tools(&peer).await
    }

    async fn list_tools(&self, peer: &Peer<RoleClient>) -> Result<Vec<Value>, String> {
        let tools = tokio::time::timeout(self.config.startup_timeout, peer.list_all_tools())
            .await
            .map_err(|_| {
                format!(
                    "tools/list took longer than {}s (startup_timeout)",
                    self.config.startup_timeout.as_secs()
                )
            })?
            .map_err(|error| {
                format!(
                    "tools/list failed: {}",
                    transport_reason(&self.config.name, &error)
                )
            })?;
        Ok(tools
            .iter()
            .filter(|tool| self.config.allows_tool(&tool.name))
            .filter_map(|tool| serde_json::to_value(tool).ok())
            .collect())
    }

    async fn connect_in_time(&self) -> Result<Session, String> {
        let timeout = self.config.startup_timeout;
        // A transport that waits for something in particular gets the same deadline: its
        // own message, polled first, then says what was missing.
        let deadline = Instant::now() + timeout;
        match tokio::time::timeout_at(deadline, self.connect(deadline)).await {
            Ok(Ok(session)) => Ok(session),
            Ok(Err(error)) => Err(format!("{error}{}", self.last_words.describe())),
            Err(_) => Err(format!(
                "it did not finish starting within {}s (startup_timeout){}",
                timeout.as_secs(),
                self.last_words.describe()
            )),
        }
    }

    async fn connect(&self, deadline: Instant) -> Result<Session, String> {
        if let Some(problem) = &self.config.problem {
            return Err(problem.clone());
        }
        let events = self.events.clone();
        match &self.config.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let cwd = cwd.as_ref().unwrap_or(&self.workspace);
                if let Some(why) =
                    self_start::refusal(self.name(), command, args, env, cwd, &self.workspace)
                {
                    return Err(why);
                }
                session::start_stdio(events, command, args, env, cwd, &self.last_words).await
            }
            McpTransport::Http {
                url,
                headers,
                bearer_token_env,
            } => {
                let headers = self.headers_now(headers, url).await?;
                Ok(Session {
                    service: remote::connect_http(
                        events,
                        self.name(),
                        url,
                        &headers,
                        bearer_token_env.as_deref(),
                        &self.config.oauth,
                    )
                    .await?,
                    group: None,
                })
            }
            McpTransport::InProcess => {
                let Some(provider) = &self.provider else {
                    return Err(format!(
                        "no built-in MCP provider is named '{}'",
                        self.name()
                    ));
                };
                let registry = provider_registry(provider.as_ref())?;
                let (client_end, server_end) = tokio::io::duplex(IN_PROCESS_PIPE_BYTES);
                let server = McpServer::new(Arc::new(registry));
                let name = self.name().to_owned();
                tokio::spawn(async move {
                    match server.session().serve(server_end).await {
                        Ok(running) => {
                            let _ = running.waiting().await;
                        }
                        Err(error) => {
                            tracing::warn!(provider = %name, "the built-in provider stopped: {error}");
                        }
                    }
                });
                let service = events
                    .serve(client_end)
                    .await
                    .map_err(|error| format!("the MCP handshake failed: {error}"))?;
                Ok(Session {
                    service,
                    group: None,
                })
            }
            McpTransport::Sse { url, headers, .. } => {
                let headers = self.headers_now(headers, url).await?;
                Ok(Session {
                    service: remote::connect_sse(
                        events,
                        &self.config,
                        &headers,
                        deadline,
                        &self.last_words,
                    )
                    .await?,
                    group: None,
                })
            }
        }
    }

    /// The headers of this connection: the configured ones, and over them what the
    /// `headersHelper` prints now (it runs at every connection, as its tokens expire).
    async fn headers_now(
        &self,
        headers: &BTreeMap<String, String>,
        url: &str,
    ) -> Result<BTreeMap<String, String>, String> {
        with_helper_headers(
            headers,
            self.config.headers_helper.as_deref(),
            (self.name(), url),
            &self.workspace,
        )
        .await
    }

    /// The live session's peer, restarting a server that stopped (a process: at once after
    /// the first stop, then after 1, 2, 4, … seconds while it keeps stopping; a remote server
    /// is connected to again on any call, as a refused connection costs it nothing, and the
    /// call after it comes back must reach it).
    pub(super) async fn peer(&self) -> Result<Peer<RoleClient>, ToolError> {
        let mut state = self.state.lock().await;
        if state.closed {
            return Err(ToolError::new(self.closed_message()));
        }
        if let Some(session) = &state.session
            && !session.service.is_closed()
            && !session.service.peer().is_transport_closed()
        {
            return Ok(session.service.peer().clone());
        }
        // A built-in provider is connected on its first call (see `list_in_process`).
        let first_connection =
            self.is_in_process() && state.session.is_none() && state.consecutive_failures == 0;
        state.drop_session();
        let is_process = matches!(self.config.transport, McpTransport::Stdio { .. });
        if let Some(retry_at) = state.retry_at.filter(|_| is_process) {
            let now = Instant::now();
            if now < retry_at {
                return Err(ToolError::new(format!(
                    "the MCP server '{}' stopped{}; toolhost restarts it on a call after {:.1}s. \
                     Try again later, or check the server's configuration ({})",
                    self.name(),
                    self.last_words.describe(),
                    (retry_at - now).as_secs_f64(),
                    self.config.origin,
                )));
            }
        }
        if !first_connection {
            tracing::info!(server = self.name(), "starting the MCP server again");
        }
        match self.connect_in_time().await {
            Ok(session) => {
                let peer = session.service.peer().clone();
                state.session = Some(session);
                state.retry_at = None;
                // Its tools may have changed while it was away.
                if !first_connection {
                    self.events.tools_changed.notify_one();
                }
                Ok(peer)
            }
            Err(error) => {
                state.consecutive_failures += 1;
                state.retry_at = Some(Instant::now() + backoff(state.consecutive_failures));
                Err(ToolError::new(format!(
                    "the MCP server '{}' stopped and could not be restarted: {error}",
                    self.name()
                )))
            }
        }
    }

    /// Stops the session (see [`Session::stop`]) for good: a later call, `tools/list` or
    /// start is refused instead of starting the server again.
    pub(crate) async fn shutdown(&self) {
        let session = {
            let mut state = self.state.lock().await;
            state.closed = true;
            state.session.take()
        };
        if let Some(session) = session {
            session.stop().await;
        }
    }
}

/// No wait after the first stop, then 1 s, 2 s, 4 s, … up to [`MAX_RESTART_BACKOFF`].
fn backoff(failures: u32) -> Duration {
    if failures <= 1 {
        return Duration::ZERO;
    }
    Duration::from_secs(1u64 << (failures - 2).min(16)).min(MAX_RESTART_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_at_once_then_doubles_to_a_cap() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 16, 32, 60, 60]);
    }
}
