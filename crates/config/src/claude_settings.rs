//! Claude Code's settings files, read as Claude Code layers them and before toolhost's own
//! TOML layers (so that toolhost's files win where both set one value; rules add up):
//!
//! 1. `~/.claude/settings.json` (the user's),
//! 2. `<workspace>/.claude/settings.json` (the project's, committed),
//! 3. `<workspace>/.claude/settings.local.json` (the project's, personal).
//!
//! What toolhost takes from them: `permissions.allow`, `permissions.ask` and
//! `permissions.deny` (Claude Code's rule syntax is toolhost's: `Read(./.env)`,
//! `Bash(npm run test:*)`, `WebFetch(domain:example.com)`, `mcp__github`), each rule
//! remembering its file and line, with Claude Code's tool names (`Task(…)`, `LS(…)`) put as
//! toolhost names them; `permissions.defaultMode` (`dontAsk` asks here);
//! `permissions.additionalDirectories` (folders the tools may read and write besides the
//! workspace); `env` (variables every process toolhost starts gets: Bash's commands, stdio MCP
//! servers, command hooks; see [`Config::settings_env`]); and the command hooks of the events
//! toolhost has (`PreToolUse`, `PostToolUse`, `PreCompact`). Hooks of other events are named
//! in a warning. These are Claude Code's files: nothing in them stops a command. A file that
//! is not JSON, a rule that does not parse, a hook without a command is left out with a
//! warning naming the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toolhost_core::permission::{PermissionMode, PermissionRule, RuleList};

use crate::claude_tools::toolhost_entry;
use crate::toml_hooks::compile_matcher;
use crate::{Config, ConfigSources, DEFAULT_HOOK_TIMEOUT, HookCommand, HooksConfig};

/// The settings files of Claude Code, in the order they are merged (a later one wins).
pub fn claude_settings_paths(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(home) = home {
        paths.push(home.join(".claude").join("settings.json"));
    }
    paths.push(workspace.join(".claude").join("settings.json"));
    paths.push(workspace.join(".claude").join("settings.local.json"));
    paths
}

/// The keys of a settings file that toolhost reads; the others are Claude Code's own.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeSettings {
    permissions: ClaudePermissions,
    hooks: BTreeMap<String, Vec<ClaudeHookGroup>>,
    env: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ClaudePermissions {
    allow: Vec<String>,
    ask: Vec<String>,
    deny: Vec<String>,
    default_mode: Option<String>,
    additional_directories: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeHookGroup {
    matcher: Option<String>,
    hooks: Vec<ClaudeHook>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeHook {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    /// Seconds.
    timeout: Option<u64>,
}

impl Config {
    /// Merges every settings file of [`claude_settings_paths`] that exists.
    pub(crate) fn read_claude_settings(&mut self, sources: &ConfigSources) {
        for path in claude_settings_paths(&sources.workspace, sources.home.as_deref()) {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    self.warn(format!(
                        "{}: cannot read it ({error}); its settings are left out",
                        path.display()
                    ));
                    continue;
                }
            };
            match serde_json::from_str::<ClaudeSettings>(&text) {
                Ok(settings) => {
                    self.merge_claude_settings(
                        &path,
                        &text,
                        settings,
                        (&sources.workspace, sources.home.as_deref()),
                    );
                    self.files.push(path);
                }
                Err(error) => self.warn(format!(
                    "{}: line {}: {error}; its settings are left out",
                    path.display(),
                    error.line()
                )),
            }
        }
    }

    fn merge_claude_settings(
        &mut self,
        path: &Path,
        text: &str,
        settings: ClaudeSettings,
        (workspace, home): (&Path, Option<&Path>),
    ) {
        let at = |needle: &str| format!("{}:{}", path.display(), line_of(text, needle));
        let permissions = settings.permissions;
        for (list, rules) in [
            (RuleList::Allow, permissions.allow),
            (RuleList::Ask, permissions.ask),
            (RuleList::Deny, permissions.deny),
        ] {
            for rule in rules {
                let origin = at(&rule);
                // Claude Code's tool names (`Task(…)`, `LS(…)`) as toolhost names them.
                let rule = match toolhost_entry(&rule) {
                    Ok(rule) => rule,
                    Err(why) => {
                        self.warn(format!(
                            "{origin}: the {} rule '{rule}' is left out: {why}",
                            list.as_str()
                        ));
                        continue;
                    }
                };
                match PermissionRule::parse(&rule) {
                    Ok(parsed) => self
                        .permissions
                        .rules
                        .push(list, parsed.with_origin(origin)),
                    Err(error) => self.warn(format!(
                        "{origin}: the {} rule '{rule}' is left out: {error}",
                        list.as_str()
                    )),
                }
            }
        }
        if let Some(mode) = permissions.default_mode {
            let origin = at(&mode);
            let parsed = match mode.as_str() {
                // Claude Code refuses what it would ask; asking is no less strict.
                "dontAsk" => Ok(PermissionMode::Default),
                other => other.parse::<PermissionMode>(),
            };
            match parsed {
                Ok(parsed) => {
                    self.permissions.mode = parsed;
                    self.sources.insert("permissions.mode", origin);
                }
                Err(error) => self.warn(format!("{origin}: defaultMode is left out: {error}")),
            }
        }
        for folder in permissions.additional_directories {
            let path = match (folder.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => workspace.join(&folder),
            };
            if !path.is_dir() {
                self.warn(format!(
                    "{}: the additionalDirectories entry '{folder}' is not a folder; it is left out",
                    at(&folder)
                ));
                continue;
            }
            self.permissions.additional_directories.push(path);
        }
        for (name, value) in settings.env {
            // Claude Code's values are strings; a number or a boolean is taken as written.
            let value = match value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
            self.shell.env.insert(name.clone(), value.clone());
            self.settings_env.insert(name, value);
        }
        for (event, groups) in settings.hooks {
            self.merge_claude_hooks(&event, groups, &at);
        }
    }

    /// Adds `hook` to the hooks of `event`.
    pub fn add_hook(&mut self, event: HookEvent, hook: HookCommand) {
        self.hooks.add(event, hook);
    }

    fn merge_claude_hooks(
        &mut self,
        event: &str,
        groups: Vec<ClaudeHookGroup>,
        at: &dyn Fn(&str) -> String,
    ) {
        let (hooks, problems) = event_hooks(event, groups, at);
        for (event, hook) in hooks {
            self.add_hook(event, hook);
        }
        self.warnings.extend(problems);
    }
}

