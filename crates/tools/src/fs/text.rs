//! Small text pieces the tools share: numbered lines, sizes, "did you mean" for missing paths,
//! the escapes a model writes literally.

use std::fmt::Write as _;

use super::near_miss::{has_look_alikes, look_alike_paths, visible};
use crate::workspace::{Access, ResolvedPath, Workspace};

/// How many similar names a "not found" error suggests.
const MAX_SUGGESTIONS: usize = 3;

/// The width line numbers are right-aligned to (wider numbers push the tab further).
const LINE_NUMBER_WIDTH: usize = 6;

/// Appends `line` with its 1-based number: right-aligned number, a tab, the line.
///
/// Written out by hand rather than with `writeln!(out, "{number:>6}\t{line}")`: the
/// formatting machinery cost ~700 instructions a line, most of a small Read's own work.
pub(crate) fn push_numbered(out: &mut String, number: u64, line: &str) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    let mut rest = number;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[start..];
    out.reserve(LINE_NUMBER_WIDTH.max(digits.len()) + line.len() + 2);
    for _ in digits.len()..LINE_NUMBER_WIDTH {
        out.push(' ');
    }
    out.extend(digits.iter().copied().map(char::from));
    out.push('\t');
    out.push_str(line);
    out.push('\n');
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
///
/// Names that print like the one given (Unicode form, quotes, spaces) are listed first, with
/// their differences escaped (see [`super::near_miss`]).
pub(crate) fn not_found(workspace: &Workspace, path: &ResolvedPath, what_to_do: &str) -> String {
    let mut message = format!("{} does not exist.", visible(path.display()));
    let look_alikes = look_alike_paths(workspace, path);
    if !look_alikes.is_empty() {
        let shown: Vec<String> = look_alikes.iter().map(|path| visible(path)).collect();
        let _ = write!(
            message,
            " These differ from it only in characters that print alike, shown as \\u{{…}} \
             escapes (in JSON write \\u{{202F}} as \\u202F): {}. Give the one you mean \
             exactly.",
            shown.join(", ")
        );
    }
    let suggestions: Vec<String> = similar_names(workspace, path)
        .into_iter()
        .filter(|name| !look_alikes.contains(name))
        .collect();
    if !suggestions.is_empty() {
        let shown: Vec<String> = suggestions.iter().map(|name| visible(name)).collect();
        let _ = write!(message, " Did you mean: {}?", shown.join(", "));
        if suggestions.iter().any(|name| has_look_alikes(name)) {
            message.push_str(" (\\u{…} stands for a character that prints like another.)");
        }
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

/// `text` with the escapes a model writes literally (`\n`, `\t`, `\r`, `\"`, `\'`, `\\`)
/// turned into the characters they stand for; `None` when it has none.
pub(crate) fn unescape(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut changed = false;
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let replaced = match chars.clone().next() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some('"') => '"',
            Some('\'') => '\'',
            Some('\\') => '\\',
            _ => {
                out.push(c);
                continue;
            }
        };
        chars.next();
        out.push(replaced);
        changed = true;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn numbers_are_right_aligned_to_six_then_a_tab() {
        let mut out = String::new();
        for (number, line) in [(1, "a"), (42, ""), (999_999, "b"), (1_234_567, "c")] {
            push_numbered(&mut out, number, line);
        }
        assert_eq!(out, "     1\ta\n    42\t\n999999\tb\n1234567\tc\n");
    }

    #[test]
    fn unescape_turns_literal_escapes_into_characters() {
        assert_eq!(unescape(r#"a\n\tb \"c\""#).as_deref(), Some("a\n\tb \"c\""));
        assert_eq!(unescape("plain"), None);
        assert_eq!(unescape(r"C:\dir"), None);
    }
}
