//! What the store does with files it did not write, or that a newer toolhost wrote.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pretty_assertions::assert_eq;
use toolhost_session::{
    EntryKind, LOG_LIMIT_PAGES, NewSession, SCHEMA_VERSION, SessionStore, StoreError,
};

/// A store with some entries, closed.
fn written_store(path: &Path, entries: usize) {
    let mut store = SessionStore::open(path).unwrap();
    let session = store.create_session(NewSession::default()).unwrap().id;
    for n in 0..entries {
        let text = format!("entry {n}: {}", "some text ".repeat(40));
        store
            .append_at_leaf(&session, &EntryKind::user_text(text))
            .unwrap();
    }
}

fn assert_refused_and_untouched(path: &Path, check: impl Fn(&StoreError) -> bool) {
    let before = std::fs::read(path).unwrap();
    let error = SessionStore::open(path)
        .err()
        .expect("the store must be refused");
    assert!(check(&error), "unexpected error: {error}");
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );
    assert!(error.to_string().contains("left untouched"), "{error}");
    assert!(std::fs::read(path).unwrap() == before, "the file changed");
}

#[test]
fn a_store_from_a_newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    written_store(&path, 3);
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();

    assert_refused_and_untouched(&path, |error| {
        matches!(error, StoreError::NewerSchema { found, supported, .. }
            if *found == SCHEMA_VERSION + 1 && *supported == SCHEMA_VERSION)
    });
    let message = SessionStore::open(&path).err().unwrap().to_string();
    assert!(
        message.contains(&format!("schema version {}", SCHEMA_VERSION + 1))
            && message.contains(&format!("version {SCHEMA_VERSION} ")),
        "{message}"
    );
}

#[test]
fn a_file_of_random_bytes_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let bytes: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    std::fs::write(&path, bytes).unwrap();

    assert_refused_and_untouched(&path, |error| matches!(error, StoreError::Corrupt { .. }));
}

#[test]
fn random_bytes_behind_a_sqlite_header_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..8192_u32).map(|n| (n.wrapping_mul(2_654_435_761) >> 24) as u8));
    std::fs::write(&path, bytes).unwrap();

    assert_refused_and_untouched(&path, |error| matches!(error, StoreError::Corrupt { .. }));
}

#[test]
fn a_truncated_store_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    written_store(&path, 200);
    let length = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(length / 2)
        .unwrap();

    assert_refused_and_untouched(
        &path,
        |error| matches!(error, StoreError::Corrupt { reason, .. } if reason.contains("truncated")),
    );

    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(50)
        .unwrap();
    assert_refused_and_untouched(&path, |error| matches!(error, StoreError::Corrupt { .. }));
}

#[test]
fn another_programs_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();

    assert_refused_and_untouched(&path, |error| {
        matches!(error, StoreError::NotASessionStore { .. })
    });
}

#[test]
fn a_new_store_is_one_file_in_wal_mode_and_its_folder_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("sessions.db");
    let store = SessionStore::open(&path).unwrap();
    store.check_integrity().unwrap();
    let mode: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(store.path(), path);
}

#[test]
fn the_write_ahead_log_stays_bounded_under_a_tight_append_loop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let wal = dir.path().join("sessions.db-wal");
    let mut store = SessionStore::open(&path).unwrap();
    let session = store.create_session(NewSession::default()).unwrap().id;
    // 4000 entries of 6 KB: a log that never started over would hold more than 24 MB.
    let line = "fn parse(input: &str) -> Result<Token, Error> { todo_tokens(input) }\n";
    let mut largest = 0;
    for n in 0..4000 {
        let text = format!("entry {n}\n{}", line.repeat(90));
        store
            .append_at_leaf(&session, &EntryKind::user_text(text))
            .unwrap();
        largest = largest.max(std::fs::metadata(&wal).map_or(0, |meta| meta.len()));
    }
    // A commit that brings the log to LOG_LIMIT_PAGES waits for it to start over, however
    // starved the checkpoint thread is, so the file holds at most that many frames (a 4 KiB
    // page and a 24-byte header each) and the frames of one more commit, whatever the load.
    let frame = 4096 + 24;
    let bound = (u64::try_from(LOG_LIMIT_PAGES).unwrap() + 64) * frame + 32;
    assert!(
        largest <= bound,
        "the log grew to {largest} bytes, over {bound}"
    );
    let database = std::fs::metadata(&path).unwrap().len();
    assert!(
        database > bound,
        "the test wrote too little ({database} bytes) to show that the log starts over"
    );
}
