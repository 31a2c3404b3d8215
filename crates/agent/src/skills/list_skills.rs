//! `list_skills` (R27): the skills there are, by name and description.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use toolhost_catalog::skills::SkillCatalog;

/// Parameters of `list_skills`: none.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSkillsParams {}

/// Lists the skills found at session start.
pub struct ListSkills {
    catalog: Arc<SkillCatalog>,
}

impl ListSkills {
    /// `list_skills` over `catalog`.
    pub fn new(catalog: Arc<SkillCatalog>) -> Self {
        Self { catalog }
    }
}

impl TypedTool for ListSkills {
    type Params = ListSkillsParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "list_skills",
            "Lists the skills available: folders of instructions (and files) for particular \
             tasks, each with a name and a description saying when to use it. Call read_skill \
             with a name to get its instructions.",
        )
        .with_label("List skills")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
        .with_subagent_inheritance()
    }

    async fn run(
        &self,
        _params: ListSkillsParams,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let skills = self.catalog.skills();
        let text = if skills.is_empty() {
            "No skills are installed, so there is none to read; go on with the other tools."
                .to_owned()
        } else {
            let mut text = format!(
                "{} skill{} (read one with read_skill):\n",
                skills.len(),
                if skills.len() == 1 { "" } else { "s" }
            );
            for skill in skills {
                text.push_str(&format!("- {}: {}\n", skill.name, skill.description));
            }
            text
        };
        Ok(ToolOutput::text(text).with_details(json!({ "skills": skills })))
    }
}
