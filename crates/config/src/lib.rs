//! The configuration of toolhost: TOML layers merged into one [`Config`], remembering where
//! each value came from, every settings struct with its defaults, and `config show`
//! ([`Config::show`]). It depends on `toolhost-core` alone and knows nothing of the loop, the
//! hub or a hook runner; the runtime crates take their settings types from here
//! ([`McpServerConfig`], [`ShellSandbox`], [`SearchProvider`], [`Api`]) and so do the
//! defaults `config show` prints.
//!
//! Layers, later wins for single values and lists concatenate:
//!
//! 1. `~/.toolhost/config.toml` (the user's; `$HOME` decides where `~` is),
//! 2. `<workspace>/.toolhost/config.toml` (the project's, committed),
//! 3. `<workspace>/.toolhost/config.local.toml` (the project's, personal),
//! 4. the file given with `--config`,
//! 5. command-line flags (`--mode`, `--allow`, `--deny`).
//!
//! `[agents.NAME]` defines agents: the tools each is offered and the MCP servers it sees
//! ([`AgentConfig`]); so do Markdown files in `.toolhost/agents/`, `.claude/agents/` and their
//! folders under `~`, which the catalogue reads (`toolhost_catalog::load_config`, what every
//! command uses, adds them to [`Config::load_layers`]). `[subagents]` bounds how deep sub-agents nest and how
//! many run at once ([`SubagentsConfig`]).
//!
//! `[web]` and `[web.search]` configure WebFetch (limits, cache, summary model, fixed host
//! entries) and WebSearch's service ([`WebConfig`]).
//!
//! MCP servers also come from Claude Code's `<workspace>/.mcp.json`, read before the TOML
//! layers. The top-level `mcp_oauth_store` says where OAuth logins keep their tokens
//! ([`McpOAuthStore`]).
//!
//! A file that does not parse, an unknown key, a bad rule, mode or hook matcher stops the
//! command with a [`ConfigError`] naming the file, the line and the problem.

mod agent_set;
mod agents;
pub mod claude_settings;
pub mod claude_tools;
pub mod effort;
pub mod keys;
mod load;
pub mod local_rules;
mod mcp;
pub mod mcp_server;
pub mod model_choice;
pub mod plugins;
pub mod prefetch;
pub mod pricing;
pub mod providers;
pub mod shell;
mod show;
mod toml_hooks;
pub mod web;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;
use toolhost_core::permission::{PermissionMode, RuleSet};

pub use agent_set::{AgentFileReader, Agents};
pub use agents::{
    AgentConfig, Isolation, MAIN_AGENT, UnknownAgent, check_agent_servers, whole_tool_rule,
};
pub use effort::ReasoningEffort;
pub use load::{ConfigSources, Overrides, user_config_path, workspace_config_paths};
pub use mcp::{CLAUDE_MCP_JSON, ClaudeServers, Lookup, claude_mcp_json, claude_mcp_server};
pub use mcp_server::{McpOAuth, McpOAuthGrant, McpOAuthStore, McpServerConfig, McpTransport};
pub use providers::{
    AgentSettings, Api, CONVENTIONAL_PROVIDERS, ProviderEntry, ProviderTimeouts, Temperature,
    check_base_url,
};
pub use shell::{ShellConfig, ShellSandbox};
pub use web::{SearchProvider, WebConfig, WebSearchConfig};

