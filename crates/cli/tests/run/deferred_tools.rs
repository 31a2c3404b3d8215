//! Deferred tools in `toolhost run`: 500 generated custom tools and a real MCP server
//! (server-everything) are far past the default budget (a tenth of the context window), so
//! the model is sent the built-ins and `tool_search` in full, which names the rest. What
//! `tool_search` loads is sent in full from the next request on (chat completions), or every
//! tool is sent every time, the deferred ones flagged, and the search's result loads what it
//! found: for Anthropic as `tool_reference` blocks, for the Responses API as a
//! `tool_search_output` item answering the model's `tool_search_call`. A deferred tool,
//! loaded or not, is called through the whole pipeline.

use pretty_assertions::assert_eq;

use super::*;

/// A run of `format` with the 500 generated tools (`fixtures/many_tools.js`) in the workspace
/// and server-everything configured as `ev`.
pub(super) fn run_with_many_tools(format: WireFormat, script: Vec<Step>) -> Run {
    let run_ = Run::new(format, script);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/many_tools.js");
    write_file(
        run_.path(".toolhost/tools/many_tools.js"),
        std::fs::read_to_string(fixture).unwrap(),
    );
    let config_path = run_.dirs.project_config();
    let mut config = std::fs::read_to_string(&config_path).unwrap_or_default();
    config.push_str(&format!(
        "\n[mcp_servers.ev]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        toolhost_test_support::node(),
        toolhost_test_support::npm_entry_point("@modelcontextprotocol/server-everything")
            .display()
            .to_string(),
    ));
    write_file(config_path, config);
    run_
}

/// The definition of the tool `name` in a request.
fn definition<'a>(format: WireFormat, body: &'a Value, name: &str) -> &'a Value {
    let tools = body["tools"].as_array().unwrap();
    let names = offered_tools(format, body);
    let position = names.iter().position(|offered| offered == name);
    &tools[position.unwrap_or_else(|| panic!("{name} is not offered: {names:?}"))]
}

fn description(format: WireFormat, tool: &Value) -> &str {
    match format {
        WireFormat::OpenAiChat => tool["function"]["description"].as_str().unwrap(),
        WireFormat::OpenAiResponses | WireFormat::Anthropic => {
            tool["description"].as_str().unwrap()
        }
    }
}

/// The text of a request's `tools` member, byte for byte: the request ends with it (an
/// earlier `"tools"`, a `tool_search_output`'s, is followed by more than one JSON value).
fn tools_text(request: &RecordedRequest) -> &str {
    let raw = &request.raw_body;
    let member = ",\"tools\":";
    let start = raw
        .match_indices(member)
        .map(|(start, _)| start)
        .find(|start| {
            let value = &raw[start + member.len()..raw.len() - 1];
            serde_json::from_str::<Value>(value).is_ok()
        })
        .expect("the request offers tools");
    &raw[start..]
}

/// The content blocks of the Anthropic tool result answering `call_id`.
fn anthropic_result<'a>(body: &'a Value, call_id: &str) -> &'a Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == call_id)
        .map(|block| &block["content"])
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}

/// The prompt [`search_then_call_replies`] answers.
pub(super) const SEARCH_THEN_CALL_PROMPT: &str = "Export shipment S-1 three times";

/// The model's side of a run with the many tools: two searches, which load
/// `export_shipment_asia` and `mcp__ev__echo`; calls of those two and of
/// `validate_sensor_africa`, never loaded; then text.
pub(super) fn search_then_call_replies() -> [Reply; 3] {
    [
        // A `tool_search_call` item for the Responses API, a call of `tool_search` for the
        // others.
        Reply::default()
            .with_tool_search_call(
                "search-1",
                json!({"query": "export shipment records asia", "max_results": 1}),
            )
            .with_tool_search_call("search-2", json!({"query": "select:mcp__ev__echo"})),
        Reply::tool_calls([
            (
                "call-1",
                "export_shipment_asia",
                json!({"shipmentId": "S-1", "count": "3"}),
            ),
            ("call-2", "mcp__ev__echo", json!({"message": "hi"})),
            // Never loaded: still looked up, validated and refused like any call.
            ("call-3", "validate_sensor_africa", json!({})),
        ]),
        Reply::text("Done."),
    ]
}

