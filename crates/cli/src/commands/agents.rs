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
    List,
    /// Show one definition in full: tools, model, permission mode, limits, prompt.
    Show {
        /// The agent's name.
        name: String,
    },
}

/// Runs the subcommand.
pub fn run(config: &Config, command: &AgentsCommand) -> ExitCode {
    match command {
        AgentsCommand::List => {
            print!("{}", listing::render_list(config));
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
