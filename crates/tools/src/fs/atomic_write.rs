//! Atomic replacement of a file: a temporary file in the same folder, fsync, rename, fsync of
//! the folder. Whatever happens to the process, the file holds its old or its new content.
//!
//! Everything goes through a handle on the verified parent folder
//! ([`ResolvedPath::open_parent_for_write`]): the temporary file is created with `O_EXCL |
//! O_NOFOLLOW` relative to it and renamed with `renameat`, so a symlink swapped into the path
//! after the check can neither redirect the write nor be written through.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::workspace::{ResolvedPath, WorkspaceError};

/// Writes are buffered in pieces of this size; larger parts go straight to the file.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// What an atomic write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The file did not exist before.
    pub created: bool,
    /// The size of the file before, when it existed.
    pub previous_bytes: Option<u64>,
    /// Bytes written.
    pub bytes: u64,
}

/// Replaces the file at `path` with the concatenation of `parts`, atomically. Missing parent
/// folders are created; an existing file keeps its permission bits, and a read-only one is
/// refused ([`WorkspaceError::ReadOnlyFile`]).
pub fn atomic_write(path: &ResolvedPath, parts: &[&[u8]]) -> Result<WriteOutcome, WorkspaceError> {
    let (dir, name) = path.open_parent_for_write()?;
    let (mode, previous_bytes) =
        match rustix::fs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {
                return Err(WorkspaceError::io(
                    "write",
                    path,
                    io::Error::new(
                        io::ErrorKind::IsADirectory,
                        "it is a folder; give the path of a file inside it",
                    ),
                ));
            }
            Ok(stat) => {
                refuse_read_only(&dir, &name, stat.st_mode, path)?;
                (
                    Some(Mode::from_raw_mode(stat.st_mode & 0o7777)),
                    Some(u64::try_from(stat.st_size).unwrap_or(0)),
                )
            }
            Err(rustix::io::Errno::NOENT) => (None, None),
            Err(errno) => return Err(WorkspaceError::io("write", path, errno.into())),
        };
    let temp_name = temp_name(&name);
    let result = write_temp(&dir, &temp_name, mode, parts).and_then(|bytes| {
        rustix::fs::renameat(&dir, temp_name.as_os_str(), &dir, name.as_os_str())?;
        // The rename is durable once the folder is.
        rustix::fs::fsync(&dir)?;
        Ok(bytes)
    });
    match result {
        Ok(bytes) => Ok(WriteOutcome {
            created: previous_bytes.is_none(),
            previous_bytes,
            bytes,
        }),
        Err(error) => {
            let _ = rustix::fs::unlinkat(&dir, temp_name.as_os_str(), AtFlags::empty());
            Err(WorkspaceError::io("write", path, error))
        }
    }
}

/// Refuses to replace a read-only file. The rename would replace it whatever its mode (it
/// needs only the folder to be writable), and root may write anything: so the mode bits
/// decide — no write bit at all is read-only for everyone — and `access(W_OK)` decides for
/// a file writable by others only.
fn refuse_read_only(
    dir: &OwnedFd,
    name: &OsStr,
    mode: u32,
    path: &ResolvedPath,
) -> Result<(), WorkspaceError> {
    let mode = mode & 0o7777;
    let denied = mode & 0o222 == 0
        || rustix::fs::accessat(dir, name, rustix::fs::Access::WRITE_OK, AtFlags::empty())
            == Err(rustix::io::Errno::ACCESS);
    if denied {
        return Err(WorkspaceError::ReadOnlyFile {
            path: path.display().to_owned(),
            mode,
        });
    }
    Ok(())
}

fn write_temp(
    dir: &OwnedFd,
    temp_name: &OsStr,
    mode: Option<Mode>,
    parts: &[&[u8]],
) -> io::Result<u64> {
    let fd = rustix::fs::openat(
        dir,
        temp_name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )?;
    if let Some(mode) = mode {
        // Set after creation, so the umask cannot narrow the file's permissions.
        rustix::fs::fchmod(&fd, mode)?;
    }
    let file = File::from(fd);
    let mut writer = io::BufWriter::with_capacity(WRITE_BUFFER_BYTES, &file);
    let mut bytes = 0u64;
    for part in parts {
        writer.write_all(part)?;
        bytes += part.len() as u64;
    }
    writer.flush()?;
    drop(writer);
    file.sync_all()?;
    Ok(bytes)
}

/// A hidden name beside the target, unique within this process and across processes.
fn temp_name(name: &OsStr) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(
        ".toolhost-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    temp
}
