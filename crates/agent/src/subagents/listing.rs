//! What `toolhost agents list | show NAME` prints: the agent definitions, from the TOML
//! configuration and the agent files.

use std::fmt::Write as _;

use toolhost_core::permission::ToolSelection;

use super::GENERAL_PURPOSE_AGENT;
use toolhost_catalog::agent_files::agent_prompt;
use toolhost_config::{AgentConfig, Config, UnknownAgent};

/// The definitions `spawn_agent` can run, by name: the configured ones, and the built-in
/// general-purpose agent unless one of them takes its name.
pub fn agent_definitions(config: &Config) -> Vec<AgentConfig> {
    let mut agents: Vec<AgentConfig> = config.agents.values().cloned().collect();
    if !config.agents.contains_key(GENERAL_PURPOSE_AGENT) {
        let mut general = AgentConfig::main();
        general.name = GENERAL_PURPOSE_AGENT.to_owned();
        general.description =
            Some("Built in: every tool of its parent, no prompt of its own.".to_owned());
        agents.push(general);
    }
    agents.sort_by(|a, b| a.name.cmp(&b.name));
    agents
}

/// The definition `name`, or which there are.
pub fn agent_definition(config: &Config, name: &str) -> Result<AgentConfig, UnknownAgent> {
    let agents = agent_definitions(config);
    agents
        .iter()
        .find(|agent| agent.name == name)
        .cloned()
        .ok_or_else(|| UnknownAgent {
            name: name.to_owned(),
            known: agents.into_iter().map(|agent| agent.name).collect(),
        })
}

/// One line per definition: name, where it is defined, description.
pub fn render_list(config: &Config) -> String {
    let mut out = String::new();
    for agent in agent_definitions(config) {
        let _ = writeln!(
            out,
            "{}\t{}\t{}",
            agent.name,
            agent.origin.as_deref().unwrap_or("built in"),
            agent.description.as_deref().unwrap_or("")
        );
    }
    out
}

fn selection(selection: Option<&ToolSelection>, unset: &str) -> String {
    match selection {
        None => unset.to_owned(),
        Some(selection) => selection
            .rules()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A definition in full, prompt last.
pub fn render_definition(agent: &AgentConfig) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "name: {}", agent.name);
    let _ = writeln!(
        out,
        "defined in: {}",
        agent.origin.as_deref().unwrap_or("built in")
    );
    if let Some(description) = &agent.description {
        let _ = writeln!(out, "description: {description}");
    }
    let _ = writeln!(
        out,
        "tools: {}",
        selection(agent.allowed_tools.as_ref(), "all of its parent's")
    );
    let _ = writeln!(
        out,
        "disallowed tools: {}",
        selection(agent.disallowed_tools.as_ref(), "none")
    );
    let _ = writeln!(
        out,
        "model: {}",
        agent.model.as_deref().unwrap_or("inherit")
    );
    let _ = writeln!(
        out,
        "permission mode: {}",
        agent
            .permission_mode
            .map_or_else(|| "its parent's".to_owned(), |mode| mode.to_string())
    );
    if let Some(turns) = agent.max_turns {
        let _ = writeln!(out, "max turns: {turns}");
    }
    if let Some(effort) = agent.effort {
        let _ = writeln!(out, "effort: {}", effort.as_str());
    }
    if agent.isolation.is_some() {
        let _ = writeln!(out, "isolation: worktree");
    }
    let hooks = &agent.hooks;
    for (event, list) in [
        ("PreToolUse", &hooks.pre_tool_use),
        ("PostToolUse", &hooks.post_tool_use),
    ] {
        for hook in list {
            let matcher = hook.matcher.as_deref().unwrap_or("*");
            let _ = writeln!(out, "{event} hook ({matcher}): {}", hook.command);
        }
    }
    let _ = writeln!(
        out,
        "MCP servers: {}",
        agent
            .mcp_servers
            .as_ref()
            .map_or_else(|| "all configured".to_owned(), |ids| ids.join(", "))
    );
    if !agent.direct_mcp_servers.is_empty() {
        let ids: Vec<&str> = agent
            .direct_mcp_servers
            .keys()
            .map(String::as_str)
            .collect();
        let _ = writeln!(out, "direct MCP servers: {}", ids.join(", "));
    }
    if !agent.skills.is_empty() {
        let _ = writeln!(out, "skills: {}", agent.skills.join(", "));
    }
    if agent.background {
        let _ = writeln!(out, "background: true");
    }
    match agent_prompt(agent) {
        Ok(Some(prompt)) => {
            let _ = writeln!(out, "\n{prompt}");
        }
        Ok(None) => {}
        Err(problem) => {
            let _ = writeln!(out, "\n(the prompt cannot be read: {problem})");
        }
    }
    out
}
