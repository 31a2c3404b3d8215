//! `ListDir`: a folder's entries, sorted, with sizes and symlink targets.

use std::fmt::Write as _;
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

use super::blocking;
use super::text::{human_size, not_found};
use crate::workspace::{Access, Workspace};

/// Entries listed at most; the rest are counted in a note.
pub const MAX_LIST_DIR_ENTRIES: usize = 1000;

/// Overrides of ListDir's limits (R42); `Default` gives the named constants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListDirLimits {
    /// See [`MAX_LIST_DIR_ENTRIES`].
    pub max_entries: usize,
}

impl Default for ListDirLimits {
    fn default() -> Self {
        Self {
            max_entries: MAX_LIST_DIR_ENTRIES,
        }
    }
}

/// Parameters of `ListDir`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirParams {
    /// The folder to list: relative to the workspace root (`.` for the root itself), or
    /// absolute inside it.
    pub path: String,
}

/// Lists a folder.
pub struct ListDir {
    workspace: Arc<Workspace>,
    limits: ListDirLimits,
}

impl ListDir {
    /// `ListDir` with the default limits.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_limits(workspace, ListDirLimits::default())
    }

    /// `ListDir` with these limits.
    pub fn with_limits(workspace: Arc<Workspace>, limits: ListDirLimits) -> Self {
        Self { workspace, limits }
    }
}

/// One entry as listed.
struct Entry {
    name: String,
    kind: &'static str,
    size: Option<u64>,
    target: Option<String>,
}

impl TypedTool for ListDir {
    type Params = ListDirParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "ListDir",
            format!(
                "Lists the entries of a folder, sorted by name: folders end with `/`, files show \
                 their size, symlinks their target. Hidden entries are included. At most {} \
                 entries are shown. Use Glob to find files by pattern across folders.",
                self.limits.max_entries
            ),
        )
        .with_label("List folder")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
    }

    async fn run(&self, params: ListDirParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let max_entries = self.limits.max_entries;
        blocking(move || list(&workspace, &params.path, max_entries)).await
    }
}

fn list(workspace: &Workspace, path: &str, max_entries: usize) -> Result<ToolOutput, ToolError> {
    let path = workspace.resolve(path, Access::Read)?;
    if !path.existed() {
        return Err(ToolError::new(not_found(
            workspace,
            &path,
            "Use ListDir on its parent folder or Glob to find it.",
        )));
    }
    if !path.as_path().is_dir() {
        return Err(ToolError::new(format!(
            "{} is a file, not a folder. Use Read to see its content.",
            path.display()
        )));
    }
    let fd = path.open_dir()?;
    let io_error = |error: rustix::io::Errno| {
        ToolError::new(format!(
            "cannot list {}: {}",
            path.display(),
            std::io::Error::from(error)
        ))
    };
    let mut dir = rustix::fs::Dir::read_from(&fd).map_err(io_error)?;
    let mut entries = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(io_error)?;
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        // Looked up relative to the verified folder handle, never by path.
        let stat = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW);
        let (kind, size, target) =
            match stat.map(|stat| (FileType::from_raw_mode(stat.st_mode), stat.st_size)) {
                Ok((FileType::Directory, _)) => ("dir", None, None),
                Ok((FileType::Symlink, _)) => {
                    let target = rustix::fs::readlinkat(&fd, name, Vec::new())
                        .map(|target| target.to_string_lossy().into_owned())
                        .unwrap_or_else(|_| "?".to_owned());
                    ("symlink", None, Some(target))
                }
                Ok((FileType::RegularFile, size)) => {
                    ("file", Some(u64::try_from(size).unwrap_or(0)), None)
                }
                Ok(_) => ("other", None, None),
                Err(_) => ("unknown", None, None),
            };
        entries.push(Entry {
            name: name.to_string_lossy().into_owned(),
            kind,
            size,
            target,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let total = entries.len();
    let mut output = format!(
        "{} ({} entr{}):\n",
        path.display(),
        total,
        if total == 1 { "y" } else { "ies" }
    );
    for entry in entries.iter().take(max_entries) {
        match (entry.kind, entry.size, &entry.target) {
            ("dir", _, _) => {
                let _ = writeln!(output, "{}/", entry.name);
            }
            (_, _, Some(target)) => {
                let _ = writeln!(output, "{} -> {target}", entry.name);
            }
            (_, Some(size), _) => {
                let _ = writeln!(output, "{}  ({})", entry.name, human_size(size));
            }
            _ => {
                let _ = writeln!(output, "{}", entry.name);
            }
        }
    }
    if total > max_entries {
        let _ = writeln!(
            output,
            "[{} more entries not shown (limit {max_entries}). Use Glob with a pattern to find \
             specific files.]",
            total - max_entries
        );
    }
    if total == 0 {
        output.push_str("(empty folder)\n");
    }
    Ok(ToolOutput::text(output).with_details(json!({
        "path": path.display(),
        "total": total,
        "entries": entries.iter().take(max_entries).map(|entry| json!({
            "name": entry.name,
            "kind": entry.kind,
            "size": entry.size,
            "target": entry.target,
        })).collect::<Vec<_>>(),
    })))
}
