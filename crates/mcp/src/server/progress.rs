//! A tool's partial updates as `notifications/progress`, for clients that sent a progress
//! token with their `tools/call`.

use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolhost_core::{ContentBlock, ToolUpdate, UpdateSink};

/// The longest progress message sent, in characters; a longer update text keeps its end (the
/// newest output), since a progress line shows what is happening now.
pub const MAX_PROGRESS_MESSAGE_CHARS: usize = 2_000;

/// Forwards one call's updates to the client, in order, from a task of its own: the update
/// sink is synchronous and sending a notification is not.
pub struct ProgressForwarder {
    sender: mpsc::UnboundedSender<ToolUpdate>,
    task: JoinHandle<()>,
}

impl ProgressForwarder {
    /// Starts forwarding to `peer` under `token`.
    pub fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (sender, mut updates) = mpsc::unbounded_channel::<ToolUpdate>();
        let task = tokio::spawn(async move {
            let mut counter = ProgressCounter::default();
            while let Some(update) = updates.recv().await {
                let Some(notification) = counter.notification(&token, &update) else {
                    continue;
                };
                if let Err(error) = peer.notify_progress(notification).await {
                    tracing::debug!("progress notification not delivered: {error}");
                    return;
                }
            }
        });
        Self { sender, task }
    }

    /// The sink to give the pipeline in `CallOptions::on_update`.
    pub fn sink(&self) -> UpdateSink {
        let sender = self.sender.clone();
        Arc::new(move |update| {
            // A closed channel means the client went away; the update has nobody to reach.
            let _ = sender.send(update);
        })
    }

    /// Waits until every update sent so far has been delivered, so that progress never
    /// arrives after the result it belongs to.
    pub async fn finish(self) {
        drop(self.sender);
        if let Err(error) = self.task.await {
            tracing::debug!("progress forwarder stopped: {error}");
        }
    }
}

/// MCP requires `progress` to increase with every notification. A tool that reports
/// progress numbers gets them passed through (and a non-increasing one is skipped); a tool
/// that only streams text gets the count of updates so far.
#[derive(Debug, Default)]
struct ProgressCounter {
    updates: u64,
    last: Option<f64>,
}

impl ProgressCounter {
    fn notification(
        &mut self,
        token: &ProgressToken,
        update: &ToolUpdate,
    ) -> Option<ProgressNotificationParam> {
        self.updates += 1;
        #[allow(clippy::cast_precision_loss)] // exact up to 2^53 updates
        let progress = update.progress.unwrap_or(self.updates as f64);
        if self.last.is_some_and(|last| progress <= last) {
            return None;
        }
        self.last = Some(progress);
        let mut notification = ProgressNotificationParam::new(token.clone(), progress);
        if let Some(total) = update.total {
            notification = notification.with_total(total);
        }
        if let Some(message) = progress_message(&update.content) {
            notification = notification.with_message(message);
        }
        Some(notification)
    }
}

fn progress_message(content: &[ContentBlock]) -> Option<String> {
    let text: String = content.iter().filter_map(ContentBlock::as_text).collect();
    let text = text.trim_end();
    if text.is_empty() {
        return None;
    }
    let chars = text.chars().count();
    if chars <= MAX_PROGRESS_MESSAGE_CHARS {
        return Some(text.to_owned());
    }
    let tail: String = text
        .chars()
        .skip(chars - MAX_PROGRESS_MESSAGE_CHARS)
        .collect();
    Some(format!("…{tail}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;
    use rmcp::model::NumberOrString;

    use super::*;

    fn token() -> ProgressToken {
        ProgressToken(NumberOrString::Number(1))
    }

    #[test]
    fn text_updates_count_up_and_carry_their_text() {
        let mut counter = ProgressCounter::default();
        let first = counter
            .notification(&token(), &ToolUpdate::text("line 1\n"))
            .unwrap();
        let second = counter
            .notification(&token(), &ToolUpdate::text("line 2\n"))
            .unwrap();
        assert_eq!((first.progress, second.progress), (1.0, 2.0));
        assert_eq!(second.message.as_deref(), Some("line 2"));
        assert_eq!(second.total, None);
    }

    #[test]
    fn measured_progress_passes_through_and_never_goes_back() {
        let mut counter = ProgressCounter::default();
        let update = |progress| ToolUpdate {
            progress: Some(progress),
            total: Some(10.0),
            ..ToolUpdate::default()
        };
        let sent = counter.notification(&token(), &update(4.0)).unwrap();
        assert_eq!((sent.progress, sent.total), (4.0, Some(10.0)));
        assert!(counter.notification(&token(), &update(4.0)).is_none());
        assert_eq!(
            counter
                .notification(&token(), &update(7.0))
                .unwrap()
                .progress,
            7.0
        );
    }

    #[test]
    fn a_long_message_keeps_its_end() {
        let text = format!("{}END", "x".repeat(MAX_PROGRESS_MESSAGE_CHARS * 2));
        let message = progress_message(&[ContentBlock::text(text)]).unwrap();
        assert!(message.ends_with("END"));
        assert_eq!(message.chars().count(), MAX_PROGRESS_MESSAGE_CHARS + 1);
    }
}