/// How long a hook may run when its `timeout` does not say (R42).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The merged configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `[limits]`.
    pub limits: Limits,
    /// `[permissions]`.
    pub permissions: PermissionsConfig,
    /// `[[hooks.PreToolUse]]`, `[[hooks.PostToolUse]]` and `[[hooks.PreCompact]]`.
    pub hooks: HooksConfig,
    /// `[shell]`: the Bash tool's limits and sandbox.
    pub shell: ShellConfig,
    /// `[custom_tools]`: where to find JavaScript/TypeScript tools, and their limits.
    pub custom_tools: CustomToolsConfig,
    /// `mcp_oauth_store` (top level): where `toolhost mcp login` keeps OAuth tokens.
    pub mcp_oauth_store: McpOAuthStore,
    /// `[mcp_servers.NAME]` and the servers of Claude Code's `.mcp.json`, by name (a later
    /// layer's entry replaces an earlier one of the same name).
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[agents.NAME]` by name (a later layer's entry replaces an earlier one), then the
    /// agents of Markdown files, read when first asked for; see [`Config::agent`] for the
    /// implicit `main`.
    pub agents: Agents,
    /// `[providers.NAME]`, by name (a later layer's entry replaces an earlier one).
    pub providers: BTreeMap<String, ProviderEntry>,
    /// `[agent]`: the provider, model and iteration limit of runs.
    pub agent_settings: AgentSettings,
    /// `[web]` and `[web.search]`: WebFetch's limits, cache and summary model, WebSearch's
    /// service.
    pub web: WebConfig,
    /// `[sessions]`: where the session store is.
    pub sessions: SessionsConfig,
    /// `[skills]`: the skill hubs and the limits of installs.
    pub skills: SkillsConfig,
    /// `[tools]`: when tool definitions are deferred behind `tool_search`.
    pub tools: ToolsConfig,
    /// `[subagents]`: how deep sub-agents nest and how many run at once.
    pub subagents: SubagentsConfig,
    /// `[plugins]`: plugin folders named in the configuration, and the plugins loaded (Claude
    /// Code's installed ones, toolhost's, those folders).
    pub plugins: plugins::PluginsConfig,
    /// `[todo]`: when the model is reminded of its open todo list.
    pub todo: TodoConfig,
    /// The `env` of Claude Code's settings files (a later file wins for one name): variables
    /// the processes toolhost starts for the user get, as in Claude Code — Bash's commands (through
    /// [`ShellConfig::env`], where `[shell.env]` wins), stdio MCP servers (their own `env`
    /// wins) and command hooks. [`Config::spread_settings_env`] hands them out.
    pub settings_env: BTreeMap<String, String>,
    /// Where each single value came from (`permissions.mode` → `--mode`), for `config show`.
    sources: BTreeMap<&'static str, String>,
    /// The files that were read, in order.
    files: Vec<PathBuf>,
    /// What was left out and why (a Claude Code file or entry that does not load).
    warnings: Vec<String>,
}

impl Config {
    /// Where the value at `key` (`limits.max_result_chars`, `permissions.mode`,
    /// `permissions.audit_log`) came from, when it was set.
    pub fn source_of(&self, key: &str) -> Option<&str> {
        self.sources.get(key).map(String::as_str)
    }

    /// The files that were read, in the order they were merged.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// What was found but left out, each naming its file and line and what to change: one
    /// file or entry that does not load never stops a command.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Records that something found was left out, and why.
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// The merged configuration as TOML, each value followed by where it came from.
    pub fn show(&self) -> String {
        show::render(self)
    }

    /// Gives [`Config::settings_env`] to every stdio MCP server (the user's and each agent's
    /// own, a server's own `env` winning) and every command hook (the agents' too); call it
    /// once everything is merged, so that servers and hooks found after the settings files
    /// (TOML layers, agent files, plugins) get it too.
    pub fn spread_settings_env(&mut self) {
        if self.settings_env.is_empty() {
            return;
        }
        let env = &self.settings_env;
        for server in self.mcp_servers.values_mut() {
            give_env_to_server(server, env);
        }
        give_env_to_hooks(&mut self.hooks, env);
        for agent in self.agents.tables_mut() {
            give_settings_env(agent, env);
        }
    }
}

/// Gives `env` (Claude Code's settings `env`) to `agent`'s own stdio MCP servers and its command
/// hooks, where they do not set a variable themselves.
pub fn give_settings_env(agent: &mut AgentConfig, env: &BTreeMap<String, String>) {
    for server in agent.direct_mcp_servers.values_mut() {
        give_env_to_server(server, env);
    }
    give_env_to_hooks(&mut agent.hooks, env);
}

fn give_env_to_server(server: &mut McpServerConfig, env: &BTreeMap<String, String>) {
    if let McpTransport::Stdio { env: own, .. } = &mut server.transport {
        for (name, value) in env {
            own.entry(name.clone()).or_insert_with(|| value.clone());
        }
    }
}

fn give_env_to_hooks(hooks: &mut HooksConfig, env: &BTreeMap<String, String>) {
    for hook in hooks
        .pre_tool_use
        .iter_mut()
        .chain(&mut hooks.post_tool_use)
        .chain(&mut hooks.pre_compact)
    {
        for (name, value) in env {
            hook.env
                .entry(name.clone())
                .or_insert_with(|| value.clone());
        }
    }
}

/// `[sessions]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionsConfig {
    /// `path`: the session store's file; relative paths are resolved against the workspace,
    /// `~/` against `$HOME`. `None`: `~/.toolhost/sessions.db` (see
    /// `toolhost_agent::sessions::store_path`, which [`SESSIONS_DB_ENV`] overrides).
    pub path: Option<PathBuf>,
}

