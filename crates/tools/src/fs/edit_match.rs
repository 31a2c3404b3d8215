//! Where Edit's `old_string` is in a file: exactly, else by a normalised match, else the
//! closest region for the error.
//!
//! The exact search runs on the file's own line endings (a model's `\n` matches a CRLF file).
//! The normalised match, tried only when the exact text is absent and used only when unique
//! (or for every place with `replace_all`), has three tiers: typographic quotes, dashes and
//! non-breaking spaces folded to ASCII (any substring); then whole lines compared with their
//! indentation, trailing whitespace and the width of whitespace runs ignored, the replacement
//! re-indented to the file's style; then any substring with runs of spaces and tabs treated
//! as one space. (Edit tries once more with `old_string` unescaped: `text::unescape`.)

use std::borrow::Cow;

use memchr::memmem;

use super::reindent::reindent;

/// Line numbers of at most this many matches are listed when a match is ambiguous.
const MAX_LISTED_MATCHES: usize = 20;
/// Lines shown around the closest region when nothing matches.
const CLOSEST_CONTEXT_LINES: usize = 2;
/// The closest-region search compares at most this many lines of the file.
const MAX_CLOSEST_SCAN_LINES: usize = 100_000;
/// Characters of a line taken into the similarity score.
const MAX_SCORED_LINE_CHARS: usize = 300;
/// Below this similarity the closest region is not worth showing.
const MIN_CLOSEST_SIMILARITY: f64 = 0.4;

/// The line ending a file mostly uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    Crlf,
}

impl LineEnding {
    /// The style most of `text`'s line breaks use.
    pub(crate) fn of(text: &str) -> Self {
        let newlines = bytecount::count(text.as_bytes(), b'\n');
        let crlf = memmem::find_iter(text.as_bytes(), b"\r\n").count();
        if crlf > 0 && crlf * 2 >= newlines {
            Self::Crlf
        } else {
            Self::Lf
        }
    }

    /// `text` with its line breaks in this style.
    pub(crate) fn apply<'a>(self, text: &'a str) -> Cow<'a, str> {
        match self {
            Self::Lf if text.contains("\r\n") => Cow::Owned(text.replace("\r\n", "\n")),
            Self::Lf => Cow::Borrowed(text),
            Self::Crlf if text.contains('\n') => {
                Cow::Owned(text.replace("\r\n", "\n").replace('\n', "\r\n"))
            }
            Self::Crlf => Cow::Borrowed(text),
        }
    }
}

/// Which search found the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchKind {
    /// The exact text (with the file's line endings).
    Exact,
    /// Typographic quotes, dashes and non-breaking spaces were treated as their ASCII forms.
    Typography,
    /// Whole lines compared without indentation style, trailing whitespace and the width of
    /// whitespace runs.
    Lines,
    /// Runs of spaces and tabs inside lines treated as one space (any substring).
    Spaces,
}

/// One replacement: a byte range of the file and its new text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// The outcome of the search.
#[derive(Debug, PartialEq)]
pub(crate) enum Found {
    /// Replace these ranges (sorted, disjoint).
    Replace {
        kind: MatchKind,
        replacements: Vec<Replacement>,
    },
    /// More than one match and `replace_all` was not given (or the match was normalised).
    Ambiguous {
        kind: MatchKind,
        count: usize,
        starts: Vec<usize>,
    },
    /// No match.
    Missing,
}

/// Searches `content` for `old` to be replaced with `new`.
pub(crate) fn find(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    normalised_allowed: bool,
) -> Found {
    let ending = LineEnding::of(content);
    let old_text = ending.apply(old);
    let new_text = ending.apply(new);
    let finder = memmem::Finder::new(old_text.as_bytes());
    let mut starts = finder.find_iter(content.as_bytes());
    if !replace_all {
        let Some(first) = starts.next() else {
            return if normalised_allowed {
                find_normalised(content, old, new, ending, replace_all)
            } else {
                Found::Missing
            };
        };
        if let Some(second) = starts.next() {
            let mut listed = vec![first, second];
            let mut count = 2;
            for start in starts {
                count += 1;
                if listed.len() < MAX_LISTED_MATCHES {
                    listed.push(start);
                }
            }
            return Found::Ambiguous {
                kind: MatchKind::Exact,
                count,
                starts: listed,
            };
        }
        return Found::Replace {
            kind: MatchKind::Exact,
            replacements: vec![Replacement {
                start: first,
                end: first + old_text.len(),
                text: new_text.into_owned(),
            }],
        };
    }
    let replacements: Vec<Replacement> = starts
        .map(|start| Replacement {
            start,
            end: start + old_text.len(),
            text: new_text.clone().into_owned(),
        })
        .collect();
    if replacements.is_empty() {
        return if normalised_allowed {
            find_normalised(content, old, new, ending, replace_all)
        } else {
            Found::Missing
        };
    }
    Found::Replace {
        kind: MatchKind::Exact,
        replacements,
    }
}

