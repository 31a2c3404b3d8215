//! Which process runs a session. Two processes that both went on with one session would fork
//! its conversation at the same leaf, so a run claims its session first: an exclusive lock on
//! a small file beside the store (`sessions.db-runs/ID.lock`). The operating system drops the
//! lock when the process ends, however it ends, so a `kill -9` never leaves a session claimed.
//!
//! The files are not removed when a run ends: removing one while another process opens it
//! would let two processes hold locks on two different files of the same name. They are
//! empty but for the holder's pid, and `SessionStore::delete` removes a session's.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::{SessionId, StoreError};

/// A session claimed by this process for a run: held until dropped.
#[derive(Debug)]
pub struct RunLock {
    // Kept open: closing the file releases the lock.
    _file: File,
    session: SessionId,
}

impl RunLock {
    /// The session it claims.
    pub fn session(&self) -> &SessionId {
        &self.session
    }
}

/// The folder of the lock files of the store at `store`.
fn folder_of(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push("-runs");
    PathBuf::from(name)
}

/// The lock file of `session` in the store at `store`.
pub(crate) fn lock_path(store: &Path, session: &SessionId) -> PathBuf {
    folder_of(store).join(format!("{session}.lock"))
}

/// Claims `session` of the store at `store`, or says which process runs it.
pub(crate) fn claim(store: &Path, session: &SessionId) -> Result<RunLock, StoreError> {
    let path = lock_path(store, session);
    let io = |source| StoreError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(folder_of(store)).map_err(io)?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(StoreError::SessionRunning {
                session: session.clone(),
                pid: holder(&mut file),
            });
        }
        Err(TryLockError::Error(source)) => return Err(io(source)),
    }
    // The pid is only for the message another process shows; a failure to write it is no
    // reason to refuse the run.
    let _ = file
        .set_len(0)
        .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()));
    Ok(RunLock {
        _file: file,
        session: session.clone(),
    })
}

/// The pid the holder wrote, when it could be read.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Removes the lock file of a deleted session; one that is missing is fine.
pub(crate) fn remove(store: &Path, session: &SessionId) {
    let _ = std::fs::remove_file(lock_path(store, session));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_session_is_refused_until_its_lock_is_dropped() {
        let folder = tempfile::tempdir().unwrap();
        let store = folder.path().join("sessions.db");
        let session = SessionId::from("s1".to_owned());
        let held = claim(&store, &session).unwrap();
        assert_eq!(held.session(), &session);
        let refused = claim(&store, &session).unwrap_err();
        let StoreError::SessionRunning { pid, .. } = &refused else {
            panic!("expected SessionRunning, got {refused:?}");
        };
        assert_eq!(*pid, Some(std::process::id()));
        assert!(refused.to_string().contains("s1"), "{refused}");
        let other = SessionId::from("s2".to_owned());
        claim(&store, &other).expect("another session is free");
        drop(held);
        claim(&store, &session).expect("free once dropped");
    }
}
