//! What can go wrong with a session store, saying which file and what to do.

use std::path::PathBuf;

use crate::{EntryId, SessionId};

/// An error of the session store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file was written by a newer toolhost; it is left as it was.
    #[error(
        "{path}: the session store has schema version {found}, newer than version {supported} \
         that this toolhost knows; use a newer toolhost (the file was left untouched)"
    )]
    NewerSchema {
        /// The store's file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The file is not a SQLite database, or it is damaged; it is left as it was.
    #[error(
        "{path}: the session store is unreadable ({reason}); the file was left untouched: \
         move it away (or restore a backup) and toolhost starts a new one"
    )]
    Corrupt {
        /// The store's file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The file is a SQLite database of something else; it is left as it was.
    #[error(
        "{path}: a SQLite database, but not a toolhost session store (it has tables of its \
         own and no schema version); the file was left untouched"
    )]
    NotASessionStore {
        /// The file.
        path: PathBuf,
    },
    /// The copy taken before a migration could not be written; nothing was migrated.
    #[error(
        "{path}: could not back up the store to {backup} before migrating it from version \
         {from}: {source}"
    )]
    Backup {
        /// The store's file.
        path: PathBuf,
        /// Where the copy was to go.
        backup: PathBuf,
        /// The version being migrated from.
        from: i64,
        /// Why it failed.
        source: rusqlite::Error,
    },
    /// The file could not be opened or inspected.
    #[error("{path}: cannot open the session store: {source}")]
    Io {
        /// The store's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another run holds the session: a process that went on with it too would fork its
    /// conversation.
    #[error(
        "the session {session} is running{}; it can go on once that run ends",
        running_in(*pid)
    )]
    SessionRunning {
        /// The session.
        session: SessionId,
        /// The process that runs it, when it could be read.
        pid: Option<u32>,
    },
    /// No session has this id (or id prefix).
    #[error("no session {0} in the store")]
    SessionNotFound(String),
    /// The prefix names more than one session.
    #[error("the session id prefix {prefix} matches several sessions ({matches}); give more of it")]
    AmbiguousPrefix {
        /// The prefix given.
        prefix: String,
        /// Some of the ids it matches.
        matches: String,
    },
    /// The entry does not exist, or belongs to another session.
    #[error("entry {entry} is not in session {session}")]
    EntryNotInSession {
        /// The session.
        session: SessionId,
        /// The entry.
        entry: EntryId,
    },
    /// A stored entry's payload does not read back (written by hand, or a bug).
    #[error("entry {entry} has an unreadable payload: {source}")]
    Payload {
        /// The entry.
        entry: EntryId,
        /// Why.
        source: serde_json::Error,
    },
    /// An entry could not be written as JSON.
    #[error("a {kind} entry could not be encoded: {source}")]
    Encode {
        /// The entry's kind.
        kind: &'static str,
        /// Why.
        source: serde_json::Error,
    },
    /// SQLite failed.
    #[error("session store: {0}")]
    Database(#[from] rusqlite::Error),
}

/// Where a session runs, for [`StoreError::SessionRunning`]'s message.
fn running_in(pid: Option<u32>) -> String {
    match pid {
        Some(pid) if pid == std::process::id() => " in this toolhost process".to_owned(),
        Some(pid) => format!(" in another toolhost process (pid {pid})"),
        None => " in another toolhost process".to_owned(),
    }
}
