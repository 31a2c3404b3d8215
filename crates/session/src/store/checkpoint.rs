//! Checkpoints on a thread of their own, so that no append waits for one.
//!
//! SQLite's automatic checkpoint runs inside the commit that fills the log past 1000 pages:
//! with an entry writing a dozen pages (table, indexes, full-text segments), one commit in
//! about sixty paid for copying the log into the database and syncing it, which made the
//! p99 commit latency 20 ms instead of 1. Here, every [`CHECKPOINT_EVERY`] commits, the
//! store wakes this thread, whose own connection runs a passive checkpoint (which never
//! blocks a writer). The log starts over at the next write after a checkpoint that caught
//! up; under a steady stream of appends it never catches up, so the store's connection keeps
//! SQLite's automatic checkpoint at [`BACKSTOP_PAGES`]: by then this thread has copied
//! nearly every page, and the commit that runs it only syncs and lets the log start over.

use std::path::Path;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

use rusqlite::{Connection, OpenFlags};

/// Commits between two checkpoints.
pub const CHECKPOINT_EVERY: u32 = 50;

/// The log's size, in pages, at which a commit checkpoints by itself (SQLite's default is
/// 1000).
pub const BACKSTOP_PAGES: u32 = 2000;

pub(super) struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    commits: u32,
}

impl Checkpointer {
    /// A checkpoint thread with its own connection to `path`; `None` if that connection
    /// cannot be made (then SQLite's automatic checkpoints stay as they are).
    pub(super) fn start(path: &Path) -> Option<Self> {
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .ok()?;
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("session-checkpoint".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    // A failed checkpoint (another process holds the checkpoint lock) is
                    // retried at the next wake-up; nothing depends on it.
                    let _ = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .ok()?;
        Some(Self {
            wake: Some(wake),
            thread: Some(thread),
            commits: 0,
        })
    }

    /// Counts a commit; wakes the thread every [`CHECKPOINT_EVERY`].
    pub(super) fn committed(&mut self) {
        self.commits += 1;
        if self.commits < CHECKPOINT_EVERY {
            return;
        }
        self.commits = 0;
        if let Some(wake) = &self.wake {
            // Full: a checkpoint is pending already.
            if let Err(TrySendError::Disconnected(())) = wake.try_send(()) {
                self.wake = None;
            }
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
