//! pi extensions in a session: their tool events in the pipeline ([`ExtensionGate`],
//! [`ExtensionResults`]), their lifecycle events in the agent loop, their commands, and what
//! they ask of the session ([`ExtensionSession`]). The extensions themselves are
//! `toolhost-script`'s.

mod gate;
mod session;

pub use gate::{ExtensionGate, ExtensionResults, ExtensionSlot};
pub use session::{ExtensionSession, Prompted, idle_report};

use toolhost_script::CustomTools;

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
