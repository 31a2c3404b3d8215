#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_core::conversation::{AssistantMessage, AssistantPart, StopReason, ToolCall, Usage};

use super::*;
use crate::config::Api;
use crate::provider::StreamEvent;
use crate::replay::{Ending, play_every_way, sample_request, sse};

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-B9",
        "object": "chat.completion.chunk",
        "created": 1_764_583_200,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    })
    .to_string()
}

fn usage_chunk() -> String {
    json!({
        "id": "chatcmpl-B9", "object": "chat.completion.chunk", "model": "gpt-4.1-2025-04-14",
        "choices": [],
        "usage": {
            "prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    })
    .to_string()
}

fn stream(chunks: &[String]) -> Vec<u8> {
    let mut events: Vec<(&str, &str)> = chunks.iter().map(|c| ("", c.as_str())).collect();
    events.push(("", "[DONE]"));
    sse(&events)
}

#[test]
fn a_text_answer_streams_its_deltas_and_usage() {
    let bytes = stream(&[
        chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ),
        chunk(json!({"content": "Hello"}), None),
        chunk(json!({"content": " wörld ✓"}), None),
        chunk(json!({}), Some("stop")),
        usage_chunk(),
    ]);
    let replay = play_every_way(Api::OpenAiChat, &bytes);
    assert_eq!(
        replay.message(),
        &AssistantMessage {
            content: vec![AssistantPart::Text {
                text: "Hello wörld ✓".into()
            }],
            stop_reason: StopReason::EndTurn,
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 40,
                cache_read_tokens: 1024,
                cache_write_tokens: 0
            },
            model: Some("gpt-4.1-2025-04-14".into()),
        }
    );
    assert_eq!(
        replay.events,
        vec![
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(" wörld ✓".into())
        ]
    );
}

#[test]
fn parallel_calls_interleave_by_index_with_names_after_ids_and_split_arguments() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, arguments: Option<&str>| {
        let mut function = Map::new();
        if let Some(name) = name {
            function.insert("name".into(), name.into());
        }
        if let Some(arguments) = arguments {
            function.insert("arguments".into(), arguments.into());
        }
        let mut call = json!({"index": index, "function": function});
        if let Some(id) = id {
            call["id"] = id.into();
            call["type"] = "function".into();
        }
        chunk(json!({"tool_calls": [call]}), None)
    };
    let bytes = stream(&[
        chunk(json!({"role": "assistant", "content": null}), None),
        call(0, Some("call_a"), None, Some("")),
        call(1, Some("call_b"), Some("Grep"), Some("{\"pat")),
        call(0, None, Some("Read"), None),
        call(0, None, None, Some("{\"path\":")),
        call(1, None, None, Some("tern\": \"fn ")),
        call(0, None, None, Some(" \"a.rs\"}")),
        call(1, None, None, Some("main\"}")),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(),
    ]);
    let replay = play_every_way(Api::OpenAiChat, &bytes);
    assert_eq!(
        replay.message().content,
        vec![
            AssistantPart::ToolCall(ToolCall {
                id: "call_a".into(),
                name: "Read".into(),
                arguments: r#"{"path": "a.rs"}"#.into()
            }),
            AssistantPart::ToolCall(ToolCall {
                id: "call_b".into(),
                name: "Grep".into(),
                arguments: r#"{"pattern": "fn main"}"#.into()
            }),
        ]
    );
    assert_eq!(replay.message().stop_reason, StopReason::ToolUse);
    assert_eq!(
        replay.events[..3],
        [
            StreamEvent::ToolCallStart {
                index: 1,
                id: "call_b".into(),
                name: "Grep".into()
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"pat".into()
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_a".into(),
                name: "Read".into()
            },
        ]
    );
}

#[test]
fn empty_and_truncated_arguments_are_kept_verbatim() {
    let bytes = stream(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "Status", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function", "function": {"name": "Read", "arguments": "{\"path\": \"a.t"}}]}),
            None,
        ),
        chunk(json!({}), Some("length")),
    ]);
    let message = play_every_way(Api::OpenAiChat, &bytes).message().clone();
    let arguments: Vec<_> = message.tool_calls().map(|c| c.arguments.as_str()).collect();
    assert_eq!(arguments, ["", "{\"path\": \"a.t"]);
    assert_eq!(message.stop_reason, StopReason::MaxTokens);
}

