//! `skillhub_install` (R27): installs a skill from a hub. It always needs approval (R17):
//! it downloads code and instructions that later sessions trust.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use super::SkillHub;

/// Parameters of `skillhub_install`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillhubInstallParams {
    /// The id of the skill, as skillhub_search gives it.
    pub skill_id: String,
}

/// Downloads, checks and unpacks a hub skill into `~/.toolhost/skills/<id>/`.
pub struct SkillhubInstall {
    hub: Arc<SkillHub>,
}

impl SkillhubInstall {
    /// `skillhub_install` over `hub`.
    pub fn new(hub: Arc<SkillHub>) -> Self {
        Self { hub }
    }
}

impl TypedTool for SkillhubInstall {
    type Params = SkillhubInstallParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "skillhub_install",
            "Installs a skill from a configured skill hub by its id (see skillhub_search): \
             downloads its archive, checks its SHA-256 and unpacks it safely into the user's \
             skills folder. The skill is offered from the next session on. Needs the user's \
             approval.",
        )
        .with_label("Install skill")
        .with_annotations(ToolAnnotations {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: true,
        })
        .with_sensitivity(Sensitivity::Sensitive)
    }

    async fn run(
        &self,
        params: SkillhubInstallParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let installed = tokio::select! {
            installed = self.hub.install(params.skill_id.trim()) => installed,
            () = ctx.cancellation().cancelled() => return Err(ToolError::new("cancelled")),
        }
        .map_err(|error| ToolError::new(error.to_string()))?;
        Ok(ToolOutput::text(format!(
            "Installed the skill '{}' {} from {} into {}. It is offered from the next session \
             on.",
            installed.record.name,
            installed.record.version,
            installed.record.hub,
            installed.folder.display()
        ))
        .with_details(json!(installed)))
    }
}
