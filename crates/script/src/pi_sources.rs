//! Where pi and oh-my-pi put extensions and plugins, read as they read them:
//!
//! - extension folders: `.pi/extensions/` and `~/.pi/agent/extensions/` (pi), `.omp/extensions/`
//!   and `~/.omp/agent/extensions/` (oh-my-pi), `~/.toolhost/extensions/` and
//!   `.toolhost/extensions/` (ours), then the hook and custom tool folders pi and oh-my-pi read
//!   before extensions replaced them (`.pi/hooks/`, `~/.pi/agent/hooks/`, `.omp/hooks/`,
//!   `~/.omp/agent/hooks/`, and the same with `tools`). In each, a `.ts`/`.js` file is an extension, and so is a
//!   sub-folder whose `package.json` lists `pi.extensions` (or `omp.extensions`), else that has an
//!   `index.ts`/`index.js`;
//! - the `extensions` paths of pi's `settings.json` (`.pi/settings.json`,
//!   `~/.pi/agent/settings.json`), relative to the folder of that file;
//! - plugin packages installed in `~/.toolhost/plugins/node_modules` and
//!   `~/.omp/plugins/node_modules` (scoped ones too), read from their `package.json`:
//!   `toolhost.tools`, `omp.tools` / `pi.tools` (a path or a list), `omp.extensions` /
//!   `pi.extensions`, else a `tools/` folder. A tools folder with an `index.ts` is one module;
//!   otherwise each module in it is one. A package that yields nothing is reported.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::LoadError;
use crate::module_loader::existing_module;

/// A module a pi source names: the path to load and the folder its imports stay in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// A module file, or a folder with an index (or, for a plugin's tools, a folder of modules).
    pub path: PathBuf,
    /// The folder its relative imports must stay inside.
    pub root: PathBuf,
}

/// Every module the pi sources name for this home and working folder, in order, and what was
/// wrong with them.
pub(crate) fn pi_entries(home: Option<&Path>, cwd: &Path) -> (Vec<Entry>, Vec<LoadError>) {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for folder in extension_folders(home, cwd) {
        entries.extend(extensions_in(&folder));
    }
    for settings in settings_files(home, cwd) {
        let Some(base) = settings.parent() else {
            continue;
        };
        for path in listed(&read_json(&settings), "/extensions") {
            let path = base.join(path);
            if !path.exists() {
                errors.push(LoadError::new(
                    &path,
                    format!(
                        "listed in the `extensions` of {}, but there is no such file or folder",
                        settings.display()
                    ),
                ));
                continue;
            }
            match package_extensions(&path) {
                Some(found) => entries.extend(found),
                None => entries.push(Entry {
                    root: if path.is_dir() {
                        path.clone()
                    } else {
                        path.parent().unwrap_or(&path).to_path_buf()
                    },
                    path,
                }),
            }
        }
    }
    if let Some(home) = home {
        for node_modules in [
            ".toolhost/plugins/node_modules",
            ".omp/plugins/node_modules",
        ] {
            for package in packages_in(&home.join(node_modules)) {
                match plugin_entries(&package) {
                    Ok(found) => entries.extend(found),
                    Err(message) => errors.push(LoadError::new(&package, message)),
                }
            }
        }
    }
    (entries, errors)
}

/// The extension folders, in the order their extensions load.
pub(crate) fn extension_folders(home: Option<&Path>, cwd: &Path) -> Vec<PathBuf> {
    let mut folders = vec![cwd.join(".pi/extensions")];
    if let Some(home) = home {
        folders.push(home.join(".pi/agent/extensions"));
    }
    folders.push(cwd.join(".omp/extensions"));
    if let Some(home) = home {
        folders.push(home.join(".omp/agent/extensions"));
        folders.push(home.join(".toolhost/extensions"));
    }
    folders.push(cwd.join(".toolhost/extensions"));
    // Where pi and oh-my-pi looked for hooks and custom tools before extensions replaced them
    // (`hooks/NAME.ts`, `tools/NAME/index.ts`): their published ones are still dropped there.
    for kind in ["hooks", "tools"] {
        folders.push(cwd.join(".pi").join(kind));
        if let Some(home) = home {
            folders.push(home.join(".pi/agent").join(kind));
        }
        folders.push(cwd.join(".omp").join(kind));
        if let Some(home) = home {
            folders.push(home.join(".omp/agent").join(kind));
        }
    }
    folders
}

