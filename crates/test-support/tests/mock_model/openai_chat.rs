//! Chat completions: the chunks parse and accumulate to the scripted reply.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_test_support::{Fault, MockModel, Reply, Stop, WireFormat, sse_frames};

use crate::support::post;

const PATH: &str = "/v1/chat/completions";

/// What a chat stream adds up to.
#[derive(Debug, Default, PartialEq)]
struct Accumulated {
    text: String,
    reasoning: String,
    /// (id, name, arguments) by index.
    calls: Vec<(String, String, String)>,
    finish_reason: String,
    usage: Option<Value>,
}

fn accumulate(events: &[(Option<String>, Value)]) -> Accumulated {
    let mut out = Accumulated::default();
    let (last, chunks) = events.split_last().unwrap();
    assert_eq!(last, &(None, json!("[DONE]")));
    for (name, chunk) in chunks {
        assert_eq!(name, &None, "chat frames have no event line");
        assert_eq!(chunk["object"], "chat.completion.chunk");
        if chunk["choices"] == json!([]) {
            out.usage = Some(chunk["usage"].clone());
            continue;
        }
        let choice = &chunk["choices"][0];
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            out.text.push_str(text);
        }
        if let Some(text) = delta["reasoning_content"].as_str() {
            out.reasoning.push_str(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            if out.calls.len() <= index {
                out.calls.resize(index + 1, Default::default());
            }
            let entry = &mut out.calls[index];
            if let Some(id) = call["id"].as_str() {
                entry.0 = id.to_owned();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                entry.1.push_str(name);
            }
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                entry.2.push_str(arguments);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            out.finish_reason = reason.to_owned();
        }
    }
    out
}

fn streaming_request() -> Value {
    json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
           "messages": [{"role": "user", "content": "hi"}]})
}

#[tokio::test]
async fn chat_stream_accumulates_reasoning_text_and_split_calls() {
    let reply = Reply::text("Reading both — ünïcode.")
        .with_reasoning("The user wants two files.")
        .with_tool_call("call_1", "Read", json!({"path": "a.txt"}))
        .with_tool_call("call_2", "Read", json!({"path": "b.txt"}))
        .with_usage(120, 30, 100)
        .with_fault(Fault::SplitDeltas(3));
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.into()]).await;
    let response = post(&model, PATH, &streaming_request()).await;

    assert_eq!(response.status, 200);
    assert_eq!(
        response.headers["content-type"],
        "text/event-stream; charset=utf-8"
    );
    assert!(response.complete);
    let events = response.events();
    for (_, chunk) in &events[..events.len() - 2] {
        let delta = &chunk["choices"][0]["delta"];
        for piece in [&delta["content"], &delta["reasoning_content"]]
            .into_iter()
            .chain(
                delta["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| &c["function"]["arguments"]),
            )
        {
            assert!(piece.as_str().is_none_or(|s| s.len() <= 3), "{chunk}");
        }
    }
    let accumulated = accumulate(&events);
    assert_eq!(
        accumulated,
        Accumulated {
            text: "Reading both — ünïcode.".into(),
            reasoning: "The user wants two files.".into(),
            calls: vec![
                ("call_1".into(), "Read".into(), r#"{"path":"a.txt"}"#.into()),
                ("call_2".into(), "Read".into(), r#"{"path":"b.txt"}"#.into()),
            ],
            finish_reason: "tool_calls".into(),
            usage: Some(json!({
                "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                "prompt_tokens_details": {"cached_tokens": 100},
                "completion_tokens_details": {"reasoning_tokens": 0},
            })),
        }
    );
    assert_eq!(events[0].1["id"], "chatcmpl-1");
    assert_eq!(
        events[0].1["usage"],
        Value::Null,
        "usage: null on every other chunk"
    );
}

#[tokio::test]
async fn chat_server_sends_exactly_the_sse_frames() {
    let reply = Reply::tool_call("call_9", "Grep", json!({"pattern": "x"})).with_text("Looking.");
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.clone().into()]).await;
    let response = post(&model, PATH, &streaming_request()).await;
    assert_eq!(
        response.body,
        sse_frames(WireFormat::OpenAiChat, &reply).concat()
    );
    assert_eq!(
        response.frames()[1],
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\
         \"model\":\"mock-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Looking.\"},\
         \"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n"
    );
}

