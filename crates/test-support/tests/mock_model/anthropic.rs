//! Anthropic messages: the event flow, thinking with its signature, tool input JSON.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_test_support::{Fault, MockModel, Reply, Step, WireFormat, sse_frames};

use crate::support::post;

const PATH: &str = "/v1/messages";

#[derive(Debug, Default, PartialEq)]
struct Accumulated {
    /// (type, text or id/name, accumulated delta, signature) per block index.
    blocks: Vec<(String, String, String, String)>,
    stop_reason: String,
    input_usage: Value,
    output_tokens: u64,
}

fn accumulate(events: &[(Option<String>, Value)]) -> Accumulated {
    let mut out = Accumulated::default();
    let mut open = std::collections::BTreeSet::new();
    assert_eq!(events[0].1["type"], "message_start");
    assert_eq!(events.last().unwrap().1, json!({"type": "message_stop"}));
    for (name, event) in events {
        assert_eq!(
            name.as_deref(),
            event["type"].as_str(),
            "event line matches type"
        );
        match event["type"].as_str().unwrap() {
            "message_start" => out.input_usage = event["message"]["usage"].clone(),
            "content_block_start" => {
                let index = event["index"].as_u64().unwrap() as usize;
                assert_eq!(index, out.blocks.len());
                assert!(open.insert(index));
                let block = &event["content_block"];
                let label = match block["type"].as_str().unwrap() {
                    "tool_use" => format!("{} {}", block["id"].as_str().unwrap(), block["name"]),
                    _ => String::new(),
                };
                out.blocks.push((
                    block["type"].as_str().unwrap().into(),
                    label,
                    String::new(),
                    String::new(),
                ));
            }
            "content_block_delta" => {
                let index = event["index"].as_u64().unwrap() as usize;
                assert!(open.contains(&index), "delta of an open block");
                let delta = &event["delta"];
                let block = &mut out.blocks[index];
                match delta["type"].as_str().unwrap() {
                    "text_delta" => block.2.push_str(delta["text"].as_str().unwrap()),
                    "thinking_delta" => block.2.push_str(delta["thinking"].as_str().unwrap()),
                    "input_json_delta" => block.2.push_str(delta["partial_json"].as_str().unwrap()),
                    "signature_delta" => block.3.push_str(delta["signature"].as_str().unwrap()),
                    other => panic!("unknown delta {other}"),
                }
            }
            "content_block_stop" => {
                assert!(open.remove(&(event["index"].as_u64().unwrap() as usize)))
            }
            "message_delta" => {
                out.stop_reason = event["delta"]["stop_reason"].as_str().unwrap().into();
                out.output_tokens = event["usage"]["output_tokens"].as_u64().unwrap();
            }
            "ping" | "message_stop" => {}
            other => panic!("unknown event {other}"),
        }
    }
    assert!(open.is_empty());
    out
}

#[tokio::test]
async fn anthropic_stream_accumulates_thinking_text_and_tool_input() {
    let reply = Reply::text("Reading it.")
        .with_reasoning("Need the file.")
        .with_reasoning_signature("EqQBsig==")
        .with_tool_call("toolu_1", "Read", json!({"path": "hello.txt"}))
        .with_usage(1000, 25, 800)
        .with_cache_write(150)
        .with_fault(Fault::SplitDeltas(2));
    let model = MockModel::start(WireFormat::Anthropic, vec![reply.clone().into()]).await;
    let response = post(
        &model,
        PATH,
        &json!({"model": "m", "stream": true, "messages": []}),
    )
    .await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.body,
        sse_frames(WireFormat::Anthropic, &reply).concat()
    );
    let events = response.events();
    assert_eq!(
        accumulate(&events),
        Accumulated {
            blocks: vec![
                (
                    "thinking".into(),
                    "".into(),
                    "Need the file.".into(),
                    "EqQBsig==".into()
                ),
                ("text".into(), "".into(), "Reading it.".into(), "".into()),
                (
                    "tool_use".into(),
                    "toolu_1 \"Read\"".into(),
                    r#"{"path":"hello.txt"}"#.into(),
                    "".into()
                ),
            ],
            stop_reason: "tool_use".into(),
            input_usage: json!({"input_tokens": 50, "cache_creation_input_tokens": 150,
                                "cache_read_input_tokens": 800, "output_tokens": 1}),
            output_tokens: 25,
        }
    );
    let frames = response.frames();
    assert_eq!(
        frames[2], "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "ping after the first block starts"
    );
    assert_eq!(events[0].1["message"]["id"], "msg_1");
}

#[tokio::test]
async fn anthropic_tool_input_starts_with_an_empty_partial() {
    let frames = sse_frames(
        WireFormat::Anthropic,
        &Reply::tool_call("toolu_9", "Glob", json!({})),
    );
    assert_eq!(
        frames[1..5],
        [
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\
             \"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"Glob\",\"input\":{}}            }\n\n",
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
             \"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
             \"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
        ]
    );
}

#[tokio::test]
async fn anthropic_overloaded_is_529_in_the_error_shape() {
    let model = MockModel::start(WireFormat::Anthropic, vec![Step::overloaded()]).await;
    let response = post(&model, PATH, &json!({"stream": true})).await;
    assert_eq!(response.status, 529);
    assert_eq!(response.headers["content-type"], "application/json");
    assert_eq!(
        response.json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
}

#[tokio::test]
async fn anthropic_without_stream_returns_the_message() {
    let reply = Reply::text("Hello.").with_raw_arguments("toolu_2", "Write", "{\"path\":");
    let model = MockModel::start(WireFormat::Anthropic, vec![reply.into()]).await;
    let body = post(&model, PATH, &json!({"messages": []})).await.json();
    assert_eq!(
        body,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "mock-model",
            "content": [
                {"type": "text", "text": "Hello."},
                {"type": "tool_use", "id": "toolu_2", "name": "Write", "input": "{\"path\":"},
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 0},
        })
    );
}
