//! The chat's screens drawn into ratatui's test backend, asserted on the text a person would
//! see (insta snapshots for whole screens and boxes).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod children;
mod hooks;
mod renderers;
mod screens;

use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;
use serde_json::{Value, json};
use toolhost_agent::agent_loop::AgentEvent;
use toolhost_core::conversation::ToolCall;
use toolhost_core::{ContentBlock, ToolCallResult, ToolUpdate};

use super::app::App;
use super::draw::{RowCache, draw, tool_box};
use super::renderers::ViewOptions;
use super::transcript::ToolBox;

/// The screen as text, one line a row, trailing blanks cut.
pub fn screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut cache = RowCache::default();
    terminal.draw(|frame| draw(frame, app, &mut cache)).unwrap();
    buffer_text(terminal.backend().buffer())
}

pub fn buffer_text(buffer: &Buffer) -> String {
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            let row: String = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
            row.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn rows_text(rows: &[Line<'_>]) -> String {
    rows.iter()
        .map(|row| row.to_string().trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

pub fn result(id: &str, name: &str, text: &str, details: Value, is_error: bool) -> ToolCallResult {
    ToolCallResult {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![ContentBlock::text(text)],
        details: (!details.is_null()).then_some(details),
        is_error,
        truncated: false,
        duration: Duration::from_millis(5),
    }
}

pub fn done(name: &str, args: Value, text: &str, details: Value) -> ToolBox {
    let mut tool = ToolBox::new(call("c1", name, args));
    tool.result = Some(result("c1", name, text, details, false));
    tool
}

pub fn boxed(tool: &ToolBox, expanded: bool) -> String {
    rows_text(&tool_box(
        tool,
        ViewOptions {
            expanded,
            spinner_frame: 0,
        },
        60,
    ))
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.key(key(KeyCode::Char(c)));
    }
}

pub fn update(call_id: &str, text: &str) -> AgentEvent {
    AgentEvent::ToolCallUpdate {
        call_id: call_id.into(),
        update: ToolUpdate::text(text),
    }
}

pub fn app() -> App {
    let mut app = App::default();
    app.status.provider = "openai".into();
    app.status.model = "gpt-test".into();
    app
}

pub fn start(name: &str, id: &str, args: Value) -> AgentEvent {
    AgentEvent::ToolCallStart {
        call: call(id, name, args),
    }
}

pub fn end(name: &str, id: &str, text: &str, details: Value) -> AgentEvent {
    AgentEvent::ToolCallEnd {
        result: result(id, name, text, details, false),
    }
}

pub fn no_details() -> Value {
    json!(null)
}
