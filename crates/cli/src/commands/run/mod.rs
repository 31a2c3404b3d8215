//! `toolhost run [PROMPT | -]`: one headless agent run, for scripts and CI.

mod output;

pub(crate) use toolhost_tui::text::first_line_cut as one_line;

use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolhost_agent::Permissions;
use toolhost_agent::agent_loop::{AgentEvent, Transcript};
use toolhost_agent::assembly::{AgentSetup, AssemblyError};
use toolhost_agent::session_record::{SessionChoice, SessionOpening, turn_context};
use toolhost_config::model_choice::ModelFlags;
use toolhost_config::providers::provider_pricing;
use toolhost_config::{AgentConfig, Config};
use toolhost_core::SessionEvent;
use toolhost_core::conversation::Message;
use toolhost_script::Prompted;
use toolhost_session::views;

use crate::EXIT_USAGE;
use crate::approval;
use crate::interrupts::Interrupts;
use output::{EventWriter, OutputFormat, RunInfo, RunTimes};
use toolhost_mcp_catalog::upstream_prompts::expand_mcp_prompt_line;

// Arguments of `toolhost run` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to ask, or `-` to read it from standard input.
    #[arg(value_name = "PROMPT | -")]
    prompt: String,
    /// How to print the run: text (the answer), json (one object), stream-json (one event
    /// per line, as Claude Code's headless mode prints them).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output_format: OutputFormat,
    /// The provider: a `[providers.NAME]` of the configuration, `openai` or `anthropic`.
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model to ask.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Only these built-in tools are offered (comma-separated, e.g. Read,Grep); custom and
    /// MCP tools stay.
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    tools: Option<Vec<String>>,
    /// The most model turns (default: `[agent] max_iterations`, else 50).
    #[arg(long, value_name = "N")]
    max_iterations: Option<usize>,
    /// Answer yes to every confirmation (deny rules and the shell deny list still refuse).
    #[arg(long)]
    yes: bool,
    /// Go on with the session of this workspace that changed last.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    continue_session: bool,
    /// Go on with the session ID (a unique prefix of it will do).
    #[arg(long, short = 'r', value_name = "ID")]
    resume: Option<String>,
    /// Keep no session on disk for this run.
    #[arg(long, conflicts_with_all = ["continue_session", "resume"])]
    no_session: bool,
}

impl RunArgs {
    fn session_choice(&self) -> SessionChoice {
        session_choice(self.resume.as_deref(), self.continue_session)
    }
}

/// The session `--resume ID` / `--continue` name (`run` and `chat` alike).
pub(crate) fn session_choice(resume: Option<&str>, continue_latest: bool) -> SessionChoice {
    match (resume, continue_latest) {
        (Some(id), _) => SessionChoice::Id(id.to_owned()),
        (None, true) => SessionChoice::Latest,
        (None, false) => SessionChoice::New,
    }
}

/// Exit status when the run ended in error (iteration limit, provider failure, cancelled).
const EXIT_RUN_FAILED: u8 = 1;

/// Exit status after a second Ctrl-C.
const EXIT_INTERRUPTED: i32 = crate::exit::EXIT_INTERRUPTED as i32;

/// Runs the agent once.
pub fn run(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    agent: &AgentConfig,
    args: RunArgs,
) -> anyhow::Result<ExitCode> {
    let from_stdin = args.prompt == "-";
    let prompt = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the prompt from standard input")?;
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        eprintln!("error: the prompt is empty: give it as an argument, or pipe it in with '-'");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run_agent(
        workspace, home, config, agent, args, prompt, from_stdin,
    ))
}

