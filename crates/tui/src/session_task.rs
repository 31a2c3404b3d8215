//! The chat session on a task of its own, so the screen keeps drawing while a turn runs: it
//! takes lines (messages, the chat's commands, slash command files) and mode switches in
//! order, and says on the UI's channel when each ended.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolhost_agent::agent_loop::{AgentEvent, AgentEventSink};
use toolhost_agent::chat::{ChatInput, ChatSession};
use toolhost_core::permission::PermissionMode;

use super::UiEvent;
use crate::chat_commands::chat_command;

/// What the session is asked to do.
#[derive(Debug)]
pub enum SessionCommand {
    /// A line the user sent, and the token that cancels its turn.
    Line(String, CancellationToken),
    /// Switch the mode (recorded, and the tools filtered from the next turn).
    SwitchMode(PermissionMode),
}

/// Keys of the full-screen chat, after the commands in `/help`.
const KEYS_HELP: &str = "keys: enter send · alt+enter or ctrl+j or a trailing \\ new line · ↑↓ history · \
esc cancel the turn · shift+tab cycle the mode (default → acceptEdits → plan) · ctrl+o expand \
tool boxes · ctrl+t watch a sub-agent's transcript (esc back, ←→ the others) · pgup/pgdn scroll · ctrl+c clear the input · ctrl+d or /exit leave";

/// Runs `session` until the command channel closes; gives it back then.
pub fn spawn(
    mut session: ChatSession,
    mut commands: mpsc::UnboundedReceiver<SessionCommand>,
    ui: mpsc::UnboundedSender<UiEvent>,
) -> JoinHandle<ChatSession> {
    tokio::spawn(async move {
        let sender = ui.clone();
        let events: AgentEventSink = std::sync::Arc::new(move |event: AgentEvent| {
            let _ = sender.send(UiEvent::Agent(Box::new(event)));
        });
        while let Some(command) = commands.recv().await {
            match command {
                SessionCommand::Line(line, cancel) => {
                    let ended = run_line(&mut session, &line, events.clone(), cancel).await;
                    let _ = ui.send(ended);
                }
                SessionCommand::SwitchMode(mode) => {
                    if let Err(error) = session.switch_mode(mode) {
                        let _ = ui.send(UiEvent::Notify(format!("error: {error}"), "error".into()));
                    }
                }
            }
        }
        session
    })
}

async fn run_line(
    session: &mut ChatSession,
    line: &str,
    events: AgentEventSink,
    cancel: CancellationToken,
) -> UiEvent {
    let ended = |outcome, text: Option<String>| UiEvent::TurnEnded { outcome, text };
    match ChatInput::parse(line) {
        ChatInput::Message(text) => match session.send(&text, events, cancel).await {
            Ok(report) => ended(Some(report.outcome), None),
            Err(error) => ended(None, Some(format!("error: {error}"))),
        },
        ChatInput::Unknown(name) => match session.run_command(line, events, cancel).await {
            Some(Ok(report)) => ended(Some(report.outcome), None),
            Some(Err(error)) => ended(None, Some(format!("error: {error}"))),
            None => ended(
                None,
                Some(format!("error: /{name} is not a command; /help lists them")),
            ),
        },
        ChatInput::Help => {
            let help = chat_command(session, ChatInput::Help, &events, cancel).await;
            ended(None, Some(format!("{help}\n{KEYS_HELP}")))
        }
        ChatInput::Empty | ChatInput::Exit => ended(None, None),
        command => {
            let said = chat_command(session, command, &events, cancel).await;
            ended(None, Some(said))
        }
    }
}
