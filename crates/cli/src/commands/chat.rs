//! `toolhost chat`: an interactive session in line mode. A line editor with history reads
//! what the user types; the answer streams in as it comes; each tool call and its outcome get
//! a line; a sub-agent's tool calls and its end get a line tagged with its run id
//! (`[run-1 explore] → Grep …`); approvals are asked on the terminal. Ctrl-C cancels the
//! turn, Ctrl-D leaves (cancelling the sub-agents that still run).
//!
//! Everything but reading lines and drawing events is `toolhost_agent::chat::ChatSession`'s.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use rustyline::error::ReadlineError;
use tokio_util::sync::CancellationToken;
use toolhost_agent::Permissions;
use toolhost_agent::agent_loop::{AgentEvent, AgentEventSink, RunOutcome};
use toolhost_agent::assembly::AgentSetup;
use toolhost_agent::chat::{ChatInput, ChatSession};
use toolhost_config::pricing::usage_summary;
use toolhost_config::providers::provider_pricing;
use toolhost_config::{AgentConfig, Config};
use toolhost_core::SessionEvent;
use toolhost_core::conversation::Usage;
use toolhost_tui::text::arguments_line;

use super::run::{model_flags, one_line, open_session, session_choice};
use crate::EXIT_USAGE;
use crate::approval;
use crate::interrupts::Interrupts;
use toolhost_tui as tui;
use toolhost_tui::chat_commands::chat_command;

// Arguments of `toolhost chat` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The provider: a `[providers.NAME]` of the configuration, `openai` or `anthropic`.
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model to ask.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Go on with the session of this workspace that changed last.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    continue_session: bool,
    /// Go on with the session ID (a unique prefix of it will do).
    #[arg(long, short = 'r', value_name = "ID")]
    resume: Option<String>,
    /// Answer yes to every confirmation (deny rules and the shell deny list still refuse).
    #[arg(long)]
    yes: bool,
    /// Line mode (a prompt and printed lines) even on a terminal; the full-screen chat is the
    /// default when stdin and stdout are a terminal (and TERM is not `dumb`).
    #[arg(long)]
    plain: bool,
}

/// Runs the chat until `/exit` or Ctrl-D.
pub fn run(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    agent: &AgentConfig,
    args: ChatArgs,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(chat(workspace, home, config, agent, args))
}

