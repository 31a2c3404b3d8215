//! The tool-set builder: the one place that assembles an agent's registry from the workspace
//! and the configuration, so that the agent loop, `toolhost serve`, `toolhost call`,
//! sub-agents and the terminal UI all offer the same tools, built the same way.
//!
//! Order (R9): the built-in filesystem and shell tools, the web tools (WebSearch, WebFetch),
//! the skills (`list_skills`, `read_skill`), the skill hub (`skillhub_search`,
//! `skillhub_install`), the sub-agent tools (`spawn_agent`) and their queries
//! (`subagent_list`, `subagent_status`), `slash_command`, then the custom tools discovered on
//! disk, then the MCP tools (`mcp__<server>__<tool>`), then the session tools
//! (`SessionsSpawn`, `SessionsList`, `SessionsSend`, `SessionsHistory`, `SessionsYield`), then
//! the control tools (`Notify`, `TodoWrite`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolhost_core::{RegistryError, ToolRegistry};
use toolhost_mcp::client::resource_tools;
use toolhost_mcp::provider::{BridgePolicy, ToolhostProvider};
use toolhost_mcp::{
    McpClients, McpProvider, McpProviders, McpServerConfig, McpStartup, ProviderContext,
};
use toolhost_script::{CustomTools, ScriptHost, ScriptLimits};
use toolhost_tools::control::{TODO_WRITE, TodoWrite};
use toolhost_tools::{NetworkAccess, Notify, ShellSandbox, builtin_tools};

use crate::offered_registry::OfferedRegistry;
use crate::permissions::Permissions;
use crate::subagents::{ParentContext, SubAgents};
use toolhost_catalog::skills::SkillCatalog;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_config::model_choice::ChosenProvider;
use toolhost_config::{AgentConfig, Config};
use toolhost_script::{ExtensionGate, ExtensionResults, ExtensionSession, ExtensionSlot};

use self::skills::{Found, skill_tools};

mod bridge;
mod script_host;
mod skills;
mod temp_writes;
mod web;
mod workspace_tools;

pub use bridge::LazyBridge;
pub use script_host::{PermissionExecGate, PermissionFileGate, WorkspaceFileSystem};
pub(crate) use workspace_tools::worktree_tools;
use workspace_tools::{configured_bash, configured_workspace};

/// Why a tool set could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ToolSetError {
    /// The workspace folder cannot be used.
    #[error("cannot use {path} as the workspace: {message}")]
    Workspace {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A built-in tool could not be registered (two with one name).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// An MCP server marked `required = true` did not start.
    #[error("{0} (it is required = true)")]
    RequiredServer(String),
    /// Starting the MCP servers panicked.
    #[error("starting the MCP servers failed: {0}")]
    McpStart(String),
}

/// An agent's tools, ready to offer: the registry, the custom tools (which can reload when
/// their files change) and the MCP clients (shut them down when done).
pub struct ToolSet {
    /// The tools the agent is offered, in R9's order.
    pub registry: Arc<ToolRegistry>,
    /// The custom tools loaded from disk.
    pub custom: CustomTools,
    /// The MCP servers started for the agent.
    pub mcp: Arc<McpClients>,
    /// The skills found at start (the system prompt lists them).
    pub skills: Arc<SkillCatalog>,
    /// The slash commands found at start (a front end runs `/name` lines with them).
    pub commands: Arc<SlashCommands>,
    /// The agent's sub-agents: its mailbox, the sink of their events, and what stops them.
    pub subagents: SubAgents,
    /// The pi extensions among the custom tools' modules: their handlers and commands.
    pub extensions: Arc<ExtensionSession>,
}

/// Where each custom tool came from, by name (built-ins are absent).
pub type CustomToolSources = BTreeMap<String, PathBuf>;

