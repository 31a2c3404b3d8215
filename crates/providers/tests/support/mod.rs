//! What the provider tests share: a configuration for the [`ReplayServer`], an event
//! recorder, and canned event streams.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_providers::{Api, EventSink, ProviderConfig, RetryPolicy, StreamEvent, Timeouts};
use toolhost_test_support::ReplayServer;

/// A sink that keeps every event, and the list it fills.
pub fn recorder() -> (EventSink, Arc<Mutex<Vec<StreamEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    (
        Arc::new(move |event| seen.lock().unwrap().push(event)),
        events,
    )
}

/// A configuration for the mock: quick retries, short timeouts, a key.
pub fn config(api: Api, server: &ReplayServer) -> ProviderConfig {
    let base = match api {
        Api::Anthropic => server.url.clone(),
        _ => format!("{}/v1", server.url),
    };
    let mut config = ProviderConfig::new("mock", api, base, "test-model").with_api_key("test-key");
    config.retry = RetryPolicy {
        max_attempts: 4,
        initial_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(50),
    };
    config.timeouts = Timeouts {
        connect: Duration::from_secs(5),
        first_byte: Duration::from_secs(10),
        idle: Duration::from_secs(10),
        request: Duration::from_secs(30),
    };
    config
}

/// Writes `(event name, data)` pairs as an event stream; an empty name writes `data:` only.
pub fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.into_bytes()
}

/// A chat-completions chunk with this delta.
pub fn chat_chunk(delta: Value, finish: Option<&str>) -> (&'static str, Value) {
    (
        "",
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

/// A whole chat-completions stream answering `text` in two pieces, with usage and `[DONE]`.
pub fn chat_text(text: &str) -> Vec<u8> {
    let (head, tail) = text.split_at(text.len() / 2);
    let mut bytes = sse(&[
        chat_chunk(json!({"role": "assistant", "content": ""}), None),
        chat_chunk(json!({"content": head}), None),
        chat_chunk(json!({"content": tail}), None),
        chat_chunk(json!({}), Some("stop")),
        (
            "",
            json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                   "prompt_tokens_details": {"cached_tokens": 8}}}),
        ),
    ]);
    bytes.extend_from_slice(b"data: [DONE]\n\n");
    bytes
}

/// An Anthropic stream answering `text`.
pub fn anthropic_text(text: &str) -> Vec<u8> {
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "content": [], "model": "test-model",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 4}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// The text deltas among `events`, joined.
pub fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
