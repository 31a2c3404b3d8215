//! Where an `import` or `require()` leads, as bundlers resolve it: the built-ins first, then
//! relative paths, then packages in the `node_modules` folders from the importing file up to
//! the tool's folder (`package.json` `exports`, `module`, `main`). Nothing outside the tool's
//! folder is reachable, and nothing is fetched.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::builtins;
use super::{existing_module, normalize};

/// What a specifier names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A built-in module, by its canonical name.
    Builtin(&'static str),
    /// A file inside the tool's folder (real path).
    File(PathBuf),
}

/// Whether `import` or `require()` asks (they pick different `exports` conditions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Import,
    Require,
}

impl Request {
    fn conditions(self) -> &'static [&'static str] {
        match self {
            Self::Import => &["import", "module", "node", "default"],
            Self::Require => &["require", "node", "default"],
        }
    }
}

/// Resolves `specifier` written in the file `base` of a tool whose folder is `root`; the error
/// says what was looked for, where, and what to do.
pub(crate) fn resolve(
    root: &Path,
    base: &str,
    specifier: &str,
    request: Request,
) -> Result<Resolved, String> {
    let base_dir = Path::new(base)
        .parent()
        .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
    // The caller names the tool's path; messages name files inside it relative to its folder.
    let shown = Path::new(base)
        .strip_prefix(root)
        .map_or_else(|_| base.to_owned(), |inside| inside.display().to_string());
    let base = shown.as_str();
    let builtin = builtins::canonical(specifier);
    // `toolhost:zod` is always the built-in, whatever the tool's node_modules hold.
    if let Some(canonical) = builtin
        && (!builtins::installed_package_wins(canonical) || specifier.starts_with("toolhost:"))
    {
        return Ok(Resolved::Builtin(canonical));
    }
    let is_relative = specifier.starts_with("./")
        || specifier.starts_with("../")
        || specifier == "."
        || specifier == "..";
    if is_relative || Path::new(specifier).is_absolute() {
        let candidate = normalize(&base_dir.join(specifier));
        let found = existing_module(&candidate).ok_or_else(|| {
            format!(
                "cannot import '{specifier}' from {base}: no such file (tried the name as \
                 written, with .ts, .js, .mjs, .mts, .cjs, .cts or .json, index files, and a .js \
                 name as its .ts source)"
            )
        })?;
        return confined(root, base, specifier, found).map(Resolved::File);
    }
    if builtins::is_node_module(specifier) {
        return Err(needed_by(
            base,
            &format!(
                "the Node module '{specifier}', which custom tools cannot use (they run in an \
                 embedded engine without Node.js; the Node modules available are {})",
                builtins::provided_node_modules()
            ),
        ));
    }
    let (package, subpath) = split_package(specifier);
    match find_package(&base_dir, root, package) {
        Some(folder) => {
            let entry = package_entry(&folder, package, &subpath, request)?;
            if entry.extension().is_some_and(|ext| ext == "node") {
                return Err(needed_by(
                    base,
                    &format!(
                        "'{specifier}', a native addon ({}), which the embedded engine cannot load",
                        entry.display()
                    ),
                ));
            }
            confined(root, base, specifier, entry).map(Resolved::File)
        }
        None => match builtin {
            Some(canonical) => Ok(Resolved::Builtin(canonical)),
            None => Err(needed_by(
                base,
                &format!(
                    "the package '{package}', which is not installed: no node_modules/{package} \
                     between {} and the tool folder {} (run `npm install {package}` in the tool \
                     folder, or bundle it into the tool)",
                    base_dir.display(),
                    root.display()
                ),
            )),
        },
    }
}

/// "package 'x' (file) needs …" when `base` is inside a package, else "file needs …".
fn needed_by(base: &str, what: &str) -> String {
    match package_of(Path::new(base)) {
        Some(package) => format!("the package '{package}' ({base}) needs {what}"),
        None => format!("{base} needs {what}"),
    }
}

/// The package a file inside `node_modules` belongs to.
pub(crate) fn package_of(file: &Path) -> Option<String> {
    let text = format!("/{}", file.to_string_lossy());
    let (_, after) = text.rsplit_once("/node_modules/")?;
    let mut parts = after.split('/');
    let first = parts.next()?;
    if first.starts_with('@') {
        Some(format!("{first}/{}", parts.next()?))
    } else {
        Some(first.to_owned())
    }
}

fn confined(root: &Path, base: &str, specifier: &str, found: PathBuf) -> Result<PathBuf, String> {
    // Checked on the real path, so that a symlink cannot lead out of the folder either.
    let found = found.canonicalize().unwrap_or(found);
    if found.starts_with(root) {
        Ok(found)
    } else {
        Err(format!(
            "cannot import '{specifier}' from {base}: it leads to {}, but imports must stay inside \
             the tool folder {}",
            found.display(),
            root.display()
        ))
    }
}

