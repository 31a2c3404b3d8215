//! A running agent's mailbox: what its background children and other sessions send it, read
//! by its loop before each model request ([`Inbox`]).

use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use crate::agent_loop::Inbox;

/// Messages for one agent, and how many more it expects.
#[derive(Default)]
pub(crate) struct Mailbox {
    state: Mutex<Letters>,
    arrived: Notify,
}

#[derive(Default)]
struct Letters {
    queue: Vec<String>,
    /// Background runs whose result this agent waits for.
    expected: usize,
}

impl Mailbox {
    fn state(&self) -> MutexGuard<'_, Letters> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One more result will arrive (a background child started).
    pub(crate) fn expect(&self) {
        self.state().expected += 1;
    }

    /// An expected result arrived.
    pub(crate) fn deliver_expected(&self, text: String) {
        {
            let mut state = self.state();
            state.queue.push(text);
            state.expected = state.expected.saturating_sub(1);
        }
        self.arrived.notify_waiters();
    }

    /// A message nobody announced (`SessionsSend`).
    pub(crate) fn send(&self, text: String) {
        self.state().queue.push(text);
        self.arrived.notify_waiters();
    }
}

#[async_trait::async_trait]
impl Inbox for Mailbox {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.state().queue)
    }

    fn outstanding(&self) -> bool {
        let state = self.state();
        !state.queue.is_empty() || state.expected > 0
    }

    async fn wait(&self) {
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            // Registered before looking, so a delivery between the look and the wait wakes it.
            arrived.as_mut().enable();
            {
                let state = self.state();
                if !state.queue.is_empty() || state.expected == 0 {
                    return;
                }
            }
            arrived.await;
        }
    }
}
