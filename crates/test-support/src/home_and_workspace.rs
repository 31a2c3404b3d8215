//! A user's home folder and a project workspace side by side in one temp folder, so that a
//! test controls every configuration layer and a developer's own `~/.toolhost` never leaks in.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::files::CONFIG_FILE;

/// `ROOT/home` and `ROOT/project` in a fresh temp folder, each with its `.toolhost` folder;
/// `ROOT` is canonical (no symbolic link on the way), and is removed when this is dropped.
///
/// ```
/// use toolhost_test_support::{HomeAndWorkspace, write_file};
///
/// let dirs = HomeAndWorkspace::new();
/// write_file(dirs.user_config(), "[permissions]\nmode = \"plan\"\n");
/// write_file(dirs.workspace.join("hello.txt"), "hello");
/// assert!(dirs.home.join(".toolhost/config.toml").is_file());
/// assert_eq!(dirs.home.parent(), Some(dirs.root()));
/// ```
pub struct HomeAndWorkspace {
    _temp: TempDir,
    root: PathBuf,
    /// The home folder (`HOME` for a `toolhost` process the test runs).
    pub home: PathBuf,
    /// The workspace, named `project`.
    pub workspace: PathBuf,
}

impl HomeAndWorkspace {
    /// Creates the two folders and their `.toolhost` folders.
    pub fn new() -> Self {
        let temp = tempfile::tempdir()
            .unwrap_or_else(|error| panic!("cannot create a temp folder: {error}"));
        let root = temp
            .path()
            .canonicalize()
            .unwrap_or_else(|error| panic!("cannot resolve {}: {error}", temp.path().display()));
        let home = root.join("home");
        let workspace = root.join("project");
        for folder in [&home, &workspace] {
            let dot_toolhost = folder.join(".toolhost");
            std::fs::create_dir_all(&dot_toolhost).unwrap_or_else(|error| {
                panic!("cannot create {}: {error}", dot_toolhost.display())
            });
        }
        Self {
            _temp: temp,
            root,
            home,
            workspace,
        }
    }

    /// The temp folder holding both, for files that belong to neither.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The user's configuration file, `HOME/.toolhost/config.toml` (not written).
    pub fn user_config(&self) -> PathBuf {
        self.home.join(CONFIG_FILE)
    }

    /// The project's configuration file, `WORKSPACE/.toolhost/config.toml` (not written).
    pub fn project_config(&self) -> PathBuf {
        self.workspace.join(CONFIG_FILE)
    }
}

impl Default for HomeAndWorkspace {
    fn default() -> Self {
        Self::new()
    }
}
