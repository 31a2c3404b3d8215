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
use super::edit_match::{Found, MatchKind, closest_region, find};
use super::file_reads::{Change, check_before_write, record_seen};
use super::read::io_error;
use super::text::{human_size, not_found, push_numbered, unescape};
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
             whitespace, line endings and typographic quotes/dashes is used when it is unique \
             (or everywhere, with `replace_all`). An empty `old_string` creates a file that is \
             missing or empty. Line endings and a BOM are kept; the write is atomic. Read the \
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

    async fn run(&self, params: EditParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let limits = self.limits.clone();
        blocking(move || edit(&workspace, &limits, &params, &ctx)).await
    }
}

fn edit(
    workspace: &Workspace,
    limits: &EditLimits,
    params: &EditParams,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    if params.old_string == params.new_string {
        return Err(ToolError::new(
            "old_string and new_string are identical, so nothing would change. Give the new \
             text in new_string.",
        ));
    }
    let path = workspace.resolve(&params.path, Access::Write)?;
    if params.old_string.is_empty() {
        let created = create(limits, &path, &params.new_string)?;
        record_seen(workspace, ctx, &path);
        return Ok(created);
    }
    if !path.existed() {
        return Err(ToolError::new(not_found(
            workspace,
            &path,
            "Edit changes existing files; to create one, give an empty old_string or use Write.",
        )));
    }
    check_before_write(workspace, ctx, &path, Change::Edit)?;
    let (bom, content) = read_text(&path, limits)?;
    let normalised_allowed = content.len() as u64 <= limits.max_normalized_match_bytes;
    let replaced = replace_in(
        &path,
        &content,
        &params.old_string,
        &params.new_string,
        params.replace_all.unwrap_or(false),
        normalised_allowed,
    )?;
    atomic_write(&path, &[bom, replaced.written.as_bytes()])?;
    record_seen(workspace, ctx, &path);

    let mut output = format!(
        "Edited {}: replaced {}.{}",
        path.display(),
        occurrences(replaced.count),
        replaced.notes()
    );
    output.push_str("\n\n");
    output.push_str(&changed_lines(
        &replaced.written,
        &replaced.spans,
        replaced.count,
    ));
    Ok(ToolOutput::text(output).with_details(json!({
        "path": path.display(),
        "replacements": replaced.count,
        "match": replaced.kind_name(),
        "unescaped": replaced.unescaped,
    })))
}

/// `count` occurrences, in words.
pub(super) fn occurrences(count: usize) -> String {
    format!("{count} occurrence{}", if count == 1 { "" } else { "s" })
}

/// One replacement done in memory.
pub(super) struct Replaced {
    /// The whole new content.
    pub(super) written: String,
    /// Where the first replacements landed in `written` (byte ranges), for the result.
    pub(super) spans: Vec<(usize, usize)>,
    /// How many places were replaced.
    pub(super) count: usize,
    /// Which search found them.
    kind: MatchKind,
    /// Whether `old_string` matched only once its escapes were read.
    pub(super) unescaped: bool,
}

impl Replaced {
    /// What the model should know of how the text was found (empty for an exact match).
    pub(super) fn notes(&self) -> String {
        let mut notes = String::new();
        if self.unescaped {
            notes.push_str(
                " old_string was not found as given; with its \\n, \\t and \\\" read as the \
                 characters they stand for it was (new_string was read the same way).",
            );
        }
        notes.push_str(match self.kind {
            MatchKind::Exact => "",
            MatchKind::Typography => {
                " The exact old_string was not found; a match that treats typographic quotes \
                 and dashes as ASCII was used. Check the result."
            }
            MatchKind::Lines => {
                " The exact old_string was not found; a match that ignores indentation style \
                 and whitespace was used, and new_string was re-indented to the file's style. \
                 Check the result."
            }
            MatchKind::Spaces => {
                " The exact old_string was not found; a match that treats runs of spaces and \
                 tabs as one space was used. Check the result."
            }
        });
        notes
    }

    /// The search's name in the result's details.
    pub(super) fn kind_name(&self) -> &'static str {
        match self.kind {
            MatchKind::Exact => "exact",
            MatchKind::Typography => "typography",
            MatchKind::Lines => "normalized_lines",
            MatchKind::Spaces => "whitespace",
        }
    }
}

/// The file's BOM (if any) and its text; `Err` for a folder, a file too large or one that is
/// not UTF-8.
pub(super) fn read_text(
    path: &ResolvedPath,
    limits: &EditLimits,
) -> Result<(&'static [u8], String), ToolError> {
    let bytes = read_whole(path, limits)?;
    let (bom, body) = match bytes.strip_prefix(UTF8_BOM) {
        Some(body) => (UTF8_BOM, body.to_vec()),
        None => (&[][..], bytes),
    };
    let content = String::from_utf8(body).map_err(|error| {
        ToolError::new(format!(
            "{} is not valid UTF-8 text (invalid byte at offset {}), so Edit cannot change it \
             safely. Use Write to replace the whole file.",
            path.display(),
            error.utf8_error().valid_up_to() + bom.len()
        ))
    })?;
    Ok((bom, content))
}

