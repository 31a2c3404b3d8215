//! Prompts both ways, through the `toolhost` binary. A configured server's prompts are slash
//! commands `/mcp__<server>__<prompt> args` in `run` and `chat`, against the reference
//! server `@modelcontextprotocol/server-everything` (installed by `tests/mcp-clients/setup.sh`)
//! and a scripted model on loopback, under the permission rules; and `serve` offers a stored
//! session as a read-only `session://` resource.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use agent_runs::{Fixture, last};
use serde_json::json;
use toolhost_test_support::{Reply, node, npm_entry_point};

fn with_everything(fixture: &Fixture) {
    fixture.config(&format!(
        "[mcp_servers.ev]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node(),
        npm_entry_point("@modelcontextprotocol/server-everything")
            .display()
            .to_string()
    ));
}

#[test]
fn run_sends_a_servers_prompt_filled_with_the_words_typed() {
    let fixture = Fixture::new();
    with_everything(&fixture);
    let model = fixture.model(vec![Reply::text("Foggy.").into()]);
    fixture
        .run(&model, &["/mcp__ev__args-prompt 'San Francisco' CA"])
        .assert()
        .success();
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        last(&requests[0], "user"),
        "What's weather in San Francisco, CA?"
    );
}

#[test]
fn a_deny_rule_or_a_missing_argument_stops_the_prompt_before_the_model() {
    let fixture = Fixture::new();
    with_everything(&fixture);
    let model = fixture.model(vec![]);
    let denied = fixture
        .run(
            &model,
            &[
                "--deny",
                "mcp__ev__args-prompt",
                "/mcp__ev__args-prompt Paris",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert!(
        stderr.contains("refused by the permission rules"),
        "{stderr}"
    );

    let missing = fixture
        .run(&model, &["/mcp__ev__args-prompt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("needs city") && stderr.contains("/mcp__ev__args-prompt <city> [state]"),
        "{stderr}"
    );
    let unknown = fixture.run(&model, &["/mcp__ev__nope"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("no MCP prompt /mcp__ev__nope")
            && stderr.contains("/mcp__ev__simple-prompt"),
        "{stderr}"
    );
    assert!(model.requests().is_empty());
}

#[test]
fn chat_runs_a_servers_prompt_typed_as_a_slash_command() {
    let fixture = Fixture::new();
    with_everything(&fixture);
    let model = fixture.model(vec![Reply::text("Noted.").into()]);
    let output = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .env("TERM", "dumb")
        .args(["chat", "--plain"])
        .write_stdin("/help\n/mcp__ev__simple-prompt\n/exit\n")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("/mcp__ev__args-prompt <city> [state]"),
        "{stdout}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "{stdout}");
    assert_eq!(
        last(&requests[0], "user"),
        "This is a simple prompt without arguments."
    );
}

#[test]
fn serve_offers_a_stored_session_as_a_read_only_transcript() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![Reply::text("The answer is 42.").into()]);
    fixture
        .run(&model, &["What is six times seven?"])
        .assert()
        .success();
    let mut serve =
        support::ServeProcess::start_with_home(&fixture.dirs.workspace, &fixture.dirs.home, &[]);
    serve.initialize();
    serve.send(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"}));
    let listed = serve.wait_for("resources/list reply", |m| m["id"] == 2);
    let uri = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|resource| resource["uri"].as_str())
        .find(|uri| uri.starts_with("session://"))
        .unwrap_or_else(|| panic!("no session in {listed}"))
        .to_owned();
    serve.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                      "params": {"uri": uri}}),
    );
    let read = serve.wait_for("resources/read reply", |m| m["id"] == 3);
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "text/markdown");
    let text = contents["text"].as_str().unwrap();
    assert!(
        text.contains("What is six times seven?") && text.contains("The answer is 42."),
        "{text}"
    );
    let id = uri.trim_start_matches("session://");
    serve.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "completion/complete",
                      "params": {"ref": {"type": "ref/resource", "uri": "session://{id}"},
                                 "argument": {"name": "id", "value": &id[..4]}}}),
    );
    let completed = serve.wait_for("completion/complete reply", |m| m["id"] == 4);
    assert_eq!(completed["result"]["completion"]["values"], json!([id]));
}
