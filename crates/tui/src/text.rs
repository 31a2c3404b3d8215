//! Text made safe to draw and cut to the screen's width: escape sequences and control
//! characters removed (a tool's output or a script's span cannot move the cursor, clear the
//! screen or hide text), tabs expanded, and lines wrapped by display width (CJK characters
//! take two columns).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar as _;

/// Spaces a tab becomes.
const TAB_WIDTH: usize = 4;

/// `text` without terminal escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL/ST`, and
/// two-character escapes) and without control characters; tabs become spaces. Newlines are
/// control characters too: split lines first.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, then one final byte in @..~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') | Some('P') | Some('_') | Some('^') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => out.extend(std::iter::repeat_n(' ', TAB_WIDTH)),
            c if c.is_control() => {}
            // Bidirectional overrides could make text read differently from what it is.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One line per line of `text`, cleaned, in `style`.
pub fn plain_lines(text: &str, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .map(|line| Line::from(Span::styled(clean(line), style)))
        .collect()
}

/// The display width of a cleaned string.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `line` cut into rows of at most `width` columns (at least one row; characters are never
/// split, a wide one that does not fit moves to the next row). Spans are cleaned on the way.
pub fn wrap(line: &Line<'_>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in &line.spans {
        let style = line.style.patch(span.style);
        let mut piece = String::new();
        for c in clean(&span.content).chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width && used > 0 {
                if !piece.is_empty() {
                    row.push(Span::styled(std::mem::take(&mut piece), style));
                }
                rows.push(Line::from(std::mem::take(&mut row)));
                used = 0;
            }
            piece.push(c);
            used += w;
        }
        if !piece.is_empty() {
            row.push(Span::styled(piece, style));
        }
    }
    rows.push(Line::from(row));
    rows
}

/// `text` cut to `max` columns, with `…` when something was cut.
pub fn truncate(text: &str, max: usize) -> String {
    let text = clean(text);
    if width(&text) <= max {
        return text;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// The first line of `text`, cut to `max` columns (`…` when there was more).
pub fn one_line(text: &str, max: usize) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    if lines.next().is_some() {
        truncate(&format!("{first} …"), max)
    } else {
        truncate(first, max)
    }
}

/// The first line of `text`, at most `max` characters (`…` when cut): for one-line
/// summaries printed as plain text, where columns do not matter.
pub fn first_line_cut(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// A tool call's arguments on one line, at most `max` characters: models often send
/// pretty-printed JSON, whose first line alone would read `{`, so JSON spread over several
/// lines is shown compact; anything else as its first line.
pub fn arguments_line(arguments: &str, max: usize) -> String {
    let compact = arguments
        .contains('\n')
        .then(|| serde_json::from_str::<serde_json::Value>(arguments).ok())
        .flatten()
        .map(|value| value.to_string());
    first_line_cut(compact.as_deref().unwrap_or(arguments), max)
}

/// The first row of `line` at `width`, with `…` when it goes on.
pub fn first_row(line: &Line<'static>, width: usize) -> Line<'static> {
    let mut rows = wrap(line, width.saturating_sub(1).max(1));
    let mut first = rows.remove(0);
    if !rows.is_empty() {
        first.spans.push(Span::raw("…"));
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_control_characters_are_removed() {
        assert_eq!(clean("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(clean("\u{1b}]0;title\u{7}x\u{1b}[2J\u{8}y\r"), "xy");
        assert_eq!(clean("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(clean("a\tb"), "a    b");
        assert_eq!(clean("safe\u{202e}txt"), "safetxt");
    }

    #[test]
    fn wide_characters_wrap_by_display_width() {
        let rows = wrap(&Line::from("日本語のテキスト"), 5);
        let texts: Vec<String> = rows.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["日本", "語の", "テキ", "スト"]);
        assert_eq!(wrap(&Line::from(""), 10).len(), 1);
        assert_eq!(truncate("abcdef", 4), "abc…");
    }

    #[test]
    fn pretty_printed_arguments_are_shown_compact_on_one_line() {
        let pretty = "{\n    \"path\": \"README.md\",\n    \"limit\": 20\n  }";
        assert_eq!(
            arguments_line(pretty, 100),
            r#"{"path":"README.md","limit":20}"#
        );
        assert_eq!(arguments_line(pretty, 8), "{\"path\":…");
        // One line is shown as the model wrote it; text that is not JSON, by its first line.
        assert_eq!(
            arguments_line(r#"{"path": "a.txt"}"#, 100),
            r#"{"path": "a.txt"}"#
        );
        assert_eq!(arguments_line("not\njson", 100), "not");
    }
}
