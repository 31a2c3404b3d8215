//! Checkpoints on a thread of their own, the only checkpointer of the store's log, so that no
//! append copies the log into the database and the log stays bounded.
//!
//! SQLite's automatic checkpoint runs inside the commit that fills the log past 1000 pages:
//! with an entry writing a dozen pages (table, indexes, full-text segments), one commit in
//! about sixty paid for copying the log into the database and syncing it. Here the writer's
//! automatic checkpoint is off (its WAL hook only counts the log's pages), and:
//!
//! - every [`CHECKPOINT_EVERY`] commits the writer wakes this thread, whose own connection
//!   runs a passive checkpoint (it never blocks a writer);
//! - a passive checkpoint never lets the log start over while appends keep coming (it copies
//!   what was there when it began; by then more has come), so the commit that brings the log
//!   to [`LOG_LIMIT_PAGES`] asks the thread for a `RESTART` checkpoint and waits for it: with
//!   the writer waiting on the thread, and not on SQLite's busy handler, the restart copies
//!   what the last passive checkpoint left, the next commit writes the log from its start,
//!   and the bound holds whatever the scheduler does. (A restart the thread ran on its own
//!   made the writer sleep in its busy handler: 1 ms, then 2, then 5…)
//! - after [`IDLE_TRUNCATE`] without a wake-up, the thread truncates the log to nothing.
//!
//! Before, the thread's checkpoints and the writer's own automatic one (kept as a backstop)
//! raced for the checkpoint lock: a commit that found it taken skipped its checkpoint, and the
//! log grew to 14–26 MB in 1000 appends on a loaded machine.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// Commits between two passive checkpoints.
pub const CHECKPOINT_EVERY: u32 = 50;

/// The log's size, in pages, at which a commit waits for the log to start over before it
/// returns (16 MiB of 4 KiB pages: one commit in several hundred, out of the 99th
/// percentile).
pub const LOG_LIMIT_PAGES: i32 = 4096;

/// What the log file is cut back to when it starts over (`PRAGMA journal_size_limit`): a
/// little over the limit, so that a log that keeps filling up reuses its file.
pub const JOURNAL_SIZE_LIMIT: i64 = 17 * 1024 * 1024;

/// How long the store must go without a checkpoint request before the log is truncated.
pub const IDLE_TRUNCATE: Duration = Duration::from_secs(1);

/// How long the thread's restart waits for a writer or a reader of another process.
const RESTART_WAIT: Duration = Duration::from_secs(2);

enum Request {
    /// Copy what the log holds into the database.
    Checkpoint,
    /// Restart the log now, then answer.
    Restart(SyncSender<()>),
}

pub(super) struct Checkpointer {
    requests: Option<SyncSender<Request>>,
    thread: Option<JoinHandle<()>>,
    /// The log's pages after the writer's last commit (its WAL hook writes it).
    log_pages: Arc<AtomicI32>,
    /// The thread waits for a request with no timeout: the next commit must wake it.
    idle: Arc<AtomicBool>,
    commits: u32,
}

impl Checkpointer {
    /// A checkpoint thread with its own connection to `path`, and the writer's WAL hook that
    /// counts the log's pages (which turns SQLite's automatic checkpoint off); `None` if the
    /// thread's connection cannot be made (then the automatic checkpoint stays).
    pub(super) fn start(path: &Path, writer: &mut Connection) -> Option<Self> {
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .ok()?;
        connection.busy_timeout(RESTART_WAIT).ok()?;
        let (requests, received) = mpsc::sync_channel::<Request>(1);
        let idle = Arc::new(AtomicBool::new(false));
        let log_pages = Arc::new(AtomicI32::new(0));
        let thread = std::thread::Builder::new()
            .name("session-checkpoint".into())
            .spawn({
                let idle = Arc::clone(&idle);
                let log_pages = Arc::clone(&log_pages);
                move || checkpoint_loop(&connection, &received, &idle, &log_pages)
            })
            .ok()?;
        let counter = Arc::clone(&log_pages);
        let hooked = writer.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages| {
            counter.store(pages, Ordering::Relaxed);
            Ok(())
        }));
        if hooked.is_err() {
            drop(requests);
            let _ = thread.join();
            return None;
        }
        Some(Self {
            requests: Some(requests),
            thread: Some(thread),
            log_pages,
            idle,
            commits: 0,
        })
    }

    /// Counts a commit: wakes the thread every [`CHECKPOINT_EVERY`] (or on the first commit
    /// after it went idle), and waits for a restart once the log reached [`LOG_LIMIT_PAGES`].
    pub(super) fn committed(&mut self) {
        let Some(requests) = &self.requests else {
            return;
        };
        if self.log_pages.load(Ordering::Relaxed) >= LOG_LIMIT_PAGES {
            let (answer, answered) = mpsc::sync_channel(1);
            if requests.send(Request::Restart(answer)).is_err() || answered.recv().is_err() {
                self.requests = None;
            }
            self.commits = 0;
            return;
        }
        self.commits += 1;
        let idle = self.idle.load(Ordering::Relaxed) && self.idle.swap(false, Ordering::Relaxed);
        if self.commits < CHECKPOINT_EVERY && !idle {
            return;
        }
        self.commits = 0;
        // Full: a checkpoint is pending already.
        if let Err(TrySendError::Disconnected(_)) = requests.try_send(Request::Checkpoint) {
            self.requests = None;
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves requests until the store is dropped. A checkpoint that fails (another process holds
/// the checkpoint lock, or a reader of its keeps the log) is retried at the next request;
/// nothing depends on it.
fn checkpoint_loop(
    connection: &Connection,
    requests: &mpsc::Receiver<Request>,
    idle: &AtomicBool,
    log_pages: &AtomicI32,
) {
    let mut log_written = false;
    loop {
        let request = if log_written {
            match requests.recv_timeout(IDLE_TRUNCATE) {
                Ok(request) => request,
                Err(RecvTimeoutError::Timeout) => {
                    if let Some((0, _, _)) = checkpoint(connection, "TRUNCATE") {
                        log_pages.store(0, Ordering::Relaxed);
                    }
                    log_written = false;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return,
            }
        } else {
            idle.store(true, Ordering::Relaxed);
            match requests.recv() {
                Ok(request) => request,
                Err(_) => return,
            }
        };
        log_written = true;
        match request {
            Request::Checkpoint => {
                checkpoint(connection, "PASSIVE");
            }
            Request::Restart(answer) => {
                checkpoint(connection, "PASSIVE");
                checkpoint(connection, "RESTART");
                let _ = answer.send(());
            }
        }
    }
}

/// `PRAGMA wal_checkpoint(MODE)`: (busy, frames in the log, frames copied), `None` on error.
fn checkpoint(connection: &Connection, mode: &str) -> Option<(i32, i32, i32)> {
    connection
        .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .ok()
}
