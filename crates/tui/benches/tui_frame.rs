//! Frame time of the full-screen chat while a tool streams: a Bash box taking 1 000 lines of
//! output, one line an update, the screen drawn after each (what the chat does when updates
//! come slower than frames), and a whole frame over a transcript holding that output expanded.
//! The target: under 16 ms a frame.
//!
//! The UI's pure modules are compiled in here as they are in the library (they are private to
//! it).

#![allow(
    missing_docs,
    dead_code,
    unused_imports,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used
)]

#[path = "../src/app.rs"]
mod app;
#[path = "../src/child_view.rs"]
mod child_view;
#[path = "../src/children.rs"]
mod children;
#[path = "../src/dialog_view.rs"]
mod dialog_view;
#[path = "../src/dialogs.rs"]
mod dialogs;
#[path = "../src/draw.rs"]
mod draw;
#[path = "../src/input.rs"]
mod input;
#[path = "../src/markdown.rs"]
mod markdown;
#[path = "../src/renderers/mod.rs"]
mod renderers;
#[path = "../src/text.rs"]
mod text;
#[path = "../src/transcript.rs"]
mod transcript;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use toolhost_agent::agent_loop::AgentEvent;
use toolhost_core::ToolUpdate;
use toolhost_core::conversation::ToolCall;

use app::App;
use draw::{RowCache, draw};

const LINES: usize = 1_000;

fn streaming_app() -> App {
    let mut app = App::default();
    app.busy = true;
    app.agent_event(AgentEvent::TextDelta {
        text: "Running the tests now:\n\n```sh\ncargo test\n```\n".into(),
    });
    app.agent_event(AgentEvent::ToolCallStart {
        call: ToolCall {
            id: "c1".into(),
            name: "Bash".into(),
            arguments: json!({"command": "cargo test"}).to_string(),
        },
    });
    app
}

fn update(n: usize) -> AgentEvent {
    AgentEvent::ToolCallUpdate {
        call_id: "c1".into(),
        update: ToolUpdate::text(format!("test module_{n}::case_{n} ... ok 日本語\n")),
    }
}

fn frames(c: &mut Criterion) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    c.bench_function("1000 streamed lines, a frame after each", |b| {
        b.iter(|| {
            let mut app = streaming_app();
            let mut cache = RowCache::default();
            for n in 0..LINES {
                app.agent_event(update(n));
                terminal
                    .draw(|frame| draw(frame, &app, &mut cache))
                    .unwrap();
            }
        });
    });

    let mut app = streaming_app();
    for n in 0..LINES {
        app.agent_event(update(n));
    }
    app.expanded = true;
    let mut cache = RowCache::default();
    c.bench_function("one frame, 1000 lines in an expanded box", |b| {
        b.iter(|| {
            app.tick();
            terminal
                .draw(|frame| draw(frame, &app, &mut cache))
                .unwrap();
        });
    });
}

criterion_group!(benches, frames);
criterion_main!(benches);
