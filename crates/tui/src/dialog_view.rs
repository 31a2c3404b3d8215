//! How the dialogs look: a bordered panel over the middle of the screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph, Wrap};
use serde_json::Value;
use toolhost_script::UiRequest;

use super::dialogs::{ApprovalDialog, Dialog, QuestionDialog};
use super::renderers::THEME;
use super::text::{clean, one_line, plain_lines};

/// Lines of a call's arguments an approval shows.
const ARGUMENT_LINES: usize = 10;

/// Draws `dialog` over `area`.
pub fn draw(frame: &mut Frame<'_>, dialog: &Dialog, area: Rect) {
    let (title, lines) = match dialog {
        Dialog::Approval(dialog) => (
            format!(" {} wants to run ", clean(&dialog.request.tool)),
            approval(dialog),
        ),
        Dialog::Question(dialog) => (" a tool asks ".to_owned(), question(dialog)),
        Dialog::Pending(dialog) => {
            let action = &dialog.action;
            let mut lines = vec![Line::from(Span::styled(
                clean(action.label.as_deref().unwrap_or("A pending action")),
                Style::default().add_modifier(Modifier::BOLD),
            ))];
            if let Some(description) = &action.description {
                lines.extend(plain_lines(description, Style::default()));
            }
            lines.push(Line::default());
            lines.push(keys("[a] apply   [d] discard"));
            (" apply this change? ".to_owned(), lines)
        }
    };
    let width = area.width.saturating_sub(4).min(100);
    let height = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let panel = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .padding(Padding::horizontal(1))
        .border_style(Style::default().fg(THEME.accent))
        .title(Span::styled(
            title,
            Style::default()
                .fg(THEME.accent)
                .add_modifier(Modifier::BOLD),
        ));
    frame.render_widget(Clear, panel);
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        panel,
    );
}

fn keys(text: &str) -> Line<'static> {
    Line::from(Span::styled(
        text.to_owned(),
        Style::default().fg(THEME.muted),
    ))
}

/// What the call touches, as a person reads it: the command, the paths, the domain.
fn subject(args: &Value) -> Vec<(&'static str, String)> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut found = Vec::new();
    if let Some(command) = text("command") {
        found.push(("command", command));
    }
    for key in ["path", "file_path", "notebook_path"] {
        if let Some(path) = text(key) {
            found.push(("path", path));
        }
    }
    if let Some(url) = text("url") {
        let host = url
            .split("://")
            .nth(1)
            .unwrap_or(&url)
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default()
            .to_owned();
        found.push(("domain", host));
    }
    found
}

fn approval(dialog: &ApprovalDialog) -> Vec<Line<'static>> {
    let request = &dialog.request;
    let muted = Style::default().fg(THEME.muted);
    let mut lines = plain_lines(&request.reason, Style::default());
    for (label, value) in subject(&request.args) {
        lines.push(Line::from(vec![
            Span::styled(format!("{label}: "), muted),
            Span::styled(
                one_line(&value, 300),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    for warning in &request.warnings {
        lines.push(Line::from(Span::styled(
            format!("⚠ {}", clean(warning)),
            Style::default().fg(THEME.warning),
        )));
    }
    let args = serde_json::to_string_pretty(&request.args).unwrap_or_default();
    let arg_lines = plain_lines(&args, muted);
    let more = arg_lines.len().saturating_sub(ARGUMENT_LINES);
    lines.extend(arg_lines.into_iter().take(ARGUMENT_LINES));
    if more > 0 {
        lines.push(Line::from(Span::styled(
            format!("  … {more} more lines"),
            muted,
        )));
    }
    lines.push(Line::default());
    for (n, (_, label)) in dialog.choices().into_iter().enumerate() {
        let selected = n == dialog.selected;
        let marker = if selected { "› " } else { "  " };
        let style = if selected {
            Style::default()
                .fg(THEME.accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        lines.push(Line::from(Span::styled(
            format!("{marker}{}. {}", n + 1, clean(&label)),
            style,
        )));
    }
    match &dialog.denial {
        Some(text) => {
            lines.push(Line::default());
            lines.push(Line::from(vec![
                Span::styled("Tell the model why (optional): ", muted),
                Span::raw(clean(text)),
                Span::styled("▏", Style::default().fg(THEME.accent)),
            ]));
            lines.push(keys("enter sends the denial · esc goes back"));
        }
        None => lines.push(keys("↑↓ enter, or 1 / 2 / 3 (y / a / n) · esc denies")),
    }
    lines
}

fn question(dialog: &QuestionDialog) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let choice = |n: usize, label: &str| {
        let selected = n == dialog.selected;
        let style = if selected {
            Style::default()
                .fg(THEME.accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        Line::from(Span::styled(
            format!("{}{}", if selected { "› " } else { "  " }, clean(label)),
            style,
        ))
    };
    match &dialog.request {
        UiRequest::Confirm { title, message } => {
            let mut lines = vec![Line::from(Span::styled(clean(title), bold))];
            lines.extend(plain_lines(message, Style::default()));
            lines.push(Line::default());
            lines.push(choice(0, "Yes"));
            lines.push(choice(1, "No"));
            lines.push(keys("y / n · enter · esc dismisses"));
            lines
        }
        UiRequest::Select { title, options } => {
            let mut lines = vec![Line::from(Span::styled(clean(title), bold))];
            lines.extend(
                options
                    .iter()
                    .enumerate()
                    .map(|(n, option)| choice(n, option)),
            );
            lines.push(keys("↑↓ enter · esc dismisses"));
            lines
        }
        UiRequest::Input { title, placeholder } => {
            let field = if dialog.text.is_empty() {
                Span::styled(clean(placeholder), Style::default().fg(THEME.muted))
            } else {
                Span::raw(clean(&dialog.text))
            };
            vec![
                Line::from(Span::styled(clean(title), bold)),
                Line::from(vec![
                    Span::styled("> ", Style::default().fg(THEME.accent)),
                    field,
                    Span::styled("▏", Style::default().fg(THEME.accent)),
                ]),
                keys("enter answers · esc dismisses"),
            ]
        }
    }
}
