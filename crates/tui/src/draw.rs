//! Drawing the chat: the transcript (scrolled to its end unless the user paged back), the
//! input box, the status line, and the open dialog over them. Rows are wrapped here by
//! display width, so the transcript knows its height and draws only what is visible.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::app::App;
use super::child_view;
use super::dialog_view;
use super::markdown;
use super::renderers::{
    self, BoxView, COLLAPSED_LINES, EXPANDED_LINES, SPINNER, THEME, ViewOptions,
};
use super::text::{self, first_row, plain_lines, wrap};
use super::transcript::{Entry, NoticeKind, PendingEntry, PendingState, ToolBox};

/// Rows of the input box at most (more scrolls inside it).
const INPUT_ROWS: usize = 8;

/// Rows drawn before, by transcript index, kept until their entry changes: an answer's
/// Markdown (answers only grow, so its length tells a change) and tool boxes (by revision).
#[derive(Debug, Default)]
pub struct RowCache {
    epoch: u64,
    answers: HashMap<usize, (usize, usize, Vec<Line<'static>>)>,
    boxes: HashMap<usize, (BoxKey, Vec<Line<'static>>)>,
}

/// What a box's rows depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BoxKey {
    revision: u64,
    width: usize,
    expanded: bool,
    spinner_frame: Option<u32>,
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, app: &App, cache: &mut RowCache) {
    let area = frame.area();
    let input_rows = app.input.text().split('\n').count().clamp(1, INPUT_ROWS) as u16;
    let [transcript, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(input_rows + 2),
        Constraint::Length(1),
    ])
    .areas(area);
    if let Some(child) = app.watched() {
        let scroll_back = app.watching.map_or(0, |watching| watching.scroll_back);
        // A child's transcript is drawn afresh: its rows are not the chat's.
        let mut rows = RowCache::default();
        draw_entries(
            frame,
            app,
            &child.transcript,
            scroll_back,
            &mut rows,
            transcript,
        );
        let bar = child_view::watching_bar(child, app.children.len() > 1, usize::from(input.width));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(Style::default().fg(THEME.accent));
        frame.render_widget(Paragraph::new(bar).block(block), input);
    } else {
        draw_entries(
            frame,
            app,
            &app.transcript,
            app.scroll_back,
            cache,
            transcript,
        );
        draw_input(frame, app, input);
    }
    frame.render_widget(Paragraph::new(status_line(app)), status);
    if let Some(dialog) = app.dialogs.front() {
        dialog_view::draw(frame, dialog, area);
    }
}

/// Draws `entries` (the chat's transcript, or a watched child's) into `area`, `scroll_back`
/// rows up from their end.
fn draw_entries(
    frame: &mut Frame<'_>,
    app: &App,
    entries: &[Entry],
    scroll_back: usize,
    cache: &mut RowCache,
    area: Rect,
) {
    let width = usize::from(area.width);
    if cache.epoch != app.epoch {
        *cache = RowCache {
            epoch: app.epoch,
            ..RowCache::default()
        };
    }
    let mut rows: Vec<Line<'static>> = Vec::new();
    let options = ViewOptions {
        expanded: app.expanded,
        spinner_frame: app.spinner_frame,
    };
    for (index, entry) in entries.iter().enumerate() {
        match entry {
            Entry::User(text) => {
                let style = Style::default().add_modifier(Modifier::BOLD);
                for (n, line) in text.lines().enumerate() {
                    let marker = if n == 0 { "› " } else { "  " };
                    let line = Line::from(vec![
                        Span::styled(marker, Style::default().fg(THEME.accent)),
                        Span::styled(line.to_owned(), style),
                    ]);
                    rows.extend(wrap(&line, width));
                }
            }
            Entry::Assistant(answer) => {
                let cached = cache.answers.get(&index);
                match cached {
                    Some((len, w, lines)) if *len == answer.len() && *w == width => {
                        rows.extend(lines.iter().cloned());
                    }
                    _ => {
                        let lines: Vec<Line<'static>> = markdown::lines(answer)
                            .iter()
                            .flat_map(|line| wrap(line, width))
                            .collect();
                        rows.extend(lines.iter().cloned());
                        cache.answers.insert(index, (answer.len(), width, lines));
                    }
                }
            }
            Entry::Tool(tool) => {
                let key = BoxKey {
                    revision: tool.revision,
                    width,
                    expanded: options.expanded,
                    spinner_frame: tool.is_running().then_some(options.spinner_frame),
                };
                match cache.boxes.get(&index) {
                    Some((drawn, lines)) if *drawn == key => rows.extend(lines.iter().cloned()),
                    _ => {
                        let lines = tool_box(tool, options, width);
                        rows.extend(lines.iter().cloned());
                        cache.boxes.insert(index, (key, lines));
                    }
                }
            }
            Entry::Reasoning(thought) => {
                let style = Style::default()
                    .fg(THEME.muted)
                    .add_modifier(Modifier::ITALIC);
                let lines = thought.trim().lines().count();
                rows.extend(wrap(
                    &Line::from(Span::styled(
                        if app.expanded {
                            "∴ thinking".to_owned()
                        } else {
                            format!("∴ thinking ({lines} lines, ctrl+o to show)")
                        },
                        style,
                    )),
                    width,
                ));
                if app.expanded {
                    for line in plain_lines(thought.trim(), style) {
                        rows.extend(wrap(&line, width));
                    }
                }
            }
            Entry::Notice(notice) => {
                let color = match notice.kind {
                    NoticeKind::Info => THEME.muted,
                    NoticeKind::Warning => THEME.warning,
                    NoticeKind::Error => THEME.error,
                };
                for line in plain_lines(&notice.text, Style::default().fg(color)) {
                    let mut spans = vec![Span::styled("• ", Style::default().fg(color))];
                    spans.extend(line.spans);
                    rows.extend(wrap(&Line::from(spans), width));
                }
            }
            Entry::Pending(pending) => rows.extend(pending_box(pending, width)),
            Entry::Child(run_id) => {
                if let Some(child) = app.child(run_id) {
                    rows.extend(child_view::child_lines(child, app.spinner_frame, width));
                }
            }
        }
        rows.push(Line::default());
    }
    let height = usize::from(area.height);
    let bottom = rows
        .len()
        .saturating_sub(scroll_back.min(rows.len().saturating_sub(height)));
    let top = bottom.saturating_sub(height);
    let visible: Vec<Line<'static>> = rows.drain(top..bottom).collect();
    frame.render_widget(Paragraph::new(visible), area);
}

