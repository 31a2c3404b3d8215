//! The Responses API: typed events with sequence numbers that accumulate to the reply.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_test_support::{Fault, MockModel, Reply, Stop, WireFormat, response_body, sse_frames};

use crate::support::post;

const PATH: &str = "/v1/responses";

#[derive(Debug, Default, PartialEq)]
struct Accumulated {
    text: String,
    reasoning: String,
    /// (call_id, name, arguments) by output index order.
    calls: Vec<(String, String, String)>,
    end: String,
    usage: Value,
}

fn accumulate(events: &[(Option<String>, Value)]) -> Accumulated {
    let mut out = Accumulated::default();
    let mut call_at = std::collections::BTreeMap::new();
    for (sequence, (name, event)) in events.iter().enumerate() {
        assert_eq!(
            name.as_deref(),
            event["type"].as_str(),
            "event line matches type"
        );
        assert_eq!(event["sequence_number"], json!(sequence));
        match event["type"].as_str().unwrap() {
            "response.output_text.delta" => out.text.push_str(event["delta"].as_str().unwrap()),
            "response.reasoning_summary_text.delta" => {
                out.reasoning.push_str(event["delta"].as_str().unwrap());
            }
            "response.output_item.added" if event["item"]["type"] == "function_call" => {
                let item = &event["item"];
                call_at.insert(event["output_index"].as_u64().unwrap(), out.calls.len());
                out.calls.push((
                    item["call_id"].as_str().unwrap().into(),
                    item["name"].as_str().unwrap().into(),
                    String::new(),
                ));
            }
            "response.function_call_arguments.delta" => {
                let index = call_at[&event["output_index"].as_u64().unwrap()];
                out.calls[index]
                    .2
                    .push_str(event["delta"].as_str().unwrap());
            }
            "response.function_call_arguments.done" => {
                let index = call_at[&event["output_index"].as_u64().unwrap()];
                assert_eq!(event["arguments"].as_str().unwrap(), out.calls[index].2);
            }
            end @ ("response.completed" | "response.incomplete") => {
                out.end = end.to_owned();
                out.usage = event["response"]["usage"].clone();
            }
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn responses_stream_accumulates_and_numbers_every_event() {
    let reply = Reply::text("Both read.")
        .with_reasoning("Two files to read.")
        .with_reasoning_signature("gAAAA-encrypted")
        .with_tool_call("call_a", "Read", json!({"path": "a"}))
        .with_tool_call("call_b", "Read", json!({"path": "b"}))
        .with_usage(50, 12, 40)
        .with_fault(Fault::SplitDeltas(4))
        .with_fault(Fault::InterleaveCalls);
    let model = MockModel::start(WireFormat::OpenAiResponses, vec![reply.clone().into()]).await;
    let response = post(
        &model,
        PATH,
        &json!({"model": "m", "stream": true, "input": []}),
    )
    .await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.body,
        sse_frames(WireFormat::OpenAiResponses, &reply).concat()
    );
    let events = response.events();
    assert_eq!(
        accumulate(&events),
        Accumulated {
            text: "Both read.".into(),
            reasoning: "Two files to read.".into(),
            calls: vec![
                ("call_a".into(), "Read".into(), r#"{"path":"a"}"#.into()),
                ("call_b".into(), "Read".into(), r#"{"path":"b"}"#.into()),
            ],
            end: "response.completed".into(),
            usage: json!({
                "input_tokens": 50,
                "input_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 0},
                "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 62,
            }),
        }
    );
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        &kinds[..3],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added"
        ]
    );
    let reasoning_done = events
        .iter()
        .find(|(_, e)| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning")
        .unwrap();
    assert_eq!(
        reasoning_done.1["item"]["encrypted_content"],
        "gAAAA-encrypted"
    );
    assert_eq!(events[0].1["response"]["id"], "resp_1");
}

#[tokio::test]
async fn responses_first_events_are_byte_exact() {
    let frames = sse_frames(WireFormat::OpenAiResponses, &Reply::text("Hi"));
    assert_eq!(
        frames[4],
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\
         \"sequence_number\":4,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\
         \"delta\":\"Hi\",\"logprobs\":[]}\n\n"
    );
    assert_eq!(frames.len(), 9);
}

#[tokio::test]
async fn responses_max_tokens_ends_incomplete() {
    let reply = Reply::text("cut sh").with_stop(Stop::MaxTokens);
    let model = MockModel::start(WireFormat::OpenAiResponses, vec![reply.into()]).await;
    let events = post(&model, PATH, &json!({"stream": true})).await.events();
    let (_, last) = events.last().unwrap();
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["status"], "incomplete");
    assert_eq!(
        last["response"]["incomplete_details"],
        json!({"reason": "max_output_tokens"})
    );
}

#[tokio::test]
async fn responses_without_stream_returns_the_response_object() {
    let reply = Reply::tool_call("call_1", "Read", json!({"path": "x"})).with_usage(9, 3, 0);
    let model = MockModel::start(WireFormat::OpenAiResponses, vec![reply.clone().into()]).await;
    let body = post(&model, PATH, &json!({"input": "hi"})).await.json();
    assert_eq!(body, response_body(WireFormat::OpenAiResponses, &reply));
    assert_eq!(
        body["output"],
        json!([{"id": "fc_1_1", "type": "function_call", "status": "completed",
                "arguments": "{\"path\":\"x\"}", "call_id": "call_1", "name": "Read"}])
    );
    assert_eq!(body["status"], "completed");
}

#[tokio::test]
async fn a_tool_search_call_is_a_tool_search_call_item_with_object_arguments_and_no_deltas() {
    let reply = Reply::default()
        .with_tool_search_call("call_s", json!({"query": "commit log"}))
        .with_tool_call("call_r", "Read", json!({"path": "x"}))
        .with_fault(Fault::SplitDeltas(3));
    let frames = sse_frames(WireFormat::OpenAiResponses, &reply);
    let events: Vec<Value> = frames
        .iter()
        .map(|frame| crate::support::parse_frame(frame).1)
        .filter(|event| event["output_index"] == 0)
        .collect();
    let item = json!({"id": "tsc_1_1", "type": "tool_search_call", "status": "completed",
        "call_id": "call_s", "execution": "client", "arguments": {"query": "commit log"}});
    assert_eq!(
        events,
        [
            json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
                   "item": {"id": "tsc_1_1", "type": "tool_search_call", "status": "in_progress",
                            "call_id": "call_s", "execution": "client", "arguments": {}}}),
            json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
                   "item": item}),
        ]
    );
    let body = response_body(WireFormat::OpenAiResponses, &reply);
    assert_eq!(body["output"][0], item);
    assert_eq!(body["output"][1]["type"], "function_call");

    // The other formats play it as a call of the tool `tool_search`.
    let chat = response_body(WireFormat::OpenAiChat, &reply);
    assert_eq!(
        chat["choices"][0]["message"]["tool_calls"][0]["function"],
        json!({"name": "tool_search", "arguments": "{\"query\":\"commit log\"}"})
    );
}
