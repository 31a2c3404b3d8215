//! Calls that reach an MCP server's data through a tool of no server (the resource tools):
//! `mcp__server` rules and `Tool(server)` rules decide them as they decide that server's
//! own tools.

mod support;

use pretty_assertions::assert_eq;
use support::{decide, rules};
use toolhost_core::permission::{Decision, RuleList, suggested_rules};
use toolhost_core::{McpServerSubject, PermissionSubject};

fn server(name: &str) -> PermissionSubject {
    PermissionSubject::McpServer(McpServerSubject {
        name: name.to_owned(),
        segment: name.replace('.', "_"),
    })
}

#[test]
fn a_server_rule_decides_the_resource_calls_that_reach_the_server() {
    let deny = rules(RuleList::Deny, &["mcp__docs"]);
    assert_eq!(
        decide("read_mcp_resource", &deny, server("docs")),
        Decision::Deny
    );
    assert_eq!(
        decide("read_mcp_resource", &deny, server("ev")),
        Decision::Ask
    );
    // A listing over every server names none: the tool leaves the denied one out.
    assert_eq!(
        decide("list_mcp_resources", &deny, PermissionSubject::None),
        Decision::Ask
    );

    let allow = rules(RuleList::Allow, &["mcp__docs"]);
    assert_eq!(
        decide("read_mcp_resource", &allow, server("docs")),
        Decision::Allow
    );
    assert_eq!(
        decide("read_mcp_resource", &allow, server("ev")),
        Decision::Ask
    );
    // The rule is written with the server part of tool names.
    let allow = rules(RuleList::Allow, &["mcp__my_docs"]);
    assert_eq!(
        decide("read_mcp_resource", &allow, server("my.docs")),
        Decision::Allow
    );
}

#[test]
fn a_tool_rule_names_the_server_by_its_name() {
    let allow = rules(RuleList::Allow, &["read_mcp_resource(docs)"]);
    assert_eq!(
        decide("read_mcp_resource", &allow, server("docs")),
        Decision::Allow
    );
    assert_eq!(
        decide("read_mcp_resource", &allow, server("docs2")),
        Decision::Ask
    );
    assert_eq!(
        decide("list_mcp_resources", &allow, server("docs")),
        Decision::Ask
    );
    let deny = rules(RuleList::Deny, &["list_mcp_resources(docs)"]);
    assert_eq!(
        decide("list_mcp_resources", &deny, server("docs")),
        Decision::Deny
    );
}

#[test]
fn the_suggested_rule_names_the_tool_and_the_server() {
    let suggested = suggested_rules("read_mcp_resource", &server("docs"));
    let texts: Vec<&str> = suggested.iter().map(|rule| rule.as_str()).collect();
    assert_eq!(texts, ["read_mcp_resource(docs)"]);
}
