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

/// Two configured servers, `ev` and `docs`, both the everything server.
fn with_two_servers(dir: &std::path::Path) {
    let entry = npm_entry_point("@modelcontextprotocol/server-everything")
        .display()
        .to_string();
    let server = |name: &str| {
        format!(
            "[mcp_servers.{name}]\ncommand = {:?}\nargs = [{entry:?}, \"stdio\"]\n",
            node()
        )
    };
    write_project_config(dir, &(server("ev") + &server("docs")));
}

/// The servers named by the entries of a listing.
fn servers_listed(listed: &Value) -> std::collections::BTreeSet<String> {
    listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["server"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_servers_rules_decide_the_resource_calls_that_reach_it() {
    let dir = tempfile::tempdir().unwrap();
    with_two_servers(dir.path());
    let read_docs =
        r#"{"server": "docs", "uri": "demo://resource/static/document/architecture.md"}"#;
    let read_ev = r#"{"server": "ev", "uri": "demo://resource/static/document/architecture.md"}"#;

    // `mcp__docs` denies reading docs' resources as it denies its tools, whatever allows the
    // resource tool itself.
    toolhost(dir.path())
        .args(["call", "read_mcp_resource", read_docs])
        .args(["--allow", "read_mcp_resource", "--deny", "mcp__docs"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("mcp__docs"));
    // A listing of every server leaves docs out, and lists the other.
    let output = toolhost(dir.path())
        .args(["call", "list_mcp_resources", "{}"])
        .args(["--allow", "list_mcp_resources", "--deny", "mcp__docs"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(servers_listed(&listed), ["ev".to_owned()].into());
    // ... as does a deny rule naming the server in the tool's specifier.
    let output = toolhost(dir.path())
        .args(["call", "list_mcp_resources", "{}"])
        .args(["--allow", "list_mcp_resources"])
        .args(["--deny", "list_mcp_resources(ev)"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(servers_listed(&listed), ["docs".to_owned()].into());

    // Allow rules: `mcp__docs` lets docs' resources be read without asking (nobody can be
    // asked here), and `read_mcp_resource(docs)` does too; neither lets ev's through.
    for rule in ["mcp__docs", "read_mcp_resource(docs)"] {
        toolhost(dir.path())
            .args(["call", "read_mcp_resource", read_docs, "--allow", rule])
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "[resource demo://resource/static/document/",
            ));
        toolhost(dir.path())
            .args(["call", "read_mcp_resource", read_ev, "--allow", rule])
            .assert()
            .failure();
    }
}
