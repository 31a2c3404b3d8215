//! `SessionsList` and `SessionsHistory`: the sessions of the caller's tree, and what one said.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::ContentBlock;
use toolhost_core::conversation::Message;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};
use toolhost_session::Session;

use super::{
    DEFAULT_HISTORY_LIMIT, DEFAULT_LIST_LIMIT, HISTORY_TOOL_OUTPUT_CHARS, refuse, session_line,
};
use crate::subagents::SubAgents;

/// Parameters of `SessionsList`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsListParams {
    /// How many sessions to show (default 20).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// How many to skip first.
    pub offset: Option<usize>,
}

/// Lists the sessions the caller may reach.
pub struct SessionsList(pub(super) SubAgents);

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

/// Parameters of `SessionsHistory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsHistoryParams {
    /// The session: its id, a unique prefix of it, or the run id SessionsSpawn gave.
    pub session_id: String,
    /// How many of its latest messages to show (default 20).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

/// Reads a session's conversation.
pub struct SessionsHistory(pub(super) SubAgents);

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
