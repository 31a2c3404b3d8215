//! `subagent_list` and `subagent_status` (R25): the sub-agent runs an agent started, and how
//! one of them goes.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use super::SubAgents;

/// Parameters of `subagent_list`: none.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SubagentListParams {}

/// Lists the runs the calling agent started.
pub struct SubagentList {
    agents: SubAgents,
}

impl SubagentList {
    pub(super) fn new(agents: SubAgents) -> Self {
        Self { agents }
    }
}

impl TypedTool for SubagentList {
    type Params = SubagentListParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "subagent_list",
            "Lists the sub-agents you started (spawn_agent, SessionsSpawn): run id, agent, \
             status (pending, running, completed, failed, cancelled), time, turns and tokens.",
        )
        .with_label("List sub-agents")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        _params: SubagentListParams,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let runs = self.agents.own_runs();
        if runs.is_empty() {
            return Ok(ToolOutput::text("You have started no sub-agents.")
                .with_details(json!({"runs": []})));
        }
        let text = runs
            .iter()
            .map(|run| run.describe().lines().next().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
            .join("\n");
        let details: Vec<Value> = runs.iter().map(|run| run.snapshot()).collect();
        Ok(ToolOutput::text(text).with_details(json!({ "runs": details })))
    }
}

/// Parameters of `subagent_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStatusParams {
    /// The run id spawn_agent gave (`run-1`).
    pub run_id: String,
}

/// How one run goes.
pub struct SubagentStatus {
    agents: SubAgents,
}

impl SubagentStatus {
    pub(super) fn new(agents: SubAgents) -> Self {
        Self { agents }
    }
}

impl TypedTool for SubagentStatus {
    type Params = SubagentStatusParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "subagent_status",
            "How a sub-agent run goes: status (pending, running, completed, failed, \
             cancelled), elapsed time, turns, tokens, its last tool calls with their outcome, \
             and its answer once it is done.",
        )
        .with_label("Sub-agent status")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        params: SubagentStatusParams,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(run) = self.agents.visible_run(&params.run_id) else {
            let own: Vec<String> = self
                .agents
                .own_runs()
                .iter()
                .map(|run| run.id.clone())
                .collect();
            return Err(ToolError::new(format!(
                "there is no sub-agent run '{}' of yours; yours are: {}",
                params.run_id,
                if own.is_empty() {
                    "none".to_owned()
                } else {
                    own.join(", ")
                }
            )));
        };
        Ok(ToolOutput::text(run.describe()).with_details(run.snapshot()))
    }
}
