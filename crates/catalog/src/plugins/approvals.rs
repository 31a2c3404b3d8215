//! The user's yes to a plugin's hooks and MCP servers, remembered in
//! `~/.toolhost/plugins/approved.json` with exactly what was shown: when the plugin later runs
//! something else (an update adds a hook), it needs a new yes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::records::{read_json, toolhost_plugins_folder, write_json};

/// The approvals file.
pub fn approvals_file(home: &Path) -> PathBuf {
    toolhost_plugins_folder(home).join("approved.json")
}

/// What was approved, by plugin folder.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Approvals {
    /// Folder → the text of what it runs, as approved.
    #[serde(default)]
    plugins: BTreeMap<PathBuf, String>,
}

impl Approvals {
    /// The approvals in `home`. `Err` names a file that cannot be read: nothing is approved.
    pub fn read(home: &Path) -> Result<Self, String> {
        read_json(&approvals_file(home)).map(Option::unwrap_or_default)
    }

    /// Whether the plugin in `root` may run `what_runs`.
    pub fn approves(&self, root: &Path, what_runs: &str) -> bool {
        self.plugins
            .get(root)
            .is_some_and(|approved| approved == what_runs)
    }

    /// Remembers the user's yes.
    pub fn approve(&mut self, root: &Path, what_runs: &str) {
        self.plugins.insert(root.to_owned(), what_runs.to_owned());
    }

    /// Forgets the plugin in `root`.
    pub fn forget(&mut self, root: &Path) {
        self.plugins.remove(root);
    }

    /// Writes them back.
    pub fn write(&self, home: &Path) -> Result<(), String> {
        write_json(&approvals_file(home), self)
    }
}
