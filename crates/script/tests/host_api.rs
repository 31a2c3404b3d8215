//! The host API (R32): typebox, imports, node:path, node:fs/promises, exec through the gate,
//! ui, pushPendingAction, pi and cwd.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{call, registry};
use toolhost_script::{
    DirEntry, EntryKind, ExecGate, ExecRequest, FsError, ScriptFileSystem, ScriptHost, UiContext,
    UiRequest,
};
use toolhost_test_support::write_file;

/// The schemas TypeBox 0.34.52 itself produced for these expressions (tests/fixtures, made
/// with Node and the real package).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typebox_builder_produces_the_same_schemas_as_typebox() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("fixtures/typebox_cases.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let expressions: Vec<&str> = cases
        .iter()
        .map(|case| case["expr"].as_str().unwrap())
        .collect();
    let source = format!(
        "import {{ Type }} from '@sinclair/typebox';\n\
         const schemas = [{}];\n\
         export default (api) => ({{ name: 'schemas', description: '', async execute() {{\n\
           const viaApi = api.typebox.Type.Object({{ x: api.typebox.Type.Optional(api.typebox.String()) }});\n\
           return {{ content: [], details: {{ schemas, viaApi }} }}; }} }});",
        expressions.join(",\n")
    );
    let registry = support::registry_with(dir.path(), "schemas.js", &source).await;
    let details = call(&registry, "schemas", json!({})).await.details.unwrap();
    for (case, ours) in cases.iter().zip(details["schemas"].as_array().unwrap()) {
        assert_eq!(ours, &case["schema"], "{}", case["expr"]);
    }
    assert_eq!(
        details["viaApi"],
        json!({"type": "object", "properties": {"x": {"type": "string"}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_enum_is_a_plain_string_enum() {
    let dir = tempfile::tempdir().unwrap();
    let registry = support::registry_with(
        dir.path(),
        "pick.ts",
        r#"
        import { StringEnum, Type } from "@sinclair/typebox";
        export default (api: any) => ({
          name: "pick", description: "",
          parameters: Type.Object({ color: StringEnum(["red", "green"] as const, { description: "c" }), size: api.typebox.Type.StringEnum(["s", "m"]) }),
          async execute(_: string, p: { color: string }) { return { content: [{ type: "text", text: p.color }] }; },
        });
        "#,
    )
    .await;
    assert_eq!(
        registry.spec("pick").unwrap().parameters["properties"],
        json!({
            "color": {"type": "string", "enum": ["red", "green"], "description": "c"},
            "size": {"type": "string", "enum": ["s", "m"]},
        })
    );
    let refused = call(&registry, "pick", json!({"color": "blue", "size": "s"})).await;
    assert!(refused.is_error, "{}", refused.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_imports_work_inside_a_tool_folder_and_cannot_leave_it() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path().join("secret.js"),
        "export const secret = 'outside';",
    );
    write_file(
        dir.path().join("tool/lib/format.ts"),
        "export const shout = (s: string): string => s.toUpperCase();",
    );
    write_file(
        dir.path().join("tool/lib/index.js"),
        "export { shout } from './format';",
    );
    write_file(
        dir.path().join("tool/index.ts"),
        r#"
        import { shout } from "./lib";
        import path from "node:path";
        export default () => ({ name: "shout", description: "", async execute(_: string, p: any) {
          return { content: [{ type: "text", text: shout(path.basename("/a/b/hello.txt", ".txt")) }] };
        } });
        "#,
    );
    write_file(
        dir.path().join("escape/index.js"),
        "import { secret } from '../secret.js'; export default () => ({ name: 'escape', description: '', execute() {} });",
    );
    let host = support::host(dir.path());
    let discovery = toolhost_script::load_custom_tools(
        &host,
        &[dir.path().join("tool"), dir.path().join("escape")],
    )
    .await;
    assert_eq!(discovery.tools.len(), 1);
    assert_eq!(
        call(&registry(&discovery), "shout", json!({})).await.text(),
        "HELLO"
    );
    assert_eq!(discovery.errors.len(), 1);
    assert!(
        discovery.errors[0]
            .message
            .contains("imports must stay inside the tool folder"),
        "{}",
        discovery.errors[0].message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_path_behaves_like_posix_path() {
    let dir = tempfile::tempdir().unwrap();
    let registry = support::registry_with(
        dir.path(),
        "paths.js",
        r#"
        import path, { join, resolve, relative } from "node:path";
        export default (api) => ({ name: "paths", description: "", async execute() {
          return { content: [], details: [
            join("a", "b/../c", "./d.ts"), path.normalize("/x//y/./z/.."), path.dirname("/a/b/c.txt"),
            path.basename("/a/b/c.txt"), path.extname("archive.tar.gz"), path.isAbsolute("a"),
            resolve("/root", "x", "../y"), relative("/a/b/c", "/a/d"), path.parse("/home/u/file.md").name,
            resolve("sub") === api.cwd + "/sub", path.sep,
          ] };
        } });
        "#,
    )
    .await;
    assert_eq!(
        call(&registry, "paths", json!({})).await.details.unwrap(),
        json!([
            "a/c/d.ts", "/x/y", "/a/b", "c.txt", ".gz", false, "/root/y", "../../d", "file", true,
            "/"
        ])
    );
}

/// A file system confined to one folder, standing in for the Workspace.
struct FolderFs(std::path::PathBuf);

impl FolderFs {
    fn resolve(&self, path: &str) -> Result<std::path::PathBuf, FsError> {
        let full = self.0.join(path);
        if path.contains("..") || (Path::new(path).is_absolute() && !full.starts_with(&self.0)) {
            return Err(
                FsError::new(format!("{path} is outside the workspace")).with_code("EACCES")
            );
        }
        Ok(full)
    }
}

impl ScriptFileSystem for FolderFs {
    fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        std::fs::read(self.resolve(path)?)
            .map_err(|e| FsError::new(e.to_string()).with_code("ENOENT"))
    }
    fn write(&self, path: &str, content: &[u8]) -> Result<(), FsError> {
        std::fs::write(self.resolve(path)?, content).map_err(|e| FsError::new(e.to_string()))
    }
    fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let mut entries: Vec<DirEntry> = std::fs::read_dir(self.resolve(path)?)
            .map_err(|e| FsError::new(e.to_string()))?
            .map(|e| {
                let e = e.unwrap();
                DirEntry {
                    name: e.file_name().to_string_lossy().into_owned(),
                    kind: if e.path().is_dir() {
                        EntryKind::Directory
                    } else {
                        EntryKind::File
                    },
                }
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_fs_promises_goes_through_the_host_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(workspace.join("sub")).unwrap();
    std::fs::write(workspace.join("in.txt"), "héllo").unwrap();
    let tool = write_file(
        dir.path().join("tools/files.js"),
        r#"
        import { readFile, writeFile, readdir } from "node:fs/promises";
        import fs from "fs/promises";
        export default () => ({ name: "files", description: "", async execute(_, p) {
          if (p.outside) {
            try { await readFile("../secret.txt", "utf8"); return { content: [{ type: "text", text: "read it!" }] }; }
            catch (error) { return { content: [{ type: "text", text: `${error.code}: ${error.message}` }], isError: true }; }
          }
          const text = await readFile("in.txt", "utf8");
          const bytes = await readFile("in.txt");
          await writeFile("out.txt", text.toUpperCase());
          await fs.appendFile("out.txt", "!");
          const names = await readdir(".");
          const typed = (await readdir(".", { withFileTypes: true })).map((e) => `${e.name}:${e.isDirectory()}`);
          return { content: [{ type: "text", text: `${text} ${bytes.length} ${names.join(",")} ${typed.join(",")}` }] };
        } });
        "#,
    );
    let host = ScriptHost::builder(&workspace)
        .home(None)
        .limits(support::quick_limits())
        .file_system(Arc::new(FolderFs(workspace.clone())))
        .build();
    let registry = registry(&support::load(&host, std::slice::from_ref(&tool)).await);
    let inside = call(&registry, "files", json!({})).await;
    assert_eq!(
        inside.text(),
        "héllo 6 in.txt,out.txt,sub in.txt:false,out.txt:false,sub:true"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("out.txt")).unwrap(),
        "HÉLLO!"
    );
    let outside = call(&registry, "files", json!({"outside": true})).await;
    assert!(outside.is_error);
    assert!(
        outside
            .text()
            .starts_with("EACCES: ../secret.txt is outside the workspace"),
        "{}",
        outside.text()
    );

    // Without a file system, every operation is refused with a reason.
    let bare = registry_for(&support::host(&workspace), &tool).await;
    let refused = call(&bare, "files", json!({})).await;
    assert!(
        refused.text().contains("node:fs is not available"),
        "{}",
        refused.text()
    );
}

async fn registry_for(host: &Arc<ScriptHost>, tool: &Path) -> toolhost_core::ToolRegistry {
    registry(&support::load(host, &[tool.to_path_buf()]).await)
}

/// Records requests and refuses any command line containing "forbidden".
#[derive(Default)]
struct RecordingGate(Mutex<Vec<ExecRequest>>);

#[async_trait::async_trait]
impl ExecGate for RecordingGate {
    async fn authorize(&self, request: &ExecRequest) -> Result<(), String> {
        self.0.lock().unwrap().push(request.clone());
        if request.command_line.contains("forbidden") {
            return Err(format!("the user refused `{}`", request.command_line));
        }
        Ok(())
    }
}

const EXEC_TOOL: &str = r#"
export default (api) => ({ name: "run", description: "", async execute(_, p, onUpdate, ctx, signal) {
  const result = await api.exec(p.command, p.args, { signal, timeout: p.timeout, cwd: p.cwd });
  return { content: [{ type: "text", text: JSON.stringify(result) }] };
} });
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_runs_through_the_deny_list_the_gate_and_the_process_helper() {
    let dir = tempfile::tempdir().unwrap();
    let tool = write_file(dir.path().join("run.js"), EXEC_TOOL);
    let gate = Arc::new(RecordingGate::default());
    let host = ScriptHost::builder(dir.path())
        .home(None)
        .limits(support::quick_limits())
        .exec_gate(gate.clone())
        .build();
    let registry = registry_for(&host, &tool).await;

    let echoed = call(
        &registry,
        "run",
        json!({"command": "sh", "args": ["-c", "echo out; echo err >&2; exit 3"]}),
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&echoed.text()).unwrap(),
        json!({"stdout": "out\n", "stderr": "err\n", "code": 3, "killed": false})
    );
    let requests = gate.0.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].command_line,
        "sh -c 'echo out; echo err >&2; exit 3'"
    );
    assert_eq!(requests[0].working_dir, dir.path());
    assert_eq!(requests[0].module, tool.canonicalize().unwrap());

    let denied = call(
        &registry,
        "run",
        json!({"command": "rm", "args": ["-rf", "/"]}),
    )
    .await;
    assert!(denied.is_error);
    assert!(denied.text().starts_with("Refused:"), "{}", denied.text());
    assert_eq!(
        gate.0.lock().unwrap().len(),
        1,
        "the deny list refuses before the gate is asked"
    );

    let refused = call(
        &registry,
        "run",
        json!({"command": "echo", "args": ["forbidden"]}),
    )
    .await;
    assert!(refused.is_error);
    assert!(
        refused
            .text()
            .starts_with("the user refused `echo forbidden`"),
        "{}",
        refused.text()
    );

    let timed_out = call(
        &registry,
        "run",
        json!({"command": "sleep", "args": ["5"], "timeout": 100}),
    )
    .await;
    let outcome: Value = serde_json::from_str(&timed_out.text()).unwrap();
    assert_eq!(outcome["killed"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_kills_the_program_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let tool = write_file(dir.path().join("run.js"), EXEC_TOOL);
    let registry = registry_for(&support::host(dir.path()), &tool).await;
    let options = toolhost_core::CallOptions::default();
    let cancel = options.cancel.clone();
    let tool = registry.get("run").unwrap();
    let ctx = toolhost_core::ToolContext::new("c", options);
    let started = Instant::now();
    let running = tokio::spawn(async move {
        tool.execute(json!({"command": "sleep", "args": ["30"]}), ctx)
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    let error = running.await.unwrap().unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The tool resolved with killed: true after its signal aborted the program.
    assert!(
        error.message.contains("\"killed\":true"),
        "{}",
        error.message
    );
}

struct ScriptedUi(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl UiContext for ScriptedUi {
    fn notify(&self, message: &str, level: &str) {
        self.0.lock().unwrap().push(format!("{level}: {message}"));
    }
    async fn request(&self, request: UiRequest) -> Value {
        match request {
            UiRequest::Confirm { .. } => json!(true),
            UiRequest::Select { options, .. } => json!(options.last()),
            UiRequest::Input { title, .. } => json!(format!("typed for {title}")),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ui_is_a_no_op_until_the_host_sets_one_and_other_api_members_work() {
    let dir = tempfile::tempdir().unwrap();
    let tool = write_file(
        dir.path().join("ui.js"),
        r#"
        export default (api) => ({ name: "ask", description: "", async execute(_, p, u, ctx) {
          api.ui.notify("hello", "info");
          const answers = [api.hasUI, ctx.hasUI, await api.ui.confirm("Sure?", "really"), await api.ui.select("Pick", ["a", "b"]) ?? null, await api.ui.input("Name") ?? null];
          api.logger.info("answers", answers);
          api.pushPendingAction({ label: "Apply fix", description: "rewrite x", sourceToolName: "ask", details: { n: 1 }, apply: () => "done" });
          return { content: [], details: { answers, cwd: api.cwd, version: api.pi.version, names: api.pi.toolNames } };
        } });
        "#,
    );
    let host = support::host(dir.path());
    host.set_tool_names(vec!["Read".into(), "Bash".into()]);
    let discovery = toolhost_script::load_custom_tools(&host, &[tool]).await;
    let registry = registry(&discovery);
    let headless = call(&registry, "ask", json!({})).await.details.unwrap();
    assert_eq!(
        headless["answers"],
        json!([false, false, false, null, null])
    );
    assert_eq!(headless["cwd"], json!(dir.path().to_string_lossy()));
    assert_eq!(headless["version"], json!(env!("CARGO_PKG_VERSION")));
    let actions = host.take_pending_actions();
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].label.as_deref(), Some("Apply fix"));
    assert_eq!(actions[0].source_tool_name.as_deref(), Some("ask"));
    assert_eq!(actions[0].details, Some(json!({"n": 1})));
    assert!(host.take_pending_actions().is_empty());
    let ask = &discovery.tools[0].tool;
    assert!(ask.runs_module(&actions[0].module));
    assert_eq!(
        ask.resolve_pending_action(actions[0].id, true).await,
        Ok(Some("done".to_owned()))
    );
    assert!(
        ask.resolve_pending_action(actions[0].id, true)
            .await
            .unwrap_err()
            .contains("already resolved")
    );

    let ui = Arc::new(ScriptedUi(Mutex::default()));
    host.set_ui_context(ui.clone());
    let with_ui = call(&registry, "ask", json!({})).await.details.unwrap();
    assert_eq!(
        with_ui["answers"],
        json!([true, true, true, "b", "typed for Name"])
    );
    assert_eq!(*ui.0.lock().unwrap(), ["info: hello"]);
}
