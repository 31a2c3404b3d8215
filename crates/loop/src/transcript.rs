//! Where a run's conversation is kept while it grows (a session store, usually).
//!
//! The loop hands over every message it adds — each response, each tool result in call order,
//! each note it tells the model — before it asks the model again, so a process killed at any
//! moment loses at most the response in flight. A transcript that cannot keep a message ends
//! the run: going on would make a session that cannot be resumed as it was.

use serde_json::Value;
use toolhost_core::conversation::{Message, Usage};

/// What the loop records.
#[derive(Clone, Copy, Debug)]
pub enum Recorded<'a> {
    /// A message added to the conversation, with the tool's structured details for a tool
    /// result (renderers and `sessions show` read them; the model does not).
    Message {
        /// The message as the model will read it.
        message: &'a Message,
        /// A tool result's details.
        details: Option<&'a Value>,
    },
    /// The conversation was compacted: `summary` stands for every message but the last
    /// `kept_messages`, which stay verbatim.
    Compaction {
        /// The model's summary.
        summary: &'a str,
        /// How many messages at the end of the conversation were kept as they were.
        kept_messages: usize,
        /// The conversation's estimated size in tokens before.
        tokens_before: u64,
        /// Files the summarised part read.
        files_read: &'a [String],
        /// Files the summarised part changed.
        files_modified: &'a [String],
        /// What the summary cost (no response entry carries it).
        usage: Usage,
    },
}

/// Keeps what a run records; see the module doc.
pub trait Transcript: Send + Sync {
    /// Keeps `entry`, durably, before returning; an error ends the run with its message.
    fn record(&self, entry: Recorded<'_>) -> Result<(), String>;
}
