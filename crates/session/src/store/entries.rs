//! Entries: appending (one committed transaction each), branching, reading the path and the
//! tree.

use std::time::SystemTime;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::{SessionStore, millis, time, to_i64};
use crate::{Entry, EntryId, EntryKind, Resume, SessionId, StoreError};

/// Where an appended entry goes.
enum Parent {
    /// After the session's leaf, read in the same transaction as the insert.
    Leaf,
    /// After this entry (`None`: a new root).
    Entry(Option<EntryId>),
}

/// The path from the root to `?1`'s leaf, root first, in one statement. The walk up reads
/// the covering index `entries_path` (id, parent) alone, not the rows with their payloads. A
/// parent's id is always smaller than its children's, so id order is path order, and SQLite
/// reads the rows in rowid order without sorting their payloads.
const CONVERSATION: &str = "WITH RECURSIVE path(id) AS ( \
         SELECT leaf_entry_id FROM sessions WHERE id = ?1 AND leaf_entry_id IS NOT NULL \
         UNION ALL \
         SELECT e.parent_id FROM entries e INDEXED BY entries_path JOIN path ON e.id = path.id \
         WHERE e.parent_id IS NOT NULL \
     ) \
     SELECT id, session_id, parent_id, created_at, payload \
     FROM entries WHERE id IN path ORDER BY id";

impl SessionStore {
    /// Appends `kind` after `parent` (`None`: as a new root) and makes it the session's leaf.
    /// Committed when this returns; an assistant message's usage joins the session's totals
    /// in the same transaction.
    pub fn append(
        &mut self,
        session: &SessionId,
        parent: Option<EntryId>,
        kind: &EntryKind,
    ) -> Result<EntryId, StoreError> {
        self.insert(session, Parent::Entry(parent), kind)
    }

    /// Appends `kind` after the session's current leaf, read under the write lock: two
    /// processes appending to one session make one chain, never a fork.
    pub fn append_at_leaf(
        &mut self,
        session: &SessionId,
        kind: &EntryKind,
    ) -> Result<EntryId, StoreError> {
        self.insert(session, Parent::Leaf, kind)
    }

    /// Moves the session's leaf back to `entry`: the next append continues from there, and
    /// the branch that went on from it stays in the tree.
    pub fn branch_from(&mut self, session: &SessionId, entry: EntryId) -> Result<(), StoreError> {
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        check_in_session(&tx, session, entry)?;
        tx.prepare_cached("UPDATE sessions SET leaf_entry_id = ?2, updated_at = ?3 WHERE id = ?1")?
            .execute(params![
                session.as_str(),
                entry.0,
                millis(SystemTime::now())
            ])?;
        tx.commit()?;
        Ok(())
    }

    /// The conversation: the entries from the root to the session's leaf, root first.
    pub fn conversation(&self, session: &SessionId) -> Result<Vec<Entry>, StoreError> {
        self.require_session(session)?;
        self.entries(CONVERSATION, session)
    }

    /// What a resumed run of the session starts with: [`Resume::from_path`] of its
    /// conversation.
    pub fn resume(&self, session: &SessionId) -> Result<Resume, StoreError> {
        Ok(Resume::from_path(self.conversation(session)?))
    }

    /// Every entry of the session, every branch, parents before their children.
    pub fn tree(&self, session: &SessionId) -> Result<Vec<Entry>, StoreError> {
        self.require_session(session)?;
        self.entries(
            "SELECT id, session_id, parent_id, created_at, payload FROM entries \
             WHERE session_id = ?1 ORDER BY id",
            session,
        )
    }

    /// The provider and model of the session's latest turn context or model change (every
    /// branch considered: the latest appended), if it has one.
    pub fn latest_model(
        &self,
        session: &SessionId,
    ) -> Result<Option<(String, String)>, StoreError> {
        self.require_session(session)?;
        let latest = self
            .connection
            .prepare_cached(
                "SELECT id, payload FROM entries WHERE session_id = ?1 \
                 AND kind IN ('turn_context', 'model_change') ORDER BY id DESC LIMIT 1",
            )?
            .query_row([session.as_str()], |row| {
                Ok((EntryId(row.get(0)?), row.get::<_, String>(1)?))
            })
            .optional()?;
        let Some((id, payload)) = latest else {
            return Ok(None);
        };
        let kind: EntryKind = serde_json::from_str(&payload)
            .map_err(|source| StoreError::Payload { entry: id, source })?;
        Ok(match kind {
            EntryKind::TurnContext(context) => Some((context.provider, context.model)),
            EntryKind::ModelChange { provider, model } => Some((provider, model)),
            _ => None,
        })
    }

