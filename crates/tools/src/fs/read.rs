//! `Read`: a file's lines, numbered, or an image (R19, R21).

use std::fs::File;
use std::io::{BufRead, BufReader, Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::FileExt as _;
use std::sync::Arc;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    ContentBlock, PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext,
    ToolError, ToolOutput, ToolSpec, TypedTool,
};

use super::editor_files::SessionEditor;
use super::file_reads::record_seen;
use super::line_seek::{
    LineStart, count_lines, count_lines_in, find_line_start, find_line_start_in,
};
use super::near_miss::{look_alike_paths, visible};
use super::text::{human_size, not_found, push_numbered};
use super::{blocking, path_subject};
use crate::workspace::{Access, ResolvedPath, Workspace};

/// Lines returned when the call gives no `limit`.
pub const DEFAULT_READ_LINE_LIMIT: u64 = 2000;
/// Characters of one line shown; the rest is cut with a marker.
pub const MAX_READ_LINE_CHARS: usize = 2000;
/// Text a Read returns at most (R21: large files are cut by Read itself, with a footer).
pub const MAX_READ_OUTPUT_BYTES: usize = 128 * 1024;

/// Characters beyond the output cap that Read's footer and notes may take.
const FOOTER_ALLOWANCE: usize = 1024;
/// Files larger than this need `offset`/`limit` (R21).
pub const MAX_UNRANGED_READ_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Images larger than this are refused rather than sent to the model.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// How much of the start of a file is examined for a NUL byte (binary) and image magic.
const SNIFF_BYTES: usize = 8192;
/// The largest file Read reads on the runtime's thread instead of the blocking pool: a few
/// `pread`s from the page cache, well under the cost of the hand-off.
const MAX_INLINE_READ_FILE_BYTES: u64 = 64 * 1024;
/// Read buffer for the line window.
const WINDOW_BUFFER_BYTES: usize = 256 * 1024;

/// Overrides of Read's limits (R42); `Default` gives the named constants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// See [`DEFAULT_READ_LINE_LIMIT`].
    pub default_line_limit: u64,
    /// See [`MAX_READ_LINE_CHARS`].
    pub max_line_chars: usize,
    /// See [`MAX_READ_OUTPUT_BYTES`].
    pub max_output_bytes: usize,
    /// See [`MAX_UNRANGED_READ_FILE_BYTES`].
    pub max_unranged_file_bytes: u64,
    /// See [`MAX_IMAGE_BYTES`].
    pub max_image_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            default_line_limit: DEFAULT_READ_LINE_LIMIT,
            max_line_chars: MAX_READ_LINE_CHARS,
            max_output_bytes: MAX_READ_OUTPUT_BYTES,
            max_unranged_file_bytes: MAX_UNRANGED_READ_FILE_BYTES,
            max_image_bytes: MAX_IMAGE_BYTES,
        }
    }
}

/// Parameters of `Read`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadParams {
    /// The file to read: relative to the workspace root, or absolute inside it.
    pub path: String,
    /// The 1-based line to start at (default 1). Use it with `limit` to page through large files.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to return (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// Reads a text file as numbered lines, or an image as image content.
pub struct Read {
    workspace: Arc<Workspace>,
    limits: ReadLimits,
}

impl Read {
    /// `Read` with the default limits.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_limits(workspace, ReadLimits::default())
    }

    /// `Read` with these limits.
    pub fn with_limits(workspace: Arc<Workspace>, limits: ReadLimits) -> Self {
        Self { workspace, limits }
    }
}

