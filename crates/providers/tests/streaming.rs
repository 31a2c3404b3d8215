//! Each wire format against a scripted server over real HTTP: what comes back, and exactly
//! what was sent.

#![allow(clippy::unwrap_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost_core::ContentBlock;
use toolhost_core::ToolSpec;
use toolhost_core::conversation::{
    AssistantMessage, AssistantPart, Message, StopReason, ToolCall, ToolResultMessage, Usage,
};
use toolhost_providers::{Api, ModelRequest, ProviderError, StreamEvent, complete, connect};

use toolhost_test_support::{CannedResponse, ReplayServer};

use support::{anthropic_text, chat_chunk, chat_text, config, recorder, sse, streamed_text};

fn question() -> ModelRequest {
    ModelRequest {
        system: "Be brief.".into(),
        messages: vec![Message::user("What does hello.txt say?")],
        tools: vec![ToolSpec::new("Read", "Reads a file.")].into(),
        max_output_tokens: Some(100),
        ..ModelRequest::default()
    }
}

#[tokio::test]
async fn chat_completions_answer_with_text_usage_and_the_bearer_key() {
    let server = ReplayServer::start(vec![CannedResponse::sse(chat_text("Hello, world"))]).await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&question(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        message,
        AssistantMessage {
            content: vec![AssistantPart::Text {
                text: "Hello, world".into()
            }],
            stop_reason: StopReason::EndTurn,
            usage: Usage {
                input_tokens: 12,
                output_tokens: 3,
                cache_read_tokens: 8,
                cache_write_tokens: 0
            },
            model: Some("test-model".into()),
        }
    );
    let events = events.lock().unwrap().clone();
    assert_eq!(events[0], StreamEvent::RequestSent { attempt: 1 });
    assert_eq!(streamed_text(&events), "Hello, world");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].headers["authorization"], "Bearer test-key");
    assert_eq!(requests[0].headers["accept"], "text/event-stream");
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(requests[0].body["tools"][0]["function"]["name"], "Read");
}

#[tokio::test]
async fn chat_tool_calls_survive_tiny_tcp_pieces_interleaving_and_late_names() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, arguments: &str| {
        let mut call = json!({"index": index, "function": {"arguments": arguments}});
        if let Some(id) = id {
            call["id"] = id.into();
        }
        if let Some(name) = name {
            call["function"]["name"] = name.into();
        }
        chat_chunk(json!({"tool_calls": [call]}), None)
    };
    let mut bytes = sse(&[
        call(0, Some("call_a"), None, ""),
        call(1, Some("call_b"), Some("Grep"), ""),
        call(0, None, Some("Read"), "{\"path\":"),
        call(1, None, None, "{\"pattern\":\"x"),
        call(0, None, None, "\"ä.txt\"}"),
        call(2, Some("call_c"), Some("Status"), ""),
        call(1, None, None, ""),
        chat_chunk(json!({}), Some("tool_calls")),
    ]);
    bytes.extend_from_slice(b"data: [DONE]\n\n");
    let server = ReplayServer::start(vec![CannedResponse::sse_in_pieces(&bytes, 7)]).await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let message = complete(provider.as_ref(), &question(), CancellationToken::new())
        .await
        .unwrap();
    let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
    let call = |id: &str, name: &str, arguments: &str| ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    };
    assert_eq!(
        calls,
        vec![
            call("call_a", "Read", "{\"path\":\"ä.txt\"}"),
            call("call_b", "Grep", "{\"pattern\":\"x"),
            call("call_c", "Status", ""),
        ]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn responses_api_answers_a_call_and_is_sent_stateless() {
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "model": "test-model"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "Read", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": "{\"path\":"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": "\"hello.txt\"}"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{\"path\":\"hello.txt\"}"}}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "model": "test-model",
               "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9}}}),
    ];
    let pairs: Vec<(&str, serde_json::Value)> = events
        .iter()
        .map(|event| (event["type"].as_str().unwrap(), event.clone()))
        .collect();
    let server = ReplayServer::start(vec![CannedResponse::sse_in_pieces(&sse(&pairs), 11)]).await;
    let provider = connect(config(Api::OpenAiResponses, &server)).unwrap();
    let message = complete(provider.as_ref(), &question(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        message.content,
        vec![AssistantPart::ToolCall(ToolCall {
            id: "call_1".into(),
            name: "Read".into(),
            arguments: "{\"path\":\"hello.txt\"}".into()
        })]
    );
    assert_eq!(message.usage.input_tokens, 30);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.headers["authorization"], "Bearer test-key");
    assert_eq!(request.body["store"], false);
    assert_eq!(request.body["instructions"], "Be brief.");
    assert_eq!(request.body["tools"][0]["name"], "Read");
}

#[tokio::test]
async fn anthropic_answers_and_is_sent_its_headers_merged_results_and_breakpoints() {
    let server = ReplayServer::start(vec![CannedResponse::sse_in_pieces(
        &anthropic_text("Bonjour"),
        5,
    )])
    .await;
    let mut provider_config = config(Api::Anthropic, &server);
    provider_config
        .headers
        .insert("anthropic-beta".into(), "context-1m-2025-08-07".into());
    let provider = connect(provider_config).unwrap();
    let mut request = question();
    request.messages.extend([
        Message::Assistant(AssistantMessage {
            content: vec![
                AssistantPart::ToolCall(ToolCall {
                    id: "toolu_1".into(),
                    name: "Read".into(),
                    arguments: "{\"path\":\"hello.txt\"}".into(),
                }),
                AssistantPart::ToolCall(ToolCall {
                    id: "toolu_2".into(),
                    name: "Read".into(),
                    arguments: "{\"path\":".into(),
                }),
            ],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::default()
        }),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "toolu_1".into(),
            tool_name: "Read".into(),
            content: vec![ContentBlock::text("hello")],
            is_error: false,
        }),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "toolu_2".into(),
            tool_name: "Read".into(),
            content: vec![ContentBlock::text("bad arguments")],
            is_error: true,
        }),
    ]);
    let message = complete(provider.as_ref(), &request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "Bonjour");
    assert_eq!(message.usage.output_tokens, 4);

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "test-key");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert_eq!(sent.headers["anthropic-beta"], "context-1m-2025-08-07");
    assert_eq!(sent.headers.get("authorization"), None);
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "What does hello.txt say?", "cache_control": ephemeral}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "hello.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "hello"}]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                 "content": [{"type": "text", "text": "bad arguments"}], "cache_control": ephemeral}]},
        ])
    );
    assert_eq!(sent.body["system"][0]["cache_control"], ephemeral);
    assert_eq!(sent.body["tools"][0]["cache_control"], ephemeral);
    assert_eq!(sent.body["max_tokens"], 100);
}

#[tokio::test]
async fn a_refused_request_surfaces_the_server_message_without_retrying() {
    let server = ReplayServer::start(vec![CannedResponse::status(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
               "message": "messages: roles must alternate"}}),
    )])
    .await;
    let provider = connect(config(Api::Anthropic, &server)).unwrap();
    let (sink, events) = recorder();
    let error = provider
        .stream(&question(), sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ProviderError::Status { status: 400, message, .. }
            if message == "messages: roles must alternate"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "mock answered 400: messages: roles must alternate"
    );
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        *events.lock().unwrap(),
        vec![StreamEvent::RequestSent { attempt: 1 }]
    );
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_a_clear_error() {
    let server =
        ReplayServer::start(vec![CannedResponse::status(200, json!({"choices": []}))]).await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let error = complete(provider.as_ref(), &question(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("expected an event stream, got JSON"),
        "{error}"
    );
}
