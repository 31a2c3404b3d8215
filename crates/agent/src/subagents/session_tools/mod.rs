//! The session tools (R26): `SessionsSpawn`, `SessionsList`, `SessionsSend`,
//! `SessionsHistory` and `SessionsYield`.
//!
//! They see the caller's own session tree (its root session and every session spawned below
//! it). Other sessions of the workspace need an allow rule naming the tool with the specifier
//! `workspace` (`SessionsList(workspace)`, `SessionsHistory(workspace)`,
//! `SessionsSend(workspace)`).

use std::path::PathBuf;
use std::sync::Arc;

use toolhost_core::permission::RuleList;
use toolhost_core::{Tool, ToolError};
use toolhost_session::{Session, SessionStore};

use super::SubAgents;

mod reading;
mod spawn_send;
mod yield_tool;

use reading::{SessionsHistory, SessionsList};
use spawn_send::{SessionsSend, SessionsSpawn};
use yield_tool::SessionsYield;

/// How many sessions `SessionsList` shows unless `limit` says.
pub const DEFAULT_LIST_LIMIT: usize = 20;

/// How many messages `SessionsHistory` shows unless `limit` says (the latest).
pub const DEFAULT_HISTORY_LIMIT: usize = 20;

/// The longest tool output `SessionsHistory` shows, in characters; the rest is cut.
pub const HISTORY_TOOL_OUTPUT_CHARS: usize = 500;

/// The specifier of the allow rule that opens a tool to every session of the workspace.
const WORKSPACE_SPECIFIER: &str = "workspace";

pub(in crate::subagents) fn tools(agents: &SubAgents) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SessionsSpawn(agents.clone())),
        Arc::new(SessionsList(agents.clone())),
        Arc::new(SessionsSend(agents.clone())),
        Arc::new(SessionsHistory(agents.clone())),
        Arc::new(SessionsYield),
    ]
}

fn refuse(message: impl Into<String>) -> ToolError {
    ToolError::new(message.into())
}

impl SubAgents {
    fn store(&self) -> Result<(SessionStore, PathBuf), ToolError> {
        let context = &self.hub.context;
        let path = toolhost_session::views::store_path(&context.config, context.home.as_deref())
            .map_err(|error| refuse(error.to_string()))?;
        if !path.exists() {
            return Err(refuse(
                "there is no session store yet: this run keeps no session (--no-session?)",
            ));
        }
        let store = SessionStore::open(&path).map_err(|error| refuse(error.to_string()))?;
        Ok((store, path))
    }

    /// The sessions of the caller's tree: its root, and every session spawned below it.
    fn session_tree(&self, store: &SessionStore, caller: Option<&str>) -> Vec<Session> {
        let Some(mut root) = caller.and_then(|id| store.get(id).ok()) else {
            return Vec::new();
        };
        while let Some(parent) = root
            .spawned_by
            .as_ref()
            .and_then(|by| by.session.as_ref())
            .and_then(|id| store.get(id.as_str()).ok())
        {
            root = parent;
        }
        let mut tree = vec![root];
        let mut next = 0;
        while next < tree.len() {
            let children = store.children(&tree[next].id).unwrap_or_default();
            tree.extend(children);
            next += 1;
        }
        tree
    }

    /// Whether an allow rule opens `tool` to every session of the workspace.
    fn opens_workspace(&self, tool: &str) -> bool {
        let wanted = format!("{tool}({WORKSPACE_SPECIFIER})");
        self.scope
            .permissions
            .policy()
            .rules()
            .list(RuleList::Allow)
            .iter()
            .any(|rule| rule.as_str() == wanted)
    }

    /// The session `id` (or a unique prefix of it), when `tool` may reach it from the caller.
    fn reachable_session(
        &self,
        tool: &str,
        store: &SessionStore,
        caller: Option<&str>,
        id: &str,
    ) -> Result<Session, ToolError> {
        // The run id SessionsSpawn gave names its session too.
        let by_run = self.visible_run(id).and_then(|run| run.session_id());
        let session = store
            .get(by_run.as_deref().unwrap_or(id))
            .map_err(|error| refuse(format!("sessionId: {error}")))?;
        if self
            .session_tree(store, caller)
            .iter()
            .any(|member| member.id == session.id)
        {
            return Ok(session);
        }
        let workspace = std::fs::canonicalize(&self.hub.context.workspace)
            .unwrap_or_else(|_| self.hub.context.workspace.clone());
        if self.opens_workspace(tool) && session.workspace.as_deref() == Some(workspace.as_path()) {
            return Ok(session);
        }
        Err(refuse(format!(
            "the session {} is not in your session tree, and {tool} sees only that; the user \
             can open every session of the workspace to it with the allow rule \
             '{tool}({WORKSPACE_SPECIFIER})'",
            session.id
        )))
    }
}

fn session_line(session: &Session) -> String {
    format!(
        "{} [{}] {}{}",
        session.id,
        session.status.as_str(),
        session.title.as_deref().unwrap_or("(untitled)"),
        session
            .spawned_by
            .as_ref()
            .and_then(|by| by.session.as_ref())
            .map(|parent| format!(" (spawned by {parent})"))
            .unwrap_or_default()
    )
}