impl TypedTool for Read {
    type Params = ReadParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Read",
            format!(
                "Reads a file from the workspace. Text comes back as numbered lines \
                 (`number<TAB>line`), {} lines from `offset` by default; lines over {} \
                 characters are cut. Files over {} are cut at that size with a footer telling \
                 the next `offset`; files over {} need `offset` and `limit`. PNG, JPEG, GIF and \
                 WebP images come back as images. Use ListDir for folders.",
                self.limits.default_line_limit,
                self.limits.max_line_chars,
                human_size(self.limits.max_output_bytes as u64),
                human_size(self.limits.max_unranged_file_bytes),
            ),
        )
        .with_label("Read file")
        // Claude Code's name for it, which models trained on it send.
        .with_parameter_alias("file_path", "path")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
        .with_family(PermissionFamily::Read)
        // Read cuts its own output with a footer that says where to continue; the pipeline's
        // head + tail cut would hide that footer's window. Room for the footer and notes.
        .with_max_result_chars(self.limits.max_output_bytes + FOOTER_ALLOWANCE)
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        path_subject(&self.workspace, args, "path", None, Access::Read)
    }

    /// A small regular file is read right here, on the runtime's thread: one `pread` from the
    /// page cache costs less than handing the call to a blocking-pool thread and waking the
    /// runtime again (a thread wake-up and a few futex calls each way). Anything else — a
    /// large file, a folder, what resolution did not see as a regular file — goes to the pool,
    /// so a slow read never stalls the other calls. Resolution itself (a `statx` per component
    /// below the workspace root) stays here either way.
    ///
    /// In a session an editor drives, a text file's lines are the editor's (its unsaved
    /// changes included); what the file is (a folder, an image, binary, too large) is still
    /// judged on the disk.
    async fn run(&self, params: ReadParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let path = self.workspace.resolve(&params.path, Access::Read)?;
        let from_editor = match SessionEditor::of(&ctx) {
            Some(editor) if path.seen_regular_file_len().is_some() => {
                editor.read_text(path.as_path()).await.ok()
            }
            _ => None,
        };
        if from_editor.is_some()
            || path
                .seen_regular_file_len()
                .is_some_and(|len| len <= MAX_INLINE_READ_FILE_BYTES)
        {
            return read(
                &self.workspace,
                &self.limits,
                &params,
                &path,
                &ctx,
                from_editor.as_deref(),
            );
        }
        let workspace = self.workspace.clone();
        let limits = self.limits.clone();
        blocking(move || read(&workspace, &limits, &params, &path, &ctx, None)).await
    }
}

/// Reads `path` (its text as the editor has it, when `from_editor` holds it) and, when that
/// worked, notes that the session has seen it.
fn read(
    workspace: &Workspace,
    limits: &ReadLimits,
    params: &ReadParams,
    path: &ResolvedPath,
    ctx: &ToolContext,
    from_editor: Option<&str>,
) -> Result<ToolOutput, ToolError> {
    if !path.existed() {
        if let [only] = look_alike_paths(workspace, path).as_slice() {
            let actual = workspace.resolve(only, Access::Read)?;
            if actual.existed() {
                return read_look_alike(workspace, limits, params, path, &actual, ctx);
            }
        }
        return Err(ToolError::new(not_found(
            workspace,
            path,
            "Use ListDir or Glob to find the file.",
        )));
    }
    let output = read_existing(limits, params, path, from_editor)?;
    record_seen(workspace, ctx, path);
    Ok(output)
}

fn read_existing(
    limits: &ReadLimits,
    params: &ReadParams,
    path: &ResolvedPath,
    from_editor: Option<&str>,
) -> Result<ToolOutput, ToolError> {
    let file = path.open_file()?;
    let metadata = file
        .metadata()
        .map_err(|error| io_error("read", path, &error))?;
    if metadata.is_dir() {
        return Err(ToolError::new(format!(
            "{} is a folder, not a file. Use ListDir with path \"{}\" to see what it holds.",
            path.display(),
            path.display()
        )));
    }
    let size = metadata.len();
    let mut head = vec![0u8; SNIFF_BYTES.min(usize::try_from(size).unwrap_or(SNIFF_BYTES))];
    file.read_exact_at(&mut head, 0)
        .map_err(|error| io_error("read", path, &error))?;
    if let Some(mime_type) = image_type(&head) {
        return read_image(file, path, size, mime_type, limits);
    }
    if memchr::memchr(0, &head).is_some() {
        return Err(ToolError::new(format!(
            "{} is a binary file ({}), neither text nor a PNG, JPEG, GIF or WebP image; Read \
             cannot show it. Use Grep to search it or Bash to inspect it with a suitable tool.",
            path.display(),
            human_size(size)
        )));
    }
    if size == 0 {
        return Ok(
            ToolOutput::text(format!("{} is empty (0 bytes).", path.display()))
                .with_details(json!({ "path": path.display(), "bytes": 0, "lines": 0 })),
        );
    }
    let ranged = params.offset.is_some() || params.limit.is_some();
    if !ranged && size > limits.max_unranged_file_bytes {
        return Err(ToolError::new(format!(
            "{} is {}, more than the {} Read returns without a range. Give `offset` and `limit` \
             to read part of it (for example offset=1, limit={}), or use Grep to find the lines \
             you need.",
            path.display(),
            human_size(size),
            human_size(limits.max_unranged_file_bytes),
            limits.default_line_limit
        )));
    }
    if let Some(text) = from_editor {
        return read_lines(
            file,
            Some(text.as_bytes()),
            path,
            text.len() as u64,
            limits,
            params,
        );
    }
    // A file no larger than the sniffed head is already in memory: no second read.
    let whole = (head.len() as u64 == size).then_some(head.as_slice());
    read_lines(file, whole, path, size, limits, params)
}

