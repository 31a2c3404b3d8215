//! Putting an agent together: the provider and model, the tool set, the system prompt and the
//! loop — the same way for `toolhost run`, `toolhost chat` and sub-agents.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolhost_core::ToolRegistry;
use toolhost_providers::{ModelProvider, ProviderError};

use toolhost_config::providers::DEFAULT_MAX_ITERATIONS;

use crate::agent_loop::AgentLoop;
use crate::permissions::Permissions;
use crate::provider_connect::connect_provider;
use crate::system_prompt::SystemPromptInputs;
use crate::tool_set::{ToolSet, ToolSetBuilder, ToolSetError};
use toolhost_catalog::agent_files::agent_prompt;
use toolhost_config::model_choice::{
    ChosenProvider, ModelChoiceError, ModelFlags, choose_provider,
};
use toolhost_config::{AgentConfig, Config};
use toolhost_hooks::PreCompactHooks;

/// An agent ready to run.
pub struct AssembledAgent {
    /// The loop, with its provider, tools and system prompt.
    pub agent: AgentLoop,
    /// Every tool built for the agent (the loop offers the filtered part); keep it alive for
    /// the run and shut its MCP servers down afterwards.
    pub tools: ToolSet,
    /// What the system prompt was made of.
    pub prompt: SystemPromptInputs,
    /// The tools offered before the permission mode filtered them (`for_mode`): what a
    /// switch of mode filters again.
    pub offered: Arc<ToolRegistry>,
    /// The provider and model asked.
    pub provider: ChosenProvider,
}

/// Why an agent could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum AssemblyError {
    /// No usable provider or model (a usage error: say what to set).
    #[error(transparent)]
    Model(#[from] ModelChoiceError),
    /// The provider's settings are not usable.
    #[error(transparent)]
    Connect(#[from] ProviderError),
    /// The tools could not be built.
    #[error(transparent)]
    Tools(#[from] ToolSetError),
    /// `--tools` names a tool that is not built in (R36).
    #[error("--tools names '{name}', which is not a built-in tool; the built-in tools are: {}", builtins.join(", "))]
    UnknownTool {
        /// The name as given.
        name: String,
        /// The built-in tools.
        builtins: Vec<String>,
    },
    /// The agent's prompt (the body of its file) cannot be read.
    #[error("{0}")]
    Prompt(String),
}

impl AssemblyError {
    /// Whether the command line or configuration is at fault (exit status 2), rather than
    /// something at run time.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            Self::Model(_) | Self::UnknownTool { .. } | Self::Connect(ProviderError::Config(_))
        )
    }
}

/// Reads an environment variable.
type Environment = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What to assemble: see [`AgentSetup::assemble`].
pub struct AgentSetup<'a> {
    workspace: &'a Path,
    home: Option<PathBuf>,
    config: &'a Config,
    agent: &'a AgentConfig,
    permissions: &'a Permissions,
    model: ModelFlags,
    builtin_tools: Option<Vec<String>>,
    max_iterations: Option<usize>,
    env: Environment,
}

impl<'a> AgentSetup<'a> {
    /// The agent `agent` in `workspace` under `config`, authorised by `permissions`, reading
    /// API keys from the process environment.
    pub fn new(
        workspace: &'a Path,
        config: &'a Config,
        agent: &'a AgentConfig,
        permissions: &'a Permissions,
    ) -> Self {
        Self {
            workspace,
            home: None,
            config,
            agent,
            permissions,
            model: ModelFlags::default(),
            builtin_tools: None,
            max_iterations: None,
            env: Box::new(|name| std::env::var(name).ok()),
        }
    }

    /// The home folder whose `~/.toolhost/AGENTS.md` joins the system prompt.
    #[must_use]
    pub fn home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// `--provider` and `--model`.
    #[must_use]
    pub fn model(mut self, flags: ModelFlags) -> Self {
        self.model = flags;
        self
    }

    /// `--tools`: only these built-in tools are offered (custom and MCP tools stay).
    #[must_use]
    pub fn builtin_tools(mut self, names: Option<Vec<String>>) -> Self {
        self.builtin_tools = names;
        self
    }

    /// `--max-iterations`, over `[agent] max_iterations`.
    #[must_use]
    pub fn max_iterations(mut self, limit: Option<usize>) -> Self {
        self.max_iterations = limit;
        self
    }

