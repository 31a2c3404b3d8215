//! Who a module's tools are running for right now: the authoriser of each call in flight
//! ([`ToolContext::authorizer`]), so that what a tool does on its caller's behalf (`exec`, file
//! access) is judged by that caller's permissions — a sub-agent's, which may be stricter than
//! those of the agent that loaded the tool — and not by whoever built the engine.
//!
//! JavaScript gives no way to tell which of a module's calls in flight an `exec` belongs to
//! (they interleave at their `await` points), so a request carries the authorisers of all of
//! them and the gate asks each: with one caller that is exact, with several it is never looser
//! than any of them.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use toolhost_core::{Authorizer, same_authorizer as same};

/// The authorisers of the calls in flight, one per distinct authoriser.
#[derive(Clone, Default)]
pub struct Callers(Vec<Arc<dyn Authorizer>>);

impl Callers {
    /// Each distinct authoriser once, in the order the calls started. Empty outside a call
    /// (a tool's `onSession`, its factory), where the gate's own policy decides.
    pub fn authorizers(&self) -> &[Arc<dyn Authorizer>] {
        &self.0
    }

    /// Whether no call with an authoriser is in flight.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Callers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Callers({})", self.0.len())
    }
}

impl From<Vec<Arc<dyn Authorizer>>> for Callers {
    fn from(authorizers: Vec<Arc<dyn Authorizer>>) -> Self {
        let mut distinct: Vec<Arc<dyn Authorizer>> = Vec::with_capacity(authorizers.len());
        for authorizer in authorizers {
            if !distinct.iter().any(|seen| same(seen, &authorizer)) {
                distinct.push(authorizer);
            }
        }
        Self(distinct)
    }
}

/// A call in flight: the module whose tool runs, an id, and the call's authoriser.
type InFlight = (Arc<Path>, u64, Arc<dyn Authorizer>);

/// The calls in flight on every module of a host.
#[derive(Default)]
pub(crate) struct CallsInFlight {
    next: AtomicU64,
    calls: Mutex<Vec<InFlight>>,
}

impl CallsInFlight {
    /// Records a call of a tool of `module` until the guard is dropped; a call without an
    /// authoriser (outside a pipeline) is not recorded.
    pub(crate) fn enter(
        self: &Arc<Self>,
        module: &Arc<Path>,
        authorizer: Option<&Arc<dyn Authorizer>>,
    ) -> Option<CallGuard> {
        let authorizer = Arc::clone(authorizer?);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((Arc::clone(module), id, authorizer));
        Some(CallGuard {
            calls: Arc::clone(self),
            id,
        })
    }

    /// The authorisers of the calls of `module` in flight.
    pub(crate) fn of(&self, module: &Path) -> Callers {
        let authorizers: Vec<Arc<dyn Authorizer>> = self
            .lock()
            .iter()
            .filter(|(of, _, _)| **of == *module)
            .map(|(_, _, authorizer)| Arc::clone(authorizer))
            .collect();
        Callers::from(authorizers)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<InFlight>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A call in flight; forgotten when dropped.
pub(crate) struct CallGuard {
    calls: Arc<CallsInFlight>,
    id: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.calls.lock().retain(|(_, id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use toolhost_core::AllowAll;

    use super::*;

    #[test]
    fn a_module_sees_the_distinct_authorisers_of_its_own_calls_while_they_run() {
        let calls = Arc::new(CallsInFlight::default());
        let parent: Arc<dyn Authorizer> = Arc::new(AllowAll);
        let child: Arc<dyn Authorizer> = Arc::new(AllowAll);
        let module: Arc<Path> = Arc::from(Path::new("/tools/a.js"));
        let other: Arc<Path> = Arc::from(Path::new("/tools/b.js"));

        let first = calls.enter(&module, Some(&parent));
        let second = calls.enter(&module, Some(&parent));
        let third = calls.enter(&module, Some(&child));
        let _elsewhere = calls.enter(&other, Some(&child));
        assert!(calls.enter(&module, None).is_none());

        let seen = calls.of(&module);
        assert_eq!(seen.authorizers().len(), 2, "{seen:?}");
        assert!(same(&seen.authorizers()[0], &parent));
        assert!(same(&seen.authorizers()[1], &child));

        drop(third);
        let seen = calls.of(&module);
        assert_eq!(seen.authorizers().len(), 1);
        assert!(same(&seen.authorizers()[0], &parent));
        drop((first, second));
        assert!(calls.of(&module).is_empty());
    }
}
