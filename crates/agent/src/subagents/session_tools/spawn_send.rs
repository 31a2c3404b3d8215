//! `SessionsSpawn` and `SessionsSend`: a session that works in the background, and a message
//! for one.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use super::refuse;
use crate::subagents::child::ChildSpec;
use crate::subagents::{SubAgents, lock};

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
pub struct SessionsSpawn(pub(super) SubAgents);

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
pub struct SessionsSend(pub(super) SubAgents);

impl TypedTool for SessionsSend {
    type Params = SessionsSendParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "SessionsSend",
            "Sends a message to a session of your tree. A session that is running reads it at \
             its next turn; one that is idle runs again on it in the background (one that another \
             toolhost process runs is refused). Its answer arrives as a message at a later \
             turn.",
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
        // It goes on as what it was: the same definition (when this process started it) and
        // the model its conversation was using.
        let agent = lock(&self.0.hub.runs)
            .iter()
            .rev()
            .find(|run| run.session_id().as_deref() == Some(session.id.as_str()))
            .map(|run| run.agent.clone());
        let resumed_model = self
            .0
            .store()
            .ok()
            .and_then(|(store, _)| store.latest_model(&session.id).ok().flatten());
        let spec = ChildSpec {
            prompt: params.message,
            agent,
            resumed_model,
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
