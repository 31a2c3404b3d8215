//! The per-engine clock behind the interrupt handler: JavaScript that runs past the deadline
//! of any call in flight is interrupted (an infinite loop cannot hold a thread for longer than
//! the time limit). Awaited work is bounded separately, by a timer in the call itself.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// No deadline in flight.
const NONE: u64 = u64::MAX;

/// Deadlines of the calls in flight on one engine.
#[derive(Debug)]
pub(crate) struct CallClock {
    epoch: Instant,
    /// The earliest deadline, in nanoseconds since `epoch`; read on every interrupt check.
    earliest: AtomicU64,
    deadlines: Mutex<BTreeMap<(u64, u64), ()>>,
    next: AtomicU64,
}

impl CallClock {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            epoch: Instant::now(),
            earliest: AtomicU64::new(NONE),
            deadlines: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        })
    }

    /// Registers a deadline `limit` from now until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, limit: Duration) -> DeadlineGuard {
        let at = self.nanos(Instant::now() + limit);
        let key = (at, self.next.fetch_add(1, Ordering::Relaxed));
        let mut deadlines = self
            .deadlines
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        deadlines.insert(key, ());
        self.publish(&deadlines);
        DeadlineGuard {
            clock: Arc::clone(self),
            key,
        }
    }

    /// Whether running JavaScript must stop now (the interrupt handler).
    pub(crate) fn expired(&self) -> bool {
        let earliest = self.earliest.load(Ordering::Relaxed);
        earliest != NONE && self.nanos(Instant::now()) >= earliest
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(NONE - 1)
    }

    fn publish(&self, deadlines: &BTreeMap<(u64, u64), ()>) {
        let earliest = deadlines.keys().next().map_or(NONE, |(at, _)| *at);
        self.earliest.store(earliest, Ordering::Relaxed);
    }
}

/// Removes its deadline when dropped.
#[derive(Debug)]
pub(crate) struct DeadlineGuard {
    clock: Arc<CallClock>,
    key: (u64, u64),
}

impl Drop for DeadlineGuard {
    fn drop(&mut self) {
        let mut deadlines = self
            .clock
            .deadlines
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        deadlines.remove(&self.key);
        self.clock.publish(&deadlines);
    }
}
