//! The server's behaviour: the script's order, errors, faults on the connection, recording.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_test_support::{Fault, MockModel, Reply, Step, WireFormat};

use crate::support::{KeptAlive, post, request};

#[tokio::test]
async fn steps_play_in_order_and_an_exhausted_script_answers_500() {
    let model = MockModel::start(
        WireFormat::OpenAiChat,
        vec![Reply::text("one").into(), Reply::text("two").into()],
    )
    .await;
    assert_eq!(model.remaining(), 2);
    let path = "/v1/chat/completions";
    let first = post(&model, path, &json!({})).await.json();
    let second = post(&model, path, &json!({})).await.json();
    assert_eq!(first["choices"][0]["message"]["content"], "one");
    assert_eq!(
        (
            second["id"].as_str(),
            second["choices"][0]["message"]["content"].as_str()
        ),
        (Some("chatcmpl-2"), Some("two"))
    );
    assert_eq!(model.remaining(), 0);

    let exhausted = post(&model, path, &json!({})).await;
    assert_eq!(exhausted.status, 500);
    assert_eq!(
        exhausted.json()["error"]["message"],
        "mock model: script exhausted after 2 requests"
    );
}

#[tokio::test]
async fn rate_limit_sends_retry_after_in_the_openai_error_shape() {
    let model = MockModel::start(
        WireFormat::OpenAiResponses,
        vec![Step::rate_limited(7), Reply::text("ok").into()],
    )
    .await;
    let limited = post(&model, "/v1/responses", &json!({"stream": true})).await;
    assert_eq!(limited.status, 429);
    assert_eq!(limited.headers["retry-after"], "7");
    assert_eq!(
        limited.json(),
        json!({"error": {"message": "mock model: rate limited", "type": "requests",
                         "param": null, "code": "rate_limit_exceeded"}})
    );
    let retried = post(&model, "/v1/responses", &json!({})).await;
    assert_eq!(
        (retried.status, retried.json()["id"].clone()),
        (200, json!("resp_2"))
    );
}

#[tokio::test]
async fn a_fail_step_without_retry_after_sends_no_header() {
    let model = MockModel::start(WireFormat::Anthropic, vec![Step::fail(500, "boom")]).await;
    let failed = post(&model, "/v1/messages", &json!({})).await;
    assert_eq!(failed.status, 500);
    assert!(!failed.headers.contains_key("retry-after"));
    assert_eq!(
        failed.json()["error"],
        json!({"type": "api_error", "message": "boom"})
    );
}