async fn run_agent(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    agent: &AgentConfig,
    args: RunArgs,
    prompt: String,
    from_stdin: bool,
) -> anyhow::Result<ExitCode> {
    let approver = approval::approver_for_call(args.yes, from_stdin);
    let permissions = Permissions::from_config(config, workspace, approver)?;
    // The session first: a resumed one brings its provider and model.
    let choice = (!args.no_session).then(|| args.session_choice());
    let opening = match open_session(config, home, workspace, choice.as_ref())? {
        Ok(opening) => opening.map(|(_, opening)| opening),
        Err(code) => return Ok(code),
    };
    let flags = model_flags(args.provider, args.model, opening.as_ref());
    let assembled = AgentSetup::new(workspace, config, agent, &permissions)
        .home(home.map(Path::to_path_buf))
        .model(flags)
        .builtin_tools(args.tools)
        .max_iterations(args.max_iterations)
        .assemble()
        .await;
    let assembled = match assembled {
        Ok(assembled) => assembled,
        Err(error @ AssemblyError::Tools(_)) => return Err(error.into()),
        Err(error) if error.is_usage_error() => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(error) => return Err(error.into()),
    };
    // `/mcp__<server>__<prompt> args`: the server's prompt, filled in, is the message.
    let prompt =
        match expand_mcp_prompt_line(&prompt, &assembled.tools.mcp, permissions.policy()).await {
            None => prompt,
            Some(Ok(text)) => text,
            Some(Err(error)) => {
                assembled.tools.mcp.shutdown().await;
                eprintln!("error: {error}");
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        };
    let mut agent = assembled.agent;
    let mut messages = Vec::new();
    let resumed = opening.as_ref().is_some_and(SessionOpening::is_resumed);
    let recorded = match opening {
        None => None,
        Some(opening) => {
            let context = turn_context(
                &assembled.provider.entry.name,
                &assembled.provider.model,
                permissions.mode(),
                assembled.provider.entry.max_output_tokens,
                &assembled.prompt,
            );
            let (recorded, earlier) = opening.start(workspace, &prompt, context)?;
            messages = earlier;
            let recorded = Arc::new(recorded);
            agent = agent.transcript(Arc::clone(&recorded) as Arc<dyn Transcript>);
            Some(recorded)
        }
    };
    let session_id = recorded
        .as_ref()
        .map_or_else(new_session_id, |recorded| recorded.id().to_string());
    let agent = agent.session_id(session_id.clone());
    let cancel = CancellationToken::new();
    // pi extensions: the session they store in, what `ctx.abort()` cancels, `session_start`,
    // then the prompt through their `input` handlers and commands.
    let extensions = Arc::clone(&assembled.tools.extensions);
    extensions.set_recorded(
        recorded
            .clone()
            .map(|recorded| recorded as Arc<dyn toolhost_script::ExtensionStore>),
    );
    extensions.set_cancel(cancel.clone());
    extensions
        .start(
            &session_id,
            &assembled.provider.model,
            agent.registry(),
            resumed,
        )
        .await;
    let prompt = match extensions.prompt(&prompt, "rpc").await {
        Prompted::Send(text) => text,
        Prompted::Done => {
            extensions
                .notify("session_shutdown", &serde_json::json!({}))
                .await;
            assembled.tools.mcp.shutdown().await;
            return Ok(ExitCode::SUCCESS);
        }
        Prompted::Failed(error) => {
            eprintln!("error: {error}");
            extensions
                .notify("session_shutdown", &serde_json::json!({}))
                .await;
            assembled.tools.mcp.shutdown().await;
            return Ok(ExitCode::from(EXIT_RUN_FAILED));
        }
    };
    let prompt = Message::user(prompt);
    if let Some(recorded) = &recorded {
        recorded.record_message(&prompt)?;
    }
    messages.push(prompt);
    let writer = Arc::new(EventWriter::new(
        args.output_format,
        RunInfo {
            session_id,
            cwd: workspace.display().to_string(),
            permission_mode: permissions.mode().to_string(),
            pricing: provider_pricing(&assembled.provider.entry, &assembled.provider.model),
        },
        true,
    ));
    let events_writer = Arc::clone(&writer);
    let events: toolhost_agent::agent_loop::AgentEventSink =
        Arc::new(move |event: AgentEvent| events_writer.event(&event));
    // Sub-agents' progress goes to the same output, tagged with their run.
    assembled.tools.subagents.set_events(Arc::clone(&events));
    cancel_on_ctrl_c(cancel.clone())?;

    agent.session_event(SessionEvent::Start).await;
    let report = agent.run(messages, events, cancel.clone()).await;
    // Children still running (after a cancel) end first, their sessions marked.
    assembled.tools.subagents.shutdown().await;
    if let Some(recorded) = &recorded {
        recorded.finish(&report.outcome)?;
    }
    agent.session_event(SessionEvent::Shutdown).await;
    assembled.tools.mcp.shutdown().await;

    writer.finish(
        &report.outcome,
        report.turns,
        report.usage,
        RunTimes {
            total: report.duration,
            model: report.model_time,
        },
    );
    // Only Ctrl-C cancels the run's token: the run was interrupted.
    if cancel.is_cancelled() {
        return Err(crate::exit::Interrupted.into());
    }
    Ok(if report.outcome.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_RUN_FAILED)
    })
}

/// The session store and the session `choice` names (`None`: keep no session); `Err` is the
/// exit status of a usage error, already reported.
pub(crate) fn open_session(
    config: &Config,
    home: Option<&Path>,
    workspace: &Path,
    choice: Option<&SessionChoice>,
) -> anyhow::Result<Result<Option<(PathBuf, SessionOpening)>, ExitCode>> {
    let Some(choice) = choice else {
        return Ok(Ok(None));
    };
    let path = match views::store_path(config, home) {
        Ok(path) => path,
        Err(error) => {
            tracing::warn!("this run is not kept as a session: {error}");
            return Ok(Ok(None));
        }
    };
    match SessionOpening::open(&path, choice, workspace) {
        Ok(opening) => Ok(Ok(Some((path, opening)))),
        Err(error) if error.is_usage_error() => {
            eprintln!("error: {error}");
            Ok(Err(ExitCode::from(EXIT_USAGE)))
        }
        // Not the command line's fault: the same command works once the other run ends.
        Err(error) if error.is_running_elsewhere() => {
            eprintln!("error: {error}");
            Ok(Err(ExitCode::from(EXIT_RUN_FAILED)))
        }
        Err(error) => Err(error.into()),
    }
}

/// `--provider` and `--model`, or else the resumed session's.
pub(crate) fn model_flags(
    provider: Option<String>,
    model: Option<String>,
    opening: Option<&SessionOpening>,
) -> ModelFlags {
    match (provider, model, opening.and_then(SessionOpening::model)) {
        (None, None, Some((provider, model))) => ModelFlags {
            provider: Some(provider.clone()),
            model: Some(model.clone()),
        },
        (provider, model, _) => ModelFlags { provider, model },
    }
}

/// The first Ctrl-C cancels the run (its model request and its tools' process trees); the
/// second exits at once.
fn cancel_on_ctrl_c(cancel: CancellationToken) -> std::io::Result<()> {
    let mut interrupts = Interrupts::listen()?;
    tokio::spawn(async move {
        if !interrupts.next().await {
            return;
        }
        cancel.cancel();
        if std::io::stderr().is_terminal() {
            eprintln!("\ncancelling the run; press Ctrl-C again to exit at once");
        }
        if interrupts.next().await {
            std::process::exit(EXIT_INTERRUPTED);
        }
    });
    Ok(())
}

/// A random UUID (version 4), as Claude Code's session ids are.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    // Without randomness an id made of the time and process still tells runs apart.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}
