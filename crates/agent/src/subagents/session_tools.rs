//! The session tools (R26): `SessionsSpawn`, `SessionsList`, `SessionsSend`,
//! `SessionsHistory` and `SessionsYield`.
//!
//! They see the caller's own session tree (its root session and every session spawned below
//! it). Other sessions of the workspace need an allow rule naming the tool with the specifier
//! `workspace` (`SessionsList(workspace)`, `SessionsHistory(workspace)`,
//! `SessionsSend(workspace)`).

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::conversation::Message;
use toolhost_core::permission::RuleList;
use toolhost_core::{
    ContentBlock, Sensitivity, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec,
    TypedTool,
};
use toolhost_session::{Session, SessionStore};

use super::child::ChildSpec;
use super::{SubAgents, lock};

/// How many sessions `SessionsList` shows unless `limit` says.
pub const DEFAULT_LIST_LIMIT: usize = 20;

/// How many messages `SessionsHistory` shows unless `limit` says (the latest).
pub const DEFAULT_HISTORY_LIMIT: usize = 20;

/// The longest tool output `SessionsHistory` shows, in characters; the rest is cut.
pub const HISTORY_TOOL_OUTPUT_CHARS: usize = 500;

/// The specifier of the allow rule that opens a tool to every session of the workspace.
const WORKSPACE_SPECIFIER: &str = "workspace";

pub(super) fn tools(agents: &SubAgents) -> Vec<Arc<dyn Tool>> {
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
        let path = crate::sessions::store_path(&context.config, context.home.as_deref())
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

/// Parameters of `SessionsSpawn`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsSpawnParams {
    /// The first message of the new session: its whole task.
    pub prompt: String,
    /// The agent definition it runs (default: general-purpose).
    pub agent_id: Option<String>,
    /// Its title (default: the agent and the prompt's first line).
    pub title: Option<String>,
}

/// Starts a session that works in the background.
pub struct SessionsSpawn(SubAgents);

impl TypedTool for SessionsSpawn {
    type Params = SessionsSpawnParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "SessionsSpawn",
            "Starts a new session, a child of yours, that works on the prompt in the \
             background; its id comes back at once and its answer arrives as a message at a \
             later turn. SessionsSend gives it more to do, SessionsHistory reads it.",
        )
        .with_label("Spawn session")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        params: SessionsSpawnParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let spec = ChildSpec {
            prompt: params.prompt,
            agent: params.agent_id,
            title: params.title,
            background: Some(true),
            needs_store: true,
            call_id: ctx.call_id().to_owned(),
            caller_session: ctx.session().session_id.clone(),
            ..ChildSpec::default()
        };
        let child = self
            .0
            .prepare_child(spec, ctx.cancellation().child_token())
            .await?;
        let record = Arc::clone(&child.record);
        self.0.start_background(child);
        let session = record.session_id().unwrap_or_default();
        Ok(ToolOutput::text(format!(
            "Started the session {session} (agent {}, run {}). Its answer will be delivered to \
             you when it finishes; SessionsSend {session} gives it more to do.",
            record.agent, record.id
        ))
        .with_details(json!({"sessionId": session, "runId": record.id})))
    }
}

/// Parameters of `SessionsList`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsListParams {
    /// How many sessions to show (default 20).
    pub limit: Option<usize>,
    /// How many to skip first.
    pub offset: Option<usize>,
}

/// Lists the sessions the caller may reach.
pub struct SessionsList(SubAgents);

impl TypedTool for SessionsList {
    type Params = SessionsListParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "SessionsList",
            "Lists the sessions of your session tree (yours, the one that spawned it, the \
             ones spawned below it): id, status, title.",
        )
        .with_label("List sessions")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        params: SessionsListParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (store, _) = self.0.store()?;
        let caller = ctx.session().session_id.clone();
        let mut sessions = self.0.session_tree(&store, caller.as_deref());
        if self.0.opens_workspace("SessionsList") {
            let workspace = std::fs::canonicalize(&self.0.hub.context.workspace)
                .unwrap_or_else(|_| self.0.hub.context.workspace.clone());
            for session in store
                .list_in_workspace(&workspace, usize::MAX >> 1, 0)
                .map_err(|error| refuse(error.to_string()))?
            {
                if !sessions.iter().any(|known| known.id == session.id) {
                    sessions.push(session);
                }
            }
        }
        let total = sessions.len();
        let shown: Vec<&Session> = sessions
            .iter()
            .skip(params.offset.unwrap_or(0))
            .take(params.limit.unwrap_or(DEFAULT_LIST_LIMIT))
            .collect();
        let mut text = format!("{total} session{}:", if total == 1 { "" } else { "s" });
        for session in &shown {
            let mine = caller.as_deref() == Some(session.id.as_str());
            text.push_str(&format!(
                "\n{}{}",
                session_line(session),
                if mine { " (you)" } else { "" }
            ));
        }
        let details: Vec<_> = shown
            .iter()
            .map(|session| {
                json!({
                    "sessionId": session.id.as_str(),
                    "title": session.title,
                    "status": session.status.as_str(),
                    "parent": session.spawned_by.as_ref().and_then(|by| by.session.as_ref()).map(|id| id.as_str().to_owned()),
                })
            })
            .collect();
        Ok(ToolOutput::text(text).with_details(json!({"total": total, "sessions": details})))
    }
}

