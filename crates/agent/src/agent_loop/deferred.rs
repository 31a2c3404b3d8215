//! The loop's side of deferred tools: deciding what to defer for the registry it offers, and
//! which specs each request sends (see [`toolhost_core::deferral`]).

use std::sync::Arc;

use toolhost_core::deferral::{
    DEFAULT_DEFER_SHARE, DeferralPolicy, LoadedTools, TOOL_SEARCH_NAME, ToolSearch,
};
use toolhost_core::{ToolRegistry, ToolSpec};

/// Whether and how the loop defers tools, and what the conversation has loaded.
#[derive(Debug, Default)]
pub(super) struct Deferral {
    /// `None`: never defer (a loop built without [`super::AgentLoop::defer_tools`]).
    settings: Option<Settings>,
    /// `Some` while tools are deferred.
    loaded: Option<Arc<LoadedTools>>,
}

#[derive(Debug)]
struct Settings {
    threshold: Option<u64>,
    always_loaded: Vec<String>,
}

impl Deferral {
    /// Defers past `threshold` tokens (`None`: [`DEFAULT_DEFER_SHARE`] of the context
    /// window), never the tools `always_loaded` names.
    pub(super) fn new(threshold: Option<u64>, always_loaded: Vec<String>) -> Self {
        Self {
            settings: Some(Settings {
                threshold,
                always_loaded,
            }),
            loaded: None,
        }
    }

    /// Decides what to defer of `registry`, registering `tool_search` in it when something
    /// is; returns every spec the registry then has. What was loaded before and is still
    /// deferred stays loaded (a change of mode offers a new registry mid-conversation).
    pub(super) fn apply(
        &mut self,
        registry: &ToolRegistry,
        context_window: u64,
    ) -> Arc<[ToolSpec]> {
        let previous = self.loaded.take();
        if let Some(settings) = &self.settings {
            let threshold = settings
                .threshold
                .unwrap_or((context_window as f64 * DEFAULT_DEFER_SHARE) as u64);
            let policy =
                DeferralPolicy::new(threshold).with_always_loaded(settings.always_loaded.clone());
            if registry.has(TOOL_SEARCH_NAME) {
                tracing::warn!("a tool is named {TOOL_SEARCH_NAME}: no tool is deferred");
            } else if let Some(deferred) = policy.plan(&registry.specs()) {
                let loaded = Arc::new(LoadedTools::new(Arc::new(deferred)));
                if let Some(previous) = previous {
                    let names = previous.names();
                    loaded.load(names.iter().map(String::as_str));
                }
                match registry.register(ToolSearch::for_conversation(Arc::clone(&loaded))) {
                    Ok(()) => self.loaded = Some(loaded),
                    Err(error) => tracing::warn!("{TOOL_SEARCH_NAME} not registered: {error}"),
                }
            }
        }
        registry.specs().into()
    }

    /// What a request offers of `all`: everything when nothing is deferred.
    pub(super) fn offered(&self, all: &Arc<[ToolSpec]>) -> Arc<[ToolSpec]> {
        match &self.loaded {
            Some(loaded) => loaded.offered(all),
            None => Arc::clone(all),
        }
    }
}