impl ToolSet {
    /// The built-in tools in the registry: neither custom tools nor the configured MCP
    /// servers' tools (the built-in `toolhost` provider's are built-ins). `--tools` selects
    /// among these (R36): naming seven tools offers no eighth of toolhost's own.
    pub fn builtin_names(&self) -> Vec<String> {
        let custom: Vec<String> = self
            .custom
            .tools()
            .iter()
            .map(|loaded| loaded.tool.name().to_owned())
            .collect();
        let mcp: Vec<String> = self
            .mcp
            .tools()
            .iter()
            .filter(|tool| tool.server_name() != ToolhostProvider::NAME)
            .map(|tool| toolhost_core::Tool::spec(tool.as_ref()).name)
            .collect();
        self.registry
            .names()
            .into_iter()
            .filter(|name| !custom.contains(name) && !mcp.contains(name))
            .collect()
    }
}

/// Builds an agent's [`ToolSet`]: see [`ToolSetBuilder::build`].
pub struct ToolSetBuilder<'a> {
    workspace: &'a Path,
    config: &'a Config,
    agent: &'a AgentConfig,
    permissions: &'a Permissions,
    offered: OfferedRegistry,
    providers: Option<McpProviders>,
    home: Option<PathBuf>,
    model: Option<ChosenProvider>,
    mcp_startup: McpStartup,
    prefetch_catalog: bool,
}

impl<'a> ToolSetBuilder<'a> {
    /// The tools of `agent` in `workspace` under `config`, authorised by `permissions`.
    pub fn new(
        workspace: &'a Path,
        config: &'a Config,
        agent: &'a AgentConfig,
        permissions: &'a Permissions,
    ) -> Self {
        Self {
            workspace,
            config,
            agent,
            permissions,
            offered: OfferedRegistry::default(),
            providers: None,
            home: std::env::var_os("HOME").map(PathBuf::from),
            model: None,
            mcp_startup: McpStartup::WaitForAll,
            prefetch_catalog: false,
        }
    }

    /// The home folder whose `~/.toolhost/skills`, `~/.claude/skills` and commands folders
    /// are read, and where hub skills install (default: `$HOME`; `None`: no user skills).
    #[must_use]
    pub fn home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The provider the run asks, whose own web search (when it has one) is WebSearch's
    /// first tier.
    #[must_use]
    pub fn model(mut self, chosen: Option<ChosenProvider>) -> Self {
        self.model = chosen;
        self
    }

    /// Tell `offered` the registry once it exists (for `mcp__toolhost__status`).
    #[must_use]
    pub fn offered(mut self, offered: OfferedRegistry) -> Self {
        self.offered = offered;
        self
    }

    /// Start reading the slash-command files on another thread at once: for an agent, whose
    /// first request lists them (by default they are read when first asked for).
    #[must_use]
    pub fn prefetch_catalog(mut self) -> Self {
        self.prefetch_catalog = true;
        self
    }

    /// What `build` waits for of the MCP servers (default: every one). With
    /// [`McpStartup::Background`] only `required` servers are in the registry at first; the
    /// others' tools join the registry given to [`McpClients::keep_in_sync`] when ready.
    #[must_use]
    pub fn mcp_startup(mut self, startup: McpStartup) -> Self {
        self.mcp_startup = startup;
        self
    }

    /// These built-in MCP providers instead of [`built_in_providers`].
    #[must_use]
    pub fn providers(mut self, providers: McpProviders) -> Self {
        self.providers = Some(providers);
        self
    }

