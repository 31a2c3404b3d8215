#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_core::conversation::{AssistantMessage, ToolCall};

use super::*;
use crate::config::Api;
use crate::provider::StreamEvent;
use crate::replay::{Ending, play_every_way, sample_request, sse};

/// A stream as the Responses API sends it: `event:` names repeated in the data's `type`,
/// with sequence numbers.
fn stream(events: &[Value]) -> Vec<u8> {
    let texts: Vec<(String, String)> = events
        .iter()
        .enumerate()
        .map(|(sequence, event)| {
            let mut event = event.clone();
            event["sequence_number"] = sequence.into();
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

fn created() -> Value {
    json!({"type": "response.created", "response": {
        "id": "resp_67c", "object": "response", "status": "in_progress", "model": "gpt-5-2025-08-07",
        "output": [], "usage": null}})
}

fn completed(output: Value) -> Value {
    json!({"type": "response.completed", "response": {
        "id": "resp_67c", "object": "response", "status": "completed", "model": "gpt-5-2025-08-07",
        "output": output, "incomplete_details": null,
        "usage": {"input_tokens": 2000,
                  "input_tokens_details": {"cached_tokens": 1536, "cache_write_tokens": 256},
                  "output_tokens": 120, "output_tokens_details": {"reasoning_tokens": 64},
                  "total_tokens": 2120}}})
}

#[test]
fn reasoning_text_and_a_call_come_back_with_ids_encrypted_content_and_usage() {
    let reasoning_done = json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA-enc",
        "summary": [{"type": "summary_text", "text": "Need the file."}]});
    let call_done = json!({"id": "fc_1", "type": "function_call", "status": "completed",
        "call_id": "call_9", "name": "Read", "arguments": "{\"path\":\"a.rs\"}"});
    let bytes = stream(&[
        created(),
        json!({"type": "response.in_progress", "response": {"id": "resp_67c", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0,
               "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
               "summary_index": 0, "delta": "Need the "}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
               "summary_index": 0, "delta": "file."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_done}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "msg_1",
               "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
        json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1,
               "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
               "content_index": 0, "delta": "Reading."}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 1,
               "content_index": 0, "text": "Reading."}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"id": "fc_1",
               "type": "function_call", "status": "in_progress", "call_id": "call_9", "name": "Read",
               "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2,
               "delta": "{\"path\""}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2,
               "delta": ":\"a.rs\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2,
               "arguments": "{\"path\":\"a.rs\"}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": call_done}),
        completed(json!([])),
    ]);
    let replay = play_every_way(Api::OpenAiResponses, &bytes);
    assert_eq!(
        replay.message(),
        &AssistantMessage {
            content: vec![
                AssistantPart::Reasoning {
                    text: "Need the file.".into(),
                    signature: Some("gAAAA-enc".into()),
                    id: Some("rs_1".into())
                },
                AssistantPart::Text {
                    text: "Reading.".into()
                },
                AssistantPart::ToolCall(ToolCall {
                    id: "call_9".into(),
                    name: "Read".into(),
                    arguments: "{\"path\":\"a.rs\"}".into()
                }),
            ],
            stop_reason: StopReason::ToolUse,
            usage: Usage {
                input_tokens: 2000,
                output_tokens: 120,
                cache_read_tokens: 1536,
                cache_write_tokens: 256
            },
            model: Some("gpt-5-2025-08-07".into()),
        }
    );
    assert_eq!(
        replay.events,
        vec![
            StreamEvent::ReasoningDelta("Need the ".into()),
            StreamEvent::ReasoningDelta("file.".into()),
            StreamEvent::TextDelta("Reading.".into()),
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_9".into(),
                name: "Read".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"path\"".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: ":\"a.rs\"}".into()
            },
        ]
    );
}

#[test]
fn arguments_only_in_the_done_event_still_arrive_and_cut_ones_stay_cut() {
    let bytes = stream(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "fc_1",
               "type": "function_call", "call_id": "call_1", "name": "Read", "arguments": ""}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "fc_1",
               "type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{\"path\":\"x\"}"}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "fc_2",
               "type": "function_call", "call_id": "call_2", "name": "Grep", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"pat"}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete",
               "incomplete_details": {"reason": "max_output_tokens"},
               "usage": {"input_tokens": 10, "output_tokens": 5}}}),
    ]);
    let message = play_every_way(Api::OpenAiResponses, &bytes)
        .message()
        .clone();
    let arguments: Vec<_> = message.tool_calls().map(|c| c.arguments.as_str()).collect();
    assert_eq!(arguments, ["{\"path\":\"x\"}", "{\"pat"]);
    assert_eq!(message.stop_reason, StopReason::MaxTokens);
}

