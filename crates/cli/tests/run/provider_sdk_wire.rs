//! The wire of native tool search checked against the official Python SDKs' own types:
//! `tests/provider-sdks/check_wire.py`, run with the venv `tests/mcp-clients/setup.sh` fills
//! (`openai` and `anthropic` pinned there), validates what the binary sent in a run that
//! searches natively, and the events the mock model streamed for it, against the SDKs'
//! create-params types and stream-event unions, keys the types do not declare included.

use std::io::Write as _;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use toolhost_test_support::sse_frames;

use super::deferred_tools::{
    SEARCH_THEN_CALL_PROMPT, run_with_many_tools, search_then_call_replies,
};
use super::*;

/// What `check_wire.py` said about one wire.
struct Checked {
    passed: bool,
    stderr: String,
}

/// Runs `check_wire.py` on `wire` (`{"api", "requests", "events"}`, as it documents).
fn check_wire(wire: &Value) -> Checked {
    let checker =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/provider-sdks/check_wire.py");
    let mut child = std::process::Command::new(toolhost_test_support::venv().join("bin/python"))
        .arg(checker)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(wire.to_string().as_bytes()).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    Checked {
        passed: output.status.success(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// One SSE frame (`event: NAME\ndata: JSON\n\n`) as `{"event": NAME, "data": JSON}`.
fn sse_event(frame: &str) -> Value {
    let field = |name: &str| {
        frame
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} line in {frame:?}"))
    };
    let data: Value = serde_json::from_str(field("data: ")).unwrap();
    json!({"event": field("event: "), "data": data})
}

/// The checker's name of a format's API.
fn api(format: WireFormat) -> &'static str {
    match format {
        WireFormat::OpenAiResponses => "openai-responses",
        WireFormat::Anthropic => "anthropic",
        WireFormat::OpenAiChat => unreachable!("chat completions has no native tool search"),
    }
}

#[test]
fn native_tool_search_requests_and_streamed_events_match_the_official_sdk_types() {
    // Each API's word for what a search loads.
    for (format, loaded) in [
        (WireFormat::OpenAiResponses, "\"tool_search_output\""),
        (WireFormat::Anthropic, "\"tool_reference\""),
    ] {
        let replies = search_then_call_replies();
        let run_ = run_with_many_tools(format, Vec::from(replies.clone().map(Step::from)));
        let done = run(&run_, &["--yes", SEARCH_THEN_CALL_PROMPT]);
        assert_eq!(done.status, Some(0), "{format:?} stderr: {}", done.stderr);
        let requests = run_.requests();
        assert_eq!(requests.len(), 3, "{format:?}");
        // The run searched natively: what is checked has the shapes in question.
        assert!(
            requests[0].raw_body.contains("\"defer_loading\":true"),
            "{format:?}"
        );
        assert!(requests[1].raw_body.contains(loaded), "{format:?}");
        let requests: Vec<&Value> = requests.iter().map(|request| &request.body).collect();
        // The replies' frames as the first of a script: only their ids differ from the run's.
        let events: Vec<Value> = replies
            .iter()
            .flat_map(|reply| sse_frames(format, reply))
            .map(|frame| sse_event(&frame))
            .collect();

        let checked =
            check_wire(&json!({"api": api(format), "requests": requests, "events": events}));
        assert!(checked.passed, "{format:?}:\n{}", checked.stderr);
    }
}

#[test]
fn the_sdk_wire_check_refuses_a_key_the_types_do_not_declare() {
    let misspelt = [
        (
            WireFormat::OpenAiResponses,
            json!({"model": "m", "stream": true, "input": [], "tools": [
                {"type": "function", "name": "f", "parameters": {}, "strict": false,
                 "defer_loadng": true}]}),
            json!({"type": "response.output_item.added", "sequence_number": 0,
                   "output_index": 0, "item": {"id": "tsc_1", "type": "tool_search_call",
                   "status": "in_progress", "call_id": "c", "execution": "client",
                   "arguments": {}, "argument": {}}}),
            [
                "request 1: /tools/0/defer_loadng: unknown key",
                "event 1 (response.output_item.added): /item/argument: unknown key",
            ],
        ),
        (
            WireFormat::Anthropic,
            json!({"model": "m", "max_tokens": 1, "stream": true, "messages": [
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                 "content": [{"type": "tool_reference", "tool_nam": "f"}]}]}]}),
            json!({"type": "content_block_stop", "index": 0, "indx": 0}),
            [
                "request 1: /messages/0/content/0/content/0/tool_name \
                 (as ToolReferenceBlockParam): Field required",
                "event 1 (content_block_stop): /indx: unknown key",
            ],
        ),
    ];
    for (format, request, event, expected) in misspelt {
        let name = event["type"].clone();
        let checked = check_wire(&json!({"api": api(format), "requests": [request],
                                         "events": [{"event": name, "data": event}]}));
        assert!(!checked.passed, "{format:?}");
        for problem in expected {
            assert!(
                checked.stderr.contains(problem),
                "{format:?}: {problem:?} in\n{}",
                checked.stderr
            );
        }
    }
}
