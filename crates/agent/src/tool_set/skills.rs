//! The tools over what was found on disk at start: skills, the skill hub, slash commands.

use std::path::PathBuf;
use std::sync::Arc;

use crate::skills::{ListSkills, ReadSkill};
use crate::slash_command_tool::SlashCommandTool;
use toolhost_catalog::skills::SkillCatalog;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_config::Config;
use toolhost_skillhub::{SkillHub, SkillhubInstall, SkillhubSearch};

use super::OfferedRegistry;

/// What was found on disk before the registry is built.
pub(super) struct Found {
    pub(super) skills: Arc<SkillCatalog>,
    pub(super) commands: Arc<SlashCommands>,
    pub(super) home: Option<PathBuf>,
}

impl Found {
    /// The skills and slash commands of `workspace`, `home` and the plugins `config` loaded,
    /// the skills' warnings logged.
    pub(super) fn discover(
        workspace: &std::path::Path,
        home: Option<PathBuf>,
        config: &Config,
    ) -> Self {
        let skills = Arc::new(SkillCatalog::for_config(workspace, home.as_deref(), config));
        for warning in skills.warnings() {
            tracing::warn!("{warning}");
        }
        // Read when first asked for; what they skip is logged then.
        let commands = Arc::new(SlashCommands::for_config(
            workspace,
            home.as_deref(),
            config,
        ));
        Self {
            skills,
            commands,
            home,
        }
    }

    #[cfg(test)]
    pub(super) fn nothing() -> Self {
        Self {
            skills: Arc::default(),
            commands: Arc::default(),
            home: None,
        }
    }
}

/// The skill, skill-hub and slash-command tools, in R9's order.
pub(super) fn skill_tools(
    config: &Config,
    found: &Found,
    offered: &OfferedRegistry,
) -> Vec<Arc<dyn toolhost_core::Tool>> {
    let hub = Arc::new(SkillHub::for_config(&config.skills, found.home.as_deref()));
    vec![
        Arc::new(ListSkills::new(Arc::clone(&found.skills))),
        Arc::new(ReadSkill::new(Arc::clone(&found.skills))),
        Arc::new(SkillhubSearch::new(Arc::clone(&hub))),
        Arc::new(SkillhubInstall::new(hub)),
        Arc::new(SlashCommandTool::new(
            Arc::clone(&found.commands),
            offered.clone(),
        )),
    ]
}