    /// Assembles the tool set; see [`build_registry_with`] for what it holds.
    pub async fn build(self) -> Result<ToolSet, ToolSetError> {
        let providers = self
            .providers
            .unwrap_or_else(|| built_in_providers(self.workspace, &self.offered));
        let found = Found::discover(self.workspace, self.home.clone(), self.config);
        if self.prefetch_catalog {
            found.commands.prefetch();
        }
        let (skills, commands) = (Arc::clone(&found.skills), Arc::clone(&found.commands));
        let subagents = SubAgents::root(
            ParentContext {
                workspace: self.workspace.to_path_buf(),
                home: self.home,
                config: Arc::new(self.config.clone()),
                skills: Arc::clone(&skills),
                commands: Arc::clone(&commands),
            },
            self.permissions.clone(),
            OfferedRegistry::default(),
        );
        if let Some(model) = &self.model {
            subagents.set_provider(model);
        }
        let slot = Arc::new(ExtensionSlot::default());
        let (registry, custom, mcp) = build_registry_with(
            self.workspace,
            self.config,
            self.agent,
            &providers,
            self.permissions,
            &self.offered,
            BuiltinInputs {
                found: &found,
                model: self.model.as_ref(),
                subagents: &subagents,
                mcp_startup: self.mcp_startup,
                extensions: &slot,
            },
        )
        .await?;
        subagents.offer_from(&registry);
        let extensions = Arc::new(ExtensionSession::new(
            slot.get().cloned().unwrap_or_default(),
            Arc::clone(custom.host()),
        ));
        Ok(ToolSet {
            registry,
            custom,
            mcp,
            skills,
            commands,
            subagents,
            extensions,
        })
    }
}

/// What the built-in tools are made from besides the configuration: the skills and commands
/// found, and the provider whose own web search WebSearch may use; and what to wait for of
/// the MCP servers.
struct BuiltinInputs<'a> {
    found: &'a Found,
    model: Option<&'a ChosenProvider>,
    subagents: &'a SubAgents,
    mcp_startup: McpStartup,
    /// Where the extensions found among the custom tools go (their handlers are in the
    /// registry's pipeline).
    extensions: &'a Arc<ExtensionSlot>,
}

/// The built-in MCP providers (R30): `toolhost` (`mcp__toolhost__status`).
pub fn built_in_providers(workspace: &Path, offered: &OfferedRegistry) -> McpProviders {
    let offered = offered.clone();
    let toolhost = ToolhostProvider::new(workspace, Arc::new(move || offered.names()));
    let mut providers = McpProviders::new();
    // The only one so far: its name cannot clash.
    let _ = providers.register(Arc::new(toolhost));
    providers
}

