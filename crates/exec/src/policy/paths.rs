//! Paths in arguments and redirections that lead outside the workspace.

use std::path::{Component, Path, PathBuf};

use super::words::Word;

/// Devices any command may read or write: they hold no data worth protecting.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
];
const HARMLESS_DEVICE_FOLDERS: &[&str] = &["/dev/fd/", "/dev/shm/", "/dev/pts/"];

/// Device names of disks, partitions and raw memory.
const BLOCK_DEVICE_PREFIXES: &[&str] = &[
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
    "/dev/md",
    "/dev/dm-",
    "/dev/mapper/",
    "/dev/disk/",
    "/dev/loop",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
];

/// Programs whose arguments are text, not paths (`echo /etc` touches nothing).
const TEXT_PROGRAMS: &[&str] = &["echo", "printf"];

pub(crate) fn is_harmless_device(path: &str) -> bool {
    HARMLESS_DEVICES.contains(&path)
        || HARMLESS_DEVICE_FOLDERS
            .iter()
            .any(|folder| path.starts_with(folder))
}

pub(crate) fn is_block_device(path: &str) -> bool {
    BLOCK_DEVICE_PREFIXES
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// `.` and `..` resolved without touching the filesystem (`/a/b/../c` → `/a/c`; `/..` → `/`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !normalized.pop() && !path.is_absolute() {
                    normalized.push("..");
                }
            }
            Component::CurDir => {}
            other => normalized.push(other.as_os_str()),
        }
    }
    normalized
}

/// A path in a command that leads outside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsidePath {
    /// The path as written (`../x`, `~/.ssh`, `/etc/hosts`, `$HOME/x`).
    pub written: String,
    /// Where it leads, resolved lexically (symlinks are not followed); `~` and `$HOME` use
    /// the home folder, when it is known.
    pub resolved: PathBuf,
    /// The command or redirection it appeared in.
    pub command: String,
}

/// The workspace and the folders needed to resolve relative and home paths.
#[derive(Debug, Clone)]
pub(crate) struct PathScope {
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) working_dir: PathBuf,
    pub(crate) home: Option<PathBuf>,
}

impl PathScope {
    /// Outside paths among a command's arguments (`words[0]`, the program, is not one).
    pub(crate) fn check_arguments(
        &self,
        program: &str,
        words: &[Word],
        source: &str,
    ) -> Vec<OutsidePath> {
        if TEXT_PROGRAMS.contains(&program) {
            return Vec::new();
        }
        words
            .iter()
            .skip(1)
            .filter_map(|word| self.outside(word, source))
            .collect()
    }

    /// Where `word` leads, when that is outside the workspace.
    pub(crate) fn outside(&self, word: &Word, source: &str) -> Option<OutsidePath> {
        let resolved = self.resolve(word)?;
        if self.roots.iter().any(|root| resolved.starts_with(root))
            || is_harmless_device(&resolved.to_string_lossy())
        {
            return None;
        }
        Some(OutsidePath {
            written: word.text().to_owned(),
            resolved,
            command: source.to_owned(),
        })
    }

    fn resolve(&self, word: &Word) -> Option<PathBuf> {
        let text = match word {
            Word::Static(text) => text.clone(),
            Word::Dynamic(source) => {
                let unquoted = source.replace('"', "");
                let rest = unquoted
                    .strip_prefix("${HOME}")
                    .or_else(|| unquoted.strip_prefix("$HOME"))?;
                format!("~{rest}")
            }
        };
        // `--output=/etc/x`, `of=/dev/sda`: the value is the path.
        let text = match text.split_once('=') {
            Some((key, value)) if !key.contains('/') => value,
            _ => text.as_str(),
        };
        if text.contains("://") {
            return None;
        }
        if let Some(rest) = text.strip_prefix('~') {
            let home = self
                .home
                .clone()
                .unwrap_or_else(|| PathBuf::from("/home/~"));
            return Some(match rest.strip_prefix('/') {
                Some(inside) => normalize(&home.join(inside)),
                None if rest.is_empty() => normalize(&home),
                // `~other/…`: another user's home.
                None => PathBuf::from(format!("/home/{rest}")),
            });
        }
        if text.starts_with('/') {
            return Some(normalize(Path::new(text)));
        }
        let escapes = Path::new(text)
            .components()
            .any(|component| component == Component::ParentDir);
        escapes.then(|| normalize(&self.working_dir.join(text)))
    }
}
