//! The filesystem tools (R19–R21): one tool per file, each holding its parameters, its spec,
//! its limits and its `execute`. Every path goes through [`Workspace::resolve`]; file work
//! runs on the blocking pool so a large file never stalls the async runtime.

mod atomic_write;
mod edit;
mod edit_match;
mod editor_files;
mod file_reads;
mod glob;
mod grep;
mod line_seek;
mod list_dir;
mod multi_edit;
mod near_miss;
mod read;
mod reindent;
mod text;
mod walk;
mod write;

use std::sync::Arc;

use serde_json::Value;
use toolhost_core::{PermissionSubject, Tool, ToolError};

use crate::workspace::{Access, Workspace, WorkspaceError};

pub use atomic_write::{WriteOutcome, atomic_write};
pub use edit::{Edit, EditLimits, EditParams, MAX_EDIT_FILE_BYTES, MAX_NORMALIZED_MATCH_BYTES};
pub use editor_files::{EditorFiles, SessionEditor};
pub use glob::{Glob, GlobLimits, GlobParams, MAX_GLOB_RESULTS};
pub use grep::{
    Grep, GrepLimits, GrepOutputMode, GrepParams, MAX_GREP_LINE_CHARS, MAX_GREP_OUTPUT_LINES,
};
pub use list_dir::{ListDir, ListDirLimits, ListDirParams, MAX_LIST_DIR_ENTRIES};
pub use multi_edit::{EditStep, MultiEdit, MultiEditParams};
pub use read::{
    DEFAULT_READ_LINE_LIMIT, MAX_IMAGE_BYTES, MAX_READ_LINE_CHARS, MAX_READ_OUTPUT_BYTES,
    MAX_UNRANGED_READ_FILE_BYTES, Read, ReadLimits, ReadParams,
};
pub use write::{Write, WriteParams};

/// The filesystem tools on `workspace`, with default limits, in spec order: Read, Write,
/// Edit, MultiEdit, ListDir, Glob, Grep.
pub fn filesystem_tools(workspace: Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Read::new(workspace.clone())),
        Arc::new(Write::new(workspace.clone())),
        Arc::new(Edit::new(workspace.clone())),
        Arc::new(MultiEdit::new(workspace.clone())),
        Arc::new(ListDir::new(workspace.clone())),
        Arc::new(Glob::new(workspace.clone())),
        Arc::new(Grep::new(workspace)),
    ]
}

impl From<WorkspaceError> for ToolError {
    fn from(error: WorkspaceError) -> Self {
        ToolError::new(error.to_string())
    }
}

/// What path rules judge a call by: the path in `args[key]` (or `default` when the call gives
/// none), in every form [`Workspace::permission_paths`] reports.
fn path_subject(
    workspace: &Workspace,
    args: &Value,
    key: &str,
    default: Option<&str>,
    access: Access,
) -> PermissionSubject {
    match args.get(key).and_then(Value::as_str).or(default) {
        Some(path) => PermissionSubject::Paths(workspace.permission_paths(path, access)),
        None => PermissionSubject::None,
    }
}

/// Runs file work on the blocking pool; a panic there becomes an error, never a crash.
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| ToolError::new(format!("the file operation failed: {error}")))?
}
