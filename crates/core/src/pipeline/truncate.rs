//! Truncation of long text results, keeping the head and the tail (R14, R39).

use crate::content::ContentBlock;

/// Results whose text exceeds this many characters are truncated (R14: 50 KB).
pub const DEFAULT_MAX_CHARS: usize = 50_000;

/// Every truncation marker contains this, so models and tests can recognise it.
pub const TRUNCATION_TAG: &str = "(truncated)";

/// Room kept for the marker line within the budget.
const MARKER_RESERVE: usize = 160;

/// How far (in characters) a cut may move to land on a line boundary; past this it cuts
/// inside the line rather than drop most of the kept text.
const MAX_LINE_SEARCH_FRACTION: usize = 4;

/// `text` cut to at most `max_chars` characters, keeping its beginning and its end on line
/// boundaries, with a marker in the middle saying how much was cut; `None` when it fits.
pub fn truncate_head_tail(text: &str, max_chars: usize) -> Option<String> {
    // A string never has more characters than bytes: most calls stop here without counting.
    if text.len() <= max_chars {
        return None;
    }
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return None;
    }
    let budget = max_chars.saturating_sub(MARKER_RESERVE);
    let head_chars = budget / 2;
    let tail_chars = budget - head_chars;

    let head_end = cut_head(text, byte_offset(text, head_chars));
    let tail_start = cut_tail(text, byte_offset(text, total_chars - tail_chars)).max(head_end);
    let (head, cut, tail) = (
        &text[..head_end],
        &text[head_end..tail_start],
        &text[tail_start..],
    );

    let cut_chars = cut.chars().count();
    let cut_lines = cut.matches('\n').count();
    let mut out = String::with_capacity(head.len() + tail.len() + MARKER_RESERVE);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[... {cut_chars} characters ({cut_lines} lines) cut from the middle {TRUNCATION_TAG}; \
         {total_chars} characters in all ...]\n"
    ));
    out.push_str(tail);
    Some(out)
}

/// Truncates the text blocks of `content` so that their total stays within `max_chars`,
/// giving each block a share proportional to its length. Returns whether anything was cut.
pub(crate) fn truncate_content(content: &mut [ContentBlock], max_chars: usize) -> bool {
    let total: usize = content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(str::len)
        .sum();
    if total <= max_chars {
        return false;
    }
    let mut truncated = false;
    for block in content.iter_mut() {
        if let ContentBlock::Text { text } = block {
            let share = (max_chars as u128 * text.len() as u128 / total as u128) as usize;
            if let Some(cut) = truncate_head_tail(text, share.max(MARKER_RESERVE * 2)) {
                *text = cut;
                truncated = true;
            }
        }
    }
    truncated
}

/// The byte offset of the `chars`-th character (or the end).
fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(offset, _)| offset)
}

/// Moves a head cut back to just after the last newline, unless that loses too much.
fn cut_head(text: &str, end: usize) -> usize {
    let max_loss = end / MAX_LINE_SEARCH_FRACTION;
    match text[..end].rfind('\n') {
        Some(newline) if end - (newline + 1) <= max_loss => newline + 1,
        _ => end,
    }
}

/// Moves a tail cut forward to just after the next newline, unless that loses too much.
fn cut_tail(text: &str, start: usize) -> usize {
    if start == 0 || text.as_bytes().get(start - 1) == Some(&b'\n') {
        return start;
    }
    let limit = (text.len() - start) / MAX_LINE_SEARCH_FRACTION;
    match text[start..].find('\n') {
        Some(newline) if newline <= limit => start + newline + 1,
        _ => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered_lines(count: usize) -> String {
        (1..=count).map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn short_text_is_left_alone() {
        assert_eq!(truncate_head_tail("hello\n", 100), None);
    }

    #[test]
    fn long_text_keeps_whole_lines_at_both_ends() {
        let text = numbered_lines(10_000);
        let cut = truncate_head_tail(&text, 1_000).unwrap();
        assert!(
            cut.chars().count() <= 1_000,
            "{} chars",
            cut.chars().count()
        );
        assert!(cut.starts_with("line 1\nline 2\n"));
        assert!(cut.ends_with("line 10000\n"));
        assert!(cut.contains(TRUNCATION_TAG));
        for line in cut.lines().filter(|l| !l.starts_with("[...")) {
            assert!(line.starts_with("line "), "partial line kept: {line:?}");
            let n: usize = line[5..].parse().unwrap();
            assert_eq!(format!("line {n}"), line);
        }
    }

    #[test]
    fn one_huge_line_is_cut_inside_it() {
        let text = "x".repeat(10_000);
        let cut = truncate_head_tail(&text, 1_000).unwrap();
        assert!(cut.chars().count() <= 1_000);
        assert!(cut.starts_with("xxx"));
        assert!(cut.ends_with("xxx"));
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "ж".repeat(5_000);
        let cut = truncate_head_tail(&text, 1_000).unwrap();
        assert!(cut.chars().count() <= 1_000);
        assert!(cut.contains("characters (0 lines) cut"));
    }
}
