//! What a tool box shows: a title line and body lines, from the tool's own renderer — a
//! built-in one for each built-in tool and MCP tools, a JavaScript tool's `renderCall` /
//! `renderResult` tree — or the default (the name, the arguments, the result's first lines).
//!
//! A renderer gives the whole body; the box cuts it when collapsed (a running call shows its
//! tail, a finished one its head) and the user expands every box with Ctrl-O.

mod builtin;
pub mod tree;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::{Value, json};

use super::text::{clean, one_line, plain_lines};
use super::transcript::ToolBox;

/// Lines of a box's body shown while collapsed.
pub const COLLAPSED_LINES: usize = 6;
/// Lines of a box's body shown when expanded (very long outputs stay bounded).
pub const EXPANDED_LINES: usize = 200;

/// The spinner's frames, one per tick while a call runs.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Colours by role, for the built-in renderers and for scripts (`theme` of the hooks).
#[derive(Clone, Copy, Debug)]
pub struct Theme {
    /// Names, titles.
    pub accent: Color,
    /// Done, added lines.
    pub success: Color,
    /// Failed, removed lines.
    pub error: Color,
    /// Risks, waiting.
    pub warning: Color,
    /// Secondary text.
    pub muted: Color,
}

/// The one theme.
pub const THEME: Theme = Theme {
    accent: Color::Cyan,
    success: Color::Green,
    error: Color::Red,
    warning: Color::Yellow,
    muted: Color::DarkGray,
};

impl Theme {
    /// What a script's hooks receive as `theme` (the helpers `fg`, `bold`, … are added in
    /// the engine).
    pub fn as_json(&self) -> Value {
        json!({
            "name": "dark",
            "colors": {
                "accent": "cyan", "success": "green", "error": "red",
                "warning": "yellow", "muted": "darkgray", "text": "reset",
            },
        })
    }
}

/// How a box is drawn: where the call stands, and whether the user expanded boxes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ViewOptions {
    /// Whether boxes are expanded (Ctrl-O).
    pub expanded: bool,
    /// The spinner's frame.
    pub spinner_frame: u32,
}

/// What a box shows.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxView {
    /// The top line: what the call is.
    pub title: Line<'static>,
    /// Everything below it; the box cuts it when collapsed.
    pub body: Vec<Line<'static>>,
    /// Whether the body's tail matters more than its head (a running command's output).
    pub tail_first: bool,
    /// Lines before `body` the renderer left out (a long output's head no box would show).
    pub skipped: usize,
}

/// The view of `tool`.
pub fn view(tool: &ToolBox, options: ViewOptions) -> BoxView {
    if tool.custom_call.is_some() || tool.custom_result.is_some() {
        return custom_view(tool, options);
    }
    builtin::view(tool, options).unwrap_or_else(|| default_view(tool))
}

/// The title of a call without a renderer of its own: the name and the arguments on a line.
fn default_title(tool: &ToolBox) -> Line<'static> {
    let args = match &tool.args {
        Value::Object(map) if map.is_empty() => String::new(),
        args => args.to_string(),
    };
    Line::from(vec![
        Span::styled(clean(&tool.call.name), bold(THEME.accent)),
        Span::raw(" "),
        Span::styled(one_line(&args, 200), Style::default().fg(THEME.muted)),
    ])
}

/// The default view: the name with its arguments, then the output or result text.
fn default_view(tool: &ToolBox) -> BoxView {
    BoxView {
        title: default_title(tool),
        body: output_lines(tool),
        tail_first: tool.is_running(),
        skipped: 0,
    }
}

/// The result's text (red when it is an error), or the output streamed so far.
fn output_lines(tool: &ToolBox) -> Vec<Line<'static>> {
    match &tool.result {
        Some(result) => {
            let style = if result.is_error {
                Style::default().fg(THEME.error)
            } else {
                Style::default()
            };
            plain_lines(&result.text(), style)
        }
        None => tool
            .partial
            .iter()
            .map(|line| Line::from(clean(line)))
            .collect(),
    }
}

/// A JavaScript tool's view: its `renderCall` tree as the title and first lines, its
/// `renderResult` tree (or the default output) below.
fn custom_view(tool: &ToolBox, options: ViewOptions) -> BoxView {
    let mut call_lines = match &tool.custom_call {
        Some(tree) => tree::lines(tree, options.expanded),
        None => vec![default_title(tool)],
    };
    let title = if call_lines.is_empty() {
        default_title(tool)
    } else {
        call_lines.remove(0)
    };
    let mut body = call_lines;
    match &tool.custom_result {
        Some(tree) => body.extend(tree::lines(tree, options.expanded)),
        None => body.extend(output_lines(tool)),
    }
    BoxView {
        title,
        body,
        tail_first: tool.is_running(),
        skipped: 0,
    }
}

fn bold(color: Color) -> Style {
    Style::default().fg(color).add_modifier(Modifier::BOLD)
}

/// A string argument, or "".
fn arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}
