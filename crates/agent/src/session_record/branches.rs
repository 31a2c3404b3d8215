//! The branches of a session's tree, and moving between them (`/tree`): each entry that
//! nothing follows is the tip of a branch; going to one makes its path the conversation.

use std::collections::{HashMap, HashSet};

use toolhost_core::ContentBlock;
use toolhost_core::conversation::Message;
use toolhost_session::{Entry, EntryId, EntryKind, StoreError};

use super::RecordedSession;

/// One branch of the tree, by its tip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchTip {
    /// Its last entry.
    pub tip: EntryId,
    /// Whether the conversation is this branch (the session's leaf is its tip).
    pub current: bool,
    /// How many user messages its path holds.
    pub user_messages: usize,
    /// The last user message on it (empty when it has none).
    pub last_user_message: String,
}

impl RecordedSession {
    /// The branches of the session, oldest tip first.
    pub fn branch_tips(&self) -> Result<Vec<BranchTip>, StoreError> {
        let store = self.store();
        let leaf = store.get(self.id.as_str())?.leaf;
        let tree = store.tree(&self.id)?;
        drop(store);
        let by_id: HashMap<EntryId, &Entry> = tree.iter().map(|entry| (entry.id, entry)).collect();
        let followed: HashSet<EntryId> = tree.iter().filter_map(|entry| entry.parent).collect();
        Ok(tree
            .iter()
            .filter(|entry| !followed.contains(&entry.id))
            .map(|tip| {
                let users: Vec<&Entry> = path_up(&by_id, tip)
                    .filter(|entry| matches!(entry.kind, EntryKind::UserMessage { .. }))
                    .collect();
                BranchTip {
                    tip: tip.id,
                    current: leaf == Some(tip.id),
                    user_messages: users.len(),
                    last_user_message: users
                        .first()
                        .map(|entry| text_of(entry))
                        .unwrap_or_default(),
                }
            })
            .collect())
    }

    /// Makes the branch that ends at `tip` the conversation, the others kept; the
    /// conversation to go on with.
    pub fn switch_to_branch(&self, tip: EntryId) -> Result<Vec<Message>, StoreError> {
        self.store().branch_from(&self.id, tip)?;
        Ok(self.store().resume(&self.id)?.messages)
    }
}

/// The entries from `from` up to the root, `from` first.
fn path_up<'a>(
    by_id: &'a HashMap<EntryId, &'a Entry>,
    from: &'a Entry,
) -> impl Iterator<Item = &'a Entry> + 'a {
    std::iter::successors(Some(from), |entry| {
        entry.parent.and_then(|parent| by_id.get(&parent).copied())
    })
}

fn text_of(entry: &Entry) -> String {
    match &entry.kind {
        EntryKind::UserMessage { content } => content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}
