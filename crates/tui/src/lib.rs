//! The full-screen chat (`toolhost chat` on a terminal): a scrolling transcript with the
//! answer drawn as Markdown, a box per tool call drawn by the tool's renderer, an input box
//! with history, a status line, and dialogs for approvals, custom tools' questions and
//! pending actions.
//!
//! The pieces: `app` is the state and how events and keys change it (pure, tested by
//! drawing into a test backend); `draw` and `dialog_view` draw it; `renderers` say
//! what each tool's box shows; `session_task` runs the chat session on its own task, and
//! render hooks and pending actions run on tasks of their own, so the screen never waits on
//! a tool. Everything arrives on one channel of [`UiEvent`]s.

mod app;
mod bridge;
pub mod chat_commands;
mod child_view;
mod children;
mod dialog_view;
mod dialogs;
mod draw;
mod events;
mod input;
mod markdown;
mod renderers;
mod session_task;
pub mod text;
mod transcript;

#[cfg(test)]
mod tests;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::crossterm::event::{self, Event};
use ratatui::layout::Rect;
use ratatui::{DefaultTerminal, Terminal, TerminalOptions, Viewport};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use toolhost_agent::agent_loop::{AgentEvent, RunOutcome};
use toolhost_agent::chat::ChatSession;
use toolhost_core::conversation::Usage;
use toolhost_core::permission::{ApprovalAnswer, ApprovalRequest, Approver, PermissionPolicy};
use toolhost_script::{Rendering, ScriptHost, ScriptTool, UiRequest};

use app::{App, Hook};
use session_task::SessionCommand;
use transcript::NoticeKind;

/// How often the spinner turns while something runs.
const TICK: Duration = Duration::from_millis(100);
/// Events handled before the screen is drawn again, at most (a flood of output still draws).
const EVENTS_PER_FRAME: usize = 512;

/// What reaches the screen's loop.
#[derive(Debug)]
pub enum UiEvent {
    /// One of the agent loop's events.
    Agent(Box<AgentEvent>),
    /// A call asks for approval.
    Approval(ApprovalRequest, oneshot::Sender<ApprovalAnswer>),
    /// A custom tool asks a question (`api.ui`).
    Question(UiRequest, oneshot::Sender<Value>),
    /// A custom tool's notice (`api.ui.notify`): message and level.
    Notify(String, String),
    /// A render hook's result.
    Rendered {
        /// The call.
        call_id: String,
        /// The hook.
        hook: Hook,
        /// What it drew.
        rendering: Rendering,
    },
    /// A pending action was applied or discarded.
    Resolved {
        /// The action's id.
        id: u32,
        /// Whether it was applied.
        applied: bool,
        /// What its hook returned, or why it failed.
        outcome: Result<Option<String>, String>,
    },
    /// A line sent to the session was dealt with.
    TurnEnded {
        /// How the turn ended, when it was one.
        outcome: Option<RunOutcome>,
        /// What a command said.
        text: Option<String>,
    },
    /// A key, a paste or a resize.
    Terminal(Event),
}

/// The channel everything reaches the screen on.
pub fn channel() -> (
    mpsc::UnboundedSender<UiEvent>,
    mpsc::UnboundedReceiver<UiEvent>,
) {
    mpsc::unbounded_channel()
}

