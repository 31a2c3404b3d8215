//! `Edit`: replaces a unique string in a file, atomically, keeping its line endings and BOM.

use std::fmt::Write as _;
use std::io::Read as _;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::atomic_write::atomic_write;
use super::edit_match::{Found, MatchKind, Replacement, closest_region, find};
use super::read::io_error;
use super::text::{human_size, not_found, push_numbered};
use super::{blocking, path_subject};
use crate::workspace::{Access, ResolvedPath, Workspace};

/// Files larger than this are not edited (they are read whole into memory).
pub const MAX_EDIT_FILE_BYTES: u64 = 512 * 1024 * 1024;
/// The normalised fallback match is tried only on files up to this size.
pub const MAX_NORMALIZED_MATCH_BYTES: u64 = 16 * 1024 * 1024;
/// The result shows the changed lines of at most this many replacements.
const MAX_SHOWN_REPLACEMENTS: usize = 3;
/// Lines of context around each shown replacement.
const SHOWN_CONTEXT_LINES: usize = 2;
/// Lines of one shown replacement at most.
const MAX_SHOWN_LINES: usize = 40;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Overrides of Edit's limits (R42); `Default` gives the named constants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditLimits {
    /// See [`MAX_EDIT_FILE_BYTES`].
    pub max_file_bytes: u64,
    /// See [`MAX_NORMALIZED_MATCH_BYTES`].
    pub max_normalized_match_bytes: u64,
}

impl Default for EditLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: MAX_EDIT_FILE_BYTES,
            max_normalized_match_bytes: MAX_NORMALIZED_MATCH_BYTES,
        }
    }
}

/// Parameters of `Edit`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditParams {
    /// The file to change: relative to the workspace root, or absolute inside it.
    pub path: String,
    /// The exact text to replace, including enough surrounding lines to be unique in the file.
    pub old_string: String,
    /// The text to put in its place (must differ from `old_string`).
    pub new_string: String,
    /// Replace every occurrence of `old_string` instead of requiring it to be unique (default
    /// false).
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// Replaces text in a file.
pub struct Edit {
    workspace: Arc<Workspace>,
    limits: EditLimits,
}

impl Edit {
    /// `Edit` with the default limits.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_limits(workspace, EditLimits::default())
    }

    /// `Edit` with these limits.
    pub fn with_limits(workspace: Arc<Workspace>, limits: EditLimits) -> Self {
        Self { workspace, limits }
    }
}

impl TypedTool for Edit {
    type Params = EditParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Edit",
            "Replaces `old_string` with `new_string` in a file. `old_string` must match exactly \
             one place (include surrounding lines to make it unique) unless `replace_all` is \
             true. If the exact text is absent, a match that ignores indentation style, \
             trailing whitespace, line endings and typographic quotes/dashes is used when it is \
             unique. Line endings and a BOM are kept; the write is atomic. Read the file first.",
        )
        .with_label("Edit file")
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

    async fn run(&self, params: EditParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let limits = self.limits.clone();
        blocking(move || edit(&workspace, &limits, &params)).await
    }
}

fn edit(
    workspace: &Workspace,
    limits: &EditLimits,
    params: &EditParams,
) -> Result<ToolOutput, ToolError> {
    if params.old_string.is_empty() {
        return Err(ToolError::new(
            "old_string is empty. Give the exact text to replace; to create a file or replace \
             all of its content, use Write.",
        ));
    }
    if params.old_string == params.new_string {
        return Err(ToolError::new(
            "old_string and new_string are identical, so nothing would change. Give the new \
             text in new_string.",
        ));
    }
    let path = workspace.resolve(&params.path, Access::Write)?;
    if !path.existed() {
        return Err(ToolError::new(not_found(
            workspace,
            &path,
            "Edit changes existing files; use Write to create a new one.",
        )));
    }
    let bytes = read_whole(&path, limits)?;
    let (bom, body) = match bytes.strip_prefix(UTF8_BOM) {
        Some(body) => (UTF8_BOM, body),
        None => (&[][..], bytes.as_slice()),
    };
    let content = std::str::from_utf8(body).map_err(|error| {
        ToolError::new(format!(
            "{} is not valid UTF-8 text (invalid byte at offset {}), so Edit cannot change it \
             safely. Use Write to replace the whole file.",
            path.display(),
            error.valid_up_to() + bom.len()
        ))
    })?;
    let replace_all = params.replace_all.unwrap_or(false);
    let normalised_allowed = body.len() as u64 <= limits.max_normalized_match_bytes;
    let (kind, replacements) = match find(
        content,
        &params.old_string,
        &params.new_string,
        replace_all,
        normalised_allowed,
    ) {
        Found::Replace { kind, replacements } => (kind, replacements),
        Found::Ambiguous {
            kind,
            count,
            starts,
        } => {
            return Err(ambiguous(&path, content, kind, count, &starts));
        }
        Found::Missing => return Err(missing(&path, content, &params.old_string)),
    };
    let mut parts: Vec<&[u8]> = Vec::with_capacity(replacements.len() * 2 + 2);
    parts.push(bom);
    let mut at = 0;
    for replacement in &replacements {
        parts.push(&body[at..replacement.start]);
        parts.push(replacement.text.as_bytes());
        at = replacement.end;
    }
    parts.push(&body[at..]);
    atomic_write(&path, &parts)?;

    let mut output = format!(
        "Edited {}: replaced {} occurrence{}.",
        path.display(),
        replacements.len(),
        if replacements.len() == 1 { "" } else { "s" }
    );
    match kind {
        MatchKind::Exact => {}
        MatchKind::Typography => output.push_str(
            " The exact old_string was not found; a match that treats typographic quotes and \
             dashes as ASCII was used. Check the result.",
        ),
        MatchKind::Lines => output.push_str(
            " The exact old_string was not found; a match that ignores indentation style and \
             trailing whitespace was used, and new_string was re-indented to the file's style. \
             Check the result.",
        ),
    }
    output.push_str("\n\n");
    output.push_str(&changed_lines(content, &replacements));
    Ok(ToolOutput::text(output).with_details(json!({
        "path": path.display(),
        "replacements": replacements.len(),
        "match": match kind {
            MatchKind::Exact => "exact",
            MatchKind::Typography => "typography",
            MatchKind::Lines => "normalized_lines",
        },
    })))
}