async fn chat(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    agent: &AgentConfig,
    args: ChatArgs,
) -> anyhow::Result<ExitCode> {
    let full_screen = !args.plain && tui::available();
    let (screen_events, screen_inbox) = tui::channel();
    let approver = if full_screen && !args.yes {
        tui::approver(screen_events.clone())
    } else {
        approval::approver_for_call(args.yes, false)
    };
    let permissions = Permissions::from_config(config, workspace, approver)?;
    let choice = session_choice(args.resume.as_deref(), args.continue_session);
    let (store_path, opening) = match open_session(config, home, workspace, Some(&choice))? {
        Ok(Some((path, opening))) => (Some(path), Some(opening)),
        Ok(None) => (None, None),
        Err(code) => return Ok(code),
    };
    let assembled = AgentSetup::new(workspace, config, agent, &permissions)
        .home(home.map(Path::to_path_buf))
        .model(model_flags(args.provider, args.model, opening.as_ref()))
        .assemble()
        .await;
    let assembled = match assembled {
        Ok(assembled) => assembled,
        Err(error) if error.is_usage_error() => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(error) => return Err(error.into()),
    };
    let mcp = assembled.tools.mcp.clone();
    let pricing = provider_pricing(&assembled.provider.entry, &assembled.provider.model);
    let screen = tui::Screen {
        scripts: assembled
            .tools
            .custom
            .tools()
            .iter()
            .map(|loaded| Arc::clone(&loaded.tool))
            .collect(),
        host: Arc::clone(assembled.tools.custom.host()),
        policy: Arc::clone(permissions.policy()),
        workspace: workspace.to_path_buf(),
        history: home.map(|home| home.join(".toolhost").join("chat_history")),
        context_window: assembled.provider.entry.context_window,
    };
    let mut session = ChatSession::new(
        assembled,
        permissions,
        config.clone(),
        workspace,
        store_path,
        opening,
    )?;
    if full_screen {
        session.agent().session_event(SessionEvent::Start).await;
        // Warnings must not be written over the screen.
        let log = home.map_or_else(
            || std::env::temp_dir().join("toolhost-chat.log"),
            |home| home.join(".toolhost").join("logs").join("chat.log"),
        );
        let _ = crate::logging::to_file(&log);
        let ran = tui::run(session, screen, screen_events, screen_inbox).await;
        crate::logging::to_stderr();
        let (session, total) = ran?;
        session.agent().session_event(SessionEvent::Shutdown).await;
        mcp.shutdown().await;
        println!("{}", usage_summary(&total, pricing.as_ref()));
        if let Some(id) = session.session_id() {
            println!("session {id} (toolhost chat --resume {id})");
        }
        return Ok(ExitCode::SUCCESS);
    }
    drop(screen);
    let (provider, model) = session.model();
    println!(
        "toolhost chat · {provider} {model} · mode {} · /help for commands, Ctrl-D to leave",
        session.mode()
    );
    if !session.messages().is_empty() {
        println!(
            "resumed session {} ({} messages)",
            session.session_id().unwrap_or_default(),
            session.messages().len()
        );
    }
    session.agent().session_event(SessionEvent::Start).await;

    let turn = Arc::new(TurnSlot::default());
    cancel_turns_on_ctrl_c(Arc::clone(&turn))?;
    let mut editor = rustyline::DefaultEditor::new()?;
    let history = home.map(|home| home.join(".toolhost").join("chat_history"));
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    let mut total = Usage::default();
    loop {
        let line = match editor.readline("> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(error) => {
                session.subagents().shutdown().await;
                return Err(error.into());
            }
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        match ChatInput::parse(&line) {
            ChatInput::Empty => {}
            ChatInput::Exit => break,
            ChatInput::Unknown(name) => {
                let cancel = turn.begin();
                let ran = session.run_command(&line, printing_events(), cancel).await;
                turn.end();
                match ran {
                    Some(Ok(report)) => {
                        end_of_turn(&report.outcome);
                        total += report.usage;
                    }
                    Some(Err(error)) => println!("error: {error}"),
                    None => println!("error: /{name} is not a command; /help lists them"),
                }
            }
            ChatInput::Message(text) => {
                let cancel = turn.begin();
                let sent = session.send(&text, printing_events(), cancel).await;
                turn.end();
                let report = match sent {
                    Ok(report) => report,
                    Err(error) => {
                        session.subagents().shutdown().await;
                        return Err(error.into());
                    }
                };
                end_of_turn(&report.outcome);
                total += report.usage;
            }
            command => {
                let cancel = turn.begin();
                let said = chat_command(&mut session, command, &printing_events(), cancel).await;
                turn.end();
                if !said.is_empty() {
                    println!("{said}");
                }
            }
        }
    }
    if let Some(history) = &history {
        let _ = editor.save_history(history);
    }
    // Children still running are cancelled, and their process trees with them, before the
    // chat ends.
    session.subagents().shutdown().await;
    session.agent().session_event(SessionEvent::Shutdown).await;
    mcp.shutdown().await;
    println!("{}", usage_summary(&total, pricing.as_ref()));
    if let Some(id) = session.session_id() {
        println!("session {id} (toolhost chat --resume {id})");
    }
    Ok(ExitCode::SUCCESS)
}

/// The running turn's cancellation, for the Ctrl-C handler.
#[derive(Default)]
struct TurnSlot(Mutex<Option<CancellationToken>>);

impl TurnSlot {
    fn begin(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
        token
    }

    fn end(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }

    /// Cancels the running turn; `false` when none runs.
    fn cancel(&self) -> bool {
        match &*self.0.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(token) if !token.is_cancelled() => {
                token.cancel();
                true
            }
            _ => false,
        }
    }
}

/// While a turn runs the terminal is not in raw mode, so Ctrl-C is SIGINT: it cancels the
/// turn (its model request and its tools' process trees). (While a line is read, the editor
/// sees Ctrl-C itself and clears the line.)
fn cancel_turns_on_ctrl_c(turn: Arc<TurnSlot>) -> std::io::Result<()> {
    let mut interrupts = Interrupts::listen()?;
    tokio::spawn(async move {
        while interrupts.next().await {
            if turn.cancel() {
                eprintln!("\n[cancelling the turn]");
            }
        }
    });
    Ok(())
}