#[test]
fn failures_report_the_server_message() {
    let failed = stream(&[
        created(),
        json!({"type": "response.failed", "response": {"status": "failed",
               "error": {"code": "server_error", "message": "The model had an error."}}}),
    ]);
    assert_eq!(
        play_every_way(Api::OpenAiResponses, &failed).ending,
        Ending::Failed(StreamFailure::Server {
            message: "The model had an error. (server_error)".into(),
            retryable: true
        })
    );
    let error = stream(&[
        json!({"type": "error", "code": "invalid_prompt", "message": "Bad prompt.", "param": null}),
    ]);
    assert_eq!(
        play_every_way(Api::OpenAiResponses, &error).ending,
        Ending::Failed(StreamFailure::Server {
            message: "Bad prompt. (invalid_prompt)".into(),
            retryable: false
        })
    );
    let cut = stream(&[created()]);
    assert_eq!(
        play_every_way(Api::OpenAiResponses, &cut).ending,
        Ending::Cut
    );
}

#[test]
fn the_request_carries_items_instructions_and_stateless_reasoning() {
    let mut request = sample_request();
    if let Message::Assistant(assistant) = &mut request.messages[1] {
        assistant.content[0] = AssistantPart::Reasoning {
            text: "Read it.".into(),
            signature: Some("gAAAA-enc".into()),
            id: Some("rs_1".into()),
        };
        assistant.content.insert(
            0,
            AssistantPart::Reasoning {
                text: "from Claude".into(),
                signature: Some("sig".into()),
                id: None,
            },
        );
    }
    let config = ProviderConfig::new(
        "openai",
        Api::OpenAiResponses,
        "https://api.openai.com/v1",
        "gpt-5",
    );
    assert_eq!(
        crate::wire::full_body(&config, &request),
        json!({
            "model": "gpt-5",
            "input": [
                {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "What does hello.txt say?"}]},
                {"type": "reasoning", "id": "rs_1",
                 "summary": [{"type": "summary_text", "text": "Read it."}],
                 "encrypted_content": "gAAAA-enc"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
                {"type": "function_call", "call_id": "call_1", "name": "Read",
                 "arguments": "{\"path\":\"hello.txt\"}"},
                {"type": "function_call", "call_id": "call_2", "name": "Grep", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": [
                    {"type": "input_text", "text": "hello world"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K"},
                ]},
                {"type": "function_call_output", "call_id": "call_2",
                 "output": "the arguments of Grep are not valid JSON"},
                {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "And in French?"}]},
            ],
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "instructions": "You are terse.",
            "tools": [
                {"type": "function", "name": "Read", "description": "Reads a file.", "strict": false,
                 "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
                {"type": "function", "name": "Grep", "description": "Searches files.", "strict": false,
                 "parameters": {"type": "object", "properties": {}}},
            ],
            "max_output_tokens": 512,
        })
    );
}

#[test]
fn deferred_tools_are_flagged_and_tool_search_is_the_client_executed_tool_search() {
    let config = ProviderConfig::new("o", Api::OpenAiResponses, "http://127.0.0.1:8091/v1", "m");
    let schema = json!({"type": "object", "properties": {}});
    let body = crate::wire::full_body(&config, &crate::replay::deferred_search_request());
    assert_eq!(
        body["tools"],
        json!([
            {"type": "function", "name": "Read", "description": "Reads a file.",
             "parameters": schema, "strict": false},
            {"type": "tool_search", "execution": "client",
             "description": "Finds deferred tools.", "parameters": schema},
            {"type": "function", "name": "mcp__git__log", "description": "Shows the log.",
             "parameters": schema, "strict": false, "defer_loading": true},
            {"type": "function", "name": "mcp__web__fetch", "description": "Fetches a page.",
             "parameters": schema, "strict": false, "defer_loading": true},
        ])
    );
}

