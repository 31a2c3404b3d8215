//! A JavaScript renderer's declarative tree drawn as lines: spans styled by theme role,
//! colour name or `#rrggbb`, sections folded to their title until expanded. The text is
//! cleaned of escapes and control characters where it is wrapped, so a script cannot reach
//! the terminal.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use toolhost_script::{RenderBlock, RenderLine, RenderSpan, RenderTree};

use super::THEME;
use crate::text::clean;

/// The tree's lines; a collapsed section shows `▸ title (N lines)` unless `expanded`.
pub fn lines(tree: &RenderTree, expanded: bool) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for block in &tree.blocks {
        match block {
            RenderBlock::Line(line) => out.push(line_of(line)),
            RenderBlock::Section {
                title,
                collapsed,
                lines,
            } => {
                let open = expanded || !collapsed;
                let mut head = vec![Span::styled(
                    if open { "▾ " } else { "▸ " },
                    Style::default().fg(THEME.muted),
                )];
                head.extend(line_of(title).spans);
                if !open {
                    head.push(Span::styled(
                        format!(" ({} lines, ctrl+o to expand)", lines.len()),
                        Style::default().fg(THEME.muted),
                    ));
                }
                out.push(Line::from(head));
                if open {
                    out.extend(lines.iter().map(|line| {
                        let mut spans = vec![Span::raw("  ")];
                        spans.extend(line_of(line).spans);
                        Line::from(spans)
                    }));
                }
            }
        }
    }
    out
}

fn line_of(line: &RenderLine) -> Line<'static> {
    Line::from(line.spans.iter().map(span_of).collect::<Vec<_>>())
}

fn span_of(span: &RenderSpan) -> Span<'static> {
    let mut style = Style::default();
    if let Some(fg) = span.fg.as_deref().and_then(color) {
        style = style.fg(fg);
    }
    if let Some(bg) = span.bg.as_deref().and_then(color) {
        style = style.bg(bg);
    }
    for (on, modifier) in [
        (span.bold, Modifier::BOLD),
        (span.italic, Modifier::ITALIC),
        (span.underline, Modifier::UNDERLINED),
        (span.dim, Modifier::DIM),
    ] {
        if on {
            style = style.add_modifier(modifier);
        }
    }
    Span::styled(clean(&span.text), style)
}

/// A theme role, a colour name or `#rrggbb`; unknown names draw unstyled.
fn color(name: &str) -> Option<Color> {
    let name = name.trim().to_ascii_lowercase();
    Some(match name.as_str() {
        "accent" => THEME.accent,
        "success" => THEME.success,
        "error" => THEME.error,
        "warning" => THEME.warning,
        "muted" | "dim" => THEME.muted,
        "text" | "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "white" => Color::White,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        hex if hex.len() == 7 && hex.starts_with('#') => {
            let channel = |at: usize| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok();
            Color::Rgb(channel(1)?, channel(3)?, channel(5)?)
        }
        _ => return None,
    })
}
