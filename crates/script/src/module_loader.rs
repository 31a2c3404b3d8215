//! How a tool module's imports are found: relative imports inside the tool's folder, and the
//! built-in modules (`@sinclair/typebox`, `node:path`, `node:fs/promises`). Nothing else is
//! reachable: there is no `node_modules` lookup and no network.

use std::path::{Component, Path, PathBuf};

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Error, Module, Result};

use crate::transpile::{is_typescript, transpile_typescript};

/// The built-in modules: the names a tool may import, and their JavaScript source.
pub(crate) const BUILTIN_MODULES: &[(&str, &str)] = &[
    ("@sinclair/typebox", include_str!("js/typebox.js")),
    ("typebox", include_str!("js/typebox.js")),
    ("node:path", include_str!("js/path.js")),
    ("path", include_str!("js/path.js")),
    ("node:fs/promises", include_str!("js/fs.js")),
    ("fs/promises", include_str!("js/fs.js")),
    (API_MODULE, include_str!("js/api.js")),
];

/// The internal module that builds the host API and runs tools' hooks.
pub(crate) const API_MODULE: &str = "toolhost:api";

/// Extensions tried, in order, for an import without one (`./helpers` → `./helpers.ts`).
const EXTENSIONS: &[&str] = &["ts", "js", "mjs", "mts"];

fn builtin_source(name: &str) -> Option<&'static str> {
    BUILTIN_MODULES
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, source)| *source)
}

/// Resolves imports of one tool: relative paths stay inside `root`.
pub(crate) struct ToolResolver {
    root: PathBuf,
}

impl ToolResolver {
    /// A resolver confining relative imports to `root` (the tool's folder).
    pub(crate) fn new(root: PathBuf) -> Self {
        Self { root }
    }
}

impl Resolver for ToolResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<String> {
        if builtin_source(name).is_some() {
            return Ok(name.to_owned());
        }
        let is_relative = name.starts_with("./") || name.starts_with("../");
        let candidate = if is_relative {
            Path::new(base)
                .parent()
                .map_or_else(|| PathBuf::from(name), |folder| folder.join(name))
        } else if Path::new(name).is_absolute() {
            PathBuf::from(name)
        } else {
            return Err(Error::new_resolving_message(
                base,
                name,
                "only relative imports and the built-in modules (@sinclair/typebox, node:path, \
                 node:fs/promises) are available; copy or bundle dependencies into the tool folder",
            ));
        };
        let found = existing_module(&normalize(&candidate)).ok_or_else(|| {
            Error::new_resolving_message(
                base,
                name,
                "no such file (tried the name as written, with .ts, .js, .mjs or .mts, and index files)",
            )
        })?;
        // Checked on the real path, so that a symlink cannot lead out of the folder either.
        let found = found.canonicalize().unwrap_or(found);
        if !found.starts_with(&self.root) {
            return Err(Error::new_resolving_message(
                base,
                name,
                format!(
                    "imports must stay inside the tool folder {}",
                    self.root.display()
                ),
            ));
        }
        Ok(found.to_string_lossy().into_owned())
    }
}

/// The file an import names: as written, with an extension added, or a folder's index.
pub(crate) fn existing_module(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let with_extension = EXTENSIONS.iter().map(|ext| {
        let mut name = path.as_os_str().to_owned();
        name.push(".");
        name.push(ext);
        PathBuf::from(name)
    });
    let index = ["index.ts", "index.js"].iter().map(|file| path.join(file));
    with_extension
        .chain(index)
        .find(|candidate| candidate.is_file())
}

/// `a/./b/../c` → `a/c`, without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Loads resolved modules: built-ins from memory, files from disk (TypeScript transpiled).
pub(crate) struct ToolLoader;

impl Loader for ToolLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<Module<'js, Declared>> {
        if let Some(source) = builtin_source(name) {
            return Module::declare(ctx.clone(), name, source);
        }
        let path = Path::new(name);
        let source = std::fs::read_to_string(path)
            .map_err(|error| Error::new_loading_message(name, format!("cannot read: {error}")))?;
        let source = if is_typescript(path) {
            transpile_typescript(path, &source)
                .map_err(|message| Error::new_loading_message(name, message))?
        } else {
            source
        };
        Module::declare(ctx.clone(), name, source)
    }
}