/// The registry of `agent` in this workspace: every built-in tool, with the configured limits
/// and the permission system (the skill, hub and slash-command tools over what `found` holds;
/// skill folders outside the workspace become read-only roots), then the custom tools
/// discovered on disk (R33–R35), then the MCP tools, then Notify. A custom
/// tool that fails to load or clashes is logged as a warning; the others still load. The
/// returned [`CustomTools`] can reload them when their files change (`toolhost serve`).
///
/// The MCP servers the agent sees start meanwhile, all at once (R30): the user servers it
/// selects and its direct servers. Their tools come last, named `mcp__<server>__<tool>`, next
/// to the built-in providers eligible for the agent (`mcp__toolhost__status`), which its Bash
/// commands also reach through the bridge ([`LazyBridge`]): only the tools the agent is
/// offered, each call judged by `permissions` without asking anyone (a call that would ask is
/// refused unless a rule allows it, or `--yes` approves everything). Commands that
/// `[shell] network = false` keeps off the network (under a sandbox) get no bridge. A server that fails is reported on
/// stderr with its name and the end of its stderr and left out, unless it is `required`: then
/// the command stops.
///
/// The registry holds the tools the agent is offered ([`AgentConfig::offered`]: its
/// `allowed_tools`); `offered` is set to it.
///
/// `providers` are the built-in MCP providers, of which the agent sees the eligible.
async fn build_registry_with(
    workspace: &Path,
    config: &Config,
    agent: &AgentConfig,
    providers: &McpProviders,
    permissions: &Permissions,
    offered: &OfferedRegistry,
    BuiltinInputs {
        found,
        model,
        subagents,
        mcp_startup,
        extensions,
    }: BuiltinInputs<'_>,
) -> Result<(Arc<ToolRegistry>, CustomTools, Arc<McpClients>), ToolSetError> {
    let context = ProviderContext::new(agent.name.as_str(), permissions.mode());
    let providers = providers.eligible(&context);
    let mut bash_settings = configured_bash(config);
    // A command the sandbox keeps off the network could not reach the bridge: it gets none.
    let offline = bash_settings.network == NetworkAccess::Denied
        && bash_settings.sandbox != ShellSandbox::Off;
    let policy = BridgePolicy {
        serves: {
            let agent = agent.clone();
            Arc::new(move |tool| agent.offers(tool))
        },
        authorizer: Arc::new(permissions.policy().without_asking()),
        result_handler: permissions.result_handler(),
    };
    let agent_authorizer: Arc<dyn toolhost_core::Authorizer> = permissions.policy().clone();
    if !offline
        && let Some(bridge) =
            LazyBridge::for_providers(providers.clone(), policy, Some(agent_authorizer))
    {
        bash_settings.extra_environment = Some(bridge);
    }
    let servers = config.mcp_servers_for(agent);
    let serves_resources = servers.iter().any(|server| server.enabled);
    let mcp = tokio::spawn(start_mcp_servers(
        workspace.to_path_buf(),
        servers,
        providers,
        mcp_startup,
    ));
    // pi's tool_call handlers come before the policy; tool_result handlers before the
    // PostToolUse hooks.
    let mut builder = ToolRegistry::builder()
        .authorizer(Arc::new(ExtensionGate {
            inner: permissions.policy().clone(),
            slot: Arc::clone(extensions),
        }))
        .result_handler(Arc::new(ExtensionResults {
            slot: Arc::clone(extensions),
        }));
    if let Some(hooks) = permissions.result_handler() {
        builder = builder.result_handler(hooks);
    }
    if let Some(max_chars) = config.limits.max_result_chars {
        builder = builder.max_chars(max_chars);
    }
    let registry = builder.build();
    let workspace_root = workspace;
    let workspace = configured_workspace(config, &found.skills, workspace)?;
    let (search, fetch) = web::web_settings(config, model, &|name| std::env::var(name).ok());
    let mut builtins = builtin_tools(Arc::clone(&workspace), bash_settings, search, fetch);
    let mut skill_and_command_tools = skill_tools(config, found, offered);
    // R9: the sub-agent groups come between the skill hub and slash_command.
    let slash_command = skill_and_command_tools.split_off(skill_and_command_tools.len() - 1);
    builtins.extend(skill_and_command_tools);
    builtins.extend(subagents.subagent_tools());
    builtins.extend(slash_command);
    let refused = registry.register_all(builtins);
    if let Some(error) = refused.into_iter().next() {
        return Err(error.into());
    }
    let notify: Arc<dyn toolhost_core::Tool> = Arc::new(Notify::new());

    let mut host = ScriptHost::builder(workspace.root())
        .version(env!("CARGO_PKG_VERSION"))
        .limits(script_limits(config))
        .file_system(Arc::new(WorkspaceFileSystem {
            workspace: Arc::clone(&workspace),
            temp: temp_writes::temp_workspace(),
        }));
    if let Some(bash) = registry.get("Bash") {
        host = host.exec_gate(Arc::new(PermissionExecGate {
            policy: Arc::clone(permissions.policy()),
            bash,
        }));
    }
    if let (Some(read), Some(list), Some(write)) = (
        registry.get("Read"),
        registry.get("ListDir"),
        registry.get("Write"),
    ) {
        host = host.file_gate(Arc::new(PermissionFileGate {
            policy: Arc::clone(permissions.policy()),
            read,
            list,
            write,
            workspace_root: workspace.root().to_path_buf(),
        }));
    }
    // Notify is registered after the MCP tools (R9: control comes last), but a custom tool
    // must not take its name.
    let session_tools = subagents.session_tools();
    // A built-in named in `replace_builtins` may be taken by a custom tool, which replaces it.
    let replaceable = &config.custom_tools.replace_builtins;
    let mut taken = registry.names();
    taken.retain(|name| !replaceable.contains(name));
    taken.push(notify.name());
    taken.push(TODO_WRITE.to_owned());
    taken.extend(session_tools.iter().map(|tool| tool.name()));
    let (custom, discovery) = CustomTools::discover(
        host.build(),
        config.custom_tools.paths.clone(),
        workspace_root.to_path_buf(),
        taken,
    )
    .await;
    for error in &discovery.errors {
        tracing::warn!("{error}");
    }
    extensions.set(Arc::new(toolhost_script::Extensions::new(
        discovery.extensions.clone(),
    )));
    for loaded in &discovery.tools {
        if replaceable.iter().any(|name| name == loaded.tool.name()) {
            registry.unregister(loaded.tool.name());
        }
    }
    for refused in registry.register_all(discovery.tools.into_iter().map(|loaded| {
        let tool: Arc<dyn toolhost_core::Tool> = loaded.tool;
        tool
    })) {
        tracing::warn!("a custom tool is refused: {refused}");
    }
    let mcp = mcp
        .await
        .map_err(|error| ToolSetError::McpStart(error.to_string()))??;
    for refused in mcp.register_into(&registry) {
        tracing::warn!("an MCP tool is refused: {refused}");
    }
    // The configured servers' resources, through the tools Codex names.
    if serves_resources {
        for refused in registry.register_all(resource_tools(&mcp)) {
            tracing::warn!("an MCP resource tool is refused: {refused}");
        }
    }
    for tool in session_tools {
        registry.register_arc(tool)?;
    }
    registry.register_arc(notify)?;
    registry.register_arc(Arc::new(TodoWrite))?;
    // A server still starting has no tools yet: its entries are not typos.
    let unmatched = agent
        .unmatched_allowed_tools(|named| registry.any_spec(named))
        .into_iter()
        .filter(|entry| mcp_startup == McpStartup::WaitForAll || !entry.starts_with("mcp__"));
    for entry in unmatched {
        tracing::warn!(
            "agent '{}': allowed_tools entry '{entry}' names no tool (a typo, or an MCP server \
             that did not start?)",
            agent.name
        );
    }
    let registry = Arc::new(agent.offered(&registry));
    offered.set(&registry);
    Ok((registry, custom, mcp))
}

