//! `skillhub_search` (R27): the skills the configured hubs offer for a query.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool};

use super::SkillHub;

/// Parameters of `skillhub_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillhubSearchParams {
    /// Words to look for in the skills' ids, names and descriptions (all must match; empty
    /// lists every skill).
    pub query: String,
}

/// Searches the hubs' indexes.
pub struct SkillhubSearch {
    hub: Arc<SkillHub>,
}

impl SkillhubSearch {
    /// `skillhub_search` over `hub`.
    pub fn new(hub: Arc<SkillHub>) -> Self {
        Self { hub }
    }
}

impl TypedTool for SkillhubSearch {
    type Params = SkillhubSearchParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "skillhub_search",
            "Searches the configured skill hubs for skills to install: each result gives the \
             id to pass to skillhub_install, its name, version and description.",
        )
        .with_label("Search skill hub")
        .with_annotations(ToolAnnotations {
            open_world: true,
            ..ToolAnnotations::READ_ONLY
        })
    }

    async fn run(
        &self,
        params: SkillhubSearchParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let found = tokio::select! {
            found = self.hub.search(&params.query) => found,
            () = ctx.cancellation().cancelled() => return Err(ToolError::new("cancelled")),
        }
        .map_err(|error| ToolError::new(error.to_string()))?;
        let installed: Vec<String> = self
            .hub
            .installed()
            .into_iter()
            .map(|skill| skill.record.id)
            .collect();
        let mut text = if found.is_empty() {
            format!("No skill on the hubs matches '{}'.\n", params.query)
        } else {
            format!("{} skill(s) found:\n", found.len())
        };
        for listing in &found {
            let skill = &listing.skill;
            let mark = if installed.contains(&skill.id) {
                " [installed]"
            } else {
                ""
            };
            text.push_str(&format!(
                "- {} ({} {}){mark}: {}\n",
                skill.id, skill.name, skill.version, skill.description
            ));
        }
        Ok(ToolOutput::text(text).with_details(json!({ "skills": found, "installed": installed })))
    }
}
