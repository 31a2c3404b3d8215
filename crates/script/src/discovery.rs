//! Finding custom tool modules on disk (R33–R35) and loading them.
//!
//! Sources, in this order (R34):
//!
//! 1. capability providers: `~/.toolhost/tools`, `.toolhost/tools`, `~/.claude/tools`,
//!    `.claude/tools`, `~/.codex/tools`, `.codex/tools` (the un-prefixed ones in the working
//!    folder), then the Claude marketplace plugin cache (`~/.claude/plugins/cache/<marketplace>/
//!    <plugin>[/<version>]/tools`);
//! 2. pi's sources ([`crate::pi_sources`]): the extension folders (`.pi/extensions/`,
//!    `~/.pi/agent/extensions/`, `.omp/…`, `.toolhost/extensions/`), the `extensions` of pi's
//!    `settings.json`, and the installed plugins of `~/.toolhost/plugins/node_modules` and
//!    `~/.omp/plugins/node_modules` as their `package.json` manifests (`toolhost`, `omp`, `pi`)
//!    describe them, or else their `tools` folder;
//! 3. the configured paths, in the order given (`~` expands, relative paths resolve from cwd).
//!
//! In a folder, a tool is a `.ts`, `.js`, `.mjs` or `.mts` file, or a sub-folder with an
//! `index.ts` or `index.js` (whose relative imports stay inside it). `.md` and `.json` files are
//! metadata and never run; hidden entries and `.d.ts` files are skipped. A module found twice
//! (the same real path) loads once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{LoadError, NameClash};
use crate::host_api::ScriptHost;
use crate::module_loader::{existing_module, normalize};
use crate::pi_sources::{Entry, pi_entries};
use crate::tool::{LoadedTool, load_module};

/// Extensions of files that are tool modules.
const MODULE_EXTENSIONS: &[&str] = &["ts", "js", "mjs", "mts"];
/// Extensions of files that describe tools and never run (R35).
const METADATA_EXTENSIONS: &[&str] = &["md", "json"];

/// A module to load: where it was found, its real path, and the folder its imports stay in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModuleSource {
    /// The path as found (a file, or a tool folder).
    pub path: PathBuf,
    /// The real path of the module file that runs.
    pub entry: PathBuf,
    /// The folder relative imports must stay inside.
    pub root: PathBuf,
}

/// What discovery found: the tools in load order, and what went wrong on the way.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Loaded tools, in the order of R34, names unique and distinct from the built-ins.
    pub tools: Vec<LoadedTool>,
    /// Modules that failed to load, each with its path and error.
    pub errors: Vec<LoadError>,
    /// Tools refused because their name was taken.
    pub clashes: Vec<NameClash>,
    /// The pi extensions among the modules (handlers, commands), in load order.
    pub extensions: Vec<Arc<crate::Extension>>,
}

/// The folders of R34's first group (the capability providers), in order, for this home and
/// working folder; the installed plugins and pi's extensions are [`crate::pi_sources`]'.
pub fn provider_folders(home: Option<&Path>, cwd: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for config in [".toolhost", ".claude", ".codex"] {
        if let Some(home) = home {
            folders.push(home.join(config).join("tools"));
        }
        folders.push(cwd.join(config).join("tools"));
    }
    if let Some(home) = home {
        folders.extend(marketplace_tool_folders(
            &home.join(".claude/plugins/cache"),
        ));
    }
    folders
}

fn sorted_children(folder: &Path) -> Vec<PathBuf> {
    let mut children: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    children.sort();
    children
}

fn marketplace_tool_folders(cache: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for marketplace in sorted_children(cache).into_iter().filter(|p| p.is_dir()) {
        for plugin in sorted_children(&marketplace)
            .into_iter()
            .filter(|p| p.is_dir())
        {
            if plugin.join("tools").is_dir() {
                folders.push(plugin.join("tools"));
            }
            for version in sorted_children(&plugin).into_iter().filter(|p| p.is_dir()) {
                if version.join("tools").is_dir() {
                    folders.push(version.join("tools"));
                }
            }
        }
    }
    folders
}

/// Expands `~` and resolves a relative configured path from `cwd` (R35).
pub fn resolve_configured_path(path: &str, home: Option<&Path>, cwd: &Path) -> PathBuf {
    let expanded = match (path.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => PathBuf::from(path),
    };
    if expanded.is_absolute() {
        normalize(&expanded)
    } else {
        normalize(&cwd.join(expanded))
    }
}

fn extension(path: &Path) -> Option<&str> {
    path.extension().and_then(|ext| ext.to_str())
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with('.'))
}

