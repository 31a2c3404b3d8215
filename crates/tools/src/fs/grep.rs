//! `Grep`: regex search of file contents, on ripgrep's crates (R19).

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;
use rustix::fs::{Mode, OFlags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::text::not_found;
use super::walk::{Collector, PathGlob, RuleSkips, parallel_walk, skipped_note};
use super::{blocking, path_subject};
use crate::workspace::{Access, Workspace};

/// Output lines (content) or entries (files, counts) returned at most without `head_limit`.
pub const MAX_GREP_OUTPUT_LINES: usize = 1000;
/// Characters of one matching line shown; the rest is cut with a marker.
pub const MAX_GREP_LINE_CHARS: usize = 500;
/// The search stops once it has collected this many times the output limit, and says so.
const STOP_FACTOR: usize = 10;

/// Overrides of Grep's limits (R42); `Default` gives the named constants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepLimits {
    /// See [`MAX_GREP_OUTPUT_LINES`].
    pub max_output_lines: usize,
    /// See [`MAX_GREP_LINE_CHARS`].
    pub max_line_chars: usize,
}

impl Default for GrepLimits {
    fn default() -> Self {
        Self {
            max_output_lines: MAX_GREP_OUTPUT_LINES,
            max_line_chars: MAX_GREP_LINE_CHARS,
        }
    }
}

/// What Grep returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrepOutputMode {
    /// Matching lines as `path:line:text` (context lines as `path-line-text`).
    Content,
    /// The paths of files that match (the default).
    #[default]
    FilesWithMatches,
    /// `path:N`, the number of matching lines per file.
    Count,
}

/// Parameters of `Grep`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepParams {
    /// The regular expression (Rust/ripgrep syntax) to search for. Escape `( ) [ ] { } . * + ?`
    /// with a backslash to match them literally.
    pub pattern: String,
    /// The file or folder to search (default: the workspace root).
    pub path: Option<String>,
    /// Only search files matching this glob: `*.EXT`, `*.{EXT1,EXT2}` (names), `DIR/**/*.EXT`
    /// (paths relative to `path`). Leave it out to search every file.
    pub include: Option<String>,
    /// `files_with_matches` (default): matching file paths; `content`: matching lines as
    /// `path:line:text`; `count`: `path:N` per file.
    pub output_mode: Option<GrepOutputMode>,
    /// Match case-insensitively (default false).
    pub case_insensitive: Option<bool>,
    /// Lines of context before and after each match, in `content` mode (default 0).
    #[schemars(range(max = 100))]
    pub context: Option<u32>,
    /// Let the pattern span lines: `.` matches newlines and the pattern may contain `\n`
    /// (default false).
    pub multiline: Option<bool>,
    /// Return only the first N lines or entries of the output.
    #[schemars(range(min = 1))]
    pub head_limit: Option<usize>,
}

/// Searches file contents.
pub struct Grep {
    workspace: Arc<Workspace>,
    limits: GrepLimits,
}

impl Grep {
    /// `Grep` with the default limits.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_limits(workspace, GrepLimits::default())
    }

    /// `Grep` with these limits.
    pub fn with_limits(workspace: Arc<Workspace>, limits: GrepLimits) -> Self {
        Self { workspace, limits }
    }
}

impl TypedTool for Grep {
    type Params = GrepParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Grep",
            format!(
                "Searches file contents with a regular expression (ripgrep syntax and speed). \
                 Searches hidden files and folders too (not .git), honours .gitignore, skips \
                 binary files. Returns matching file paths \
                 by default, or matching lines (`output_mode: \"content\"`, with optional \
                 `context`), or counts; filter files with `include`. At most {} lines unless \
                 `head_limit` says fewer.",
                self.limits.max_output_lines
            ),
        )
        .with_label("Search file contents")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
        .with_family(PermissionFamily::Read)
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        path_subject(&self.workspace, args, "path", Some("."), Access::Read)
    }

    async fn run(&self, params: GrepParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let limits = self.limits.clone();
        blocking(move || grep(&workspace, &limits, &params, &ctx)).await
    }
}

/// What one file contributed.
struct FileResult {
    path: PathBuf,
    lines: Vec<String>,
    count: u64,
}

