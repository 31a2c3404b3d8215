//! What `fs.watch` needs of the host: the watches in force (so that a session's end stops
//! them all), and a poll of the watched path through the same gate and file system as every
//! other `node:fs` call. A watch is a poll, not an OS notification: it sees what the
//! workspace rules let the module read, and nothing outside them.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash as _, Hasher as _};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::ScriptHost;
use super::fs::{EntryKind, FileAccess, FileRequest, ScriptFileSystem};

/// How often a watched path is looked at.
pub(crate) const WATCH_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The most files one watch compares: a watch of a larger tree sees its first ones only.
const MAX_WATCHED_FILES: usize = 2_000;

/// The watches in force, each stopped by its token.
#[derive(Debug, Default)]
pub(crate) struct Watches {
    next: AtomicU32,
    stops: Mutex<HashMap<u32, CancellationToken>>,
}

impl Watches {
    fn start(&self) -> (u32, CancellationToken) {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let stop = CancellationToken::new();
        self.stops().insert(id, stop.clone());
        (id, stop)
    }

    fn stop(&self, id: u32) {
        if let Some(stop) = self.stops().remove(&id) {
            stop.cancel();
        }
    }

    fn stop_all(&self) {
        for (_, stop) in self.stops().drain() {
            stop.cancel();
        }
    }

    fn stops(&self) -> std::sync::MutexGuard<'_, HashMap<u32, CancellationToken>> {
        self.stops.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ScriptHost {
    /// A new watch: its number and what stops it.
    pub(crate) fn start_watch(&self) -> (u32, CancellationToken) {
        self.watches.start()
    }

    /// Stops the watch `id` (`watcher.close()`).
    pub(crate) fn stop_watch(&self, id: u32) {
        self.watches.stop(id);
    }

    /// Stops every `fs.watch` of the modules on this host (the session ended).
    pub fn stop_watches(&self) {
        self.watches.stop_all();
    }

    /// Whether `module` may watch `path`: as reading it would be judged.
    pub(crate) async fn authorize_watch(&self, module: &Path, path: &str) -> Result<(), String> {
        let request = FileRequest {
            module: module.to_path_buf(),
            path: path.to_owned(),
            access: FileAccess::Read,
            callers: self.in_flight.of(module),
        };
        self.file_gate.authorize(&request).await
    }

    /// What `path` holds now, for [`changes`].
    pub(crate) async fn watch_snapshot(&self, path: &str, recursive: bool) -> Snapshot {
        let fs = Arc::clone(&self.file_system);
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || snapshot(fs.as_ref(), &path, recursive))
            .await
            .unwrap_or_default()
    }
}

/// The files under a watched path (relative names, `""` for the path itself) and a hash of
/// each one's content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Snapshot(BTreeMap<String, u64>);

fn snapshot(fs: &dyn ScriptFileSystem, path: &str, recursive: bool) -> Snapshot {
    let mut files = BTreeMap::new();
    match fs.list(path) {
        Ok(_) => collect(fs, path, "", recursive, &mut files),
        Err(_) => {
            if let Ok(bytes) = fs.read(path) {
                files.insert(String::new(), hash(&bytes));
            }
        }
    }
    Snapshot(files)
}

fn collect(
    fs: &dyn ScriptFileSystem,
    folder: &str,
    prefix: &str,
    recursive: bool,
    files: &mut BTreeMap<String, u64>,
) {
    let Ok(entries) = fs.list(folder) else {
        return;
    };
    for entry in entries {
        if files.len() >= MAX_WATCHED_FILES {
            return;
        }
        let path = format!("{}/{}", folder.trim_end_matches('/'), entry.name);
        let name = format!("{prefix}{}", entry.name);
        match entry.kind {
            EntryKind::Directory => {
                // A folder's appearance is a change too, whatever it holds.
                files.insert(format!("{name}/"), 0);
                if recursive {
                    collect(fs, &path, &format!("{name}/"), recursive, files);
                }
            }
            _ => {
                let content = fs.read(&path).map_or(0, |bytes| hash(&bytes));
                files.insert(name, content);
            }
        }
    }
}

fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// What changed from `before` to `after`, as Node's `fs.watch` tells it: `rename` for a file
/// that appeared or went, `change` for one whose content changed; with its name relative to
/// the watched folder (a watched file's own name).
pub(crate) fn changes(before: &Snapshot, after: &Snapshot, watched: &str) -> Vec<Value> {
    let own_name = Path::new(watched)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = |relative: &str| {
        let relative = relative.trim_end_matches('/');
        if relative.is_empty() {
            own_name.clone()
        } else {
            relative.to_owned()
        }
    };
    let mut changed = Vec::new();
    for (file, content) in &after.0 {
        match before.0.get(file) {
            None => changed.push(json!({ "eventType": "rename", "filename": name(file) })),
            Some(old) if old != content => {
                changed.push(json!({ "eventType": "change", "filename": name(file) }));
            }
            Some(_) => {}
        }
    }
    for file in before.0.keys().filter(|file| !after.0.contains_key(*file)) {
        changed.push(json!({ "eventType": "rename", "filename": name(file) }));
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot_of(files: &[(&str, u64)]) -> Snapshot {
        Snapshot(
            files
                .iter()
                .map(|(name, content)| ((*name).to_owned(), *content))
                .collect(),
        )
    }

    #[test]
    fn changes_read_as_nodes_rename_and_change_events() {
        let before = snapshot_of(&[("a.txt", 1), ("b.txt", 2)]);
        let after = snapshot_of(&[("a.txt", 9), ("c.txt", 3)]);
        assert_eq!(
            changes(&before, &after, "notes"),
            [
                json!({ "eventType": "change", "filename": "a.txt" }),
                json!({ "eventType": "rename", "filename": "c.txt" }),
                json!({ "eventType": "rename", "filename": "b.txt" }),
            ]
        );
        let file_before = snapshot_of(&[("", 1)]);
        let file_after = snapshot_of(&[("", 2)]);
        assert_eq!(
            changes(&file_before, &file_after, "notes/todo.md"),
            [json!({ "eventType": "change", "filename": "todo.md" })]
        );
        assert!(changes(&file_after, &file_after, "notes/todo.md").is_empty());
    }
}
