//! `isolation: worktree`: a sub-agent that works in a git worktree of its own, made with
//! `git worktree add` on a new branch from the workspace's `HEAD`, in the temp folder. When the
//! run ends the worktree is removed (with its branch) if the sub-agent changed nothing, and kept
//! otherwise, its path and branch named in the result so the work can be merged. Every `git`
//! runs through the process helper.

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolhost_config::Isolation;
use toolhost_core::ToolError;
use toolhost_exec::ProcessSpec;

/// How long one `git` command of a worktree's life may take.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// The folder under the temp folder where sub-agents' worktrees are made.
pub const WORKTREES_FOLDER: &str = "toolhost-worktrees";

/// A sub-agent's worktree, alive while it runs.
pub(crate) struct AgentWorktree {
    /// The repository's top folder (where `git worktree` is run).
    repository: PathBuf,
    /// The worktree's top folder.
    root: PathBuf,
    /// Where the sub-agent works: the workspace's place inside the worktree.
    pub(crate) workspace: PathBuf,
    /// The branch made for it.
    pub(crate) branch: String,
    /// The commit it started from.
    start: String,
}

impl AgentWorktree {
    /// The worktree of the run `run_id` of `agent` when its definition asks for one.
    pub(crate) async fn for_run(
        isolation: Option<Isolation>,
        workspace: &Path,
        agent: &str,
        run_id: &str,
    ) -> Result<Option<Self>, ToolError> {
        match isolation {
            Some(Isolation::Worktree) => Self::create(workspace, agent, run_id).await.map(Some),
            None => Ok(None),
        }
    }

    /// What the sub-agent's system prompt says of where it works.
    pub(crate) fn prompt_note(&self) -> String {
        format!(
            "\n\nYou work in a git worktree of your own, {} (branch {}): your changes stay \
             there, apart from the workspace, until someone merges them.",
            self.workspace.display(),
            self.branch
        )
    }

    /// Makes a worktree of the repository holding `workspace` for the run `run_id` of the
    /// agent `agent`; refused when the workspace is not in a git repository or git fails.
    async fn create(workspace: &Path, agent: &str, run_id: &str) -> Result<Self, ToolError> {
        let refuse = |why: String| {
            ToolError::new(format!(
                "the agent '{agent}' works in a git worktree of its own (isolation: worktree), \
                 but {why}"
            ))
        };
        let repository = git(workspace, &["rev-parse", "--show-toplevel"])
            .await
            .map_err(|_| {
                refuse(format!(
                    "{} is not in a git repository; run `git init` and commit, or remove \
                     isolation from the agent's file",
                    workspace.display()
                ))
            })?;
        let repository = PathBuf::from(repository);
        let start = git(&repository, &["rev-parse", "HEAD"])
            .await
            .map_err(|_| refuse("the repository has no commit yet; commit once".to_owned()))?;
        let name = format!("{agent}-{run_id}")
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "-");
        let folder_name = repository
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repository".to_owned());
        let root = std::env::temp_dir()
            .join(WORKTREES_FOLDER)
            .join(format!("{folder_name}-{name}-{}", std::process::id()));
        let branch = format!("toolhost/{name}-{}", std::process::id());
        let root_text = root.display().to_string();
        git(
            &repository,
            &["worktree", "add", "-b", &branch, &root_text, &start],
        )
        .await
        .map_err(|error| refuse(format!("`git worktree add` failed: {error}")))?;
        let canonical_workspace =
            std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let inside = canonical_workspace
            .strip_prefix(&repository)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Ok(Self {
            workspace: root.join(inside),
            repository,
            root,
            branch,
            start,
        })
    }

    /// Ends the worktree of a child that could not start (it changed nothing yet).
    pub(crate) async fn end_unused(worktree: Option<Self>) {
        if let Some(worktree) = worktree
            && let Some(note) = worktree.finish().await
        {
            tracing::warn!("{note}");
        }
    }

    /// Ends the worktree after the run: removed with its branch when nothing changed (no
    /// commit, nothing modified or added), kept otherwise. What the caller should be told:
    /// where the changes are, or why the worktree could not be looked at or removed.
    pub(crate) async fn finish(self) -> Option<String> {
        let root = &self.root;
        let changed = match (
            git(root, &["status", "--porcelain"]).await,
            git(root, &["rev-parse", "HEAD"]).await,
        ) {
            (Ok(status), Ok(head)) => !status.is_empty() || head != self.start,
            (Err(error), _) | (_, Err(error)) => {
                return Some(format!(
                    "The sub-agent's git worktree {} could not be checked ({error}); it is \
                     kept on branch {}",
                    root.display(),
                    self.branch
                ));
            }
        };
        if changed {
            return Some(format!(
                "The sub-agent's changes are in the git worktree {} on branch {} (they are \
                 not in the workspace: merge the branch, or remove the worktree with `git \
                 worktree remove`)",
                root.display(),
                self.branch
            ));
        }
        let root_text = root.display().to_string();
        let removed = git(
            &self.repository,
            &["worktree", "remove", "--force", &root_text],
        )
        .await;
        if let Err(error) = removed {
            return Some(format!(
                "The sub-agent changed nothing, but its git worktree {} could not be removed: \
                 {error}",
                root.display()
            ));
        }
        if let Err(error) = git(&self.repository, &["branch", "-D", &self.branch]).await {
            tracing::warn!("the branch {} was not deleted: {error}", self.branch);
        }
        None
    }
}

/// Runs `git ARGS` in `folder`; its stdout, trimmed, or what went wrong.
async fn git(folder: &Path, args: &[&str]) -> Result<String, String> {
    let outcome = ProcessSpec::new("git")
        .args(args)
        .working_dir(folder)
        .timeout(GIT_TIMEOUT)
        .run()
        .await
        .map_err(|error| error.to_string())?;
    if outcome.success() {
        Ok(outcome.stdout.text.trim().to_owned())
    } else {
        Err(format!(
            "git {} exited {:?}: {}",
            args.join(" "),
            outcome.exit_code,
            outcome.stderr.text.trim()
        ))
    }
}
