//! Each built-in tool's box, MCP tools' box, a JavaScript tool's tree, and the fallback.

use insta::assert_snapshot;
use ratatui::style::Color;
use serde_json::json;
use toolhost_script::{RenderBlock, RenderLine, RenderSpan, RenderTree};

use super::*;
use crate::draw::tool_box;

#[test]
fn read_shows_the_path_and_the_line_range() {
    let tool = done(
        "Read",
        json!({"path": "src/lib.rs", "offset": 10, "limit": 3}),
        "10\tfn a() {}\n11\tfn b() {}\n12\tfn c() {}",
        json!({"path": "/w/src/lib.rs", "first_line": 10, "last_line": 12, "total_lines": 80}),
    );
    assert_snapshot!(boxed(&tool, false));
}

#[test]
fn edit_shows_a_coloured_diff() {
    let tool = done(
        "Edit",
        json!({"path": "src/main.rs", "old_string": "fn main() {\n    let x = 1;\n    let y = 2;\n}", "new_string": "fn main() {\n    let x = 10;\n}"}),
        "Edited src/main.rs",
        json!({"replacements": 1}),
    );
    assert_snapshot!(boxed(&tool, false));
    let rows = tool_box(&tool, ViewOptions::default(), 60);
    let colour_of = |text: &str| {
        rows.iter()
            .flat_map(|row| row.spans.iter())
            .find(|span| span.content.contains(text))
            .and_then(|span| span.style.fg)
    };
    assert_eq!(colour_of("-     let y = 2;"), Some(Color::Red));
    assert_eq!(colour_of("+     let x = 10;"), Some(Color::Green));
    assert_eq!(colour_of("  fn main() {"), Some(Color::DarkGray));
}

#[test]
fn bash_shows_the_command_the_tail_of_its_output_and_the_exit_code() {
    let mut tool = ToolBox::new(call("c1", "Bash", json!({"command": "seq 1 20"})));
    for n in 1..=20 {
        tool.update(ToolUpdate::text(format!("{n}\n")));
    }
    assert_snapshot!("bash_running", boxed(&tool, false));
    let output: String = (1..=20).map(|n| format!("{n}\n")).collect();
    tool.result = Some(result(
        "c1",
        "Bash",
        &output,
        json!({"exit_code": 3, "termination": "exited"}),
        true,
    ));
    assert_snapshot!("bash_done_collapsed", boxed(&tool, false));
    let expanded = boxed(&tool, true);
    assert!(
        expanded.contains("│ 1 ") && expanded.contains("│ 20 "),
        "{expanded}"
    );
    assert!(expanded.contains("exit 3"), "{expanded}");
}

#[test]
fn grep_and_glob_show_counts_and_the_first_matches() {
    let matches: String = (1..=8).map(|n| format!("src/f{n}.rs:3:needle\n")).collect();
    let grep = done(
        "Grep",
        json!({"pattern": "needle", "path": "src"}),
        &matches,
        json!({"matches": 8, "files": 8}),
    );
    assert_snapshot!("grep", boxed(&grep, false));
    let glob = done(
        "Glob",
        json!({"pattern": "**/*.toml"}),
        "Cargo.toml\ncrates/cli/Cargo.toml",
        json!({"total": 2, "files": ["Cargo.toml", "crates/cli/Cargo.toml"]}),
    );
    assert_snapshot!("glob", boxed(&glob, false));
}

#[test]
fn mcp_tools_show_server_tool_and_arguments() {
    let tool = done(
        "mcp__github__create_issue",
        json!({"repo": "acme/app", "title": "Crash on start"}),
        "created #12",
        json!(null),
    );
    assert_snapshot!(boxed(&tool, false));
}

#[test]
fn a_tool_without_a_renderer_gets_its_name_arguments_and_result() {
    let tool = done(
        "Frobnicate",
        json!({"level": 3}),
        "frobnicated",
        json!(null),
    );
    assert_snapshot!(boxed(&tool, false));
}

fn span(text: &str, fg: Option<&str>) -> RenderSpan {
    RenderSpan {
        text: text.into(),
        fg: fg.map(str::to_owned),
        ..RenderSpan::default()
    }
}

#[test]
fn a_javascript_tree_is_drawn_with_its_styles_and_folded_sections() {
    let mut tool = done("weather", json!({"city": "Oslo"}), "raw text", json!(null));
    tool.custom_call = Some(RenderTree {
        blocks: vec![RenderBlock::Line(RenderLine {
            spans: vec![
                span("☁ weather ", Some("accent")),
                span("Oslo", Some("#ff8800")),
            ],
        })],
    });
    tool.custom_result = Some(RenderTree {
        blocks: vec![
            RenderBlock::Line(RenderLine {
                spans: vec![span("4 °C, rain", Some("success"))],
            }),
            RenderBlock::Section {
                title: RenderLine::plain("hourly"),
                collapsed: true,
                lines: vec![
                    RenderLine::plain("09:00 3 °C"),
                    RenderLine::plain("10:00 4 °C"),
                ],
            },
        ],
    });
    assert_snapshot!("javascript_collapsed", boxed(&tool, false));
    assert_snapshot!("javascript_expanded", boxed(&tool, true));
    let rows = tool_box(&tool, ViewOptions::default(), 60);
    let orange = rows
        .iter()
        .flat_map(|row| row.spans.iter())
        .find(|span| span.content == "Oslo")
        .unwrap();
    assert_eq!(orange.style.fg, Some(Color::Rgb(0xff, 0x88, 0x00)));
}

#[test]
fn escapes_from_tools_and_scripts_never_reach_the_screen() {
    let mut tool = done(
        "Bash",
        json!({"command": "printf '\\033[2J'"}),
        "before\u{1b}[2J\u{1b}[31mred\u{1b}]0;evil title\u{7}after\r\u{8}",
        json!({"exit_code": 0}),
    );
    tool.custom_call = Some(RenderTree {
        blocks: vec![RenderBlock::Line(RenderLine {
            spans: vec![span("\u{1b}[Hhidden?\u{1b}[8m", None)],
        })],
    });
    let text = boxed(&tool, true);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'),
        "{text:?}"
    );
    assert!(text.contains("beforeredafter"), "{text}");
    assert!(text.contains("hidden?"), "{text}");
}

#[test]
fn wide_characters_and_long_lines_keep_the_box_square() {
    let tool = done(
        "Read",
        json!({"path": "説明書.md"}),
        &format!("日本語のテキストがここにあります。{}", "x".repeat(150)),
        json!({"first_line": 1, "last_line": 1, "total_lines": 1}),
    );
    for width in [20usize, 41, 60] {
        let rows = tool_box(
            &tool,
            ViewOptions {
                expanded: true,
                spinner_frame: 0,
            },
            width,
        );
        for row in &rows {
            assert_eq!(crate::text::width(&row.to_string()), width, "{row}");
        }
    }
}
