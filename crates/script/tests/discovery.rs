//! Discovery and loading (R33–R35) and reloading (R41), on real folder trees.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::call;
use toolhost_core::ToolRegistry;
use toolhost_script::{CustomTools, ScriptHost, discover_and_load_custom_tools};
use toolhost_test_support::write_file;

fn tool_source(name: &str, text: &str) -> String {
    format!(
        "export default () => ({{ name: '{name}', description: '{text}', async execute() {{ return {{ content: [{{ type: 'text', text: '{text}' }}] }}; }} }});"
    )
}

fn host(home: &Path, cwd: &Path) -> Arc<ScriptHost> {
    ScriptHost::builder(cwd)
        .home(Some(home.to_path_buf()))
        .limits(support::quick_limits())
        .build()
}

fn names_and_paths(discovery: &toolhost_script::Discovery, root: &Path) -> Vec<(String, String)> {
    discovery
        .tools
        .iter()
        .map(|loaded| {
            (
                loaded.tool.name().to_owned(),
                loaded
                    .path
                    .strip_prefix(root)
                    .unwrap()
                    .display()
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sources_merge_in_spec_order_with_dedupe_clashes_and_metadata_skipped() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let home = root.join("home");
    let cwd = root.join("project");
    write_file(
        home.join(".toolhost/tools/a_home.js"),
        tool_source("a_home", "native home"),
    );
    write_file(
        cwd.join(".toolhost/tools/b_project.ts"),
        tool_source("b_project", "native project"),
    );
    write_file(cwd.join(".toolhost/tools/README.md"), "# not a tool");
    write_file(cwd.join(".toolhost/tools/meta.json"), "{}");
    write_file(cwd.join(".toolhost/tools/types.d.ts"), "export type X = 1;");
    write_file(
        cwd.join(".toolhost/tools/.hidden.js"),
        "throw new Error('never run')",
    );
    write_file(
        home.join(".claude/tools/c_claude/index.ts"),
        tool_source("c_claude", "claude home folder"),
    );
    write_file(home.join(".claude/tools/c_claude/tool.json"), "{}");
    write_file(
        cwd.join(".claude/tools/clash_builtin.js"),
        tool_source("Read", "clashes with a built-in"),
    );
    write_file(
        home.join(".codex/tools/d_codex.mjs"),
        tool_source("d_codex", "codex"),
    );
    write_file(
        cwd.join(".codex/tools/dup_name.js"),
        tool_source("a_home", "second a_home"),
    );
    write_file(
        home.join(".claude/plugins/cache/market/plug/1.0.0/tools/e_market.js"),
        tool_source("e_market", "marketplace"),
    );
    write_file(
        home.join(".toolhost/plugins/node_modules/@acme/plugin/package.json"),
        r#"{"name":"@acme/plugin","toolhost":{"tools":["lib/f_plugin.js"]}}"#,
    );
    write_file(
        home.join(".toolhost/plugins/node_modules/@acme/plugin/lib/f_plugin.js"),
        tool_source("f_plugin", "plugin"),
    );
    write_file(
        home.join(".toolhost/plugins/node_modules/plain/tools/g_plain.js"),
        tool_source("g_plain", "plugin tools folder"),
    );
    write_file(
        root.join("configured/h_configured.ts"),
        tool_source("h_configured", "configured"),
    );
    write_file(
        root.join("configured/broken.js"),
        "export default () => { syntax error",
    );
    write_file(
        home.join("mine/i_tilde.js"),
        tool_source("i_tilde", "tilde"),
    );

    let host = host(&home, &cwd);
    let discovery = discover_and_load_custom_tools(
        &host,
        &[
            "../configured".to_owned(),
            "~/mine/i_tilde.js".to_owned(),
            // Already found through the provider folder: loaded once.
            ".toolhost/tools/b_project.ts".to_owned(),
            "missing.js".to_owned(),
            "notes.md".to_owned(),
        ],
        &cwd,
        &["Read".to_owned(), "Bash".to_owned()],
    )
    .await;

    assert_eq!(
        names_and_paths(&discovery, &root),
        [
            ("a_home", "home/.toolhost/tools/a_home.js"),
            ("b_project", "project/.toolhost/tools/b_project.ts"),
            ("c_claude", "home/.claude/tools/c_claude"),
            ("d_codex", "home/.codex/tools/d_codex.mjs"),
            (
                "e_market",
                "home/.claude/plugins/cache/market/plug/1.0.0/tools/e_market.js"
            ),
            (
                "f_plugin",
                "home/.toolhost/plugins/node_modules/@acme/plugin/lib/f_plugin.js"
            ),
            (
                "g_plain",
                "home/.toolhost/plugins/node_modules/plain/tools/g_plain.js"
            ),
            ("h_configured", "configured/h_configured.ts"),
            ("i_tilde", "home/mine/i_tilde.js"),
        ]
        .map(|(name, path)| (name.to_owned(), path.to_owned()))
    );

    let clashes: Vec<String> = discovery.clashes.iter().map(ToString::to_string).collect();
    assert_eq!(clashes.len(), 2, "{clashes:?}");
    assert!(
        clashes[0].contains("'Read'") && clashes[0].contains("the built-in tool 'Read'"),
        "{}",
        clashes[0]
    );
    assert!(
        clashes[1].contains("'a_home'")
            && clashes[1].contains("project/.codex/tools/dup_name.js")
            && clashes[1].contains("home/.toolhost/tools/a_home.js"),
        "{}",
        clashes[1]
    );

    let errors: Vec<(String, String)> = discovery
        .errors
        .iter()
        .map(|e| {
            (
                e.path.strip_prefix(&root).unwrap().display().to_string(),
                e.message.clone(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|(p, m)| p == "project/missing.js" && m == "no such file or folder")
    );
    assert!(
        errors
            .iter()
            .any(|(p, m)| p == "project/notes.md" && m.contains("metadata"))
    );
    assert!(
        errors
            .iter()
            .any(|(p, m)| p == "configured/broken.js" && m.contains("SyntaxError"))
    );

    let registry = ToolRegistry::new();
    for loaded in &discovery.tools {
        registry.register_arc(loaded.tool.clone()).unwrap();
    }
    assert_eq!(
        call(&registry, "c_claude", json!({})).await.text(),
        "claude home folder"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_reports_added_removed_and_changed_tools_and_keeps_unchanged_engines() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path().canonicalize().unwrap();
    let tools = cwd.join(".toolhost/tools");
    write_file(tools.join("keep.js"), tool_source("keep", "kept"));
    write_file(tools.join("edit.js"), tool_source("edit", "v1"));
    write_file(tools.join("gone.js"), tool_source("gone", "bye"));
    let host = host(&cwd.join("nohome"), &cwd);
    let (mut custom, discovery) = CustomTools::discover(host, vec![], cwd.clone(), vec![]).await;
    assert!(discovery.errors.is_empty(), "{:?}", discovery.errors);
    let registry = ToolRegistry::new();
    for loaded in &discovery.tools {
        registry.register_arc(loaded.tool.clone()).unwrap();
    }
    let kept_before = custom.tools()[2].tool.clone();
    assert_eq!(kept_before.name(), "keep");

    assert!(custom.reload().await.is_empty());

    let mut watcher = custom.watch().unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A different length guarantees a new fingerprint whatever the clock resolution.
    write_file(tools.join("edit.js"), tool_source("edit", "version 2"));
    std::fs::remove_file(tools.join("gone.js")).unwrap();
    write_file(tools.join("new/index.ts"), tool_source("fresh", "new"));
    tokio::time::timeout(Duration::from_secs(5), watcher.changed())
        .await
        .expect("the watcher saw the change");

    let report = custom.reload().await;
    let names = |tools: &[toolhost_script::LoadedTool]| {
        tools
            .iter()
            .map(|t| t.tool.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&report.added), ["fresh"]);
    assert_eq!(names(&report.changed), ["edit"]);
    assert_eq!(report.removed, ["gone"]);
    assert!(report.apply(&registry).is_empty());
    assert_eq!(call(&registry, "edit", json!({})).await.text(), "version 2");
    assert_eq!(call(&registry, "fresh", json!({})).await.text(), "new");
    assert!(!registry.has("gone"));
    let kept_after = custom
        .tools()
        .iter()
        .find(|t| t.tool.name() == "keep")
        .unwrap();
    assert!(
        Arc::ptr_eq(&kept_before, &kept_after.tool),
        "an unchanged module keeps its engine"
    );
}
