//! Keeping a loaded set of custom tools current (R41): re-discovery that reloads only the
//! modules whose files changed, and a file watcher that says when to do it.
//!
//! ```no_run
//! # async fn example(host: std::sync::Arc<toolhost_script::ScriptHost>, registry: toolhost_core::ToolRegistry) {
//! use toolhost_script::CustomTools;
//!
//! let cwd = host.cwd().to_path_buf();
//! let (mut tools, discovery) = CustomTools::discover(host, vec![], cwd, vec!["Read".into()]).await;
//! for loaded in &discovery.tools {
//!     let _ = registry.register_arc(loaded.tool.clone());
//! }
//! let mut watcher = tools.watch().unwrap();
//! loop {
//!     watcher.changed().await;
//!     let report = tools.reload().await;
//!     if !report.is_empty() {
//!         report.apply(&registry); // then announce `notifications/tools/list_changed`
//!     }
//! }
//! # }
//! ```

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use toolhost_core::{RegistryError, ToolRegistry};

use crate::discovery::{
    Admission, Discovery, ModuleSource, discover_modules, provider_folders, resolve_configured_path,
};
use crate::error::{LoadError, NameClash};
use crate::host_api::ScriptHost;
use crate::tool::{LoadedTool, ModuleParts, load_module};

/// How long the watcher waits for a burst of file events to end before it reports a change.
pub const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);

struct LoadedModule {
    source: ModuleSource,
    fingerprint: u64,
    tools: Result<ModuleParts, String>,
}

/// A loaded set of custom tools that can be reloaded from disk.
pub struct CustomTools {
    host: Arc<ScriptHost>,
    configured_paths: Vec<String>,
    cwd: PathBuf,
    builtin_names: Vec<String>,
    modules: Vec<LoadedModule>,
    active: Vec<LoadedTool>,
}