/// `@scope/name/sub/path` → (`@scope/name`, `./sub/path`); `name` → (`name`, `.`).
fn split_package(specifier: &str) -> (&str, String) {
    let mut slashes = specifier.match_indices('/').map(|(at, _)| at);
    let cut = if specifier.starts_with('@') {
        slashes.nth(1)
    } else {
        slashes.next()
    };
    match cut {
        Some(at) => (&specifier[..at], format!(".{}", &specifier[at..])),
        None => (specifier, ".".to_owned()),
    }
}

fn find_package(from: &Path, root: &Path, package: &str) -> Option<PathBuf> {
    let mut folder = Some(from);
    while let Some(dir) = folder {
        if !dir.starts_with(root) {
            break;
        }
        let candidate = dir.join("node_modules").join(package);
        if candidate.is_dir() {
            return Some(candidate);
        }
        folder = dir.parent();
    }
    None
}

fn read_manifest(folder: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(folder.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The file `package`'s `subpath` (`.` or `./x`) leads to.
fn package_entry(
    folder: &Path,
    package: &str,
    subpath: &str,
    request: Request,
) -> Result<PathBuf, String> {
    let manifest = read_manifest(folder).unwrap_or(Value::Null);
    if let Some(exports) = manifest.get("exports") {
        let target = exports_target(exports, subpath, request.conditions()).ok_or_else(|| {
            format!(
                "the package '{package}' does not export '{subpath}' for {} (see the \
                 \"exports\" of {})",
                match request {
                    Request::Import => "import",
                    Request::Require => "require()",
                },
                folder.join("package.json").display()
            )
        })?;
        let path = normalize(&folder.join(&target));
        return existing_module(&path)
            .ok_or_else(|| format!("the package '{package}' exports {target}, which is missing"));
    }
    let file = if subpath == "." {
        let field = match request {
            Request::Import => ["module", "main"]
                .iter()
                .find_map(|key| manifest.get(key).and_then(Value::as_str).map(str::to_owned)),
            Request::Require => manifest
                .get("main")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        folder.join(field.unwrap_or_else(|| "index".to_owned()))
    } else {
        folder.join(subpath)
    };
    existing_module(&normalize(&file)).ok_or_else(|| {
        format!(
            "the package '{package}' has no file for '{subpath}' (looked for {})",
            file.display()
        )
    })
}

/// Node's `exports` resolution: a subpath map (with `*` patterns) whose targets may be
/// condition maps, arrays of fallbacks, or strings.
fn exports_target(exports: &Value, subpath: &str, conditions: &[&str]) -> Option<String> {
    let is_subpath_map = exports
        .as_object()
        .is_some_and(|map| map.keys().any(|key| key.starts_with('.')));
    if !is_subpath_map {
        return (subpath == ".")
            .then(|| condition_target(exports, conditions, None))
            .flatten();
    }
    let map = exports.as_object()?;
    if let Some(target) = map.get(subpath) {
        return condition_target(target, conditions, None);
    }
    map.iter().find_map(|(key, target)| {
        let (prefix, suffix) = key.split_once('*')?;
        let middle = subpath.strip_prefix(prefix)?.strip_suffix(suffix)?;
        condition_target(target, conditions, Some(middle))
    })
}

fn condition_target(target: &Value, conditions: &[&str], star: Option<&str>) -> Option<String> {
    match target {
        Value::String(path) => Some(match star {
            Some(middle) => path.replace('*', middle),
            None => path.clone(),
        }),
        Value::Array(options) => options
            .iter()
            .find_map(|option| condition_target(option, conditions, star)),
        Value::Object(map) => map
            .iter()
            .filter(|(condition, _)| conditions.contains(&condition.as_str()))
            .find_map(|(_, target)| condition_target(target, conditions, star)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn exports_pick_the_first_matching_condition_and_patterns() {
        let exports = json!({
            ".": { "types": "./a.d.ts", "import": "./esm/index.js", "require": "./cjs/index.js" },
            "./feature/*": { "default": "./lib/*.js" },
        });
        let import = Request::Import.conditions();
        let require = Request::Require.conditions();
        assert_eq!(
            exports_target(&exports, ".", import).as_deref(),
            Some("./esm/index.js")
        );
        assert_eq!(
            exports_target(&exports, ".", require).as_deref(),
            Some("./cjs/index.js")
        );
        assert_eq!(
            exports_target(&exports, "./feature/x", import).as_deref(),
            Some("./lib/x.js")
        );
        assert_eq!(exports_target(&exports, "./other", import), None);
        assert_eq!(
            exports_target(&json!("./main.js"), ".", import).as_deref(),
            Some("./main.js")
        );
    }

    #[test]
    fn package_names_and_subpaths_split_like_node() {
        assert_eq!(split_package("lodash"), ("lodash", ".".to_owned()));
        assert_eq!(split_package("lodash/fp"), ("lodash", "./fp".to_owned()));
        assert_eq!(split_package("@a/b/c/d"), ("@a/b", "./c/d".to_owned()));
        assert_eq!(
            package_of(Path::new("/t/node_modules/@a/b/x.js")).as_deref(),
            Some("@a/b")
        );
        assert_eq!(
            package_of(Path::new("/t/node_modules/a/node_modules/c/i.js")).as_deref(),
            Some("c")
        );
    }
}