    fn insert(
        &mut self,
        session: &SessionId,
        parent: Parent,
        kind: &EntryKind,
    ) -> Result<EntryId, StoreError> {
        let payload = serde_json::to_string(kind).map_err(|source| StoreError::Encode {
            kind: kind.name(),
            source,
        })?;
        let text = kind.searchable_text();
        let usage = kind.usage();
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let leaf: Option<i64> = tx
            .prepare_cached("SELECT leaf_entry_id FROM sessions WHERE id = ?1")?
            .query_row([session.as_str()], |row| row.get(0))
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(session.to_string()))?;
        let parent = match parent {
            Parent::Leaf => leaf.map(EntryId),
            Parent::Entry(parent) => parent,
        };
        if let Some(parent) = parent {
            check_in_session(&tx, session, parent)?;
        }
        let now = millis(SystemTime::now());
        tx.prepare_cached(
            "INSERT INTO entries (session_id, parent_id, created_at, kind, payload) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            session.as_str(),
            parent.map(|parent| parent.0),
            now,
            kind.name(),
            payload
        ])?;
        let id = tx.last_insert_rowid();
        if let Some(text) = text {
            tx.prepare_cached("INSERT INTO entry_text (rowid, text) VALUES (?1, ?2)")?
                .execute(params![id, text])?;
        }
        tx.prepare_cached(
            "UPDATE sessions SET leaf_entry_id = ?2, updated_at = ?3, \
             input_tokens = input_tokens + ?4, output_tokens = output_tokens + ?5, \
             cache_read_tokens = cache_read_tokens + ?6, \
             cache_write_tokens = cache_write_tokens + ?7 WHERE id = ?1",
        )?
        .execute(params![
            session.as_str(),
            id,
            now,
            to_i64(usage.input_tokens),
            to_i64(usage.output_tokens),
            to_i64(usage.cache_read_tokens),
            to_i64(usage.cache_write_tokens),
        ])?;
        tx.commit()?;
        self.committed();
        Ok(EntryId(id))
    }

    fn require_session(&self, session: &SessionId) -> Result<(), StoreError> {
        self.connection
            .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
            .query_row([session.as_str()], |_| Ok(()))
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(session.to_string()))
    }

    fn entries(&self, sql: &str, session: &SessionId) -> Result<Vec<Entry>, StoreError> {
        let mut statement = self.connection.prepare_cached(sql)?;
        let mut rows = statement.query([session.as_str()])?;
        let mut entries = Vec::new();
        // Every entry is of this session: one id, not one String per row.
        let session = session.clone();
        while let Some(row) = rows.next()? {
            let id = EntryId(row.get(0)?);
            // The payload is parsed where SQLite holds it, not copied into a String first.
            let payload = row.get_ref(4)?.as_str().map_err(rusqlite::Error::from)?;
            let kind = serde_json::from_str(payload)
                .map_err(|source| StoreError::Payload { entry: id, source })?;
            entries.push(Entry {
                id,
                session: session.clone(),
                parent: row.get::<_, Option<i64>>(2)?.map(EntryId),
                created_at: time(row.get(3)?),
                kind,
            });
        }
        Ok(entries)
    }
}

fn check_in_session(
    tx: &Transaction<'_>,
    session: &SessionId,
    entry: EntryId,
) -> Result<(), StoreError> {
    let owner: Option<String> = tx
        .prepare_cached("SELECT session_id FROM entries WHERE id = ?1")?
        .query_row([entry.0], |row| row.get(0))
        .optional()?;
    if owner.as_deref() == Some(session.as_str()) {
        return Ok(());
    }
    Err(StoreError::EntryNotInSession {
        session: session.clone(),
        entry,
    })
}
