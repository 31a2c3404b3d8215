//! How a tool module's imports are found and loaded: the built-in modules (`builtins.rs`),
//! relative files and the packages of the tool's own `node_modules` (`resolve.rs`), in ES
//! module, CommonJS or JSON form (`commonjs.rs`). Nothing outside the tool's folder is
//! reachable, and there is no network.
//!
//! Errors are thrown as whole `Error` objects built here: QuickJS's own error constructors
//! cut messages at 256 bytes, which used to lose the actionable end of a message.

mod builtins;
mod commonjs;
mod commonjs_names;
mod imports;
mod resolve;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Error, Exception, Function, Module, Object, Result};

use crate::source_maps::SourceMaps;
use crate::transpile::{is_typescript, transpile_typescript};
pub(crate) use commonjs::install as install_commonjs;
use commonjs_names::with_commonjs_names;
use imports::{NamedImports, named_imports};
use resolve::{Request, Resolved, resolve};

/// The internal module that builds the host API and runs tools' hooks.
pub(crate) const API_MODULE: &str = "toolhost:api";
const API_SOURCE: &str = include_str!("../js/api.js");

/// Between a built-in's name and the names a module imports from it that it lacks: the module
/// gets the built-in with stand-ins for those (see [`imports`]).
const MISSING_EXPORTS: &str = "?missing=";

/// Extensions tried, in order, for an import without one (`./helpers` → `./helpers.ts`).
const EXTENSIONS: &[&str] = &["ts", "js", "mjs", "mts", "cjs", "cts", "json"];

/// What a file holds, by its extension, its package's `type`, or what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    EsModule,
    CommonJs,
    Json,
}

/// The format of `path` (inside `root`), whose text is `source`.
pub(crate) fn format_of(path: &Path, root: &Path, source: &str) -> Format {
    match path.extension().and_then(|ext| ext.to_str()) {
        Some("json") => return Format::Json,
        Some("cjs" | "cts") => return Format::CommonJs,
        Some("mjs" | "mts" | "ts") => return Format::EsModule,
        _ => {}
    }
    let mut folder = path.parent();
    while let Some(dir) = folder.filter(|dir| dir.starts_with(root)) {
        let manifest = std::fs::read_to_string(dir.join("package.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
        if let Some(manifest) = manifest {
            match manifest.get("type").and_then(|kind| kind.as_str()) {
                Some("module") => return Format::EsModule,
                Some("commonjs") => return Format::CommonJs,
                _ => break,
            }
        }
        folder = dir.parent();
    }
    sniff(source)
}

/// ES module when a line starts with `import`/`export`; CommonJS when it uses `module.exports`,
/// `exports.` or `require(`; ES module otherwise.
fn sniff(source: &str) -> Format {
    let es = source.lines().any(|line| {
        let line = line.trim_start();
        [
            "import ", "import{", "import*", "export ", "export{", "export*",
        ]
        .iter()
        .any(|start| line.starts_with(start))
    });
    let common = ["module.exports", "exports.", "require("]
        .iter()
        .any(|marker| source.contains(marker));
    if !es && common {
        Format::CommonJs
    } else {
        Format::EsModule
    }
}

/// Throws `message` as a whole `Error` (no 256-byte cut).
pub(crate) fn throw_whole(ctx: &Ctx<'_>, message: &str) -> Error {
    Exception::throw_message(ctx, message)
}

/// Resolves imports of one tool: everything stays inside `root`.
pub(crate) struct ToolResolver {
    root: PathBuf,
    /// The named imports of each importing file, read once.
    imports: HashMap<String, NamedImports>,
}

impl ToolResolver {
    /// A resolver confining imports to `root` (the tool's folder).
    pub(crate) fn new(root: PathBuf) -> Self {
        Self {
            root,
            imports: HashMap::new(),
        }
    }

    /// The module name for the built-in `canonical` as `base` imports it by `specifier`: the
    /// built-in itself, or, when `base` imports names it lacks, the built-in with stand-ins.
    fn builtin_for(
        &mut self,
        ctx: &Ctx<'_>,
        base: &str,
        specifier: &str,
        canonical: &str,
    ) -> Result<String> {
        let imports = self
            .imports
            .entry(base.to_owned())
            .or_insert_with(|| named_imports(Path::new(base)));
        let Some(names) = imports.get(specifier).filter(|names| !names.is_empty()) else {
            return Ok(canonical.to_owned());
        };
        let exports = exports_of(ctx, canonical)?;
        let mut missing: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|name| is_exportable(name) && !exports.iter().any(|key| key == name))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            Ok(canonical.to_owned())
        } else {
            Ok(format!("{canonical}{MISSING_EXPORTS}{}", missing.join(",")))
        }
    }
}

/// The keys of what `require(id)` gives.
fn exports_of(ctx: &Ctx<'_>, id: &str) -> Result<Vec<String>> {
    let toolhost: Object = ctx.globals().get("__toolhost")?;
    let require: Function = toolhost.get("require")?;
    let exports: rquickjs::Value = require.call((id,))?;
    Ok(exports
        .as_object()
        .map(|object| object.keys::<String>().flatten().collect())
        .unwrap_or_default())
}

impl Resolver for ToolResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<String> {
        if name == API_MODULE {
            return Ok(name.to_owned());
        }
        match resolve(&self.root, base, name, Request::Import) {
            Ok(Resolved::Builtin(canonical)) => self.builtin_for(ctx, base, name, canonical),
            Ok(Resolved::File(path)) => Ok(path.to_string_lossy().into_owned()),
            Err(message) => Err(throw_whole(ctx, &message)),
        }
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
    let index = ["index.ts", "index.js", "index.mjs", "index.cjs"]
        .iter()
        .map(|file| path.join(file));
    with_extension
        .chain(index)
        .find(|candidate| candidate.is_file())
        .or_else(|| typescript_source_of(path))
}

