//! `[agents.NAME]`: which tools an agent is offered (R16) and which MCP servers it sees
//! (R30): the user servers it selects by id, and the stdio servers declared in it ("direct"
//! servers, `[agents.NAME.direct_mcp_servers.ID]`).
//!
//! The agent [`MAIN_AGENT`] exists without configuration and sees everything; configuring it
//! narrows it like any other. A later layer's `[agents.NAME]` replaces an earlier one of the
//! same name, as `[mcp_servers.NAME]` does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::mcp_server::McpServerConfig;
use serde::Deserialize;
use toml::Spanned;
use toolhost_core::permission::{PermissionMode, PermissionRule, ToolSelection};
use toolhost_core::{ToolRegistry, ToolSpec};

use super::mcp::{FileMcpServer, Lookup, direct_server_config};
use super::toml_hooks::{FileHooks, add_file_hooks};
use super::{Config, ConfigError, HooksConfig, ReasoningEffort};

/// The agent a command runs as when `--agent` does not say: the top-level agent.
pub const MAIN_AGENT: &str = "main";

/// One `[agents.NAME]` table; every key is checked.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileAgent {
    description: Option<String>,
    allowed_tools: Option<Vec<Spanned<String>>>,
    disallowed_tools: Option<Vec<Spanned<String>>>,
    mcp_servers: Option<Vec<Spanned<String>>>,
    direct_mcp_servers: BTreeMap<String, Spanned<FileMcpServer>>,
    prompt: Option<String>,
    model: Option<String>,
    permission_mode: Option<Spanned<String>>,
    max_turns: Option<Spanned<usize>>,
    skills: Option<Vec<String>>,
    background: Option<bool>,
    effort: Option<Spanned<String>>,
    isolation: Option<Spanned<String>>,
    hooks: FileHooks,
}

/// An agent's definition.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// The agent's name, as built-in MCP providers' `is_eligible` sees it.
    pub name: String,
    /// What the agent is for.
    pub description: Option<String>,
    /// `allowed_tools`: the only tools the agent is offered (tool names, `mcp__server`,
    /// `mcp__*`; specifiers such as `Bash(git:*)` are refused at load, since rules under
    /// `[permissions]` decide calls); `None`: every tool.
    pub allowed_tools: Option<ToolSelection>,
    /// `mcp_servers`: the ids of the user servers (`[mcp_servers.ID]`, `.mcp.json`) the agent
    /// sees; `None`: all of them.
    pub mcp_servers: Option<Vec<String>>,
    /// `[agents.NAME.direct_mcp_servers.ID]`: stdio servers started for this agent only.
    pub direct_mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `disallowed_tools` (`disallowedTools` in a Markdown definition): tools the agent is
    /// never offered, even when `allowed_tools` or its parent has them.
    pub disallowed_tools: Option<ToolSelection>,
    /// The system prompt of the agent as a sub-agent (`prompt`, or a Markdown definition's
    /// body), added after toolhost's own. `None` with [`Self::body_file`] set: the body is
    /// in that file, read when the agent runs or is shown.
    pub prompt: Option<String>,
    /// The Markdown file whose body is the prompt, when start-up read only its front matter
    /// (hundreds of agent files cost their heads, not their bodies).
    pub body_file: Option<PathBuf>,
    /// The model a sub-agent of this definition asks: a `[providers.NAME]`, `PROVIDER/MODEL`,
    /// a model name on the parent's provider; `None` or `inherit`: the parent's model.
    pub model: Option<String>,
    /// The permission mode it asks for as a sub-agent (never looser than its parent's).
    pub permission_mode: Option<PermissionMode>,
    /// The most model turns a sub-agent of this definition takes.
    pub max_turns: Option<usize>,
    /// Skills whose instructions join the sub-agent's system prompt at its start.
    pub skills: Vec<String>,
    /// Whether `spawn_agent` runs it in the background unless the call says otherwise.
    pub background: bool,
    /// How hard the model of a sub-agent of this definition thinks (Claude Code's `effort`);
    /// `None`: the provider's default.
    pub effort: Option<ReasoningEffort>,
    /// `isolation: worktree`: a sub-agent of this definition works in a git worktree of its
    /// own; `None`: in the workspace.
    pub isolation: Option<Isolation>,
    /// Command hooks that run only while a sub-agent of this definition runs, after its
    /// parent's (Claude Code's front-matter `hooks`).
    pub hooks: HooksConfig,
    /// Where it was configured (`path:line`); `None` for the implicit [`MAIN_AGENT`].
    pub origin: Option<String>,
    /// Where each id of `mcp_servers` was written, to name it when it is unknown.
    server_origins: Vec<String>,
}

impl AgentConfig {
    /// The implicit [`MAIN_AGENT`]: every tool, every user server, no direct servers.
    pub fn main() -> Self {
        Self::everything(MAIN_AGENT)
    }

