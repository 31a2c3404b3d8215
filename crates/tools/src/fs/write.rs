//! `Write`: creates or replaces a file, atomically (R19).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::atomic_write::{WriteOutcome, atomic_write};
use super::editor_files::SessionEditor;
use super::file_reads::{Change, check_before_write, record_seen};
use super::text::human_size;
use super::{blocking, path_subject};
use crate::workspace::{Access, ResolvedPath, Workspace};

/// Parameters of `Write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteParams {
    /// The file to create or replace: relative to the workspace root, or absolute inside it.
    /// Missing parent folders are created.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// Writes a whole file: temp file in the same folder, fsync, rename.
pub struct Write {
    workspace: Arc<Workspace>,
}

impl Write {
    /// `Write` on this workspace.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self { workspace }
    }
}

impl TypedTool for Write {
    type Params = WriteParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Write",
            "Creates a file or replaces its whole content, atomically: the file holds either \
             its old or its new content, never a mix. Missing parent folders are created and an \
             existing file keeps its permissions; a read-only file is refused. An existing file \
             must be read first (Read), so that nothing you have not seen is lost. To change \
             part of a file use Edit instead.",
        )
        .with_label("Write file")
        .with_parameter_alias("file_path", "path")
        .with_annotations(ToolAnnotations {
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
        })
        .with_sensitivity(Sensitivity::Edit)
        .with_family(PermissionFamily::Edit)
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        path_subject(&self.workspace, args, "path", None, Access::Write)
    }

    /// In a session an editor drives, the new content goes to the editor (which shows it
    /// and saves it) instead of straight to the disk, after the same checks.
    async fn run(&self, params: WriteParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(editor) = SessionEditor::of(&ctx) {
            let path = self.workspace.resolve(&params.path, Access::Write)?;
            check_before_write(&self.workspace, &ctx, &path, Change::Replace)?;
            let previous_bytes = std::fs::metadata(path.as_path())
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map(|metadata| metadata.len());
            editor
                .write_text(path.as_path(), &params.content)
                .await
                .map_err(|error| {
                    ToolError::new(format!(
                        "the editor did not write {}: {error}",
                        path.display()
                    ))
                })?;
            record_seen(&self.workspace, &ctx, &path);
            let outcome = WriteOutcome {
                created: previous_bytes.is_none(),
                bytes: params.content.len() as u64,
                previous_bytes,
            };
            return Ok(written(&path, params.content.as_bytes(), &outcome));
        }
        let workspace = self.workspace.clone();
        blocking(move || {
            let path = workspace.resolve(&params.path, Access::Write)?;
            check_before_write(&workspace, &ctx, &path, Change::Replace)?;
            let content = params.content.as_bytes();
            let outcome = atomic_write(&path, &[content])?;
            record_seen(&workspace, &ctx, &path);
            Ok(written(&path, content, &outcome))
        })
        .await
    }
}

/// What the model reads after `content` was written to `path`.
fn written(path: &ResolvedPath, content: &[u8], outcome: &WriteOutcome) -> ToolOutput {
    let lines = bytecount::count(content, b'\n')
        + usize::from(!content.is_empty() && !content.ends_with(b"\n"));
    let verb = match outcome.previous_bytes {
        None => "Created".to_owned(),
        Some(previous) => format!("Replaced (was {})", human_size(previous)),
    };
    ToolOutput::text(format!(
        "{verb} {}: {} line{}, {}.",
        path.display(),
        lines,
        if lines == 1 { "" } else { "s" },
        human_size(outcome.bytes)
    ))
    .with_details(json!({
        "path": path.display(),
        "created": outcome.created,
        "bytes": outcome.bytes,
        "previous_bytes": outcome.previous_bytes,
        "lines": lines,
    }))
}