/// `old` replaced with `new` in `content` (the text of `path`), found as Edit finds it: exactly,
/// else by the normalised match, else with its escapes read. `Err` says why it cannot be (not
/// found, with the closest region; found in several places).
pub(super) fn replace_in(
    path: &ResolvedPath,
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    normalised_allowed: bool,
) -> Result<Replaced, ToolError> {
    let search = |old: &str, new: &str| find(content, old, new, replace_all, normalised_allowed);
    let mut found = search(old, new);
    let mut unescaped = false;
    // A model that wrote `\n` or `\"` literally: the text it meant, if that matches.
    if found == Found::Missing
        && let Some(old) = unescape(old)
    {
        let new = unescape(new).unwrap_or_else(|| new.to_owned());
        let retry = search(&old, &new);
        if matches!(retry, Found::Replace { .. }) {
            (found, unescaped) = (retry, true);
        }
    }
    let (kind, replacements) = match found {
        Found::Replace { kind, replacements } => (kind, replacements),
        Found::Ambiguous {
            kind,
            count,
            starts,
        } => {
            return Err(ambiguous(path, content, kind, count, &starts));
        }
        Found::Missing => return Err(missing(path, content, old)),
    };
    // The new content, and where each replacement landed in it: the result shows the file
    // as written, never a state half-way through the replacements.
    let mut written = String::with_capacity(content.len());
    let mut spans = Vec::with_capacity(replacements.len().min(MAX_SHOWN_REPLACEMENTS));
    let mut at = 0;
    for replacement in &replacements {
        written.push_str(&content[at..replacement.start]);
        if spans.len() < MAX_SHOWN_REPLACEMENTS {
            spans.push((written.len(), written.len() + replacement.text.len()));
        }
        written.push_str(&replacement.text);
        at = replacement.end;
    }
    written.push_str(&content[at..]);
    Ok(Replaced {
        written,
        spans,
        count: replacements.len(),
        kind,
        unescaped,
    })
}

/// An empty `old_string`: creates the file with `new_string` when it is missing or empty (as
/// Claude Code's Edit does); a file with content is refused, it would be lost.
pub(super) fn create(
    limits: &EditLimits,
    path: &ResolvedPath,
    content: &str,
) -> Result<ToolOutput, ToolError> {
    if path.existed() {
        let bytes = read_whole(path, limits)?;
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ToolError::new(format!(
                "old_string is empty, but {} has content, which would be lost. Give the exact \
                 text to replace in old_string (Read the file to see it), or use Write to \
                 replace the whole file.",
                path.display()
            )));
        }
    }
    let outcome = atomic_write(path, &[content.as_bytes()])?;
    let lines = content.lines().count();
    let verb = if outcome.created {
        "Created"
    } else {
        "Wrote the empty file"
    };
    Ok(ToolOutput::text(format!(
        "{verb} {}: {lines} line{}, {}.",
        path.display(),
        if lines == 1 { "" } else { "s" },
        human_size(outcome.bytes)
    ))
    .with_details(json!({
        "path": path.display(),
        "created": outcome.created,
        "replacements": 0,
        "bytes": outcome.bytes,
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
        MatchKind::Typography | MatchKind::Lines | MatchKind::Spaces => format!(
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

/// The lines around the first replacements in `written` (the file as written), numbered:
/// `spans` are their byte ranges in it, `count` how many replacements there were.
pub(super) fn changed_lines(written: &str, spans: &[(usize, usize)], count: usize) -> String {
    let bytes = written.as_bytes();
    // 0-based, inclusive line windows, merged where they touch.
    let mut windows: Vec<(usize, usize)> = Vec::new();
    let (mut line, mut at) = (0usize, 0usize);
    for &(start, end) in spans {
        line += bytecount::count(&bytes[at..start], b'\n');
        at = start;
        let inner_end = if end > start && bytes[end - 1] == b'\n' {
            end - 1
        } else {
            end
        };
        let last = line + bytecount::count(&bytes[start..inner_end], b'\n');
        let from = line.saturating_sub(SHOWN_CONTEXT_LINES);
        let to = (last + SHOWN_CONTEXT_LINES).min(from + MAX_SHOWN_LINES - 1);
        match windows.last_mut() {
            Some(window) if from <= window.1 + 1 => window.1 = window.1.max(to),
            _ => windows.push((from, to)),
        }
    }
    let mut output = String::new();
    let mut next = windows.iter().peekable();
    for (index, text) in written.lines().enumerate() {
        let Some(&&(from, to)) = next.peek() else {
            break;
        };
        if index < from {
            continue;
        }
        if index == from && from > 0 && !output.is_empty() {
            output.push_str("   ...\n");
        }
        push_numbered(&mut output, (index + 1) as u64, text);
        if index == to {
            next.next();
        }
    }
    if count > MAX_SHOWN_REPLACEMENTS {
        let _ = writeln!(
            output,
            "   ... and {} more replacements.",
            count - MAX_SHOWN_REPLACEMENTS
        );
    }
    output
}