#[test]
fn tool_search_loads_deferred_tools_for_the_next_request_and_they_run_through_the_pipeline() {
    for format in [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ] {
        let script = Vec::from(search_then_call_replies().map(Step::from));
        let run_ = run_with_many_tools(format, script);
        let done = run(&run_, &["--yes", SEARCH_THEN_CALL_PROMPT]);
        assert_eq!(done.status, Some(0), "{format:?} stderr: {}", done.stderr);
        let requests = run_.requests();
        assert_eq!(requests.len(), 3, "{format:?}");

        let first = offered_tools(format, &requests[0].body);
        for expected in ["Read", "Bash", "tool_search"] {
            assert!(
                first.contains(&expected.to_owned()),
                "{format:?}: {first:?}"
            );
        }
        let search = description(format, definition(format, &requests[0].body, "tool_search"));
        for named in [
            "export_shipment_asia",
            "mcp__ev__echo",
            "validate_sensor_africa",
        ] {
            assert!(search.contains(named), "{format:?}: {search}");
        }
        match format {
            WireFormat::Anthropic => sends_every_tool_and_loads_by_reference(&requests),
            WireFormat::OpenAiResponses => sends_every_tool_and_loads_by_search_output(&requests),
            WireFormat::OpenAiChat => injects_what_is_loaded(format, &requests),
        }

        // Third request: the deferred tools ran with coerced arguments, or were refused by
        // validation, as any tool's calls are.
        let results = tool_results(format, &requests[2].body);
        let texts: Vec<&str> = results
            .iter()
            .filter(|result| result.call_id.starts_with("call-"))
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(texts[0], "export shipment S-1 x3 in asia", "{format:?}");
        assert_eq!(texts[1], "Echo: hi", "{format:?}");
        assert!(
            texts[2].contains("'sensorId': missing required parameter"),
            "{format:?}: {}",
            texts[2]
        );
    }
}

/// Chat completions: the first request has the built-ins and
/// `tool_search`, the second those same tools and then the two loaded, in full, in the order
/// loaded; the search's result names them in text.
fn injects_what_is_loaded(format: WireFormat, requests: &[RecordedRequest]) {
    let first = offered_tools(format, &requests[0].body);
    for deferred in [
        "export_shipment_asia",
        "mcp__ev__echo",
        "validate_sensor_africa",
    ] {
        assert!(
            !first.contains(&deferred.to_owned()),
            "{format:?}: {first:?}"
        );
    }
    assert!(
        !requests[0].raw_body.contains("defer_loading"),
        "{format:?}"
    );
    let second = offered_tools(format, &requests[1].body);
    assert_eq!(second[..first.len()], first[..], "{format:?}");
    assert_eq!(
        second[first.len()..],
        ["export_shipment_asia", "mcp__ev__echo"],
        "{format:?}"
    );
    let loaded = definition(format, &requests[1].body, "export_shipment_asia").to_string();
    assert!(loaded.contains("shipmentId"), "{format:?}: {loaded}");
    let searched = tool_results(format, &requests[1].body);
    assert!(
        searched[0]
            .text
            .contains("- export_shipment_asia: Runs the export action on shipment"),
        "{format:?}: {searched:?}"
    );
    assert!(
        searched[0]
            .text
            .ends_with("\n[loaded tool: export_shipment_asia]"),
        "{format:?}: {searched:?}"
    );
    assert!(
        !requests[1].raw_body.contains("tool_reference"),
        "{format:?}"
    );
}

/// What native deferral sends in every format that has it: every tool in every request, byte
/// for byte the same, the deferred ones flagged `defer_loading`; the first request's body.
fn sends_every_tool_the_deferred_flagged(
    format: WireFormat,
    requests: &[RecordedRequest],
) -> &Value {
    // Compared whole, but not shown whole: the list is some 200 KB.
    for later in &requests[1..] {
        assert!(
            tools_text(later) == tools_text(&requests[0]),
            "{format:?}: the tools list changed between requests"
        );
    }
    let body = &requests[0].body;
    let offered = offered_tools(format, body);
    assert!(offered.len() > 500, "{format:?}: {}", offered.len());
    for deferred in [
        "export_shipment_asia",
        "mcp__ev__echo",
        "validate_sensor_africa",
    ] {
        let tool = definition(format, body, deferred);
        assert_eq!(tool["defer_loading"], true, "{format:?}: {tool}");
    }
    body
}

