//! The workspace sandbox: every path a model gives is resolved here, and only here (R20).
//!
//! A [`Workspace`] has one canonical root and, optionally, extra roots that are each read-only
//! or writable. [`Workspace::resolve`] turns the text a model sent into a [`ResolvedPath`]:
//!
//! - a relative path is joined to the root; an absolute path is taken as it is (MCP clients
//!   send absolute paths) and `~` / `~/…` expands to the home folder;
//! - every existing component is resolved physically, symlinks included, the way the kernel
//!   would (so `link/..` is the parent of the link's *target*); components that do not exist yet
//!   (a new file, new folders) are appended to their resolved, existing parent;
//! - with `restrict_to_workspace` on (the default) the result must lie under a root, and under a
//!   writable root for [`Access::Write`].
//!
//! A check on a path name is not enough on its own: a symlink can be swapped in between the
//! check and the use. So a [`ResolvedPath`] is opened only through its own methods, which open
//! the file or folder and then check where the *open handle* really is (through
//! `/proc/self/fd`), and writes go through a handle on the verified parent folder (see
//! `fs::atomic_write`). A tool cannot reach a file API with an unchecked path: the only way to
//! get a [`ResolvedPath`] is [`Workspace::resolve`].

mod error;
mod listing;
mod resolved;
mod subject;

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

pub use error::WorkspaceError;
pub use listing::{EntryKind, FolderEntry};
pub use resolved::ResolvedPath;

/// How many symlinks one resolution may follow before it is refused as a loop (Linux's limit).
pub const MAX_SYMLINK_FOLLOWS: usize = 40;

/// What a tool means to do with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read a file or list a folder.
    Read,
    /// Create, replace or change a file.
    Write,
}

/// Whether tools may change files under a root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootAccess {
    /// Tools may read, never write.
    ReadOnly,
    /// Tools may read and write.
    Writable,
}

/// Whether Write and Edit require the session to know a file as it is on disk now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadBeforeWrite {
    /// Write refuses an existing file the session has not read, or that changed since; Edit
    /// refuses a file that changed since the session read it. The default of every session
    /// `toolhost` runs (`[tools] read_before_write`).
    Required,
    /// No check (a library's default, and a one-shot `toolhost call`).
    #[default]
    NotRequired,
}

/// One folder tools may use, canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Root {
    path: PathBuf,
    access: RootAccess,
}

/// Builds a [`Workspace`]: the root, extra roots and whether paths outside are refused.
#[derive(Debug)]
pub struct WorkspaceBuilder {
    root: PathBuf,
    extra_roots: Vec<(PathBuf, RootAccess)>,
    restrict_to_workspace: bool,
    home: Option<PathBuf>,
    read_before_write: ReadBeforeWrite,
}

impl WorkspaceBuilder {
    /// Whether Write and Edit check that the session knows a file as it is on disk now
    /// (default [`ReadBeforeWrite::NotRequired`]).
    #[must_use]
    pub fn read_before_write(mut self, check: ReadBeforeWrite) -> Self {
        self.read_before_write = check;
        self
    }

    /// Allows tools to use `path` as well, read-only or writable.
    #[must_use]
    pub fn extra_root(mut self, path: impl Into<PathBuf>, access: RootAccess) -> Self {
        self.extra_roots.push((path.into(), access));
        self
    }

    /// Whether paths outside the roots are refused (default `true`). Off, any path the process
    /// can reach is allowed; resolution and its messages stay the same.
    #[must_use]
    pub fn restrict_to_workspace(mut self, restrict: bool) -> Self {
        self.restrict_to_workspace = restrict;
        self
    }

