//! `toolhost agents list | show NAME`: the agent definitions (`[agents.NAME]`, and the
//! Markdown files of `.toolhost/agents/`, `.claude/agents/` and `~`). Thin: the work is
//! `toolhost_agent::subagents::listing`.

use std::process::ExitCode;

use clap::Subcommand;
use toolhost_agent::subagents::listing;
use toolhost_config::Config;

use crate::EXIT_USAGE;

/// `toolhost agents …`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum AgentsCommand {
    /// List the agent definitions: name, where each is defined, description.
    List {
        /// Print a JSON array (for scripts) instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Show one definition in full: tools, model, permission mode, limits, prompt.
    Show {
        /// The agent's name.
        name: String,
    },
}

/// Runs the subcommand.
pub fn run(config: &Config, command: &AgentsCommand) -> ExitCode {
    match command {
        AgentsCommand::List { json: false } => {
            print!("{}", listing::render_list(config));
            ExitCode::SUCCESS
        }
        AgentsCommand::List { json: true } => {
            let agents: Vec<serde_json::Value> = listing::agent_definitions(config)
                .iter()
                .map(|agent| {
                    serde_json::json!({
                        "name": agent.name,
                        "origin": agent.origin,
                        "description": agent.description,
                    })
                })
                .collect();
            println!("{}", serde_json::Value::Array(agents));
            ExitCode::SUCCESS
        }
        AgentsCommand::Show { name } => match listing::agent_definition(config, name) {
            Ok(agent) => {
                print!("{}", listing::render_definition(&agent));
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::from(EXIT_USAGE)
            }
        },
    }
}