/// Reads `actual`, the one file whose name differs from the missing `given` only in
/// characters that print alike, and says so first.
fn read_look_alike(
    workspace: &Workspace,
    limits: &ReadLimits,
    params: &ReadParams,
    given: &ResolvedPath,
    actual: &ResolvedPath,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let mut output = read(workspace, limits, params, actual, ctx, None)?;
    let note = format!(
        "[{} does not exist; read {} instead, whose name differs only in characters that print \
         alike (Unicode form, quotes, spaces): {}. Use that path from now on.]\n",
        given.display(),
        actual.display(),
        visible(actual.display())
    );
    match output.content.first_mut() {
        Some(ContentBlock::Text { text }) => text.insert_str(0, &note),
        _ => output.content.insert(0, ContentBlock::text(note)),
    }
    if let Some(Value::Object(details)) = &mut output.details {
        details.insert("requested_path".to_owned(), json!(given.display()));
    }
    Ok(output)
}

/// Numbers the lines asked for; `whole` is the file's content when it is already in memory.
fn read_lines(
    mut file: File,
    whole: Option<&[u8]>,
    path: &ResolvedPath,
    size: u64,
    limits: &ReadLimits,
    params: &ReadParams,
) -> Result<ToolOutput, ToolError> {
    let first_line = params.offset.unwrap_or(1).max(1);
    let limit = params.limit.unwrap_or(limits.default_line_limit).max(1);
    // Small files are counted whole, so the footer can say "of N".
    let total_lines = match whole {
        _ if size > limits.max_unranged_file_bytes => None,
        Some(text) => Some(count_lines_in(text)),
        None => Some(count_lines(&file, size).map_err(|error| io_error("read", path, &error))?),
    };
    let line_start = match whole {
        Some(text) => find_line_start_in(text, first_line),
        None => find_line_start(&file, size, first_line)
            .map_err(|error| io_error("read", path, &error))?,
    };
    let start = match line_start {
        LineStart::At(start) => start,
        LineStart::PastEnd(lines) => {
            return Err(ToolError::new(format!(
                "offset {first_line} is past the end of {}, which has {lines} line{}. Use an \
                 offset from 1 to {lines}.",
                path.display(),
                if lines == 1 { "" } else { "s" },
            )));
        }
    };
    let mut reader: Box<dyn BufRead> = match whole {
        Some(text) => Box::new(&text[usize::try_from(start).unwrap_or(text.len())..]),
        None => {
            file.seek(SeekFrom::Start(start))
                .map_err(|error| io_error("read", path, &error))?;
            // No larger than what is left of the file: a small file needs no 256 KiB buffer.
            let left = usize::try_from(size.saturating_sub(start)).unwrap_or(WINDOW_BUFFER_BYTES);
            Box::new(BufReader::with_capacity(
                WINDOW_BUFFER_BYTES.min(left).max(1),
                file,
            ))
        }
    };
    let max_line_bytes = limits.max_line_chars.saturating_mul(4);
    let mut output = String::new();
    let mut line = Vec::new();
    let mut number = first_line;
    let mut lossy = false;
    let mut cut_lines = 0u64;
    let mut more = false;
    while number < first_line.saturating_add(limit) {
        let Some(line_bytes) = read_capped_line(reader.as_mut(), &mut line, max_line_bytes)
            .map_err(|error| io_error("read", path, &error))?
        else {
            break;
        };
        let text = match std::str::from_utf8(&line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(error) if line_bytes > line.len() as u64 && error.error_len().is_none() => {
                // The cap split a character; the cut is marked anyway.
                std::borrow::Cow::Owned(
                    String::from_utf8_lossy(&line[..error.valid_up_to()]).into_owned(),
                )
            }
            Err(_) => {
                lossy = true;
                String::from_utf8_lossy(&line)
            }
        };
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let shown: String;
        // A line of no more bytes than the limit has no more characters either.
        let too_long =
            text.len() > limits.max_line_chars && text.chars().count() > limits.max_line_chars;
        let text = if line_bytes > line.len() as u64 || too_long {
            cut_lines += 1;
            let kept: String = text.chars().take(limits.max_line_chars).collect();
            shown = format!(
                "{kept}… [line cut at {} characters; it has {} bytes]",
                limits.max_line_chars, line_bytes
            );
            shown.as_str()
        } else {
            text
        };
        if !output.is_empty() && output.len() + text.len() + 8 > limits.max_output_bytes {
            more = true;
            break;
        }
        push_numbered(&mut output, number, text);
        number += 1;
    }
    let last_line = number - 1;
    if !more {
        more = match total_lines {
            Some(total) => last_line < total,
            None => !reader.fill_buf().map_or(true, <[u8]>::is_empty),
        };
    }
    if more {
        let of = total_lines
            .map(|total| format!(" of {total}"))
            .unwrap_or_default();
        output.push_str(&format!(
            "\n[Showing lines {first_line}-{last_line}{of}. Use offset={} to continue.]\n",
            last_line + 1
        ));
    }
    if lossy {
        output.push_str(&format!(
            "\n[Note: {} is not valid UTF-8; invalid bytes are shown as U+FFFD (�).]\n",
            path.display()
        ));
    }
    Ok(ToolOutput::text(output).with_details(json!({
        "path": path.display(),
        "bytes": size,
        "first_line": first_line,
        "last_line": last_line,
        "total_lines": total_lines,
        "more": more,
        "cut_lines": cut_lines,
        "lossy": lossy,
    })))
}

