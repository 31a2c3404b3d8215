//! Reading the configuration layers and merging them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::shell::ShellSandbox;
use serde::Deserialize;
use toml::Spanned;
use toolhost_core::permission::{PermissionMode, PermissionRule, RuleList};

use super::agents::{FileAgent, agent_config};
use super::mcp::{CLAUDE_MCP_JSON, FileMcpServer, claude_mcp_json, server_config};
use super::providers::{FileAgentSettings, FileProvider, agent_settings, provider_entry};
use super::toml_hooks::{FileHooks, add_file_hooks};
use super::web::FileWeb;
use super::{Config, ConfigError};

/// Where the configuration comes from.
#[derive(Clone, Debug, Default)]
pub struct ConfigSources {
    /// The user's home folder (`$HOME`); `None`: no user file.
    pub home: Option<PathBuf>,
    /// The workspace root.
    pub workspace: PathBuf,
    /// The file given with `--config` (must exist).
    pub extra_file: Option<PathBuf>,
    /// Command-line flags, applied last.
    pub overrides: Overrides,
}

/// Values given on the command line.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--mode`.
    pub mode: Option<PermissionMode>,
    /// `--allow RULE`, repeatable.
    pub allow: Vec<String>,
    /// `--deny RULE`, repeatable.
    pub deny: Vec<String>,
}

/// `~/.toolhost/config.toml`.
pub fn user_config_path(home: &Path) -> PathBuf {
    home.join(".toolhost").join("config.toml")
}

/// `.toolhost/config.toml` and `.toolhost/config.local.toml` in the workspace, in merge order.
pub fn workspace_config_paths(workspace: &Path) -> [PathBuf; 2] {
    let folder = workspace.join(".toolhost");
    [folder.join("config.toml"), folder.join("config.local.toml")]
}

