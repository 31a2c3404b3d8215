//! Why a path was refused, in words a model can act on.

use std::io;
use std::path::PathBuf;

use super::{MAX_SYMLINK_FOLLOWS, ResolvedPath};

/// Why a path was refused. Each message names the path, says why, and says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The path was empty.
    #[error("the path is empty: give a file or folder path relative to the workspace root {root}")]
    EmptyPath {
        /// The workspace root.
        root: PathBuf,
    },
    /// The path contains a NUL byte, which no file name can hold.
    #[error("the path {path:?} contains a NUL character, which no file name can hold")]
    NulByte {
        /// The path as given.
        path: String,
    },
    /// `~` was used but there is no home folder to expand it to.
    #[error(
        "the path '{path}' starts with '~' but no home folder is known: give a path relative to the workspace root {root}"
    )]
    NoHome {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The resolved path lies outside every root.
    #[error(
        "the path '{path}' is outside the workspace{via}: it resolves to {resolved}, and tools may only use paths under {roots}. Use a path inside the workspace, such as a path relative to {root}"
    )]
    OutsideWorkspace {
        /// The path as given.
        path: String,
        /// Where it resolves to.
        resolved: PathBuf,
        /// " (through the symlink …)" when a symlink led outside, else empty.
        via: String,
        /// The allowed roots, listed.
        roots: String,
        /// The main root.
        root: PathBuf,
    },
    /// A write to a root that is read-only.
    #[error(
        "the path '{path}' is in {root}, which tools may read but not change. Write inside the workspace root {workspace} instead"
    )]
    ReadOnlyRoot {
        /// The path as given.
        path: String,
        /// The read-only root it lies in.
        root: PathBuf,
        /// The main root.
        workspace: PathBuf,
    },
    /// A write to a file whose permissions say it is not to be changed.
    #[error(
        "{path} is read-only (mode {mode:04o}), so it was left unchanged. If it should change, make it writable first (for example with Bash: chmod u+w '{path}'); otherwise leave it as it is"
    )]
    ReadOnlyFile {
        /// The path as shown to the model.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// Resolving followed too many symlinks.
    #[error(
        "the path '{path}' goes through more than {MAX_SYMLINK_FOLLOWS} symlinks (a symlink loop?): use the real path of the file"
    )]
    SymlinkLoop {
        /// The path as given.
        path: String,
    },
    /// After opening, the handle was somewhere else than the checked path: it changed between
    /// the check and the use (a symlink swapped in).
    #[error(
        "the path '{path}' changed while it was being opened (it now leads to {actual}, outside the workspace); nothing was read or written. Check the path with ListDir and try again"
    )]
    ChangedDuringUse {
        /// The path as resolved.
        path: String,
        /// Where the open handle really was.
        actual: PathBuf,
    },
    /// The operating system refused or failed.
    #[error("cannot {action} '{path}': {source}")]
    Io {
        /// What was being done ("read", "open the folder of", ...).
        action: &'static str,
        /// The path as shown to the model.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl WorkspaceError {
    /// An I/O error on a resolved path.
    pub fn io(action: &'static str, path: &ResolvedPath, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.display().to_owned(),
            source,
        }
    }
}
