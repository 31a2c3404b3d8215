//! Deferred tools in a server whose tool set grows after it starts: `toolhost serve
//! --defer-tools` answers at once with the built-ins, and each upstream server's tools join
//! when it is ready. The plan is made again whenever the registry changed since the last one
//! (checked when a client lists or calls tools), so a server's tools are deferred as they
//! join, `tool_search` names them, and each session keeps what it loaded.

use std::sync::{Arc, Mutex, PoisonError};

use toolhost_core::deferral::{
    DeferralPolicy, DeferredTools, SessionLoads, TOOL_SEARCH_NAME, ToolSearch,
};
use toolhost_core::{RegistryError, Tool, ToolRegistry, ToolSpec};

/// The deferral of one served registry, kept up to date with it.
#[derive(Debug)]
pub(super) struct DeferralPlanner {
    policy: DeferralPolicy,
    registry: Arc<ToolRegistry>,
    loads: Arc<SessionLoads>,
    state: Mutex<Planned>,
}

#[derive(Default)]
struct Planned {
    /// The registry version the plan is for.
    version: Option<u64>,
    /// The `tool_search` this planner registered (never another tool of that name).
    search: Option<Arc<dyn Tool>>,
}

impl std::fmt::Debug for Planned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Planned")
            .field("version", &self.version)
            .field("search_registered", &self.search.is_some())
            .finish()
    }
}

impl DeferralPlanner {
    /// Plans over `registry` now.
    ///
    /// # Errors
    /// Something is deferred and the registry already has a tool named `tool_search`.
    pub(super) fn new(
        policy: DeferralPolicy,
        registry: Arc<ToolRegistry>,
    ) -> Result<Self, RegistryError> {
        let planner = Self {
            policy,
            registry,
            loads: Arc::new(SessionLoads::new(Arc::new(DeferredTools::new(Vec::new())))),
            state: Mutex::default(),
        };
        planner.plan()?;
        Ok(planner)
    }

    /// What each session loaded.
    pub(super) fn loads(&self) -> &Arc<SessionLoads> {
        &self.loads
    }

    /// Plans again when the registry changed since the last plan; a failure to register
    /// `tool_search` then is logged (the tools stay callable by name).
    pub(super) fn refresh(&self) {
        if let Err(error) = self.plan() {
            tracing::warn!("{TOOL_SEARCH_NAME} not registered: {error}");
        }
    }

    fn plan(&self) -> Result<(), RegistryError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.version == Some(self.registry.version()) {
            return Ok(());
        }
        let specs: Vec<ToolSpec> = self
            .registry
            .specs()
            .into_iter()
            .filter(|spec| spec.name != TOOL_SEARCH_NAME)
            .collect();
        let deferred = self
            .policy
            .plan(&specs)
            .unwrap_or_else(|| DeferredTools::new(Vec::new()));
        let mut registered = Ok(());
        if names(&deferred) != names(&self.loads.deferred()) {
            let deferred = Arc::new(deferred);
            self.loads.replace_deferred(Arc::clone(&deferred));
            if let Some(ours) = state.search.take()
                && self
                    .registry
                    .get(TOOL_SEARCH_NAME)
                    .is_some_and(|registered| Arc::ptr_eq(&registered, &ours))
            {
                self.registry.unregister(TOOL_SEARCH_NAME);
            }
            if !deferred.specs().is_empty() {
                let search: Arc<dyn Tool> =
                    Arc::new(ToolSearch::for_sessions(Arc::clone(&self.loads)));
                registered = self.registry.register_arc(Arc::clone(&search));
                if registered.is_ok() {
                    state.search = Some(search);
                }
            }
        }
        // Planned for this version even when tool_search was refused: not tried on every list.
        state.version = Some(self.registry.version());
        registered
    }
}

fn names(deferred: &DeferredTools) -> Vec<&str> {
    deferred
        .specs()
        .iter()
        .map(|spec| spec.name.as_str())
        .collect()
}
