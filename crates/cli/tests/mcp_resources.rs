//! A configured server's resources as model tools, named as Codex names them
//! (`list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`), through the
//! `toolhost` binary against `@modelcontextprotocol/server-everything` (installed by
//! `tests/mcp-clients/setup.sh`), under the permission rules.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use predicates::prelude::*;
use serde_json::Value;
use support::toolhost;
use toolhost_test_support::{node, npm_entry_point, write_project_config};

fn with_everything(dir: &std::path::Path) {
    write_project_config(
        dir,
        &format!(
            "[mcp_servers.ev]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
            node(),
            npm_entry_point("@modelcontextprotocol/server-everything")
                .display()
                .to_string()
        ),
    );
}

/// What `toolhost call TOOL ARGS --yes` prints, parsed as JSON.
fn call_json(dir: &std::path::Path, tool: &str, args: &str) -> Value {
    let output = toolhost(dir)
        .args(["call", tool, args, "--yes"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn a_servers_resources_are_listed_and_read_through_the_codex_named_tools() {
    let dir = tempfile::tempdir().unwrap();
    with_everything(dir.path());
    toolhost(dir.path())
        .arg("tools")
        .assert()
        .success()
        .stdout(predicate::str::contains("list_mcp_resources"))
        .stdout(predicate::str::contains("list_mcp_resource_templates"))
        .stdout(predicate::str::contains("read_mcp_resource"));

    let listed = call_json(dir.path(), "list_mcp_resources", "{}");
    let resources = listed["resources"].as_array().unwrap();
    let document = resources
        .iter()
        .find(|resource| {
            resource["uri"]
                .as_str()
                .is_some_and(|uri| uri.starts_with("demo://resource/static/document/"))
        })
        .unwrap_or_else(|| panic!("no static document in {listed}"));
    assert_eq!(document["server"], "ev");

    let templates = call_json(
        dir.path(),
        "list_mcp_resource_templates",
        r#"{"server": "ev"}"#,
    );
    let templates = templates["resourceTemplates"].as_array().unwrap();
    assert!(
        templates
            .iter()
            .all(|template| template["server"] == "ev" && template["uriTemplate"].is_string()),
        "{templates:?}"
    );
    assert!(!templates.is_empty());

    let uri = document["uri"].as_str().unwrap();
    let arguments = serde_json::json!({"server": "ev", "uri": uri}).to_string();
    toolhost(dir.path())
        .args(["call", "read_mcp_resource", &arguments, "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("[resource {uri}]")));

    // A server that is not configured is named with those that are.
    toolhost(dir.path())
        .args([
            "call",
            "read_mcp_resource",
            r#"{"server": "nope", "uri": "x://y"}"#,
            "--yes",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "no MCP server 'nope' is running; the servers are: ev",
        ));
}

#[test]
fn resource_tools_ask_like_every_mcp_tool_and_deny_rules_hold() {
    let dir = tempfile::tempdir().unwrap();
    with_everything(dir.path());
    // No one to ask: refused, saying how to allow it.
    toolhost(dir.path())
        .args(["call", "list_mcp_resources", "{}"])
        .assert()
        .failure();
    toolhost(dir.path())
        .args([
            "call",
            "list_mcp_resources",
            "{}",
            "--yes",
            "--deny",
            "list_mcp_resources",
        ])
        .assert()
        .failure();
    toolhost(dir.path())
        .args([
            "call",
            "list_mcp_resources",
            "{}",
            "--allow",
            "list_mcp_resources",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"server\":\"ev\""));
}