/// The module at `path` when it is one: a module file, or a folder with an index.
fn module_at(path: &Path, root_of_file: &Path) -> Result<Option<ModuleSource>, String> {
    if path.is_dir() {
        let Some(index) = ["index.ts", "index.js"]
            .iter()
            .map(|file| path.join(file))
            .find(|candidate| candidate.is_file())
        else {
            return Ok(None);
        };
        let root = path.canonicalize().map_err(|error| error.to_string())?;
        let entry = index.canonicalize().map_err(|error| error.to_string())?;
        return Ok(Some(ModuleSource {
            path: path.to_path_buf(),
            entry,
            root,
        }));
    }
    let name = path.to_string_lossy();
    if name.ends_with(".d.ts")
        || !extension(path).is_some_and(|ext| MODULE_EXTENSIONS.contains(&ext))
    {
        return Ok(None);
    }
    let entry = path.canonicalize().map_err(|error| error.to_string())?;
    let root = root_of_file
        .canonicalize()
        .unwrap_or_else(|_| entry.parent().map(Path::to_path_buf).unwrap_or_default());
    Ok(Some(ModuleSource {
        path: path.to_path_buf(),
        entry,
        root,
    }))
}

/// Every module under the folders and paths, in order, de-duplicated by real path; paths that
/// cannot be used are reported. `explicit` paths that do not exist or are metadata are errors;
/// in scanned folders, non-modules are skipped.
pub fn find_modules(
    folders: &[PathBuf],
    explicit: &[PathBuf],
) -> (Vec<ModuleSource>, Vec<LoadError>) {
    find_modules_with(folders, &[], explicit)
}

/// [`find_modules`] with the modules pi's sources name (`entries`) between the folders and
/// the explicit paths.
pub(crate) fn find_modules_with(
    folders: &[PathBuf],
    entries: &[Entry],
    explicit: &[PathBuf],
) -> (Vec<ModuleSource>, Vec<LoadError>) {
    let mut found = Found::default();
    for folder in folders {
        if folder.is_dir() {
            found.scan_folder(folder);
        } else if folder.is_file() {
            found.file(folder, false);
        }
    }
    for entry in entries {
        found.entry(entry);
    }
    for path in explicit {
        if extension(path).is_some_and(|ext| METADATA_EXTENSIONS.contains(&ext)) {
            found.errors.push(LoadError::new(
                path,
                "a .md or .json file is tool metadata, never an executable module; configure \
                 the .ts or .js module instead",
            ));
        } else if !path.exists() {
            found
                .errors
                .push(LoadError::new(path, "no such file or folder"));
        } else if path.is_dir() && existing_module(&path.join("index")).is_none() {
            found.scan_folder(path);
        } else {
            found.file(path, true);
        }
    }
    (found.modules, found.errors)
}

#[derive(Default)]
struct Found {
    modules: Vec<ModuleSource>,
    errors: Vec<LoadError>,
    seen: HashSet<PathBuf>,
}

impl Found {
    fn push(&mut self, module: ModuleSource) {
        if self.seen.insert(module.entry.clone()) {
            self.modules.push(module);
        }
    }

    fn scan_folder(&mut self, folder: &Path) {
        for child in sorted_children(folder) {
            if is_hidden(&child) {
                continue;
            }
            if extension(&child).is_some_and(|ext| METADATA_EXTENSIONS.contains(&ext)) {
                tracing::debug!(path = %child.display(), "metadata file, not a tool module");
                continue;
            }
            match module_at(&child, folder) {
                Ok(Some(module)) => self.push(module),
                Ok(None) => {}
                Err(message) => self.errors.push(LoadError::new(&child, message)),
            }
        }
    }

    /// A module a pi source names: a file or a folder with an index is one module (its imports
    /// kept inside `root`); a folder without one (a plugin's tools) holds one module per file.
    fn entry(&mut self, entry: &Entry) {
        if entry.path.is_dir() && existing_module(&entry.path.join("index")).is_none() {
            self.scan_folder(&entry.path);
            return;
        }
        match module_at(&entry.path, &entry.root) {
            Ok(Some(mut module)) => {
                if let Ok(root) = entry.root.canonicalize() {
                    module.root = root;
                }
                self.push(module);
            }
            Ok(None) => self.errors.push(LoadError::new(
                &entry.path,
                "not a module: use a .ts, .js, .mjs or .mts file, or a folder with index.ts or \
                 index.js",
            )),
            Err(message) => self.errors.push(LoadError::new(&entry.path, message)),
        }
    }