fn grep(
    workspace: &Workspace,
    limits: &GrepLimits,
    params: &GrepParams,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let mode = params.output_mode.unwrap_or_default();
    let multiline = params.multiline.unwrap_or(false);
    let context = if mode == GrepOutputMode::Content {
        params.context.unwrap_or(0) as usize
    } else {
        0
    };
    let matcher = build_matcher(params, multiline)?;
    let include = params
        .include
        .as_deref()
        .map(|include| {
            PathGlob::new(include).map_err(|error| {
                ToolError::new(format!(
                    "invalid include glob: {error}. Use a glob such as \"*.rs\" or \"*.{{ts,tsx}}\"."
                ))
            })
        })
        .transpose()?;
    let path = params.path.as_deref().unwrap_or(".");
    let base = workspace.resolve(path, Access::Read)?;
    if !base.existed() {
        if let Some((folder, include)) = split_glob_path(path) {
            // Models pass a glob as the path (the local Qwen model sent `src/**/*.rs`): say
            // where each half goes instead of only that no such file exists.
            return Err(ToolError::new(format!(
                "`path` is a file or folder, not a pattern: \"{path}\" has glob characters. \
                 Give the folder in `path` (\"{folder}\") and the pattern in `include` \
                 (\"{include}\")."
            )));
        }
        return Err(ToolError::new(not_found(
            workspace,
            &base,
            "Give an existing file or folder in `path`.",
        )));
    }
    let is_dir = base.as_path().is_dir();
    if is_dir {
        base.open_dir()?;
    } else {
        base.open_file()?;
    }
    let limit = params
        .head_limit
        .unwrap_or(limits.max_output_lines)
        .min(limits.max_output_lines);
    let stop_after = limits.max_output_lines.saturating_mul(STOP_FACTOR).max(1);
    let quit_early = AtomicBool::new(false);
    let collected = AtomicUsize::new(0);
    let results: Mutex<Vec<FileResult>> = Mutex::new(Vec::new());
    let searcher = SearcherBuilder::new()
        .line_number(true)
        .multi_line(multiline)
        .before_context(context)
        .after_context(context)
        .binary_detection(BinaryDetection::quit(0))
        .build();
    // Hidden files too (`.github/workflows/ci.yml`, `.env.example`), as `rg --hidden`: a
    // model told "no matches" concludes the text is nowhere. .gitignore still holds, and
    // `.git` itself is never searched.
    let include_hidden = true;
    let base_path = base.as_path();
    let skips = RuleSkips::for_call(workspace, ctx);
    parallel_walk(base_path, include_hidden, skips.as_ref()).run(|| {
        let mut collector = Collector::new(&results);
        let mut searcher = searcher.clone();
        let (matcher, include, collected, quit_early) =
            (&matcher, &include, &collected, &quit_early);
        Box::new(move |entry| {
            if ctx.is_cancelled() {
                return WalkState::Quit;
            }
            if collected.load(Ordering::Relaxed) >= stop_after {
                quit_early.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            if is_dir && let Some(include) = include {
                let relative = entry.path().strip_prefix(base_path).unwrap_or(entry.path());
                if !include.is_match(relative) {
                    return WalkState::Continue;
                }
            }
            // O_NOFOLLOW: a file swapped for a symlink during the walk is not searched.
            let Ok(file) = rustix::fs::open(
                entry.path(),
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                return WalkState::Continue;
            };
            let mut sink = FileSink {
                mode,
                max_line_chars: limits.max_line_chars,
                prefix: String::new(),
                lines: Vec::new(),
                count: 0,
                last_line: None,
            };
            if mode == GrepOutputMode::Content {
                sink.prefix = entry.path().display().to_string();
            }
            if searcher
                .search_file(matcher, &File::from(file), &mut sink)
                .is_err()
                || sink.count == 0
            {
                return WalkState::Continue;
            }
            let produced = match mode {
                GrepOutputMode::Content => sink.lines.len(),
                _ => 1,
            };
            collected.fetch_add(produced, Ordering::Relaxed);
            collector.items.push(FileResult {
                path: entry.into_path(),
                lines: sink.lines,
                count: sink.count,
            });
            WalkState::Continue
        })
    });
    if ctx.is_cancelled() {
        return Err(ToolError::new("Grep was cancelled."));
    }
    let stopped_early = quit_early.load(Ordering::Relaxed);
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    render(
        workspace,
        params,
        mode,
        context,
        limit,
        stopped_early,
        &results,
        base.display(),
        !is_dir,
        skips.as_ref(),
    )
}

fn build_matcher(params: &GrepParams, multiline: bool) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(params.case_insensitive.unwrap_or(false))
        .multi_line(true);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(&params.pattern).map_err(|error| {
        let hint = if !multiline && params.pattern.contains("\\n") {
            " To match across lines, set multiline to true."
        } else {
            " Escape special characters such as ( [ { . * + ? with a backslash to match them literally."
        };
        ToolError::new(format!("invalid regex \"{}\": {error}.{hint}", params.pattern))
    })
}

