//! The database schema, its versions and the checks made before SQLite writes a byte.
//!
//! The version lives in `PRAGMA user_version`. [`MIGRATIONS`]`[n]` takes a store from version
//! `n` to `n + 1`; the next schema change is one more function at the end of that list. A
//! store that already has data is copied to `<file>.bak-v<n>` before it is migrated.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};

use crate::StoreError;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

type Migration = fn(&Transaction<'_>) -> rusqlite::Result<()>;

/// The migrations, in order: the one at index `n` takes version `n` to `n + 1`.
const MIGRATIONS: [Migration; 3] = [
    create_tables,
    index_sessions_by_recency,
    index_paths_and_workspaces,
];

/// Version 1: sessions, entries (a tree: each names its parent) and the full-text index.
fn create_tables(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE sessions (
             id TEXT PRIMARY KEY NOT NULL,
             title TEXT,
             workspace TEXT,
             created_at INTEGER NOT NULL,
             updated_at INTEGER NOT NULL,
             parent_session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
             spawned_by_call_id TEXT,
             status TEXT NOT NULL,
             input_tokens INTEGER NOT NULL DEFAULT 0,
             output_tokens INTEGER NOT NULL DEFAULT 0,
             cache_read_tokens INTEGER NOT NULL DEFAULT 0,
             cache_write_tokens INTEGER NOT NULL DEFAULT 0,
             leaf_entry_id INTEGER
         ) STRICT;
         CREATE TABLE entries (
             id INTEGER PRIMARY KEY AUTOINCREMENT,
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             parent_id INTEGER REFERENCES entries(id),
             created_at INTEGER NOT NULL,
             kind TEXT NOT NULL,
             payload TEXT NOT NULL
         ) STRICT;
         CREATE INDEX entries_by_session ON entries(session_id);
         CREATE INDEX entries_by_parent ON entries(parent_id);
         CREATE INDEX sessions_by_parent ON sessions(parent_session_id);
         CREATE VIRTUAL TABLE entry_text USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');",
    )
}

/// Version 2: `list` reads sessions newest first without sorting them all.
fn index_sessions_by_recency(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch("CREATE INDEX sessions_by_recency ON sessions(updated_at DESC, id DESC);")
}

/// Version 3: the walk from a leaf to the root reads a small covering index instead of every
/// entry's row (a row holds its payload: a resume of 10 000 entries read 30 MB twice), and
/// `list_in_workspace` finds a workspace's sessions by index.
fn index_paths_and_workspaces(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE INDEX entries_path ON entries(id, parent_id);
         CREATE INDEX sessions_by_workspace ON sessions(workspace, updated_at DESC, id DESC);",
    )
}

/// The 16 bytes every SQLite database starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Looks at the file's header without SQLite: a file that is not a database, is cut short,
/// or comes from a newer schema is refused here, before anything could write to it.
pub(crate) fn check_file(path: &Path) -> Result<(), StoreError> {
    let io_error = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io_error(error)),
    };
    let length = file.metadata().map_err(io_error)?.len();
    if length == 0 {
        return Ok(());
    }
    let corrupt = |reason: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let mut header = [0_u8; 100];
    if length < 100 || file.read_exact(&mut header).is_err() || &header[..16] != SQLITE_MAGIC {
        return Err(corrupt("not a SQLite database: no SQLite header".into()));
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        size => u64::from(size),
    };
    // The payload fractions are fixed at 64, 32, 32 and the page size is a power of two:
    // a header that says otherwise is not SQLite's, whatever its first bytes.
    if !page_size.is_power_of_two()
        || !(512..=65_536).contains(&page_size)
        || header[21..24] != [64, 32, 32]
    {
        return Err(corrupt("the SQLite header is damaged".into()));
    }
    let pages = u64::from(be32(28));
    // The page count is only meant when the change counter matches "version valid for"; with
    // a write-ahead log present, the file may not hold every page yet.
    let count_is_valid = pages > 0 && be32(24) == be32(92);
    if count_is_valid && !wal_path(path).exists() && pages * page_size > length {
        return Err(corrupt(format!(
            "truncated: its header says {} bytes, the file has {length}",
            pages * page_size
        )));
    }
    let found = i64::from(i32::from_be_bytes([
        header[60], header[61], header[62], header[63],
    ]));
    if found > SCHEMA_VERSION {
        return Err(newer_schema(path, found));
    }
    Ok(())
}

fn wal_path(path: &Path) -> PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

fn newer_schema(path: &Path, found: i64) -> StoreError {
    StoreError::NewerSchema {
        path: path.to_path_buf(),
        found,
        supported: SCHEMA_VERSION,
    }
}

/// SQLite's "not a database" and "malformed" as the store's own error; others unchanged.
pub(crate) fn unreadable(path: &Path, error: rusqlite::Error) -> StoreError {
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_path_buf(),
            reason: error.to_string(),
        },
        _ => StoreError::Database(error),
    }
}

/// Reads the version (only reading: the file stays as it is) and refuses what this build
/// cannot use.
pub(crate) fn check_version(connection: &Connection, path: &Path) -> Result<i64, StoreError> {
    let read = || -> rusqlite::Result<(i64, i64)> {
        let version = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        let tables =
            connection.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
        Ok((version, tables))
    };
    let (version, tables) = read().map_err(|error| unreadable(path, error))?;
    if version > SCHEMA_VERSION {
        return Err(newer_schema(path, version));
    }
    if version == 0 && tables > 0 {
        return Err(StoreError::NotASessionStore {
            path: path.to_path_buf(),
        });
    }
    Ok(version)
}

