//! What Glob and Grep share: the walk (gitignore-aware, parallel) and the path patterns.
//!
//! The walk is `ignore`'s parallel walker with ripgrep's defaults: `.gitignore`, `.ignore` and
//! `.git/info/exclude` honoured — also outside a git repository (`require_git(false)`) —,
//! hidden files skipped unless asked for (Grep always asks, as `rg --hidden`; a walk that
//! includes them still skips `.git` and the other version-control folders), symlinks not
//! followed (so a walk never leaves the
//! workspace through one), and what the call's permission rules refuse pruned
//! ([`RuleSkips`]).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkParallel};
use toolhost_core::ToolContext;

use crate::workspace::Workspace;

/// A glob matched against a file's name when it has no `/`, else against its path relative to
/// the folder searched — the way `fd --glob` and most users read `*.rs` and `src/**/*.rs`.
#[derive(Clone, Debug)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    on_name: bool,
    names_hidden: bool,
}

impl PathGlob {
    /// Compiles `pattern`; the error is globset's, which quotes the pattern.
    pub(crate) fn new(pattern: &str) -> Result<Self, globset::Error> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let on_name = !pattern.contains('/');
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()?
            .compile_matcher();
        let names_hidden = pattern
            .split('/')
            .any(|part| part.starts_with('.') && part != "." && part != "..");
        Ok(Self {
            matcher,
            on_name,
            names_hidden,
        })
    }

    /// Whether the file at `relative` (to the searched folder) matches.
    pub(crate) fn is_match(&self, relative: &Path) -> bool {
        if self.on_name {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }

    /// Whether the pattern names hidden files (`.env`, `.github/**`), so they must be walked.
    pub(crate) fn names_hidden(&self) -> bool {
        self.names_hidden
    }
}

/// The literal folder a pattern starts with (`src/app` of `src/app/**/*.ts`), so a walk can
/// start there instead of at the top.
pub(crate) fn literal_prefix(pattern: &str) -> &str {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let Some(last_slash) = pattern.rfind('/') else {
        return "";
    };
    let folders = &pattern[..last_slash];
    let mut end = 0;
    for (index, part) in folders.split('/').enumerate() {
        if part.contains(['*', '?', '[', '{', '\\']) {
            break;
        }
        end = if index == 0 {
            part.len()
        } else {
            end + 1 + part.len()
        };
    }
    &folders[..end]
}

/// A parallel walk of `root` with ripgrep's filters; folders and files that `skips` refuses
/// are never entered or reported.
pub(crate) fn parallel_walk(
    root: &Path,
    include_hidden: bool,
    skips: Option<&Arc<RuleSkips>>,
) -> WalkParallel {
    walk_builder(root, include_hidden, skips).build_parallel()
}

/// The most files [`extensions_in`] looks at: enough to say what a project is made of.
const EXTENSION_SAMPLE: usize = 5_000;

/// The commonest file extensions under `root`, as a walk with ripgrep's filters sees them,
/// most files first (then by name), at most `top`: what a search that found nothing can
/// point to instead (a model that looked for `*.rs` in a Python project).
pub(crate) fn extensions_in(
    root: &Path,
    skips: Option<&Arc<RuleSkips>>,
    top: usize,
) -> Vec<(String, usize)> {
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let files = walk_builder(root, false, skips)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .take(EXTENSION_SAMPLE);
    for entry in files {
        if let Some(extension) = entry.path().extension().and_then(|ext| ext.to_str()) {
            *counts.entry(extension.to_owned()).or_default() += 1;
        }
    }
    let mut counts: Vec<(String, usize)> = counts.into_iter().collect();
    counts.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts.truncate(top);
    counts
}

fn walk_builder(root: &Path, include_hidden: bool, skips: Option<&Arc<RuleSkips>>) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(!include_hidden)
        .require_git(false)
        .follow_links(false)
        .threads(std::thread::available_parallelism().map_or(2, usize::from));
    let skips = skips.map(Arc::clone);
    if include_hidden || skips.is_some() {
        builder.filter_entry(move |entry| {
            !(include_hidden && is_version_control_folder(entry))
                && skips
                    .as_ref()
                    .is_none_or(|skips| skips.allows(entry.path()))
        });
    }
    builder
}

