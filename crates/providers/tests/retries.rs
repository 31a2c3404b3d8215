//! Faults: rate limits, overloads, dropped connections, broken streams, timeouts and
//! cancellation — what is retried, what is reported, and what the caller hears on the way.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::Message;
use toolhost_providers::{Api, ModelRequest, ProviderError, StreamEvent, connect};

use toolhost_test_support::{BodyPiece, CannedResponse, ReplayServer};

use support::{anthropic_text, chat_text, config, recorder, sse, streamed_text};

fn hello() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("hello")],
        ..ModelRequest::default()
    }
}

/// The events other than content deltas.
fn notices(events: &[StreamEvent]) -> Vec<StreamEvent> {
    events
        .iter()
        .filter(|event| {
            !matches!(
                event,
                StreamEvent::TextDelta(_) | StreamEvent::ReasoningDelta(_)
            )
        })
        .cloned()
        .collect()
}

fn retry(attempt: u32, delay: Duration, reason: &str) -> StreamEvent {
    StreamEvent::RetryScheduled {
        attempt,
        delay,
        reason: reason.into(),
    }
}

#[tokio::test]
async fn a_rate_limit_is_retried_after_the_servers_retry_after() {
    let server = ReplayServer::start(vec![
        CannedResponse::status(
            429,
            json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
        )
        .header("retry-after", "0"),
        CannedResponse::sse(chat_text("ok")),
    ])
    .await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "ok");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        notices(&events.lock().unwrap()),
        vec![
            StreamEvent::RequestSent { attempt: 1 },
            retry(2, Duration::ZERO, "mock answered 429: Rate limit reached"),
            StreamEvent::RequestSent { attempt: 2 },
        ]
    );
}

#[tokio::test]
async fn an_overloaded_anthropic_is_retried_after_retry_after_ms() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server = ReplayServer::start(vec![
        CannedResponse::status(529, overloaded.clone()).header("retry-after-ms", "5"),
        CannedResponse::status(529, overloaded).header("retry-after", "0"),
        CannedResponse::sse(anthropic_text("fine")),
    ])
    .await;
    let provider = connect(config(Api::Anthropic, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "fine");
    assert_eq!(
        notices(&events.lock().unwrap()),
        vec![
            StreamEvent::RequestSent { attempt: 1 },
            retry(2, Duration::from_millis(5), "mock answered 529: Overloaded"),
            StreamEvent::RequestSent { attempt: 2 },
            retry(3, Duration::ZERO, "mock answered 529: Overloaded"),
            StreamEvent::RequestSent { attempt: 3 },
        ]
    );
}

#[tokio::test]
async fn server_errors_are_retried_up_to_max_attempts_then_reported() {
    let busy = || CannedResponse::status(503, json!({"error": {"message": "upstream busy"}}));
    let server = ReplayServer::start(vec![busy(), busy(), busy(), busy(), busy()]).await;
    let mut provider_config = config(Api::OpenAiChat, &server);
    provider_config.retry.max_attempts = 3;
    let provider = connect(provider_config).unwrap();
    let (sink, events) = recorder();
    let error = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "mock answered 503: upstream busy");
    assert_eq!(server.requests().len(), 3);
    let events = events.lock().unwrap();
    let retries: Vec<u32> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::RetryScheduled { attempt, delay, .. } => {
                // No retry-after: the policy's backoff, 1 ms then 2 ms, ±20 %.
                assert!(*delay <= Duration::from_millis(3), "{delay:?}");
                Some(*attempt)
            }
            _ => None,
        })
        .collect();
    assert_eq!(retries, [2, 3]);
}

#[tokio::test]
async fn a_connection_closed_before_any_response_is_retried() {
    let server = ReplayServer::start(vec![CannedResponse::sse(chat_text("back"))]).await;
    server.hang_up_on_next_connections(1);
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "back");
    let notices = notices(&events.lock().unwrap());
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(
        matches!(&notices[1], StreamEvent::RetryScheduled { attempt: 2, reason, .. }
            if reason.starts_with("mock: ")),
        "{notices:?}"
    );
}

