//! What pi extensions keep in a session, and what they read of it: their entries
//! (`pi.appendEntry`), its name (`pi.setSessionName`), and the session's entries in the shapes
//! of pi's session manager (`ctx.sessionManager.getEntries()` / `getBranch()`).

use std::collections::HashMap;
use std::time::UNIX_EPOCH;

use serde_json::{Value, json};
use toolhost_script::pi_messages::{assistant_message, tool_result_message, user_message};
use toolhost_script::{EntryScope, ExtensionStore};
use toolhost_session::{Entry, EntryId, EntryKind, StoreError};

use super::RecordedSession;

impl RecordedSession {
    /// Records an extension's state (pi's `appendEntry`).
    pub fn record_custom(
        &self,
        custom_type: &str,
        data: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.append(&EntryKind::Custom {
            custom_type: custom_type.to_owned(),
            data: data.clone(),
        })
    }

    /// Names the session (pi's `setSessionName`).
    pub fn set_title(&self, title: &str) -> Result<(), StoreError> {
        self.store().set_title(&self.id, title)
    }

    /// The session's entries as pi's session manager gives them, oldest first: the path to
    /// the leaf, or every branch. Messages are `{type: "message", message}` (pi's message
    /// shapes), extensions' entries `{type: "custom", customType, data}`, and compactions,
    /// branch summaries, labels and model changes pi's entries of those names; what pi has
    /// no entry for (a permission mode change, a turn's settings) is left out, and an entry's
    /// `parentId` is its nearest ancestor listed.
    pub fn pi_entries(&self, scope: EntryScope) -> Result<Vec<Value>, StoreError> {
        let store = self.store();
        let tree = store.tree(&self.id)?;
        let entries = match scope {
            EntryScope::Branch => store.conversation(&self.id)?,
            EntryScope::All => tree.clone(),
        };
        drop(store);
        let parents: HashMap<EntryId, Option<EntryId>> =
            tree.iter().map(|entry| (entry.id, entry.parent)).collect();
        let listed: HashMap<EntryId, bool> = tree
            .iter()
            .map(|entry| (entry.id, pi_entry(entry).is_some()))
            .collect();
        let listed_parent = |entry: &Entry| {
            let mut parent = entry.parent;
            while let Some(id) = parent {
                if listed.get(&id) == Some(&true) {
                    return Some(id.0.to_string());
                }
                parent = parents.get(&id).copied().flatten();
            }
            None
        };
        Ok(entries
            .iter()
            .filter_map(|entry| {
                let mut shaped = pi_entry(entry)?;
                shaped["parentId"] = json!(listed_parent(entry));
                Some(shaped)
            })
            .collect())
    }
}

/// One entry in pi's shape, without its `parentId`; `None` for what pi has no entry for.
fn pi_entry(entry: &Entry) -> Option<Value> {
    let millis = entry
        .created_at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    let message = |message: Value| json!({ "type": "message", "message": message });
    let mut shaped = match &entry.kind {
        EntryKind::UserMessage { content } => message(user_message(content, millis)),
        EntryKind::AssistantMessage(assistant) => message(assistant_message(assistant, millis)),
        EntryKind::ToolResult {
            message: result,
            details,
        } => message(tool_result_message(result, details.as_ref(), millis)),
        EntryKind::Custom { custom_type, data } => {
            json!({ "type": "custom", "customType": custom_type, "data": data })
        }
        EntryKind::Compaction(compaction) => json!({
            "type": "compaction",
            "summary": compaction.summary,
            "firstKeptEntryId": compaction.first_kept.map(|id| id.0.to_string()),
            "tokensBefore": compaction.tokens_before,
            "details": {
                "readFiles": compaction.files_read,
                "modifiedFiles": compaction.files_modified,
            },
        }),
        EntryKind::BranchSummary { from_leaf, summary } => json!({
            "type": "branch_summary",
            "fromId": from_leaf.0.to_string(),
            "summary": summary,
        }),
        EntryKind::Label { name } => json!({ "type": "label", "label": name }),
        EntryKind::ModelChange { provider, model } => {
            json!({ "type": "model_change", "provider": provider, "modelId": model })
        }
        EntryKind::ModeChange { .. } | EntryKind::TurnContext(_) => return None,
    };
    shaped["id"] = json!(entry.id.0.to_string());
    // pi stamps entries in ISO 8601 (its messages in milliseconds).
    shaped["timestamp"] = json!(humantime::format_rfc3339_millis(entry.created_at).to_string());
    Some(shaped)
}

impl ExtensionStore for RecordedSession {
    fn entries(&self, scope: EntryScope) -> Result<Vec<Value>, String> {
        self.pi_entries(scope).map_err(|error| error.to_string())
    }

    fn record_custom(&self, custom_type: &str, data: &Value) -> Result<(), String> {
        RecordedSession::record_custom(self, custom_type, data).map_err(|error| error.to_string())
    }

    fn set_title(&self, title: &str) -> Result<(), String> {
        RecordedSession::set_title(self, title).map_err(|error| error.to_string())
    }
}
