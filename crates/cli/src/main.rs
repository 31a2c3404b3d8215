//! The `toolhost` command: list and call tools through the one pipeline.

mod approval;
mod commands;
mod exit;
mod interrupts;
mod logging;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, Parser, Subcommand};
use toolhost_agent::Permissions;
use toolhost_agent::tool_set::{ToolSet, ToolSetBuilder, custom_tool_sources};
use toolhost_config::{ConfigSources, MAIN_AGENT, Overrides};
use toolhost_core::permission::{Approver, NonInteractiveApprover, PermissionMode};

/// The version `--version` prints: the package's, and the commit it was built from when the
/// build could ask git (`build.rs`).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("TOOLHOST_BUILD_COMMIT"));

/// The tool system for LLM agents: list, call and serve sandboxed tools.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version = VERSION, about)]
struct Cli {
    /// The workspace the tools work in (default: the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// A configuration file (TOML) read after ~/.toolhost/config.toml,
    /// .toolhost/config.toml and .toolhost/config.local.toml.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The permission mode: default, acceptEdits, plan or bypassPermissions.
    #[arg(long, global = true, value_name = "MODE")]
    mode: Option<PermissionMode>,
    /// Allow calls matching a rule without asking, e.g. 'Bash(git status:*)' (repeatable).
    #[arg(long, global = true, value_name = "RULE")]
    allow: Vec<String>,
    /// Refuse calls matching a rule, e.g. 'Bash(rm:*)' (repeatable).
    #[arg(long, global = true, value_name = "RULE")]
    deny: Vec<String>,
    /// The agent whose tools and MCP servers to use (`[agents.NAME]` in the configuration).
    #[arg(long, global = true, value_name = "NAME", default_value = MAIN_AGENT)]
    agent: String,
    #[command(subcommand)]
    command: Command,
}

// `defer`: each command's arguments are made only for the command that was given (and for
// help), not for every command at every start. The `Args` structs have no doc comment for that
// reason: clap adds a struct's doc comment with its arguments, over the command's own about.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// List the tools in the registry.
    Tools(commands::tools::ToolsArgs),
    /// Run one tool call through the full pipeline and print its result.
    Call(commands::call::CallArgs),
    /// Inspect the configuration.
    #[command(subcommand)]
    Config(commands::config::ConfigCommand),
    /// Report what this machine and workspace support (sandbox, shell, temp folder, tools).
    Doctor,
    /// Serve the registry as an MCP server (stdio by default, or Streamable HTTP).
    Serve(commands::serve::ServeArgs),
    /// Run the agent on one prompt, headless: the answer on stdout (or JSON events).
    Run(commands::run::RunArgs),
    /// An interactive session with the agent in the terminal (line mode).
    Chat(commands::chat::ChatArgs),
    /// The configured MCP servers: list, get, add, remove, test.
    #[command(subcommand)]
    Mcp(commands::mcp::McpCommand),
    /// The stored sessions: list, show, export, rm, search (the store: $TOOLHOST_SESSIONS_DB,
    /// else [sessions] path, else ~/.toolhost/sessions.db).
    #[command(subcommand)]
    Sessions(commands::sessions::SessionsCommand),
    /// Skills: search the hubs, install, list, remove.
    #[command(subcommand)]
    Skills(commands::skills::SkillsCommand),
    /// The agent definitions (sub-agents): list, show.
    #[command(subcommand)]
    Agents(commands::agents::AgentsCommand),
    /// Serve the agent to an editor over the Agent Client Protocol (JSON-RPC on stdio), for
    /// Zed, JetBrains IDEs and Neovim.
    Acp(commands::acp::AcpArgs),
    /// Set up the workspace: a commented .toolhost/config.toml and, if absent, an AGENTS.md.
    Init,
    /// Print the shell completion script (bash, zsh, fish, powershell, elvish).
    Completion(commands::completion::CompletionArgs),
    /// Claude Code plugins: list, install, remove, approve, marketplace.
    #[command(subcommand)]
    Plugins(commands::plugins::PluginsCommand),
}

