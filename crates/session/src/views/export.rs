//! `toolhost sessions export`: every entry as a JSON line, or the current branch as Markdown.

use std::fmt::Write as _;

use crate::{Entry, EntryKind, Session, SessionStore};
use serde_json::{Value, json};
use toolhost_core::ContentBlock;
use toolhost_core::conversation::AssistantPart;

use super::report::{branch, text_of};
use super::{SessionsError, timestamp};

/// Lines of a tool result the Markdown shows before it says how many more there are.
pub const RESULT_LINES_SHOWN: usize = 8;

/// Characters of a tool call's arguments the Markdown shows.
const ARGUMENTS_SHOWN: usize = 200;

/// The formats of `export`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExportFormat {
    /// One JSON object per entry, every branch: `id`, `parent`, `created`, `kind`, `data`.
    #[default]
    Jsonl,
    /// The current branch's conversation, for a person to read.
    Markdown,
}

impl std::str::FromStr for ExportFormat {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "jsonl" => Ok(Self::Jsonl),
            "markdown" | "md" => Ok(Self::Markdown),
            other => Err(format!(
                "unknown export format '{other}': use jsonl or markdown"
            )),
        }
    }
}

/// `session` in `format`.
pub fn export(
    store: &SessionStore,
    session: &Session,
    format: ExportFormat,
) -> Result<String, SessionsError> {
    let tree = store.tree(&session.id)?;
    Ok(match format {
        ExportFormat::Jsonl => export_jsonl(&tree),
        ExportFormat::Markdown => export_markdown(session, &tree),
    })
}

/// Every entry of `tree` as one JSON line, in id order (parents first): `id`, `parent`,
/// `created` (RFC 3339), `kind` and `data` as stored.
pub fn export_jsonl(tree: &[Entry]) -> String {
    let mut out = String::new();
    for entry in tree {
        let stored = serde_json::to_value(&entry.kind).unwrap_or(Value::Null);
        let line = json!({
            "id": entry.id.0,
            "parent": entry.parent.map(|parent| parent.0),
            "created": timestamp_millis(entry.created_at),
            "kind": stored.get("kind").cloned().unwrap_or(Value::Null),
            "data": stored.get("data").cloned().unwrap_or(Value::Null),
        });
        let _ = writeln!(out, "{line}");
    }
    out
}

fn timestamp_millis(time: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// The conversation from the root to the session's leaf as Markdown: the messages in full,
/// each tool call as one line, each result's first lines.
pub fn export_markdown(session: &Session, tree: &[Entry]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {}\n",
        session.title.as_deref().unwrap_or("Untitled session")
    );
    let _ = writeln!(out, "- id: `{}`", session.id);
    if let Some(workspace) = &session.workspace {
        let _ = writeln!(out, "- workspace: `{}`", workspace.display());
    }
    let _ = writeln!(out, "- created: {}", timestamp(session.created_at));
    let _ = writeln!(out, "- status: {}", session.status.as_str());
    for entry in branch(tree, session.leaf) {
        entry_markdown(&mut out, entry);
    }
    out
}

fn entry_markdown(out: &mut String, entry: &Entry) {
    match &entry.kind {
        EntryKind::UserMessage { content } => {
            let _ = writeln!(out, "\n## User\n\n{}", blocks_markdown(content));
        }
        EntryKind::AssistantMessage(message) => {
            let _ = writeln!(out, "\n## Assistant\n");
            for part in &message.content {
                match part {
                    AssistantPart::Text { text } if !text.trim().is_empty() => {
                        let _ = writeln!(out, "{}\n", text.trim_end());
                    }
                    AssistantPart::ToolCall(call) => {
                        let _ = writeln!(
                            out,
                            "- **{}** `{}`",
                            call.name,
                            shortened(call.arguments.trim(), ARGUMENTS_SHOWN).replace('`', "'")
                        );
                    }
                    AssistantPart::Text { .. } | AssistantPart::Reasoning { .. } => {}
                }
            }
        }
        EntryKind::ToolResult { message, .. } => {
            let text = text_of(&message.content);
            let lines: Vec<&str> = text.lines().collect();
            let error = if message.is_error { " (error)" } else { "" };
            let _ = writeln!(out, "\n**{} result{error}:**\n", message.tool_name);
            let fence = fence_for(&text);
            let _ = writeln!(out, "{fence}");
            for line in lines.iter().take(RESULT_LINES_SHOWN) {
                let _ = writeln!(out, "{line}");
            }
            let _ = writeln!(out, "{fence}");
            if lines.len() > RESULT_LINES_SHOWN {
                let _ = writeln!(out, "\n*… {} more lines*", lines.len() - RESULT_LINES_SHOWN);
            }
        }
        EntryKind::Compaction(compaction) => {
            let _ = writeln!(
                out,
                "\n## Summary of the earlier conversation (compaction)\n\n{}",
                compaction.summary.trim_end()
            );
        }
        EntryKind::BranchSummary { summary, from_leaf } => {
            let _ = writeln!(
                out,
                "\n## Back from another branch (ended at entry {from_leaf})\n\n{}",
                summary.trim_end()
            );
        }
        EntryKind::ModelChange { provider, model } => {
            let _ = writeln!(out, "\n*Model: {provider} / {model}*");
        }
        EntryKind::ModeChange { mode } => {
            let _ = writeln!(out, "\n*Permission mode: {}*", mode.as_str());
        }
        EntryKind::Label { name } => {
            let _ = writeln!(out, "\n*Label: {name}*");
        }
        EntryKind::Custom { custom_type, .. } => {
            let _ = writeln!(out, "\n*Extension state: {custom_type}*");
        }
        EntryKind::TurnContext(context) => {
            let _ = writeln!(
                out,
                "\n*{} / {}, mode {}, {} tools*",
                context.provider,
                context.model,
                context.permission_mode.as_str(),
                context.tools.len()
            );
        }
    }
}

fn blocks_markdown(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.trim_end().to_owned(),
            ContentBlock::Image { mime_type, .. } => format!("*[image, {mime_type}]*"),
            ContentBlock::ToolReference { tool_name } => {
                toolhost_core::tool_reference_text(tool_name)
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
