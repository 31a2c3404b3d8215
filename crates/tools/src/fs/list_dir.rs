//! `ListDir`: a folder's entries, sorted, with sizes and symlink targets.

use std::fmt::Write as _;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::text::{human_size, not_found};
use super::walk::{RuleSkips, skipped_note};
use super::{blocking, path_subject};
use crate::workspace::{Access, EntryKind, Workspace};

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
        .with_family(PermissionFamily::Read)
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        path_subject(&self.workspace, args, "path", None, Access::Read)
    }

    async fn run(&self, params: ListDirParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let max_entries = self.limits.max_entries;
        blocking(move || list(&workspace, &params.path, max_entries, &ctx)).await
    }
}

fn list(
    workspace: &Workspace,
    path: &str,
    max_entries: usize,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
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
    let skips = RuleSkips::for_call(workspace, ctx);
    let mut entries: Vec<Entry> = path
        .read_dir()?
        .into_iter()
        .filter(|entry| {
            skips
                .as_ref()
                .is_none_or(|skips| skips.allows(&path.as_path().join(&entry.name)))
        })
        .map(|entry| Entry {
            name: entry.name.to_string_lossy().into_owned(),
            kind: match entry.kind {
                EntryKind::Directory => "dir",
                EntryKind::Symlink => "symlink",
                EntryKind::File => "file",
                EntryKind::Other => "other",
                EntryKind::Unknown => "unknown",
            },
            size: entry.size,
            target: entry.target,
        })
        .collect();
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
    let (note, skipped) = skipped_note(skips.as_ref());
    if let Some(note) = note {
        let _ = writeln!(output, "{note}");
    }
    Ok(ToolOutput::text(output).with_details(json!({
        "path": path.display(),
        "total": total,
        "skipped_by_rules": skipped,
        "entries": entries.iter().take(max_entries).map(|entry| json!({
            "name": entry.name,
            "kind": entry.kind,
            "size": entry.size,
            "target": entry.target,
        })).collect::<Vec<_>>(),
    })))
}