#[tokio::test]
async fn a_body_dropped_before_its_first_byte_is_retried_with_backoff() {
    let server = ReplayServer::start(vec![
        CannedResponse::sse_pieces(vec![
            BodyPiece::Wait(Duration::from_millis(20)),
            BodyPiece::Drop,
        ]),
        CannedResponse::sse(chat_text("again")),
    ])
    .await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "again");
    let notices = notices(&events.lock().unwrap());
    assert!(
        matches!(&notices[1], StreamEvent::RetryScheduled { attempt: 2, reason, .. }
            if reason.contains("the stream broke")),
        "{notices:?}"
    );
    assert!(!notices.contains(&StreamEvent::Restarted), "{notices:?}");
}

#[tokio::test]
async fn a_stream_broken_midway_restarts_once_from_the_start() {
    let whole = chat_text("Hello there");
    let server = ReplayServer::start(vec![
        CannedResponse::sse_pieces(vec![
            BodyPiece::Bytes(whole[..150].to_vec()),
            BodyPiece::Wait(Duration::from_millis(20)),
            BodyPiece::Drop,
        ]),
        CannedResponse::sse(whole.clone()),
    ])
    .await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "Hello there");
    let events = events.lock().unwrap().clone();
    let restart = events
        .iter()
        .position(|event| *event == StreamEvent::Restarted)
        .unwrap();
    assert_eq!(streamed_text(&events[restart..]), "Hello there");
    assert_eq!(
        notices(&events),
        vec![
            StreamEvent::RequestSent { attempt: 1 },
            StreamEvent::Restarted,
            StreamEvent::RequestSent { attempt: 2 },
        ]
    );
}

#[tokio::test]
async fn a_stream_that_breaks_twice_fails_after_one_restart() {
    let whole = chat_text("Hello there");
    let broken = || {
        CannedResponse::sse_pieces(vec![
            BodyPiece::Bytes(whole[..150].to_vec()),
            BodyPiece::Wait(Duration::from_millis(20)),
            BodyPiece::Drop,
        ])
    };
    let server =
        ReplayServer::start(vec![broken(), broken(), CannedResponse::sse(whole.clone())]).await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let (sink, events) = recorder();
    let error = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ProviderError::Connection { message, .. } if message.starts_with("the stream broke")),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        notices(&events.lock().unwrap()),
        vec![
            StreamEvent::RequestSent { attempt: 1 },
            StreamEvent::Restarted,
            StreamEvent::RequestSent { attempt: 2 },
        ]
    );
}

#[tokio::test]
async fn an_overloaded_error_event_midstream_voids_the_text_and_retries() {
    let whole = String::from_utf8(anthropic_text("Bon")).unwrap();
    // The text delta arrives, then an error event instead of the rest.
    let cut = whole.find("event: content_block_stop").unwrap();
    let mut bytes = whole.as_bytes()[..cut].to_vec();
    bytes.extend(sse(&[(
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )]));
    let server = ReplayServer::start(vec![
        CannedResponse::sse(bytes),
        CannedResponse::sse(anthropic_text("Bonjour")),
    ])
    .await;
    let provider = connect(config(Api::Anthropic, &server)).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "Bonjour");
    let events = events.lock().unwrap().clone();
    assert_eq!(events[1], StreamEvent::TextDelta("Bon".into()));
    let notices = notices(&events);
    assert_eq!(
        notices[..2],
        [
            StreamEvent::RequestSent { attempt: 1 },
            StreamEvent::Restarted
        ]
    );
    assert!(
        matches!(&notices[2], StreamEvent::RetryScheduled { attempt: 2, reason, .. }
            if reason == "mock reported an error: Overloaded (overloaded_error)"),
        "{notices:?}"
    );
    assert_eq!(notices[3], StreamEvent::RequestSent { attempt: 2 });
    let restart = events
        .iter()
        .position(|e| *e == StreamEvent::Restarted)
        .unwrap();
    assert_eq!(streamed_text(&events[restart..]), "Bonjour");
}