    /// The folder `~` expands to (default: `$HOME`; `None` refuses paths starting with `~`).
    #[must_use]
    pub fn home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The workspace; fails when a root does not exist or is not a folder.
    pub fn build(self) -> io::Result<Workspace> {
        let canonical_dir = |path: &Path| -> io::Result<PathBuf> {
            let canonical = std::fs::canonicalize(path).map_err(|error| {
                io::Error::new(
                    error.kind(),
                    format!("workspace root {}: {error}", path.display()),
                )
            })?;
            if !canonical.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("workspace root {} is not a folder", path.display()),
                ));
            }
            Ok(canonical)
        };
        let root = canonical_dir(&self.root)?;
        let mut roots = vec![Root {
            path: root.clone(),
            access: RootAccess::Writable,
        }];
        for (path, access) in &self.extra_roots {
            roots.push(Root {
                path: canonical_dir(path)?,
                access: *access,
            });
        }
        Ok(Workspace {
            root,
            roots,
            restrict_to_workspace: self.restrict_to_workspace,
            home: self.home,
            read_before_write: self.read_before_write,
        })
    }
}

/// The folders tools may use, and the one way to turn a model's path into a usable one.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    roots: Vec<Root>,
    restrict_to_workspace: bool,
    home: Option<PathBuf>,
    read_before_write: ReadBeforeWrite,
}

impl Workspace {
    /// A workspace rooted at `root`, restricted to it, with no extra roots.
    pub fn new(root: impl Into<PathBuf>) -> io::Result<Self> {
        Self::builder(root).build()
    }

    /// A builder for a workspace rooted at `root`.
    pub fn builder(root: impl Into<PathBuf>) -> WorkspaceBuilder {
        WorkspaceBuilder {
            root: root.into(),
            extra_roots: Vec::new(),
            restrict_to_workspace: true,
            home: std::env::var_os("HOME").map(PathBuf::from),
            read_before_write: ReadBeforeWrite::default(),
        }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How `path` (physical, absolute) is shown to the model: relative to the root when inside
    /// it, else absolute.
    pub fn display_path(&self, path: &Path) -> String {
        display_path(path, &self.root)
    }

    /// Whether Write and Edit check that the session knows a file as it is on disk now.
    pub fn read_before_write(&self) -> ReadBeforeWrite {
        self.read_before_write
    }

    /// Whether paths outside the roots are refused.
    pub fn is_restricted(&self) -> bool {
        self.restrict_to_workspace
    }

    /// Resolves the path a model gave for `access`, or says why it is refused.
    pub fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, WorkspaceError> {
        let given = path;
        if path.is_empty() {
            return Err(WorkspaceError::EmptyPath {
                root: self.root.clone(),
            });
        }
        if path.contains('\0') {
            return Err(WorkspaceError::NulByte {
                path: given.to_owned(),
            });
        }
        let absolute = self.absolute(given)?;
        let mut via = None;
        let Resolution {
            existing: mut resolved,
            missing,
            regular_file_len,
        } = resolve_physically(&absolute, &self.roots, &mut via, &mut 0).map_err(|error| {
            match error {
                ResolveError::Loop => WorkspaceError::SymlinkLoop {
                    path: given.to_owned(),
                },
                ResolveError::Io(source) => WorkspaceError::Io {
                    action: "resolve",
                    path: given.to_owned(),
                    source,
                },
            }
        })?;
        let exists = missing.is_empty();
        resolved.extend(missing);
        let root = self.check(given, &resolved, via.as_deref(), access)?;
        Ok(ResolvedPath::new(
            display_path(&resolved, &self.root),
            resolved,
            root.map(|root| root.path.clone()),
            exists,
            regular_file_len,
        ))
    }

    /// The path as an absolute path, `~` expanded, before any symlink is looked at.
    fn absolute(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let home_relative = if path == "~" {
            Some("")
        } else {
            path.strip_prefix("~/")
        };
        if let Some(rest) = home_relative {
            let Some(home) = &self.home else {
                return Err(WorkspaceError::NoHome {
                    path: path.to_owned(),
                    root: self.root.clone(),
                });
            };
            return Ok(home.join(rest));
        }
        let path = Path::new(path);
        Ok(if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        })
    }

