//! Files written the way a test sets up a tree: whole contents at once, parent folders created.

use std::path::{Path, PathBuf};

/// Writes `content` at `path`, creating the folders above it; returns `path`.
///
/// Panics with the path when the write fails: a fixture that cannot be built is a broken test.
pub fn write_file(path: impl AsRef<Path>, content: impl AsRef<[u8]>) -> PathBuf {
    let path = path.as_ref();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", parent.display()));
    }
    std::fs::write(path, content)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
    path.to_path_buf()
}

/// Writes `text` as the project configuration of `workspace`
/// (`WORKSPACE/.toolhost/config.toml`); returns its path.
pub fn write_project_config(workspace: &Path, text: &str) -> PathBuf {
    write_file(workspace.join(CONFIG_FILE), text)
}

/// Copies the folder `from` into `to` (created), folders recursively: a fixture tree put into
/// a fresh workspace.
///
/// Panics with the path when a copy fails.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", to.display()));
    let entries = std::fs::read_dir(from)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|error| panic!("cannot read {}: {error}", from.display()));
        let target = to.join(entry.file_name());
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|error| panic!("cannot copy to {}: {error}", target.display()));
        }
    }
}

/// Where a workspace keeps its configuration file, and a home folder the user's.
pub const CONFIG_FILE: &str = ".toolhost/config.toml";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_file_creates_the_folders_above_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path().join("a/b/c.txt"), "hello");
        assert_eq!(std::fs::read_to_string(path).unwrap(), "hello");
    }
}
