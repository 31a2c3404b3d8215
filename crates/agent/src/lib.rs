//! What assembles toolhost around the core: layered configuration, the permission system's
//! files and processes (command hooks, the JSON-lines audit trail), the agent loop, skills
//! and the skill hub ([`skills`]), slash commands ([`slash_commands`]), sessions, and
//! sub-agents with the session tools ([`subagents`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolhost_agent::{Config, ConfigSources, Permissions};
//! use toolhost_core::ToolRegistry;
//! use toolhost_core::permission::NonInteractiveApprover;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = std::path::PathBuf::from("/work/project");
//! let config = Config::load(&ConfigSources {
//!     home: std::env::var_os("HOME").map(Into::into),
//!     workspace: workspace.clone(),
//!     ..ConfigSources::default()
//! })?;
//! let permissions =
//!     Permissions::from_config(&config, &workspace, Arc::new(NonInteractiveApprover::refusing()))?;
//! let registry = permissions.install(ToolRegistry::builder()).build();
//! let visible = registry.for_mode(permissions.mode()); // plan mode: read-only tools only
//! # drop(visible);
//! # Ok(())
//! # }
//! ```

pub mod agent_loop;
pub mod assembly;
mod audit_file;
pub mod chat;
pub mod config;
pub mod front_matter;
pub mod hooks;
pub mod model_choice;
mod permissions;
pub mod pricing;
mod provider_connect;
pub mod session_record;
pub mod sessions;
pub mod skills;
pub mod slash_commands;
pub mod subagents;
pub mod system_prompt;
pub mod tool_set;

pub use audit_file::{AuditFileError, JsonLinesAudit};
pub use config::{
    AgentConfig, Config, ConfigError, ConfigSources, CustomToolsConfig, DEFAULT_HOOK_TIMEOUT,
    HookCommand, HooksConfig, Limits, MAIN_AGENT, Overrides, PermissionsConfig, SessionsConfig,
    ShellConfig, SkillsConfig, SubagentsConfig, UnknownAgent,
};
pub use hooks::{PostToolUseHooks, PreToolUseHooks};
pub use permissions::Permissions;