fn settings_files(home: Option<&Path>, cwd: &Path) -> Vec<PathBuf> {
    let mut files = vec![cwd.join(".pi/settings.json")];
    if let Some(home) = home {
        files.push(home.join(".pi/agent/settings.json"));
    }
    files.retain(|file| file.is_file());
    files
}

fn read_json(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// The strings at `pointer`: one string, or a list of them.
fn listed(value: &Value, pointer: &str) -> Vec<String> {
    match value.pointer(pointer) {
        Some(Value::String(path)) => vec![path.clone()],
        Some(Value::Array(paths)) => paths
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn sorted_children(folder: &Path) -> Vec<PathBuf> {
    let mut children: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    children.sort();
    children
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with('.'))
}

/// pi's rules for one extension folder (one level deep).
fn extensions_in(folder: &Path) -> Vec<Entry> {
    let mut entries = Vec::new();
    for child in sorted_children(folder) {
        if is_hidden(&child) {
            continue;
        }
        if child.is_file() {
            let name = child.to_string_lossy();
            let module = [".ts", ".js", ".mjs", ".mts"]
                .iter()
                .any(|ext| name.ends_with(ext))
                && !name.ends_with(".d.ts");
            if module {
                entries.push(Entry {
                    path: child,
                    root: folder.to_path_buf(),
                });
            }
        } else if child.is_dir() {
            match package_extensions(&child) {
                Some(found) => entries.extend(found),
                None if existing_module(&child.join("index")).is_some() => entries.push(Entry {
                    root: child.clone(),
                    path: child,
                }),
                None => {}
            }
        }
    }
    entries
}

/// The extensions a folder's `package.json` lists (`pi.extensions`, `omp.extensions`), if it
/// lists any.
fn package_extensions(folder: &Path) -> Option<Vec<Entry>> {
    let manifest = read_json(&folder.join("package.json"));
    let mut listed_paths = listed(&manifest, "/pi/extensions");
    listed_paths.extend(listed(&manifest, "/omp/extensions"));
    (!listed_paths.is_empty()).then(|| {
        listed_paths
            .iter()
            .flat_map(|path| expand_listed(folder, path))
            .map(|path| Entry {
                path,
                root: folder.to_path_buf(),
            })
            .collect()
    })
}

/// A listed path, or, when its last part has a `*` (`./extensions/*`, `./src/*.ts`, as pi's
/// package manager allows), the modules and module folders of that folder it matches.
fn expand_listed(folder: &Path, listed: &str) -> Vec<PathBuf> {
    let (parent, pattern) = listed.rsplit_once('/').unwrap_or((".", listed));
    if !pattern.contains('*') {
        return vec![folder.join(listed)];
    }
    sorted_children(&folder.join(parent))
        .into_iter()
        .filter(|child| !is_hidden(child))
        .filter(|child| {
            child
                .file_name()
                .is_some_and(|name| wildcard_matches(pattern, &name.to_string_lossy()))
        })
        .filter(|child| {
            if child.is_dir() {
                existing_module(&child.join("index")).is_some()
            } else {
                let name = child.to_string_lossy();
                [".ts", ".js", ".mjs", ".mts"]
                    .iter()
                    .any(|ext| name.ends_with(ext))
                    && !name.ends_with(".d.ts")
            }
        })
        .collect()
}

/// Whether `name` fits `pattern`, whose `*` stands for any run of characters.
fn wildcard_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (index, part) in parts.iter().enumerate() {
        if index == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The package folders in a `node_modules` (scoped ones too).
fn packages_in(node_modules: &Path) -> Vec<PathBuf> {
    let mut packages = Vec::new();
    for entry in sorted_children(node_modules)
        .into_iter()
        .filter(|p| p.is_dir() && !is_hidden(p))
    {
        let scoped = entry
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('@'));
        if scoped {
            packages.extend(sorted_children(&entry).into_iter().filter(|p| p.is_dir()));
        } else {
            packages.push(entry);
        }
    }
    packages
}

/// What one installed plugin package holds, from its manifest; `Err` says why it holds nothing.
fn plugin_entries(package: &Path) -> Result<Vec<Entry>, String> {
    let manifest = read_json(&package.join("package.json"));
    let mut tools = listed(&manifest, "/toolhost/tools");
    tools.extend(listed(&manifest, "/omp/tools"));
    tools.extend(listed(&manifest, "/pi/tools"));
    if tools.is_empty() && package.join("tools").is_dir() {
        tools.push("tools".to_owned());
    }
    let mut entries: Vec<Entry> = tools
        .into_iter()
        .map(|path| Entry {
            path: package.join(path),
            root: package.to_path_buf(),
        })
        .collect();
    entries.extend(package_extensions(package).unwrap_or_default());
    if let Some(missing) = entries.iter().find(|entry| !entry.path.exists()) {
        return Err(format!(
            "its package.json lists {}, which does not exist",
            missing.path.display()
        ));
    }
    if entries.is_empty() {
        return Err(
            "this installed package yields nothing: its package.json has no `omp`, `pi` or \
             `toolhost` manifest listing tools or extensions, and it has no tools/ folder"
                .to_owned(),
        );
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_listed_path_with_a_star_is_the_modules_of_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("pack");
        std::fs::create_dir_all(package.join("extensions/one")).unwrap();
        std::fs::create_dir_all(package.join("extensions/empty")).unwrap();
        std::fs::write(package.join("extensions/one/index.ts"), "").unwrap();
        std::fs::write(package.join("extensions/two.ts"), "").unwrap();
        std::fs::write(package.join("extensions/notes.md"), "").unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"pi": {"extensions": ["./extensions/*"]}}"#,
        )
        .unwrap();
        let paths: Vec<PathBuf> = package_extensions(&package)
            .unwrap()
            .into_iter()
            .map(|entry| entry.path)
            .collect();
        assert_eq!(
            paths,
            [
                package.join("./extensions/one"),
                package.join("./extensions/two.ts")
            ]
        );
        assert!(wildcard_matches("*.ts", "a.ts"));
        assert!(!wildcard_matches("*.ts", "a.js"));
        assert!(wildcard_matches("pi-*-tool", "pi-x-tool"));
    }

    #[test]
    fn a_plugin_without_a_manifest_or_tools_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join(".omp/plugins/node_modules/empty");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(package.join("package.json"), r#"{"name": "empty"}"#).unwrap();
        let (entries, errors) = pi_entries(Some(dir.path()), &dir.path().join("work"));
        assert!(entries.is_empty());
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].message.contains("yields nothing"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn an_omp_manifest_names_the_tools_folder_and_the_extensions() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join(".omp/plugins/node_modules/@scope/kit");
        std::fs::create_dir_all(package.join("src/tools")).unwrap();
        std::fs::write(package.join("src/tools/index.ts"), "").unwrap();
        std::fs::write(package.join("ext.ts"), "").unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"omp": {"tools": "src/tools", "runtime": "src/tools/runtime.json", "extensions": ["./ext.ts"]}}"#,
        )
        .unwrap();
        let (entries, errors) = pi_entries(Some(dir.path()), &dir.path().join("work"));
        assert!(errors.is_empty(), "{errors:?}");
        let paths: Vec<_> = entries.iter().map(|e| e.path.clone()).collect();
        assert_eq!(paths, [package.join("src/tools"), package.join("./ext.ts")]);
        assert!(entries.iter().all(|e| e.root == package));
    }
}