#[tokio::test]
async fn cancelling_stops_a_retry_wait_at_once() {
    let server = ReplayServer::start(vec![
        CannedResponse::status(429, json!({"error": {"message": "slow down"}}))
            .header("retry-after", "30"),
    ])
    .await;
    let mut provider_config = config(Api::OpenAiChat, &server);
    provider_config.retry.max_delay = Duration::from_secs(60);
    let provider = connect(provider_config).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let sink: toolhost_providers::EventSink = std::sync::Arc::new(move |event| {
        if matches!(event, StreamEvent::RetryScheduled { .. }) {
            trigger.cancel();
        }
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        provider.stream(&hello(), sink, cancel),
    )
    .await
    .expect("cancellation did not stop the 30 s wait");
    assert!(
        matches!(outcome, Err(ProviderError::Cancelled)),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn cancelling_stops_a_stream_that_is_waiting_for_the_model() {
    let server = ReplayServer::start(vec![CannedResponse::sse_pieces(vec![
        BodyPiece::Bytes(b": waiting\n\n".to_vec()),
        BodyPiece::Wait(Duration::from_secs(30)),
    ])])
    .await;
    let provider = connect(config(Api::OpenAiChat, &server)).unwrap();
    let cancel = CancellationToken::new();
    let (sink, _) = recorder();
    let request = hello();
    let stream = provider.stream(&request, sink, cancel.clone());
    let cancel_soon = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(stream, cancel_soon)
    })
    .await
    .expect("cancellation did not stop the stream");
    assert!(
        matches!(outcome, Err(ProviderError::Cancelled)),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_slow_first_byte_runs_out_the_first_byte_timeout() {
    let server = ReplayServer::start(vec![
        CannedResponse::sse(chat_text("late")).after(Duration::from_secs(5)),
        CannedResponse::sse_pieces(vec![BodyPiece::Wait(Duration::from_secs(5))]),
    ])
    .await;
    let mut provider_config = config(Api::OpenAiChat, &server);
    provider_config.timeouts.first_byte = Duration::from_millis(100);
    provider_config.retry.max_attempts = 2;
    let provider = connect(provider_config).unwrap();
    let (sink, events) = recorder();
    let error = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ProviderError::Timeout { which: "first byte", after, .. } if after == Duration::from_millis(100)),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "mock: first byte timeout of 100ms ran out"
    );
    let notices = notices(&events.lock().unwrap());
    assert_eq!(
        notices.len(),
        3,
        "headers late, then body late: {notices:?}"
    );
}

#[tokio::test]
async fn a_silent_stream_runs_out_the_idle_timeout_and_restarts() {
    let whole = chat_text("steady");
    let server = ReplayServer::start(vec![
        CannedResponse::sse_pieces(vec![
            BodyPiece::Bytes(whole[..100].to_vec()),
            BodyPiece::Wait(Duration::from_secs(5)),
        ]),
        CannedResponse::sse(whole.clone()),
    ])
    .await;
    let mut provider_config = config(Api::OpenAiChat, &server);
    provider_config.timeouts.idle = Duration::from_millis(100);
    let provider = connect(provider_config).unwrap();
    let (sink, events) = recorder();
    let message = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(message.text(), "steady");
    assert!(events.lock().unwrap().contains(&StreamEvent::Restarted));
}

#[tokio::test]
async fn an_unreachable_server_is_a_connection_error_after_the_retries() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut provider_config = toolhost_providers::ProviderConfig::new(
        "local",
        Api::OpenAiChat,
        format!("http://127.0.0.1:{port}/v1"),
        "m",
    );
    provider_config.retry.max_attempts = 2;
    provider_config.retry.initial_delay = Duration::from_millis(1);
    let provider = connect(provider_config).unwrap();
    let (sink, events) = recorder();
    let error = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ProviderError::Connection { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().to_lowercase().contains("connect"),
        "{error}"
    );
    assert_eq!(notices(&events.lock().unwrap()).len(), 3);
}

#[tokio::test]
async fn a_stream_that_trickles_on_runs_out_the_request_timeout_and_is_not_retried() {
    let mut pieces = Vec::new();
    for _ in 0..100 {
        pieces.push(BodyPiece::Bytes(b": still thinking\n\n".to_vec()));
        pieces.push(BodyPiece::Wait(Duration::from_millis(20)));
    }
    let server = ReplayServer::start(vec![
        CannedResponse::sse_pieces(pieces),
        CannedResponse::sse(chat_text("no")),
    ])
    .await;
    let mut provider_config = config(Api::OpenAiChat, &server);
    provider_config.timeouts.idle = Duration::from_millis(500);
    provider_config.timeouts.request = Duration::from_millis(300);
    let provider = connect(provider_config).unwrap();
    let (sink, _) = recorder();
    let error = provider
        .stream(&hello(), sink, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ProviderError::Timeout {
                which: "request",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}
