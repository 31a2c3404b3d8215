//! The session store of toolhost: sessions, and the tree of entries each is made of, in one
//! SQLite file.
//!
//! A session's entries form a tree: each names its parent, and the session's **leaf** says
//! where the conversation is. [`SessionStore::append`] adds an entry and moves the leaf to
//! it; [`SessionStore::branch_from`] moves the leaf back to an earlier entry, so that the
//! next append starts a new branch and the old one stays; [`SessionStore::conversation`]
//! reads the path from the root to the leaf (one scan down from the leaf); [`Resume`] turns
//! that path into the messages a resumed run sends (applying the last compaction) and the
//! turn context it runs with.
//!
//! **Durability.** The file is in write-ahead-log mode. Every append is one `IMMEDIATE`
//! transaction, committed before it returns: a process killed at any moment leaves the store
//! readable, holding every append that returned. Several processes may use one file at once
//! (writers wait up to [`DEFAULT_BUSY_TIMEOUT`] for each other). The default
//! [`Synchronous::Normal`] syncs the log at checkpoints (every [`CHECKPOINT_EVERY`] appends,
//! on a thread of their own), not at every commit: a killed process loses nothing that
//! returned, a power cut may lose the appends since the last checkpoint, never the store.
//! [`Synchronous::Full`] syncs every commit, for about ten times the latency (the figures are
//! in the crate README).
//!
//! **Schema.** Versioned with `PRAGMA user_version` ([`SCHEMA_VERSION`]); an older store is
//! copied to `<file>.bak-v<n>` and migrated; a newer one, a corrupt file or another program's
//! database is an error naming the file, and the file is left as it was.
//!
//! **Sync, not async.** SQLite is a blocking library and a commit takes a fraction
//! of a millisecond, so the API is plain blocking calls on `&mut self`, and the crate pulls in no
//! runtime. Async callers hold the store in a `Mutex` and call it from `spawn_blocking` (or
//! directly, where a few hundred microseconds on the executor do no harm).
//!
//! ```
//! use toolhost_session::{EntryKind, NewSession, Resume, SessionStore};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let mut store = SessionStore::open(dir.path().join("sessions.db"))?;
//! let session = store.create_session(NewSession::default())?.id;
//! let first = store.append(&session, None, &EntryKind::user_text("Hello"))?;
//! store.append(&session, Some(first), &EntryKind::user_text("Never mind"))?;
//! store.branch_from(&session, first)?;
//! store.append_at_leaf(&session, &EntryKind::user_text("What is in README.md?"))?;
//!
//! let path = store.conversation(&session)?;
//! assert_eq!(path.len(), 2);
//! assert_eq!(store.tree(&session)?.len(), 3);
//! let resume = Resume::from_path(path);
//! assert_eq!(resume.messages.len(), 2);
//! # Ok(())
//! # }
//! ```

mod entry;
mod error;
mod ids;
mod resume;
mod run_lock;
mod schema;
mod session;
mod store;
pub mod views;

pub use entry::{Compaction, Entry, EntryKind, PromptFile, PromptInputs, TurnContext};
pub use error::StoreError;
pub use ids::{EntryId, SessionId};
pub use resume::{BRANCH_PREAMBLE, COMPACTION_PREAMBLE, Resume, compaction_message};
pub use run_lock::RunLock;
pub use schema::{SCHEMA_VERSION, backup_path};
pub use session::{NewSession, SearchHit, Session, SessionStatus, SpawnedBy};
pub use store::{
    CHECKPOINT_EVERY, DEFAULT_BUSY_TIMEOUT, LOG_LIMIT_PAGES, SessionStore, StoreOptions,
    Synchronous,
};
