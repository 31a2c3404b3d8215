//! pi's package rules, as its package manager reads a package: the `pi` (or `omp`) manifest's
//! `extensions` — files, folders, `*` patterns and `!` exclusions, relative to the package —
//! else a folder's `index.ts`/`index.js`, else the modules in it; and the `packages` of pi's
//! `settings.json` (`npm:…`, `git:…`, URLs and local paths), found where `pi install` puts
//! them: `.pi/npm/node_modules` and `.pi/git/HOST/PATH` for a project,
//! `~/.pi/agent/git/HOST/PATH` and the global npm folder for the user.

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

pub(crate) fn read_json(path: &Path) -> Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// The strings at `pointer`: one string, or a list of them.
pub(crate) fn listed(value: &Value, pointer: &str) -> Vec<String> {
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

pub(crate) fn sorted_children(folder: &Path) -> Vec<PathBuf> {
    let mut children: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    children.sort();
    children
}

pub(crate) fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with('.'))
}

fn is_module_file(path: &Path) -> bool {
    let name = path.to_string_lossy();
    path.is_file()
        && [".ts", ".js", ".mjs", ".mts"]
            .iter()
            .any(|ext| name.ends_with(ext))
        && !name.ends_with(".d.ts")
}

/// pi's rules for one extension folder (one level deep): each module file, and each sub-folder
/// by [`package_extensions`] or its index.
pub(crate) fn extensions_in(folder: &Path) -> Vec<Entry> {
    let mut entries = Vec::new();
    for child in sorted_children(folder) {
        if is_hidden(&child) || child.file_name().is_some_and(|name| name == "node_modules") {
            continue;
        }
        if is_module_file(&child) {
            entries.push(Entry {
                path: child,
                root: folder.to_path_buf(),
            });
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
/// lists any: a listed file is one, a listed folder is its index or else the modules in it, a
/// `*` in an entry's last part matches names, and an entry starting with `!` takes away what
/// it matches.
pub(crate) fn package_extensions(folder: &Path) -> Option<Vec<Entry>> {
    let manifest = read_json(&folder.join("package.json"));
    let mut listed_paths = listed(&manifest, "/pi/extensions");
    listed_paths.extend(listed(&manifest, "/omp/extensions"));
    if listed_paths.is_empty() {
        return None;
    }
    let (excluded, included): (Vec<&String>, Vec<&String>) =
        listed_paths.iter().partition(|path| path.starts_with('!'));
    let excluded: Vec<PathBuf> = excluded
        .iter()
        .flat_map(|path| expand_listed(folder, &path[1..]))
        .map(|path| normalized(&path))
        .collect();
    let mut entries = Vec::new();
    for path in included.iter().flat_map(|path| expand_listed(folder, path)) {
        if excluded.contains(&normalized(&path)) {
            continue;
        }
        if path.is_dir() && existing_module(&path.join("index")).is_none() {
            entries.extend(
                extensions_in(&path)
                    .into_iter()
                    .filter(|entry| !excluded.contains(&normalized(&entry.path)))
                    .map(|entry| Entry {
                        root: folder.to_path_buf(),
                        ..entry
                    }),
            );
        } else {
            entries.push(Entry {
                path,
                root: folder.to_path_buf(),
            });
        }
    }
    Some(entries)
}

fn normalized(path: &Path) -> PathBuf {
    path.components().collect()
}

/// A listed path, or, when its last part has a `*` (`./extensions/*`, `./src/*.ts`), the
/// modules and module folders of that folder it matches.
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
                is_module_file(child)
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

/// Where a settings file's packages are installed: the project's `.pi` or the user's
/// `~/.pi/agent`.
pub(crate) struct PackageScope<'a> {
    /// The settings file.
    pub settings: &'a Path,
    /// `.pi` or `~/.pi/agent` (`npm/` and `git/` are below it).
    pub base: &'a Path,
    /// Whether it is the project's (npm packages in `.pi/npm`) or the user's (global npm).
    pub project: bool,
}

/// The extensions of the `packages` a settings file lists, and what is wrong with them.
pub(crate) fn settings_packages(scope: &PackageScope<'_>) -> (Vec<Entry>, Vec<LoadError>) {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    let Some(listed_packages) = read_json(scope.settings)
        .get("packages")
        .and_then(Value::as_array)
        .cloned()
    else {
        return (entries, errors);
    };
    for package in &listed_packages {
        let Some(source) = package
            .as_str()
            .or_else(|| package.get("source").and_then(Value::as_str))
        else {
            continue;
        };
        let Some(folder) = installed_at(source, scope) else {
            errors.push(LoadError::new(
                Path::new(source),
                format!(
                    "listed in the `packages` of {}, but not installed where pi installs it \
                     (run `pi install {source}`, or npm install it there)",
                    scope.settings.display()
                ),
            ));
            continue;
        };
        if is_module_file(&folder) {
            entries.push(Entry {
                root: folder.parent().unwrap_or(&folder).to_path_buf(),
                path: folder,
            });
            continue;
        }
        let found = package_extensions(&folder)
            .or_else(|| {
                existing_module(&folder.join("index")).map(|_| {
                    vec![Entry {
                        path: folder.clone(),
                        root: folder.clone(),
                    }]
                })
            })
            .unwrap_or_else(|| {
                extensions_in(&folder.join("extensions"))
                    .into_iter()
                    .map(|entry| Entry {
                        root: folder.clone(),
                        ..entry
                    })
                    .collect()
            });
        entries.extend(found);
    }
    (entries, errors)
}

/// The folder (or file) a package source names, when it is there.
fn installed_at(source: &str, scope: &PackageScope<'_>) -> Option<PathBuf> {
    let found = if let Some(spec) = source.strip_prefix("npm:") {
        let name = match spec.rfind('@') {
            Some(at) if at > 0 => &spec[..at],
            _ => spec,
        };
        if scope.project {
            vec![scope.base.join("npm/node_modules").join(name)]
        } else {
            global_npm_roots()
                .into_iter()
                .map(|root| root.join(name))
                .collect()
        }
    } else if let Some((host, path)) = git_location(source) {
        vec![scope.base.join("git").join(host).join(path)]
    } else {
        let settings_folder = scope.settings.parent().unwrap_or(scope.base);
        vec![settings_folder.join(source)]
    };
    found.into_iter().find(|path| path.exists())
}

/// `git:github.com/user/repo@v1`, `https://github.com/user/repo`, `git@github.com:user/repo`
/// → (`github.com`, `user/repo`).
fn git_location(source: &str) -> Option<(String, String)> {
    let rest = source.strip_prefix("git:").or_else(|| {
        ["https://", "http://", "ssh://", "git://"]
            .iter()
            .find_map(|scheme| source.strip_prefix(scheme))
    })?;
    let rest = rest
        .split_once('@')
        .filter(|(user, _)| !user.contains('/'))
        .map_or(rest, |(_, after)| after);
    let (host, path) = rest.split_once(['/', ':'])?;
    let path = path.split('@').next().unwrap_or(path);
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    Some((host.to_owned(), path.to_owned()))
}

/// Where `npm install -g` puts packages, by the usual prefixes.
fn global_npm_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(prefix) = std::env::var_os("NPM_CONFIG_PREFIX") {
        roots.push(PathBuf::from(prefix).join("lib/node_modules"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(PathBuf::from(&home).join(".npm-global/lib/node_modules"));
    }
    roots.push(PathBuf::from("/usr/local/lib/node_modules"));
    roots.push(PathBuf::from("/usr/lib/node_modules"));
    roots
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
    fn a_listed_folder_is_its_modules_less_the_exclusions() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("pack");
        std::fs::create_dir_all(package.join("extensions")).unwrap();
        for name in ["a.ts", "b.ts", "c.ts"] {
            std::fs::write(package.join("extensions").join(name), "").unwrap();
        }
        std::fs::write(
            package.join("package.json"),
            r#"{"pi": {"extensions": ["./extensions", "!./extensions/b.ts"]}}"#,
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
                package.join("./extensions/a.ts"),
                package.join("./extensions/c.ts")
            ]
        );
    }

    #[test]
    fn git_sources_name_their_host_and_path() {
        for source in [
            "git:github.com/user/repo@v1",
            "https://github.com/user/repo",
            "git:git@github.com:user/repo",
            "ssh://git@github.com/user/repo.git",
        ] {
            assert_eq!(
                git_location(source),
                Some(("github.com".to_owned(), "user/repo".to_owned())),
                "{source}"
            );
        }
        assert_eq!(git_location("npm:thing"), None);
    }
}