/// The environment variable that names the session store's file, over `[sessions] path`.
pub const SESSIONS_DB_ENV: &str = "TOOLHOST_SESSIONS_DB";

/// `[tools]`: deferred tools (see [`toolhost_core::deferral`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolsConfig {
    /// `defer_threshold`: past this many tokens of tool definitions (estimated), the tools
    /// that are neither built in nor always-loaded are deferred. `None`: a tenth of the
    /// model's context window.
    pub defer_threshold: Option<u64>,
    /// `always_loaded`: tools never deferred, by exact name or `mcp__SERVER`. Lists
    /// concatenate across files.
    pub always_loaded: Vec<String>,
    /// `read_before_write`: Write and Edit refuse a file the session has not read as it is on
    /// disk now (R47). `None`: on.
    pub read_before_write: Option<bool>,
}

/// How many model turns without `TodoWrite` pass, while the todo list has open tasks, before
/// the model is reminded of it (`[todo] reminder_turns`).
pub const DEFAULT_TODO_REMINDER_TURNS: usize = 10;

/// `[todo]`: the reminder of the todo list (the `todo_reminder` session event).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TodoConfig {
    /// `reminder_turns`: turns without `TodoWrite` before a reminder; 0 turns it off. `None`:
    /// [`DEFAULT_TODO_REMINDER_TURNS`].
    pub reminder_turns: Option<usize>,
}

impl TodoConfig {
    /// The turns between reminders (0: none).
    pub fn reminder_turns(&self) -> usize {
        self.reminder_turns.unwrap_or(DEFAULT_TODO_REMINDER_TURNS)
    }
}

/// How deep sub-agents may nest when `[subagents] max_depth` does not say: a child may spawn
/// grandchildren, which may not spawn further.
pub const DEFAULT_MAX_DEPTH: usize = 2;

/// How many sub-agents may run at once (in the whole tree of one run) when `[subagents]
/// max_concurrent` does not say.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;

/// `[subagents]`: the limits of `spawn_agent` and `SessionsSpawn` (R42).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubagentsConfig {
    /// `max_depth`: a top-level agent's children are at depth 1; a spawn deeper than this is
    /// refused.
    pub max_depth: usize,
    /// `max_concurrent`: how many sub-agents may run at once; a spawn beyond it is refused.
    pub max_concurrent: usize,
}

impl Default for SubagentsConfig {
    fn default() -> Self {
        Self {
            max_depth: DEFAULT_MAX_DEPTH,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
        }
    }
}

/// Overrides of the named limits (R42).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Tool results longer than this many characters are truncated (default 50 000).
    pub max_result_chars: Option<usize>,
}

/// `[custom_tools]`: configured tool paths (R34's last source) and the limits of custom tools
/// (R41, R42). Unset limits keep the engine's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CustomToolsConfig {
    /// `paths`: files or folders of tools, as written; `~` expands and relative paths resolve
    /// from the workspace at discovery (R35). Lists concatenate across files.
    pub paths: Vec<String>,
    /// `call_timeout`: the longest one call may run (default 120 s).
    pub call_timeout: Option<Duration>,
    /// `load_timeout`: the longest loading one module may take (default 10 s).
    pub load_timeout: Option<Duration>,
    /// `memory_limit_mb`: heap per module, in MiB (default 64).
    pub memory_limit_mb: Option<usize>,
    /// `replace_builtins`: built-in tools that a custom tool or a pi extension's tool of the
    /// same name replaces (default none: such a tool is refused). Lists concatenate.
    pub replace_builtins: Vec<String>,
}

/// `[skills]`: the skill hubs (R27) and the limits of installing from them (R42). Unset limits
/// keep the hub's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillsConfig {
    /// `hubs`: the URLs (http or https) of hub indexes, searched in order. Lists concatenate
    /// across files.
    pub hubs: Vec<String>,
    /// `max_archive_bytes`: the largest archive downloaded (default 20 MiB).
    pub max_archive_bytes: Option<u64>,
    /// `max_unpacked_bytes`: the most an archive may unpack to (default 64 MiB).
    pub max_unpacked_bytes: Option<u64>,
    /// `max_entries`: the most files and folders an archive may hold (default 2000).
    pub max_entries: Option<usize>,
}

