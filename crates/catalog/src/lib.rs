//! What toolhost finds on disk and turns into definitions: YAML front matter
//! ([`front_matter`]), agent definitions in Markdown ([`agent_files`]), skills ([`skills`]) and
//! slash-command templates with their expansion ([`slash_commands`]).
//!
//! It runs nothing: no process, no HTTP, no model. The tools and runners that use these
//! definitions (the skill tools, the skill hub, `slash_command`, the hook runner) are the
//! agent's. A slash command's expansion calls tools only through the registry it is given.
//!
//! ```no_run
//! use toolhost_catalog::load_config;
//! use toolhost_config::ConfigSources;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = load_config(&ConfigSources {
//!     home: std::env::var_os("HOME").map(Into::into),
//!     workspace: "/work/project".into(),
//!     ..ConfigSources::default()
//! })?;
//! for (name, agent) in &config.agents {
//!     println!("{name}: {}", agent.description.as_deref().unwrap_or(""));
//! }
//! # Ok(())
//! # }
//! ```

pub mod agent_files;
mod agent_keys;
pub mod agent_reading;
pub mod front_matter;
pub mod plugins;
pub mod skills;
pub mod slash_commands;

pub use agent_files::{agent_folders, agent_from_file};
pub use agent_reading::AgentFileReading;

use toolhost_config::{Config, ConfigError, ConfigSources};

/// The whole configuration as a command sees it: every TOML layer with its flags
/// ([`Config::load_layers`]), the agents of the Markdown files beside the `[agents.NAME]` tables
/// and the Claude Code plugins' (read when an agent is first asked for, see
/// [`AgentFileReading`]), the plugins' hooks and servers ([`plugins::load_plugins`]), then
/// the tables' servers checked ([`Config::check_agents`]).
pub fn load_config(sources: &ConfigSources) -> Result<Config, ConfigError> {
    let mut config = Config::load_layers(sources)?;
    plugins::load_plugins(&mut config, &sources.workspace, sources.home.as_deref());
    config.check_agents()?;
    // Last: the servers and hooks of every file above get Claude Code's settings `env`.
    config.spread_settings_env();
    AgentFileReading::new(&config, &sources.workspace, sources.home.as_deref())
        .install(&mut config);
    Ok(config)
}
