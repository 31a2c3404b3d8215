//! Render hooks in the chat: jobs asked for and coalesced, failures reported once, and real
//! JavaScript hooks that draw, throw and loop forever.

use std::sync::Arc;

use insta::assert_snapshot;
use serde_json::json;
use toolhost_script::{Rendering, ScriptHost, ScriptLimits};

use super::*;
use crate::app::{Action, Hook};
use crate::renderers::THEME;
use crate::transcript::Entry;

#[test]
fn a_failing_renderer_falls_back_and_is_reported_once() {
    let mut app = app();
    app.rendered_tools.insert("weather".into());
    for id in ["c1", "c2"] {
        let actions = app.agent_event(start("weather", id, json!({"city": "Oslo"})));
        assert_eq!(
            actions,
            vec![Action::Render {
                call_id: id.into(),
                hook: Hook::Call
            }]
        );
        app.rendered(
            id,
            Hook::Call,
            Rendering::Default {
                text: String::new(),
                error: Some("renderCall failed: boom".into()),
            },
        );
    }
    let notices = app
        .transcript
        .iter()
        .filter(|entry| matches!(entry, Entry::Notice(notice) if notice.text.contains("boom")))
        .count();
    assert_eq!(notices, 1);
    let text = screen(&app, 80, 20);
    assert!(text.contains("weather {\"city\":\"Oslo\"}"), "{text}");
}

#[test]
fn updates_while_a_render_runs_ask_for_one_more_render_when_it_ends() {
    let mut app = app();
    app.rendered_tools.insert("slow".into());
    app.agent_event(start("slow", "c1", json!({})));
    app.rendered(
        "c1",
        Hook::Call,
        Rendering::Default {
            text: String::new(),
            error: None,
        },
    );
    assert_eq!(
        app.agent_event(update("c1", "1")),
        vec![Action::Render {
            call_id: "c1".into(),
            hook: Hook::Result
        }]
    );
    assert!(app.agent_event(update("c1", "2")).is_empty());
    assert!(app.agent_event(update("c1", "3")).is_empty());
    let again = app.rendered(
        "c1",
        Hook::Result,
        Rendering::Default {
            text: String::new(),
            error: None,
        },
    );
    assert_eq!(
        again,
        vec![Action::Render {
            call_id: "c1".into(),
            hook: Hook::Result
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_javascript_renderers_draw_throw_and_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.js");
    std::fs::write(
        &path,
        r#"
        export default () => [
          { name: "weather", description: "", async execute() { return { content: [{ type: "text", text: "4" }], details: { c: 4 } }; },
            renderCall: (args, theme) => [[theme.fg("accent", "☁ "), theme.bold(args.city)]],
            renderResult: (result, options, theme) => [
              [theme.fg("success", `${result.details.c} °C`), options.expanded ? " (expanded)" : ""],
              { section: "raw", collapsed: true, lines: [JSON.stringify(result.details)] },
            ] },
          { name: "broken", description: "", async execute() { return { content: [] }; },
            renderCall() { throw new Error("no renderer today"); } },
          { name: "endless", description: "", async execute() { return { content: [] }; },
            renderCall() { while (true) {} } },
        ];
        "#,
    )
    .unwrap();
    let host = ScriptHost::builder(dir.path())
        .limits(ScriptLimits {
            hook_time_limit: std::time::Duration::from_millis(300),
            ..ScriptLimits::default()
        })
        .build();
    let discovery = toolhost_script::load_custom_tools(&host, &[path]).await;
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    let tool = |name: &str| {
        discovery
            .tools
            .iter()
            .find(|t| t.tool.name() == name)
            .map(|t| Arc::clone(&t.tool))
            .unwrap()
    };
    let mut app = app();
    for loaded in &discovery.tools {
        app.rendered_tools.insert(loaded.tool.name().to_owned());
    }
    let theme = THEME.as_json();
    let args = json!({"city": "Oslo"});
    for (name, id) in [("weather", "c1"), ("broken", "c2"), ("endless", "c3")] {
        app.agent_event(start(name, id, args.clone()));
        let rendering = tool(name).render_call(&args, &theme).await;
        app.rendered(id, Hook::Call, rendering);
    }
    app.agent_event(end("weather", "c1", "4", json!({"c": 4})));
    let output = toolhost_core::ToolOutput::text("4").with_details(json!({"c": 4}));
    let rendering = tool("weather")
        .render_result(
            &output,
            toolhost_script::RenderOptions::default(),
            &theme,
            &args,
        )
        .await;
    app.rendered("c1", Hook::Result, rendering);
    for id in ["c2", "c3"] {
        app.agent_event(end(
            if id == "c2" { "broken" } else { "endless" },
            id,
            "done",
            no_details(),
        ));
    }
    assert_snapshot!(screen(&app, 100, 30));
}
