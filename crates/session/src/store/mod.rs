//! [`SessionStore`]: opening the file, and the sessions' own records.

mod checkpoint;
mod entries;
mod search;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};
use toolhost_core::conversation::Usage;

use crate::schema;
use crate::{EntryId, NewSession, Session, SessionId, SessionStatus, SpawnedBy, StoreError};
use checkpoint::Checkpointer;
pub use checkpoint::{CHECKPOINT_EVERY, LOG_LIMIT_PAGES};

/// How long a write waits for another process's write to finish before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How much of the file SQLite reads through a memory map instead of a `read` call per page
/// (`PRAGMA mmap_size`): a resume of 10 000 entries reads thousands of pages.
pub const MMAP_SIZE: i64 = 256 * 1024 * 1024;

/// When SQLite waits for the disk (`PRAGMA synchronous`), in write-ahead-log mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Every commit is synced to disk before it returns: nothing committed is lost even on a
    /// power cut or an OS crash. Costs one `fsync` per append.
    Full,
    /// The log is synced at checkpoints only: a killed process loses nothing committed (the
    /// data is in the OS already), a power cut may lose the last commits, and the store
    /// stays consistent either way.
    #[default]
    Normal,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Self::Full => "FULL",
            Self::Normal => "NORMAL",
        }
    }
}

/// How to open a store: [`SessionStore::open`] takes the defaults.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    synchronous: Synchronous,
    busy_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            synchronous: Synchronous::default(),
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }
}

impl StoreOptions {
    /// When commits wait for the disk (default [`Synchronous::Normal`]).
    #[must_use]
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// How long a write waits for another process (default [`DEFAULT_BUSY_TIMEOUT`]).
    #[must_use]
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// Opens the store at `path`, creating the file (and its folder) if there is none, and
    /// migrating an older schema after backing it up. A file from a newer schema, a corrupt
    /// file or another program's database is refused and left untouched.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<SessionStore, StoreError> {
        let path = path.as_ref();
        schema::check_file(path)?;
        if let Some(folder) = path
            .parent()
            .filter(|folder| !folder.as_os_str().is_empty())
        {
            std::fs::create_dir_all(folder).map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut connection = Connection::open_with_flags(path, flags)
            .map_err(|error| schema::unreadable(path, error))?;
        connection.busy_timeout(self.busy_timeout)?;
        let version = schema::check_version(&connection, path)?;
        // A new store is made without waiting for the disk: switching an empty file to WAL
        // goes through a rollback journal (four syncs, with the folder's), the first log
        // write syncs the log and the folder again, six syncs in all that made the first run
        // of the agent tens of milliseconds slower on a loaded machine. A power cut before the
        // first checkpoint can only lose the empty schema (the next open makes it again);
        // checkpoints sync as ever, and the chosen `synchronous` applies from the first entry.
        if version == 0 {
            connection.pragma_update(None, "synchronous", "OFF")?;
        }
        // Only now, with the file known to be ours, may SQLite write to it.
        let mode: String =
            connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("cannot use a write-ahead log (journal mode stayed {mode})"),
            });
        }
        connection.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&mut connection, path, version)?;
        connection.pragma_update(None, "synchronous", self.synchronous.pragma())?;
        connection.pragma_update(None, "journal_size_limit", checkpoint::JOURNAL_SIZE_LIMIT)?;
        connection.pragma_update(None, "mmap_size", MMAP_SIZE)?;
        let checkpointer = Checkpointer::start(path, &mut connection);
        Ok(SessionStore {
            checkpointer,
            connection,
            path: path.to_path_buf(),
        })
    }
}

/// The session store: one SQLite file in write-ahead-log mode, shared safely by several
/// processes. Every write is one committed transaction by the time it returns.
pub struct SessionStore {
    // Declared first: dropped (its thread joined) before the store's own connection closes.
    checkpointer: Option<Checkpointer>,
    connection: Connection,
    path: PathBuf,
}

/// The columns [`session_from_row`] reads, from `sessions s`.
const SESSION_COLUMNS: &str = "s.id, s.title, s.workspace, s.created_at, s.updated_at, \
     s.parent_session_id, s.spawned_by_call_id, s.status, s.input_tokens, s.output_tokens, \
     s.cache_read_tokens, s.cache_write_tokens, s.leaf_entry_id, \
     (SELECT count(*) FROM entries e WHERE e.session_id = s.id)";

