//! The legacy HTTP+SSE transport (protocol 2024-11-05) for the small servers of this crate:
//! `GET` opens an event stream whose first event, `endpoint`, names where to `POST`; each
//! posted request is answered `202 Accepted` and its answer sent on the stream.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Mutex;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::tiny_mcp::plain;

/// The open streams, by session.
#[derive(Debug, Default)]
pub(crate) struct LegacySseSessions {
    streams: Mutex<BTreeMap<u64, UnboundedSender<String>>>,
    opened: Mutex<u64>,
}

impl LegacySseSessions {
    /// A new stream, its first event naming `{messages_path}?session=N`.
    pub(crate) fn open(&self, messages_path: &str) -> Response {
        let session = {
            let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
            *opened += 1;
            *opened
        };
        let (sender, receiver) = unbounded_channel();
        let _ = sender.send(format!(
            "event: endpoint\ndata: {messages_path}?session={session}\n\n"
        ));
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session, sender);
        let events = futures::stream::unfold(receiver, |mut receiver| async move {
            let event = receiver.recv().await?;
            Some((Ok::<_, Infallible>(Bytes::from(event)), receiver))
        });
        let mut response = Response::new(Body::from_stream(events));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/event-stream"),
        );
        response
    }

    /// Sends `answered` (a JSON answer of the MCP side) on the stream of `session` and says
    /// `202 Accepted`; a refusal (any other status) is the POST's own answer.
    pub(crate) async fn post(&self, session: Option<u64>, answered: Response) -> Response {
        let Some(sender) = session.and_then(|session| {
            self.streams
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&session)
                .cloned()
        }) else {
            return plain(StatusCode::NOT_FOUND, "no such session");
        };
        if answered.status() != StatusCode::OK {
            return answered;
        }
        let Ok(body) = axum::body::to_bytes(answered.into_body(), usize::MAX).await else {
            return plain(StatusCode::INTERNAL_SERVER_ERROR, "no answer");
        };
        let data = String::from_utf8_lossy(&body);
        let _ = sender.send(format!("event: message\ndata: {data}\n\n"));
        plain(StatusCode::ACCEPTED, "")
    }
}
