//! The module contract (R31, R2, R3): factories, tools, results and errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{call, registry_with};
use toolhost_core::ContentBlock;
use toolhost_test_support::write_file;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_default_export_factory_defines_a_tool() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "hello.js",
        r#"
        export default (api) => ({
          name: "hello",
          label: "Hello",
          description: "Greets someone",
          parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
          async execute(toolCallId, params) {
            return { content: [{ type: "text", text: `Hello, ${params.name}! (${toolCallId})` }], details: { greeted: params.name } };
          },
        });
        "#,
    )
    .await;
    let spec = registry.spec("hello").unwrap();
    assert_eq!(spec.label, "Hello");
    assert_eq!(spec.description, "Greets someone");
    let result = call(&registry, "hello", json!({"name": "Ada"})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "Hello, Ada! (call-1)");
    assert_eq!(result.details, Some(json!({"greeted": "Ada"})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_tool_with_typebox_parameters_and_enum() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "count.ts",
        r#"
        import { Type, type Static } from "@sinclair/typebox";
        enum Mode { Short = 1, Long = Short * 2 }
        interface Options { shout: boolean }
        const Params = Type.Object({
          word: Type.String({ description: "The word" }),
          times: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
        });
        type Params = Static<typeof Params>;
        const factory = (api: any) => ({
          name: "repeat",
          description: "Repeats a word",
          parameters: Params,
          async execute(_id: string, params: Params) {
            const options: Options = { shout: false };
            const text = Array(params.times ?? 1).fill(params.word).join(" ");
            return { content: [{ type: "text", text: `${text} ${Mode.Long} ${options.shout}` }] };
          },
        });
        export default factory;
        "#,
    )
    .await;
    let spec = registry.spec("repeat").unwrap();
    assert_eq!(spec.label, "repeat");
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "properties": {
                "word": {"type": "string", "description": "The word"},
                "times": {"type": "integer", "minimum": 1, "default": 1},
            },
            "required": ["word"],
        })
    );
    // "3" is coerced by the pipeline, as for any built-in (R36).
    let result = call(&registry, "repeat", json!({"word": "hi", "times": "3"})).await;
    assert_eq!(result.text(), "hi hi hi 2 false");
    let missing = call(&registry, "repeat", json!({})).await;
    assert!(missing.is_error);
    assert!(missing.text().contains("word"), "{}", missing.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_factory_export_returning_an_array_asynchronously() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "pair.mjs",
        r#"
        export async function factory(api) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          const tool = (name) => ({ name, description: name, execute: async () => ({ content: [{ type: "text", text: name }] }) });
          return [tool("first"), tool("second")];
        }
        "#,
    )
    .await;
    assert_eq!(registry.names(), ["first", "second"]);
    assert_eq!(call(&registry, "second", json!({})).await.text(), "second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throw_and_reject_become_error_results_with_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        "fail.js",
        r#"
        export default () => [
          { name: "throws", description: "", execute() { throw new Error("disk is full"); } },
          { name: "rejects", description: "", execute: () => Promise.reject(new TypeError("bad input")) },
          { name: "throws_string", description: "", async execute() { throw "plain text"; } },
          { name: "bad_result", description: "", async execute() { return 42; } },
          { name: "own_error", description: "", async execute() { return { content: [{ type: "text", text: "partial" }], isError: true }; } },
          { name: "image", description: "", async execute() { return { content: [{ type: "image", data: "iVBORw0=", mimeType: "image/png" }, "and text"] }; } },
        ];
        "#,
    )
    .await;
    let throws = call(&registry, "throws", json!({})).await;
    assert!(throws.is_error);
    assert!(
        throws.text().starts_with("disk is full"),
        "{}",
        throws.text()
    );
    let rejects = call(&registry, "rejects", json!({})).await;
    assert!(rejects.is_error);
    assert!(
        rejects.text().starts_with("bad input"),
        "{}",
        rejects.text()
    );
    assert!(
        call(&registry, "throws_string", json!({}))
            .await
            .text()
            .starts_with("plain text")
    );
    let bad = call(&registry, "bad_result", json!({})).await;
    assert!(bad.is_error);
    assert!(
        bad.text().contains("execute must return { content"),
        "{}",
        bad.text()
    );
    let own = call(&registry, "own_error", json!({})).await;
    assert!(own.is_error);
    assert!(own.text().starts_with("partial"));
    let image = call(&registry, "image", json!({})).await;
    assert_eq!(
        image.content,
        vec![
            ContentBlock::image("iVBORw0=", "image/png"),
            ContentBlock::text("and text")
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modules_without_a_factory_or_with_invalid_tools_fail_to_load_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("none.js", "export const x = 1;", "exports no factory"),
        (
            "noexec.js",
            "export default () => ({ name: 'x' });",
            "has no execute function",
        ),
        (
            "noname.js",
            "export default () => ({ execute() {} });",
            "has no name",
        ),
        ("syntax.ts", "export default () => {{;", "TypeScript error"),
        ("syntax.js", "export default () => {{;", "SyntaxError"),
        (
            "factory_throws.js",
            "export default () => { throw new Error('no config'); };",
            "no config",
        ),
        ("empty.js", "export default () => [];", "no tools"),
        (
            "bare.js",
            "import x from 'left-pad'; export default () => x;",
            "needs the package 'left-pad', which is not installed",
        ),
    ];
    let host = support::host(dir.path());
    for (name, source, expected) in cases {
        let path = write_file(dir.path().join(name), source);
        let discovery =
            toolhost_script::load_custom_tools(&host, std::slice::from_ref(&path)).await;
        assert!(discovery.tools.is_empty(), "{name}");
        assert_eq!(discovery.errors.len(), 1, "{name}");
        let error = &discovery.errors[0];
        assert_eq!(error.path, path);
        assert!(
            error.message.contains(expected),
            "{name}: {}",
            error.message
        );
        assert!(error.to_string().contains(name), "{error}");
    }
}

/// The examples in `examples/tools` load and run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_load_and_run() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools");
    let host = toolhost_script::ScriptHost::builder(env!("CARGO_MANIFEST_DIR"))
        .home(None)
        .build();
    let discovery = toolhost_script::load_custom_tools(&host, &[examples]).await;
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    let registry = support::registry(&discovery);
    assert_eq!(registry.names(), ["countdown", "git_files", "word_count"]);
    let counted = call(&registry, "word_count", json!({"text": "one two\nthree"})).await;
    assert_eq!(counted.text(), "lines: 2\nwords: 3\nchars: 13");
    let countdown = call(&registry, "countdown", json!({"seconds": 1})).await;
    assert_eq!(countdown.text(), "Lift-off!");
    let files = call(&registry, "git_files", json!({"pattern": "src/lib.rs"})).await;
    assert!(!files.is_error, "{}", files.text());
    assert!(files.text().contains("src/lib.rs"), "{}", files.text());
}