    fn everything(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            description: None,
            allowed_tools: None,
            mcp_servers: None,
            direct_mcp_servers: BTreeMap::new(),
            disallowed_tools: None,
            prompt: None,
            body_file: None,
            model: None,
            permission_mode: None,
            max_turns: None,
            skills: Vec::new(),
            background: false,
            effort: None,
            isolation: None,
            hooks: HooksConfig::default(),
            origin: None,
            server_origins: Vec::new(),
        }
    }

    /// A definition named `name` with nothing set yet (a Markdown file fills it in).
    pub fn named(name: &str, origin: String) -> Self {
        let mut agent = Self::everything(name);
        agent.origin = Some(origin);
        agent
    }

    /// Whether the agent is offered the tool.
    pub fn offers(&self, tool: &ToolSpec) -> bool {
        self.allowed_tools
            .as_ref()
            .is_none_or(|selection| selection.names_tool(tool))
            && !self.disallows(tool)
    }

    /// Whether `disallowed_tools` names the tool.
    pub fn disallows(&self, tool: &ToolSpec) -> bool {
        self.disallowed_tools
            .as_ref()
            .is_some_and(|selection| selection.names_tool(tool))
    }

    /// The tools of `registry` the agent is offered, sharing its pipeline (R16).
    pub fn offered(&self, registry: &ToolRegistry) -> ToolRegistry {
        if self.allowed_tools.is_none() && self.disallowed_tools.is_none() {
            // Offered everything: no spec needs reading (they are derived on first use).
            return registry.share_all();
        }
        registry.filter(|spec| self.offers(spec))
    }

    /// Where the agent's user servers were named, to report an unknown one (`path:line`).
    pub fn set_server_origins(&mut self, origins: Vec<String>) {
        self.server_origins = origins;
    }

    /// The `allowed_tools` entries that name no tool (typos, or a server that is down), to
    /// warn about. `any_tool(named)` tells whether some tool's spec satisfies `named`: over a
    /// registry, [`ToolRegistry::any_spec`], which copies no spec.
    pub fn unmatched_allowed_tools(
        &self,
        any_tool: impl Fn(&dyn Fn(&ToolSpec) -> bool) -> bool,
    ) -> Vec<String> {
        self.allowed_tools
            .iter()
            .flat_map(ToolSelection::rules)
            .filter(|rule| !any_tool(&|tool| rule.names_tool(tool)))
            .map(ToString::to_string)
            .collect()
    }

    /// Whether the agent sees the user server `id`.
    pub fn sees_server(&self, id: &str) -> bool {
        self.mcp_servers
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|listed| listed == id))
    }
}

/// Where a sub-agent works when not in the workspace itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// A git worktree of the workspace's repository, made for the run: removed when the run
    /// ends without changes, kept (and named in the result) when it has some.
    Worktree,
}

/// `--agent NAME` names no agent.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown agent '{name}': the agents are {} (define it as [agents.{name}] in \
     .toolhost/config.toml)",
    known.join(", ")
)]
pub struct UnknownAgent {
    /// The name asked for.
    pub name: String,
    /// The agents that exist, [`MAIN_AGENT`] included.
    pub known: Vec<String>,
}

impl Config {
    /// The names of the agents, [`MAIN_AGENT`] included, sorted.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.agents.keys().cloned().collect();
        if !self.agents.contains_key(MAIN_AGENT) {
            names.push(MAIN_AGENT.to_owned());
            names.sort();
        }
        names
    }

    /// The agent `name`: its configuration, or the implicit [`MAIN_AGENT`].
    pub fn agent(&self, name: &str) -> Result<AgentConfig, UnknownAgent> {
        match self.agents.main_or(name) {
            Some(agent) => Ok(agent.clone()),
            None if name == MAIN_AGENT => Ok(AgentConfig::main()),
            None => Err(UnknownAgent {
                name: name.to_owned(),
                known: self.agent_names(),
            }),
        }
    }

    /// The MCP servers to start for `agent`: the user servers it sees, then its direct ones.
    pub fn mcp_servers_for(&self, agent: &AgentConfig) -> Vec<McpServerConfig> {
        self.mcp_servers
            .values()
            .filter(|server| agent.sees_server(&server.name))
            .chain(agent.direct_mcp_servers.values())
            .cloned()
            .collect()
    }

    /// Checks what only the merged layers can tell: every id in an agent's `mcp_servers` is a
    /// user server, and no direct server has the id of a user server the agent sees (their
    /// tools would clash).
    pub fn check_agents(&self) -> Result<(), ConfigError> {
        for agent in self.agents.tables().values() {
            check_agent_servers(agent, &self.mcp_servers)?;
        }
        Ok(())
    }
}