fn read_whole(path: &ResolvedPath, limits: &EditLimits) -> Result<Vec<u8>, ToolError> {
    let mut file = path.open_file()?;
    let metadata = file
        .metadata()
        .map_err(|error| io_error("read", path, &error))?;
    if metadata.is_dir() {
        return Err(ToolError::new(format!(
            "{} is a folder; Edit changes files. Use ListDir to see what it holds.",
            path.display()
        )));
    }
    if metadata.len() > limits.max_file_bytes {
        return Err(ToolError::new(format!(
            "{} is {}, more than the {} Edit works on. Use Bash (for example sed) to change it.",
            path.display(),
            human_size(metadata.len()),
            human_size(limits.max_file_bytes)
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|error| io_error("read", path, &error))?;
    Ok(bytes)
}

/// 1-based line numbers of `starts` (sorted) in `content`.
fn line_numbers(content: &str, starts: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut at = 0;
    starts
        .iter()
        .map(|&start| {
            line += bytecount::count(&content.as_bytes()[at..start], b'\n');
            at = start;
            line
        })
        .collect()
}

fn ambiguous(
    path: &ResolvedPath,
    content: &str,
    kind: MatchKind,
    count: usize,
    starts: &[usize],
) -> ToolError {
    let lines = line_numbers(content, starts)
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let more = if count > starts.len() { ", …" } else { "" };
    let message = match kind {
        MatchKind::Exact => format!(
            "old_string matches {count} places in {} (lines {lines}{more}). Include more \
             surrounding lines in old_string so it matches exactly one, or set replace_all to \
             true to change all {count}.",
            path.display()
        ),
        MatchKind::Typography | MatchKind::Lines => format!(
            "old_string was not found exactly in {}, and the match that ignores whitespace and \
             typography finds {count} places (lines {lines}{more}); it is used only when unique. \
             Read the file and copy the exact text into old_string.",
            path.display()
        ),
    };
    ToolError::new(message)
}

fn missing(path: &ResolvedPath, content: &str, old: &str) -> ToolError {
    let mut message = format!(
        "old_string was not found in {}, not even ignoring whitespace and typography.",
        path.display()
    );
    match closest_region(content, old) {
        Some((first, count, score)) => {
            let _ = write!(
                message,
                " The most similar region ({:.0}% alike) is lines {}-{}:\n\n",
                score * 100.0,
                first + 1,
                first + count
            );
            for (index, line) in content.lines().skip(first).take(count).enumerate() {
                push_numbered(&mut message, (first + index + 1) as u64, line);
            }
            message.push_str("\nCopy the exact text from there into old_string and retry.");
        }
        None => message
            .push_str(" Nothing similar was found; Read the file to see its current content."),
    }
    ToolError::new(message)
}

/// The new text of the first replacements with their line numbers and some context.
fn changed_lines(content: &str, replacements: &[Replacement]) -> String {
    let bytes = content.as_bytes();
    let mut output = String::new();
    let mut line_shift: isize = 0;
    let mut line = 1usize;
    let mut at = 0usize;
    for (index, replacement) in replacements.iter().enumerate() {
        line += bytecount::count(&bytes[at..replacement.start], b'\n');
        at = replacement.start;
        if index < MAX_SHOWN_REPLACEMENTS {
            // Context starts SHOWN_CONTEXT_LINES lines above the replacement's line.
            let mut start = memchr::memrchr(b'\n', &bytes[..replacement.start])
                .map_or(0, |newline| newline + 1);
            for _ in 0..SHOWN_CONTEXT_LINES {
                if start == 0 {
                    break;
                }
                start =
                    memchr::memrchr(b'\n', &bytes[..start - 1]).map_or(0, |newline| newline + 1);
            }
            let above = bytecount::count(&bytes[start..replacement.start], b'\n');
            let mut end = replacement.end;
            for _ in 0..=SHOWN_CONTEXT_LINES {
                match memchr::memchr(b'\n', &bytes[end..]) {
                    Some(offset) => end += offset + 1,
                    None => {
                        end = bytes.len();
                        break;
                    }
                }
            }
            let shown = format!(
                "{}{}{}",
                &content[start..replacement.start],
                replacement.text,
                &content[replacement.end..end]
            );
            let first_number = (line - above) as isize + line_shift;
            if index > 0 {
                output.push_str("   ...\n");
            }
            for (offset, text) in shown.lines().take(MAX_SHOWN_LINES).enumerate() {
                push_numbered(
                    &mut output,
                    (first_number + offset as isize).max(1) as u64,
                    text,
                );
            }
        }
        line_shift += bytecount::count(replacement.text.as_bytes(), b'\n') as isize
            - bytecount::count(&bytes[replacement.start..replacement.end], b'\n') as isize;
    }
    if replacements.len() > MAX_SHOWN_REPLACEMENTS {
        let _ = writeln!(
            output,
            "   ... and {} more replacements.",
            replacements.len() - MAX_SHOWN_REPLACEMENTS
        );
    }
    output
}
