//! pi extensions in the engine: `pi.registerTool` with pi's argument order, handlers that
//! answer (`tool_call`, `tool_result`, `input`, `before_agent_start`), commands, and what they
//! ask of the session (`appendEntry`), read back through `ctx.sessionManager`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::{call, registry};

use toolhost_script::{
    EntryScope, ExtensionActionKind, ExtensionStore, Extensions, InputOutcome, ToolCallVerdict,
    discover_and_load_custom_tools,
};
use toolhost_test_support::write_file;

/// A session store in memory: the extensions' entries, numbered from 1.
#[derive(Default)]
struct MemoryStore(Mutex<Vec<serde_json::Value>>);

impl ExtensionStore for MemoryStore {
    fn entries(&self, _scope: EntryScope) -> Result<Vec<serde_json::Value>, String> {
        Ok(self.0.lock().unwrap().clone())
    }

    fn record_custom(&self, custom_type: &str, data: &serde_json::Value) -> Result<(), String> {
        let mut entries = self.0.lock().unwrap();
        let id = (entries.len() + 1).to_string();
        entries.push(json!({"type": "custom", "id": id, "customType": custom_type, "data": data}));
        Ok(())
    }

    fn set_title(&self, _title: &str) -> Result<(), String> {
        Ok(())
    }
}

const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";
export default function (pi) {
  pi.registerTool({
    name: "shout",
    label: "Shout",
    description: "Shouts the text",
    promptSnippet: "shout: says text loudly",
    promptGuidelines: ["Shout only when asked."],
    parameters: Type.Object({ text: Type.String() }),
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      return { content: [{ type: "text", text: `${params.text.toUpperCase()} (${typeof signal.aborted}, ${typeof onUpdate}, ${ctx.cwd === process.cwd()})` }] };
    },
  });
  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash" && event.input.command.includes("rm -rf")) return { block: true, reason: "no rm -rf here" };
    if (event.toolName === "shout") event.input.text = event.input.text + "!";
  });
  pi.on("tool_result", (event) => event.toolName === "shout" ? { content: [{ type: "text", text: `rewritten: ${event.content[0].text}` }], details: { seen: true } } : undefined);
  pi.on("input", (event) => event.text.startsWith("?") ? { action: "transform", text: `question: ${event.text.slice(1)}` } : event.text === "skip" ? { action: "handled" } : undefined);
  pi.on("before_agent_start", (event) => ({ systemPrompt: `${event.systemPrompt}\nBe brief.` }));
  pi.registerCommand("count", {
    description: "Counts a visit",
    handler: async (args, ctx) => {
      const earlier = ctx.sessionManager.getEntries().filter((e) => e.type === "custom" && e.customType === "visits").length;
      pi.appendEntry("visits", { n: earlier + 1, args });
      pi.sendUserMessage(`visit ${earlier + 1}`);
    },
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_registers_tools_handlers_and_commands() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path().join(".pi/extensions/demo.ts"), EXTENSION);
    let host = support::host(dir.path());
    let discovery = discover_and_load_custom_tools(&host, &[], dir.path(), &[]).await;
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    assert_eq!(discovery.extensions.len(), 1);
    let tool = discovery.tools[0].tool.clone();
    assert_eq!(tool.prompt_snippet(), Some("shout: says text loudly"));
    assert_eq!(tool.prompt_guidelines(), ["Shout only when asked."]);
    let registry = registry(&discovery);
    let result = call(&registry, "shout", json!({"text": "hi"})).await;
    assert_eq!(result.text(), "HI (boolean, function, true)");

    let extensions = Extensions::new(discovery.extensions.clone());
    assert_eq!(
        extensions
            .tool_call("Bash", "c1", &json!({"command": "rm -rf /"}))
            .await,
        ToolCallVerdict::Block("no rm -rf here".into())
    );
    assert_eq!(
        extensions
            .tool_call("shout", "c2", &json!({"text": "hi"}))
            .await,
        ToolCallVerdict::Rewrite(json!({"text": "hi!"}))
    );
    assert_eq!(
        extensions
            .tool_call("Read", "c3", &json!({"path": "a"}))
            .await,
        ToolCallVerdict::Proceed
    );
    let change = extensions
        .tool_result(
            "shout",
            "c2",
            &json!({"text": "hi!"}),
            &[toolhost_core::ContentBlock::text("HI!")],
            None,
            false,
        )
        .await;
    assert_eq!(
        change.content,
        Some(vec![toolhost_core::ContentBlock::text("rewritten: HI!")])
    );
    assert_eq!(change.details, Some(json!({"seen": true})));
    assert_eq!(change.is_error, None);
    assert_eq!(
        extensions.input("?why", "interactive").await,
        InputOutcome::Transform("question: why".into())
    );
    assert_eq!(
        extensions.input("skip", "interactive").await,
        InputOutcome::Handled
    );
    assert_eq!(
        extensions.input("plain", "interactive").await,
        InputOutcome::Continue
    );
    let (system, _) = extensions.before_agent_start("hi", "You help.").await;
    assert_eq!(system, "You help.\nBe brief.");

    // An entry the session's store holds is what the command counts from, and the command's
    // entry goes to the store at once.
    let store = Arc::new(MemoryStore::default());
    store.record_custom("visits", &json!({"n": 1})).unwrap();
    host.set_session_store(Some(Arc::clone(&store) as Arc<dyn ExtensionStore>));
    assert_eq!(extensions.commands()[0].name, "count");
    extensions
        .run_command("count", "again")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.entries(EntryScope::Branch).unwrap()[1],
        json!({"type": "custom", "id": "2", "customType": "visits", "data": {"n": 2, "args": "again"}})
    );
    let actions: Vec<ExtensionActionKind> = host
        .take_extension_actions()
        .into_iter()
        .map(|action| action.kind)
        .collect();
    assert_eq!(
        actions,
        [ExtensionActionKind::SendUserMessage {
            content: json!("visit 2"),
            options: serde_json::Value::Null,
        }]
    );
    assert!(extensions.run_command("nothing", "").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_only_calls_load_and_answer_an_error_naming_the_call() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path().join(".pi/extensions/ui.ts"),
        r#"
        export default function (pi) {
          pi.registerShortcut("ctrl+x", { handler: () => {} });
          pi.registerProvider("mine", {});
          pi.registerTool({ name: "overlay", label: "o", description: "", parameters: { type: "object", properties: {} },
            async execute(_id, _params, _signal, _onUpdate, ctx) {
              try { await ctx.ui.custom(() => null); return { content: [{ type: "text", text: "drawn" }] }; }
              catch (error) { return { content: [{ type: "text", text: error.message }], isError: true }; }
            } });
        }
        "#,
    );
    let host = support::host(dir.path());
    let discovery = discover_and_load_custom_tools(&host, &[], dir.path(), &[]).await;
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    let result = call(&registry(&discovery), "overlay", json!({})).await;
    assert!(result.is_error);
    assert!(
        result
            .text()
            .starts_with("ctx.ui.custom is not available in toolhost"),
        "{}",
        result.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_that_registers_nothing_says_so() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path().join(".pi/extensions/empty.ts"),
        "export default function (pi) {}",
    );
    let host = support::host(dir.path());
    let discovery = discover_and_load_custom_tools(&host, &[], dir.path(), &[]).await;
    assert_eq!(discovery.errors.len(), 1);
    assert!(
        discovery.errors[0].message.contains("registered nothing"),
        "{}",
        discovery.errors[0]
    );
}
