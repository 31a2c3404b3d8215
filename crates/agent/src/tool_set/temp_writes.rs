//! Where custom tools and extensions may write without being asked: a folder of their own
//! under the OS temp folder. Extensions keep caches and scratch files there (pi's do, often
//! while they load, where nobody can be asked); the temp folder holds nothing of the user's
//! project, and the processes they start may write there already (the exec sandbox leaves
//! it writable). A deny rule and the mode still apply (plan mode writes nothing); only the
//! question is skipped.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use toolhost_tools::{ReadBeforeWrite, Workspace};

/// The OS temp folder as a workspace of its own (writes go through a handle on their verified
/// folder, as in the workspace), when it exists.
pub(super) fn temp_workspace() -> Option<Arc<Workspace>> {
    Workspace::builder(std::env::temp_dir())
        .read_before_write(ReadBeforeWrite::NotRequired)
        .build()
        .ok()
        .map(Arc::new)
}

/// Whether `path` (as a module spelled it, relative to `workspace_root` when relative) lies
/// inside the OS temp folder — below it, not the folder itself — and outside the folder of
/// the temp folder that holds the workspace, if one does (so a workspace in `/tmp/x/project`
/// gives nothing of `/tmp/x`), symlinks followed as far as the path exists. A path with `..`
/// never does.
pub(super) fn in_temp_folder(path: &str, workspace_root: &Path) -> bool {
    let path = Path::new(path);
    if path
        .components()
        .any(|component| component == Component::ParentDir)
    {
        return false;
    }
    let (Ok(temp), Ok(root)) = (
        std::env::temp_dir().canonicalize(),
        workspace_root.canonicalize(),
    ) else {
        return false;
    };
    let Some(real) = real_path(&workspace_root.join(path)) else {
        return false;
    };
    let holder = root
        .strip_prefix(&temp)
        .ok()
        .and_then(|inside| inside.components().next())
        .map(|first| temp.join(first));
    real.starts_with(&temp)
        && real != temp
        && !real.starts_with(&root)
        && holder.is_none_or(|holder| !real.starts_with(holder))
}

/// `path` with its longest existing part resolved (symlinks followed) and the rest, which
/// does not exist yet, appended.
fn real_path(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return Some(rest.iter().rev().fold(real, |real, part| real.join(part)));
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_paths_below_the_temp_folder_and_outside_the_workspace_count() {
        let temp = std::env::temp_dir();
        let holder = tempfile::tempdir().unwrap();
        let root = holder.path().join("project");
        std::fs::create_dir(&root).unwrap();
        let root = root.as_path();
        let scratch = temp.join("toolhost-temp-writes-test/cache.json");
        assert!(in_temp_folder(scratch.to_str().unwrap(), root));
        assert!(!in_temp_folder(temp.to_str().unwrap(), root));
        assert!(!in_temp_folder("notes.txt", root));
        assert!(!in_temp_folder(
            root.join("new/file").to_str().unwrap(),
            root
        ));
        // Nothing beside the workspace in the temp folder's entry that holds it.
        assert!(!in_temp_folder(
            holder.path().join("secret.txt").to_str().unwrap(),
            root
        ));
        let climbing = temp.join("x/../../etc/passwd");
        assert!(!in_temp_folder(climbing.to_str().unwrap(), root));
        assert!(!in_temp_folder("/etc/passwd", root));
    }

    #[test]
    fn a_symlink_in_the_temp_folder_is_judged_by_where_it_leads() {
        let workspace = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir_in(workspace.path()).unwrap();
        let temp = tempfile::tempdir().unwrap();
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(outside.path(), &link).unwrap();
        assert!(!in_temp_folder(
            link.join("file").to_str().unwrap(),
            workspace.path()
        ));
    }
}