#[allow(clippy::too_many_arguments)]
fn render(
    workspace: &Workspace,
    params: &GrepParams,
    mode: GrepOutputMode,
    context: usize,
    limit: usize,
    stopped_early: bool,
    results: &[FileResult],
    base: &str,
    base_is_file: bool,
    skips: Option<&Arc<RuleSkips>>,
) -> Result<ToolOutput, ToolError> {
    let files = results.len();
    let total_count: u64 = results.iter().map(|result| result.count).sum();
    let mut lines: Vec<String> = Vec::new();
    let mut total_lines = 0usize;
    for result in results {
        let path = workspace.display_path(&result.path);
        match mode {
            GrepOutputMode::FilesWithMatches => {
                total_lines += 1;
                if lines.len() < limit {
                    lines.push(path);
                }
            }
            GrepOutputMode::Count => {
                total_lines += 1;
                if lines.len() < limit {
                    lines.push(format!("{path}:{}", result.count));
                }
            }
            GrepOutputMode::Content => {
                // The sink wrote absolute paths; show them as the model gives them.
                let absolute = result.path.display().to_string();
                if context > 0 && total_lines > 0 {
                    total_lines += 1;
                    if lines.len() < limit {
                        lines.push("--".to_owned());
                    }
                }
                for line in &result.lines {
                    total_lines += 1;
                    if lines.len() < limit {
                        lines.push(match line.strip_prefix(&absolute) {
                            Some(rest) => format!("{path}{rest}"),
                            None => line.clone(),
                        });
                    }
                }
            }
        }
    }
    let mut output = if files == 0 && base_is_file {
        // A small model greps a file it was asked about for a name it guessed, and on "No
        // matches" makes the answer up: point it at what the file does hold.
        format!(
            "No matches for \"{}\" in {base}. The file exists: Read {base} to see what it \
             holds.",
            params.pattern
        )
    } else if files == 0 {
        format!("No matches for \"{}\" in {base}.", params.pattern)
    } else {
        lines.join("\n")
    };
    if total_lines > lines.len() {
        let what = match mode {
            GrepOutputMode::Content => "lines",
            _ => "files",
        };
        let how = if params.head_limit.is_some_and(|head| head < total_lines) {
            "head_limit"
        } else {
            "limit"
        };
        output.push_str(&format!(
            "\n[Showing {} of {total_lines}{} {what} ({how} {limit}). Narrow the pattern, \
             `path` or `include` to see the rest.]",
            lines.len(),
            if stopped_early { "+" } else { "" },
        ));
    }
    if stopped_early {
        output.push_str("\n[The search stopped early because there were many more matches.]");
    }
    let (note, skipped) = skipped_note(skips);
    if let Some(note) = note {
        output.push('\n');
        output.push_str(&note);
    }
    Ok(ToolOutput::text(output).with_details(json!({
        "path": base,
        "pattern": params.pattern,
        "mode": mode,
        "files": files,
        "matches": total_count,
        "stopped_early": stopped_early,
        "skipped_by_rules": skipped,
    })))
}

/// Collects one file's output in the chosen mode.
struct FileSink {
    mode: GrepOutputMode,
    max_line_chars: usize,
    prefix: String,
    lines: Vec<String>,
    count: u64,
    last_line: Option<u64>,
}

impl FileSink {
    fn push(&mut self, separator: char, number: Option<u64>, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let number = number.unwrap_or(0);
        for (offset, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let line_number = number + offset as u64;
            let shown = if line.chars().count() > self.max_line_chars {
                let kept: String = line.chars().take(self.max_line_chars).collect();
                format!("{kept}… [line cut at {} characters]", self.max_line_chars)
            } else {
                line.to_owned()
            };
            self.lines.push(format!(
                "{}{separator}{line_number}{separator}{shown}",
                self.prefix
            ));
            self.last_line = Some(line_number);
        }
    }
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        match self.mode {
            GrepOutputMode::FilesWithMatches => Ok(false),
            GrepOutputMode::Count => Ok(true),
            GrepOutputMode::Content => {
                self.push(':', found.line_number(), found.bytes());
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        if matches!(
            context.kind(),
            SinkContextKind::Before | SinkContextKind::After
        ) {
            self.push('-', context.line_number(), context.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        if self.last_line.is_some() {
            self.lines.push("--".to_owned());
        }
        Ok(true)
    }
}

/// `src/**/*.rs` → (`src`, `**/*.rs`): the folder before the first part with glob characters,
/// and the rest. `None` when the path has no glob characters.
fn split_glob_path(path: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    let first_glob = parts
        .iter()
        .position(|part| part.contains(['*', '?', '[', '{']))?;
    let folder = parts[..first_glob].join("/");
    let folder = if folder.is_empty() {
        ".".to_owned()
    } else {
        folder
    };
    Some((folder, parts[first_glob..].join("/")))
}
