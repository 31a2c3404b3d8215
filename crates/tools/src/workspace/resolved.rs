//! A checked path, and the only ways to open one: each re-checks the open handle.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::WorkspaceError;

/// A path that [`Workspace::resolve`] checked: physical, absolute, inside an allowed root (when
/// restricted) and allowed for the access it was resolved for.
///
/// Open it only through its methods: they check the open handle again, so a symlink swapped in
/// after the check is caught.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPath {
    path: PathBuf,
    display: String,
    /// The root it was checked against; `None` when unrestricted and outside every root.
    root: Option<PathBuf>,
    exists: bool,
    regular_file_len: Option<u64>,
}

impl ResolvedPath {
    /// Only [`super::Workspace::resolve`] makes one.
    pub(super) fn new(
        display: String,
        path: PathBuf,
        root: Option<PathBuf>,
        exists: bool,
        regular_file_len: Option<u64>,
    ) -> Self {
        Self {
            path,
            display,
            root,
            exists,
            regular_file_len,
        }
    }

    /// The physical, absolute path.
    pub fn as_path(&self) -> &Path {
        &self.path
    }

    /// The path as shown to the model: relative to the workspace root when inside it.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// Whether the path existed when it was resolved.
    pub fn existed(&self) -> bool {
        self.exists
    }

    /// The length of the regular file resolution saw at the path, if it looked at it and saw
    /// one. A hint for choosing how to read (the file may have changed since), never a check.
    pub fn seen_regular_file_len(&self) -> Option<u64> {
        self.regular_file_len
    }

    /// Opens the file for reading, refusing a symlink swapped in since the check.
    ///
    /// The open never waits: `O_NONBLOCK` makes a FIFO swapped in for a regular file open at
    /// once (and then fail to read) instead of waiting for a writer, which matters to Read,
    /// which reads small files on the runtime's thread. Regular files ignore the flag.
    pub fn open_file(&self) -> Result<File, WorkspaceError> {
        let fd = rustix::fs::open(
            &self.path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|errno| self.open_error(errno))?;
        self.verify_handle(&fd)?;
        Ok(File::from(fd))
    }

    /// Opens the folder, refusing a symlink swapped in since the check.
    pub fn open_dir(&self) -> Result<OwnedFd, WorkspaceError> {
        let fd = rustix::fs::open(
            &self.path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| self.open_error(errno))?;
        self.verify_handle(&fd)?;
        Ok(fd)
    }

    /// The parent folder, opened and verified, with the file name inside it; missing folders
    /// on the way are created (inside the verified parent, one at a time). The handle is what
    /// writes go through: the name is only ever looked up relative to it.
    pub fn open_parent_for_write(&self) -> Result<(OwnedFd, OsString), WorkspaceError> {
        let name = self
            .path
            .file_name()
            .ok_or_else(|| {
                WorkspaceError::io(
                    "write",
                    self,
                    io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"),
                )
            })?
            .to_owned();
        let parent = self.path.parent().unwrap_or(Path::new("/"));
        // Find the deepest existing ancestor, then create the rest below its verified handle.
        let mut existing = parent.to_path_buf();
        let mut to_create: Vec<OsString> = Vec::new();
        while std::fs::symlink_metadata(&existing).is_err() {
            let Some(name) = existing.file_name() else {
                break;
            };
            to_create.push(name.to_owned());
            existing.pop();
        }
        let mut dir = rustix::fs::open(
            &existing,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| self.open_error(errno))?;
        self.verify_handle(&dir)?;
        for component in to_create.iter().rev() {
            match rustix::fs::mkdirat(&dir, component.as_os_str(), Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(errno) => {
                    return Err(WorkspaceError::io(
                        "create the folders of",
                        self,
                        errno.into(),
                    ));
                }
            }
            dir = rustix::fs::openat(
                &dir,
                component.as_os_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|errno| self.open_error(errno))?;
        }
        Ok((dir, name))
    }

    fn open_error(&self, errno: rustix::io::Errno) -> WorkspaceError {
        if errno == rustix::io::Errno::LOOP || errno == rustix::io::Errno::NOTDIR {
            // O_NOFOLLOW met a symlink where the check saw none: it was swapped in.
            return WorkspaceError::ChangedDuringUse {
                path: self.display.clone(),
                actual: self.path.clone(),
            };
        }
        WorkspaceError::io("open", self, errno.into())
    }

    /// Checks where an open handle really is; it must still be inside the checked root.
    fn verify_handle(&self, fd: &impl AsFd) -> Result<(), WorkspaceError> {
        let Some(root) = &self.root else {
            return Ok(());
        };
        let link = format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd());
        match std::fs::read_link(&link) {
            Ok(actual) if actual.starts_with(root) => Ok(()),
            Ok(actual) => Err(WorkspaceError::ChangedDuringUse {
                path: self.display.clone(),
                actual,
            }),
            // Without /proc the check on the name stands alone.
            Err(_) => Ok(()),
        }
    }
}
