//! Runtime semantics: streaming updates, abort signals, time and memory limits, session
//! events, render hooks, and the globals a tool can use.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{call, registry_with};
use toolhost_core::{CallOptions, SessionEvent, SessionInfo, ToolUpdate};
use toolhost_script::{RenderBlock, RenderLine, RenderOptions, RenderSpan, RenderTree, Rendering};
use toolhost_test_support::write_file;

const STREAMING: &str = r#"
export default () => ({
  name: "progress",
  description: "Counts to three, slowly",
  async execute(id, params, onUpdate, ctx, signal) {
    for (let step = 1; step <= 3; step++) {
      signal.throwIfAborted();
      onUpdate?.({ content: [{ type: "text", text: `step ${step}` }], details: { step }, progress: step, total: 3 });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { content: [{ type: "text", text: "done" }] };
  },
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_update_streams_partial_results_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(dir.path(), "progress.js", STREAMING).await;
    let seen: Arc<Mutex<Vec<ToolUpdate>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let options = CallOptions {
        on_update: Some(Arc::new(move |update| sink.lock().unwrap().push(update))),
        ..CallOptions::default()
    };
    let result = registry
        .execute_with("c", "progress", json!({}), options)
        .await;
    assert_eq!(result.text(), "done");
    let updates = seen.lock().unwrap().clone();
    assert_eq!(
        updates,
        (1..=3)
            .map(|step| ToolUpdate {
                details: Some(json!({ "step": step })),
                progress: Some(f64::from(step)),
                total: Some(3.0),
                ..ToolUpdate::text(format!("step {step}"))
            })
            .collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_aborts_the_signal_and_the_tool_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("aborted.txt");
    let path = write_file(
        dir.path().join("wait.js"),
        r#"
        export default (api) => ({
          name: "wait",
          description: "",
          execute(id, params, onUpdate, ctx, signal) {
            return new Promise((resolve, reject) => {
              signal.addEventListener("abort", () => {
                api.logger.info("aborted", signal.reason.name);
                globalThis.reason = `${signal.aborted} ${signal.reason.name} ${signal.reason.message}`;
                reject(signal.reason);
              });
            });
          },
        });
        export const check = () => globalThis.reason;
        "#,
    );
    let _ = marker;
    let host = support::host(dir.path());
    let discovery = support::load(&host, &[path]).await;
    let tool = discovery.tools[0].tool.clone();
    let options = CallOptions::default();
    let cancel = options.cancel.clone();
    let ctx = toolhost_core::ToolContext::new("c", options);
    let started = Instant::now();
    let call = tokio::spawn({
        let tool = tool.clone();
        async move { toolhost_core::Tool::execute(tool.as_ref(), json!({}), ctx).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    let error = call.await.unwrap().unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(
        error
            .message
            .contains("was cancelled: the call was cancelled"),
        "{}",
        error.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_abort_asks_the_agent_to_stop() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "stop.js",
        r#"export default () => ({ name: "stop", description: "", async execute(id, p, u, ctx) { ctx.abort(); return { content: [{ type: "text", text: "asked" }] }; } });"#,
    )
    .await;
    let options = CallOptions::default();
    let abort = options.abort.clone();
    let result = registry.execute_with("c", "stop", json!({}), options).await;
    assert_eq!(result.text(), "asked");
    assert!(abort.is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_is_interrupted_at_the_time_limit_and_the_tool_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "loop.js",
        r#"
        export default () => [
          { name: "spin", description: "", execute(id, p) { if (p.forever) { while (true) {} } return { content: [{ type: "text", text: "fine" }] }; } },
          { name: "spin_later", description: "", async execute() { await null; for (;;) {} } },
          { name: "never", description: "", execute: () => new Promise(() => {}) },
        ];
        "#,
    )
    .await;
    for tool in ["spin", "spin_later", "never"] {
        let started = Instant::now();
        let result = call(&registry, tool, json!({"forever": true})).await;
        let elapsed = started.elapsed();
        assert!(result.is_error, "{tool}");
        assert!(
            result.text().contains("time limit"),
            "{tool}: {}",
            result.text()
        );
        assert!(
            elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(4),
            "{tool}: {elapsed:?}"
        );
    }
    assert_eq!(
        call(&registry, "spin", json!({"forever": false}))
            .await
            .text(),
        "fine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_in_a_factory_fails_the_load_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path().join("hang.js"),
        "export default () => { while (true) {} };",
    );
    let host = support::host(dir.path());
    let discovery = toolhost_script::load_custom_tools(&host, &[path]).await;
    assert_eq!(discovery.errors.len(), 1);
    assert!(
        discovery.errors[0]
            .message
            .contains("loading took longer than 2 s"),
        "{}",
        discovery.errors[0].message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_memory_is_an_error_result_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path().join("hog.js"),
        r#"
        export default () => ({
          name: "hog",
          description: "",
          async execute(id, p) {
            if (p.hog) { const chunks = []; for (;;) chunks.push(new Array(1 << 16).fill(chunks.length)); }
            return { content: [{ type: "text", text: "still here" }] };
          },
        });
        "#,
    );
    let host = toolhost_script::ScriptHost::builder(dir.path())
        .home(None)
        .limits(toolhost_script::ScriptLimits {
            memory_limit: 16 * 1024 * 1024,
            ..support::quick_limits()
        })
        .build();
    let registry = support::registry(&support::load(&host, &[path]).await);
    let result = call(&registry, "hog", json!({"hog": true})).await;
    assert!(result.is_error);
    assert!(result.text().contains("out of memory"), "{}", result.text());
    assert_eq!(
        call(&registry, "hog", json!({"hog": false})).await.text(),
        "still here"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_session_hears_events_and_a_failing_listener_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "session.js",
        r#"
        const heard = [];
        export default () => [
          { name: "listener", description: "", onSession(event, ctx) { heard.push(`${event.type}/${event.reason}/${ctx.sessionId}`); },
            async execute() { return { content: [{ type: "text", text: heard.join(",") }] }; } },
          { name: "broken", description: "", async onSession(event) { if (event.type === "shutdown") throw new Error("cannot clean up"); },
            async execute() { return { content: [] }; } },
        ];
        "#,
    )
    .await;
    let session = SessionInfo {
        session_id: Some("s1".into()),
        model: None,
        ..SessionInfo::default()
    };
    let failures = registry
        .dispatch_session_event(&SessionEvent::Start, &session)
        .await;
    assert!(failures.is_empty(), "{failures:?}");
    let failures = registry
        .dispatch_session_event(&SessionEvent::Shutdown, &session)
        .await;
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].tool, "broken");
    assert!(
        failures[0].message.contains("cannot clean up"),
        "{}",
        failures[0].message
    );
    assert_eq!(
        call(&registry, "listener", json!({})).await.text(),
        "start/start/s1,shutdown/shutdown/s1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn render_hooks_draw_lines_and_fall_back_when_they_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path().join("render.js"),
        r#"
        export default () => [
          { name: "pretty", description: "", async execute() { return { content: [{ type: "text", text: "raw" }] }; },
            renderCall: (args, theme) => `call ${args.x} in ${theme.name}`,
            renderResult: (result, options, theme, args) => [`${result.content[0].text}`, `expanded=${options.expanded} partial=${options.isPartial} x=${args.x}`] },
          { name: "ugly", description: "", async execute() { return { content: [] }; },
            renderCall() { throw new Error("boom"); }, renderResult: () => 42 },
          { name: "plain", description: "", async execute() { return { content: [] }; } },
        ];
        "#,
    );
    let host = support::host(dir.path());
    let discovery = support::load(&host, &[path]).await;
    let tool = |name: &str| {
        discovery
            .tools
            .iter()
            .find(|loaded| loaded.tool.name() == name)
            .unwrap()
            .tool
            .clone()
    };
    let args = json!({"x": 1});
    let theme = json!({"name": "dark"});
    let output = toolhost_core::ToolOutput::text("result text");
    let options = RenderOptions {
        expanded: true,
        ..RenderOptions::default()
    };
    assert!(tool("pretty").has_render_hooks());
    assert_eq!(
        tool("pretty").render_call(&args, &theme).await,
        Rendering::Custom(RenderTree::plain("call 1 in dark"))
    );
    assert_eq!(
        tool("pretty")
            .render_result(&output, options, &theme, &args)
            .await,
        Rendering::Custom(RenderTree::plain(
            "result text\nexpanded=true partial=false x=1"
        ))
    );
    let Rendering::Default { text, error } = tool("ugly").render_call(&args, &theme).await else {
        panic!("a throwing renderCall falls back");
    };
    assert_eq!(text, "ugly {\"x\":1}");
    assert!(error.unwrap().contains("boom"));
    let Rendering::Default { text, error } = tool("ugly")
        .render_result(&output, options, &theme, &args)
        .await
    else {
        panic!("a renderResult returning a number falls back");
    };
    assert_eq!(text, "result text");
    assert!(error.unwrap().contains("must return text"));
    assert!(!tool("plain").has_render_hooks());
    assert_eq!(
        tool("plain")
            .render_result(&output, options, &theme, &args)
            .await,
        Rendering::Default {
            text: "result text".into(),
            error: None
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn render_hooks_return_styled_spans_and_sections_through_the_theme() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path().join("tree.js"),
        r#"
        export default () => ({ name: "tree", description: "", async execute() { return { content: [] }; },
          renderCall: (args, theme) => [[theme.fg("accent", "tree "), theme.bold(args.x), "\u001b[2J"]],
          renderResult: (result, options, theme) => [
            { spans: [{ text: "ok", fg: "success", bogus: 1 }] },
            { section: "details", collapsed: true, lines: ["a", [theme.dim("b")]] },
          ] });
        "#,
    );
    let host = support::host(dir.path());
    let discovery = support::load(&host, &[path]).await;
    let tool = discovery.tools[0].tool.clone();
    let span = |text: &str| RenderSpan {
        text: text.into(),
        ..RenderSpan::default()
    };
    assert_eq!(
        tool.render_call(&json!({"x": "X"}), &json!({})).await,
        Rendering::Custom(RenderTree {
            blocks: vec![RenderBlock::Line(RenderLine {
                spans: vec![
                    RenderSpan {
                        fg: Some("accent".into()),
                        ..span("tree ")
                    },
                    RenderSpan {
                        bold: true,
                        ..span("X")
                    },
                    span("\u{1b}[2J"),
                ]
            })]
        })
    );
    let output = toolhost_core::ToolOutput::text("");
    assert_eq!(
        tool.render_result(&output, RenderOptions::default(), &json!({}), &json!({}))
            .await,
        Rendering::Custom(RenderTree {
            blocks: vec![
                RenderBlock::Line(RenderLine {
                    spans: vec![RenderSpan {
                        fg: Some("success".into()),
                        ..span("ok")
                    }]
                }),
                RenderBlock::Section {
                    title: RenderLine::plain("details"),
                    collapsed: true,
                    lines: vec![
                        RenderLine::plain("a"),
                        RenderLine {
                            spans: vec![RenderSpan {
                                dim: true,
                                ..span("b")
                            }]
                        }
                    ]
                }
            ]
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn globals_console_timers_and_text_codecs_work() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "globals.js",
        r#"
        export default () => ({
          name: "globals", description: "",
          async execute() {
            console.log("hello", { a: 1 });
            const order = [];
            const cleared = setTimeout(() => order.push("cleared"), 1);
            clearTimeout(cleared);
            await new Promise((resolve) => setTimeout(() => { order.push("timeout"); resolve(); }, 10));
            let ticks = 0;
            await new Promise((resolve) => { const id = setInterval(() => { if (++ticks === 3) { clearInterval(id); resolve(); } }, 1); });
            queueMicrotask(() => order.push("microtask"));
            await null;
            const bytes = new TextEncoder().encode("héllo €𝄞");
            const text = new TextDecoder().decode(bytes);
            return { content: [{ type: "text", text: `${order.join(",")} ticks=${ticks} ${bytes.length} ${text} ${typeof AbortController}` }] };
          },
        });
        "#,
    )
    .await;
    assert_eq!(
        call(&registry, "globals", json!({})).await.text(),
        "timeout,microtask ticks=3 14 héllo €𝄞 function"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_to_one_module_interleave_and_do_not_block_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "sleepy.js",
        r#"export default () => ({ name: "sleepy", description: "", async execute(id, p) { await new Promise((r) => setTimeout(r, 200)); return { content: [{ type: "text", text: String(p.n) }] }; } });"#,
    )
    .await;
    let started = Instant::now();
    let calls = (0..5).map(|n| {
        let registry = &registry;
        async move { call(registry, "sleepy", json!({"n": n})).await.text() }
    });
    let texts = futures::future::join_all(calls).await;
    assert_eq!(texts, ["0", "1", "2", "3", "4"]);
    assert!(
        started.elapsed() < Duration::from_millis(800),
        "{:?}",
        started.elapsed()
    );
}