/// What one file may set; every key is checked (`deny_unknown_fields`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct FileConfig {
    mcp_oauth_store: Option<Spanned<String>>,
    limits: FileLimits,
    permissions: FilePermissions,
    hooks: FileHooks,
    shell: FileShell,
    custom_tools: FileCustomTools,
    mcp_servers: BTreeMap<String, Spanned<FileMcpServer>>,
    agents: BTreeMap<String, Spanned<FileAgent>>,
    providers: BTreeMap<String, Spanned<FileProvider>>,
    agent: FileAgentSettings,
    web: FileWeb,
    sessions: FileSessions,
    skills: FileSkills,
    tools: FileTools,
    subagents: FileSubagents,
    plugins: FilePlugins,
    todo: FileTodo,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileTodo {
    reminder_turns: Option<Spanned<usize>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FilePlugins {
    paths: Vec<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileTools {
    defer_threshold: Option<Spanned<u64>>,
    always_loaded: Vec<String>,
    read_before_write: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileSubagents {
    max_depth: Option<Spanned<usize>>,
    max_concurrent: Option<Spanned<usize>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileSessions {
    path: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileSkills {
    hubs: Vec<Spanned<String>>,
    max_archive_bytes: Option<Spanned<u64>>,
    max_unpacked_bytes: Option<Spanned<u64>>,
    max_entries: Option<Spanned<usize>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileCustomTools {
    paths: Vec<String>,
    /// Seconds.
    call_timeout: Option<Spanned<u64>>,
    /// Seconds.
    load_timeout: Option<Spanned<u64>>,
    memory_limit_mb: Option<Spanned<usize>>,
    replace_builtins: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileShell {
    /// Seconds.
    exec_timeout: Option<Spanned<u64>>,
    /// Seconds.
    max_timeout: Option<Spanned<u64>>,
    max_output_bytes: Option<Spanned<usize>>,
    sandbox: Option<Spanned<String>>,
    network: Option<Spanned<bool>>,
    writable_roots: Vec<Spanned<String>>,
    env: BTreeMap<String, String>,
    editor_terminal: Option<Spanned<bool>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileLimits {
    max_result_chars: Option<Spanned<usize>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FilePermissions {
    mode: Option<Spanned<String>>,
    allow: Vec<Spanned<String>>,
    ask: Vec<Spanned<String>>,
    deny: Vec<Spanned<String>>,
    audit_log: Option<Spanned<String>>,
}

impl Config {
    /// Reads and merges every layer of `sources`, then checks that each agent's servers are
    /// configured. Agents defined in Markdown files are found by the catalogue
    /// (`toolhost_catalog::load_config`, what the commands use), which adds them between
    /// [`Config::load_layers`] and [`Config::check_agents`].
    pub fn load(sources: &ConfigSources) -> Result<Self, ConfigError> {
        let config = Self::load_layers(sources)?;
        config.check_agents()?;
        Ok(config)
    }

    /// Reads and merges every layer of `sources` (Claude Code's `.mcp.json`, the TOML files,
    /// the flags) without checking the agents.
    pub fn load_layers(sources: &ConfigSources) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        config.read_claude_mcp_json(&sources.workspace)?;
        config.read_claude_settings(sources);
        let mut layers: Vec<(PathBuf, bool)> = Vec::new();
        if let Some(home) = &sources.home {
            layers.push((user_config_path(home), false));
        }
        layers.extend(
            workspace_config_paths(&sources.workspace)
                .into_iter()
                .map(|path| (path, false)),
        );
        if let Some(extra) = &sources.extra_file {
            layers.push((extra.clone(), true));
        }
        for (path, required) in layers {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(error) if !required && error.kind() == std::io::ErrorKind::NotFound => {
                    continue;
                }
                Err(source) => return Err(ConfigError::Read { path, source }),
            };
            config.merge_file(&path, &text, sources)?;
            config.files.push(path);
        }
        config.web.cache_folder = sources
            .home
            .as_ref()
            .map(|home| home.join(".toolhost").join("cache").join("web"));
        config.apply_overrides(&sources.overrides)?;
        Ok(config)
    }

    fn merge_file(
        &mut self,
        path: &Path,
        text: &str,
        sources: &ConfigSources,
    ) -> Result<(), ConfigError> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let invalid = |offset: Option<usize>, message: String| ConfigError::Invalid {
            path: path.to_owned(),
            line: offset.map(line_of),
            message,
        };
        let origin = |offset: usize| format!("{}:{}", path.display(), line_of(offset));
        let file: FileConfig = toml::from_str(text).map_err(|error| {
            invalid(
                error.span().map(|span| span.start),
                error.message().to_owned(),
            )
        })?;

        if let Some(store) = file.mcp_oauth_store {
            self.mcp_oauth_store = store
                .get_ref()
                .parse()
                .map_err(|message| invalid(Some(store.span().start), message))?;
            self.sources
                .insert("mcp_oauth_store", origin(store.span().start));
        }
        if let Some(value) = file.tools.defer_threshold {
            self.tools.defer_threshold = Some(*value.get_ref());
            self.sources
                .insert("tools.defer_threshold", origin(value.span().start));
        }
        self.tools.always_loaded.extend(file.tools.always_loaded);
        self.tools.read_before_write = file
            .tools
            .read_before_write
            .or(self.tools.read_before_write);
        if let Some(value) = file.limits.max_result_chars {
            self.limits.max_result_chars = Some(*value.get_ref());
            self.sources
                .insert("limits.max_result_chars", origin(value.span().start));
        }
        let permissions = file.permissions;
        if let Some(mode) = permissions.mode {
            let parsed = mode
                .get_ref()
                .parse::<PermissionMode>()
                .map_err(|error| invalid(Some(mode.span().start), error.to_string()))?;
            self.permissions.mode = parsed;
            self.sources
                .insert("permissions.mode", origin(mode.span().start));
        }
        for (list, rules) in [
            (RuleList::Allow, permissions.allow),
            (RuleList::Ask, permissions.ask),
            (RuleList::Deny, permissions.deny),
        ] {
            for rule in rules {
                let parsed = PermissionRule::parse(rule.get_ref())
                    .map_err(|error| invalid(Some(rule.span().start), error.to_string()))?;
                self.permissions
                    .rules
                    .push(list, parsed.with_origin(origin(rule.span().start)));
            }
        }
        if let Some(audit_log) = permissions.audit_log {
            self.permissions.audit_log = Some(resolve_path(audit_log.get_ref(), sources));
            self.sources
                .insert("permissions.audit_log", origin(audit_log.span().start));
        }
        if let Some(path) = file.sessions.path {
            if path.get_ref().trim().is_empty() {
                return Err(invalid(
                    Some(path.span().start),
                    "sessions.path is empty: give the store's file, or leave the key out for \
                     ~/.toolhost/sessions.db"
                        .to_owned(),
                ));
            }
            self.sessions.path = Some(resolve_path(path.get_ref(), sources));
            self.sources
                .insert("sessions.path", origin(path.span().start));
        }
        if let Some(depth) = file.subagents.max_depth {
            self.subagents.max_depth = *depth.get_ref();
            self.sources
                .insert("subagents.max_depth", origin(depth.span().start));
        }
        if let Some(count) = file.subagents.max_concurrent {
            if *count.get_ref() == 0 {
                return Err(invalid(
                    Some(count.span().start),
                    "subagents.max_concurrent = 0 would refuse every sub-agent: give at least 1, \
                     or max_depth = 0 to allow none"
                        .to_owned(),
                ));
            }
            self.subagents.max_concurrent = *count.get_ref();
            self.sources
                .insert("subagents.max_concurrent", origin(count.span().start));
        }
        if let Some(turns) = file.todo.reminder_turns {
            self.todo.reminder_turns = Some(*turns.get_ref());
            self.sources
                .insert("todo.reminder_turns", origin(turns.span().start));
        }
        for folder in file.plugins.paths {
            self.plugins.paths.push(crate::plugins::PluginPath {
                path: resolve_path(folder.get_ref(), sources),
                origin: origin(folder.span().start),
            });
        }
        self.merge_shell(file.shell, sources, &origin, &invalid)?;
        self.merge_custom_tools(file.custom_tools, &origin, &invalid)?;
        self.merge_skills(file.skills, &origin, &invalid)?;
        self.merge_web(file.web, &origin, &invalid)?;
        let lookup = |name: &str| std::env::var(name).ok();
        for (name, server) in file.mcp_servers {
            let start = server.span().start;
            // One server that cannot be used is left out; the others and every command work.
            match server_config(
                &name,
                &format!("mcp_servers.{name}"),
                server.into_inner(),
                origin(start),
                &sources.workspace,
                &lookup,
            ) {
                Ok(parsed) => {
                    self.mcp_servers.insert(name, parsed);
                }
                Err(message) => self.warn(format!(
                    "{}: {message}; the server '{name}' is left out",
                    origin(start)
                )),
            }
        }
        for (name, agent) in file.agents {
            let start = agent.span().start;
            let parsed = agent_config(
                &name,
                agent.into_inner(),
                start,
                &origin,
                &sources.workspace,
                &lookup,
                &mut self.warnings,
            )
            .map_err(|(offset, message)| invalid(Some(offset), message))?;
            self.agents.insert(name, parsed);
        }
        for (name, provider) in file.providers {
            let start = provider.span().start;
            let entry = provider_entry(&name, provider.into_inner(), origin(start))
                .map_err(|(offset, message)| invalid(Some(offset), message))?;
            self.providers.insert(name, entry);
        }
        let settings = agent_settings(file.agent, &mut self.agent_settings)
            .map_err(|(offset, message)| invalid(Some(offset), message))?;
        for (key, offset) in settings {
            self.sources.insert(key, origin(offset));
        }
        self.warnings
            .extend(add_file_hooks(file.hooks, &mut self.hooks, &origin));
        Ok(())
    }

    /// Claude Code's `.mcp.json` in the workspace, read first: a TOML layer's server of the
    /// same name replaces it.
    fn read_claude_mcp_json(&mut self, workspace: &Path) -> Result<(), ConfigError> {
        let path = workspace.join(CLAUDE_MCP_JSON);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let lookup = |name: &str| std::env::var(name).ok();
        // Claude Code's file: what does not load is left out with a warning, never an error.
        let servers = match claude_mcp_json(&path, &text, workspace, &lookup) {
            Ok((servers, warnings)) => {
                self.warnings.extend(warnings);
                servers
            }
            Err((line, message)) => {
                let at = line
                    .map(|line| format!(" line {line}:"))
                    .unwrap_or_default();
                self.warn(format!(
                    "{}:{at} {message}; its servers are left out",
                    path.display()
                ));
                return Ok(());
            }
        };
        for server in servers {
            self.mcp_servers.insert(server.name.clone(), server);
        }
        self.files.push(path);
        Ok(())
    }

    fn merge_shell(
        &mut self,
        shell: FileShell,
        sources: &ConfigSources,
        origin: &dyn Fn(usize) -> String,
        invalid: &dyn Fn(Option<usize>, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        for (key, value, target) in [
            (
                "shell.exec_timeout",
                shell.exec_timeout,
                &mut self.shell.exec_timeout,
            ),
            (
                "shell.max_timeout",
                shell.max_timeout,
                &mut self.shell.max_timeout,
            ),
        ] {
            if let Some(seconds) = value {
                if *seconds.get_ref() == 0 {
                    return Err(invalid(
                        Some(seconds.span().start),
                        format!("{key} of 0 seconds would stop every command: give at least 1"),
                    ));
                }
                *target = Some(Duration::from_secs(*seconds.get_ref()));
                self.sources.insert(key, origin(seconds.span().start));
            }
        }
        if let Some(bytes) = shell.max_output_bytes {
            self.shell.max_output_bytes = Some(*bytes.get_ref());
            self.sources
                .insert("shell.max_output_bytes", origin(bytes.span().start));
        }
        if let Some(mode) = shell.sandbox {
            let parsed = mode
                .get_ref()
                .parse::<ShellSandbox>()
                .map_err(|message| invalid(Some(mode.span().start), message))?;
            self.shell.sandbox = Some(parsed);
            self.sources
                .insert("shell.sandbox", origin(mode.span().start));
        }
        if let Some(network) = shell.network {
            self.shell.network = Some(*network.get_ref());
            self.sources
                .insert("shell.network", origin(network.span().start));
        }
        if let Some(terminal) = shell.editor_terminal {
            self.shell.editor_terminal = Some(*terminal.get_ref());
            self.sources
                .insert("shell.editor_terminal", origin(terminal.span().start));
        }
        self.shell.env.extend(shell.env);
        self.shell.writable_roots.extend(
            shell
                .writable_roots
                .iter()
                .map(|root| resolve_path(root.get_ref(), sources)),
        );
        Ok(())
    }

    fn merge_custom_tools(
        &mut self,
        custom: FileCustomTools,
        origin: &dyn Fn(usize) -> String,
        invalid: &dyn Fn(Option<usize>, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        self.custom_tools.paths.extend(custom.paths);
        self.custom_tools
            .replace_builtins
            .extend(custom.replace_builtins);
        for (key, value, target) in [
            (
                "custom_tools.call_timeout",
                custom.call_timeout,
                &mut self.custom_tools.call_timeout,
            ),
            (
                "custom_tools.load_timeout",
                custom.load_timeout,
                &mut self.custom_tools.load_timeout,
            ),
        ] {
            if let Some(seconds) = value {
                if *seconds.get_ref() == 0 {
                    return Err(invalid(
                        Some(seconds.span().start),
                        format!("{key} of 0 seconds would stop every call: give at least 1"),
                    ));
                }
                *target = Some(Duration::from_secs(*seconds.get_ref()));
                self.sources.insert(key, origin(seconds.span().start));
            }
        }
        if let Some(megabytes) = custom.memory_limit_mb {
            if *megabytes.get_ref() == 0 {
                return Err(invalid(
                    Some(megabytes.span().start),
                    "custom_tools.memory_limit_mb of 0 leaves no memory to run in: give at least 1"
                        .to_owned(),
                ));
            }
            self.custom_tools.memory_limit_mb = Some(*megabytes.get_ref());
            self.sources.insert(
                "custom_tools.memory_limit_mb",
                origin(megabytes.span().start),
            );
        }
        Ok(())
    }

    fn merge_skills(
        &mut self,
        skills: FileSkills,
        origin: &dyn Fn(usize) -> String,
        invalid: &dyn Fn(Option<usize>, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        for hub in skills.hubs {
            let url = hub.get_ref().trim();
            let scheme = url.split_once("://").map(|(scheme, _)| scheme);
            if !matches!(scheme, Some("http" | "https")) || url::Url::parse(url).is_err() {
                return Err(invalid(
                    Some(hub.span().start),
                    format!(
                        "skills.hubs entry '{url}' is not an http:// or https:// URL: give the \
                         URL of a hub index, e.g. \"https://example.org/skills/index.json\""
                    ),
                ));
            }
            self.skills.hubs.push(url.to_owned());
        }
        for (key, value, target) in [
            (
                "skills.max_archive_bytes",
                skills.max_archive_bytes,
                &mut self.skills.max_archive_bytes,
            ),
            (
                "skills.max_unpacked_bytes",
                skills.max_unpacked_bytes,
                &mut self.skills.max_unpacked_bytes,
            ),
        ] {
            if let Some(bytes) = value {
                if *bytes.get_ref() == 0 {
                    return Err(invalid(
                        Some(bytes.span().start),
                        format!("{key} of 0 would refuse every skill: give at least 1"),
                    ));
                }
                *target = Some(*bytes.get_ref());
                self.sources.insert(key, origin(bytes.span().start));
            }
        }
        if let Some(entries) = skills.max_entries {
            if *entries.get_ref() == 0 {
                return Err(invalid(
                    Some(entries.span().start),
                    "skills.max_entries of 0 would refuse every skill: give at least 1".to_owned(),
                ));
            }
            self.skills.max_entries = Some(*entries.get_ref());
            self.sources
                .insert("skills.max_entries", origin(entries.span().start));
        }
        Ok(())
    }

    fn apply_overrides(&mut self, overrides: &Overrides) -> Result<(), ConfigError> {
        if let Some(mode) = overrides.mode {
            self.permissions.mode = mode;
            self.sources.insert("permissions.mode", "--mode".to_owned());
        }
        for (flag, list, rules) in [
            ("--allow", RuleList::Allow, &overrides.allow),
            ("--deny", RuleList::Deny, &overrides.deny),
        ] {
            for rule in rules {
                let parsed = PermissionRule::parse(rule).map_err(|error| ConfigError::Flag {
                    flag,
                    value: rule.clone(),
                    message: error.problem,
                })?;
                self.permissions.rules.push(list, parsed.with_origin(flag));
            }
        }
        Ok(())
    }
}

fn resolve_path(raw: &str, sources: &ConfigSources) -> PathBuf {
    if let (Some(rest), Some(home)) = (raw.strip_prefix("~/"), &sources.home) {
        return home.join(rest);
    }
    let path = PathBuf::from(raw);
    if path.is_absolute() {
        path
    } else {
        sources.workspace.join(path)
    }
}
