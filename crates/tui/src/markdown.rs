//! The model's answer drawn as Markdown: headings, emphasis, lists, quotes, and fenced code
//! blocks highlighted by language (tui-markdown, on syntect).

use ratatui::text::{Line, Span};

/// The lines of `markdown`, owned (the transcript keeps them across frames).
pub fn lines(markdown: &str) -> Vec<Line<'static>> {
    let text = tui_markdown::from_str(markdown);
    text.lines
        .into_iter()
        .map(|line| {
            let spans: Vec<Span<'static>> = line
                .spans
                .into_iter()
                .map(|span| Span::styled(span.content.into_owned(), span.style))
                .collect();
            Line::from(spans).style(line.style)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_keep_their_text_and_get_colour() {
        let lines = lines("# Title\n\nSome *text*.\n\n```rust\nfn main() {}\n```\n");
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert!(text.iter().any(|line| line.contains("Title")), "{text:?}");
        let code = lines
            .iter()
            .find(|line| line.to_string().contains("fn main"))
            .unwrap();
        assert!(
            code.spans.iter().any(|span| span.style.fg.is_some()),
            "highlighted: {code:?}"
        );
    }
}
