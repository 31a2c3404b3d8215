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
//!   `pi.extensions`, `omp.hooks` / `pi.hooks`, else a `tools/` folder. A tools folder with an `index.ts` is one module;
//!   otherwise each module in it is one. A package that yields nothing is reported.

use std::path::{Path, PathBuf};

use crate::error::LoadError;
pub(crate) use crate::pi_packages::Entry;
use crate::pi_packages::{
    PackageScope, extensions_in, is_hidden, listed, package_extensions, read_json,
    settings_packages, sorted_children,
};

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
        let (found, wrong) = settings_packages(&PackageScope {
            settings: &settings,
            base,
            project: settings.starts_with(cwd.join(".pi")),
        });
        entries.extend(found);
        errors.extend(wrong);
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
    // oh-my-pi's `hooks` (the same `pi.on(…)` contract as an extension's).
    let mut hooks = listed(&manifest, "/omp/hooks");
    hooks.extend(listed(&manifest, "/pi/hooks"));
    entries.extend(hooks.into_iter().map(|path| Entry {
        path: package.join(path),
        root: package.to_path_buf(),
    }));
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
    fn an_omp_manifest_names_the_tools_folder_the_extensions_and_the_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join(".omp/plugins/node_modules/@scope/kit");
        std::fs::create_dir_all(package.join("src/tools")).unwrap();
        std::fs::write(package.join("src/tools/index.ts"), "").unwrap();
        std::fs::write(package.join("ext.ts"), "").unwrap();
        std::fs::write(package.join("hook.ts"), "").unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"omp": {"tools": "src/tools", "runtime": "src/tools/runtime.json", "extensions": ["./ext.ts"], "hooks": "hook.ts"}}"#,
        )
        .unwrap();
        let (entries, errors) = pi_entries(Some(dir.path()), &dir.path().join("work"));
        assert!(errors.is_empty(), "{errors:?}");
        let paths: Vec<_> = entries.iter().map(|e| e.path.clone()).collect();
        assert_eq!(
            paths,
            [
                package.join("src/tools"),
                package.join("./ext.ts"),
                package.join("hook.ts")
            ]
        );
        assert!(entries.iter().all(|e| e.root == package));
    }
}