/// Draws the loop's events: the answer as it streams, a line per tool call and outcome.
fn printing_events() -> AgentEventSink {
    let mid_line = Arc::new(Mutex::new(false));
    Arc::new(move |event: AgentEvent| {
        let mut mid_line = mid_line.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = std::io::stdout().lock();
        let end_line = |out: &mut std::io::StdoutLock<'_>, mid_line: &mut bool| {
            if std::mem::take(mid_line) {
                let _ = writeln!(out);
            }
        };
        match event {
            AgentEvent::TextDelta { text } => {
                let _ = write!(out, "{text}");
                *mid_line = !text.ends_with('\n');
            }
            AgentEvent::ToolCallStart { call } => {
                end_line(&mut out, &mut mid_line);
                let _ = writeln!(
                    out,
                    "→ {} {}",
                    call.name,
                    arguments_line(&call.arguments, 100)
                );
            }
            AgentEvent::ToolCallEnd { result } => {
                let mark = if result.is_error { "✗" } else { "✓" };
                let _ = writeln!(out, "  {mark} {}", one_line(&result.text(), 100));
                // The todo list is shown whole: it is what the user follows the work by.
                for line in todo_lines(&result) {
                    let _ = writeln!(out, "    {line}");
                }
            }
            AgentEvent::RetryStart {
                attempt, reason, ..
            } => {
                end_line(&mut out, &mut mid_line);
                let _ = writeln!(out, "  retrying (attempt {attempt}): {reason}");
            }
            AgentEvent::CompactionStart { tokens_before, .. } => {
                end_line(&mut out, &mut mid_line);
                let _ = writeln!(out, "  compacting (~{tokens_before} tokens)…");
            }
            AgentEvent::RunEnd { .. } => end_line(&mut out, &mut mid_line),
            AgentEvent::SubAgent {
                run_id,
                agent,
                event,
                ..
            } => {
                if let Some(said) = subagent_line(&event) {
                    end_line(&mut out, &mut mid_line);
                    let _ = writeln!(out, "[{run_id} {agent}] {said}");
                }
            }
            _ => {}
        }
        let _ = out.flush();
    })
}

/// The lines of the todo list a successful `TodoWrite` call wrote (none for other calls).
fn todo_lines(result: &toolhost_core::ToolCallResult) -> Vec<String> {
    if result.is_error || result.tool_name != toolhost_tools::control::TODO_WRITE {
        return Vec::new();
    }
    let todos = result
        .details
        .as_ref()
        .and_then(|details| details.get("todos"))
        .cloned()
        .and_then(|todos| serde_json::from_value::<Vec<toolhost_tools::control::Todo>>(todos).ok());
    todos
        .unwrap_or_default()
        .iter()
        .map(toolhost_tools::control::Todo::line)
        .collect()
}

/// What line mode says of a sub-agent's event: its tool calls and its end, nothing of its
/// streamed answer (the parent's answer stays readable).
fn subagent_line(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::ToolCallStart { call } => Some(format!(
            "→ {} {}",
            call.name,
            arguments_line(&call.arguments, 100)
        )),
        AgentEvent::ToolCallEnd { result } if result.is_error => {
            Some(format!("✗ {}", one_line(&result.text(), 100)))
        }
        AgentEvent::RunEnd { outcome, turns, .. } => Some(match outcome {
            outcome if outcome.is_success() => format!(
                "completed after {turns} turn{}",
                if *turns == 1 { "" } else { "s" }
            ),
            RunOutcome::Cancelled => "cancelled".to_owned(),
            outcome => format!("failed: {}", one_line(&outcome.text(), 100)),
        }),
        _ => None,
    }
}

fn end_of_turn(outcome: &RunOutcome) {
    match outcome {
        RunOutcome::Answered { .. } => {}
        RunOutcome::Cancelled => println!("[turn cancelled]"),
        other => println!("error: {}", other.text()),
    }
}
