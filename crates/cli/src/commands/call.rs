//! `toolhost call`: one call through the full pipeline, its result on stdout.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use serde_json::Value;
use toolhost_config::AgentConfig;
use toolhost_core::{CallOptions, ContentBlock, ToolRegistry, ToolUpdate};

use crate::interrupts::Interrupts;

// Arguments of `toolhost call` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call.
    tool: String,
    /// The arguments as a JSON object, or `-` to read them from standard input (default `{}`).
    #[arg(value_name = "ARGS_JSON | -")]
    args: Option<String>,
    /// Print the whole result (content, details, is_error, truncated, duration) as JSON.
    #[arg(long)]
    json: bool,
    /// Answer yes to every confirmation (deny rules and the shell deny list still refuse).
    #[arg(long)]
    pub yes: bool,
    /// Refuse, as every session does, to let Write replace an existing file that was not read
    /// first (one call has read nothing) or Edit change a file changed since it was read.
    /// Off for a one-shot call unless given.
    #[arg(long)]
    pub read_before_write: bool,
}

impl CallArgs {
    /// The tool to call.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Whether the arguments come from standard input (which then cannot answer prompts).
    pub fn reads_stdin(&self) -> bool {
        self.args.as_deref() == Some("-")
    }
}

/// Runs the call; exit status 0 on success, 1 when the result is an error.
pub async fn run(registry: &ToolRegistry, args: CallArgs) -> anyhow::Result<ExitCode> {
    let arguments = parse_arguments(args.args.as_deref())?;
    let options = CallOptions::default();
    let cancel = options.cancel.clone();
    let interrupted = cancel.clone();
    let mut interrupts = Interrupts::listen()?;
    tokio::spawn(async move {
        if interrupts.next().await {
            cancel.cancel();
        }
    });
    let options = if !args.json && std::io::stderr().is_terminal() {
        CallOptions {
            on_update: Some(Arc::new(print_update)),
            ..options
        }
    } else {
        options
    };
    let result = registry
        .execute_with("cli-call", &args.tool, arguments, options)
        .await;

    let output = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&result)?)
    } else {
        let text = render_content(&result.content);
        if result.is_error {
            eprintln!("{text}");
            String::new()
        } else if text.ends_with('\n') {
            text
        } else {
            text + "\n"
        }
    };
    // `write!`, not `print!`, which panics when the reader stops early (`| head`); the exit
    // status still says whether the call failed.
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => return Err(error.into()),
        _ => {}
    }
    // A call Ctrl-C cancelled was interrupted, whatever the tool made of its cancellation.
    if interrupted.is_cancelled() {
        return Err(crate::exit::Interrupted.into());
    }
    Ok(if result.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Says on stderr that `agent` is not offered `tool` (its `allowed_tools` leave it out) and
/// what to do instead; exit status 1, as for any refused call.
pub fn refuse_not_offered(agent: &AgentConfig, tool: &str) -> ExitCode {
    let allowed: Vec<&str> = agent
        .allowed_tools
        .iter()
        .flat_map(|selection| selection.rules())
        .map(|rule| rule.as_str())
        .collect();
    eprintln!(
        "The agent '{}' is not offered the tool '{tool}': its allowed_tools are {}. Call it as \
         another agent (--agent NAME) or add it to agents.{}.allowed_tools.",
        agent.name,
        allowed.join(", "),
        agent.name
    );
    ExitCode::FAILURE
}

fn parse_arguments(raw: Option<&str>) -> anyhow::Result<Value> {
    let text = match raw {
        None => return Ok(Value::Object(serde_json::Map::new())),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the arguments from standard input")?;
            text
        }
        Some(text) => text.to_owned(),
    };
    serde_json::from_str(&text).map_err(|error| {
        crate::exit::usage(format!(
            "the arguments are not valid JSON (expected an object such as \
             '{{\"path\": \"src\"}}'): {text}: {error}"
        ))
    })
}

fn render_content(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { data, mime_type } => {
                format!("[image {mime_type}, {} bytes of base64]", data.len())
            }
            ContentBlock::ToolReference { tool_name } => {
                toolhost_core::tool_reference_text(tool_name)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn print_update(update: ToolUpdate) {
    let mut stderr = std::io::stderr().lock();
    for block in &update.content {
        if let ContentBlock::Text { text } = block {
            let _ = stderr.write_all(text.as_bytes());
        }
    }
}