/// Reads one line into `line`, keeping at most `cap` bytes of it and skipping the rest, so a
/// huge line never fills memory. Returns the line's full length (without its `\n`), or `None`
/// at the end of the file.
fn read_capped_line(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<u64>> {
    line.clear();
    let mut length = 0u64;
    let mut started = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(started.then_some(length));
        }
        started = true;
        let (end, found) = match memchr::memchr(b'\n', buffer) {
            Some(position) => (position, true),
            None => (buffer.len(), false),
        };
        let room = cap.saturating_sub(line.len()).min(end);
        line.extend_from_slice(&buffer[..room]);
        length += end as u64;
        reader.consume(if found { end + 1 } else { end });
        if found {
            return Ok(Some(length));
        }
    }
}

fn read_image(
    mut file: File,
    path: &ResolvedPath,
    size: u64,
    mime_type: &str,
    limits: &ReadLimits,
) -> Result<ToolOutput, ToolError> {
    if size > limits.max_image_bytes {
        return Err(ToolError::new(format!(
            "{} is a {} image of {}, more than the {} Read sends to the model. Resize it first \
             (for example with Bash and an image tool).",
            path.display(),
            mime_type,
            human_size(size),
            human_size(limits.max_image_bytes)
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|error| io_error("read", path, &error))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(ToolOutput {
        content: vec![ContentBlock::image(data, mime_type)],
        details: Some(json!({ "path": path.display(), "bytes": size, "mime_type": mime_type })),
        is_error: false,
    })
}

/// The MIME type of an image format the model can see, from the file's first bytes.
fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

pub(super) fn io_error(action: &str, path: &ResolvedPath, error: &std::io::Error) -> ToolError {
    ToolError::new(format!("cannot {action} {}: {error}", path.display()))
}
