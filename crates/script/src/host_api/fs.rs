//! `node:fs` for custom tools: every path goes through the embedder's
//! [`FileGate`] (the permission rules, as for the Read and Write tools) and then its
//! [`ScriptFileSystem`], which applies the workspace rules (`toolhost` uses its `Workspace`,
//! with atomic writes). This crate opens no path itself.

use std::path::PathBuf;

use serde::Serialize;

/// What kind of entry a folder listing holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Directory,
    /// A symbolic link.
    Symlink,
    /// Anything else (socket, device, ...).
    Other,
}

/// One entry of a folder listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DirEntry {
    /// The entry's file name.
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
}

/// A refused or failed file operation: a message for the tool and, when it applies, a Node
/// error code (`ENOENT`) that tools commonly test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsError {
    /// What went wrong and what to do instead.
    pub message: String,
    /// `ENOENT`, `EACCES`, `EISDIR`, ... when one fits.
    pub code: Option<String>,
}

impl FsError {
    /// An error with this message and no code.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: None,
        }
    }

    /// The same error with a Node error code.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }
}

/// What `stat` tells of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FileStat {
    /// A file, a folder, ...
    pub kind: EntryKind,
    /// Its size in bytes (0 for a folder).
    pub size: u64,
}

/// The file system a custom tool sees through `node:fs`. Paths are as the tool wrote them
/// (relative to the workspace or absolute); implementations resolve and check them. Called on
/// the blocking pool.
///
/// `read`, `write` and `list` are required. `stat` has a default built on `list` and `read`;
/// `create_dir`, `remove` and `rename` default to an `ENOSYS` error that says the host does not
/// offer them (writing a file creates its folders all the same).
pub trait ScriptFileSystem: Send + Sync {
    /// The whole file.
    fn read(&self, path: &str) -> Result<Vec<u8>, FsError>;
    /// Replaces the whole file (atomically, in `toolhost`).
    fn write(&self, path: &str, content: &[u8]) -> Result<(), FsError>;
    /// A folder's entries.
    fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError>;

    /// What `path` is: a folder when it can be listed, else a file when it can be read.
    fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let listed = match self.list(path) {
            Ok(_) => {
                return Ok(FileStat {
                    kind: EntryKind::Directory,
                    size: 0,
                });
            }
            Err(error) if error.code.as_deref() == Some("ENOENT") => return Err(error),
            Err(error) => error,
        };
        match self.read(path) {
            Ok(bytes) => Ok(FileStat {
                kind: EntryKind::File,
                size: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            }),
            Err(error) if error.code.as_deref() == Some("EISDIR") => Err(listed),
            Err(error) => Err(error),
        }
    }

    /// Creates a folder (and its parents when `recursive`).
    fn create_dir(&self, _path: &str, _recursive: bool) -> Result<(), FsError> {
        Err(unsupported("create folders"))
    }

    /// Removes a file (or a folder, with what it holds when `recursive`).
    fn remove(&self, _path: &str, _recursive: bool) -> Result<(), FsError> {
        Err(unsupported("remove files"))
    }

    /// Moves `from` to `to`.
    fn rename(&self, _from: &str, _to: &str) -> Result<(), FsError> {
        Err(unsupported("rename files"))
    }
}

fn unsupported(what: &str) -> FsError {
    FsError::new(format!(
        "the program running this tool lets custom tools read, list and write files but not \
         {what}"
    ))
    .with_code("ENOSYS")
}

/// The file system of a host that gave none: every operation is refused.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFileSystem;

const NO_FILE_SYSTEM: &str =
    "node:fs is not available: the program running this tool gave it no file access";

impl ScriptFileSystem for NoFileSystem {
    fn read(&self, _path: &str) -> Result<Vec<u8>, FsError> {
        Err(FsError::new(NO_FILE_SYSTEM).with_code("EACCES"))
    }

    fn write(&self, _path: &str, _content: &[u8]) -> Result<(), FsError> {
        Err(FsError::new(NO_FILE_SYSTEM).with_code("EACCES"))
    }

    fn list(&self, _path: &str) -> Result<Vec<DirEntry>, FsError> {
        Err(FsError::new(NO_FILE_SYSTEM).with_code("EACCES"))
    }
}

/// What a custom tool asks to do with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileAccess {
    /// Read a file (`readFile`).
    Read,
    /// List a folder (`readdir`).
    List,
    /// Create or replace a file (`writeFile`).
    Write,
}

/// One file operation a custom tool asks for, before the file system sees it.
#[derive(Clone, Debug)]
pub struct FileRequest {
    /// The custom tool module asking.
    pub module: PathBuf,
    /// The path as the tool wrote it.
    pub path: String,
    /// What it means to do.
    pub access: FileAccess,
    /// Whom the module's tools are running for: ask each of them (see [`Callers`]).
    pub callers: super::Callers,
}

/// Decides whether a custom tool may read, list or write a path.
///
/// The embedding program implements it with its permission system, so that `node:fs/promises`
/// is judged exactly as the Read and Write tools on the same path would be (`toolhost` asks
/// its `PermissionPolicy`). The default, [`FileSystemOnly`], leaves it to the
/// [`ScriptFileSystem`] alone — the same as a registry without a permission policy.
#[async_trait::async_trait]
pub trait FileGate: Send + Sync {
    /// `Ok(())` to go on; `Err(reason)` to refuse, the reason written for the model.
    async fn authorize(&self, request: &FileRequest) -> Result<(), String>;
}

/// Lets the file system decide alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileSystemOnly;

#[async_trait::async_trait]
impl FileGate for FileSystemOnly {
    async fn authorize(&self, _request: &FileRequest) -> Result<(), String> {
        Ok(())
    }
}
