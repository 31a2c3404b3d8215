//! pi extensions in a session: their tool events in the pipeline ([`ExtensionGate`],
//! [`ExtensionResults`]), their commands and input handlers, and what they ask of the session
//! ([`ExtensionSession`]). The agent loop sends them its lifecycle events, and the session
//! record keeps their entries through [`ExtensionStore`], so this module knows neither.

mod compaction;
mod gate;
mod session;

pub use compaction::{CompactRequest, CompactVerdict, CompactionDone};
pub use gate::{ExtensionGate, ExtensionResults, ExtensionSlot};
pub use session::{ExtensionSession, Prompted};

use crate::CustomTools;

/// Which of a session's entries `ctx.sessionManager` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryScope {
    /// The path from the root to the leaf (`getBranch()`).
    Branch,
    /// Every entry of every branch, parents before children (`getEntries()`).
    All,
}

/// Where a session keeps what its extensions store — their entries (`pi.appendEntry`) and the
/// session's name (`pi.setSessionName`) — and what they read of it (`ctx.sessionManager`).
/// The agent's session record is one; errors are reported to the extension's log as text.
pub trait ExtensionStore: Send + Sync {
    /// The session's entries, oldest first, as pi's session manager gives them (`{type, id,
    /// parentId, timestamp, …}`: `message` entries for the conversation, `custom` ones for
    /// the extensions').
    fn entries(&self, scope: EntryScope) -> Result<Vec<serde_json::Value>, String>;
    /// Stores an extension's entry.
    fn record_custom(&self, custom_type: &str, data: &serde_json::Value) -> Result<(), String>;
    /// Names the session.
    fn set_title(&self, title: &str) -> Result<(), String>;
}

/// What pi extensions' tools add to the system prompt while they are offered: their
/// `promptSnippet` lines and their `promptGuidelines` bullets.
pub fn prompt_section(custom: &CustomTools, offered: &[String]) -> Option<String> {
    let tools: Vec<_> = custom
        .tools()
        .iter()
        .map(|loaded| &loaded.tool)
        .filter(|tool| offered.iter().any(|name| name == tool.name()))
        .collect();
    let snippets: Vec<String> = tools
        .iter()
        .filter_map(|tool| Some(format!("- {}: {}", tool.name(), tool.prompt_snippet()?)))
        .collect();
    let guidelines: Vec<String> = tools
        .iter()
        .flat_map(|tool| tool.prompt_guidelines())
        .map(|line| format!("- {line}"))
        .collect();
    if snippets.is_empty() && guidelines.is_empty() {
        return None;
    }
    let mut section = String::new();
    if !snippets.is_empty() {
        section.push_str("\n\nExtension tools:\n");
        section.push_str(&snippets.join("\n"));
    }
    if !guidelines.is_empty() {
        section.push_str("\n\nGuidelines for these tools:\n");
        section.push_str(&guidelines.join("\n"));
    }
    Some(section)
}
