//! pi's `message_start` and `message_update` while a response streams: `message_start` before
//! the request, then `message_update` for each piece of text or reasoning as it arrives, with
//! the message so far and the piece (`assistantMessageEvent: { type: "text_delta" |
//! "thinking_delta", contentIndex, delta }`). The handlers run beside the stream, in order;
//! with none listening, the provider's sink is left as it is.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use toolhost_providers::{EventSink, StreamEvent};

use crate::extension_events::{LoopExtensions, now_ms};

/// The response so far: its parts, in the order they began.
#[derive(Default)]
struct Partial {
    parts: Vec<(&'static str, String)>,
}

impl Partial {
    /// Adds `delta` to the last part if it is of `kind`, else starts one: the part's index.
    fn add(&mut self, kind: &'static str, delta: &str) -> usize {
        match self.parts.last_mut() {
            Some((last, text)) if *last == kind => text.push_str(delta),
            _ => self.parts.push((kind, delta.to_owned())),
        }
        self.parts.len() - 1
    }

    fn content(&self) -> Vec<Value> {
        self.parts
            .iter()
            .map(|(kind, text)| match *kind {
                "thinking" => json!({ "type": "thinking", "thinking": text }),
                _ => json!({ "type": "text", "text": text }),
            })
            .collect()
    }
}

impl LoopExtensions {
    /// `message_start`, before the model is asked: an assistant message with no content yet.
    pub(crate) async fn message_start(&self, model: &str) {
        if self.listening("message_start").is_some() {
            let message = json!({ "role": "assistant", "content": [], "model": model, "timestamp": now_ms() });
            self.notify("message_start", &json!({ "message": message }))
                .await;
        }
    }

    /// `sink`, and, when an extension listens to `message_update`, a sink that also queues an
    /// update for each piece of text or reasoning for [`Self::tell_message_updates`], which must
    /// run beside the stream.
    pub(crate) fn with_message_updates(
        &self,
        sink: EventSink,
        model: &str,
    ) -> (EventSink, Option<UnboundedReceiver<Value>>) {
        if self.listening("message_update").is_none() {
            return (sink, None);
        }
        let (sender, receiver) = unbounded_channel();
        let partial = Mutex::new(Partial::default());
        let model = model.to_owned();
        let wrapped: EventSink = Arc::new(move |event: StreamEvent| {
            let piece = match &event {
                StreamEvent::TextDelta(text) => Some(("text", text.clone())),
                StreamEvent::ReasoningDelta(text) => Some(("thinking", text.clone())),
                _ => None,
            };
            if let Some((kind, delta)) = piece {
                let mut partial = partial.lock().unwrap_or_else(PoisonError::into_inner);
                let index = partial.add(kind, &delta);
                // The receiver lives as long as the stream; a closed one means no listener.
                let _ = sender.send(json!({
                    "message": {
                        "role": "assistant",
                        "content": partial.content(),
                        "model": model,
                        "timestamp": now_ms(),
                    },
                    "assistantMessageEvent": {
                        "type": format!("{kind}_delta"),
                        "contentIndex": index,
                        "delta": delta,
                    },
                }));
            }
            sink(event);
        });
        (wrapped, Some(receiver))
    }

    /// `message_update` for each update queued by [`Self::with_message_updates`]'s sink, in
    /// order, until the sink is dropped.
    pub(crate) async fn tell_message_updates(&self, receiver: Option<UnboundedReceiver<Value>>) {
        let Some(mut receiver) = receiver else {
            return;
        };
        while let Some(payload) = receiver.recv().await {
            self.notify("message_update", &payload).await;
        }
    }
}
