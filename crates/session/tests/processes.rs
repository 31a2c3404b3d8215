//! Several processes on one store, and processes killed mid-write.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pretty_assertions::assert_eq;
use toolhost_session::{EntryId, NewSession, SessionId, SessionStore};

const APPENDER: &str = env!("CARGO_BIN_EXE_session-appender");

fn appender(store: &Path, session: &SessionId, count: &str, branch_every: u64) -> Command {
    let mut command = Command::new(APPENDER);
    command
        .arg(store)
        .arg(session.as_str())
        .arg(count)
        .arg(branch_every.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// The ids of the `appended <id>` lines that were written whole.
fn appended(stdout: &str) -> Vec<EntryId> {
    stdout
        .split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .filter_map(|line| line.trim_end().strip_prefix("appended "))
        .map(|id| EntryId(id.parse().unwrap()))
        .collect()
}

/// Checks that the session's entries form a tree whose every path ends at a root, and that
/// the leaf is one of them; returns the entries' ids.
fn assert_valid_tree(store: &SessionStore, session: &SessionId) -> HashSet<EntryId> {
    let tree = store.tree(session).unwrap();
    let parents: HashMap<EntryId, Option<EntryId>> =
        tree.iter().map(|entry| (entry.id, entry.parent)).collect();
    for entry in &tree {
        if let Some(parent) = entry.parent {
            assert!(
                parents.contains_key(&parent),
                "{} has a missing parent {parent}",
                entry.id
            );
            assert!(parent < entry.id, "{} is older than its parent", entry.id);
        }
    }
    let path = store.conversation(session).unwrap();
    let leaf = store.get(session.as_str()).unwrap().leaf;
    assert_eq!(path.last().map(|entry| entry.id), leaf);
    if let Some(root) = path.first() {
        assert_eq!(root.parent, None);
    }
    for pair in path.windows(2) {
        assert_eq!(pair[1].parent, Some(pair[0].id));
    }
    parents.into_keys().collect()
}

#[test]
fn two_processes_appending_to_one_session_at_once_make_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let session = SessionStore::open(&path)
        .unwrap()
        .create_session(NewSession::default())
        .unwrap()
        .id;

    let children: Vec<_> = (0..2)
        .map(|_| appender(&path, &session, "300", 0).spawn().unwrap())
        .collect();
    let mut ids = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        let mine = appended(&String::from_utf8_lossy(&output.stdout));
        assert_eq!(mine.len(), 300);
        ids.extend(mine);
    }

    let store = SessionStore::open(&path).unwrap();
    store.check_integrity().unwrap();
    assert_valid_tree(&store, &session);
    let path = store.conversation(&session).unwrap();
    assert_eq!(path.len(), 600, "every append continued the one chain");
    ids.sort();
    let mut on_path: Vec<_> = path.iter().map(|entry| entry.id).collect();
    on_path.sort();
    assert_eq!(on_path, ids);
}

#[test]
fn a_store_killed_at_random_moments_opens_whole_with_every_append_that_returned() {
    const KILLS: usize = 30;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let session = SessionStore::open(&path)
        .unwrap()
        .create_session(NewSession::default())
        .unwrap()
        .id;
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut state = seed;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };

    let mut committed = Vec::new();
    for round in 0..KILLS {
        let mut child = appender(&path, &session, "forever", 7).spawn().unwrap();
        // From the moment it opens the store to well into its appends.
        std::thread::sleep(Duration::from_micros(random() % 40_000));
        child.kill().unwrap();
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        child.wait().unwrap();
        committed.extend(appended(&stdout));

        let store = SessionStore::open(&path)
            .unwrap_or_else(|error| panic!("round {round} (seed {seed}): {error}"));
        store.check_integrity().unwrap();
        let stored = assert_valid_tree(&store, &session);
        let lost: Vec<_> = committed.iter().filter(|id| !stored.contains(id)).collect();
        assert!(lost.is_empty(), "round {round} (seed {seed}) lost {lost:?}");
    }
    assert!(
        committed.len() > KILLS,
        "the appender barely ran: {} appends",
        committed.len()
    );
}
