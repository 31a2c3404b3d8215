//! `read_skill` (R27): one skill's instructions and the list of its other files.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use toolhost_catalog::skills::{MAX_LISTED_SKILL_FILES, SkillCatalog};

/// Parameters of `read_skill`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadSkillParams {
    /// The skill's name, as list_skills gives it.
    pub name: String,
}

/// Gives a skill's `SKILL.md` body and its other files' paths.
pub struct ReadSkill {
    catalog: Arc<SkillCatalog>,
}

impl ReadSkill {
    /// `read_skill` over `catalog`.
    pub fn new(catalog: Arc<SkillCatalog>) -> Self {
        Self { catalog }
    }
}

impl TypedTool for ReadSkill {
    type Params = ReadSkillParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "read_skill",
            // No file name here: small models copied one from this description into Glob.
            "Reads a skill by its name: its instructions and the paths of the other files in \
             its folder, which you read with Read when the instructions call for them. Skill \
             folders are read-only.",
        )
        .with_label("Read skill")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
        .with_subagent_inheritance()
    }

    async fn run(
        &self,
        params: ReadSkillParams,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(skill) = self.catalog.get(params.name.trim()) else {
            let names: Vec<&str> = self
                .catalog
                .skills()
                .iter()
                .map(|skill| skill.name.as_str())
                .collect();
            return Err(ToolError::new(if names.is_empty() {
                format!(
                    "There is no skill '{}': no skills are installed.",
                    params.name
                )
            } else {
                format!(
                    "There is no skill '{}'. The skills are: {}.",
                    params.name,
                    names.join(", ")
                )
            }));
        };
        let body = skill
            .body()
            .map_err(|warning| ToolError::new(warning.to_string()))?;
        let (files, more) = skill.other_files();
        let folder = skill.folder.display();
        let mut text = format!(
            "# Skill: {}\nFolder: {folder} (read-only)\n\n{}\n",
            skill.name,
            body.trim_end()
        );
        if files.is_empty() {
            text.push_str("\nThe skill has no other files.\n");
        } else {
            text.push_str("\nOther files of this skill (read them with Read when needed):\n");
            for file in &files {
                text.push_str(&format!("- {}\n", skill.folder.join(file).display()));
            }
            if more {
                text.push_str(&format!(
                    "(only the first {MAX_LISTED_SKILL_FILES} files are listed; list the \
                     folder with ListDir for the rest)\n"
                ));
            }
        }
        Ok(ToolOutput::text(text).with_details(json!({
            "skill": skill,
            "files": files,
            "files_cut": more,
        })))
    }
}
