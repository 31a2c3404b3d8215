//! What can go wrong when custom tools are found and loaded.

use std::path::PathBuf;

/// A module that could not be loaded: its path and why, written to be acted on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot load custom tool {}: {message}", path.display())]
pub struct LoadError {
    /// The module file (or tool folder) that failed.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl LoadError {
    /// An error for `path`.
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// A tool that loaded but was not added, because its name was already taken (R8, R35).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("custom tool '{name}' from {} is refused: the name is already used by {existing}", path.display())]
pub struct NameClash {
    /// The refused tool's name.
    pub name: String,
    /// The module that defined the refused tool.
    pub path: PathBuf,
    /// Who has the name: `the built-in tool` or the path of the earlier module.
    pub existing: String,
}
