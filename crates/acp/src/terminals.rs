//! Bash in the editor's terminal (`terminal/create`, `terminal/wait_for_exit`,
//! `terminal/kill`, `terminal/output`, `terminal/release`), for a client that offers
//! `terminal` when `[shell] editor_terminal` is on. Bash has judged the command already (the
//! permission rules before the call, the deny list in the tool); this only runs it, shows the
//! terminal in the call, and stops it on the timeout or a cancel.
//!
//! The terminal is driven from a task of its own: a cancelled call's tool is dropped by the
//! pipeline at once, and the terminal must still be killed and released.

use std::time::Instant;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest,
    SessionNotification, SessionUpdate, Terminal, TerminalId, TerminalOutputRequest,
    ToolCallContent, ToolCallId, ToolCallUpdate, ToolCallUpdateFields, WaitForTerminalExitRequest,
};
use tokio_util::sync::CancellationToken;
use toolhost_core::ToolContext;
use toolhost_tools::editor_terminal::{EditorTerminal, TerminalCommand, TerminalRun, Termination};

/// The terminals of one session's editor.
pub struct ClientTerminals {
    connection: ConnectionTo<Client>,
    session_id: String,
}

impl ClientTerminals {
    /// The terminals of session `session_id` through `connection`.
    pub fn new(connection: ConnectionTo<Client>, session_id: &str) -> Self {
        Self {
            connection,
            session_id: session_id.to_owned(),
        }
    }
}

#[async_trait::async_trait]
impl EditorTerminal for ClientTerminals {
    async fn run(
        &self,
        command: TerminalCommand,
        ctx: &ToolContext,
    ) -> Result<TerminalRun, String> {
        let run = TerminalTask {
            connection: self.connection.clone(),
            session_id: self.session_id.clone(),
            call_id: ctx.call_id().to_owned(),
            cancel: ctx.cancellation().clone(),
        };
        tokio::spawn(run.run(command))
            .await
            .map_err(|error| format!("the terminal's task failed: {error}"))?
    }
}

/// One command in one terminal, from its creation to its release.
struct TerminalTask {
    connection: ConnectionTo<Client>,
    session_id: String,
    call_id: String,
    cancel: CancellationToken,
}

impl TerminalTask {
    async fn run(self, command: TerminalCommand) -> Result<TerminalRun, String> {
        let started = Instant::now();
        let request = CreateTerminalRequest::new(self.session_id.clone(), command.program)
            .args(command.args)
            .env(
                command
                    .env
                    .into_iter()
                    .map(|(name, value)| EnvVariable::new(name, value))
                    .collect(),
            )
            .cwd(command.cwd)
            .output_byte_limit(u64::try_from(command.output_limit).unwrap_or(u64::MAX));
        let id = self
            .connection
            .send_request(request)
            .block_task()
            .await
            .map_err(|error| format!("terminal/create: {error}"))?
            .terminal_id;
        self.show(&id);
        let waited = self
            .connection
            .send_request(WaitForTerminalExitRequest::new(
                self.session_id.clone(),
                id.clone(),
            ));
        let (termination, exited) = tokio::select! {
            exited = waited.block_task() => match exited {
                Ok(exited) => (Termination::Exited, Some(exited.exit_status)),
                Err(error) => {
                    self.release(&id).await;
                    return Err(format!("terminal/wait_for_exit: {error}"));
                }
            },
            () = tokio::time::sleep(command.timeout) => (Termination::TimedOut, None),
            () = self.cancel.cancelled() => (Termination::Cancelled, None),
        };
        let duration = started.elapsed();
        if termination != Termination::Exited
            && let Err(error) = self
                .connection
                .send_request(KillTerminalRequest::new(
                    self.session_id.clone(),
                    id.clone(),
                ))
                .block_task()
                .await
        {
            tracing::warn!("terminal/kill of {}: {error}", id.0);
        }
        let output = self
            .connection
            .send_request(TerminalOutputRequest::new(
                self.session_id.clone(),
                id.clone(),
            ))
            .block_task()
            .await;
        self.release(&id).await;
        let output = output.map_err(|error| format!("terminal/output: {error}"))?;
        let status = exited.or(output.exit_status).unwrap_or_default();
        Ok(TerminalRun {
            terminal_id: id.0.to_string(),
            output: output.output,
            truncated: output.truncated,
            exit_code: status.exit_code,
            signal: status.signal,
            termination,
            duration,
        })
    }

    /// The call shows the terminal from now on.
    fn show(&self, id: &TerminalId) {
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            ToolCallId::new(self.call_id.as_str()),
            ToolCallUpdateFields::new()
                .content(vec![ToolCallContent::Terminal(Terminal::new(id.clone()))]),
        ));
        if let Err(error) = self
            .connection
            .send_notification(SessionNotification::new(self.session_id.clone(), update))
        {
            tracing::debug!("the editor is gone: {error}");
        }
    }

    async fn release(&self, id: &TerminalId) {
        if let Err(error) = self
            .connection
            .send_request(ReleaseTerminalRequest::new(
                self.session_id.clone(),
                id.clone(),
            ))
            .block_task()
            .await
        {
            tracing::warn!("terminal/release of {}: {error}", id.0);
        }
    }
}