/// Whether the full-screen chat can run: stdin and stdout are a terminal that is not `dumb`.
pub fn available() -> bool {
    std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// The approver that asks in the screen's dialogs.
pub fn approver(events: mpsc::UnboundedSender<UiEvent>) -> Arc<dyn Approver> {
    Arc::new(bridge::DialogApprover(events))
}

/// What the screen needs besides the session.
pub struct Screen {
    /// The custom tools (their render hooks, their pending actions).
    pub scripts: Vec<Arc<ScriptTool>>,
    /// Their host, which gets the screen as its `api.ui`.
    pub host: Arc<ScriptHost>,
    /// The permission policy (Shift-Tab switches its mode at once).
    pub policy: Arc<PermissionPolicy>,
    /// The workspace (its `.toolhost/config.local.toml` takes "allow always" rules).
    pub workspace: PathBuf,
    /// The history file.
    pub history: Option<PathBuf>,
    /// The model's context window, when configured.
    pub context_window: Option<u64>,
}

/// Runs the full-screen chat until the user leaves (its sub-agents cancelled and awaited
/// then); the session back, and the tokens spent.
pub async fn run(
    session: ChatSession,
    screen: Screen,
    events: mpsc::UnboundedSender<UiEvent>,
    mut inbox: mpsc::UnboundedReceiver<UiEvent>,
) -> anyhow::Result<(ChatSession, Usage)> {
    let mut app = App::default();
    let (provider, model) = session.model();
    app.status.provider = provider.to_owned();
    app.status.model = model.to_owned();
    app.status.mode = session.mode();
    app.status.context_window = screen.context_window;
    app.rendered_tools = screen
        .scripts
        .iter()
        .filter(|tool| tool.has_render_hooks())
        .map(|tool| tool.name().to_owned())
        .collect();
    if let Some(history) = &screen.history {
        app.input.load_history(history);
    }
    app.notice(
        NoticeKind::Info,
        format!(
            "toolhost chat · {provider} {model} · /help for commands and keys, ctrl+d to leave"
        ),
    );
    if !session.messages().is_empty() {
        app.transcript
            .extend(transcript::from_messages(session.messages()));
        app.notice(
            NoticeKind::Info,
            format!(
                "resumed session {} ({} messages)",
                session.session_id().unwrap_or_default(),
                session.messages().len()
            ),
        );
    }
    screen
        .host
        .set_ui_context(Arc::new(bridge::DialogUi(events.clone())));
    let (commands, command_inbox) = mpsc::unbounded_channel();
    let task = session_task::spawn(session, command_inbox, events.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let reader = read_terminal(events.clone(), Arc::clone(&stop));

    let mut terminal = open_terminal()?;
    let looped = screen_loop(
        &mut terminal,
        &mut app,
        &screen,
        &events,
        &mut inbox,
        &commands,
    )
    .await;
    ratatui::restore();
    stop.store(true, Ordering::Relaxed);
    let _ = reader.join();
    screen.host.clear_ui_context();
    if let Some(history) = &screen.history {
        let _ = app.input.save_history(history);
    }
    drop(commands);
    let session = task.await?;
    // Leaving the screen, even on a terminal error, ends the children still running: none
    // outlives the chat.
    session.subagents().shutdown().await;
    looped?;
    Ok((session, app.status.usage))
}

/// The terminal in raw mode on the alternate screen; 80×24 when the terminal reports no size
/// (a pseudo-terminal nobody sized).
fn open_terminal() -> anyhow::Result<DefaultTerminal> {
    let terminal = ratatui::try_init()?;
    let size = terminal.size()?;
    if size.width > 0 && size.height > 0 {
        return Ok(terminal);
    }
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    Ok(Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 80, 24)),
        },
    )?)
}

/// Keys, pastes and resizes, read on a thread of their own (reading blocks).
fn read_terminal(
    events: mpsc::UnboundedSender<UiEvent>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(50)) {
                Ok(true) => match event::read() {
                    Ok(event) => {
                        if events.send(UiEvent::Terminal(event)).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                },
                Ok(false) => {}
                Err(_) => return,
            }
        }
    })
}

async fn screen_loop(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    screen: &Screen,
    events: &mpsc::UnboundedSender<UiEvent>,
    inbox: &mut mpsc::UnboundedReceiver<UiEvent>,
    commands: &mpsc::UnboundedSender<SessionCommand>,
) -> anyhow::Result<()> {
    let mut cache = draw::RowCache::default();
    let mut ticker = tokio::time::interval(TICK);
    let mut turn: Option<CancellationToken> = None;
    terminal.draw(|frame| draw::draw(frame, app, &mut cache))?;
    while !app.quit {
        let ticking = app.busy || !app.dialogs.is_empty() || app.children_running();
        let first = tokio::select! {
            event = inbox.recv() => match event {
                Some(event) => Some(event),
                None => break,
            },
            _ = ticker.tick(), if ticking => None,
        };
        let mut batch: Vec<UiEvent> = first.into_iter().collect();
        while batch.len() < EVENTS_PER_FRAME {
            match inbox.try_recv() {
                Ok(event) => batch.push(event),
                Err(_) => break,
            }
        }
        if batch.is_empty() {
            app.tick();
        }
        for event in batch {
            for action in events::handle(app, screen, event) {
                events::act(app, screen, events, commands, &mut turn, action);
            }
        }
        terminal.draw(|frame| draw::draw(frame, app, &mut cache))?;
    }
    if let Some(turn) = turn {
        turn.cancel();
    }
    Ok(())
}