/// A box around a view: `╭ ✓ title ╮`, the body cut to what collapsed boxes show, `╰──╯`.
pub fn tool_box(tool: &ToolBox, options: ViewOptions, width: usize) -> Vec<Line<'static>> {
    let view = renderers::view(tool, options);
    let (icon, color) = match &tool.result {
        None => (
            SPINNER[options.spinner_frame as usize % SPINNER.len()],
            THEME.warning,
        ),
        Some(result) if result.is_error => ("✗", THEME.error),
        Some(_) => ("✓", THEME.success),
    };
    let mut title = vec![Span::styled(format!("{icon} "), Style::default().fg(color))];
    title.extend(view.title.spans.clone());
    framed(
        Line::from(title),
        &body_rows(&view, tool.is_running(), options.expanded),
        width,
    )
}

/// The body's lines a box shows, with a note of what it hides.
fn body_rows(view: &BoxView, running: bool, expanded: bool) -> Vec<Line<'static>> {
    let limit = if expanded {
        EXPANDED_LINES
    } else {
        COLLAPSED_LINES
    };
    let total = view.body.len();
    if total <= limit && view.skipped == 0 {
        return view.body.clone();
    }
    let shown_from = total.saturating_sub(limit);
    let hidden = view.skipped + shown_from;
    let note = Line::from(Span::styled(
        if expanded {
            format!("… {hidden} more lines")
        } else {
            format!("… {hidden} more lines (ctrl+o to expand)")
        },
        Style::default().fg(THEME.muted),
    ));
    if view.tail_first || running {
        let mut rows = vec![note];
        rows.extend(view.body[shown_from..].iter().cloned());
        rows
    } else {
        let mut rows: Vec<Line<'static>> = view.body[..limit.min(total)].to_vec();
        rows.push(note);
        rows
    }
}

/// Draws `body` in a rounded box `width` wide with `title` on its top line.
pub fn framed(title: Line<'static>, body: &[Line<'static>], width: usize) -> Vec<Line<'static>> {
    let border = Style::default().fg(THEME.muted);
    let width = width.max(6);
    let inner = width - 4;
    let mut title_row = first_row(&title, width - 4);
    let used = text::width(&title_row.to_string());
    let mut top = vec![Span::styled("╭ ", border)];
    top.append(&mut title_row.spans);
    top.push(Span::styled(
        format!(" {}╮", "─".repeat(width.saturating_sub(used + 4))),
        border,
    ));
    let mut rows = vec![Line::from(top)];
    for line in body {
        for row in wrap(line, inner) {
            let pad = inner.saturating_sub(text::width(&row.to_string()));
            let mut spans = vec![Span::styled("│ ", border)];
            spans.extend(row.spans);
            spans.push(Span::raw(" ".repeat(pad)));
            spans.push(Span::styled(" │", border));
            rows.push(Line::from(spans));
        }
    }
    rows.push(Line::from(Span::styled(
        format!("╰{}╯", "─".repeat(width - 2)),
        border,
    )));
    rows
}

