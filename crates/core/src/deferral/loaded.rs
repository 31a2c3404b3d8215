//! What a conversation has loaded with `tool_search`, and the tools it is offered because of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use super::DeferredTools;
use crate::spec::ToolSpec;

/// The deferred tools one conversation (an agent run, one MCP client) has loaded.
#[derive(Debug)]
pub struct LoadedTools {
    state: Mutex<State>,
    changes: watch::Sender<u64>,
}

#[derive(Debug)]
struct State {
    /// What may be loaded: replaced when the tool set changes (a server's tools joining a
    /// gateway), see [`LoadedTools::replace_deferred`].
    deferred: Arc<DeferredTools>,
    /// In the order they were loaded: they are offered after the others in that order, so
    /// that loading a tool leaves the start of the tools list (a provider's cached prefix) as
    /// it was.
    names: Vec<String>,
    /// The last [`LoadedTools::offered`] answer.
    offered: Option<OfferedSet>,
}

/// The specs offered for one full set of specs.
#[derive(Debug)]
struct OfferedSet {
    all: Arc<[ToolSpec]>,
    offered: Arc<[ToolSpec]>,
}

impl LoadedTools {
    /// Nothing loaded yet of `deferred`.
    pub fn new(deferred: Arc<DeferredTools>) -> Self {
        Self {
            state: Mutex::new(State {
                deferred,
                names: Vec::new(),
                offered: None,
            }),
            changes: watch::Sender::new(0),
        }
    }

    /// The deferred tools this conversation may load.
    pub fn deferred(&self) -> Arc<DeferredTools> {
        Arc::clone(&self.lock().deferred)
    }

    /// Defers `deferred` from now on instead: the loaded tools that are still deferred stay
    /// loaded, the others are simply offered. Subscribers hear of the change.
    pub fn replace_deferred(&self, deferred: Arc<DeferredTools>) {
        let mut state = self.lock();
        state.names.retain(|name| deferred.contains(name));
        state.deferred = deferred;
        state.offered = None;
        drop(state);
        self.changes.send_modify(|version| *version += 1);
    }

    /// Loads the deferred tools of these names (others are ignored); returns the ones that
    /// were not loaded before.
    pub fn load<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut state = self.lock();
        let mut added = Vec::new();
        for name in names {
            if state.deferred.contains(name) && !state.names.iter().any(|loaded| loaded == name) {
                state.names.push(name.to_owned());
                added.push(name.to_owned());
            }
        }
        if !added.is_empty() {
            state.offered = None;
            drop(state);
            self.changes.send_modify(|version| *version += 1);
        }
        added
    }

    /// Whether the tool of that name was loaded.
    pub fn is_loaded(&self, name: &str) -> bool {
        self.lock().names.iter().any(|loaded| loaded == name)
    }

    /// The names loaded, in the order they were.
    pub fn names(&self) -> Vec<String> {
        self.lock().names.clone()
    }

    /// What to offer of `all` (every registered tool's spec): the tools that are not
    /// deferred, in their order, then the loaded ones in the order they were loaded. The same
    /// `Arc` as last time while neither `all` nor the loaded set changed.
    pub fn offered(&self, all: &Arc<[ToolSpec]>) -> Arc<[ToolSpec]> {
        let mut state = self.lock();
        if let Some(last) = &state.offered
            && Arc::ptr_eq(&last.all, all)
        {
            return Arc::clone(&last.offered);
        }
        let offered: Arc<[ToolSpec]> =
            visible(&state.deferred, all.iter().cloned(), &state.names).into();
        state.offered = Some(OfferedSet {
            all: Arc::clone(all),
            offered: Arc::clone(&offered),
        });
        offered
    }

    /// [`Self::offered`] of specs that are not shared (an MCP server's `tools/list`).
    pub fn offered_of(&self, all: Vec<ToolSpec>) -> Vec<ToolSpec> {
        let state = self.lock();
        visible(&state.deferred, all.into_iter(), &state.names)
    }

    /// A receiver whose value changes whenever a tool is loaded.
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    // Every change under the lock is one push or one reset, so a poisoned lock is consistent.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Of `all`, the tools that are not `deferred` in their order, then the `loaded` ones in the
/// order they were loaded.
fn visible(
    deferred: &DeferredTools,
    all: impl Iterator<Item = ToolSpec>,
    loaded: &[String],
) -> Vec<ToolSpec> {
    let mut by_name: HashMap<String, ToolSpec> = HashMap::new();
    let mut offered = Vec::new();
    for spec in all {
        if deferred.contains(&spec.name) {
            by_name.insert(spec.name.clone(), spec);
        } else {
            offered.push(spec);
        }
    }
    offered.extend(loaded.iter().filter_map(|name| by_name.remove(name)));
    offered
}

