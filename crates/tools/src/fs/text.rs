//! Small text pieces the tools share: numbered lines, sizes, "did you mean" for missing paths.

use std::fmt::Write as _;

use crate::workspace::{Access, ResolvedPath, Workspace};

/// How many similar names a "not found" error suggests.
const MAX_SUGGESTIONS: usize = 3;

/// Appends `line` with its 1-based number: right-aligned number, a tab, the line.
pub(crate) fn push_numbered(out: &mut String, number: u64, line: &str) {
    let _ = writeln!(out, "{number:>6}\t{line}");
}

/// `1234567` → `1.2 MB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

/// "`path` does not exist", with the most similar names in its folder.
pub(crate) fn not_found(workspace: &Workspace, path: &ResolvedPath, what_to_do: &str) -> String {
    let mut message = format!("{} does not exist.", path.display());
    let suggestions = similar_names(workspace, path);
    if !suggestions.is_empty() {
        let _ = write!(message, " Did you mean: {}?", suggestions.join(", "));
    }
    let _ = write!(message, " {what_to_do}");
    message
}

fn similar_names(workspace: &Workspace, path: &ResolvedPath) -> Vec<String> {
    let (Some(parent), Some(name)) = (path.as_path().parent(), path.as_path().file_name()) else {
        return Vec::new();
    };
    let Ok(parent) = workspace.resolve(&parent.to_string_lossy(), Access::Read) else {
        return Vec::new();
    };
    let Ok(fd) = parent.open_dir() else {
        return Vec::new();
    };
    let Ok(mut dir) = rustix::fs::Dir::read_from(&fd) else {
        return Vec::new();
    };
    let wanted = name.to_string_lossy().to_lowercase();
    let mut scored: Vec<(f64, String)> = Vec::new();
    while let Some(Ok(entry)) = dir.read() {
        let candidate = entry.file_name().to_string_lossy().into_owned();
        if candidate == "." || candidate == ".." {
            continue;
        }
        let score = strsim::normalized_levenshtein(&wanted, &candidate.to_lowercase());
        if score >= 0.5 {
            scored.push((score, candidate));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let prefix = match parent.display() {
        "." => String::new(),
        folder => format!("{folder}/"),
    };
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| format!("{prefix}{name}"))
        .collect()
}