    /// The root `resolved` lies in, checked against `access`; `None` when unrestricted and
    /// outside every root.
    fn check(
        &self,
        given: &str,
        resolved: &Path,
        via: Option<&Path>,
        access: Access,
    ) -> Result<Option<&Root>, WorkspaceError> {
        // The innermost root wins, so a read-only root inside the workspace stays read-only.
        let root = self
            .roots
            .iter()
            .filter(|root| resolved.starts_with(&root.path))
            .max_by_key(|root| root.path.as_os_str().len());
        match root {
            Some(root) if access == Access::Write && root.access == RootAccess::ReadOnly => {
                Err(WorkspaceError::ReadOnlyRoot {
                    path: given.to_owned(),
                    root: root.path.clone(),
                    workspace: self.root.clone(),
                })
            }
            Some(root) => Ok(Some(root)),
            None if !self.restrict_to_workspace => Ok(None),
            None => Err(WorkspaceError::OutsideWorkspace {
                path: given.to_owned(),
                resolved: resolved.to_path_buf(),
                via: via
                    .map(|link| format!(" (through the symlink {})", link.display()))
                    .unwrap_or_default(),
                roots: self
                    .roots
                    .iter()
                    .map(|root| root.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                root: self.root.clone(),
            }),
        }
    }
}

enum ResolveError {
    Loop,
    Io(io::Error),
}

/// What [`resolve_physically`] found.
struct Resolution {
    /// The physical path of the part that exists.
    existing: PathBuf,
    /// The names below it that do not exist yet.
    missing: Vec<OsString>,
    /// The length of the last component when resolution looked at it and saw a regular file.
    regular_file_len: Option<u64>,
}

/// Resolves `path` (absolute) the way the kernel would: component by component, following
/// every symlink of the existing part. `via` receives the first symlink followed, for the error
/// message.
///
/// A path under one of the canonical `roots` starts from that root rather than from `/`: the
/// root's own ancestors are not looked at again (one `statx` each, per call). That gives up
/// nothing. The roots were canonical when the workspace was built; if one of their ancestors
/// were swapped for a symlink since, walking them again would only catch it *before* the
/// open, while [`ResolvedPath`]'s methods catch it *at* the open, where it counts: they read
/// where the open handle really is from `/proc/self/fd`, and a handle reached through a
/// swapped ancestor is not under the root.
fn resolve_physically(
    path: &Path,
    roots: &[Root],
    via: &mut Option<PathBuf>,
    follows: &mut usize,
) -> Result<Resolution, ResolveError> {
    let (mut current, rest) = roots
        .iter()
        .filter_map(|root| Some((&root.path, path.strip_prefix(&root.path).ok()?)))
        .max_by_key(|(root, _)| root.as_os_str().len())
        .map_or_else(
            || (PathBuf::from("/"), path),
            |(root, rest)| (root.clone(), rest),
        );
    let mut missing: Vec<OsString> = Vec::new();
    let mut regular_file_len = None;
    for component in rest.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                current = PathBuf::from("/");
                regular_file_len = None;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if missing.pop().is_none() {
                    current.pop();
                }
                regular_file_len = None;
            }
            Component::Normal(name) if !missing.is_empty() => missing.push(name.to_owned()),
            Component::Normal(name) => {
                let candidate = current.join(name);
                match std::fs::symlink_metadata(&candidate) {
                    Ok(metadata) if metadata.file_type().is_symlink() => {
                        *follows += 1;
                        if *follows > MAX_SYMLINK_FOLLOWS {
                            return Err(ResolveError::Loop);
                        }
                        if via.is_none() {
                            *via = Some(candidate.clone());
                        }
                        let target = std::fs::read_link(&candidate).map_err(ResolveError::Io)?;
                        // A relative target is relative to the link's folder, `current`; a
                        // dangling link resolves to what writing through it would create.
                        let target =
                            resolve_physically(&current.join(target), roots, via, follows)?;
                        (current, missing) = (target.existing, target.missing);
                        regular_file_len = target.regular_file_len;
                    }
                    Ok(metadata) => {
                        current = candidate;
                        regular_file_len = metadata.is_file().then_some(metadata.len());
                    }
                    Err(error)
                        if error.kind() == io::ErrorKind::NotFound
                            || error.kind() == io::ErrorKind::NotADirectory =>
                    {
                        missing.push(name.to_owned());
                        regular_file_len = None;
                    }
                    Err(error) => return Err(ResolveError::Io(error)),
                }
            }
        }
    }
    Ok(Resolution {
        existing: current,
        missing,
        regular_file_len,
    })
}

/// How a path is shown to the model: relative to the root when inside it, else absolute.
fn display_path(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
