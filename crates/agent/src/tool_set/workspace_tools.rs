//! The workspace the file and shell tools work in, made from the configuration: the root,
//! skill folders outside it as read-only roots, Claude Code's `additionalDirectories` as
//! writable ones, and the read-before-write rule. A sub-agent working in a git worktree of its
//! own gets the same tools rooted there ([`worktree_tools`]).

use std::path::Path;
use std::sync::Arc;

use toolhost_catalog::skills::SkillCatalog;
use toolhost_config::Config;
use toolhost_core::Tool;
use toolhost_tools::{
    Bash, BashSettings, ReadBeforeWrite, RootAccess, Workspace, filesystem_tools,
};

use super::ToolSetError;

/// The workspace rooted at `root` under `config`, skill folders of `skills` outside it
/// readable.
pub(super) fn configured_workspace(
    config: &Config,
    skills: &SkillCatalog,
    root: &Path,
) -> Result<Arc<Workspace>, ToolSetError> {
    // Skill folders outside the workspace are read-only roots: Read reaches a skill's files,
    // Write and Edit never do. Claude Code's additionalDirectories are folders to work in.
    let builder = skills
        .read_only_roots(root)
        .into_iter()
        .fold(Workspace::builder(root), |builder, folder| {
            builder.extra_root(folder, RootAccess::ReadOnly)
        });
    let builder = config
        .permissions
        .additional_directories
        .iter()
        .filter(|folder| folder.is_dir())
        .fold(builder, |builder, folder| {
            builder.extra_root(folder, RootAccess::Writable)
        });
    let workspace = builder
        .read_before_write(match config.tools.read_before_write {
            Some(false) => ReadBeforeWrite::NotRequired,
            _ => ReadBeforeWrite::Required,
        })
        .build()
        .map_err(|error| ToolSetError::Workspace {
            path: root.to_path_buf(),
            message: error.to_string(),
        })?;
    Ok(Arc::new(workspace))
}

/// Bash's settings under `config`: `[shell]`, and Claude Code's `additionalDirectories`
/// writable in its sandbox.
pub(super) fn configured_bash(config: &Config) -> BashSettings {
    let mut bash = BashSettings::configured(&config.shell);
    bash.writable_roots
        .extend(config.permissions.additional_directories.iter().cloned());
    bash
}

/// The file tools and Bash rooted at `root` (a sub-agent's git worktree), configured as the
/// workspace's are. Bash gets no MCP bridge there: the worktree's commands reach the
/// built-in providers through the parent's tools only.
pub(crate) fn worktree_tools(
    config: &Config,
    skills: &SkillCatalog,
    root: &Path,
) -> Result<Vec<Arc<dyn Tool>>, ToolSetError> {
    let workspace = configured_workspace(config, skills, root)?;
    let mut tools = filesystem_tools(Arc::clone(&workspace));
    tools.push(Arc::new(Bash::with_settings(
        workspace,
        configured_bash(config),
    )));
    Ok(tools)
}
