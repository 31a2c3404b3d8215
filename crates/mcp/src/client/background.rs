//! Servers whose tools join later: one left to start on its own so that a gateway answers at
//! once ([`McpStartup::Background`](super::McpStartup::Background)), and one that failed at
//! start-up and is tried again with backoff. Either joins the clients, and its tools the
//! registry, once it has started.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolhost_core::{ToolRegistry, ToolSpec};

use super::connection::{MAX_RESTART_BACKOFF, ServerConnection};
use super::report::McpServerFailure;

/// The first wait before starting again a server that failed at start-up; it doubles after
/// each failure, up to [`MAX_RESTART_BACKOFF`](super::MAX_RESTART_BACKOFF).
pub const FIRST_START_RETRY: Duration = Duration::from_secs(1);

/// Which of a server's tools join the registry.
pub(super) type ToolFilter = Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>;

/// What a server that started late joins: the clients (`McpClients`), which take it unless
/// they are stopping. A trait of this module's, so that the clients and their late starts do
/// not import each other.
pub(super) trait Adopter: Send + Sync {
    /// Takes `server` in, and those of its `listed` tools that `keep` accepts into `registry`;
    /// `false` when `stopping` was cancelled first (the caller then shuts the server down).
    fn adopt(
        self: Arc<Self>,
        server: &Arc<ServerConnection>,
        listed: &[Value],
        registry: &Arc<ToolRegistry>,
        keep: &ToolFilter,
        stopping: &CancellationToken,
    ) -> bool;
}

/// What a start gives: the server's tools (the JSON of each), or why it failed.
pub(super) type StartResult = Result<Vec<Value>, String>;

/// A start under way that nobody waits for yet: [`McpClients::keep_in_sync`] takes it over,
/// [`McpClients::shutdown`] aborts it.
pub(super) struct PendingStart {
    pub(super) server: Arc<ServerConnection>,
    pub(super) start: JoinHandle<StartResult>,
}

/// The longest a background start waits for `McpClients::release_background_starts`: a
/// gateway whose client never completes a handshake (an HTTP server nobody has connected to
/// yet) still starts its servers.
pub const BACKGROUND_START_HOLD: Duration = Duration::from_secs(1);

impl PendingStart {
    /// Starts `server` in a task of its own once `released` turns true (or after
    /// [`BACKGROUND_START_HOLD`]): starting a process takes the thread a moment, which the
    /// gateway's first answer to its client should not wait for.
    pub(super) fn spawn(
        server: Arc<ServerConnection>,
        mut released: tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        let starting = Arc::clone(&server);
        Self {
            server,
            start: tokio::spawn(async move {
                let _ =
                    tokio::time::timeout(BACKGROUND_START_HOLD, released.wait_for(|open| *open))
                        .await;
                starting.start().await
            }),
        }
    }

    /// Abandons the start: dropping it kills a stdio server's process group, and the server
    /// is shut down for good.
    pub(super) async fn abort(self) {
        self.start.abort();
        let _ = self.start.await;
        self.server.shutdown().await;
    }
}

/// Where a server that starts late goes: the clients (held weakly: dropped clients start
/// nothing more), the registry its tools join (those that `keep` accepts), and the token that
/// [`McpClients::shutdown`] cancels.
pub(super) struct Destination {
    pub(super) clients: Weak<dyn Adopter>,
    pub(super) registry: Arc<ToolRegistry>,
    pub(super) keep: ToolFilter,
    pub(super) stopping: CancellationToken,
}

/// How a server comes to start in the background.
pub(super) enum FirstTry {
    /// Its first start is under way: the first failure is reported as a warning, like a
    /// failure at start-up.
    UnderWay(JoinHandle<StartResult>),
    /// Its first start failed (already reported): tries again after [`FIRST_START_RETRY`].
    Failed,
}

/// Waits for the server to start, trying again with backoff (after [`FIRST_START_RETRY`],
/// then twice as long after each failure up to [`MAX_RESTART_BACKOFF`]), until it starts
/// (then it joins the clients and its tools the registry) or the clients stop. A failed start
/// leaves nothing running ([`ServerConnection::start`]); one that the shutdown interrupts is
/// dropped, which kills a stdio server's group, and the server is shut down.
pub(super) async fn start_until_adopted(
    server: Arc<ServerConnection>,
    first: FirstTry,
    destination: Destination,
) {
    let name = server.config.name.clone();
    let mut wait = FIRST_START_RETRY;
    let (mut under_way, mut tries) = match first {
        FirstTry::UnderWay(start) => (Some(start), 0u32),
        FirstTry::Failed => (None, 1),
    };
    let stopping = &destination.stopping;
    let listed = loop {
        let started = if let Some(mut start) = under_way.take() {
            tokio::select! {
                () = stopping.cancelled() => {
                    start.abort();
                    let _ = start.await;
                    server.shutdown().await;
                    return;
                }
                joined = &mut start => joined
                    .unwrap_or_else(|error| Err(format!("its start ended abnormally: {error}"))),
            }
        } else {
            tokio::select! {
                () = stopping.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            // After the wait: clients dropped meanwhile (without a shutdown) start nothing more.
            if destination.clients.strong_count() == 0 {
                return;
            }
            let started = tokio::select! {
                () = stopping.cancelled() => {
                    server.shutdown().await;
                    return;
                }
                started = server.start() => started,
            };
            wait = (wait * 2).min(MAX_RESTART_BACKOFF);
            started
        };
        tries += 1;
        match started {
            Ok(listed) => break listed,
            Err(message) if tries == 1 => {
                let failure = McpServerFailure {
                    server: name.clone(),
                    origin: server.config.origin.clone(),
                    required: server.config.required,
                    message,
                };
                tracing::warn!(
                    "{failure}; its tools are left out for now, and toolhost tries again in {}s",
                    wait.as_secs()
                );
            }
            Err(error) => tracing::info!(
                server = %name,
                "the MCP server still does not start ({error}); next try in {}s",
                wait.as_secs()
            ),
        }
    };
    let Some(clients) = destination.clients.upgrade() else {
        server.shutdown().await;
        return;
    };
    let adopted = clients.adopt(
        &server,
        &listed,
        &destination.registry,
        &destination.keep,
        stopping,
    );
    if !adopted {
        server.shutdown().await;
        return;
    }
    if tries == 1 {
        tracing::info!(server = %name, tools = listed.len(), "the MCP server's tools are added");
    } else {
        // The counterpart of the warning that it did not start, hence as visible.
        tracing::warn!(
            server = %name,
            tools = listed.len(),
            "the MCP server started on try {tries}; its tools are added"
        );
    }
}
