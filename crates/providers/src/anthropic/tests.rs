#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_core::conversation::{AssistantMessage, ToolCall};

use super::*;
use crate::config::Api;
use crate::provider::StreamEvent;
use crate::replay::{Ending, play_every_way, sample_request, sse};

/// A stream as Anthropic sends it: each event named, its data repeating the name in `type`.
fn stream(events: &[Value]) -> Vec<u8> {
    let texts: Vec<(String, String)> = events
        .iter()
        .map(|event| {
            (
                event["type"].as_str().unwrap().to_owned(),
                event.to_string(),
            )
        })
        .collect();
    let pairs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_str()))
        .collect();
    sse(&pairs)
}

fn message_start() -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_014p7", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-5-20250929", "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 25, "cache_creation_input_tokens": 1200,
                  "cache_read_input_tokens": 3000, "output_tokens": 1}}})
}

fn delta(index: u64, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_end(reason: &str, output_tokens: u64) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
               "usage": {"output_tokens": output_tokens}}),
        json!({"type": "message_stop"}),
    ]
}

#[test]
fn thinking_text_and_parallel_tool_use_stream_with_signature_and_usage() {
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "The user wants "}),
        ),
        json!({"type": "ping"}),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "two files."}),
        ),
        delta(
            0,
            json!({"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"}),
        ),
        stop(0),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        delta(1, json!({"type": "text_delta", "text": "Reading both."})),
        stop(1),
        json!({"type": "content_block_start", "index": 2, "content_block":
               {"type": "tool_use", "id": "toolu_01A", "name": "Read", "input": {}}}),
        delta(2, json!({"type": "input_json_delta", "partial_json": ""})),
        delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"path\": \"a"}),
        ),
        delta(
            2,
            json!({"type": "input_json_delta", "partial_json": ".rs\"}"}),
        ),
        stop(2),
        json!({"type": "content_block_start", "index": 3, "content_block":
               {"type": "tool_use", "id": "toolu_01B", "name": "Status", "input": {}}}),
        stop(3),
    ];
    events.extend(message_end("tool_use", 89));
    let replay = play_every_way(Api::Anthropic, &stream(&events));
    assert_eq!(
        replay.message(),
        &AssistantMessage {
            content: vec![
                AssistantPart::Reasoning {
                    text: "The user wants two files.".into(),
                    signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA".into()),
                    id: None
                },
                AssistantPart::Text {
                    text: "Reading both.".into()
                },
                AssistantPart::ToolCall(ToolCall {
                    id: "toolu_01A".into(),
                    name: "Read".into(),
                    arguments: "{\"path\": \"a.rs\"}".into()
                }),
                AssistantPart::ToolCall(ToolCall {
                    id: "toolu_01B".into(),
                    name: "Status".into(),
                    arguments: "{}".into()
                }),
            ],
            stop_reason: StopReason::ToolUse,
            usage: Usage {
                input_tokens: 4225,
                output_tokens: 89,
                cache_read_tokens: 3000,
                cache_write_tokens: 1200
            },
            model: Some("claude-sonnet-4-5-20250929".into()),
        }
    );
    assert_eq!(
        replay.events[3..6],
        [
            StreamEvent::ToolCallStart {
                index: 0,
                id: "toolu_01A".into(),
                name: "Read".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"path\": \"a".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: ".rs\"}".into()
            },
        ]
    );
}

#[test]
fn a_cut_tool_input_is_kept_and_redacted_thinking_is_marked() {
    let mut events = vec![
        message_start(),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"}}),
        stop(0),
        json!({"type": "content_block_start", "index": 1, "content_block":
               {"type": "tool_use", "id": "toolu_01C", "name": "Write", "input": {}}}),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"path\": \"b.txt\", \"content\": \"ha"}),
        ),
        stop(1),
    ];
    events.extend(message_end("max_tokens", 4096));
    let message = play_every_way(Api::Anthropic, &stream(&events))
        .message()
        .clone();
    assert_eq!(
        message.content,
        vec![
            AssistantPart::Reasoning {
                text: String::new(),
                signature: Some("EmwKAhgBEgy3va3p".into()),
                id: Some(REDACTED_THINKING.into())
            },
            AssistantPart::ToolCall(ToolCall {
                id: "toolu_01C".into(),
                name: "Write".into(),
                arguments: "{\"path\": \"b.txt\", \"content\": \"ha".into()
            }),
        ]
    );
    assert_eq!(message.stop_reason, StopReason::MaxTokens);
}

