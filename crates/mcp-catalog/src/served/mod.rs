//! What `toolhost serve` offers MCP clients besides tools (the server side of prompts,
//! resources and completions):
//!
//! - **prompts**: every slash command and every skill (a command wins over a skill of the
//!   same name), expanded exactly as `toolhost chat` expands a `/name args` line (see
//!   [`prompts`]);
//! - **resources**: the workspace's files (`file://` URIs) that the permission rules let
//!   Read reach, the skills' files (`skill://NAME/PATH`) and this workspace's stored sessions
//!   as read-only Markdown transcripts (`session://ID`), each kind with a resource template
//!   (see [`resources`]);
//! - **completions** of prompt arguments and template variables (see [`completion`]).
//!
//! Slash commands and skills are found again whenever their folders change, which is
//! announced with `listChanged`.

mod completion;
mod prompts;
mod resources;
mod watch_folders;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use toolhost_catalog::skills::SkillCatalog;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_config::Config;
use toolhost_core::permission::PermissionPolicy;
use toolhost_core::{CallOptions, ToolRegistry};
use toolhost_mcp::ServedCatalog;
use toolhost_mcp::rmcp::ErrorData;
use toolhost_mcp::rmcp::model::{
    ArgumentInfo, GetPromptResult, Prompt, ReadResourceResult, Reference, Resource,
    ResourceTemplate,
};

/// The workspace's slash commands, skills, sessions and files, served.
#[derive(Debug)]
pub struct WorkspaceCatalog {
    workspace: PathBuf,
    home: Option<PathBuf>,
    found: RwLock<Found>,
    /// The served registry: expansions read and run through it, under its permissions.
    registry: Arc<ToolRegistry>,
    /// What decides which files may be listed and read.
    policy: Arc<PermissionPolicy>,
    /// The session store's file.
    sessions: Option<PathBuf>,
    config: Config,
    changes: tokio::sync::watch::Sender<u64>,
}

/// The commands and skills found on disk.
#[derive(Debug, Clone, Default)]
struct Found {
    commands: Arc<SlashCommands>,
    skills: Arc<SkillCatalog>,
}

impl WorkspaceCatalog {
    /// The catalog of `workspace` (canonical) and `home`, reading and running through
    /// `registry`, whose files `policy` judges; `commands` and `skills` are those found at
    /// start.
    pub fn new(
        workspace: &Path,
        home: Option<PathBuf>,
        config: &Config,
        registry: Arc<ToolRegistry>,
        policy: Arc<PermissionPolicy>,
        found: (Arc<SlashCommands>, Arc<SkillCatalog>),
    ) -> Self {
        let sessions = toolhost_session::views::store_path(config, home.as_deref()).ok();
        Self {
            workspace: workspace
                .canonicalize()
                .unwrap_or_else(|_| workspace.to_path_buf()),
            home,
            found: RwLock::new(Found {
                commands: found.0,
                skills: found.1,
            }),
            registry,
            policy,
            sessions,
            config: config.clone(),
            changes: tokio::sync::watch::channel(0).0,
        }
    }

    /// Finds the commands and skills again whenever a folder they live in changes (until the
    /// catalog is dropped), telling clients that the lists changed.
    pub fn watch(self: &Arc<Self>) {
        watch_folders::reload_on_change(Arc::downgrade(self));
    }

    fn found(&self) -> Found {
        self.found
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Discovers the commands and skills again and announces the change.
    fn rediscover(&self) {
        let home = self.home.as_deref();
        let fresh = Found {
            commands: Arc::new(SlashCommands::for_workspace(&self.workspace, home)),
            skills: Arc::new(SkillCatalog::for_workspace(&self.workspace, home)),
        };
        *self
            .found
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh;
        self.changes.send_modify(|n| *n += 1);
    }

    /// The folders whose changes may change the catalog.
    fn watched_folders(&self) -> Vec<PathBuf> {
        let home = self.home.as_deref();
        let mut folders = toolhost_catalog::slash_commands::command_folders(&self.workspace, home);
        folders.extend(
            toolhost_catalog::skills::skill_locations(&self.workspace, home)
                .into_iter()
                .map(|location| location.folder),
        );
        folders
    }
}

#[async_trait::async_trait]
impl ServedCatalog for WorkspaceCatalog {
    fn prompts(&self) -> Vec<Prompt> {
        prompts::list(&self.found())
    }

    async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: CallOptions,
    ) -> Result<GetPromptResult, ErrorData> {
        prompts::get(&self.found(), &self.registry, name, &arguments, options).await
    }

    async fn resources(&self) -> Vec<Resource> {
        resources::list(self).await
    }

    fn resource_templates(&self) -> Vec<ResourceTemplate> {
        resources::templates(&self.workspace)
    }

    async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        resources::read(self, uri).await
    }

    async fn complete(
        &self,
        reference: &Reference,
        argument: &ArgumentInfo,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, ErrorData> {
        completion::complete(self, reference, argument, context).await
    }

    fn subscribe_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.changes.subscribe())
    }
}
