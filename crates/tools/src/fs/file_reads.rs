//! Read before overwrite (R47): what a session has read, so that Write replaces no file the
//! model has not seen as it is on disk now, and Edit changes no file that changed since the
//! model read it.
//!
//! The record lives in the session's [`SessionState`](toolhost_core::SessionState): an
//! agent's conversation, a sub-agent's and each MCP client's connection keep their own. A
//! file is known as it was when the session last read, wrote or edited it: its device,
//! inode, size and modification time. A write by anything else (a Bash command, an editor's
//! save, which replaces the inode) changes that stamp. Whether the check applies is the
//! workspace's [`ReadBeforeWrite`].

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use toolhost_core::{ToolContext, ToolError};

use crate::workspace::{ReadBeforeWrite, ResolvedPath, Workspace};

/// A file as the session last saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    size: u64,
    modified_seconds: i64,
    modified_nanoseconds: i64,
}

impl Stamp {
    /// The file at `path` now, `None` when there is none (or it is not a regular file).
    fn of(path: &ResolvedPath) -> Option<Self> {
        let metadata = std::fs::symlink_metadata(path.as_path()).ok()?;
        metadata.is_file().then(|| Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified_seconds: metadata.mtime(),
            modified_nanoseconds: metadata.mtime_nsec(),
        })
    }
}

/// The files one session has seen, by physical path.
#[derive(Debug, Default)]
pub(crate) struct FileReads(Mutex<HashMap<PathBuf, Stamp>>);

impl FileReads {
    fn of(ctx: &ToolContext) -> std::sync::Arc<Self> {
        ctx.session().state.get_or_default::<Self>()
    }
}

/// Notes that the session has seen `path` as it is now (after a Read, Write or Edit).
pub(crate) fn record_seen(workspace: &Workspace, ctx: &ToolContext, path: &ResolvedPath) {
    if workspace.read_before_write() == ReadBeforeWrite::NotRequired {
        return;
    }
    let reads = FileReads::of(ctx);
    let mut seen = reads.0.lock().unwrap_or_else(PoisonError::into_inner);
    match Stamp::of(path) {
        Some(stamp) => seen.insert(path.as_path().to_path_buf(), stamp),
        None => seen.remove(path.as_path()),
    };
}

/// What a write is about to do to a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Replace all of it (Write): the session must have seen it as it is.
    Replace,
    /// Change part of it (Edit): the file must not have changed since the session saw it.
    Edit,
}

/// Refuses `change` to `path` when the session does not know the file as it is now.
pub(crate) fn check_before_write(
    workspace: &Workspace,
    ctx: &ToolContext,
    path: &ResolvedPath,
    change: Change,
) -> Result<(), ToolError> {
    if workspace.read_before_write() == ReadBeforeWrite::NotRequired {
        return Ok(());
    }
    // A missing or empty file has nothing to lose.
    let Some(now) = Stamp::of(path).filter(|stamp| stamp.size > 0) else {
        return Ok(());
    };
    let reads = FileReads::of(ctx);
    let seen = reads
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(path.as_path())
        .copied();
    let display = path.display();
    match (seen, change) {
        (Some(seen), _) if seen == now => Ok(()),
        (None, Change::Edit) => Ok(()),
        (None, Change::Replace) => Err(ToolError::new(format!(
            "{display} already exists and has not been read in this session, so Write would \
             replace content you have not seen. Read {display} first; then change it with Edit, \
             or Write its whole new content."
        ))),
        (Some(_), _) => Err(ToolError::new(format!(
            "{display} has changed on disk since this session last read it (a command or \
             another program wrote it), so this change could undo that one. Read {display} \
             again, then retry with what it holds now."
        ))),
    }
}
