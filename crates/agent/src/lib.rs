//! What runs: the tool-set builder that assembles one registry for every face ([`tool_set`]),
//! the agent loop and compaction ([`agent_loop`], the crate `toolhost-loop` re-exported),
//! sub-agents and the session tools
//! ([`subagents`]), the session record, `chat`, the permission system's files (the JSON-lines
//! audit trail), the skill tools and the skill hub ([`skills`]) and the `slash_command` tool.
//! The configuration it runs with is `toolhost-config`'s; the definitions found on disk
//! (agents, skills, commands) are `toolhost-catalog`'s; the command hooks it installs are
//! `toolhost-hooks`'.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolhost_agent::Permissions;
//! use toolhost_config::ConfigSources;
//! use toolhost_core::ToolRegistry;
//! use toolhost_core::permission::NonInteractiveApprover;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let workspace = std::path::PathBuf::from("/work/project");
//! let config = toolhost_catalog::load_config(&ConfigSources {
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

pub mod assembly;
mod audit_file;
pub mod chat;
pub mod offered_registry;
mod permissions;
mod provider_connect;
pub mod session_record;
pub mod skills;
pub mod slash_command_tool;
pub mod subagents;
pub mod system_prompt;
pub mod tool_set;

/// The agent loop (a crate of its own: it needs nothing else of this one).
pub use toolhost_loop as agent_loop;

pub use audit_file::{AuditFileError, JsonLinesAudit};
pub use permissions::Permissions;
pub use toolhost_hooks::{PostToolUseHooks, PreToolUseHooks};