fn find_normalised(
    content: &str,
    old: &str,
    new: &str,
    ending: LineEnding,
    replace_all: bool,
) -> Found {
    let (old_text, new_text) = (ending.apply(old), ending.apply(new));
    let typography = find_folded(content, &old_text, &new_text, Fold::Typography, replace_all);
    if !matches!(typography, Found::Missing) {
        return typography;
    }
    let lines = find_lines(content, old, new, ending, replace_all);
    if !matches!(lines, Found::Missing) {
        return lines;
    }
    find_folded(content, &old_text, &new_text, Fold::Spaces, replace_all)
}

/// The ASCII form of a typographic character.
fn fold_char(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Some('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Some('"'),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => Some('-'),
        '\u{00A0}' | '\u{2007}' | '\u{202F}' => Some(' '),
        _ => None,
    }
}

/// What [`fold`] folds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// Typographic characters to ASCII.
    Typography,
    /// That, and every run of spaces and tabs inside a line to one space.
    Spaces,
}

/// `text` folded, with the points where byte offsets shift: `(folded_offset, shift)` means
/// folded offsets from there on lie `shift` bytes earlier than in `text`.
fn fold(text: &str, how: Fold) -> (String, Vec<(usize, usize)>) {
    let mut folded = String::with_capacity(text.len());
    let mut shifts = Vec::new();
    let mut shift = 0;
    let mut in_run = false;
    for c in text.chars() {
        let c_folded = fold_char(c).unwrap_or(c);
        if how == Fold::Spaces && (c_folded == ' ' || c_folded == '\t') {
            if in_run {
                shift += c.len_utf8();
                shifts.push((folded.len(), shift));
                continue;
            }
            in_run = true;
            folded.push(' ');
            if c.len_utf8() > 1 {
                shift += c.len_utf8() - 1;
                shifts.push((folded.len(), shift));
            }
            continue;
        }
        in_run = false;
        folded.push(c_folded);
        if c_folded != c {
            shift += c.len_utf8() - 1;
            shifts.push((folded.len(), shift));
        }
    }
    (folded, shifts)
}

fn unfold_offset(offset: usize, shifts: &[(usize, usize)]) -> usize {
    let index = shifts.partition_point(|&(at, _)| at <= offset);
    offset + index.checked_sub(1).map_or(0, |index| shifts[index].1)
}

fn find_folded(content: &str, old: &str, new: &str, how: Fold, replace_all: bool) -> Found {
    let foldable = |text: &str| {
        text.chars().any(|c| fold_char(c).is_some())
            || (how == Fold::Spaces && (text.contains("  ") || text.contains('\t')))
    };
    if !foldable(old) && !foldable(content) {
        return Found::Missing;
    }
    let (folded_content, shifts) = fold(content, how);
    let (folded_old, _) = fold(old, how);
    if folded_old.trim().is_empty() {
        return Found::Missing;
    }
    let kind = match how {
        Fold::Typography => MatchKind::Typography,
        Fold::Spaces => MatchKind::Spaces,
    };
    let finder = memmem::Finder::new(folded_old.as_bytes());
    let replacement = |start: usize| Replacement {
        start: unfold_offset(start, &shifts),
        end: unfold_offset(start + folded_old.len(), &shifts),
        text: new.to_owned(),
    };
    if replace_all {
        let replacements: Vec<Replacement> = finder
            .find_iter(folded_content.as_bytes())
            .map(replacement)
            .collect();
        return if replacements.is_empty() {
            Found::Missing
        } else {
            Found::Replace { kind, replacements }
        };
    }
    let starts: Vec<usize> = finder
        .find_iter(folded_content.as_bytes())
        .take(MAX_LISTED_MATCHES)
        .collect();
    match starts.as_slice() {
        [] => Found::Missing,
        [start] => Found::Replace {
            kind,
            replacements: vec![replacement(*start)],
        },
        _ => Found::Ambiguous {
            kind,
            count: finder.find_iter(folded_content.as_bytes()).count(),
            starts: starts
                .iter()
                .map(|start| unfold_offset(*start, &shifts))
                .collect(),
        },
    }
}