/// Starts the MCP `servers` and the built-in `providers`; a `required` server that fails is an
/// error.
async fn start_mcp_servers(
    workspace: PathBuf,
    servers: Vec<McpServerConfig>,
    providers: Vec<Arc<dyn McpProvider>>,
    startup: McpStartup,
) -> Result<Arc<McpClients>, ToolSetError> {
    let (clients, report) = McpClients::start_with(servers, providers, &workspace, startup).await;
    if let Some(failure) = report.required_failure() {
        clients.shutdown().await;
        return Err(ToolSetError::RequiredServer(failure.to_string()));
    }
    for failure in &report.failures {
        tracing::warn!("{failure}; its tools are left out for now");
    }
    Ok(clients)
}

/// Where each custom tool came from, by name.
pub fn custom_tool_sources(custom: &CustomTools) -> CustomToolSources {
    custom
        .tools()
        .iter()
        .map(|loaded| (loaded.tool.name().to_owned(), loaded.path.clone()))
        .collect()
}

/// The engine's limits with the `[custom_tools]` overrides.
fn script_limits(config: &Config) -> ScriptLimits {
    let custom = &config.custom_tools;
    let defaults = ScriptLimits::default();
    ScriptLimits {
        call_time_limit: custom.call_timeout.unwrap_or(defaults.call_time_limit),
        load_time_limit: custom.load_timeout.unwrap_or(defaults.load_time_limit),
        memory_limit: custom
            .memory_limit_mb
            .map_or(defaults.memory_limit, |megabytes| megabytes * 1024 * 1024),
        ..defaults
    }
}

#[cfg(test)]
mod tests;
