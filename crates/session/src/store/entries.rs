//! Entries: appending (one committed transaction each), branching, reading the path and the
//! tree.

use std::time::SystemTime;

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::{SessionStore, insert_session, millis, time, to_i64};
use crate::{Entry, EntryId, EntryKind, NewSession, Resume, Session, SessionId, StoreError};

/// Where an appended entry goes.
enum Parent {
    /// After the session's leaf, read in the same transaction as the insert.
    Leaf,
    /// After this entry (`None`: a new root).
    Entry(Option<EntryId>),
}

/// The session's entries up to `?2` (its leaf), newest first: [`SessionStore::conversation`]
/// picks the path out of them in one pass. A parent's id is always smaller than its
/// children's, so going down from the leaf, each entry on the path comes after its child;
/// entries of other branches are stepped over without reading their payloads. (Before, a
/// recursive query walked the path, and `id IN path` looked each row up again: twice the
/// time for a 10 000-entry path.)
const SESSION_DOWN_FROM: &str = "SELECT id, parent_id, created_at, payload FROM entries \
     WHERE session_id = ?1 AND id <= ?2 ORDER BY id DESC";

impl SessionStore {
    /// Creates a session with `first` as its root entry, in one transaction: the session is
    /// never seen without it, even when the process is killed right after creating it.
    pub fn create_session_with(
        &mut self,
        new: NewSession,
        first: &EntryKind,
    ) -> Result<(Session, EntryId), StoreError> {
        let encoded = Encoded::new(first)?;
        let id = SessionId::generate();
        let now = millis(SystemTime::now());
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        insert_session(&tx, &id, &new, now)?;
        let entry = write_entry(&tx, &id, None, &encoded, now)?;
        tx.commit()?;
        self.committed();
        Ok((self.get(id.as_str())?, entry))
    }

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
        let leaf: Option<i64> = self
            .connection
            .prepare_cached("SELECT leaf_entry_id FROM sessions WHERE id = ?1")?
            .query_row([session.as_str()], |row| row.get(0))
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(session.to_string()))?;
        let Some(leaf) = leaf else {
            return Ok(Vec::new());
        };
        let mut statement = self.connection.prepare_cached(SESSION_DOWN_FROM)?;
        let mut rows = statement.query(params![session.as_str(), leaf])?;
        let mut path = Vec::new();
        let mut wanted = Some(leaf);
        while let Some(next) = wanted {
            let Some(row) = rows.next()? else {
                break;
            };
            if row.get::<_, i64>(0)? != next {
                continue;
            }
            let entry = entry_from_row(row, session)?;
            wanted = entry.parent.map(|parent| parent.0);
            path.push(entry);
        }
        path.reverse();
        Ok(path)
    }

    /// What a resumed run of the session starts with: [`Resume::from_path`] of its
    /// conversation.
    pub fn resume(&self, session: &SessionId) -> Result<Resume, StoreError> {
        Ok(Resume::from_path(self.conversation(session)?))
    }

    /// Every entry of the session, every branch, parents before their children.
    pub fn tree(&self, session: &SessionId) -> Result<Vec<Entry>, StoreError> {
        self.require_session(session)?;
        let mut statement = self.connection.prepare_cached(
            "SELECT id, parent_id, created_at, payload FROM entries \
             WHERE session_id = ?1 ORDER BY id",
        )?;
        let mut rows = statement.query([session.as_str()])?;
        let mut entries = Vec::new();
        while let Some(row) = rows.next()? {
            entries.push(entry_from_row(row, session)?);
        }
        Ok(entries)
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
        let encoded = Encoded::new(kind)?;
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
        let id = write_entry(&tx, session, parent, &encoded, millis(SystemTime::now()))?;
        tx.commit()?;
        self.committed();
        Ok(id)
    }

    fn require_session(&self, session: &SessionId) -> Result<(), StoreError> {
        self.connection
            .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
            .query_row([session.as_str()], |_| Ok(()))
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(session.to_string()))
    }
}

/// An entry from `id, parent_id, created_at, payload`.
fn entry_from_row(row: &rusqlite::Row<'_>, session: &SessionId) -> Result<Entry, StoreError> {
    let id = EntryId(row.get(0)?);
    // The payload is parsed where SQLite holds it, not copied into a String first.
    let payload = row.get_ref(3)?.as_str().map_err(rusqlite::Error::from)?;
    let kind = serde_json::from_str(payload)
        .map_err(|source| StoreError::Payload { entry: id, source })?;
    Ok(Entry {
        id,
        session: session.clone(),
        parent: row.get::<_, Option<i64>>(1)?.map(EntryId),
        created_at: time(row.get(2)?),
        kind,
    })
}

/// An entry as it is written, made before the transaction begins (no lock held meanwhile).
struct Encoded<'a> {
    kind: &'a EntryKind,
    payload: String,
    text: Option<String>,
}

impl<'a> Encoded<'a> {
    fn new(kind: &'a EntryKind) -> Result<Self, StoreError> {
        let payload = serde_json::to_string(kind).map_err(|source| StoreError::Encode {
            kind: kind.name(),
            source,
        })?;
        Ok(Self {
            kind,
            payload,
            text: kind.searchable_text(),
        })
    }
}

/// Inserts the entry, its searchable text, and makes it the session's leaf, adding its usage
/// to the session's totals.
fn write_entry(
    tx: &Transaction<'_>,
    session: &SessionId,
    parent: Option<EntryId>,
    entry: &Encoded<'_>,
    now: i64,
) -> Result<EntryId, StoreError> {
    tx.prepare_cached(
        "INSERT INTO entries (session_id, parent_id, created_at, kind, payload) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        session.as_str(),
        parent.map(|parent| parent.0),
        now,
        entry.kind.name(),
        entry.payload
    ])?;
    let id = tx.last_insert_rowid();
    if let Some(text) = &entry.text {
        tx.prepare_cached("INSERT INTO entry_text (rowid, text) VALUES (?1, ?2)")?
            .execute(params![id, text])?;
    }
    let usage = entry.kind.usage();
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
    Ok(EntryId(id))
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
