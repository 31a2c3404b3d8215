//! What a sub-agent is given besides its loop: its tools (its parent's, chosen by its
//! definition and the call, rooted in its worktree when it has one), the MCP servers started
//! for it alone, and its system prompt.

use std::sync::Arc;

use toolhost_catalog::agent_files::agent_prompt;
use toolhost_config::AgentConfig;
use toolhost_core::permission::{ToolSelection, is_inherited_by_subagent};
use toolhost_core::{ToolError, ToolRegistry};
use toolhost_mcp::McpClients;

use super::SubAgents;
use super::child::{CHILD_ROLE, ChildSpec, refuse};
use super::worktree::AgentWorktree;
use crate::system_prompt::SystemPromptInputs;
use crate::tool_set::worktree_tools;

impl SubAgents {
    /// The child's tools, the MCP servers started for it alone, and its system prompt.
    pub(super) async fn build_rest(
        &self,
        handle: &SubAgents,
        definition: &AgentConfig,
        spec: &ChildSpec,
        permissions: &crate::Permissions,
        worktree: Option<&AgentWorktree>,
        notes: &mut Vec<String>,
    ) -> Result<
        (
            Arc<ToolRegistry>,
            Option<Arc<McpClients>>,
            String,
            SystemPromptInputs,
        ),
        ToolError,
    > {
        let parent = self
            .scope
            .registry
            .get()
            .ok_or_else(|| refuse("the parent's tools are gone: the run is ending"))?;
        let asked_tools = match &spec.tools {
            None => None,
            Some(names) => Some(
                ToolSelection::parse(names).map_err(|error| refuse(format!("tools: {error}")))?,
            ),
        };
        if let (Some(names), Some(selection)) = (&spec.tools, &asked_tools) {
            let specs = parent.specs();
            let missing: Vec<&String> = names
                .iter()
                .zip(selection.rules())
                .filter(|(_, rule)| !specs.iter().any(|spec| rule.names_tool(spec)))
                .map(|(name, _)| name)
                .collect();
            if !missing.is_empty() {
                notes.push(format!(
                    "tools names {} which this agent does not have, so the sub-agent does not \
                     either",
                    missing
                        .iter()
                        .map(|name| format!("'{name}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        let config = &self.hub.context.config;
        let mut builder = permissions.install(ToolRegistry::builder());
        if let Some(max_chars) = config.limits.max_result_chars {
            builder = builder.max_chars(max_chars);
        }
        let registry = builder.build();
        // In a worktree, the file tools and Bash are rooted there.
        let context = &self.hub.context;
        let own_tools = match worktree {
            Some(worktree) => worktree_tools(config, &context.skills, &worktree.workspace)
                .map_err(|error| refuse(error.to_string()))?,
            None => Vec::new(),
        };
        for tool_spec in parent.specs() {
            let chosen_tool = definition
                .allowed_tools
                .as_ref()
                .is_none_or(|selection| selection.names_tool(&tool_spec))
                && asked_tools
                    .as_ref()
                    .is_none_or(|selection| selection.names_tool(&tool_spec));
            if !(chosen_tool || is_inherited_by_subagent(&tool_spec))
                || definition.disallows(&tool_spec)
            {
                continue;
            }
            if let Some(tool) = handle
                .scoped_tool(&tool_spec.name)
                .or_else(|| {
                    own_tools
                        .iter()
                        .find(|tool| tool.name() == tool_spec.name)
                        .cloned()
                })
                .or_else(|| parent.get(&tool_spec.name))
            {
                let _ = registry.register_arc(tool);
            }
        }
        // Its own servers start, and its instructions are read, where it works.
        let extra_mcp = handle
            .start_own_servers(definition, &parent, &registry)
            .await;
        let inputs = SystemPromptInputs::gather(
            handle.workspace(),
            context.home.as_deref(),
            registry.for_mode(permissions.mode()).names(),
        )
        .with_skills(context.skills.summaries());
        let mut prompt = inputs.render();
        prompt.push_str("\n\n");
        prompt.push_str(CHILD_ROLE);
        if let Some(worktree) = worktree {
            prompt.push_str(&worktree.prompt_note());
        }
        if let Some(body) = agent_prompt(definition).map_err(refuse)? {
            prompt.push_str("\n\n");
            prompt.push_str(&body);
        }
        for name in &definition.skills {
            let Some(skill) = context.skills.get(name) else {
                if let Some(mcp) = &extra_mcp {
                    mcp.shutdown().await;
                }
                return Err(refuse(format!(
                    "the agent '{}' names the skill '{name}' (skills), which is not installed",
                    definition.name
                )));
            };
            match skill.body() {
                Ok(body) => prompt.push_str(&format!("\n\n# Skill: {name}\n\n{body}")),
                Err(warning) => notes.push(warning.to_string()),
            }
        }
        Ok((Arc::new(registry), extra_mcp, prompt, inputs))
    }
}