/// Checks `agent`'s servers against the configured `servers` as [`Config::check_agents`] does
/// (an agent file's is left out when they are wrong, as it is read).
pub fn check_agent_servers(
    agent: &AgentConfig,
    servers: &BTreeMap<String, McpServerConfig>,
) -> Result<(), ConfigError> {
    for (id, origin) in agent
        .mcp_servers
        .iter()
        .flatten()
        .zip(&agent.server_origins)
    {
        if !servers.contains_key(id) {
            let known: Vec<&str> = servers.keys().map(String::as_str).collect();
            return Err(ConfigError::Agent {
                origin: origin.clone(),
                message: format!(
                    "agents.{}.mcp_servers names '{id}', which is not a configured MCP \
                     server; the servers are: {}",
                    agent.name,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            });
        }
    }
    for (id, server) in &agent.direct_mcp_servers {
        if servers.contains_key(id) && agent.sees_server(id) {
            return Err(ConfigError::Agent {
                origin: server.origin.clone(),
                message: format!(
                    "agents.{}.direct_mcp_servers.{id} has the id of the MCP server \
                     '{id}' that the agent also sees, so their tools would clash: rename \
                     one of them",
                    agent.name
                ),
            });
        }
    }
    Ok(())
}

/// An agent from its table. `origin` gives `path:line` of an offset in the file; `Err` is the
/// offset of the problem and what is wrong.
pub(super) fn agent_config(
    name: &str,
    file: FileAgent,
    start: usize,
    origin: &dyn Fn(usize) -> String,
    workspace: &Path,
    lookup: Lookup<'_>,
    warnings: &mut Vec<String>,
) -> Result<AgentConfig, (usize, String)> {
    let mut file = file;
    let mut agent = AgentConfig::everything(name);
    if let Some(effort) = &file.effort {
        agent.effort = Some(effort.get_ref().parse().map_err(|error| {
            (
                effort.span().start,
                format!("agents.{name}.effort: {error}"),
            )
        })?);
    }
    if let Some(isolation) = &file.isolation {
        if isolation.get_ref().trim() != "worktree" {
            return Err((
                isolation.span().start,
                format!(
                    "agents.{name}.isolation: toolhost knows only \"worktree\" (a git worktree \
                     of its own); leave it out to work in the workspace"
                ),
            ));
        }
        agent.isolation = Some(Isolation::Worktree);
    }
    if let Some(offset) = file.hooks.take_pre_compact() {
        warnings.push(format!(
            "{}: agents.{name}.hooks.PreCompact is not run: a sub-agent's conversation is not \
             compacted with hooks; it is left out",
            origin(offset)
        ));
    }
    warnings.extend(add_file_hooks(
        std::mem::take(&mut file.hooks),
        &mut agent.hooks,
        origin,
    ));
    agent.origin = Some(origin(start));
    agent.description = file.description;
    agent.prompt = file.prompt;
    agent.model = file.model;
    agent.skills = file.skills.unwrap_or_default();
    agent.background = file.background.unwrap_or(false);
    agent.max_turns = file.max_turns.map(Spanned::into_inner);
    if let Some(mode) = file.permission_mode {
        agent.permission_mode = Some(mode.get_ref().parse().map_err(
            |error: toolhost_core::permission::UnknownMode| {
                (
                    mode.span().start,
                    format!("agents.{name}.permission_mode: {error}"),
                )
            },
        )?);
    }
    for (key, entries, target) in [
        (
            "allowed_tools",
            file.allowed_tools,
            &mut agent.allowed_tools,
        ),
        (
            "disallowed_tools",
            file.disallowed_tools,
            &mut agent.disallowed_tools,
        ),
    ] {
        if let Some(entries) = entries {
            let mut names = Vec::new();
            for entry in &entries {
                let rule = whole_tool_rule(entry.get_ref()).map_err(|message| {
                    (
                        entry.span().start,
                        format!("agents.{name}.{key}: {message}"),
                    )
                })?;
                names.push(rule);
            }
            *target =
                Some(ToolSelection::parse(names).map_err(|error| (start, error.to_string()))?);
        }
    }
    if let Some(ids) = file.mcp_servers {
        agent.server_origins = ids.iter().map(|id| origin(id.span().start)).collect();
        agent.mcp_servers = Some(ids.into_iter().map(Spanned::into_inner).collect());
    }
    for (id, server) in file.direct_mcp_servers {
        let server_start = server.span().start;
        let parsed = direct_server_config(
            &id,
            &format!("agents.{name}.direct_mcp_servers.{id}"),
            server.into_inner(),
            origin(server_start),
            workspace,
            lookup,
        )
        .map_err(|message| (server_start, message))?;
        agent.direct_mcp_servers.insert(id, parsed);
    }
    Ok(agent)
}

/// One entry of a tool list that selects whole tools (`allowed_tools`, an agent file's
/// `tools`): a tool name, `mcp__server` or `mcp__*`; a specifier is refused, since rules under
/// `[permissions]` decide calls. `Err` says what is wrong and what to write instead.
pub fn whole_tool_rule(entry: &str) -> Result<String, String> {
    let rule = PermissionRule::parse(entry).map_err(|error| error.to_string())?;
    if rule.has_specifier() {
        let tool = rule.as_str().split('(').next().unwrap_or_default();
        return Err(format!(
            "'{rule}' has a specifier, but a tool list selects whole tools ('{tool}' would \
             offer every call of it). List '{tool}', and narrow its calls with rules under \
             [permissions] (allow = [\"{rule}\"], deny = [...])"
        ));
    }
    Ok(rule.as_str().to_owned())
}