    /// Where API keys and the conventional variables are read from (tests).
    #[must_use]
    pub fn environment(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Box::new(env);
        self
    }

    /// Chooses the provider (failing before any MCP server starts when none fits), builds the
    /// tool set, keeps what the mode and `--tools` offer, and writes the system prompt.
    pub async fn assemble(self) -> Result<AssembledAgent, AssemblyError> {
        // The first request lists the agents (spawn_agent) and the slash commands: their files
        // are read on other threads while the provider and the tools are set up.
        self.config.agents.prefetch();
        let mut chosen = choose_provider(self.config, &self.model, &*self.env)?;
        // `--agent NAME` runs as its definition says, unless the flags (or a resumed session)
        // name the model.
        if self.model.provider.is_none() && self.model.model.is_none() {
            chosen = crate::subagents::definition_model(
                self.config,
                chosen,
                self.agent.model.as_deref(),
            )
            .map_err(|error| {
                ModelChoiceError::new(format!("agent '{}': {error}", self.agent.name))
            })?;
        }
        let provider: Arc<dyn ModelProvider> = connect_provider(&chosen)?;
        let tools = ToolSetBuilder::new(self.workspace, self.config, self.agent, self.permissions)
            .home(self.home.clone())
            .model(Some(chosen.clone()))
            .prefetch_catalog()
            .build()
            .await?;
        let offered = match offered_tools(&tools, self.builtin_tools.as_deref()) {
            Ok(offered) => Arc::new(offered),
            Err(error) => {
                tools.mcp.shutdown().await;
                return Err(error);
            }
        };
        // Sub-agents take their tools from what this agent is offered (after `--tools`).
        tools.subagents.offer_from(&offered);
        let for_mode = offered.for_mode(self.permissions.mode());
        let prompt =
            SystemPromptInputs::gather(self.workspace, self.home.as_deref(), for_mode.names())
                .with_skills(tools.skills.summaries());
        let max_iterations = self
            .max_iterations
            .or(self.agent.max_turns)
            .or(self.config.agent_settings.max_iterations)
            .unwrap_or(DEFAULT_MAX_ITERATIONS);
        let mut system_prompt = prompt.render();
        if let Some(section) =
            toolhost_script::in_session::prompt_section(&tools.custom, &for_mode.names())
        {
            system_prompt.push_str(&section);
        }
        if let Some(body) = agent_prompt(self.agent).map_err(AssemblyError::Prompt)? {
            system_prompt.push_str("\n\n");
            system_prompt.push_str(&body);
        }
        let for_mode = Arc::new(for_mode);
        tools.extensions.add_registry(Arc::clone(&for_mode));
        let mut agent = AgentLoop::new(provider, for_mode, system_prompt)
            .extensions(Arc::clone(&tools.extensions))
            .max_iterations(max_iterations)
            .todo_reminder_turns(self.config.todo.reminder_turns())
            .max_output_tokens(chosen.entry.max_output_tokens)
            .reasoning_effort(self.agent.effort)
            .inbox(tools.subagents.inbox());
        if let Some(share) = self.config.agent_settings.compact_at {
            agent = agent.compact_at(share);
        }
        agent = agent.defer_tools(
            self.config.tools.defer_threshold,
            self.config.tools.always_loaded.clone(),
        );
        if !self.config.hooks.pre_compact.is_empty() {
            agent = agent.pre_compact_hooks(Arc::new(PreCompactHooks::new(
                self.config.hooks.pre_compact.clone(),
                self.workspace,
                Arc::clone(self.permissions.policy()),
            )));
        }
        Ok(AssembledAgent {
            agent,
            tools,
            prompt,
            offered,
            provider: chosen,
        })
    }
}

/// The tool set without the built-ins `--tools` leaves out.
fn offered_tools(
    tools: &ToolSet,
    selected: Option<&[String]>,
) -> Result<ToolRegistry, AssemblyError> {
    let Some(selected) = selected else {
        return Ok(tools.registry.filter(|_| true));
    };
    let builtins = tools.builtin_names();
    if let Some(unknown) = selected.iter().find(|name| !builtins.contains(name)) {
        return Err(AssemblyError::UnknownTool {
            name: unknown.clone(),
            builtins,
        });
    }
    Ok(tools
        .registry
        .filter(|spec| !builtins.contains(&spec.name) || selected.contains(&spec.name)))
}