#[test]
fn an_overloaded_error_event_is_retryable_and_an_early_end_is_cut() {
    let events = [
        message_start(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    assert_eq!(
        play_every_way(Api::Anthropic, &stream(&events)).ending,
        Ending::Failed(StreamFailure::Server {
            message: "Overloaded (overloaded_error)".into(),
            retryable: true
        })
    );
    let cut = [
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        delta(0, json!({"type": "text_delta", "text": "Hel"})),
    ];
    assert_eq!(
        play_every_way(Api::Anthropic, &stream(&cut)).ending,
        Ending::Cut
    );
}

#[test]
fn the_request_merges_tool_results_and_places_four_cache_breakpoints() {
    let config = ProviderConfig::anthropic("claude-sonnet-4-5");
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        crate::wire::full_body(&config, &sample_request()),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 512,
            "stream": true,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": ephemeral}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "What does hello.txt say?", "cache_control": ephemeral},
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Read it.", "signature": "sig-1"},
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"path": "hello.txt"}},
                    {"type": "tool_use", "id": "call_2", "name": "Grep", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": [
                        {"type": "text", "text": "hello world"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
                    ]},
                    {"type": "tool_result", "tool_use_id": "call_2", "is_error": true, "content": [
                        {"type": "text", "text": "the arguments of Grep are not valid JSON"},
                    ]},
                    {"type": "text", "text": "And in French?", "cache_control": ephemeral},
                ]},
            ],
            "tools": [
                {"name": "Read", "description": "Reads a file.",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
                {"name": "Grep", "description": "Searches files.",
                 "input_schema": {"type": "object", "properties": {}}, "cache_control": ephemeral},
            ],
        })
    );
}

#[test]
fn without_the_cache_no_breakpoint_and_foreign_reasoning_stays_home() {
    let mut config = ProviderConfig::anthropic("claude-sonnet-4-5");
    config.prompt_cache = false;
    let mut request = sample_request();
    request.max_output_tokens = None;
    if let Message::Assistant(assistant) = &mut request.messages[1] {
        assistant.content[0] = AssistantPart::Reasoning {
            text: "OpenAI's".into(),
            signature: Some("gAAAA".into()),
            id: Some("rs_1".into()),
        };
    }
    let body = crate::wire::full_body(&config, &request);
    assert!(!body.to_string().contains("cache_control"), "{body}");
    assert_eq!(body["max_tokens"], DEFAULT_ANTHROPIC_MAX_OUTPUT_TOKENS);
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "text", "text": "Let me look."})
    );
}

#[test]
fn deferred_tools_are_flagged_and_a_search_result_goes_back_as_tool_references() {
    let config = ProviderConfig::anthropic("claude-sonnet-4-5");
    let ephemeral = json!({"type": "ephemeral"});
    let schema = json!({"type": "object", "properties": {}});
    let body = crate::wire::full_body(&config, &crate::replay::deferred_search_request());
    assert_eq!(
        body["tools"],
        json!([
            {"name": "Read", "description": "Reads a file.", "input_schema": schema},
            // The cached prefix ends at the last tool sent in full.
            {"name": "tool_search", "description": "Finds deferred tools.",
             "input_schema": schema, "cache_control": ephemeral},
            {"name": "mcp__git__log", "description": "Shows the log.",
             "input_schema": schema, "defer_loading": true},
            {"name": "mcp__web__fetch", "description": "Fetches a page.",
             "input_schema": schema, "defer_loading": true},
        ])
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            // A tool deferred no more cannot be referenced: its result is text.
            {"type": "tool_result", "tool_use_id": "call_1", "content": [
                {"type": "text", "text": "Loaded 1 tool(s):\n- mcp__old__gone: Shows the log."},
                {"type": "text", "text": "[loaded tool: mcp__old__gone]"},
            ]},
            {"type": "tool_result", "tool_use_id": "call_2", "cache_control": ephemeral, "content": [
                {"type": "tool_reference", "tool_name": "mcp__git__log"},
            ]},
        ]})
    );
}

#[test]
fn without_native_deferral_nothing_is_flagged_and_references_are_text() {
    let config = ProviderConfig::anthropic("claude-sonnet-4-5");
    let mut request = crate::replay::deferred_search_request();
    request.deferred_tools = Default::default();
    let body = crate::wire::full_body(&config, &request);
    assert!(!body.to_string().contains("defer_loading"), "{body}");
    assert!(!body.to_string().contains("tool_reference"), "{body}");
    assert_eq!(
        body["messages"][2]["content"][1]["content"][1],
        json!({"type": "text", "text": "[loaded tool: mcp__git__log]"})
    );
}

#[test]
fn an_effort_turns_thinking_on_with_room_for_the_answer_and_no_temperature() {
    let mut config = ProviderConfig::anthropic("claude-sonnet-4-5");
    config.temperature = Some(0.2);
    let mut request = sample_request();
    request.max_output_tokens = Some(1000);
    request.reasoning_effort = Some(toolhost_config::ReasoningEffort::High);
    let body = crate::wire::full_body(&config, &request);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 16_384})
    );
    assert_eq!(body["max_tokens"], 16_384 + THINKING_ANSWER_ROOM);
    assert_eq!(body.get("temperature"), None);

    request.reasoning_effort = None;
    let body = crate::wire::full_body(&config, &request);
    assert_eq!(body.get("thinking"), None);
    assert_eq!(body["max_tokens"], 1000);
}