/// The loaded tools of each session of a server that many clients use at once (`toolhost
/// serve` over HTTP): what one client loads, the others are not offered.
#[derive(Debug)]
pub struct SessionLoads {
    /// The deferred set and every session's loads, under one lock so that a session made
    /// while the set is replaced gets the new one.
    state: Mutex<Sessions>,
}

#[derive(Debug)]
struct Sessions {
    deferred: Arc<DeferredTools>,
    loads: HashMap<String, Arc<LoadedTools>>,
}

impl SessionLoads {
    /// No session has loaded anything of `deferred` yet.
    pub fn new(deferred: Arc<DeferredTools>) -> Self {
        Self {
            state: Mutex::new(Sessions {
                deferred,
                loads: HashMap::new(),
            }),
        }
    }

    /// The deferred tools.
    pub fn deferred(&self) -> Arc<DeferredTools> {
        Arc::clone(&self.lock().deferred)
    }

    /// Defers `deferred` from now on, for every session (see
    /// [`LoadedTools::replace_deferred`]).
    pub fn replace_deferred(&self, deferred: Arc<DeferredTools>) {
        let mut state = self.lock();
        for loaded in state.loads.values() {
            loaded.replace_deferred(Arc::clone(&deferred));
        }
        state.deferred = deferred;
    }

    /// What session `id` has loaded (nothing, the first time it is asked).
    pub fn session(&self, id: &str) -> Arc<LoadedTools> {
        let mut state = self.lock();
        let deferred = Arc::clone(&state.deferred);
        Arc::clone(
            state
                .loads
                .entry(id.to_owned())
                .or_insert_with(|| Arc::new(LoadedTools::new(deferred))),
        )
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets session `id` (its connection closed).
    pub fn forget(&self, id: &str) {
        self.lock().loads.remove(id);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::origin::ToolOrigin;

    fn names(specs: &[ToolSpec]) -> Vec<&str> {
        specs.iter().map(|spec| spec.name.as_str()).collect()
    }

    #[test]
    fn loaded_tools_are_offered_after_the_others_and_the_set_is_shared_until_it_changes() {
        let foreign = |name: &str| ToolSpec::new(name, "x").with_origin(ToolOrigin::mcp("s"));
        let all: Arc<[ToolSpec]> = vec![
            ToolSpec::new("Read", "x"),
            foreign("a"),
            foreign("b"),
            ToolSpec::new("tool_search", "x"),
        ]
        .into();
        let deferred = Arc::new(DeferredTools::new(vec![foreign("a"), foreign("b")]));
        let loaded = LoadedTools::new(deferred);
        let first = loaded.offered(&all);
        assert_eq!(names(&first), ["Read", "tool_search"]);
        assert!(Arc::ptr_eq(&first, &loaded.offered(&all)));

        assert_eq!(loaded.load(["b", "Read", "b"]), ["b"]);
        let second = loaded.offered(&all);
        assert_eq!(names(&second), ["Read", "tool_search", "b"]);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(loaded.load(["b"]), Vec::<String>::new());
        assert!(Arc::ptr_eq(&second, &loaded.offered(&all)));
    }
}