/// Parameters of `SessionsSend`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsSendParams {
    /// The session: its id, a unique prefix of it, or the run id SessionsSpawn gave.
    pub session_id: String,
    /// What to tell it.
    pub message: String,
}

/// Sends a session a message.
pub struct SessionsSend(SubAgents);

impl TypedTool for SessionsSend {
    type Params = SessionsSendParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "SessionsSend",
            "Sends a message to a session of your tree. A session that is running reads it at \
             its next turn; one that is idle runs again on it in the background. Its answer \
             arrives as a message at a later turn.",
        )
        .with_label("Send to session")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        params: SessionsSendParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (store, _) = self.0.store()?;
        let caller = ctx.session().session_id.clone();
        let session = self.0.reachable_session(
            "SessionsSend",
            &store,
            caller.as_deref(),
            &params.session_id,
        )?;
        drop(store);
        if caller.as_deref() == Some(session.id.as_str()) {
            return Err(refuse(
                "that is your own session: answer in your reply instead",
            ));
        }
        let from = caller.as_deref().unwrap_or("another session");
        let live = lock(&self.0.hub.live_sessions)
            .get(session.id.as_str())
            .cloned();
        if let Some(mailbox) = live {
            mailbox.send(format!(
                "[toolhost] A message from the session {from}:\n\n{}",
                params.message
            ));
            return Ok(ToolOutput::text(format!(
                "Delivered to the running session {}: it reads it at its next turn.",
                session.id
            ))
            .with_details(json!({"sessionId": session.id.as_str(), "delivered": "queued"})));
        }
        let spec = ChildSpec {
            prompt: params.message,
            background: Some(true),
            needs_store: true,
            resume: Some(session.id.clone()),
            call_id: ctx.call_id().to_owned(),
            caller_session: caller.clone(),
            ..ChildSpec::default()
        };
        let child = self
            .0
            .prepare_child(spec, ctx.cancellation().child_token())
            .await?;
        let record = Arc::clone(&child.record);
        self.0.start_background(child);
        Ok(ToolOutput::text(format!(
            "The session {} was idle: it runs again on your message as {}; its answer will be \
             delivered to you when it finishes.",
            session.id, record.id
        ))
        .with_details(
            json!({"sessionId": session.id.as_str(), "delivered": "started", "runId": record.id}),
        ))
    }
}

/// Parameters of `SessionsHistory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsHistoryParams {
    /// The session: its id, a unique prefix of it, or the run id SessionsSpawn gave.
    pub session_id: String,
    /// How many of its latest messages to show (default 20).
    pub limit: Option<usize>,
}

/// Reads a session's conversation.
pub struct SessionsHistory(SubAgents);

impl TypedTool for SessionsHistory {
    type Params = SessionsHistoryParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "SessionsHistory",
            "Reads the latest messages of a session of your tree: what was asked, answered \
             and called (tool outputs cut short).",
        )
        .with_label("Session history")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
    }

    async fn run(
        &self,
        params: SessionsHistoryParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (store, _) = self.0.store()?;
        let caller = ctx.session().session_id.clone();
        let session = self.0.reachable_session(
            "SessionsHistory",
            &store,
            caller.as_deref(),
            &params.session_id,
        )?;
        let messages = store
            .resume(&session.id)
            .map_err(|error| refuse(error.to_string()))?
            .messages;
        let limit = params.limit.unwrap_or(DEFAULT_HISTORY_LIMIT);
        let skip = messages.len().saturating_sub(limit);
        let mut text = format!(
            "{} ({} message{}, the last {} shown):",
            session_line(&session),
            messages.len(),
            if messages.len() == 1 { "" } else { "s" },
            messages.len() - skip
        );
        for message in &messages[skip..] {
            text.push_str("\n\n");
            text.push_str(&history_line(message));
        }
        Ok(ToolOutput::text(text).with_details(json!({
            "sessionId": session.id.as_str(),
            "messages": messages.len(),
            "shown": messages.len() - skip,
        })))
    }
}

fn blocks_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn history_line(message: &Message) -> String {
    match message {
        Message::User { content } => format!("user: {}", blocks_text(content)),
        Message::Assistant(assistant) => {
            let mut line = format!("assistant: {}", assistant.text());
            for call in assistant.tool_calls() {
                line.push_str(&format!("\n  → {} {}", call.name, call.arguments));
            }
            line
        }
        Message::ToolResult(result) => {
            let output = blocks_text(&result.content);
            let cut = match output.char_indices().nth(HISTORY_TOOL_OUTPUT_CHARS) {
                Some((at, _)) => format!(
                    "{}… [{} more characters]",
                    &output[..at],
                    output[at..].chars().count()
                ),
                None => output,
            };
            format!(
                "{} {}: {cut}",
                if result.is_error { "✗" } else { "tool" },
                result.tool_name
            )
        }
    }
}

/// Parameters of `SessionsYield`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsYieldParams {
    /// What the loop returns: your final message.
    pub message: String,
}

/// Ends the caller's loop with a message.
pub struct SessionsYield;

impl TypedTool for SessionsYield {
    type Params = SessionsYieldParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "SessionsYield",
            "Ends your work now and returns the message as your final answer (to the user, or \
             to the agent that spawned you). Nothing after this call runs.",
        )
        .with_label("Yield")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
    }

    async fn run(
        &self,
        params: SessionsYieldParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        ctx.abort();
        Ok(ToolOutput::text(params.message))
    }
}
