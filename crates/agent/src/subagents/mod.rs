//! Sub-agents (R25) and the session tools (R26): a model hands work to another agent loop, in
//! the foreground (its answer is the tool's result) or in the background (its answer reaches
//! the parent at its next turn), and talks to other sessions of its tree.
//!
//! Every agent of one top-level run shares a [`SubAgents`] hub: the runs it started, the
//! limits (`[subagents] max_depth`, `max_concurrent`), the sink that tells the front end a
//! child's progress ([`AgentEvent::SubAgent`]), and the sessions with a live run in this
//! process. Each agent — the top-level one, each child — has its own scope in it: its depth,
//! its mailbox, its permission system and its tools, from which its children's are taken.
//!
//! A child gets its definition's tools (or the call's `tools`) from its parent's, plus what
//! R18 makes it inherit (`list_skills`, `read_skill`, `slash_command`, every `mcp__*` tool),
//! never what its definition disallows; its permission mode is the stricter of the one it asks
//! for and its parent's, and it keeps its parent's rules, hooks and approver. Its run is a
//! child session in the store (when its parent's session is kept there). Its cancellation is
//! a child of its parent's call, so cancelling the parent cancels it and its process trees.

mod child;
mod child_session;
mod child_setup;
mod choice;

pub(crate) use choice::definition_model;
pub mod listing;
mod mailbox;
mod own_servers;
mod query;
mod runs;
mod session_tools;
mod spawn_agent;
mod worktree;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use tokio::task::JoinHandle;
use toolhost_core::Tool;

use crate::agent_loop::{AgentEvent, AgentEventSink, Inbox};
use crate::offered_registry::OfferedRegistry;
use crate::permissions::Permissions;
use crate::slash_command_tool::SlashCommandTool;
use toolhost_catalog::skills::SkillCatalog;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_config::model_choice::ChosenProvider;
use toolhost_config::{Config, SubagentsConfig};

pub use runs::{RunStatus, STATUS_TOOL_CALLS};
pub use worktree::{GIT_TIMEOUT, WORKTREES_FOLDER};

use mailbox::Mailbox;
use runs::RunRecord;

/// The sub-agent tools (R9's "sub-agent" and "sub-agent query" groups), made per agent.
pub const SUBAGENT_TOOLS: [&str; 3] = ["spawn_agent", "subagent_list", "subagent_status"];

/// The session tools (R9's "sessions" group), made per agent.
pub const SESSION_TOOLS: [&str; 5] = [
    "SessionsSpawn",
    "SessionsList",
    "SessionsSend",
    "SessionsHistory",
    "SessionsYield",
];

/// The definition a child runs when `spawn_agent` names none (unless configured, every tool of
/// its parent and no prompt of its own), as Claude Code's general-purpose agent.
pub const GENERAL_PURPOSE_AGENT: &str = "general-purpose";

/// What a child is made from besides its parent's scope.
pub struct ParentContext {
    /// The workspace.
    pub workspace: PathBuf,
    /// The home folder (AGENTS.md, the session store).
    pub home: Option<PathBuf>,
    /// The configuration: agent definitions, providers, limits.
    pub config: Arc<Config>,
    /// The skills found at start (a definition's `skills` join its prompt).
    pub skills: Arc<SkillCatalog>,
    /// The slash commands found at start (a child's own `slash_command` runs them).
    pub commands: Arc<SlashCommands>,
}

/// What every agent of one top-level run shares.
struct Hub {
    context: ParentContext,
    limits: SubagentsConfig,
    runs: Mutex<Vec<Arc<RunRecord>>>,
    next_run: AtomicU64,
    events: RwLock<Option<AgentEventSink>>,
    background: Mutex<Vec<JoinHandle<()>>>,
    /// Sessions with a run going on in this process, and that run's mailbox.
    live_sessions: Mutex<HashMap<String, Arc<Mailbox>>>,
}

/// One agent of the tree.
struct Scope {
    /// Its run (`None`: the top-level agent).
    run_id: Option<String>,
    depth: usize,
    mailbox: Arc<Mailbox>,
    permissions: Permissions,
    /// Every tool it is offered (before its mode filters them): its children's come from here.
    registry: OfferedRegistry,
    /// Its model (a child's `model: inherit`); `None` until known.
    provider: RwLock<Option<ChosenProvider>>,
    /// Where it works when that is not the workspace: the git worktree of a sub-agent with
    /// `isolation: worktree`, and of its own sub-agents.
    workspace: Option<PathBuf>,
}

