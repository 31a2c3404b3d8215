//! `spawn_agent` (R25): hands a task to a sub-agent, in the foreground (its answer is the
//! result) or in the background (a run id at once; the answer reaches the caller at its next
//! turn).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_core::permission::PermissionMode;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use super::child::{Child, ChildSpec, delivery};
use super::{SubAgents, lock};

/// Parameters of `spawn_agent`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpawnAgentParams {
    /// The task: everything the sub-agent needs to know, since it sees nothing of this
    /// conversation.
    pub prompt: String,
    /// The agent definition to run (default: general-purpose, with all of your tools).
    pub agent: Option<String>,
    /// The model: `inherit` (default), a configured provider, `PROVIDER/MODEL`, or a model
    /// name on your provider.
    pub model: Option<String>,
    /// Run in the background: get a run id at once and the answer at a later turn.
    pub background: Option<bool>,
    /// The most model turns the sub-agent may take (leave it out for the default).
    #[schemars(range(min = 1))]
    pub max_iterations: Option<usize>,
    /// default, acceptEdits, plan or bypassPermissions; never looser than yours.
    pub permission_mode: Option<String>,
    /// Only these of your tools (skills, slash commands and MCP tools are always inherited).
    pub tools: Option<Vec<String>>,
}

/// Starts sub-agents for one agent.
pub struct SpawnAgent {
    agents: SubAgents,
}

impl SpawnAgent {
    pub(super) fn new(agents: SubAgents) -> Self {
        Self { agents }
    }
}

impl TypedTool for SpawnAgent {
    type Params = SpawnAgentParams;

    fn tool_name(&self) -> String {
        "spawn_agent".to_owned()
    }

    fn describe(&self) -> ToolSpec {
        let config = &self.agents.hub.context.config;
        let mut agents = String::new();
        for (name, agent) in &config.agents {
            agents.push_str(&format!(
                "\n- {name}: {}",
                agent.description.as_deref().unwrap_or("(no description)")
            ));
        }
        let listed = if agents.is_empty() {
            String::new()
        } else {
            format!(" The agents besides general-purpose:{agents}")
        };
        ToolSpec::new(
            "spawn_agent",
            format!(
                "Hands a task to a sub-agent: another agent loop with its own conversation, \
                 your tools (or fewer) and your permissions (or stricter). In the foreground \
                 (default) the result is its final answer; with background: true you get a run \
                 id at once, can go on working, and its answer arrives as a message at a later \
                 turn (subagent_status shows its progress). Give it a complete, self-contained \
                 task.{listed}"
            ),
        )
        .with_label("Spawn agent")
        // Its own effects are its child's calls, each authorised by the child's policy, which is
        // never looser than the caller's: so plan mode may offer it (its children then plan
        // too), and several children may run at once.
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        params: SpawnAgentParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let permission_mode = match params.permission_mode.as_deref() {
            None => None,
            Some(mode) => Some(
                mode.parse::<PermissionMode>()
                    .map_err(|error| ToolError::new(format!("permissionMode: {error}")))?,
            ),
        };
        if params.prompt.trim().is_empty() {
            return Err(ToolError::new(
                "prompt is empty: give the sub-agent its whole task",
            ));
        }
        let spec = ChildSpec {
            prompt: params.prompt,
            agent: params.agent,
            model: params.model,
            background: params.background,
            max_iterations: params.max_iterations,
            permission_mode,
            tools: params.tools,
            call_id: ctx.call_id().to_owned(),
            caller_session: ctx.session().session_id.clone(),
            ..ChildSpec::default()
        };
        let child = self
            .agents
            .prepare_child(spec, ctx.cancellation().child_token())
            .await?;
        let notes: String = child
            .notes
            .iter()
            .map(|note| format!("\nNote: {note}."))
            .collect();
        let record = Arc::clone(&child.record);
        if child.background {
            self.agents.start_background(child);
            let session = record
                .session_id()
                .map(|id| format!(" (session {id})"))
                .unwrap_or_default();
            return Ok(ToolOutput::text(format!(
                "Started the agent {} in the background as {}{session}. Go on with other \
                 work: its answer will be delivered to you as a message when it finishes \
                 (subagent_status {} shows its progress).{notes}",
                record.agent, record.id, record.id
            ))
            .with_details(record.snapshot()));
        }
        let Some(end) = self.agents.run_in_foreground(child).await else {
            return Err(ToolError::new(format!(
                "The sub-agent {} ({}) stopped before it answered",
                record.id, record.agent
            )));
        };
        let details = record.snapshot();
        let notes = match &end.worktree_note {
            Some(worktree) => format!("{notes}\n\n{worktree}"),
            None => notes,
        };
        if !end.outcome.is_success() {
            return Err(ToolError::new(format!(
                "The sub-agent {} ({}) {}: {}{notes}",
                record.id,
                record.agent,
                match end.outcome {
                    crate::agent_loop::RunOutcome::Cancelled => "was cancelled",
                    _ => "failed",
                },
                end.outcome.text()
            )));
        }
        Ok(ToolOutput::text(format!(
            "{}\n\n[{} ({}): {} turn{}, {} tokens in / {} out]{notes}",
            end.outcome.text(),
            record.id,
            record.agent,
            end.turns,
            if end.turns == 1 { "" } else { "s" },
            end.usage.input_tokens,
            end.usage.output_tokens
        ))
        .with_details(details))
    }
}

impl SubAgents {
    /// Runs `child` on a task of its own and waits for its end. The task outlives a call that
    /// is dropped when its run is cancelled, so that the child still marks its session (and
    /// [`SubAgents::shutdown`] waits for it); `None` when the task itself failed.
    pub(crate) async fn run_in_foreground(&self, child: Child) -> Option<super::child::ChildEnd> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let agents = self.clone();
        let task = tokio::spawn(async move {
            let record = Arc::clone(&child.record);
            let mut end = child.run().await;
            agents.tell_end(&record, &mut end);
            let _ = sender.send(end);
        });
        lock(&self.hub.background).push(task);
        receiver.await.ok()
    }

    /// Runs `child` on a task of its own; its end is delivered to this agent's mailbox.
    pub(crate) fn start_background(&self, child: Child) {
        let mailbox = Arc::clone(&self.scope.mailbox);
        mailbox.expect();
        let agents = self.clone();
        let task = tokio::spawn(async move {
            let record = Arc::clone(&child.record);
            let mut end = child.run().await;
            mailbox.deliver_expected(delivery(&record, &end));
            agents.tell_end(&record, &mut end);
        });
        lock(&self.hub.background).push(task);
    }
}
