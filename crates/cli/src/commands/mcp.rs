//! `toolhost mcp`: the configured MCP servers — list, show, add, remove, test. `list` also
//! shows the agents' direct servers (`[agents.NAME.direct_mcp_servers.ID]`); `get` and `test`
//! find the direct servers of the agent that `--agent NAME` names before the user servers.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use toolhost_config::workspace_config_paths;
use toolhost_config::{AgentConfig, Config};
use toolhost_core::Tool as _;
use toolhost_mcp::{McpClients, McpServerConfig, McpTransport};

use super::mcp_login::LoginArgs;

/// `toolhost mcp …`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum McpCommand {
    /// List the configured servers, the agents' direct servers included.
    List {
        /// Print a JSON array (for scripts) instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Show one server's configuration (`--agent NAME`: one of that agent's direct servers).
    Get {
        /// The server's name.
        name: String,
    },
    /// Add a server to the workspace's .toolhost/config.toml (keeping the rest of the file):
    /// `toolhost mcp add NAME -- COMMAND ARGS…` or `toolhost mcp add NAME --url URL`.
    Add(AddArgs),
    /// Remove a server from the workspace's .toolhost/config.toml.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Start one server (even a disabled one), list its tools and stop it (`--agent NAME`:
    /// one of that agent's direct servers).
    Test {
        /// The server's name.
        name: String,
    },
    /// Log in to a remote server with OAuth (a browser, or `--no-browser` to paste the
    /// redirect back); the tokens are kept in the OS keyring or ~/.toolhost/mcp-oauth.json, as
    /// `mcp_oauth_store` says.
    Login(LoginArgs),
    /// Delete the OAuth tokens of a remote server.
    Logout {
        /// The server's name.
        name: String,
    },
}

// Arguments of `toolhost mcp add` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The server's name; its tools are named `mcp__NAME__TOOL`.
    name: String,
    /// The URL of a Streamable HTTP server (instead of a command).
    #[arg(long, conflicts_with = "command")]
    url: Option<String>,
    /// The environment variable holding a bearer token for `--url`.
    #[arg(long, value_name = "VAR", requires = "url")]
    bearer_token_env: Option<String>,
    /// An environment variable for a stdio server, `KEY=VALUE` (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// The longest one call may run, in seconds (default 300).
    #[arg(long, value_name = "SECONDS")]
    tool_timeout: Option<u64>,
    /// Stop toolhost when this server fails to start.
    #[arg(long)]
    required: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs one `toolhost mcp` command.
