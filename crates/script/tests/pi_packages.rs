//! pi-shaped render code on toolhost's declarative tree, `node:module`'s `createRequire`, and
//! errors of a call that reaches for something the host does not give.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{call, registry_with};
use toolhost_script::{RenderBlock, RenderLine, RenderOptions, RenderSpan, RenderTree, Rendering};
use toolhost_test_support::write_file;

fn span(text: &str) -> RenderSpan {
    RenderSpan {
        text: text.into(),
        ..RenderSpan::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_tui_components_and_concatenated_theme_text_become_styled_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path().join("render.ts"),
        r##"
        import { Container, Markdown, Spacer, Text } from "@mariozechner/pi-tui";
        import { getMarkdownTheme } from "@mariozechner/pi-coding-agent";
        export default () => ({ name: "render", description: "", async execute() { return { content: [] }; },
          renderCall: (args: any, theme: any) => new Text(theme.fg("toolTitle", theme.bold("run ")) + theme.fg("muted", args.x) + " \u001b[31mred\u001b[0m", 0, 0),
          renderResult: (_result: any, _options: any, theme: any) => {
            const box = new Container();
            box.addChild(new Text(theme.fg("success", "two\nlines"), 0, 0));
            box.addChild(new Spacer(1));
            box.addChild(new Markdown("# Title", 0, 0, getMarkdownTheme()));
            return box;
          } });
        "##,
    );
    let host = support::host(dir.path());
    let discovery = support::load(&host, &[path]).await;
    let tool = discovery.tools[0].tool.clone();
    assert_eq!(
        tool.render_call(&json!({"x": "X"}), &json!({})).await,
        Rendering::Custom(RenderTree {
            blocks: vec![RenderBlock::Line(RenderLine {
                spans: vec![
                    RenderSpan {
                        fg: Some("accent".into()),
                        bold: true,
                        ..span("run ")
                    },
                    RenderSpan {
                        fg: Some("muted".into()),
                        ..span("X")
                    },
                    span(" "),
                    RenderSpan {
                        fg: Some("red".into()),
                        ..span("red")
                    },
                ]
            })]
        })
    );
    let output = toolhost_core::ToolOutput::text("");
    let success = |text: &str| RenderLine {
        spans: vec![RenderSpan {
            fg: Some("success".into()),
            ..span(text)
        }],
    };
    assert_eq!(
        tool.render_result(&output, RenderOptions::default(), &json!({}), &json!({}))
            .await,
        Rendering::Custom(RenderTree {
            blocks: vec![
                RenderBlock::Line(success("two")),
                RenderBlock::Line(success("lines")),
                RenderBlock::Line(RenderLine::plain("")),
                RenderBlock::Line(RenderLine {
                    spans: vec![RenderSpan {
                        fg: Some("accent".into()),
                        bold: true,
                        ..span("Title")
                    }]
                }),
            ]
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_require_loads_commonjs_and_json_from_an_es_module() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path().join("tool/data.json"), r#"{"n": 7}"#);
    write_file(
        dir.path().join("tool/legacy.cjs"),
        "module.exports = (n) => n * 6;",
    );
    let registry = registry_with(
        dir.path(),
        "tool/index.js",
        r#"
        import { createRequire } from "node:module";
        const require = createRequire(import.meta.url);
        const times = require("./legacy.cjs");
        const { n } = require("./data.json");
        export default () => ({ name: "answer", description: "", async execute() {
          return { content: [{ type: "text", text: String(times(n)) }] };
        } });
        "#,
    )
    .await;
    assert_eq!(call(&registry, "answer", json!({})).await.text(), "42");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_of_a_missing_host_export_names_it_and_the_typescript_line() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "call.ts",
        r#"interface Args { x: number }
export default (api: any) => ({ name: "uses_missing", description: "",
  async execute(_id: string, params: Args) {
    const doubled: number = params.x * 2;
    return api.pi.renderDiffOfThings(doubled);
  } });
"#,
    )
    .await;
    let result = call(&registry, "uses_missing", json!({"x": 1})).await;
    assert!(result.is_error);
    assert!(
        result.text().starts_with(
            "api.pi.renderDiffOfThings is not a function: the host may not provide it"
        ) && result.text().contains("(TypeError at line 5, in execute)"),
        "{}",
        result.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_reads_nothing_outside_the_tool_folder_even_through_the_raw_bindings() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path().join("secret.json"), r#"{"token": "hunter2"}"#);
    let registry = registry_with(
        dir.path(),
        "tool/index.js",
        r#"
        export default () => ({ name: "peek", description: "", async execute() {
          const { host, require } = globalThis.__toolhost;
          const tries = [
            () => require("../secret.json"),
            () => host.compileCommonJs(`${import.meta.dirname}/../secret.json`),
          ];
          const seen = tries.map((attempt) => { try { return JSON.stringify(attempt()); } catch (error) { return error.message; } });
          return { content: [{ type: "text", text: seen.join("\n") }] };
        } });
        "#,
    )
    .await;
    let text = call(&registry, "peek", json!({})).await.text();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("imports must stay inside the tool folder")
            && text.contains("is not a file inside the tool folder"),
        "{text}"
    );
}