impl SkillsConfig {
    /// The hub's limits: its defaults with these overrides.
    pub fn hub_limits(&self) -> HubLimits {
        let defaults = HubLimits::default();
        HubLimits {
            max_archive_bytes: self.max_archive_bytes.unwrap_or(defaults.max_archive_bytes),
            max_unpacked_bytes: self
                .max_unpacked_bytes
                .unwrap_or(defaults.max_unpacked_bytes),
            max_entries: self.max_entries.unwrap_or(defaults.max_entries),
        }
    }
}

/// The largest archive downloaded, in bytes (`[skills] max_archive_bytes`).
pub const MAX_SKILL_ARCHIVE_BYTES: u64 = 20 * 1024 * 1024;
/// The most bytes an archive may unpack to (`[skills] max_unpacked_bytes`).
pub const MAX_SKILL_UNPACKED_BYTES: u64 = 64 * 1024 * 1024;
/// The most entries an archive may hold (`[skills] max_entries`).
pub const MAX_SKILL_ARCHIVE_ENTRIES: usize = 2000;

/// The hub's limits; defaults are the constants above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubLimits {
    /// See [`MAX_SKILL_ARCHIVE_BYTES`].
    pub max_archive_bytes: u64,
    /// See [`MAX_SKILL_UNPACKED_BYTES`].
    pub max_unpacked_bytes: u64,
    /// See [`MAX_SKILL_ARCHIVE_ENTRIES`].
    pub max_entries: usize,
}

impl Default for HubLimits {
    fn default() -> Self {
        Self {
            max_archive_bytes: MAX_SKILL_ARCHIVE_BYTES,
            max_unpacked_bytes: MAX_SKILL_UNPACKED_BYTES,
            max_entries: MAX_SKILL_ARCHIVE_ENTRIES,
        }
    }
}

/// `[permissions]`: mode, rules and the audit trail.
#[derive(Clone, Debug, Default)]
pub struct PermissionsConfig {
    /// Claude Code's `additionalDirectories`: folders the tools may read and write besides the
    /// workspace, resolved (`~/` against `$HOME`, relative against the workspace).
    pub additional_directories: Vec<PathBuf>,
    /// The mode (default `default`).
    pub mode: PermissionMode,
    /// The allow, ask and deny rules, each remembering its file and line (or flag).
    pub rules: RuleSet,
    /// The file that receives one JSON line per decision; relative paths are resolved against
    /// the workspace, `~/` against `$HOME`.
    pub audit_log: Option<PathBuf>,
}

/// The configured hooks.
#[derive(Clone, Debug, Default)]
pub struct HooksConfig {
    /// Run before the permission decision of every matching call.
    pub pre_tool_use: Vec<HookCommand>,
    /// Run after every matching call; may rewrite its result.
    pub post_tool_use: Vec<HookCommand>,
    /// Run before a conversation is compacted (`matcher`: `manual` or `auto`); may add
    /// instructions for the summary.
    pub pre_compact: Vec<HookCommand>,
}

/// One `[[hooks.PreToolUse]]`, `[[hooks.PostToolUse]]` or `[[hooks.PreCompact]]` entry.
#[derive(Clone, Debug)]
pub struct HookCommand {
    /// The matcher as written (`None`: every tool).
    pub matcher: Option<String>,
    /// The matcher compiled, anchored at both ends (`Edit|Write` matches those two tools).
    pub matcher_regex: Option<Regex>,
    /// The shell command line, run with `bash -c` in the workspace.
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// Where it was configured (`path:line`).
    pub origin: String,
    /// Variables its process gets besides the clean environment (Claude Code's settings
    /// `env`, see [`Config::settings_env`]).
    pub env: BTreeMap<String, String>,
}

impl HookCommand {
    /// Whether the hook runs for this tool.
    pub fn matches(&self, tool: &str) -> bool {
        self.matcher_regex
            .as_ref()
            .is_none_or(|regex| regex.is_match(tool))
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file exists but cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A file does not parse, has an unknown key, or holds a value that is not valid.
    #[error("invalid config file {path}:{} {message}", line.map(|line| format!(" line {line}:")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line of the problem, when known.
        line: Option<usize>,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// An agent's entry does not fit the merged configuration (an unknown server id).
    #[error("invalid config {origin}: {message}")]
    Agent {
        /// Where the entry was written (`path:line`).
        origin: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A command-line flag holds a value that is not valid.
    #[error("invalid {flag} '{value}': {message}")]
    Flag {
        /// The flag (`--allow`).
        flag: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        message: String,
    },
}