/// One agent's handle on the shared hub: makes its sub-agent and session tools, reads its
/// mailbox, and (for the top-level agent) stops every background run at the end.
#[derive(Clone)]
pub struct SubAgents {
    hub: Arc<Hub>,
    scope: Arc<Scope>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SubAgents {
    /// The hub of a top-level agent authorised by `permissions`, whose tools `registry` will
    /// hold.
    pub fn root(
        context: ParentContext,
        permissions: Permissions,
        registry: OfferedRegistry,
    ) -> Self {
        let limits = context.config.subagents;
        let hub = Arc::new(Hub {
            context,
            limits,
            runs: Mutex::default(),
            next_run: AtomicU64::new(1),
            events: RwLock::new(None),
            background: Mutex::default(),
            live_sessions: Mutex::default(),
        });
        Self {
            hub,
            scope: Arc::new(Scope {
                run_id: None,
                depth: 0,
                mailbox: Arc::default(),
                permissions,
                registry,
                provider: RwLock::new(None),
                workspace: None,
            }),
        }
    }

    /// The top-level agent asks `provider`: a child's `model: inherit` is this one.
    pub fn set_provider(&self, provider: &ChosenProvider) {
        *self
            .scope
            .provider
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(provider.clone());
    }

    /// From now on, children take their tools from `registry` (what the agent is offered
    /// after `--tools`).
    pub fn offer_from(&self, registry: &Arc<toolhost_core::ToolRegistry>) {
        self.scope.registry.set(registry);
    }

    /// Where the children's events go (tagged [`AgentEvent::SubAgent`]): the front end's
    /// sink, usually the one the top-level loop writes to.
    pub fn set_events(&self, sink: AgentEventSink) {
        *self
            .hub
            .events
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    /// Where this agent works: its git worktree, or the workspace.
    fn workspace(&self) -> &std::path::Path {
        self.scope
            .workspace
            .as_deref()
            .unwrap_or(&self.hub.context.workspace)
    }

    /// This agent's mailbox, for its loop ([`crate::agent_loop::AgentLoop::inbox`]).
    pub fn inbox(&self) -> Arc<dyn Inbox> {
        Arc::clone(&self.scope.mailbox) as Arc<dyn Inbox>
    }

    /// This agent's `spawn_agent`, `subagent_list` and `subagent_status`, in R9's order.
    pub fn subagent_tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(spawn_agent::SpawnAgent::new(self.clone())),
            Arc::new(query::SubagentList::new(self.clone())),
            Arc::new(query::SubagentStatus::new(self.clone())),
        ]
    }

    /// This agent's session tools, in R26's order.
    pub fn session_tools(&self) -> Vec<Arc<dyn Tool>> {
        session_tools::tools(self)
    }

    /// This agent's tool named `name`, when it is one of [`SUBAGENT_TOOLS`], [`SESSION_TOOLS`]
    /// or `slash_command` (a child gets its own, not its parent's: a command's `!` lines and
    /// files then go through the child's registry and policy).
    fn scoped_tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if name == "slash_command" {
            return Some(Arc::new(SlashCommandTool::new(
                Arc::clone(&self.hub.context.commands),
                self.scope.registry.clone(),
            )));
        }
        self.subagent_tools()
            .into_iter()
            .chain(self.session_tools())
            .find(|tool| tool.name() == name)
    }

    /// Cancels every run still going on and waits for them (their process trees stopped and
    /// their sessions marked): call it before the process exits.
    pub async fn shutdown(&self) {
        for run in lock(&self.hub.runs).iter() {
            run.cancel.cancel();
        }
        loop {
            let tasks: Vec<JoinHandle<()>> = std::mem::take(&mut *lock(&self.hub.background));
            if tasks.is_empty() {
                break;
            }
            for task in tasks {
                let _ = task.await;
            }
        }
    }

    /// A new run id: `run-1`, `run-2`, … in the order they were asked for.
    fn next_run_id(&self) -> String {
        format!("run-{}", self.hub.next_run.fetch_add(1, Ordering::Relaxed))
    }

    /// The runs this agent started.
    fn own_runs(&self) -> Vec<Arc<RunRecord>> {
        lock(&self.hub.runs)
            .iter()
            .filter(|run| run.parent_run == self.scope.run_id)
            .cloned()
            .collect()
    }

    /// The run `id`, when this agent or one of its descendants started it.
    fn visible_run(&self, id: &str) -> Option<Arc<RunRecord>> {
        let runs = lock(&self.hub.runs);
        let run = runs.iter().find(|run| run.id == id)?;
        let mut parent = run.parent_run.clone();
        loop {
            if parent == self.scope.run_id {
                return Some(Arc::clone(run));
            }
            let above = runs
                .iter()
                .find(|candidate| Some(&candidate.id) == parent.as_ref())?;
            parent = above.parent_run.clone();
        }
    }

    /// Tells the front end one of a child's events.
    fn tell(&self, run: &RunRecord, event: AgentEvent) {
        let sink = self
            .hub
            .events
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(sink) = sink {
            sink(AgentEvent::SubAgent {
                run_id: run.id.clone(),
                agent: run.agent.clone(),
                parent_call_id: run.parent_call_id.clone(),
                event: Box::new(event),
            });
        }
    }
}