fn pending_box(pending: &PendingEntry, width: usize) -> Vec<Line<'static>> {
    let action = &pending.action;
    let label = action
        .label
        .clone()
        .unwrap_or_else(|| "an action".to_owned());
    let from = action.source_tool_name.clone().unwrap_or_default();
    let title = Line::from(vec![
        Span::styled("◆ pending ", Style::default().fg(THEME.warning)),
        Span::styled(label, Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(
            if from.is_empty() {
                String::new()
            } else {
                format!(" · from {from}")
            },
            Style::default().fg(THEME.muted),
        ),
    ]);
    let mut body = Vec::new();
    if let Some(description) = &action.description {
        body.extend(plain_lines(description, Style::default()));
    }
    if let Some(details) = &action.details {
        let pretty = serde_json::to_string_pretty(details).unwrap_or_default();
        body.extend(
            plain_lines(&pretty, Style::default().fg(THEME.muted))
                .into_iter()
                .take(12),
        );
    }
    let (state, color) = match &pending.state {
        PendingState::Waiting => (
            "waiting for your decision: [a] apply  [d] discard".to_owned(),
            THEME.warning,
        ),
        PendingState::Resolving => ("…".to_owned(), THEME.muted),
        PendingState::Applied(Some(said)) => (format!("applied: {said}"), THEME.success),
        PendingState::Applied(None) => ("applied".to_owned(), THEME.success),
        PendingState::Discarded => ("discarded".to_owned(), THEME.muted),
        PendingState::Failed(error) => (format!("failed: {error}"), THEME.error),
    };
    body.push(Line::from(Span::styled(state, Style::default().fg(color))));
    framed(title, &body, width)
}

fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let (line, column) = app.input.cursor_position();
    let visible = usize::from(area.height.saturating_sub(2)).max(1);
    let first = (line + 1).saturating_sub(visible);
    let lines: Vec<Line<'static>> = app
        .input
        .text()
        .split('\n')
        .skip(first)
        .map(|line| Line::from(text::clean(line)))
        .collect();
    let title = if app.busy {
        " working… (esc to cancel) "
    } else {
        " message (enter to send, alt+enter for a new line) "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(THEME.muted))
        .title(Span::styled(title, Style::default().fg(THEME.muted)));
    frame.render_widget(Paragraph::new(lines).block(block), area);
    if app.dialogs.is_empty() {
        let x = area.x
            + 1
            + u16::try_from(column)
                .unwrap_or(u16::MAX)
                .min(area.width.saturating_sub(3));
        let y = area.y + 1 + u16::try_from(line - first).unwrap_or(0);
        frame.set_cursor_position((x, y));
    }
}

/// `⠋ model (provider) · mode · tokens · context · keys`.
pub fn status_line(app: &App) -> Line<'static> {
    let status = &app.status;
    let muted = Style::default().fg(THEME.muted);
    let mut spans = Vec::new();
    if app.busy {
        spans.push(Span::styled(
            format!("{} ", SPINNER[app.spinner_frame as usize % SPINNER.len()]),
            Style::default().fg(THEME.warning),
        ));
    }
    spans.push(Span::styled(
        status.model.clone(),
        Style::default().fg(THEME.accent),
    ));
    spans.push(Span::styled(format!(" ({})", status.provider), muted));
    spans.push(Span::styled(" · mode ", muted));
    spans.push(Span::styled(
        status.mode.to_string(),
        Style::default()
            .fg(THEME.warning)
            .add_modifier(Modifier::BOLD),
    ));
    spans.push(Span::styled(
        format!(
            " · tokens {} in, {} out",
            status.usage.input_tokens, status.usage.output_tokens
        ),
        muted,
    ));
    let context = match status.context_window {
        Some(window) if window > 0 => format!(
            " · context {}% of {}",
            status.context_tokens * 100 / window,
            window
        ),
        _ => format!(" · context {}", status.context_tokens),
    };
    spans.push(Span::styled(context, muted));
    if let Some(said) = &status.tool_status {
        spans.push(Span::styled(
            format!(" · {}", text::one_line(said, 40)),
            muted,
        ));
    }
    spans.push(Span::styled(" · shift+tab mode · ctrl+o expand", muted));
    if !app.children.is_empty() {
        spans.push(Span::styled(" · ctrl+t sub-agents", muted));
    }
    Line::from(spans)
}
