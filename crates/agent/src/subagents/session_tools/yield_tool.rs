//! `SessionsYield`: ends the caller's loop with a message.

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

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
