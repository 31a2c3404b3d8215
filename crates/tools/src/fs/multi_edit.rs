//! `MultiEdit`: several of Edit's replacements in one file, applied in order (each to the text
//! the ones before it left), written once and atomically: all or none. Each is matched as Edit
//! matches (exactly, else by the normalised match, else with its escapes read) and fails with
//! Edit's message, prefixed by which edit it was. Claude Code's models call it by this name.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::atomic_write::atomic_write;
use super::edit::{EditLimits, changed_lines, create, occurrences, read_text, replace_in};
use super::file_reads::{Change, check_before_write, record_seen};
use super::text::not_found;
use super::{blocking, path_subject};
use crate::workspace::{Access, Workspace};

/// One replacement of `MultiEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditStep {
    /// The exact text to replace (in the file as the edits before this one left it).
    pub old_string: String,
    /// The text to put in its place (must differ from `old_string`).
    pub new_string: String,
    /// Replace every occurrence instead of requiring one (default false).
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// Parameters of `MultiEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MultiEditParams {
    /// The file to change: relative to the workspace root, or absolute inside it.
    pub path: String,
    /// The replacements, applied in order; if one fails, none is written.
    pub edits: Vec<EditStep>,
}

/// Makes several replacements in one file at once.
pub struct MultiEdit {
    workspace: Arc<Workspace>,
    limits: EditLimits,
}

impl MultiEdit {
    /// `MultiEdit` with Edit's default limits.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_limits(workspace, EditLimits::default())
    }

    /// `MultiEdit` with these limits.
    pub fn with_limits(workspace: Arc<Workspace>, limits: EditLimits) -> Self {
        Self { workspace, limits }
    }
}

impl TypedTool for MultiEdit {
    type Params = MultiEditParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "MultiEdit",
            "Makes several replacements in one file in one call: each of `edits` replaces its \
             `old_string` with `new_string` as Edit does, in order, each in the text the ones \
             before it left. All are written at once or, if any fails, none. An empty \
             `old_string` in the first edit creates a file that is missing or empty. Read the \
             file first.",
        )
        .with_label("Edit file")
        .with_parameter_alias("file_path", "path")
        .with_annotations(ToolAnnotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: false,
        })
        .with_sensitivity(Sensitivity::Edit)
        .with_family(PermissionFamily::Edit)
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        path_subject(&self.workspace, args, "path", None, Access::Write)
    }

    async fn run(
        &self,
        params: MultiEditParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let limits = self.limits.clone();
        blocking(move || multi_edit(&workspace, &limits, &params, &ctx)).await
    }
}

fn multi_edit(
    workspace: &Workspace,
    limits: &EditLimits,
    params: &MultiEditParams,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let total = params.edits.len();
    let Some(first) = params.edits.first() else {
        return Err(ToolError::new(
            "edits is empty: give at least one {\"old_string\", \"new_string\"}.",
        ));
    };
    let which = |index: usize| format!("edit {} of {total}", index + 1);
    for (index, step) in params.edits.iter().enumerate() {
        if step.old_string == step.new_string {
            return Err(ToolError::new(format!(
                "{}: old_string and new_string are identical, so nothing would change. Give the \
                 new text in new_string. Nothing was written.",
                which(index)
            )));
        }
        if index > 0 && step.old_string.is_empty() {
            return Err(ToolError::new(format!(
                "{}: old_string is empty; only the first edit may create the file. Give the \
                 exact text to replace. Nothing was written.",
                which(index)
            )));
        }
    }
    let path = workspace.resolve(&params.path, Access::Write)?;
    let creating = first.old_string.is_empty();
    let (bom, mut content, rest) = if creating {
        // Edit's check: an existing file with content would be lost.
        if path.existed() {
            create_check(limits, &path)?;
        }
        (&[][..], first.new_string.clone(), &params.edits[1..])
    } else {
        if !path.existed() {
            return Err(ToolError::new(not_found(
                workspace,
                &path,
                "MultiEdit changes existing files; to create one, give an empty old_string in \
                 the first edit, or use Write.",
            )));
        }
        check_before_write(workspace, ctx, &path, Change::Edit)?;
        let (bom, content) = read_text(&path, limits)?;
        (bom, content, &params.edits[..])
    };
    let offset = usize::from(creating);
    let mut lines = Vec::with_capacity(rest.len());
    let mut replacements = 0;
    let mut last = None;
    for (index, step) in rest.iter().enumerate() {
        let normalised_allowed = content.len() as u64 <= limits.max_normalized_match_bytes;
        let replaced = replace_in(
            &path,
            &content,
            &step.old_string,
            &step.new_string,
            step.replace_all.unwrap_or(false),
            normalised_allowed,
        )
        .map_err(|error| {
            ToolError::new(format!(
                "{}: {} Nothing was written.",
                which(index + offset),
                error.message
            ))
        })?;
        replacements += replaced.count;
        lines.push(format!(
            "{}. replaced {}.{}",
            index + offset + 1,
            occurrences(replaced.count),
            replaced.notes()
        ));
        last = Some((replaced.spans, replaced.count));
        content = replaced.written;
    }
    if let Some((spans, count)) = last {
        lines.push(format!(
            "\nAround the last edit, as written:\n{}",
            changed_lines(&content, &spans, count)
        ));
    }
    atomic_write(&path, &[bom, content.as_bytes()])?;
    record_seen(workspace, ctx, &path);
    let mut output = format!(
        "{} {}: {total} edit{}, {replacements} replacement{}.",
        if creating { "Created" } else { "Edited" },
        path.display(),
        if total == 1 { "" } else { "s" },
        if replacements == 1 { "" } else { "s" },
    );
    if creating {
        lines.insert(0, "1. created the file with its new_string.".to_owned());
    }
    for line in lines {
        output.push('\n');
        output.push_str(&line);
    }
    Ok(ToolOutput::text(output).with_details(json!({
        "path": path.display(),
        "edits": total,
        "replacements": replacements,
        "created": creating,
    })))
}

/// Refuses, as Edit does, to create over a file that has content.
fn create_check(
    limits: &EditLimits,
    path: &crate::workspace::ResolvedPath,
) -> Result<(), ToolError> {
    let (_, content) = read_text(path, limits)?;
    if content.trim().is_empty() {
        return Ok(());
    }
    // Edit's own message for the same call.
    create(limits, path, "").map(|_| ())
}
