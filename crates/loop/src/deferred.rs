//! The loop's side of deferred tools: deciding what to defer for the registry it offers, and
//! which specs each request sends (see [`toolhost_core::deferral`]).
//!
//! How a request carries them is the provider's to say ([`DeferredLoading`]): injected, the
//! request offers the tools not deferred and then those loaded so far; native, it offers every
//! tool, the deferred ones flagged, and the `tool_search` results' tool references load them.

use std::collections::BTreeSet;
use std::sync::Arc;

use toolhost_core::conversation::Message;
use toolhost_core::deferral::{
    DEFAULT_DEFER_SHARE, DeferralPolicy, LoadedTools, TOOL_SEARCH_NAME, ToolSearch,
};
use toolhost_core::{Tool, ToolRegistry, ToolSpec};
use toolhost_providers::DeferredLoading;

/// Whether and how the loop defers tools, and what the conversation has loaded.
#[derive(Default)]
pub(super) struct Deferral {
    /// `None`: never defer (a loop built without [`super::AgentLoop::defer_tools`]).
    settings: Option<Settings>,
    /// `Some` while tools are deferred.
    loaded: Option<Arc<LoadedTools>>,
    /// The `tool_search` this registered, to tell it from a tool of that name.
    search: Option<Arc<dyn Tool>>,
    /// How the provider is sent deferred tools.
    loading: DeferredLoading,
    /// The deferred tools' names, flagged in every request when loading is native (one
    /// shared set, so that the provider renders the tools once).
    flagged: Arc<BTreeSet<String>>,
}

struct Settings {
    threshold: Option<u64>,
    always_loaded: Vec<String>,
}

/// The tools one request offers.
pub(super) struct Offered {
    /// Their specs, in order.
    pub(super) tools: Arc<[ToolSpec]>,
    /// Of those, the ones sent deferred.
    pub(super) deferred: Arc<BTreeSet<String>>,
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
            ..Self::default()
        }
    }

    /// Decides what to defer of `registry` for a provider of this `context_window` and
    /// `loading`, registering `tool_search` in it when something is (and replacing the one
    /// an earlier plan registered); returns every spec the registry then has. What was loaded
    /// before and is still deferred stays loaded (a change of mode or of provider plans again
    /// mid-conversation).
    pub(super) fn apply(
        &mut self,
        registry: &ToolRegistry,
        context_window: u64,
        loading: DeferredLoading,
    ) -> Arc<[ToolSpec]> {
        let previous = self.loaded.take();
        self.loading = loading;
        self.flagged = Arc::default();
        if let Some(search) = self.search.take()
            && registry
                .get(TOOL_SEARCH_NAME)
                .is_some_and(|registered| Arc::ptr_eq(&registered, &search))
        {
            registry.unregister(TOOL_SEARCH_NAME);
        }
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
                let search: Arc<dyn Tool> =
                    Arc::new(ToolSearch::for_conversation(Arc::clone(&loaded)));
                match registry.register_arc(Arc::clone(&search)) {
                    Ok(()) => {
                        if loading == DeferredLoading::Native {
                            let deferred = loaded.deferred();
                            let names = deferred.specs().iter();
                            self.flagged = Arc::new(names.map(|s| s.name.clone()).collect());
                        }
                        self.loaded = Some(loaded);
                        self.search = Some(search);
                    }
                    Err(error) => tracing::warn!("{TOOL_SEARCH_NAME} not registered: {error}"),
                }
            }
        }
        registry.specs().into()
    }

    /// What a request with `messages` offers of `all`: everything when nothing is deferred
    /// or loading is native (the deferred tools flagged), else the tools not deferred and then
    /// the loaded ones — those `tool_search` loaded in this run, and those whose references
    /// the conversation holds (a resumed session's).
    pub(super) fn offered(&self, all: &Arc<[ToolSpec]>, messages: &[Message]) -> Offered {
        let tools = match (&self.loaded, self.loading) {
            (Some(loaded), DeferredLoading::Injected) => {
                loaded.load(referenced_tools(messages));
                loaded.offered(all)
            }
            (Some(_), DeferredLoading::Native) | (None, _) => Arc::clone(all),
        };
        Offered {
            tools,
            deferred: Arc::clone(&self.flagged),
        }
    }
}

/// The tools the tool results of `messages` reference.
fn referenced_tools(messages: &[Message]) -> impl Iterator<Item = &str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult(result) => Some(&result.content),
            _ => None,
        })
        .flatten()
        .filter_map(|block| block.as_tool_reference())
}