/// A line compared without indentation, trailing whitespace, the width of whitespace runs
/// and typography.
fn normalise_line(line: &str) -> String {
    let folded: String = line.chars().map(|c| fold_char(c).unwrap_or(c)).collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The byte ranges of `content`'s lines, without their `\n` or `\r\n`.
fn line_ranges(content: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for newline in memchr::memchr_iter(b'\n', content.as_bytes()) {
        ranges.push((start, trim_cr(content, start, newline)));
        start = newline + 1;
    }
    if start < content.len() {
        ranges.push((start, trim_cr(content, start, content.len())));
    }
    ranges
}

fn trim_cr(content: &str, start: usize, end: usize) -> usize {
    if end > start && content.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

fn split_lines(text: &str) -> Vec<&str> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

fn find_lines(content: &str, old: &str, new: &str, ending: LineEnding, replace_all: bool) -> Found {
    let old_lines = split_lines(old);
    let wanted: Vec<String> = old_lines.iter().map(|line| normalise_line(line)).collect();
    if wanted.iter().all(String::is_empty) {
        return Found::Missing;
    }
    let ranges = line_ranges(content);
    let normalised: Vec<String> = ranges
        .iter()
        .map(|&(start, end)| normalise_line(&content[start..end]))
        .collect();
    // Matches that do not overlap, first to last.
    let mut matches: Vec<usize> = Vec::new();
    let mut first = 0;
    while first + wanted.len() <= normalised.len() {
        if normalised[first..first + wanted.len()] == wanted[..] {
            matches.push(first);
            first += wanted.len();
        } else {
            first += 1;
        }
    }
    let new = if old.ends_with('\n') {
        new.strip_suffix('\n').unwrap_or(new)
    } else {
        new
    };
    let replacement = |first: usize| {
        let region = &ranges[first..first + wanted.len()];
        let file_lines: Vec<&str> = region.iter().map(|&(s, e)| &content[s..e]).collect();
        let text = reindent(new, &old_lines, &file_lines);
        Replacement {
            start: region[0].0,
            end: region[region.len() - 1].1,
            text: ending.apply(&text).into_owned(),
        }
    };
    match matches.as_slice() {
        [] => Found::Missing,
        [first] => Found::Replace {
            kind: MatchKind::Lines,
            replacements: vec![replacement(*first)],
        },
        _ if replace_all => Found::Replace {
            kind: MatchKind::Lines,
            replacements: matches.iter().map(|&first| replacement(first)).collect(),
        },
        _ => Found::Ambiguous {
            kind: MatchKind::Lines,
            count: matches.len(),
            starts: matches
                .iter()
                .take(MAX_LISTED_MATCHES)
                .map(|&line| ranges[line].0)
                .collect(),
        },
    }
}

/// The region of `content` most like `old`: `(first line index, line count, similarity)`.
pub(crate) fn closest_region(content: &str, old: &str) -> Option<(usize, usize, f64)> {
    let old_lines = split_lines(old);
    let (anchor_index, anchor) = old_lines
        .iter()
        .enumerate()
        .map(|(index, line)| (index, normalise_line(line)))
        .max_by_key(|(_, line)| line.len())?;
    if anchor.is_empty() {
        return None;
    }
    let anchor: String = anchor.chars().take(MAX_SCORED_LINE_CHARS).collect();
    let ranges = line_ranges(content);
    let (best_line, best_score) = ranges
        .iter()
        .take(MAX_CLOSEST_SCAN_LINES)
        .enumerate()
        .map(|(index, &(start, end))| {
            let line: String = normalise_line(&content[start..end])
                .chars()
                .take(MAX_SCORED_LINE_CHARS)
                .collect();
            (index, strsim::normalized_levenshtein(&anchor, &line))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
    if best_score < MIN_CLOSEST_SIMILARITY {
        return None;
    }
    let first = best_line.saturating_sub(anchor_index + CLOSEST_CONTEXT_LINES);
    let last = (best_line - anchor_index.min(best_line) + old_lines.len() + CLOSEST_CONTEXT_LINES)
        .min(ranges.len());
    Some((first, last - first, best_score))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_offsets_map_back_to_the_original() {
        let content = "say “hi” — now";
        let Found::Replace { replacements, .. } = find(content, "\"hi\" - now", "x", false, true)
        else {
            panic!("no match");
        };
        assert_eq!(
            &content[replacements[0].start..replacements[0].end],
            "“hi” — now"
        );
    }

    #[test]
    fn runs_of_spaces_inside_a_line_match_one_space() {
        let content = "let  total =\tsum(a,  b);\n";
        let Found::Replace { kind, replacements } =
            find(content, "total = sum(a, b)", "x", false, true)
        else {
            panic!("no match");
        };
        assert_eq!(kind, MatchKind::Spaces);
        assert_eq!(
            &content[replacements[0].start..replacements[0].end],
            "total =\tsum(a,  b)"
        );
    }

    #[test]
    fn replace_all_takes_every_normalised_match() {
        let content = "  a  = 1\n  a  = 1\n";
        let Found::Replace { replacements, .. } = find(content, "a = 1", "b", true, true) else {
            panic!("no match");
        };
        assert_eq!(replacements.len(), 2);
    }
}