/// `./utils.js` written in a TypeScript file names `./utils.ts`, as TypeScript's `NodeNext`
/// resolution and pi's loader have it: the import names the file the compiler would emit.
fn typescript_source_of(path: &Path) -> Option<PathBuf> {
    let emitted = path.extension()?.to_str()?;
    let sources: &[&str] = match emitted {
        "js" => &["ts"],
        "mjs" => &["mts"],
        "cjs" => &["cts"],
        _ => return None,
    };
    sources
        .iter()
        .map(|source| path.with_extension(source))
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

/// Loads resolved modules: built-ins and CommonJS files through `require` with an ES module
/// facade, JSON as a default export, ES modules from disk (TypeScript transpiled).
pub(crate) struct ToolLoader {
    root: PathBuf,
    source_maps: SourceMaps,
}

impl ToolLoader {
    /// A loader for the tool in `root`, recording TypeScript line maps in `source_maps`.
    pub(crate) fn new(root: PathBuf, source_maps: SourceMaps) -> Self {
        Self { root, source_maps }
    }
}

impl Loader for ToolLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<Module<'js, Declared>> {
        if name == API_MODULE {
            return Module::declare(ctx.clone(), name, API_SOURCE);
        }
        if builtins::source(name).is_some() {
            return Module::declare(ctx.clone(), name, facade(ctx, name)?);
        }
        if let Some((builtin, missing)) = name.split_once(MISSING_EXPORTS)
            && builtins::source(builtin).is_some()
        {
            let mut source = facade(ctx, builtin)?;
            let quoted = serde_json::to_string(builtin).unwrap_or_default();
            for export in missing.split(',').filter(|export| is_exportable(export)) {
                source.push_str(&format!(
                    "export const {export} = globalThis.__toolhost.missingExport({quoted}, \"{export}\");\n"
                ));
            }
            return Module::declare(ctx.clone(), name, source);
        }
        let path = Path::new(name);
        let source = std::fs::read_to_string(path)
            .map_err(|error| throw_whole(ctx, &format!("cannot read {name}: {error}")))?;
        let module = self.declare(ctx, path, name, source)?;
        // `import.meta.url` (and Node's `filename`/`dirname`), for `createRequire` and paths.
        let meta = module.meta()?;
        meta.set("url", format!("file://{name}"))?;
        meta.set("filename", name)?;
        if let Some(folder) = path.parent() {
            meta.set("dirname", folder.to_string_lossy().into_owned())?;
        }
        Ok(module)
    }
}

impl ToolLoader {
    fn declare<'js>(
        &self,
        ctx: &Ctx<'js>,
        path: &Path,
        name: &str,
        source: String,
    ) -> Result<Module<'js, Declared>> {
        match format_of(path, &self.root, &source) {
            Format::Json => {
                commonjs::check_json(name, &source)
                    .map_err(|message| throw_whole(ctx, &message))?;
                Module::declare(ctx.clone(), name, format!("export default {source}\n;"))
            }
            Format::CommonJs => Module::declare(ctx.clone(), name, facade(ctx, name)?),
            Format::EsModule if is_typescript(path) => {
                let transpiled = transpile_typescript(path, &source)
                    .map_err(|message| throw_whole(ctx, &format!("{name}: {message}")))?;
                let code = with_commonjs_names(path, transpiled.code);
                self.source_maps.record(name, transpiled.line_map, &code);
                Module::declare(ctx.clone(), name, code)
            }
            Format::EsModule => {
                Module::declare(ctx.clone(), name, with_commonjs_names(path, source))
            }
        }
    }
}

/// An ES module over what `require(id)` gives: its default export (or `exports.default` of a
/// transpiled ES module) and one named export per identifier key.
fn facade(ctx: &Ctx<'_>, id: &str) -> Result<String> {
    let toolhost: Object = ctx.globals().get("__toolhost")?;
    let require: Function = toolhost.get("require")?;
    let exports: rquickjs::Value = require.call((id,))?;
    let quoted = serde_json::to_string(id).unwrap_or_default();
    let mut source =
        format!("const __toolhost_module = globalThis.__toolhost.require({quoted});\n");
    let Some(object) = exports.as_object() else {
        source.push_str("export default __toolhost_module;\n");
        return Ok(source);
    };
    let es_module = object.get::<_, bool>("__esModule").unwrap_or(false)
        && object.contains_key("default").unwrap_or(false);
    source.push_str(if es_module {
        "export default __toolhost_module.default;\n"
    } else {
        "export default __toolhost_module;\n"
    });
    for key in object.keys::<String>().flatten() {
        if is_exportable(&key) {
            source.push_str(&format!("export const {key} = __toolhost_module.{key};\n"));
        }
    }
    Ok(source)
}

fn is_exportable(key: &str) -> bool {
    const RESERVED: &[&str] = &[
        "arguments",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "eval",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ];
    let mut chars = key.chars();
    let starts = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$');
    starts
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with("__")
        && !RESERVED.contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_tells_commonjs_from_es_modules() {
        assert_eq!(sniff("module.exports = 1;"), Format::CommonJs);
        assert_eq!(sniff("const x = require('y');"), Format::CommonJs);
        assert_eq!(sniff("export default 1;"), Format::EsModule);
        assert_eq!(
            sniff("import x from 'y';\nmodule.exports = x;"),
            Format::EsModule
        );
        assert_eq!(sniff("console.log(1)"), Format::EsModule);
    }
}
