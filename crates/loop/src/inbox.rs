//! Messages that reach a run from outside it while it runs: the results of background
//! sub-agents, messages other sessions send. The loop adds what arrived before each model
//! request, so the model reads it at its next turn without having to poll for it.

/// What a run receives from work it started in the background.
#[async_trait::async_trait]
pub trait Inbox: Send + Sync {
    /// The messages that arrived since the last call, oldest first (each becomes a user
    /// message of the conversation).
    fn take(&self) -> Vec<String>;

    /// Whether a message has arrived or is still expected (a background child still runs).
    fn outstanding(&self) -> bool;

    /// Waits until a message has arrived or none is expected any more.
    async fn wait(&self);
}
