//! The token file, `~/.toolhost/mcp-oauth.json`: every server's credentials by its URL,
//! readable by the user alone (mode 0600) and written whole (a temporary file renamed over
//! it), so that a reader never sees half of it.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::StoredCredentials;

/// The file of every server's credentials, under `home`.
pub fn credentials_file(home: &Path) -> PathBuf {
    home.join(".toolhost").join("mcp-oauth.json")
}

/// The credentials of `server_url` in the file at `path`.
pub(super) fn read(path: &Path, server_url: &str) -> Result<Option<StoredCredentials>, String> {
    Ok(read_all(path)?.remove(server_url))
}

/// Saves the credentials of `server_url`, keeping the other servers'.
pub(super) fn save(
    path: &Path,
    server_url: &str,
    credentials: StoredCredentials,
) -> Result<(), String> {
    let mut all = read_all(path)?;
    all.insert(server_url.to_owned(), credentials);
    write_all(path, &all)
}

/// Removes the credentials of `server_url` when `doomed` says so of them; whether they were
/// removed. A file without them is left as it is (or absent).
pub(super) fn remove(
    path: &Path,
    server_url: &str,
    doomed: impl FnOnce(&StoredCredentials) -> bool,
) -> Result<bool, String> {
    let mut all = read_all(path)?;
    if !all.get(server_url).is_some_and(doomed) {
        return Ok(false);
    }
    all.remove(server_url);
    write_all(path, &all)?;
    Ok(true)
}

fn read_all(path: &Path) -> Result<BTreeMap<String, StoredCredentials>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(BTreeMap::new()),
        Ok(text) => serde_json::from_str(&text)
            .map_err(|error| format!("{} is not a credentials file: {error}", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(error) => Err(format!("cannot read {}: {error}", path.display())),
    }
}

/// Writes the file whole (a temporary file renamed over it), readable by the user alone.
fn write_all(path: &Path, all: &BTreeMap<String, StoredCredentials>) -> Result<(), String> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
    let text = serde_json::to_string_pretty(all).map_err(|error| error.to_string())?;
    let temporary = path.with_extension(format!("json.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot write {}: {error}", path.display())
    })
}
