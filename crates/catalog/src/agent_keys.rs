//! The keys of Claude Code's agent files that toolhost acts on besides its own: `mcpServers`
//! (names of configured servers, or inline servers started for that agent alone), `effort`
//! (the sub-agent's reasoning effort), `hooks` (hooks that run while it runs) and
//! `isolation: worktree`. A value that cannot be used is left out with a warning: the agent
//! still loads.

use std::collections::BTreeMap;

use serde::Deserialize;
use toolhost_config::claude_settings::{HookEvent, claude_hooks};
use toolhost_config::{
    AgentConfig, Isolation, McpServerConfig, ReasoningEffort, claude_mcp_server,
};

use crate::front_matter::StringOrList;

/// `mcpServers`: names of configured servers, or (Claude Code) inline definitions keyed by
/// their name, in a list or (as some files write it) one mapping.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum McpServers {
    Line(String),
    List(Vec<serde_yaml_ng::Value>),
    Map(serde_yaml_ng::Mapping),
}

/// The names of configured servers an agent's `mcpServers` lists, and its inline servers
/// (`- name: {command: …}`), which start for that agent alone. An inline server that cannot
/// be used is left out with a warning.
pub(crate) fn mcp_server_entries(
    servers: McpServers,
    origin: &str,
    warnings: &mut Vec<String>,
) -> (Vec<String>, BTreeMap<String, McpServerConfig>) {
    let entries = match servers {
        McpServers::Line(line) => StringOrList::String(line)
            .entries()
            .into_iter()
            .map(serde_yaml_ng::Value::String)
            .collect(),
        McpServers::List(entries) => entries,
        McpServers::Map(map) => vec![serde_yaml_ng::Value::Mapping(map)],
    };
    let lookup = |name: &str| std::env::var(name).ok();
    let mut ids = Vec::new();
    let mut inline = BTreeMap::new();
    for entry in entries {
        let map = match entry {
            serde_yaml_ng::Value::String(id) => {
                ids.push(id);
                continue;
            }
            serde_yaml_ng::Value::Mapping(map) => map,
            other => {
                warnings.push(format!(
                    "{origin}: mcpServers: the entry {other:?} is neither a server's name nor \
                     an inline server (name: {{command: …}}); it is left out"
                ));
                continue;
            }
        };
        for (name, definition) in map {
            let Some(name) = name.as_str().map(str::to_owned) else {
                warnings.push(format!(
                    "{origin}: mcpServers: an inline server's name is not text; it is left out"
                ));
                continue;
            };
            let server = serde_json::to_value(definition)
                .map_err(|error| error.to_string())
                .and_then(|entry| claude_mcp_server(&name, entry, origin.to_owned(), &lookup));
            match server {
                Ok(server) => {
                    inline.insert(name, server);
                }
                Err(problem) => warnings.push(format!(
                    "{origin}: mcpServers: {problem}; the server '{name}' is left out"
                )),
            }
        }
    }
    (ids, inline)
}

/// Claude Code's keys that toolhost acts on besides its own: `effort` (the sub-agent's
/// reasoning effort), `hooks` (hooks that run while it runs) and `isolation: worktree`. A
/// value that cannot be used is ignored with a warning: the agent still loads.
pub(crate) fn claude_only_fields(
    agent: &mut AgentConfig,
    other: &BTreeMap<String, serde_yaml_ng::Value>,
    at: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) {
    if let Some(effort) = other.get("effort") {
        let parsed = yaml_text(effort)
            .ok_or_else(|| "it is not text".to_owned())
            .and_then(|text| text.parse::<ReasoningEffort>());
        match parsed {
            Ok(effort) => agent.effort = Some(effort),
            Err(problem) => warnings.push(format!(
                "{} effort: {problem}; the provider's default effort is used",
                at("effort")
            )),
        }
    }
    if let Some(isolation) = other.get("isolation") {
        match yaml_text(isolation).as_deref() {
            Some("worktree") => agent.isolation = Some(Isolation::Worktree),
            _ => warnings.push(format!(
                "{} isolation: toolhost knows only \"worktree\"; the agent works in the \
                 workspace",
                at("isolation")
            )),
        }
    }
    if let Some(hooks) = other.get("hooks") {
        let line = at("hooks");
        let at_hooks = |_: &str| line.trim_end_matches(':').to_owned();
        let (hooks, problems) = match serde_json::to_value(hooks) {
            Ok(hooks) => claude_hooks(hooks, &at_hooks),
            Err(error) => (Vec::new(), vec![format!("{line} hooks: {error}")]),
        };
        warnings.extend(problems);
        for (event, hook) in hooks {
            if event == HookEvent::PreCompact {
                warnings.push(format!(
                    "{line} a PreCompact hook of an agent is not run: a sub-agent's \
                     conversation is not compacted with hooks"
                ));
                continue;
            }
            agent.hooks.add(event, hook);
        }
    }
}

/// A YAML scalar as text (`high`, or a number written bare).
fn yaml_text(value: &serde_yaml_ng::Value) -> Option<String> {
    match value {
        serde_yaml_ng::Value::String(text) => Some(text.trim().to_owned()),
        serde_yaml_ng::Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;

    use super::*;

    #[test]
    fn claude_codes_effort_isolation_hooks_and_inline_servers_are_read() {
        let (agent, warnings) = crate::agent_files::agent_from_file(
            Path::new("deep.md"),
            "---\nname: deep\neffort: High\nisolation: worktree\nhooks:\n  PostToolUse:\n\
             \x20   - matcher: Edit\n      hooks: [{type: command, command: fmt.sh}]\n  Stop: []\n\
             mcpServers:\n  - github\n  - local: {command: srv, args: [a]}\n\
             \x20 - web: {type: http, url: 'https://x/mcp'}\n  - bad: {}\n---\n",
        )
        .unwrap();
        assert_eq!(agent.effort, Some(ReasoningEffort::High));
        assert_eq!(agent.isolation, Some(Isolation::Worktree));
        assert_eq!(agent.hooks.post_tool_use.len(), 1);
        assert_eq!(agent.hooks.post_tool_use[0].command, "fmt.sh");
        assert_eq!(agent.mcp_servers, Some(vec!["github".to_owned()]));
        let inline: Vec<&str> = agent
            .direct_mcp_servers
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(inline, ["local", "web"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("the server 'bad' is left out"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains("Stop hooks are not run"),
            "{warnings:?}"
        );

        let (agent, warnings) = crate::agent_files::agent_from_file(
            Path::new("x.md"),
            "---\nname: x\neffort: extreme\nisolation: container\n---\n",
        )
        .unwrap();
        assert_eq!((agent.effort, agent.isolation), (None, None));
        assert!(
            warnings[0].contains("unknown effort 'extreme'"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains("knows only \"worktree\""),
            "{warnings:?}"
        );
    }
}