impl SessionStore {
    /// Opens (or creates) the store at `path` with the default [`StoreOptions`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        StoreOptions::default().open(path)
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates a session, active and empty. A session that gets its first entry right away
    /// is better made with [`SessionStore::create_session_with`]: a process killed between
    /// the two calls leaves this one empty in `list`.
    pub fn create_session(&mut self, new: NewSession) -> Result<Session, StoreError> {
        let id = SessionId::generate();
        insert_session(&self.connection, &id, &new, millis(SystemTime::now()))?;
        self.get(id.as_str())
    }

    /// The session with this id, or the only one whose id starts with it.
    pub fn get(&self, id_or_prefix: &str) -> Result<Session, StoreError> {
        let exact = self
            .connection
            .prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?1"
            ))?
            .query_row([id_or_prefix], session_from_row)
            .optional()?;
        if let Some(session) = exact {
            return Ok(session);
        }
        if id_or_prefix.is_empty() {
            return Err(StoreError::SessionNotFound(String::new()));
        }
        let mut matches = self.find_by_prefix(id_or_prefix, 3)?;
        match matches.len() {
            0 => Err(StoreError::SessionNotFound(id_or_prefix.to_owned())),
            1 => Ok(matches.remove(0)),
            _ => Err(StoreError::AmbiguousPrefix {
                prefix: id_or_prefix.to_owned(),
                matches: matches
                    .iter()
                    .map(|session| session.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Sessions whose id starts with `prefix`, in id order (so oldest first), at most `limit`.
    pub fn find_by_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<Session>, StoreError> {
        self.sessions(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s \
                 WHERE substr(s.id, 1, length(?1)) = ?1 ORDER BY s.id LIMIT ?2"
            ),
            params![prefix, to_i64(limit as u64)],
        )
    }

    /// Sessions that ran in `workspace` (compared as stored), the most recently changed first.
    pub fn list_in_workspace(
        &self,
        workspace: &Path,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Session>, StoreError> {
        self.sessions(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.workspace = ?1 \
                 ORDER BY s.updated_at DESC, s.id DESC LIMIT ?2 OFFSET ?3"
            ),
            params![
                workspace.to_string_lossy(),
                to_i64(limit as u64),
                to_i64(offset as u64)
            ],
        )
    }

    /// The sessions that `parent` spawned (its sub-agents'), oldest first.
    pub fn children(&self, parent: &SessionId) -> Result<Vec<Session>, StoreError> {
        self.sessions(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.parent_session_id = ?1 \
                 ORDER BY s.created_at, s.id"
            ),
            params![parent.as_str()],
        )
    }

    /// Sessions, the most recently changed first.
    pub fn list(&self, limit: usize, offset: usize) -> Result<Vec<Session>, StoreError> {
        self.sessions(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s \
                 ORDER BY s.updated_at DESC, s.id DESC LIMIT ?1 OFFSET ?2"
            ),
            params![to_i64(limit as u64), to_i64(offset as u64)],
        )
    }

    /// Sessions whose title contains `text` (ASCII case ignored): exact titles first, then the
    /// most recently changed.
    pub fn find_by_title(&self, text: &str) -> Result<Vec<Session>, StoreError> {
        self.sessions(
            &format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s \
                 WHERE instr(lower(s.title), lower(?1)) > 0 \
                 ORDER BY lower(s.title) = lower(?1) DESC, s.updated_at DESC, s.id DESC"
            ),
            params![text],
        )
    }

    /// Deletes a session with its entries. Sub-agent sessions it spawned stay, without parent.
    /// A session that is running is refused ([`StoreError::SessionRunning`]).
    pub fn delete(&mut self, session: &SessionId) -> Result<(), StoreError> {
        let _running = self.claim_run(session)?;
        let tx = self.connection.transaction()?;
        tx.execute(
            "DELETE FROM entry_text WHERE rowid IN (SELECT id FROM entries WHERE session_id = ?1)",
            [session.as_str()],
        )?;
        let deleted = tx.execute("DELETE FROM sessions WHERE id = ?1", [session.as_str()])?;
        crate::run_lock::remove(&self.path, session);
        if deleted == 0 {
            return Err(StoreError::SessionNotFound(session.to_string()));
        }
        tx.commit()?;
        Ok(())
    }

    /// Claims `session` for a run by this process until the [`RunLock`] is dropped, or says
    /// that another run holds it ([`StoreError::SessionRunning`]). Only runs claim: reading,
    /// listing and searching a running session are fine.
    ///
    /// [`RunLock`]: crate::RunLock
    pub fn claim_run(&self, session: &SessionId) -> Result<crate::RunLock, StoreError> {
        crate::run_lock::claim(&self.path, session)
    }

    /// Adds tokens spent outside any stored response (a compaction's summary, say) to the
    /// session's totals. Assistant messages add their own usage when they are appended.
    pub fn add_usage(&mut self, session: &SessionId, usage: Usage) -> Result<(), StoreError> {
        self.update(
            session,
            "input_tokens = input_tokens + ?3, output_tokens = output_tokens + ?4, \
             cache_read_tokens = cache_read_tokens + ?5, cache_write_tokens = cache_write_tokens + ?6",
            params![
                session.as_str(),
                millis(SystemTime::now()),
                to_i64(usage.input_tokens),
                to_i64(usage.output_tokens),
                to_i64(usage.cache_read_tokens),
                to_i64(usage.cache_write_tokens),
            ],
        )
    }

    /// Sets how the session stands.
    pub fn set_status(
        &mut self,
        session: &SessionId,
        status: SessionStatus,
    ) -> Result<(), StoreError> {
        self.update(
            session,
            "status = ?3",
            params![session.as_str(), millis(SystemTime::now()), status.as_str()],
        )
    }

    /// Sets the session's title.
    pub fn set_title(&mut self, session: &SessionId, title: &str) -> Result<(), StoreError> {
        self.update(
            session,
            "title = ?3",
            params![session.as_str(), millis(SystemTime::now()), title],
        )
    }

    /// Runs SQLite's full integrity check; a damaged store is [`StoreError::Corrupt`].
    pub fn check_integrity(&self) -> Result<(), StoreError> {
        let mut statement = self.connection.prepare("PRAGMA integrity_check")?;
        let problems = statement
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        if problems == ["ok"] {
            return Ok(());
        }
        Err(StoreError::Corrupt {
            path: self.path.clone(),
            reason: problems.join("; "),
        })
    }

    /// Tells the checkpoint thread about a commit.
    fn committed(&mut self) {
        if let Some(checkpointer) = &mut self.checkpointer {
            checkpointer.committed();
        }
    }

    /// `UPDATE sessions SET updated_at = ?2, <set> WHERE id = ?1`, refusing an unknown session.
    fn update(
        &mut self,
        session: &SessionId,
        set: &str,
        values: &[&dyn rusqlite::ToSql],
    ) -> Result<(), StoreError> {
        let changed = self
            .connection
            .prepare_cached(&format!(
                "UPDATE sessions SET updated_at = ?2, {set} WHERE id = ?1"
            ))?
            .execute(values)?;
        if changed == 0 {
            return Err(StoreError::SessionNotFound(session.to_string()));
        }
        Ok(())
    }

    fn sessions(
        &self,
        sql: &str,
        values: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Session>, StoreError> {
        let mut statement = self.connection.prepare_cached(sql)?;
        let sessions = statement
            .query_map(values, session_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(sessions)
    }
}

/// Inserts the row of a new, active session (no leaf yet).
fn insert_session(
    connection: &Connection,
    id: &SessionId,
    new: &NewSession,
    now: i64,
) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO sessions (id, title, workspace, created_at, updated_at, \
             parent_session_id, spawned_by_call_id, status) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            id.as_str(),
            new.title,
            new.workspace.as_ref().map(|path| path.to_string_lossy()),
            now,
            new.parent.as_ref().map(SessionId::as_str),
            new.spawned_by_call,
            SessionStatus::Active.as_str(),
        ])?;
    Ok(())
}