impl std::fmt::Debug for CustomTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomTools")
            .field("cwd", &self.cwd)
            .field("configured_paths", &self.configured_paths)
            .field(
                "tools",
                &self
                    .active
                    .iter()
                    .map(|t| t.tool.name())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What a reload changed.
#[derive(Debug, Default)]
pub struct ReloadReport {
    /// Tools that are new.
    pub added: Vec<LoadedTool>,
    /// Names of tools that are gone.
    pub removed: Vec<String>,
    /// Tools whose module changed (same name, new code).
    pub changed: Vec<LoadedTool>,
    /// Modules that failed to load this time.
    pub errors: Vec<LoadError>,
    /// Tools refused because their name was taken.
    pub clashes: Vec<NameClash>,
}

impl ReloadReport {
    /// Whether the set of tools stayed the same.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// Brings `registry` up to date: removed and changed tools are unregistered, added and
    /// changed ones registered. Returns the registry's refusals.
    pub fn apply(&self, registry: &ToolRegistry) -> Vec<RegistryError> {
        for name in &self.removed {
            registry.unregister(name);
        }
        for loaded in &self.changed {
            registry.unregister(loaded.tool.name());
        }
        let tools = self.changed.iter().chain(&self.added).map(|loaded| {
            let tool: Arc<dyn toolhost_core::Tool> = loaded.tool.clone();
            tool
        });
        registry.register_all(tools)
    }
}

impl CustomTools {
    /// Discovers and loads the tools (as [`crate::discover_and_load_custom_tools`]) and keeps
    /// what is needed to reload them.
    pub async fn discover(
        host: Arc<ScriptHost>,
        configured_paths: Vec<String>,
        cwd: PathBuf,
        builtin_names: Vec<String>,
    ) -> (Self, Discovery) {
        let mut tools = Self {
            host,
            configured_paths,
            cwd,
            builtin_names,
            modules: Vec::new(),
            active: Vec::new(),
        };
        let report = tools.reload().await;
        let discovery = Discovery {
            tools: tools.active.clone(),
            errors: report.errors,
            clashes: report.clashes,
            extensions: tools.extensions(),
        };
        (tools, discovery)
    }

    /// The host the tools run against (a UI sets its context there).
    pub fn host(&self) -> &Arc<ScriptHost> {
        &self.host
    }

    /// The pi extensions among the loaded modules, in load order.
    pub fn extensions(&self) -> Vec<Arc<crate::Extension>> {
        self.modules
            .iter()
            .filter_map(|module| module.tools.as_ref().ok()?.extension.clone())
            .collect()
    }

    /// The active tools, in load order.
    pub fn tools(&self) -> &[LoadedTool] {
        &self.active
    }

    /// Discovers again; modules whose files did not change keep their engines (and state).
    pub async fn reload(&mut self) -> ReloadReport {
        // Load errors go back in the report; the caller says them (once).
        let (sources, mut errors) = discover_modules(&self.host, &self.configured_paths, &self.cwd);
        let mut previous: HashMap<PathBuf, LoadedModule> = self
            .modules
            .drain(..)
            .map(|module| (module.source.entry.clone(), module))
            .collect();
        let mut modules = Vec::with_capacity(sources.len());
        let mut to_load = Vec::new();
        for source in sources {
            let fingerprint = fingerprint(&source);
            match previous.remove(&source.entry) {
                Some(old) if old.fingerprint == fingerprint && old.source == source => {
                    modules.push(Some(old))
                }
                _ => {
                    to_load.push((modules.len(), source, fingerprint));
                    modules.push(None);
                }
            }
        }
        self.host.set_tool_names(self.builtin_names.clone());
        let loads = to_load.iter().map(|(_, source, _)| {
            load_module(
                Arc::clone(&self.host),
                source.entry.clone(),
                source.root.clone(),
            )
        });
        let results = futures::future::join_all(loads).await;
        for ((slot, source, fingerprint), tools) in to_load.into_iter().zip(results) {
            modules[slot] = Some(LoadedModule {
                source,
                fingerprint,
                tools,
            });
        }
        self.modules = modules.into_iter().flatten().collect();

        let mut admission = Admission::new(&self.builtin_names);
        let mut active = Vec::new();
        let mut clashes = Vec::new();
        for module in &self.modules {
            match &module.tools {
                Ok(parts) => {
                    for tool in &parts.tools {
                        let loaded = LoadedTool {
                            tool: Arc::clone(tool),
                            path: module.source.path.clone(),
                        };
                        match admission.admit(&loaded) {
                            Ok(()) => active.push(loaded),
                            Err(clash) => clashes.push(clash),
                        }
                    }
                }
                Err(message) => {
                    errors.push(LoadError::new(&module.source.path, message.clone()));
                }
            }
        }
        let before: HashMap<&str, &LoadedTool> =
            self.active.iter().map(|t| (t.tool.name(), t)).collect();
        let after: HashMap<&str, &LoadedTool> = active.iter().map(|t| (t.tool.name(), t)).collect();
        let mut report = ReloadReport {
            errors,
            clashes,
            ..ReloadReport::default()
        };
        for loaded in &active {
            match before.get(loaded.tool.name()) {
                None => report.added.push(loaded.clone()),
                Some(old) if !Arc::ptr_eq(&old.tool, &loaded.tool) => {
                    report.changed.push(loaded.clone())
                }
                Some(_) => {}
            }
        }
        report.removed = self
            .active
            .iter()
            .map(|t| t.tool.name())
            .filter(|name| !after.contains_key(name))
            .map(str::to_owned)
            .collect();
        self.active = active;
        report
    }

    /// The folders and files whose changes may change the tools: R34's sources that exist.
    pub fn watched_paths(&self) -> Vec<PathBuf> {
        let mut paths = provider_folders(self.host.home(), &self.cwd);
        paths.extend(crate::pi_sources::extension_folders(
            self.host.home(),
            &self.cwd,
        ));
        if let Some(home) = self.host.home() {
            paths.push(home.join(".toolhost/plugins/node_modules"));
            paths.push(home.join(".omp/plugins/node_modules"));
        }
        paths.extend(
            self.configured_paths
                .iter()
                .map(|path| resolve_configured_path(path, self.host.home(), &self.cwd)),
        );
        paths.retain(|path| path.exists());
        paths.sort();
        paths.dedup();
        paths
    }

    /// A watcher on [`Self::watched_paths`]; after [`ToolWatcher::changed`] returns, call
    /// [`Self::reload`]. Paths created later are not watched until a new watcher is made.
    ///
    /// With no path to watch (the usual case: no tool folder exists), [`ToolWatcher::changed`]
    /// never returns, as before, but no watcher thread (nor inotify instance) is started: a
    /// thread that would never report anything, on `toolhost serve`'s path to its first reply.
    pub fn watch(&self) -> Result<ToolWatcher, notify::Error> {
        let (sender, events) = mpsc::unbounded_channel();
        let paths = self.watched_paths();
        if paths.is_empty() {
            return Ok(ToolWatcher {
                _watcher: None,
                events,
            });
        }
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|event| !event.kind.is_access()) {
                    let _ = sender.send(());
                }
            })?;
        for path in paths {
            watcher.watch(&path, RecursiveMode::Recursive)?;
        }
        Ok(ToolWatcher {
            _watcher: Some(watcher),
            events,
        })
    }
}

/// Tells when files under the tool sources change.
pub struct ToolWatcher {
    _watcher: Option<notify::RecommendedWatcher>,
    events: mpsc::UnboundedReceiver<()>,
}

impl std::fmt::Debug for ToolWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolWatcher").finish_non_exhaustive()
    }
}

impl ToolWatcher {
    /// Waits for a change, then for the burst of events to settle ([`WATCH_DEBOUNCE`]).
    pub async fn changed(&mut self) {
        if self.events.recv().await.is_none() {
            return std::future::pending().await;
        }
        while let Ok(Some(())) = tokio::time::timeout(WATCH_DEBOUNCE, self.events.recv()).await {}
    }
}

/// Size and modification time of the module's files: the entry alone for a single-file tool,
/// every file under the folder for a folder tool.
fn fingerprint(source: &ModuleSource) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut files = Vec::new();
    if source.path.is_dir() {
        collect_files(&source.root, &mut files, 0);
    } else {
        files.push(source.entry.clone());
    }
    files.sort();
    for file in files {
        file.hash(&mut hasher);
        if let Ok(metadata) = std::fs::metadata(&file) {
            metadata.len().hash(&mut hasher);
            metadata.modified().ok().hash(&mut hasher);
        }
    }
    hasher.finish()
}

fn collect_files(folder: &Path, files: &mut Vec<PathBuf>, depth: usize) {
    const MAX_DEPTH: usize = 8;
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && depth < MAX_DEPTH {
            collect_files(&path, files, depth + 1);
        } else if path.is_file() {
            files.push(path);
        }
    }
}