pub async fn run(
    workspace: &Path,
    config: &Config,
    agent: &AgentConfig,
    command: McpCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List { json } => {
            let direct = config
                .agents
                .values()
                .flat_map(|agent| {
                    agent
                        .direct_mcp_servers
                        .values()
                        .map(|server| (Some(agent.name.as_str()), server))
                })
                .collect::<Vec<_>>();
            if json {
                let user = config.mcp_servers.values().map(|server| (None, server));
                let servers: Vec<serde_json::Value> = user
                    .chain(direct)
                    .map(|(owner, server)| {
                        serde_json::json!({
                            "name": server.name,
                            "agent": owner,
                            "type": server.transport.kind(),
                            "target": target(&server.transport),
                            "enabled": server.enabled,
                            "origin": server.origin,
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(servers));
                return Ok(ExitCode::SUCCESS);
            }
            if config.mcp_servers.is_empty() && direct.is_empty() {
                println!(
                    "No MCP servers are configured. Add one with `toolhost mcp add NAME -- COMMAND ARGS…`."
                );
            }
            let user = config.mcp_servers.values().map(|server| (None, server));
            for (owner, server) in user.chain(direct) {
                let mut state = if server.enabled { "" } else { "  (disabled)" }.to_owned();
                if let Some(auth) = super::mcp_login::auth_state(server).await {
                    state.push_str(&format!("  [{auth}]"));
                }
                let owner = owner
                    .map(|agent| format!(" (agent {agent})"))
                    .unwrap_or_default();
                println!(
                    "{}{owner}  {}  {}{state}  # {}",
                    server.name,
                    server.transport.kind(),
                    target(&server.transport),
                    server.origin
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Get { name } => {
            let server = find(config, agent, &name)?;
            println!("name: {}\norigin: {}", server.name, server.origin);
            println!(
                "type: {}\ntarget: {}",
                server.transport.kind(),
                target(&server.transport)
            );
            if let McpTransport::Stdio { env, cwd, .. } = &server.transport {
                let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                println!("env: {}", keys.join(", "));
                if let Some(cwd) = cwd {
                    println!("cwd: {}", cwd.display());
                }
            }
            if let Some(helper) = &server.headers_helper {
                println!("headersHelper: {helper}");
            }
            println!(
                "enabled: {}\nrequired: {}\nstartup_timeout: {}s\ntool_timeout: {}s",
                server.enabled,
                server.required,
                server.startup_timeout.as_secs(),
                server.tool_timeout.as_secs()
            );
            if let Some(tools) = &server.enabled_tools {
                println!("enabled_tools: {}", tools.join(", "));
            }
            if !server.disabled_tools.is_empty() {
                println!("disabled_tools: {}", server.disabled_tools.join(", "));
            }
            if let Some(problem) = &server.problem {
                println!("problem: {problem}");
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Login(args) => {
            let server = find(config, agent, args.name())?.clone();
            super::mcp_login::run_login(&server, args).await
        }
        McpCommand::Logout { name } => {
            super::mcp_login::run_logout(find(config, agent, &name)?).await
        }
        McpCommand::Add(args) => add(&config_file(workspace), args),
        McpCommand::Remove { name } => remove(&config_file(workspace), config, &name),
        McpCommand::Test { name } => {
            let mut server = find(config, agent, &name)?.clone();
            server.enabled = true;
            let (clients, report) = McpClients::start([server], workspace).await;
            let code = if let Some(failure) = report.failures.first() {
                eprintln!("{failure}");
                ExitCode::FAILURE
            } else {
                let tools = clients.tools();
                println!("{name}: started, {} tools", tools.len());
                for tool in tools {
                    println!("  {}  ({})", tool.spec().name, tool.original_name());
                }
                ExitCode::SUCCESS
            };
            clients.shutdown().await;
            Ok(code)
        }
    }
}

/// The direct server `name` of `agent`, else the user server `name`.
fn find<'a>(
    config: &'a Config,
    agent: &'a AgentConfig,
    name: &str,
) -> anyhow::Result<&'a McpServerConfig> {
    if let Some(server) = agent
        .direct_mcp_servers
        .get(name)
        .or_else(|| config.mcp_servers.get(name))
    {
        return Ok(server);
    }
    let owners: Vec<String> = config
        .agents
        .values()
        .filter(|other| other.direct_mcp_servers.contains_key(name))
        .map(|other| format!("--agent {}", other.name))
        .collect();
    if !owners.is_empty() {
        return Err(crate::exit::usage(format!(
            "'{name}' is a direct MCP server of another agent: add {}",
            owners.join(" or ")
        )));
    }
    let known: Vec<&str> = config
        .mcp_servers
        .keys()
        .chain(agent.direct_mcp_servers.keys())
        .map(String::as_str)
        .collect();
    Err(crate::exit::usage(format!(
        "no MCP server is named '{name}' (configured: {}); see `toolhost mcp list`",
        if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        }
    )))
}

fn target(transport: &McpTransport) -> String {
    match transport {
        McpTransport::Stdio { command, args, .. } => std::iter::once(command)
            .chain(args)
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        McpTransport::Http { url, .. } | McpTransport::Sse { url, .. } => url.clone(),
        McpTransport::InProcess => "(in process)".to_owned(),
    }
}

fn config_file(workspace: &Path) -> PathBuf {
    let [project, _] = workspace_config_paths(workspace);
    project
}

fn read_document(path: &Path) -> anyhow::Result<toml_edit::DocumentMut> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    };
    text.parse()
        .with_context(|| format!("{} is not valid TOML", path.display()))
}

fn add(path: &Path, args: AddArgs) -> anyhow::Result<ExitCode> {
    let mut document = read_document(path)?;
    let servers = document
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .context("mcp_servers in the config file is not a table")?;
    if servers.contains_key(&args.name) {
        return Err(crate::exit::usage(format!(
            "{} already has [mcp_servers.{}]; remove it first with `toolhost mcp remove {}`",
            path.display(),
            args.name,
            args.name
        )));
    }
    let mut table = toml_edit::Table::new();
    match (&args.url, args.command.split_first()) {
        (Some(url), _) => {
            table.insert("url", toml_edit::value(url.as_str()));
            if let Some(variable) = &args.bearer_token_env {
                table.insert("bearer_token_env", toml_edit::value(variable.as_str()));
            }
        }
        (None, Some((command, rest))) => {
            table.insert("command", toml_edit::value(command.as_str()));
            let list: toml_edit::Array = rest.iter().map(String::as_str).collect();
            table.insert("args", toml_edit::value(list));
            if !args.env.is_empty() {
                let mut env = toml_edit::InlineTable::new();
                for pair in &args.env {
                    let (key, value) = pair.split_once('=').ok_or_else(|| {
                        crate::exit::usage(format!("--env {pair}: write KEY=VALUE"))
                    })?;
                    env.insert(key, value.into());
                }
                table.insert("env", toml_edit::value(env));
            }
        }
        (None, None) => {
            return Err(crate::exit::usage(format!(
                "give the server's command after `--` (toolhost mcp add {} -- npx -y some-server) \
             or its --url",
                args.name
            )));
        }
    }
    if let Some(seconds) = args.tool_timeout {
        table.insert("tool_timeout", toml_edit::value(i64::try_from(seconds)?));
    }
    if args.required {
        table.insert("required", toml_edit::value(true));
    }
    servers.insert(&args.name, toml_edit::Item::Table(table));
    write(path, &document.to_string())?;
    println!("Added the MCP server '{}' to {}", args.name, path.display());
    Ok(ExitCode::SUCCESS)
}

fn remove(path: &Path, config: &Config, name: &str) -> anyhow::Result<ExitCode> {
    let mut document = read_document(path)?;
    let removed = document
        .get_mut("mcp_servers")
        .and_then(toml_edit::Item::as_table_mut)
        .and_then(|servers| servers.remove(name))
        .is_some();
    if !removed {
        let elsewhere = config
            .mcp_servers
            .get(name)
            .map(|server| format!("; it is configured in {}, edit that file", server.origin))
            .unwrap_or_default();
        return Err(crate::exit::usage(format!(
            "{} has no [mcp_servers.{name}]{elsewhere}",
            path.display()
        )));
    }
    write(path, &document.to_string())?;
    println!("Removed the MCP server '{name}' from {}", path.display());
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .with_context(|| format!("cannot write {}", path.display()))
}
