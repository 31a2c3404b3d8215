//! Bringing a plugin's or marketplace's files here: a copy of a folder, or a shallow clone of
//! a git repository (`git` on `PATH`).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

/// Whether `source` names a git repository rather than a folder here.
pub(super) fn is_git_url(source: &str) -> bool {
    ["https://", "http://", "git@", "ssh://", "git://", "file://"]
        .iter()
        .any(|scheme| source.starts_with(scheme))
        || source.ends_with(".git")
}

/// `from` or the repository at `source` into the new folder `to`.
pub(super) fn fetch(source: &str, to: &Path) -> anyhow::Result<()> {
    let folder = Path::new(source);
    if folder.is_dir() {
        copy_folder(folder, to)
    } else if is_git_url(source) {
        git_clone(source, to)
    } else if folder.exists() {
        bail!("'{source}' is a file: give a plugin folder, a git URL or NAME@MARKETPLACE")
    } else {
        bail!("'{source}' is neither a folder here nor a git URL (https://…, git@…, file://…)")
    }
}

/// A shallow clone of `url` into `to`; git's own message when it fails.
pub(super) fn git_clone(url: &str, to: &Path) -> anyhow::Result<()> {
    let output = Command::new("git")
        .args(["clone", "--depth", "1", "--quiet", url])
        .arg(to)
        // Never wait on a password prompt: a repository that needs one fails at once.
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .context("cannot run git (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "git clone {url} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// `from`'s files into `to` (created), `.git` left out; files keep their permissions (a
/// plugin's hook scripts stay executable).
pub(super) fn copy_folder(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    let entries =
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?;
    for entry in entries {
        let entry = entry?;
        if entry.file_name() == ".git" {
            continue;
        }
        let source = entry.path();
        let target = to.join(entry.file_name());
        // A link is followed: the copy holds what it points to.
        let Ok(metadata) = std::fs::metadata(&source) else {
            continue;
        };
        if metadata.is_dir() {
            copy_folder(&source, &target)?;
        } else {
            std::fs::copy(&source, &target)
                .with_context(|| format!("cannot copy {}", source.display()))?;
        }
    }
    Ok(())
}