/// Folders a version-control system keeps its own data in (`.git`): never walked, hidden
/// files or not — what is in them is no file of the project.
const VERSION_CONTROL_FOLDERS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

fn is_version_control_folder(entry: &ignore::DirEntry) -> bool {
    entry.depth() > 0
        && entry.file_type().is_some_and(|kind| kind.is_dir())
        && entry
            .file_name()
            .to_str()
            .is_some_and(|name| VERSION_CONTROL_FOLDERS.contains(&name))
}

/// The paths inside a walked or listed folder that the call's permission rules refuse
/// (`deny = ["Read(secrets/**)"]` and a Grep of the whole workspace), counted so the result
/// can say that something was left out.
pub(crate) struct RuleSkips {
    ctx: ToolContext,
    workspace: Workspace,
    skipped: AtomicUsize,
}

impl RuleSkips {
    /// `None` when the rules refuse nothing the call could find.
    pub(crate) fn for_call(workspace: &Workspace, ctx: &ToolContext) -> Option<Arc<Self>> {
        ctx.filters_paths().then(|| {
            Arc::new(Self {
                ctx: ctx.clone(),
                workspace: workspace.clone(),
                skipped: AtomicUsize::new(0),
            })
        })
    }

    /// Whether `path` (physical, absolute) may be read or reported; counts it when not.
    pub(crate) fn allows(&self, path: &Path) -> bool {
        let allowed = self.ctx.allows_path(&self.workspace.subject_path(path));
        if !allowed {
            self.skipped.fetch_add(1, Ordering::Relaxed);
        }
        allowed
    }

    /// How many paths were left out.
    pub(crate) fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }
}

/// The note a result ends with when rules left paths out, and their number for `details`.
pub(crate) fn skipped_note(skips: Option<&Arc<RuleSkips>>) -> (Option<String>, usize) {
    let skipped = skips.map_or(0, |skips| skips.skipped());
    let note = (skipped > 0).then(|| {
        format!(
            "[{skipped} path{} left out: the permission rules refuse {}.]",
            if skipped == 1 { "" } else { "s" },
            if skipped == 1 { "it" } else { "them" }
        )
    });
    (note, skipped)
}

/// A walker thread's results, handed to the shared list when the thread's visitor is dropped,
/// so threads do not contend on a lock per result.
pub(crate) struct Collector<'a, T> {
    pub(crate) items: Vec<T>,
    shared: &'a Mutex<Vec<T>>,
}

impl<'a, T> Collector<'a, T> {
    pub(crate) fn new(shared: &'a Mutex<Vec<T>>) -> Self {
        Self {
            items: Vec::new(),
            shared,
        }
    }
}

impl<T> Drop for Collector<'_, T> {
    fn drop(&mut self) {
        if let Ok(mut shared) = self.shared.lock() {
            shared.append(&mut self.items);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefix_stops_at_the_first_glob() {
        assert_eq!(literal_prefix("src/app/**/*.ts"), "src/app");
        assert_eq!(literal_prefix("./src/*.rs"), "src");
        assert_eq!(literal_prefix("**/*.rs"), "");
        assert_eq!(literal_prefix("*.rs"), "");
        assert_eq!(literal_prefix("a/b/c.txt"), "a/b");
    }

    #[test]
    fn patterns_without_a_slash_match_names_anywhere() {
        let glob = PathGlob::new("*.rs").unwrap();
        assert!(glob.is_match(Path::new("deep/down/main.rs")));
        let glob = PathGlob::new("src/*.rs").unwrap();
        assert!(glob.is_match(Path::new("src/main.rs")));
        assert!(!glob.is_match(Path::new("src/bin/main.rs")));
        assert!(PathGlob::new(".github/**").unwrap().names_hidden());
    }
}