/// Anthropic: every request sends every tool, byte for byte the same, the deferred ones with
/// `defer_loading`; the search's results go back as the `tool_reference` blocks of what they
/// loaded, which the API expands.
fn sends_every_tool_and_loads_by_reference(requests: &[RecordedRequest]) {
    let format = WireFormat::Anthropic;
    let body = sends_every_tool_the_deferred_flagged(format, requests);
    for deferred in [
        "export_shipment_asia",
        "mcp__ev__echo",
        "validate_sensor_africa",
    ] {
        let tool = definition(format, body, deferred);
        assert!(tool.get("cache_control").is_none(), "{tool}");
    }
    for sent_in_full in ["Read", "Bash", "tool_search"] {
        let tool = definition(format, body, sent_in_full);
        assert!(tool.get("defer_loading").is_none(), "{tool}");
    }
    // The cache breakpoint is on the last tool sent in full: tool_search, registered last.
    let marked: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool.get("cache_control").is_some())
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(marked, ["tool_search"]);
    assert_eq!(requests[0].header("anthropic-beta"), None);

    for (call_id, tool) in [
        ("search-1", "export_shipment_asia"),
        ("search-2", "mcp__ev__echo"),
    ] {
        assert_eq!(
            anthropic_result(&requests[1].body, call_id),
            &json!([{"type": "tool_reference", "tool_name": tool}]),
            "{call_id}"
        );
    }
}

/// The Responses API: every request sends every tool, byte for byte the same, the deferred
/// ones with `defer_loading` and `tool_search` as the client-executed tool search; the
/// model's `tool_search_call` items go back as they came, each answered by a
/// `tool_search_output` item with the definitions of what it loaded, as `tools` has them.
fn sends_every_tool_and_loads_by_search_output(requests: &[RecordedRequest]) {
    let format = WireFormat::OpenAiResponses;
    let body = sends_every_tool_the_deferred_flagged(format, requests);
    for deferred in [
        "export_shipment_asia",
        "mcp__ev__echo",
        "validate_sensor_africa",
    ] {
        let tool = definition(format, body, deferred);
        assert_eq!(tool["type"], "function", "{tool}");
    }
    for sent_in_full in ["Read", "Bash"] {
        let tool = definition(format, body, sent_in_full);
        assert!(tool.get("defer_loading").is_none(), "{tool}");
    }
    let search = definition(format, body, "tool_search");
    assert_eq!(search["type"], "tool_search", "{search}");
    assert_eq!(search["execution"], "client", "{search}");
    assert_eq!(
        search["parameters"]["required"],
        json!(["query"]),
        "{search}"
    );

    let input = requests[1].body["input"].as_array().unwrap();
    let item = |kind: &str, call_id: &str| {
        input
            .iter()
            .find(|item| item["type"] == kind && item["call_id"] == call_id)
            .unwrap_or_else(|| panic!("no {kind} for {call_id}: {input:?}"))
    };
    assert_eq!(
        item("tool_search_call", "search-1"),
        &json!({"type": "tool_search_call", "call_id": "search-1", "execution": "client",
                "status": "completed",
                "arguments": {"query": "export shipment records asia", "max_results": 1}})
    );
    assert_eq!(
        item("tool_search_call", "search-2")["arguments"],
        json!({"query": "select:mcp__ev__echo"})
    );
    for (call_id, tool) in [
        ("search-1", "export_shipment_asia"),
        ("search-2", "mcp__ev__echo"),
    ] {
        assert_eq!(
            item("tool_search_output", call_id),
            &json!({"type": "tool_search_output", "call_id": call_id, "execution": "client",
                    "status": "completed", "tools": [definition(format, body, tool)]}),
            "{call_id}"
        );
    }
    assert!(
        !input
            .iter()
            .any(|item| item["type"] == "function_call" || item["type"] == "function_call_output"),
        "{input:?}"
    );
}