#[tokio::test]
async fn chat_usage_chunk_only_when_asked_for() {
    let model = MockModel::start(WireFormat::OpenAiChat, vec![Reply::text("hi").into()]).await;
    let response = post(&model, PATH, &json!({"stream": true, "messages": []})).await;
    let events = response.events();
    assert!(
        events.iter().all(|(_, chunk)| chunk.get("usage").is_none()),
        "{events:?}"
    );
    assert_eq!(accumulate(&events).finish_reason, "stop");
}

#[tokio::test]
async fn chat_name_arrives_after_the_id() {
    let reply = Reply::tool_call("call_1", "Read", json!({})).with_fault(Fault::NameAfterId);
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.into()]).await;
    let events = post(&model, PATH, &streaming_request()).await.events();
    let calls: Vec<&Value> = events
        .iter()
        .filter_map(|(_, chunk)| chunk["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(
        calls,
        vec![
            &json!({"index": 0, "id": "call_1", "type": "function"}),
            &json!({"index": 0, "function": {"name": "Read"}}),
            &json!({"index": 0, "function": {"arguments": "{}"}}),
        ]
    );
    assert_eq!(
        accumulate(&events).calls,
        vec![("call_1".into(), "Read".into(), "{}".into())]
    );
}

#[tokio::test]
async fn chat_calls_interleave_by_index() {
    let reply = Reply::tool_calls([
        ("c1", "Read", json!({"path": "one"})),
        ("c2", "Glob", json!({"pattern": "*"})),
    ])
    .with_fault(Fault::InterleaveCalls)
    .with_fault(Fault::SplitDeltas(5));
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.into()]).await;
    let events = post(&model, PATH, &streaming_request()).await.events();
    let order: Vec<u64> = events
        .iter()
        .filter_map(|(_, chunk)| chunk["choices"][0]["delta"]["tool_calls"][0]["index"].as_u64())
        .collect();
    assert_eq!(order, vec![0, 1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(
        accumulate(&events).calls,
        vec![
            ("c1".into(), "Read".into(), r#"{"path":"one"}"#.into()),
            ("c2".into(), "Glob".into(), r#"{"pattern":"*"}"#.into()),
        ]
    );
}

#[tokio::test]
async fn chat_raw_arguments_go_verbatim() {
    let reply = Reply::default()
        .with_raw_arguments("c1", "Write", r#"{"path": "a.t"#)
        .with_raw_arguments("c2", "Notify", "");
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.into()]).await;
    let calls = accumulate(&post(&model, PATH, &streaming_request()).await.events()).calls;
    assert_eq!(
        calls,
        vec![
            ("c1".into(), "Write".into(), r#"{"path": "a.t"#.into()),
            ("c2".into(), "Notify".into(), "".into()),
        ]
    );
}

#[tokio::test]
async fn chat_without_stream_returns_one_completion() {
    let reply = Reply::text("Done.")
        .with_reasoning("thought")
        .with_tool_call("c1", "Read", json!({"path": "x"}))
        .with_stop(Stop::MaxTokens)
        .with_usage(10, 2, 0)
        .with_model("local-qwen");
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.into()]).await;
    let response = post(&model, PATH, &json!({"messages": []})).await;
    assert_eq!(response.headers["content-type"], "application/json");
    assert_eq!(
        response.json(),
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
            "model": "local-qwen",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant", "content": "Done.", "refusal": null,
                    "reasoning_content": "thought",
                    "tool_calls": [{"id": "c1", "type": "function",
                                    "function": {"name": "Read", "arguments": "{\"path\":\"x\"}"}}],
                },
                "logprobs": null,
                "finish_reason": "length",
            }],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12,
                      "prompt_tokens_details": {"cached_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
        })
    );
}
