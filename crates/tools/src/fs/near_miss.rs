//! Paths that miss a real file only by what a model cannot see: Unicode normalisation (a
//! macOS name in NFD, the model's in NFC), a typographic quote for an ASCII one (`’`), a
//! non-breaking or narrow space for a plain one (U+202F in macOS screenshot names).
//!
//! Read reads the file when exactly one matches that way, and says which; every "does not
//! exist" shows the differences as `\u{…}` escapes, since they print like what was typed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization as _;

use crate::workspace::{Access, ResolvedPath, Workspace};

/// Candidates followed at each level of the path, at most (a folder of look-alike names).
const MAX_CANDIDATES: usize = 16;

/// The form in which two names that look alike compare equal.
fn comparable(name: &str) -> String {
    name.nfc()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            c if c != ' ' && c.is_whitespace() => ' ',
            c => c,
        })
        .filter(|c| !is_invisible(*c))
        .collect()
}

/// Characters that take no room when printed.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}')
}

/// Whether `c` prints like an ASCII character (or like nothing), so a name holding it must
/// be shown escaped to be told apart.
fn looks_like_another(c: char) -> bool {
    is_invisible(c)
        || (c != ' ' && c.is_whitespace())
        || matches!(
            c,
            '\u{0300}'..='\u{036F}' | '\u{2010}'..='\u{201F}' | '\u{2032}' | '\u{2033}' | '\u{2212}'
        )
}

/// `text` with every character that prints like another written as `\u{…}`.
pub(crate) fn visible(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if looks_like_another(c) {
            let _ = write!(shown, "\\u{{{:04X}}}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Whether `text` holds a character that [`visible`] escapes.
pub(crate) fn has_look_alikes(text: &str) -> bool {
    text.chars().any(looks_like_another)
}

/// The existing paths (as shown to the model) that `missing` names but for look-alike
/// characters: components below its deepest existing folder compared in [`comparable`] form.
pub(crate) fn look_alike_paths(workspace: &Workspace, missing: &ResolvedPath) -> Vec<String> {
    let mut base = missing.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    while !base.exists() {
        let (Some(parent), Some(name)) = (base.parent(), base.file_name()) else {
            return Vec::new();
        };
        rest.push(name);
        base = parent;
    }
    let mut candidates: Vec<PathBuf> = vec![base.to_path_buf()];
    for wanted in rest.iter().rev() {
        let wanted = comparable(&wanted.to_string_lossy());
        candidates = candidates
            .iter()
            .flat_map(|folder| entries(workspace, folder))
            .filter(|(name, _)| comparable(name) == wanted)
            .map(|(_, path)| path)
            .take(MAX_CANDIDATES)
            .collect();
        if candidates.is_empty() {
            return Vec::new();
        }
    }
    candidates
        .iter()
        .map(|path| workspace.display_path(path))
        .collect()
}

/// The names in `folder` and their paths, read through the workspace.
fn entries(workspace: &Workspace, folder: &Path) -> Vec<(String, PathBuf)> {
    let Ok(resolved) = workspace.resolve(&folder.to_string_lossy(), Access::Read) else {
        return Vec::new();
    };
    let Ok(fd) = resolved.open_dir() else {
        return Vec::new();
    };
    let Ok(mut dir) = rustix::fs::Dir::read_from(&fd) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    while let Some(Ok(entry)) = dir.read() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != "." && name != ".." {
            found.push((name.clone(), resolved.as_path().join(name)));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn look_alike_names_compare_equal() {
        assert_eq!(comparable("cafe\u{301}.txt"), comparable("café.txt"));
        assert_eq!(comparable("it\u{2019}s.md"), "it's.md");
        assert_eq!(comparable("10.00\u{202F}AM.png"), "10.00 AM.png");
    }

    #[test]
    fn visible_escapes_what_prints_like_something_else() {
        assert_eq!(visible("10.00\u{202F}AM"), "10.00\\u{202F}AM");
        assert_eq!(visible("e\u{301}"), "e\\u{0301}");
        assert_eq!(visible("café"), "café");
    }
}
