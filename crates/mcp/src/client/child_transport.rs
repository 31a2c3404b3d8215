//! The transport to a stdio server's process: rmcp's line transport over the child's pipes,
//! with `tools/call` results parsed here (see [`super::typed_results`]), in place of rmcp's
//! `TokioChildProcess`, which parses every line with its generic parser.

use std::io;
use std::process::Stdio;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::typed_results::typed_call_result;
use crate::typed_lines::TypedLineTransport;

/// How long a server whose stdin was closed has to exit before the caller's stop goes on to
/// signals (the MCP specification's stdio shutdown: stdin closed, then SIGTERM, then SIGKILL).
const EXIT_AFTER_STDIN_CLOSED: Duration = Duration::from_secs(2);

/// A running server process and the lines to and from it. Dropping it kills the process
/// (the command is made with `kill_on_drop`).
pub(super) struct ChildTransport {
    child: Child,
    lines: TypedLineTransport<RoleClient, ChildStdout, ChildStdin>,
}

impl ChildTransport {
    /// Spawns `command` with piped stdin and stdout, and stderr piped too: returned for the
    /// caller to read.
    pub(super) fn spawn(mut command: Command) -> io::Result<(Self, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(io::Error::other(
                "the server's stdin or stdout is not a pipe",
            ));
        };
        let stderr = child.stderr.take();
        let lines = TypedLineTransport::new(stdout, stdin, typed_call_result);
        Ok((Self { child, lines }, stderr))
    }

    /// The process id, while the process has not been reaped.
    pub(super) fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.lines.receive()
    }

    /// Closes the server's stdin and gives it a moment to exit; the signals that follow are
    /// the caller's (the session stops the whole process group).
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close().await?;
        let _ = tokio::time::timeout(EXIT_AFTER_STDIN_CLOSED, self.child.wait()).await;
        Ok(())
    }
}
