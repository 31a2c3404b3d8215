//! Reading a checked folder: its entries, looked up through the verified handle.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt as _;

use rustix::fs::{AtFlags, FileType};

use super::{ResolvedPath, WorkspaceError};

/// What a folder entry is, as `lstat` sees it (symlinks are not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A socket, device, FIFO, ...
    Other,
    /// It vanished or could not be looked at.
    Unknown,
}

/// One entry of a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderEntry {
    /// The file name.
    pub name: OsString,
    /// What it is.
    pub kind: EntryKind,
    /// The size of a regular file.
    pub size: Option<u64>,
    /// Where a symlink points (`?` when it cannot be read).
    pub target: Option<String>,
}

impl ResolvedPath {
    /// The folder's entries (without `.` and `..`), unsorted. The folder is opened and
    /// verified first, and every entry is looked at relative to that handle, never by path.
    pub fn read_dir(&self) -> Result<Vec<FolderEntry>, WorkspaceError> {
        let fd = self.open_dir()?;
        let io_error =
            |error: rustix::io::Errno| WorkspaceError::io("list", self, io::Error::from(error));
        let mut dir = rustix::fs::Dir::read_from(&fd).map_err(io_error)?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(io_error)?;
            let name = entry.file_name();
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                continue;
            }
            let stat = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW);
            let (kind, size, target) =
                match stat.map(|stat| (FileType::from_raw_mode(stat.st_mode), stat.st_size)) {
                    Ok((FileType::Directory, _)) => (EntryKind::Directory, None, None),
                    Ok((FileType::Symlink, _)) => {
                        let target = rustix::fs::readlinkat(&fd, name, Vec::new())
                            .map(|target| target.to_string_lossy().into_owned())
                            .unwrap_or_else(|_| "?".to_owned());
                        (EntryKind::Symlink, None, Some(target))
                    }
                    Ok((FileType::RegularFile, size)) => (
                        EntryKind::File,
                        Some(u64::try_from(size).unwrap_or(0)),
                        None,
                    ),
                    Ok(_) => (EntryKind::Other, None, None),
                    Err(_) => (EntryKind::Unknown, None, None),
                };
            entries.push(FolderEntry {
                name: std::ffi::OsStr::from_bytes(name.to_bytes()).to_owned(),
                kind,
                size,
                target,
            });
        }
        Ok(entries)
    }
}
