//! `toolhost config show`: the merged configuration and where each value came from.

use std::process::ExitCode;

use clap::Subcommand;
use toolhost_config::Config;

/// What `toolhost config` does.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum ConfigCommand {
    /// Print the merged configuration (TOML), each value followed by the file and line or the
    /// flag it came from.
    Show,
}

/// Runs `toolhost config …`.
pub fn run(config: &Config, command: &ConfigCommand) -> ExitCode {
    match command {
        ConfigCommand::Show => print!("{}", config.show()),
    }
    ExitCode::SUCCESS
}
