//! Unpacking a downloaded skill archive (tar.gz or zip) into a fresh folder, refusing
//! whatever could write outside it or plant something other than plain files:
//!
//! - an entry path that is absolute, holds `..`, a backslash or a NUL, or is empty;
//! - any symlink or hard link, wherever it points: a skill is instructions and plain files,
//!   and refusing every link is simpler to trust than judging where each one leads;
//! - device files, FIFOs and every other special entry;
//! - two entries with one path (the second could replace the first's checked content);
//! - more than [`UnpackLimits::max_entries`] entries, or more than
//!   [`UnpackLimits::max_bytes`] unpacked: bytes are counted as they are inflated, so a zip
//!   bomb stops at the cap, never after it has filled the disk.
//!
//! Files are created `0644` (`0755` only when the index entry says `executable: true` and the
//! archive marks the file executable), folders `0755`; nothing is ever opened through a path
//! the archive did not pass these checks for, and nothing is created outside the destination
//! (which must be empty: see the hub's install, which unpacks into a temp folder and renames
//! it into place).

use std::fs::OpenOptions;
use std::io::{self, Read, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Component, Path, PathBuf};

/// Caps on what one archive may unpack to (R42: each has a `[skills]` override).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnpackLimits {
    /// The most entries (files and folders).
    pub max_entries: usize,
    /// The most bytes all files together may hold once unpacked.
    pub max_bytes: u64,
    /// Whether files the archive marks executable keep an executable bit.
    pub allow_executable: bool,
}

/// Why an archive was refused. Each names the entry and what was wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// The bytes are neither gzip (tar.gz) nor zip.
    #[error("the archive is neither a tar.gz nor a zip file")]
    UnknownFormat,
    /// The archive is damaged or not what it claims.
    #[error("the archive is damaged: {0}")]
    Damaged(String),
    /// An entry's path could leave the folder (absolute, `..`) or is not a plain path.
    #[error("refused entry '{entry}': {why}")]
    UnsafePath {
        /// The entry's path, as written in the archive.
        entry: String,
        /// Why.
        why: &'static str,
    },
    /// A symlink or hard link.
    #[error(
        "refused entry '{entry}': it is a {kind}; skill archives may hold only files and folders"
    )]
    Link {
        /// The entry's path.
        entry: String,
        /// `symlink` or `hard link`.
        kind: &'static str,
    },
    /// A device file, FIFO or other special entry.
    #[error("refused entry '{entry}': it is a {kind}, not a file or folder")]
    Special {
        /// The entry's path.
        entry: String,
        /// What it is.
        kind: String,
    },
    /// Two entries share a path.
    #[error("refused entry '{entry}': the archive holds that path twice")]
    Duplicate {
        /// The entry's path.
        entry: String,
    },
    /// Too many entries.
    #[error("the archive holds more than {max} entries (the limit, [skills] max_entries)")]
    TooManyEntries {
        /// The limit.
        max: usize,
    },
    /// Too many bytes once unpacked.
    #[error(
        "the archive unpacks to more than {max} bytes (stopped at '{entry}'; the limit is \
         [skills] max_unpacked_bytes)"
    )]
    TooLarge {
        /// The limit.
        max: u64,
        /// The entry being unpacked when the limit was reached.
        entry: String,
    },
    /// Writing the unpacked files failed.
    #[error("cannot unpack '{entry}': {source}")]
    Io {
        /// The entry.
        entry: String,
        /// What the operating system said.
        source: io::Error,
    },
}

/// Unpacks `archive` (tar.gz or zip, told apart by their first bytes) into `destination`,
/// an existing empty folder. On error, `destination` may hold part of the archive: the
/// caller removes it.
pub fn unpack(archive: &[u8], destination: &Path, limits: UnpackLimits) -> Result<(), UnpackError> {
    let mut writer = Writer {
        root: destination,
        limits,
        entries: 0,
        bytes: 0,
    };
    if archive.starts_with(&[0x1f, 0x8b]) {
        unpack_tar_gz(archive, &mut writer)
    } else if archive.starts_with(b"PK\x03\x04") || archive.starts_with(b"PK\x05\x06") {
        unpack_zip(archive, &mut writer)
    } else {
        Err(UnpackError::UnknownFormat)
    }
}

fn unpack_tar_gz(archive: &[u8], writer: &mut Writer<'_>) -> Result<(), UnpackError> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let entries = tar
        .entries()
        .map_err(|error| UnpackError::Damaged(error.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|error| UnpackError::Damaged(error.to_string()))?;
        let kind = entry.header().entry_type();
        // `git archive` writes a pax global header (the commit id): metadata, not a file.
        if kind == tar::EntryType::XGlobalHeader {
            continue;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        writer.count_entry()?;
        let mode = entry.header().mode().unwrap_or(0o644);
        match kind {
            tar::EntryType::Directory => writer.folder(&name)?,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                writer.file(&name, mode, &mut entry)?;
            }
            tar::EntryType::Symlink => return Err(link(name, "symlink")),
            tar::EntryType::Link => return Err(link(name, "hard link")),
            tar::EntryType::Char => return Err(special(name, "character device")),
            tar::EntryType::Block => return Err(special(name, "block device")),
            tar::EntryType::Fifo => return Err(special(name, "FIFO")),
            other => return Err(special(name, &format!("tar entry of type {other:?}"))),
        }
    }
    Ok(())
}

