//! A live session with a server, and a stdio server's process: started through
//! `toolhost-exec`'s prepared command (own process group, clean environment), stopped with
//! whatever it started.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt as _};
use tokio::io::AsyncBufReadExt as _;
use toolhost_exec::{KILL_GRACE_PERIOD, ProcessGroup, ProcessSpec};

use super::child_transport::ChildTransport;
use super::events::{ClientEvents, LastWords};
use super::self_start;

/// A running MCP client session.
pub(super) type Service = RunningService<RoleClient, ClientEvents>;

/// How long a failed start waits for the server's last words on stderr.
const STDERR_SETTLE_TIME: Duration = Duration::from_millis(500);

/// A live session, and the process group of a stdio server.
pub(super) struct Session {
    pub(super) service: Service,
    pub(super) group: Option<OwnedGroup>,
}

impl Session {
    /// Stops the server: a stdio server's process first (stdin closed, then SIGTERM, then
    /// SIGKILL), then whatever is left of its process group.
    pub(super) async fn stop(self) {
        let Self { mut service, group } = self;
        let _ = service.close_with_timeout(Duration::from_secs(2)).await;
        drop(service);
        if let Some(group) = group {
            group.stop().await;
        }
    }
}

/// The process group of a stdio server, which toolhost stops with the server. Dropped
/// without [`Self::stop`] (a start abandoned half-way, the runtime ending), it kills the
/// group at once, so that no helper the server started outlives it.
pub(super) struct OwnedGroup(ProcessGroup);

impl OwnedGroup {
    /// SIGTERM to what is left of the group, then SIGKILL after the grace period.
    pub(super) async fn stop(self) {
        self.0.stop(KILL_GRACE_PERIOD).await;
        // Nobody is left: dropping it sends nothing that matters.
    }
}

impl Drop for OwnedGroup {
    fn drop(&mut self) {
        if self.0.has_members() {
            self.0.kill();
        }
    }
}

/// Starts `command` in `cwd` with `env` added to a clean environment, its stderr kept in
/// `tail`, and shakes hands with it. A server that fails is stopped with its group.
pub(super) async fn start_stdio(
    events: ClientEvents,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    tail: &Arc<LastWords>,
) -> Result<Session, String> {
    let mut spec = ProcessSpec::new(command)
        .args(args)
        .without_timeout()
        .working_dir(cwd.to_path_buf());
    for (name, value) in env {
        spec = spec.env(name, value);
    }
    // One level deeper, so that a chain of toolhost starting toolhost ends (see self_start).
    let level = self_start::nesting() + 1;
    spec = spec.env(self_start::NESTING_ENV, level.to_string());
    let prepared = spec
        .to_command()
        .map_err(|error| format!("cannot start '{command}': {error}"))?;
    let (transport, stderr) = ChildTransport::spawn(prepared.command)
        .map_err(|error| format!("cannot start '{command}': {error}"))?;
    let group = transport
        .id()
        .and_then(ProcessGroup::led_by_pid)
        .map(OwnedGroup);
    let reader = stderr.map(|stderr| {
        let tail = Arc::clone(tail);
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tail.push(line);
            }
        })
    });
    match events.serve(transport).await {
        Ok(service) => Ok(Session { service, group }),
        Err(error) => {
            if let Some(group) = group {
                tokio::spawn(group.stop());
            }
            // A server that failed has usually said why on stderr just before.
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(STDERR_SETTLE_TIME, reader).await;
            }
            Err(format!("the MCP handshake failed: {error}"))
        }
    }
}