#[test]
fn a_search_goes_back_as_its_tool_search_call_and_an_output_with_the_loaded_definitions() {
    let config = ProviderConfig::new("o", Api::OpenAiResponses, "http://127.0.0.1:8091/v1", "m");
    let body = crate::wire::full_body(&config, &crate::replay::deferred_search_request());
    let loaded = body["tools"][2].clone();
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Show the log."}]},
            {"type": "tool_search_call", "call_id": "call_1", "execution": "client",
             "status": "completed", "arguments": {"query": "commit log"}},
            {"type": "tool_search_call", "call_id": "call_2", "execution": "client",
             "status": "completed", "arguments": {"query": "commit log"}},
            // A tool deferred no more (sent in full, or gone) is not loaded again.
            {"type": "tool_search_output", "call_id": "call_1", "execution": "client",
             "status": "completed", "tools": []},
            // The loaded tool's definition, as `tools` has it.
            {"type": "tool_search_output", "call_id": "call_2", "execution": "client",
             "status": "completed", "tools": [loaded]},
        ])
    );
}

#[test]
fn a_streamed_tool_search_call_is_a_call_of_tool_search_with_its_object_arguments() {
    let added = json!({"id": "tsc_1", "type": "tool_search_call", "status": "in_progress",
        "call_id": "call_s1", "execution": "client", "arguments": {}});
    let done = json!({"id": "tsc_1", "type": "tool_search_call", "status": "completed",
        "call_id": "call_s1", "execution": "client",
        "arguments": {"query": "commit log", "max_results": 2}});
    // A search the server ran itself is none of ours.
    let hosted = json!({"id": "tsc_2", "type": "tool_search_call", "status": "completed",
        "call_id": null, "execution": "server", "arguments": {"paths": ["git"]}});
    let bytes = stream(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": hosted}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": hosted}),
        completed(json!([done, hosted])),
    ]);
    let replay = play_every_way(Api::OpenAiResponses, &bytes);
    assert_eq!(
        replay.message().content,
        vec![AssistantPart::ToolCall(ToolCall {
            id: "call_s1".into(),
            name: "tool_search".into(),
            arguments: r#"{"query":"commit log","max_results":2}"#.into(),
        })]
    );
    assert_eq!(replay.message().stop_reason, StopReason::ToolUse);
    assert_eq!(
        replay.events,
        vec![
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_s1".into(),
                name: "tool_search".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: r#"{"query":"commit log","max_results":2}"#.into()
            },
        ]
    );
}

#[test]
fn without_native_deferral_a_search_is_a_function_call_whose_output_names_what_it_loaded() {
    let config = ProviderConfig::new("o", Api::OpenAiResponses, "http://127.0.0.1:8091/v1", "m");
    let mut request = crate::replay::deferred_search_request();
    request.deferred_tools = Default::default();
    let body = crate::wire::full_body(&config, &request);
    assert!(!body.to_string().contains("defer_loading"), "{body}");
    assert!(!body.to_string().contains("tool_search_"), "{body}");
    assert_eq!(
        body["tools"][1],
        json!({"type": "function", "name": "tool_search", "description": "Finds deferred tools.",
               "parameters": {"type": "object", "properties": {}}, "strict": false})
    );
    assert_eq!(
        body["input"][2],
        json!({"type": "function_call", "call_id": "call_2", "name": "tool_search",
               "arguments": "{\"query\":\"commit log\"}"})
    );
    assert_eq!(
        body["input"][4],
        json!({"type": "function_call_output", "call_id": "call_2",
               "output": "Loaded 1 tool(s):\n- mcp__git__log: Shows the log.\n[loaded tool: mcp__git__log]"})
    );
}

#[test]
fn the_responses_api_defers_natively_unless_native_tool_search_is_off() {
    let mut config =
        ProviderConfig::new("o", Api::OpenAiResponses, "http://127.0.0.1:8091/v1", "m");
    let loading =
        |config: &ProviderConfig| crate::connect(config.clone()).unwrap().deferred_loading();
    assert_eq!(loading(&config), crate::DeferredLoading::Native);
    config.native_tool_search = false;
    assert_eq!(loading(&config), crate::DeferredLoading::Injected);
}

#[test]
fn an_effort_is_sent_as_reasoning_effort_and_max_as_high() {
    let config = ProviderConfig::new("o", Api::OpenAiResponses, "http://127.0.0.1:8091/v1", "m");
    let mut request = sample_request();
    request.reasoning_effort = Some(toolhost_config::ReasoningEffort::Max);
    let body = request_body(&config, &request);
    assert_eq!(body["reasoning"], json!({"effort": "high"}));
}
