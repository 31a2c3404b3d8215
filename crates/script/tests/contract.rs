//! The module contract (R31, R2, R3): factories, tools, results and errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{call, registry_with};

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
