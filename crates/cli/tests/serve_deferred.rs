//! `toolhost serve --defer-tools` with 500 generated custom tools (`fixtures/many_tools.js`)
//! and a real MCP server (server-everything as `ev`) behind the gateway: `tools/list` gives the
//! built-ins and `tool_search`; `tool_search` finds the right tool for each kind of query and
//! loads it for this client (told with `tools/list_changed`); a deferred tool called by name
//! goes through the whole pipeline. Needs `tests/mcp-clients/setup.sh` (server-everything).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::ServeProcess;
use toolhost_test_support::{node, npm_entry_point, write_file, write_project_config};

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The tools a `tool_search` result names, in its order (its `- NAME: …` lines).
fn found(result: &Value) -> Vec<String> {
    text_of(result)
        .lines()
        .filter_map(|line| line.strip_prefix("- "))
        .filter_map(|line| line.split(':').next())
        .map(str::to_owned)
        .collect()
}

fn serve_many_tools(dir: &Path, serve_args: &[&str]) -> ServeProcess {
    serve_many_tools_after(dir, serve_args, 0)
}

/// The same, server-everything starting only after `delay_secs` (a slow upstream server).
fn serve_many_tools_after(dir: &Path, serve_args: &[&str], delay_secs: u32) -> ServeProcess {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/many_tools.js");
    write_file(
        dir.join(".toolhost/tools/many_tools.js"),
        std::fs::read_to_string(fixture).unwrap(),
    );
    let everything = format!(
        "sleep {delay_secs}; exec '{}' '{}' stdio",
        node(),
        npm_entry_point("@modelcontextprotocol/server-everything").display()
    );
    write_project_config(
        dir,
        &format!("[mcp_servers.ev]\ncommand = \"/bin/sh\"\nargs = [\"-c\", {everything:?}]\n"),
    );
    let mut server = ServeProcess::start_serving(
        dir,
        dir,
        &["--allow", "mcp__ev", "--allow", "export_shipment_asia"],
        serve_args,
    );
    server.initialize();
    server
}

#[test]
fn tool_search_finds_and_loads_deferred_tools_for_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve_many_tools(dir.path(), &["--defer-tools"]);
    // The gateway answered at once; server-everything's tools are deferred as they join.
    wait_until_deferred(&mut server, "mcp__ev__echo");

    let listed = server.tool_names(1);
    for expected in ["Read", "Bash", "tool_search"] {
        assert!(listed.contains(&expected.to_owned()), "{listed:?}");
    }
    for deferred in ["export_shipment_asia", "mcp__ev__echo", "mcp__ev__get-sum"] {
        assert!(!listed.contains(&deferred.to_owned()), "{listed:?}");
    }

    // A deferred tool, never loaded, called by name: coerced, authorised by the rule, run.
    let sum = server.call(2, "mcp__ev__get-sum", json!({"a": "1", "b": "2"}));
    assert_eq!(text_of(&sum), "The sum of 1 and 2 is 3.", "{sum}");

    // Loading tells the client its list changed (the reply may come before or after).
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "tool_search", "arguments": {"query": "select:list_report_asia"}}}));
    server.wait_for("tools/list_changed", |message| {
        message["method"] == "notifications/tools/list_changed"
    });

    // Each kind of query finds its tool first.
    let queries = [
        ("export shipment records asia", "export_shipment_asia"),
        ("sync_sensor_africa", "sync_sensor_africa"),
        ("schema version sensor europe", "validate_sensor_europe"),
        ("sum of two numbers", "mcp__ev__get-sum"),
        ("echoes back the input", "mcp__ev__echo"),
        ("environment variables", "mcp__ev__get-env"),
    ];
    let mut id = 10;
    for (query, expected) in queries {
        id += 1;
        let result = server.call(id, "tool_search", json!({"query": query}));
        let hits = found(&result);
        assert_eq!(
            hits.first().map(String::as_str),
            Some(expected),
            "{query}: {hits:?}"
        );
    }
    let exact = server.call(20, "tool_search", json!({"query": "sync_sensor_africa"}));
    assert_eq!(found(&exact), ["sync_sensor_africa"]);
    let selected = server.call(
        21,
        "tool_search",
        json!({"query": "select:delete_ticket_europe,list_contact_oceania"}),
    );
    assert_eq!(
        found(&selected),
        ["delete_ticket_europe", "list_contact_oceania"]
    );
    let by_server = server.call(22, "tool_search", json!({"query": "ev", "max_results": 20}));
    let hits = found(&by_server);
    assert!(!hits.is_empty(), "{by_server}");
    assert!(
        hits.iter().all(|name| name.starts_with("mcp__ev__")),
        "{hits:?}"
    );

    // The list now has what the client loaded, after the rest.
    let now = server.tool_names(30);
    assert_eq!(now[..listed.len()], listed[..]);
    for loaded in [
        "list_report_asia",
        "export_shipment_asia",
        "mcp__ev__get-sum",
        "delete_ticket_europe",
    ] {
        assert!(now.contains(&loaded.to_owned()), "{now:?}");
    }
    let export = server.call(
        31,
        "export_shipment_asia",
        json!({"shipmentId": "S-9", "count": 2}),
    );
    assert_eq!(
        text_of(&export),
        "export shipment S-9 x2 in asia",
        "{export}"
    );
}

#[test]
fn without_the_flag_every_tool_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve_many_tools(dir.path(), &[]);
    // Without deferral the server's tools join when it is ready.
    let listed = server.tool_names_with("mcp__ev__echo");
    assert!(listed.contains(&"export_shipment_asia".to_owned()));
    assert!(!listed.contains(&"tool_search".to_owned()));
}

/// Lists until `tool_search`'s description names `tool` (deferred since its server joined).
fn wait_until_deferred(server: &mut ServeProcess, tool: &str) -> Vec<Value> {
    server.tools_once(&format!("{tool} deferred"), |tools| {
        tools.iter().any(|listed| {
            listed["name"] == "tool_search"
                && listed["description"]
                    .as_str()
                    .is_some_and(|text| text.contains(tool))
        })
    })
}

/// A slow upstream server does not hold the gateway back with `--defer-tools`: `initialize`
/// and `tools/list` answer while it starts (its tools not there yet), and its tools are
/// deferred when it joins, named by `tool_search` and loadable like the rest.
#[test]
fn with_deferral_a_slow_upstream_server_joins_later_and_is_deferred() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve_many_tools_after(dir.path(), &["--defer-tools"], 4);
    let first = server.tool_names(1);
    assert!(first.contains(&"tool_search".to_owned()), "{first:?}");
    let search = server
        .tools_once("tool_search", |_| true)
        .into_iter()
        .find(|tool| tool["name"] == "tool_search")
        .unwrap();
    assert!(
        !search["description"]
            .as_str()
            .unwrap()
            .contains("mcp__ev__"),
        "server-everything had not started yet: {search}"
    );

    let tools = wait_until_deferred(&mut server, "mcp__ev__get-sum");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!names.contains(&"mcp__ev__get-sum"), "{names:?}");
    let loaded = server.call(
        2,
        "tool_search",
        json!({"query": "select:mcp__ev__get-sum"}),
    );
    assert_eq!(found(&loaded), ["mcp__ev__get-sum"], "{loaded}");
    let now = server.tool_names_with("mcp__ev__get-sum");
    assert!(now.contains(&"tool_search".to_owned()), "{now:?}");
}