fn session_from_row(row: &Row<'_>) -> rusqlite::Result<Session> {
    let status: String = row.get(7)?;
    let status = SessionStatus::parse(&status).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            7,
            rusqlite::types::Type::Text,
            format!("unknown session status {status:?}").into(),
        )
    })?;
    let parent: Option<String> = row.get(5)?;
    let call: Option<String> = row.get(6)?;
    let spawned_by = (parent.is_some() || call.is_some()).then(|| SpawnedBy {
        session: parent.map(SessionId::from),
        tool_call_id: call,
    });
    Ok(Session {
        id: SessionId::from(row.get::<_, String>(0)?),
        title: row.get(1)?,
        workspace: row.get::<_, Option<String>>(2)?.map(PathBuf::from),
        created_at: time(row.get(3)?),
        updated_at: time(row.get(4)?),
        spawned_by,
        status,
        usage: Usage {
            input_tokens: to_u64(row.get(8)?),
            output_tokens: to_u64(row.get(9)?),
            cache_read_tokens: to_u64(row.get(10)?),
            cache_write_tokens: to_u64(row.get(11)?),
        },
        leaf: row.get::<_, Option<i64>>(12)?.map(EntryId),
        entry_count: to_u64(row.get(13)?),
    })
}

/// Milliseconds since the Unix epoch, as stored.
pub(crate) fn millis(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
    })
}

pub(crate) fn time(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(to_u64(millis))
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}
