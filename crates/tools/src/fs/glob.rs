//! `Glob`: files whose path matches a pattern, newest first.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::SystemTime;

use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::text::not_found;
use super::walk::{
    Collector, PathGlob, RuleSkips, extensions_in, literal_prefix, parallel_walk, skipped_note,
};
use super::{blocking, path_subject};
use crate::workspace::{Access, Workspace};

/// Paths listed at most; the rest are counted in a note.
pub const MAX_GLOB_RESULTS: usize = 1000;

/// Overrides of Glob's limits (R42); `Default` gives the named constants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobLimits {
    /// See [`MAX_GLOB_RESULTS`].
    pub max_results: usize,
}

impl Default for GlobLimits {
    fn default() -> Self {
        Self {
            max_results: MAX_GLOB_RESULTS,
        }
    }
}

/// Parameters of `Glob`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobParams {
    /// The glob: `*.EXT` (a name, matched in every folder), `DIR/**/*.EXT` (a path relative
    /// to `path`), `*.{EXT1,EXT2}`. Hidden files are included only when the pattern names them
    /// (`.env*`, `.github/**`).
    pub pattern: String,
    /// The folder to search (default: the workspace root).
    pub path: Option<String>,
}

/// Finds files by glob pattern.
pub struct Glob {
    workspace: Arc<Workspace>,
    limits: GlobLimits,
}

impl Glob {
    /// `Glob` with the default limits.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_limits(workspace, GlobLimits::default())
    }

    /// `Glob` with these limits.
    pub fn with_limits(workspace: Arc<Workspace>, limits: GlobLimits) -> Self {
        Self { workspace, limits }
    }
}

impl TypedTool for Glob {
    type Params = GlobParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Glob",
            format!(
                "Finds files whose path matches a glob pattern, newest first, at most {}. \
                 Honours .gitignore and skips hidden files unless the pattern names them. Use \
                 Grep to search file contents.",
                self.limits.max_results
            ),
        )
        .with_label("Find files")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
        .with_family(PermissionFamily::Read)
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        path_subject(&self.workspace, args, "path", Some("."), Access::Read)
    }

    async fn run(&self, params: GlobParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        let max_results = self.limits.max_results;
        blocking(move || glob(&workspace, &params, max_results, &ctx)).await
    }
}

fn glob(
    workspace: &Workspace,
    params: &GlobParams,
    max_results: usize,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let pattern = params.pattern.trim();
    if pattern.is_empty() {
        return Err(ToolError::new(
            "pattern is empty. Give a glob such as \"**/*.rs\" or \"src/*.ts\".",
        ));
    }
    if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
        return Err(ToolError::new(format!(
            "the pattern \"{pattern}\" must be relative to the folder searched: put the folder \
             in `path` and the glob in `pattern` (for example path=\"src\", pattern=\"**/*.rs\")."
        )));
    }
    let matcher = PathGlob::new(pattern).map_err(|error| {
        ToolError::new(format!(
            "invalid glob pattern: {error}. Check brackets and braces."
        ))
    })?;
    let base = workspace.resolve(params.path.as_deref().unwrap_or("."), Access::Read)?;
    if !base.existed() {
        return Err(ToolError::new(not_found(
            workspace,
            &base,
            "Give an existing folder in `path`.",
        )));
    }
    if !base.as_path().is_dir() {
        return Err(ToolError::new(format!(
            "{} is a file, not a folder: `path` is the folder Glob searches for file names. To \
             see what the file holds, call Read with path \"{}\" instead of Glob.",
            base.display(),
            base.display()
        )));
    }
    base.open_dir()?;
    let start = base.as_path().join(literal_prefix(pattern));
    let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    let skips = RuleSkips::for_call(workspace, ctx);
    if start.is_dir() {
        let base_path = base.as_path();
        parallel_walk(&start, matcher.names_hidden(), skips.as_ref()).run(|| {
            let mut collector = Collector::new(&found);
            let matcher = &matcher;
            Box::new(move |entry| {
                if ctx.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                    return WalkState::Continue;
                }
                let relative = entry.path().strip_prefix(base_path).unwrap_or(entry.path());
                if matcher.is_match(relative) {
                    let modified = entry
                        .metadata()
                        .ok()
                        .and_then(|metadata| metadata.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    collector.items.push((modified, entry.into_path()));
                }
                WalkState::Continue
            })
        });
    }
    if ctx.is_cancelled() {
        return Err(ToolError::new("Glob was cancelled."));
    }
    let mut found = found.into_inner().unwrap_or_default();
    found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let paths: Vec<String> = found
        .iter()
        .take(max_results)
        .map(|(_, path)| workspace.display_path(path))
        .collect();
    let mut output = if total == 0 {
        let mut nothing = format!(
            "No files match \"{pattern}\" in {} (ignored and hidden files are skipped unless \
             the pattern names them).",
            base.display()
        );
        // Where to look instead: the kinds of file that are there.
        let here = extensions_in(
            base.as_path(),
            RuleSkips::for_call(workspace, ctx).as_ref(),
            5,
        );
        if !here.is_empty() {
            let kinds: Vec<String> = here
                .iter()
                .map(|(extension, count)| format!("*.{extension} ({count})"))
                .collect();
            nothing.push_str(&format!(
                " The files there are mostly {}. To find the file that defines or mentions a \
                 name, use Grep.",
                kinds.join(", ")
            ));
        }
        nothing
    } else {
        let mut listed = paths.join("\n");
        // A model asked about a named file globbed its name, then guessed what it holds.
        if !pattern.contains(['*', '?', '[', '{']) {
            listed.push_str(&format!(
                "\n[\"{pattern}\" is a name, not a pattern: Glob only says where the file is. To \
                 see what it holds, call Read with path \"{}\".]",
                paths[0]
            ));
        }
        listed
    };
    if total > max_results {
        output.push_str(&format!(
            "\n[{} more files not shown (limit {max_results}), {total} in all. Narrow the \
             pattern or the path.]",
            total - max_results
        ));
    }
    let (note, skipped) = skipped_note(skips.as_ref());
    if let Some(note) = note {
        output.push('\n');
        output.push_str(&note);
    }
    Ok(ToolOutput::text(output).with_details(json!({
        "path": base.display(),
        "pattern": pattern,
        "total": total,
        "files": paths,
        "skipped_by_rules": skipped,
    })))
}