impl HooksConfig {
    /// Adds `hook` to the hooks of `event`.
    pub fn add(&mut self, event: HookEvent, hook: HookCommand) {
        match event {
            HookEvent::PreToolUse => self.pre_tool_use.push(hook),
            HookEvent::PostToolUse => self.post_tool_use.push(hook),
            HookEvent::PreCompact => self.pre_compact.push(hook),
        }
    }
}

/// The events toolhost runs hooks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    /// Before the permission decision of a call.
    PreToolUse,
    /// After a call.
    PostToolUse,
    /// Before a conversation is compacted.
    PreCompact,
}

impl HookEvent {
    /// Its name as the files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PreCompact => "PreCompact",
        }
    }
}

/// The command hooks of a Claude Code `hooks` object (`{"PreToolUse": [{"matcher": …,
/// "hooks": [{"type": "command", "command": …}]}]}`, as settings files and plugins'
/// `hooks/hooks.json` write it), and a warning for each one left out. `at(text)` names where
/// `text` is written (`path:line`).
pub fn claude_hooks(
    hooks: serde_json::Value,
    at: &dyn Fn(&str) -> String,
) -> (Vec<(HookEvent, HookCommand)>, Vec<String>) {
    let events: BTreeMap<String, Vec<ClaudeHookGroup>> = match serde_json::from_value(hooks) {
        Ok(events) => events,
        Err(error) => {
            return (
                Vec::new(),
                vec![format!("{}: the hooks are left out: {error}", at("hooks"))],
            );
        }
    };
    let mut all = Vec::new();
    let mut problems = Vec::new();
    for (event, groups) in events {
        let (hooks, left_out) = event_hooks(&event, groups, at);
        all.extend(hooks);
        problems.extend(left_out);
    }
    (all, problems)
}

fn event_hooks(
    event: &str,
    groups: Vec<ClaudeHookGroup>,
    at: &dyn Fn(&str) -> String,
) -> (Vec<(HookEvent, HookCommand)>, Vec<String>) {
    let origin = at(event);
    let kind = match event {
        "PreToolUse" => HookEvent::PreToolUse,
        "PostToolUse" => HookEvent::PostToolUse,
        "PreCompact" => HookEvent::PreCompact,
        _ => {
            return (
                Vec::new(),
                vec![format!(
                    "{origin}: {event} hooks are not run: toolhost runs PreToolUse, PostToolUse \
                     and PreCompact hooks"
                )],
            );
        }
    };
    let mut hooks = Vec::new();
    let mut problems = Vec::new();
    for group in groups {
        let matcher_regex = match compile_matcher(group.matcher.as_deref()) {
            Ok(regex) => regex,
            Err(problem) => {
                problems.push(format!("{origin}: a {event} hook is left out: {problem}"));
                continue;
            }
        };
        for hook in group.hooks {
            let command = hook.command.filter(|command| !command.trim().is_empty());
            let (Some("command") | None, Some(command)) = (hook.kind.as_deref(), command) else {
                problems.push(format!(
                    "{origin}: a {event} hook is left out: toolhost runs hooks of type \
                     \"command\" with a command"
                ));
                continue;
            };
            hooks.push((
                kind,
                HookCommand {
                    matcher: group.matcher.clone(),
                    matcher_regex: matcher_regex.clone(),
                    origin: at(&command),
                    command,
                    timeout: hook
                        .timeout
                        .filter(|seconds| *seconds > 0)
                        .map_or(DEFAULT_HOOK_TIMEOUT, Duration::from_secs),
                    env: BTreeMap::new(),
                },
            ));
        }
    }
    (hooks, problems)
}

/// The line (1-based) where `value` first appears as a JSON string in `text`, or 1.
pub fn line_of(text: &str, value: &str) -> usize {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    text.find(&quoted)
        .map_or(1, |offset| text[..offset].matches('\n').count() + 1)
}