    /// A single path; `required` reports it when it is not a module.
    fn file(&mut self, path: &Path, required: bool) {
        match module_at(path, path.parent().unwrap_or(path)) {
            Ok(Some(module)) => self.push(module),
            Ok(None) if required => self.errors.push(LoadError::new(
                path,
                "not a tool module: use a .ts, .js, .mjs or .mts file, or a folder with \
                 index.ts or index.js",
            )),
            Ok(None) => {}
            Err(message) => self.errors.push(LoadError::new(path, message)),
        }
    }
}

/// Discovers and loads custom tools (R33–R35): the provider folders and installed plugins of
/// `host`'s home and `cwd`, then `configured_paths`. Names clashing with `builtin_names` or an
/// earlier tool are refused with a warning naming both sources; a module that fails is
/// reported with its path and error while the others still load.
pub async fn discover_and_load_custom_tools(
    host: &Arc<ScriptHost>,
    configured_paths: &[String],
    cwd: &Path,
    builtin_names: &[String],
) -> Discovery {
    let (_, discovery) = crate::CustomTools::discover(
        Arc::clone(host),
        configured_paths.to_vec(),
        cwd.to_path_buf(),
        builtin_names.to_vec(),
    )
    .await;
    discovery
}

/// The modules of R34's sources for this host, `configured_paths` and `cwd`, not yet loaded.
pub(crate) fn discover_modules(
    host: &ScriptHost,
    configured_paths: &[String],
    cwd: &Path,
) -> (Vec<ModuleSource>, Vec<LoadError>) {
    let folders = provider_folders(host.home(), cwd);
    let (entries, mut errors) = pi_entries(host.home(), cwd);
    let explicit: Vec<PathBuf> = configured_paths
        .iter()
        .map(|path| resolve_configured_path(path, host.home(), cwd))
        .collect();
    let (modules, more) = find_modules_with(&folders, &entries, &explicit);
    errors.extend(more);
    (modules, errors)
}

/// Loads the modules at `paths` (files or tool folders) in order, with no built-in names to
/// avoid; the same reporting as [`discover_and_load_custom_tools`].
pub async fn load_custom_tools(host: &Arc<ScriptHost>, paths: &[PathBuf]) -> Discovery {
    let (modules, errors) = find_modules(&[], paths);
    let mut discovery = load_modules(host, &modules, &[]).await;
    discovery.errors.splice(0..0, errors);
    discovery
}

/// Loads `modules` in parallel, then admits their tools in order.
pub(crate) async fn load_modules(
    host: &Arc<ScriptHost>,
    modules: &[ModuleSource],
    builtin_names: &[String],
) -> Discovery {
    host.set_tool_names(builtin_names.to_vec());
    let loads = modules
        .iter()
        .map(|module| load_module(Arc::clone(host), module.entry.clone(), module.root.clone()));
    let results = futures::future::join_all(loads).await;
    let mut admission = Admission::new(builtin_names);
    let mut discovery = Discovery::default();
    for (module, result) in modules.iter().zip(results) {
        match result {
            Ok(parts) => {
                discovery.extensions.extend(parts.extension);
                for tool in parts.tools {
                    let loaded = LoadedTool {
                        tool,
                        path: module.path.clone(),
                    };
                    match admission.admit(&loaded) {
                        Ok(()) => discovery.tools.push(loaded),
                        Err(clash) => discovery.clashes.push(clash),
                    }
                }
            }
            Err(message) => {
                tracing::warn!(path = %module.path.display(), "custom tool not loaded: {message}");
                discovery.errors.push(LoadError::new(&module.path, message));
            }
        }
    }
    discovery
}

/// Admits tools whose names are free (R8, R35).
pub(crate) struct Admission {
    taken: HashMap<String, String>,
}

impl Admission {
    pub(crate) fn new(builtin_names: &[String]) -> Self {
        Self {
            taken: builtin_names
                .iter()
                .map(|name| (name.clone(), format!("the built-in tool '{name}'")))
                .collect(),
        }
    }

    pub(crate) fn admit(&mut self, loaded: &LoadedTool) -> Result<(), NameClash> {
        let name = loaded.tool.name().to_owned();
        if let Some(existing) = self.taken.get(&name) {
            let clash = NameClash {
                name,
                path: loaded.path.clone(),
                existing: existing.clone(),
            };
            tracing::warn!("{clash}");
            return Err(clash);
        }
        self.taken
            .insert(name, format!("{}", loaded.path.display()));
        Ok(())
    }
}
