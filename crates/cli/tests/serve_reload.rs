//! `toolhost serve` reloads custom tools when their files change and tells the client
//! (R41): a live server process, a tool file added while it runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::ServeProcess;

fn tool_module(name: &str) -> String {
    format!(
        "export default () => ({{ name: '{name}', label: '{name}', description: 'Says {name}.', \
         parameters: {{ type: 'object', properties: {{}} }}, \
         execute: async () => ({{ content: [{{ type: 'text', text: '{name}!' }}] }}) }});\n"
    )
}

#[test]
fn a_tool_file_added_while_serving_is_loaded_and_announced() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join(".toolhost/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("hello.js"), tool_module("hello")).unwrap();

    // Custom tools ask before they run (R17); this client cannot be asked.
    let mut server = ServeProcess::start(dir.path(), &["--allow", "bye"]);
    server.initialize();
    let before = server.tool_names(2);
    assert!(before.contains(&"hello".to_owned()), "{before:?}");
    assert!(!before.contains(&"bye".to_owned()));

    std::fs::write(tools.join("bye.js"), tool_module("bye")).unwrap();
    server.wait_for("tools/list_changed notification", |m| {
        m["method"] == "notifications/tools/list_changed"
    });
    let after = server.tool_names(3);
    assert!(
        after.contains(&"hello".to_owned()) && after.contains(&"bye".to_owned()),
        "{after:?}"
    );

    server.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                       "params": {"name": "bye", "arguments": {}}}));
    let reply = server.wait_for("tools/call reply", |m| m["id"] == 4);
    assert_eq!(reply["result"]["content"][0]["text"], "bye!");
}