fn unpack_zip(archive: &[u8], writer: &mut Writer<'_>) -> Result<(), UnpackError> {
    let mut zip = zip::ZipArchive::new(io::Cursor::new(archive))
        .map_err(|error| UnpackError::Damaged(error.to_string()))?;
    // The central directory says how many entries there are: refuse before inflating any.
    if zip.len() > writer.limits.max_entries {
        return Err(UnpackError::TooManyEntries {
            max: writer.limits.max_entries,
        });
    }
    for index in 0..zip.len() {
        let mut entry = zip
            .by_index(index)
            .map_err(|error| UnpackError::Damaged(error.to_string()))?;
        let name = entry
            .name()
            .map_err(|error| UnpackError::Damaged(error.to_string()))?
            .into_owned();
        writer.count_entry()?;
        let mode = entry.unix_mode();
        if entry.is_symlink() {
            return Err(link(name, "symlink"));
        }
        match mode.map(|mode| mode & 0o170_000) {
            None | Some(0o100_000 | 0o040_000 | 0) => {}
            Some(0o120_000) => return Err(link(name, "symlink")),
            Some(0o020_000) => return Err(special(name, "character device")),
            Some(0o060_000) => return Err(special(name, "block device")),
            Some(0o010_000) => return Err(special(name, "FIFO")),
            Some(0o140_000) => return Err(special(name, "socket")),
            Some(other) => return Err(special(name, &format!("file of type {other:o}"))),
        }
        if entry.is_dir() {
            writer.folder(&name)?;
        } else {
            writer.file(&name, mode.unwrap_or(0o644), &mut entry)?;
        }
    }
    Ok(())
}

fn link(entry: String, kind: &'static str) -> UnpackError {
    UnpackError::Link { entry, kind }
}

fn special(entry: String, kind: &str) -> UnpackError {
    UnpackError::Special {
        entry,
        kind: kind.to_owned(),
    }
}

/// Creates the checked entries under `root`, counting entries and bytes.
struct Writer<'a> {
    root: &'a Path,
    limits: UnpackLimits,
    entries: usize,
    bytes: u64,
}

impl Writer<'_> {
    fn count_entry(&mut self) -> Result<(), UnpackError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(UnpackError::TooManyEntries {
                max: self.limits.max_entries,
            });
        }
        Ok(())
    }

    fn folder(&self, name: &str) -> Result<(), UnpackError> {
        let relative = safe_relative_path(name)?;
        if relative.as_os_str().is_empty() {
            return Ok(());
        }
        self.create_folders(name, &relative)
    }

    fn create_folders(&self, name: &str, relative: &Path) -> Result<(), UnpackError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(self.root.join(relative))
            .map_err(|source| UnpackError::Io {
                entry: name.to_owned(),
                source,
            })
    }

    fn file(&mut self, name: &str, mode: u32, content: &mut dyn Read) -> Result<(), UnpackError> {
        let relative = safe_relative_path(name)?;
        if relative.as_os_str().is_empty() {
            return Err(UnpackError::UnsafePath {
                entry: name.to_owned(),
                why: "a file entry needs a name",
            });
        }
        if let Some(parent) = relative.parent() {
            self.create_folders(name, parent)?;
        }
        let executable = self.limits.allow_executable && mode & 0o111 != 0;
        let io_error = |source: io::Error| UnpackError::Io {
            entry: name.to_owned(),
            source,
        };
        // `create_new` refuses an existing path, a duplicate entry included; the parent
        // folders are ours (made just above from checked names), so no link is followed.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .mode(if executable { 0o755 } else { 0o644 })
            .open(self.root.join(&relative))
            .map_err(|source| {
                if source.kind() == io::ErrorKind::AlreadyExists {
                    UnpackError::Duplicate {
                        entry: name.to_owned(),
                    }
                } else {
                    io_error(source)
                }
            })?;
        let left = self.limits.max_bytes.saturating_sub(self.bytes);
        // One byte past what is left tells "exactly at the cap" from "over it" without
        // inflating more than that.
        let copied =
            io::copy(&mut content.take(left.saturating_add(1)), &mut file).map_err(|source| {
                match source.kind() {
                    io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => {
                        UnpackError::Damaged(format!("'{name}': {source}"))
                    }
                    _ => io_error(source),
                }
            })?;
        if copied > left {
            return Err(UnpackError::TooLarge {
                max: self.limits.max_bytes,
                entry: name.to_owned(),
            });
        }
        self.bytes += copied;
        file.flush().map_err(io_error)?;
        Ok(())
    }
}

/// The entry's path as a relative path with only normal components, or why it is refused.
/// `./` components are dropped; the empty result is the archive's root.
pub fn safe_relative_path(name: &str) -> Result<PathBuf, UnpackError> {
    let refuse = |why: &'static str| UnpackError::UnsafePath {
        entry: name.to_owned(),
        why,
    };
    if name.contains('\0') {
        return Err(refuse("the path holds a NUL byte"));
    }
    if name.contains('\\') {
        return Err(refuse("the path holds a backslash"));
    }
    let path = Path::new(name);
    let mut relative = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => relative.push(part),
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse("the path holds '..'")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse("the path is absolute"));
            }
        }
    }
    Ok(relative)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn entry_paths_must_stay_inside() {
        assert_eq!(
            safe_relative_path("./a/b.md").unwrap(),
            PathBuf::from("a/b.md")
        );
        for (name, why) in [
            ("../x", "'..'"),
            ("a/../../x", "'..'"),
            ("/etc/passwd", "absolute"),
            ("a\\..\\x", "backslash"),
        ] {
            let error = safe_relative_path(name).unwrap_err().to_string();
            assert!(error.contains(why), "{name}: {error}");
        }
    }
}