#[tokio::test]
async fn a_stream_dropped_mid_way_is_played_clean_on_the_retry() {
    let reply = Reply::text("abcdefgh").with_fault(Fault::SplitDeltas(2));
    let model = MockModel::start(
        WireFormat::OpenAiChat,
        vec![
            reply
                .clone()
                .with_fault(Fault::DropMidStream { after_events: 3 })
                .into(),
            Reply::text("next").into(),
        ],
    )
    .await;
    let body = json!({"stream": true, "stream_options": {"include_usage": true}});
    let dropped = post(&model, "/v1/chat/completions", &body).await;
    assert_eq!(dropped.status, 200);
    assert!(!dropped.complete, "the response must not end cleanly");
    assert_eq!(dropped.frames().len(), 3);
    assert_eq!(
        dropped.frames()[..],
        toolhost_test_support::sse_frames(WireFormat::OpenAiChat, &reply)[..3]
    );
    assert_eq!(model.remaining(), 2, "the dropped step stays for its retry");

    let retry = post(&model, "/v1/chat/completions", &body).await;
    assert!(retry.complete);
    let text: String = retry
        .events()
        .iter()
        .filter_map(|(_, chunk)| {
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "abcdefgh");
    assert_eq!(
        retry.events()[0].1["id"],
        "chatcmpl-1",
        "a retried step keeps its ids"
    );
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn a_non_streaming_drop_sends_half_the_body() {
    let reply = Reply::text("a whole answer").with_fault(Fault::DropMidStream { after_events: 1 });
    let model = MockModel::start(WireFormat::Anthropic, vec![reply.into()]).await;
    let dropped = post(&model, "/v1/messages", &json!({})).await;
    assert_eq!(dropped.status, 200);
    assert!(!dropped.complete);
    assert!(serde_json::from_str::<serde_json::Value>(&dropped.body).is_err());
    assert!(
        dropped.body.starts_with("{\"id\":\"msg_1\""),
        "{}",
        dropped.body
    );
    let retry = post(&model, "/v1/messages", &json!({})).await;
    assert_eq!(retry.json()["content"][0]["text"], "a whole answer");
}

#[tokio::test]
async fn a_drop_before_the_first_byte_sends_nothing_then_plays_clean() {
    let reply = Reply::text("hi")
        .with_fault(Fault::DropBeforeFirstByte)
        .with_fault(Fault::DropMidStream { after_events: 1 });
    let model = MockModel::start(WireFormat::Anthropic, vec![reply.into()]).await;
    let body = json!({"stream": true});
    let nothing = post(&model, "/v1/messages", &body).await;
    assert_eq!((nothing.raw.len(), nothing.status), (0, 0));
    let cut = post(&model, "/v1/messages", &body).await;
    assert_eq!(
        (cut.status, cut.complete, cut.frames().len()),
        (200, false, 1)
    );
    let clean = post(&model, "/v1/messages", &body).await;
    assert!(clean.complete);
    assert_eq!(clean.events().last().unwrap().1["type"], "message_stop");
    assert_eq!(model.remaining(), 0);
    assert_eq!(model.requests().len(), 3, "every attempt is recorded");
}

#[tokio::test]
async fn a_slow_first_byte_delays_the_head_and_the_step_is_consumed() {
    let reply = Reply::text("late").with_fault(Fault::SlowFirstByte(Duration::from_millis(300)));
    let model = MockModel::start(WireFormat::OpenAiChat, vec![reply.into()]).await;
    let response = post(&model, "/v1/chat/completions", &json!({"stream": true})).await;
    assert!(response.first_byte_after.unwrap() >= Duration::from_millis(300));
    assert!(response.complete);
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn events_are_paced_by_the_delay_per_event() {
    let reply = Reply::text("abc")
        .with_fault(Fault::SplitDeltas(1))
        .with_delay_per_event(Duration::from_millis(40));
    let model = MockModel::start(WireFormat::Anthropic, vec![reply.into()]).await;
    let started = Instant::now();
    let response = post(&model, "/v1/messages", &json!({"stream": true})).await;
    // message_start, block start, ping, 3 deltas, block stop, message_delta, message_stop.
    assert_eq!(response.frames().len(), 9);
    assert!(started.elapsed() >= Duration::from_millis(8 * 40));
}

#[tokio::test]
async fn another_formats_path_is_404_naming_the_right_one_and_takes_no_step() {
    let model = MockModel::start(WireFormat::Anthropic, vec![Reply::text("x").into()]).await;
    let wrong = post(&model, "/v1/chat/completions", &json!({})).await;
    assert_eq!(wrong.status, 404);
    assert_eq!(
        wrong.json()["error"]["message"],
        "mock model: this server speaks Anthropic; POST to /v1/messages, not POST /v1/chat/completions"
    );
    let get = request(&model, "GET", "/v1/messages", "").await;
    assert_eq!(get.status, 404);
    assert_eq!(model.remaining(), 1);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_400_and_recorded_raw() {
    let model = MockModel::start(WireFormat::OpenAiChat, vec![Reply::text("x").into()]).await;
    let response = request(&model, "POST", "/v1/chat/completions", "{not json").await;
    assert_eq!(response.status, 400);
    assert_eq!(model.requests()[0].body, json!("{not json"));
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn requests_are_recorded_in_order_with_headers_and_parsed_bodies() {
    let model = MockModel::start(
        WireFormat::Anthropic,
        vec![Step::overloaded(), Reply::text("fine").into()],
    )
    .await;
    let first = json!({"model": "claude", "messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"name": "Read", "input_schema": {"type": "object"}}]});
    let second = json!({"model": "claude", "messages": [], "stream": true});
    post(&model, "/v1/messages", &first).await;
    post(&model, "/v1/messages", &second).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(
        requests[0].body, first,
        "the failed attempt is recorded too"
    );
    assert_eq!(requests[1].body, second);
    assert_eq!(requests[0].header("X-Api-Key"), Some("test-key"));
    assert_eq!(requests[0].headers["content-type"], "application/json");
}

#[tokio::test]
async fn urls_point_at_the_server() {
    let model = MockModel::start(WireFormat::OpenAiChat, Vec::new()).await;
    assert!(model.url().starts_with("http://127.0.0.1:"));
    assert_eq!(model.openai_base_url(), format!("{}/v1", model.url()));
    assert_eq!(model.format(), WireFormat::OpenAiChat);
}

#[tokio::test]
async fn a_drop_after_zero_events_sends_only_the_head() {
    let reply = Reply::text("x").with_fault(Fault::DropMidStream { after_events: 0 });
    let model = MockModel::start(WireFormat::OpenAiResponses, vec![reply.into()]).await;
    let cut = post(&model, "/v1/responses", &json!({"stream": true})).await;
    assert_eq!(
        (cut.status, cut.complete, cut.body.as_str()),
        (200, false, "")
    );
}

#[tokio::test]
async fn a_kept_alive_connection_serves_the_script_until_a_drop_closes_it() {
    let model = MockModel::start(
        WireFormat::OpenAiChat,
        vec![
            Step::rate_limited(1),
            Reply::text("one").into(),
            Reply::text("two")
                .with_fault(Fault::DropBeforeFirstByte)
                .into(),
        ],
    )
    .await;
    let path = "/v1/chat/completions";
    let mut connection = KeptAlive::connect(&model).await;
    assert_eq!(connection.post(path, &json!({})).await.status, 429);
    let one = connection.post(path, &json!({})).await;
    assert_eq!(one.json()["choices"][0]["message"]["content"], "one");
    let dropped = connection.post(path, &json!({})).await;
    assert!(dropped.raw.is_empty(), "{dropped:?}");

    let mut fresh = KeptAlive::connect(&model).await;
    let two = fresh.post(path, &json!({})).await;
    assert_eq!(two.json()["choices"][0]["message"]["content"], "two");
}

#[tokio::test]
async fn a_stream_error_ends_each_format_with_its_error_event_then_plays_clean() {
    let cases = [
        (
            WireFormat::Anthropic,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        (
            WireFormat::OpenAiChat,
            json!({"error": {"message": "mock model: the server failed mid-stream",
                             "type": "server_error", "param": null, "code": null}}),
        ),
    ];
    for (format, expected) in cases {
        let reply = Reply::text("hello").with_fault(Fault::StreamError { after_events: 2 });
        let model = MockModel::start(format, vec![reply.into()]).await;
        let failed = post(&model, format.path(), &json!({"stream": true})).await;
        assert_eq!((failed.status, failed.complete), (200, true), "{format:?}");
        let events = failed.events();
        assert_eq!(events.len(), 3, "{format:?}");
        assert_eq!(events[2].1, expected, "{format:?}");
        if format == WireFormat::Anthropic {
            assert_eq!(events[2].0.as_deref(), Some("error"));
        }
        assert_eq!(model.remaining(), 1);
        let clean = post(&model, format.path(), &json!({"stream": true})).await;
        assert!(clean.events().len() > 3, "{format:?}");
        assert_eq!(model.remaining(), 0);
    }
}

#[tokio::test]
async fn a_responses_stream_error_is_response_failed_in_sequence() {
    let reply = Reply::text("hello").with_fault(Fault::StreamError { after_events: 3 });
    let model = MockModel::start(WireFormat::OpenAiResponses, vec![reply.into()]).await;
    let events = post(&model, "/v1/responses", &json!({"stream": true}))
        .await
        .events();
    assert_eq!(events.len(), 4);
    let (name, failed) = &events[3];
    assert_eq!(name.as_deref(), Some("response.failed"));
    assert_eq!(failed["sequence_number"], 3);
    assert_eq!(failed["response"]["status"], "failed");
    assert_eq!(failed["response"]["error"]["code"], "server_error");
}

#[tokio::test]
async fn a_stream_error_on_a_non_streaming_request_is_an_error_status() {
    let reply = Reply::text("hello").with_fault(Fault::StreamError { after_events: 0 });
    let model = MockModel::start(WireFormat::Anthropic, vec![reply.into()]).await;
    let failed = post(&model, "/v1/messages", &json!({})).await;
    assert_eq!(failed.status, 529);
    assert_eq!(failed.json()["error"]["type"], "overloaded_error");
    let clean = post(&model, "/v1/messages", &json!({})).await;
    assert_eq!(clean.json()["content"][0]["text"], "hello");
}
