//! The registry a command offers, shared with what is made before it: the `toolhost`
//! provider's `status` tool, `slash_command` and the sub-agents read it once the tool-set
//! builder has set it. It sits below both the builder and the sub-agents so that neither
//! imports the other's internals.

use std::sync::{Arc, PoisonError, RwLock, Weak};

use toolhost_core::ToolRegistry;

/// The registry a command offers (set once it exists), for the `toolhost` provider's
/// `status` tool, which is made before it.
#[derive(Clone, Default)]
pub struct OfferedRegistry(Arc<RwLock<Weak<ToolRegistry>>>);

impl OfferedRegistry {
    /// From now on `status` lists the tools of `registry`.
    pub fn set(&self, registry: &Arc<ToolRegistry>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(registry);
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade()
            .map(|registry| registry.names())
            .unwrap_or_default()
    }

    /// The registry, once set and while it lives.
    pub fn get(&self) -> Option<Arc<ToolRegistry>> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade()
    }
}