/// Brings the store from `found` to [`SCHEMA_VERSION`], backing it up first if it holds data.
/// Another process may migrate at the same time: the version is read again under the write
/// lock, and whoever comes second finds nothing to do.
pub(crate) fn migrate(
    connection: &mut Connection,
    path: &Path,
    found: i64,
) -> Result<(), StoreError> {
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    if found > 0 {
        back_up(connection, path, found)?;
    }
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(newer_schema(path, version));
    }
    let from = usize::try_from(version).unwrap_or(0);
    for step in &MIGRATIONS[from..] {
        step(&tx)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}

/// The path of the copy taken before migrating from `version`.
pub fn backup_path(path: &Path, version: i64) -> PathBuf {
    let mut backup = path.as_os_str().to_owned();
    backup.push(format!(".bak-v{version}"));
    PathBuf::from(backup)
}

fn back_up(connection: &Connection, path: &Path, version: i64) -> Result<(), StoreError> {
    let backup = backup_path(path, version);
    let failed = |source| StoreError::Backup {
        path: path.to_path_buf(),
        backup: backup.clone(),
        from: version,
        source,
    };
    // A copy left by an attempt that did not finish is of the same version: replace it.
    if backup.exists() {
        std::fs::remove_file(&backup).map_err(|error| StoreError::Io {
            path: backup.clone(),
            source: error,
        })?;
    }
    connection
        .execute("VACUUM INTO ?1", [backup.to_string_lossy()])
        .map_err(failed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::SessionStore;

    /// A store as version 1 wrote it, with one session.
    fn store_at_version_1(path: &Path) {
        let mut connection = Connection::open(path).unwrap();
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .unwrap();
        let tx = connection.transaction().unwrap();
        MIGRATIONS[0](&tx).unwrap();
        tx.pragma_update(None, "user_version", 1).unwrap();
        tx.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, status) \
             VALUES ('s1', 'old one', 1, 1, 'active')",
            [],
        )
        .unwrap();
        tx.commit().unwrap();
    }

    /// A store as version 2 wrote it: one session of three entries, the last its leaf.
    fn store_at_version_2(path: &Path) {
        let mut connection = Connection::open(path).unwrap();
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .unwrap();
        let tx = connection.transaction().unwrap();
        MIGRATIONS[0](&tx).unwrap();
        MIGRATIONS[1](&tx).unwrap();
        tx.pragma_update(None, "user_version", 2).unwrap();
        tx.execute_batch(
            r#"INSERT INTO sessions (id, title, workspace, created_at, updated_at, status, leaf_entry_id)
                 VALUES ('s2', 'from v2', '/work/p', 1, 1, 'active', 3);
               INSERT INTO entries (id, session_id, parent_id, created_at, kind, payload) VALUES
                 (1, 's2', NULL, 1, 'user_message',
                  '{"kind":"user_message","data":{"content":[{"type":"text","text":"hello"}]}}'),
                 (2, 's2', 1, 1, 'label', '{"kind":"label","data":{"name":"here"}}'),
                 (3, 's2', 2, 1, 'user_message',
                  '{"kind":"user_message","data":{"content":[{"type":"text","text":"again"}]}}');"#,
        )
        .unwrap();
        tx.commit().unwrap();
    }

    fn index_count(path: &Path, names: &str) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row(
                &format!(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ({names})"
                ),
                [],
                |row| row.get(0),
            )
            .unwrap()
    }

    #[test]
    fn a_version_2_store_is_backed_up_then_migrated_and_its_paths_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        store_at_version_2(&path);

        let store = SessionStore::open(&path).unwrap();
        let session = store.get("s2").unwrap();
        assert_eq!(session.entry_count, 3);
        let path_ids: Vec<i64> = store
            .conversation(&session.id)
            .unwrap()
            .iter()
            .map(|entry| entry.id.0)
            .collect();
        assert_eq!(path_ids, [1, 2, 3]);
        let listed = store
            .list_in_workspace(Path::new("/work/p"), 10, 0)
            .unwrap();
        assert_eq!(listed.len(), 1);
        drop(store);

        assert_eq!(user_version(&path), SCHEMA_VERSION);
        let backup = backup_path(&path, 2);
        assert_eq!(user_version(&backup), 2);
        let new_indexes = "'entries_path', 'sessions_by_workspace'";
        assert_eq!(index_count(&backup, new_indexes), 0);
        assert_eq!(index_count(&path, new_indexes), 2);
    }

    fn user_version(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_version_1_store_is_backed_up_then_migrated_keeping_its_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        store_at_version_1(&path);

        let store = SessionStore::open(&path).unwrap();
        assert_eq!(store.get("s1").unwrap().title.as_deref(), Some("old one"));
        drop(store);

        assert_eq!(user_version(&path), SCHEMA_VERSION);
        let backup = dir.path().join("sessions.db.bak-v1");
        assert_eq!(backup_path(&path, 1), backup);
        assert_eq!(user_version(&backup), 1);
        let indexes: i64 = Connection::open(&path)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'sessions_by_recency'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(indexes, 1);
    }

    #[test]
    fn a_new_store_needs_no_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        SessionStore::open(&path).unwrap();
        assert_eq!(user_version(&path), SCHEMA_VERSION);
        assert!(!backup_path(&path, 0).exists());
    }
}