#[test]
fn reasoning_comes_from_reasoning_content_or_reasoning() {
    for key in ["reasoning_content", "reasoning"] {
        let bytes = stream(&[
            chunk(json!({key: "Think"}), None),
            chunk(json!({key: "ing."}), None),
            chunk(json!({"content": "Done."}), None),
            chunk(json!({}), Some("stop")),
        ]);
        assert_eq!(
            play_every_way(Api::OpenAiChat, &bytes).message().content,
            vec![
                AssistantPart::Reasoning {
                    text: "Thinking.".into(),
                    signature: None,
                    id: None
                },
                AssistantPart::Text {
                    text: "Done.".into()
                },
            ],
            "{key}"
        );
    }
}

#[test]
fn error_events_fail_the_stream_with_the_server_message() {
    let overloaded = sse(&[
        ("", &chunk(json!({"content": "Hi"}), None)),
        (
            "",
            r#"{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}"#,
        ),
    ]);
    assert_eq!(
        play_every_way(Api::OpenAiChat, &overloaded).ending,
        Ending::Failed(StreamFailure::Server {
            message: "The server is overloaded (server_error)".into(),
            retryable: true
        })
    );
    let old_llama_cpp = b"error: {\"code\":400,\"message\":\"the request exceeds the available context size\",\"type\":\"invalid_request_error\"}\n\ndata: [DONE]\n\n";
    assert_eq!(
        play_every_way(Api::OpenAiChat, old_llama_cpp).ending,
        Ending::Failed(StreamFailure::Server {
            message: "the request exceeds the available context size (invalid_request_error)"
                .into(),
            retryable: false
        })
    );
}

#[test]
fn a_stream_ending_after_its_finish_reason_is_whole_and_before_it_is_cut() {
    let no_done = sse(&[("", &chunk(json!({"content": "Hi"}), Some("stop")))]);
    assert_eq!(
        play_every_way(Api::OpenAiChat, &no_done).message().text(),
        "Hi"
    );
    let cut = sse(&[("", &chunk(json!({"content": "Hi"}), None))]);
    assert_eq!(play_every_way(Api::OpenAiChat, &cut).ending, Ending::Cut);
}

#[test]
fn the_request_carries_the_conversation_in_chat_form() {
    let config = ProviderConfig::new("local", Api::OpenAiChat, "http://127.0.0.1:8091/v1", "qwen");
    assert_eq!(
        crate::wire::full_body(&config, &sample_request()),
        json!({
            "model": "qwen",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "What does hello.txt say?"},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "Read", "arguments": "{\"path\":\"hello.txt\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "Grep", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1",
                 "content": "hello world\n[image/png image not shown]"},
                {"role": "tool", "tool_call_id": "call_2",
                 "content": "the arguments of Grep are not valid JSON"},
                {"role": "user", "content": "And in French?"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [
                {"type": "function", "function": {"name": "Read", "description": "Reads a file.",
                 "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
                {"type": "function", "function": {"name": "Grep", "description": "Searches files.",
                 "parameters": {"type": "object", "properties": {}}}},
            ],
            "max_tokens": 512,
        })
    );
    let openai = ProviderConfig::openai("gpt-5");
    let body = crate::wire::full_body(&openai, &sample_request());
    assert_eq!(body["max_completion_tokens"], 512);
    assert_eq!(body.get("max_tokens"), None);
}

#[test]
fn calls_without_index_and_with_object_arguments_are_read_in_order() {
    let bytes = stream(&[
        chunk(
            json!({"tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": {"path": "a"}}},
                {"id": "c2", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"b\"}"}},
            ]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ]);
    let message = play_every_way(Api::OpenAiChat, &bytes).message().clone();
    let calls: Vec<_> = message
        .tool_calls()
        .map(|c| (c.id.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [("c1", r#"{"path":"a"}"#), ("c2", r#"{"path":"b"}"#)]
    );
}

#[test]
fn a_configured_temperature_is_sent_in_every_format() {
    for api in [Api::OpenAiChat, Api::OpenAiResponses, Api::Anthropic] {
        let mut config = ProviderConfig::new("local", api, "http://127.0.0.1:8091/v1", "qwen");
        assert_eq!(
            crate::wire::full_body(&config, &sample_request()).get("temperature"),
            None
        );
        config.temperature = Some(0.0);
        assert_eq!(
            crate::wire::full_body(&config, &sample_request())["temperature"],
            0.0
        );
    }
}

#[test]
fn a_tool_search_result_names_the_tools_it_loaded_in_text_and_nothing_is_flagged() {
    let config = ProviderConfig::new("local", Api::OpenAiChat, "http://127.0.0.1:8091/v1", "m");
    let body = crate::wire::full_body(&config, &crate::replay::deferred_search_request());
    assert!(!body.to_string().contains("defer_loading"), "{body}");
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_2",
               "content": "Loaded 1 tool(s):\n- mcp__git__log: Shows the log.\n[loaded tool: mcp__git__log]"})
    );
}