pub(crate) use exit::EXIT_USAGE;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init();
    match run(cli) {
        Ok(code) => code,
        // The reader of stdout went away (`toolhost call … | head`): nothing to report to it.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => exit::report(&error),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // Neither reads the configuration: a broken one must not stop them.
    let command = match cli.command {
        Command::Completion(args) => return commands::completion::run(&args, Cli::command()),
        Command::Init => {
            let workspace = match &cli.workspace {
                Some(dir) => dir.clone(),
                None => std::env::current_dir()?,
            };
            return commands::init::run(&workspace);
        }
        command => command,
    };
    let workspace = match cli.workspace {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let overrides = Overrides {
        mode: cli.mode,
        allow: cli.allow,
        deny: cli.deny,
    };
    // Each ACP session loads the configuration of the editor's folder: nothing to load here,
    // and `initialize` is answered sooner.
    if let Command::Acp(args) = command {
        return commands::acp::run(
            &workspace,
            cli.config.as_deref(),
            overrides,
            &cli.agent,
            args,
        );
    }
    let mut config = toolhost_catalog::load_config(&ConfigSources {
        home: std::env::var_os("HOME").map(PathBuf::from),
        workspace: workspace.clone(),
        extra_file: cli.config,
        overrides,
    })?;
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    toolhost_mcp::client::oauth::store::choose(config.mcp_oauth_store);
    // `--agent NAME` runs in its definition's permissionMode unless `--mode` names one: the
    // user chose that agent, as with Claude Code's `--agent`.
    if cli.mode.is_none()
        && let Ok(agent) = config.agent(&cli.agent)
        && let Some(mode) = agent.permission_mode
    {
        config.permissions.mode = mode;
    }
    // A one-shot call has read nothing: it checks reads before writes only when asked.
    if let Command::Call(args) = &command {
        config.tools.read_before_write = Some(args.read_before_write);
    }
    // Each command builds what it needs: `serve` its own registry (whose approver asks MCP
    // clients) and runtime; `config` no registry at all.
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    let agent = || config.agent(&cli.agent);
    // `prefetch`: the command lists every tool, so the agent and command files are read on
    // threads of their own while the rest is built.
    let registry_on =
        |runtime: &tokio::runtime::Runtime, approver: Arc<dyn Approver>, prefetch: bool| {
            let agent = agent()?;
            let permissions = Permissions::from_config(&config, &workspace, approver)?;
            let mut builder = ToolSetBuilder::new(&workspace, &config, &agent, &permissions);
            if prefetch {
                config.agents.prefetch();
                builder = builder.prefetch_catalog();
            }
            let ToolSet {
                registry,
                custom,
                mcp,
                ..
            } = runtime.block_on(builder.build())?;
            anyhow::Ok((permissions, registry, custom, mcp))
        };
    let refusing = || -> Arc<dyn Approver> { Arc::new(NonInteractiveApprover::refusing()) };
    match command {
        // The model sees the registry of the mode (plan: read-only tools); a direct call goes
        // to the whole registry so that the policy can say why a tool is refused.
        Command::Tools(args) => {
            let runtime = runtime()?;
            let (permissions, registry, custom, mcp) = registry_on(&runtime, refusing(), true)?;
            let mut sources = custom_tool_sources(&custom);
            sources.extend(mcp.tools().iter().map(|tool| {
                let source = PathBuf::from(format!("mcp server {}", tool.server_name()));
                (toolhost_core::Tool::spec(tool.as_ref()).name, source)
            }));
            commands::tools::run(&registry.for_mode(permissions.mode()), &sources, &args)
        }
        Command::Call(args) => {
            let agent = agent()?;
            // One call: a runtime on this thread, without the worker threads a session needs
            // (their start is a tenth of a small call's whole process).
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let approver = approval::approver_for_call(args.yes, args.reads_stdin());
            let (_, registry, _, _mcp) = registry_on(&runtime, approver, false)?;
            // The registry holds only what the agent is offered.
            if agent.allowed_tools.is_some() && !registry.has(args.tool()) {
                return Ok(commands::call::refuse_not_offered(&agent, args.tool()));
            }
            runtime.block_on(commands::call::run(&registry, args))
        }
        Command::Config(command) => Ok(commands::config::run(&config, &command)),
        Command::Agents(command) => Ok(commands::agents::run(&config, &command)),
        Command::Doctor => {
            let runtime = runtime()?;
            let (_, registry, _, mcp) = registry_on(&runtime, refusing(), true)?;
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let done = runtime.block_on(commands::doctor::run(
                &workspace,
                home.as_deref(),
                &config,
                &registry,
                &mcp,
            ));
            runtime.block_on(mcp.shutdown());
            done
        }
        Command::Run(args) => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            commands::run::run(&workspace, home.as_deref(), &config, &agent()?, args)
        }
        Command::Chat(args) => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            commands::chat::run(&workspace, home.as_deref(), &config, &agent()?, args)
        }
        Command::Sessions(command) => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            commands::sessions::run(&workspace, home.as_deref(), &config, command)
        }
        Command::Serve(args) => commands::serve::run(&workspace, &config, &agent()?, args),
        Command::Acp(_) => unreachable!("answered above"),
        Command::Mcp(command) => {
            runtime()?.block_on(commands::mcp::run(&workspace, &config, &agent()?, command))
        }
        Command::Plugins(command) => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            commands::plugins::run(home.as_deref(), &config, command)
        }
        Command::Skills(command) => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            runtime()?.block_on(commands::skills::run(
                &workspace,
                home.as_deref(),
                &config,
                command,
            ))
        }
        // Handled above, before the configuration was read.
        Command::Completion(_) | Command::Init => Ok(ExitCode::SUCCESS),
    }
}
