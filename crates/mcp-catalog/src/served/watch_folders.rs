//! Noticing that slash commands or skills changed on disk: the folders are looked at once a
//! second (they may not exist yet, which a file-system watcher cannot watch), and a change
//! in any file's name, size or modification time finds everything again.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::Path;
use std::sync::Weak;
use std::time::Duration;

use super::WorkspaceCatalog;

/// How often the folders are looked at.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How deep the folders are looked into (commands nest as `a:b:c`, skills hold folders).
const MAX_DEPTH: usize = 8;

/// Polls `catalog`'s folders until it is dropped.
pub(super) fn reload_on_change(catalog: Weak<WorkspaceCatalog>) {
    tokio::spawn(async move {
        let mut last = None;
        loop {
            let Some(strong) = catalog.upgrade() else {
                return;
            };
            let folders = strong.watched_folders();
            drop(strong);
            let Ok(now) = tokio::task::spawn_blocking(move || {
                let mut hasher = DefaultHasher::new();
                for folder in &folders {
                    fingerprint(folder, 0, &mut hasher);
                }
                hasher.finish()
            })
            .await
            else {
                return;
            };
            if last.is_some_and(|last| last != now) {
                let Some(strong) = catalog.upgrade() else {
                    return;
                };
                tracing::info!("slash commands or skills changed on disk: found again");
                strong.rediscover();
            }
            last = Some(now);
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    });
}

fn fingerprint(folder: &Path, depth: usize, hasher: &mut DefaultHasher) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        entry.file_name().hash(hasher);
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        if metadata.is_dir() {
            if depth < MAX_DEPTH {
                fingerprint(&entry.path(), depth + 1, hasher);
            }
        } else {
            metadata.len().hash(hasher);
            metadata.modified().ok().hash(hasher);
        }
    }
}