#[test]
fn a_threshold_above_the_definitions_defers_nothing_and_always_loaded_tools_stay() {
    let run_ = run_with_many_tools(WireFormat::OpenAiChat, vec![Reply::text("Hi.").into()]);
    let config_path = run_.dirs.project_config();
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str("\n[tools]\nalways_loaded = [\"mcp__ev\", \"sync_sensor_africa\"]\n");
    write_file(&config_path, &config);
    let done = run(&run_, &["Hi"]);
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let offered = offered_tools(WireFormat::OpenAiChat, &run_.requests()[0].body);
    for expected in [
        "mcp__ev__echo",
        "mcp__ev__get-sum",
        "sync_sensor_africa",
        "tool_search",
    ] {
        assert!(offered.contains(&expected.to_owned()), "{offered:?}");
    }
    assert!(!offered.contains(&"sync_sensor_asia".to_owned()));

    let everything = run_with_many_tools(WireFormat::OpenAiChat, vec![Reply::text("Hi.").into()]);
    let config_path = everything.dirs.project_config();
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str("\n[tools]\ndefer_threshold = 10000000\n");
    write_file(&config_path, &config);
    let done = run(&everything, &["Hi"]);
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let offered = offered_tools(WireFormat::OpenAiChat, &everything.requests()[0].body);
    assert!(offered.contains(&"sync_sensor_asia".to_owned()));
    assert!(!offered.contains(&"tool_search".to_owned()));
}

#[test]
fn native_tool_search_off_injects_the_loaded_tools_where_the_api_could_defer_them() {
    let run_ = run_with_many_tools(
        WireFormat::OpenAiResponses,
        vec![
            // With the API's tool search off, `tool_search` is a function like any other.
            Reply::tool_calls([
                (
                    "search-1",
                    "tool_search",
                    json!({"query": "export shipment records asia", "max_results": 1}),
                ),
                (
                    "search-2",
                    "tool_search",
                    json!({"query": "select:mcp__ev__echo"}),
                ),
            ])
            .into(),
            Reply::text("Done.").into(),
        ],
    );
    let config_path = run_.dirs.project_config();
    let config = std::fs::read_to_string(&config_path).unwrap();
    let mock_model = "model = \"mock-model\"\n";
    assert!(config.contains(mock_model), "{config}");
    write_file(
        &config_path,
        config.replace(
            mock_model,
            &format!("{mock_model}native_tool_search = false\n"),
        ),
    );
    let done = run(&run_, &["--yes", "Export shipment S-1"]);
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let requests = run_.requests();
    assert_eq!(requests.len(), 2);
    injects_what_is_loaded(WireFormat::OpenAiResponses, &requests);
    let search = definition(
        WireFormat::OpenAiResponses,
        &requests[0].body,
        "tool_search",
    );
    assert_eq!(search["type"], "function", "{search}");
    assert!(!requests[1].raw_body.contains("tool_search_output"));
}

/// The model evaluation's case: a small window whose budget the built-ins alone pass, with one
/// small foreign tool (the built-in `mcp__toolhost__status`) left to defer. A `tool_search`
/// bigger than what it would hide is not offered; every tool is sent in full.
#[test]
fn a_tool_smaller_than_tool_search_is_not_deferred_past_a_small_budget() {
    let run_ = Run::new(WireFormat::OpenAiChat, vec![Reply::text("Hi.").into()]);
    let config_path = run_.dirs.project_config();
    let mut config = std::fs::read_to_string(&config_path).unwrap_or_default();
    config.push_str("\n[tools]\ndefer_threshold = 100\n");
    write_file(&config_path, &config);
    let done = run(
        &run_,
        &[
            "--tools",
            "Read,Write,Edit,Bash,Grep,Glob,ListDir,mcp__toolhost__status",
            "Hi",
        ],
    );
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let offered = offered_tools(WireFormat::OpenAiChat, &run_.requests()[0].body);
    assert!(!offered.contains(&"tool_search".to_owned()), "{offered:?}");
    assert!(
        offered.contains(&"mcp__toolhost__status".to_owned()),
        "{offered:?}"
    );
}
