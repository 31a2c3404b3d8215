//! How sub-agents are drawn: a child's one-row line in the chat's transcript (a spinner, its
//! run and agent, its status, its latest tool call while it runs, its turns and time), and
//! the bar under a watched child's transcript.

use std::time::Duration;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use toolhost_agent::subagents::RunStatus;

use super::children::ChildRun;
use super::renderers::{self, SPINNER, THEME, ViewOptions};
use super::text;
use super::text::first_row;

/// `⠋ run-1 helper · running · turn 2 · 14s · ctrl+t to watch`, and while it runs a second
/// row with its latest tool call (`  ⎿ Bash $ make test`), each cut to `width`.
pub fn child_lines(child: &ChildRun, spinner_frame: u32, width: usize) -> Vec<Line<'static>> {
    let muted = Style::default().fg(THEME.muted);
    let (icon, color) = match child.status {
        RunStatus::Pending | RunStatus::Running => (
            SPINNER[spinner_frame as usize % SPINNER.len()],
            THEME.warning,
        ),
        RunStatus::Completed => ("✓", THEME.success),
        RunStatus::Failed => ("✗", THEME.error),
        RunStatus::Cancelled => ("⊘", THEME.muted),
    };
    let mut spans = vec![
        Span::styled(format!("{icon} "), Style::default().fg(color)),
        Span::styled(
            child.run_id.clone(),
            Style::default()
                .fg(THEME.accent)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(" {}", child.agent)),
        Span::styled(
            if child.background {
                " (background)"
            } else {
                ""
            },
            muted,
        ),
        Span::styled(" · ", muted),
        Span::styled(status_name(child.status), Style::default().fg(color)),
    ];
    if child.status == RunStatus::Failed
        && let Some(error) = &child.error
    {
        spans.push(Span::styled(
            format!(": {}", text::one_line(error, 60)),
            Style::default().fg(color),
        ));
    }
    let turns = match (child.is_running(), child.turns) {
        (true, turn) => format!(" · turn {turn}"),
        (false, 1) => " · 1 turn".to_owned(),
        (false, turns) => format!(" · {turns} turns"),
    };
    spans.push(Span::styled(
        format!("{turns} · {}", elapsed(child.elapsed())),
        muted,
    ));
    if child.is_running() {
        spans.push(Span::styled(" · ctrl+t to watch", muted));
    }
    let mut rows = vec![first_row(&Line::from(spans), width)];
    if child.is_running()
        && let Some(call) = child.last_call()
    {
        let mut spans = vec![Span::styled("  ⎿ ", muted)];
        spans.extend(renderers::view(call, ViewOptions::default()).title.spans);
        rows.push(first_row(&Line::from(spans), width));
    }
    rows
}

/// The bar under a watched child's transcript.
pub fn watching_bar(child: &ChildRun, others: bool, width: usize) -> Line<'static> {
    let muted = Style::default().fg(THEME.muted);
    let mut spans = vec![
        Span::styled(" watching ", muted),
        Span::styled(
            child.run_id.clone(),
            Style::default()
                .fg(THEME.accent)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(" {}", child.agent)),
        Span::styled(" · ", muted),
        Span::raw(status_name(child.status)),
        Span::styled(" · read-only · esc back", muted),
    ];
    if others {
        spans.push(Span::styled(" · ←/→ other sub-agents", muted));
    }
    spans.push(Span::styled(" · pgup/pgdn scroll", muted));
    first_row(&Line::from(spans), width)
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Pending => "starting",
        RunStatus::Running => "running",
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
        RunStatus::Cancelled => "cancelled",
    }
}

/// `14s`, `3m05s`.
fn elapsed(time: Duration) -> String {
    let seconds = time.as_secs();
    if seconds < 60 {
        format!("{seconds}s")
    } else {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    }
}
