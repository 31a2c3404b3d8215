//! The `toolhost` command: list and call tools through the one pipeline.

mod commands;
mod config;
mod registry;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The tool system for LLM agents: list, call and serve sandboxed tools.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about)]
struct Cli {
    /// The workspace the tools work in (default: the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// A configuration file (TOML) to read.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tools in the registry.
    Tools(commands::tools::ToolsArgs),
    /// Run one tool call through the full pipeline and print its result.
    Call(commands::call::CallArgs),
    /// Report what this machine and workspace support (sandbox, shell, temp folder, tools).
    Doctor,
    /// Serve the registry as an MCP server (stdio by default, or Streamable HTTP).
    Serve(commands::serve::ServeArgs),
}

/// Exit status for a usage error (bad flags, arguments that are not JSON, a bad config).
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let workspace = match cli.workspace {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let config = config::Config::load(cli.config.as_deref())?;
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    // `serve` builds its own registry, with the authorizer that asks MCP clients, and its own
    // runtime.
    let build_registry = || registry::build_registry(&workspace, &config);
    match cli.command {
        Command::Tools(args) => commands::tools::run(&build_registry()?, &args),
        Command::Call(args) => runtime()?.block_on(commands::call::run(&build_registry()?, args)),
        Command::Doctor => {
            runtime()?.block_on(commands::doctor::run(&workspace, &build_registry()?))
        }
        Command::Serve(args) => commands::serve::run(&workspace, &config, args),
    }
}

/// Logs go to stderr, so stdout carries only results and MCP messages.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
