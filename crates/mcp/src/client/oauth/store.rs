//! Where OAuth tokens for remote servers are kept: one JSON file, `~/.toolhost/mcp-oauth.json`
//! (mode 0600), holding each server's credentials by its URL, with the issuer that minted
//! them (rmcp discards credentials whose issuer no longer matches the server's authorization
//! server). Every load reads the file again, so a token another process refreshed is taken.
//!
//! Refreshes are one at a time across processes: rmcp takes [`CredentialStore::acquire_refresh_guard`]
//! before it loads the credentials to refresh and keeps it through the token request and the
//! save; here that guard is an exclusive `flock` on `mcp-oauth.lock` beside the file. rmcp
//! decides to refresh on a load made before the guard, and refreshes whatever it loads under
//! it; so that a process that waited takes the token another one just saved instead of
//! refreshing again, a load that finds the access token expiring waits for the lock and reads
//! again: a fresh token is answered (no refresh follows), a stale one is answered with the
//! lock kept for the refresh that follows (handed to the guard; let go after
//! [`HANDOVER_LIMIT`] if no refresh comes). Credentials are cleared only when the
//! authorization server rejects the refresh token (`invalid_grant`), never on a network
//! failure.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oauth2::TokenResponse as _;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

/// The file of every server's credentials, under `home`.
pub fn credentials_file(home: &Path) -> PathBuf {
    home.join(".toolhost").join("mcp-oauth.json")
}

/// How long a lock taken by a load waits for the refresh it announces.
pub const HANDOVER_LIMIT: Duration = Duration::from_secs(10);

/// rmcp refreshes when fewer than this many seconds are left (its own rule: 30 s, at most
/// half the token's life).
const REFRESH_BUFFER_SECS: u64 = 30;

/// The credentials of one server (its URL) in the file at `path`.
#[derive(Clone, Debug)]
pub struct FileCredentialStore {
    path: PathBuf,
    server_url: String,
    lock: Arc<Handover>,
}

/// The lock a load took for the refresh that follows, and whether a guard holds it now.
#[derive(Debug, Default)]
struct Handover {
    held: Mutex<Option<(u64, std::fs::File)>>,
    generation: AtomicU64,
    guarded: AtomicBool,
}

impl FileCredentialStore {
    /// The store of `server_url`'s credentials in `path`.
    pub fn new(path: PathBuf, server_url: &str) -> Self {
        Self {
            path,
            server_url: server_url.to_owned(),
            lock: Arc::default(),
        }
    }

    /// The store for `server_url` in the user's file (`$HOME/.toolhost/mcp-oauth.json`);
    /// `None` without a home folder.
    pub fn for_user(server_url: &str) -> Option<Self> {
        let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
        Some(Self::new(credentials_file(Path::new(&home)), server_url))
    }

    /// The stored credentials, read now (blocking).
    pub fn read(&self) -> Result<Option<StoredCredentials>, String> {
        Ok(read_all(&self.path)?.remove(&self.server_url))
    }

    /// Removes this server's credentials (blocking); whether there were any.
    pub fn remove(&self) -> Result<bool, String> {
        let _lock = lock(&self.path)?;
        let mut all = read_all(&self.path)?;
        let removed = all.remove(&self.server_url).is_some();
        write_all(&self.path, &all)?;
        Ok(removed)
    }

    fn change(
        &self,
        update: impl FnOnce(&mut BTreeMap<String, StoredCredentials>),
    ) -> Result<(), String> {
        let mut all = read_all(&self.path)?;
        update(&mut all);
        write_all(&self.path, &all)
    }
}

/// What a server's stored credentials amount to, for `mcp list` and `doctor`.
pub fn describe(credentials: &StoredCredentials) -> String {
    let Some(token) = &credentials.token_response else {
        return "registered, not logged in".to_owned();
    };
    let issuer = credentials.issuer.as_deref().unwrap_or("an unnamed issuer");
    let expiry = match (token.expires_in(), credentials.token_received_at) {
        (Some(lifetime), Some(received)) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs());
            let left = (received + lifetime.as_secs()).saturating_sub(now);
            if left == 0 {
                "its access token expired".to_owned()
            } else {
                format!("its access token expires in {left} s")
            }
        }
        _ => "its access token does not expire".to_owned(),
    };
    let refresh = if token.refresh_token().is_some() {
        ", refreshable"
    } else {
        ""
    };
    format!("logged in with {issuer}; {expiry}{refresh}")
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

/// Whether rmcp would refresh `credentials` now.
fn expiring(credentials: &StoredCredentials) -> bool {
    let Some(token) = &credentials.token_response else {
        return false;
    };
    let (Some(lifetime), Some(received)) = (token.expires_in(), credentials.token_received_at)
    else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let left = lifetime
        .as_secs()
        .saturating_sub(now.saturating_sub(received));
    left < REFRESH_BUFFER_SECS.min(lifetime.as_secs() / 2).max(1)
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let store = self.clone();
        let loaded = blocking(move || store.read()).await?;
        let already_locked = self.lock.guarded.load(Ordering::SeqCst)
            || self
                .lock
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some();
        if already_locked
            || loaded
                .as_ref()
                .is_none_or(|credentials| !expiring(credentials))
        {
            return Ok(loaded);
        }
        // Expiring: wait for a refresh another process may be making, and read again.
        let store = self.clone();
        let (file, again) = blocking(move || {
            let file = lock(&store.path)?;
            Ok((file, store.read()?))
        })
        .await?;
        if again.as_ref().is_some_and(expiring) {
            let generation = self.lock.generation.fetch_add(1, Ordering::SeqCst) + 1;
            *self
                .lock
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some((generation, file));
            let handover = Arc::clone(&self.lock);
            tokio::spawn(async move {
                tokio::time::sleep(HANDOVER_LIMIT).await;
                let mut held = handover.held.lock().unwrap_or_else(PoisonError::into_inner);
                if held.as_ref().is_some_and(|(kept, _)| *kept == generation) {
                    *held = None;
                }
            });
        }
        Ok(again)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || {
            store.change(|all| {
                all.insert(store.server_url.clone(), credentials);
            })
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || {
            store.change(|all| {
                all.remove(&store.server_url);
            })
        })
        .await
    }

    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        // Only the credentials that were refused go: another process may have replaced them.
        let refused = refresh_token(rejected);
        let store = self.clone();
        blocking(move || {
            store.change(|all| {
                if all.get(&store.server_url).and_then(refresh_token) == refused {
                    tracing::warn!(
                        "the authorization server rejected the refresh token of {}: its credentials are cleared",
                        store.server_url
                    );
                    all.remove(&store.server_url);
                }
            })
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let handed = self
            .lock
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let file = match handed {
            Some((_, file)) => file,
            None => {
                let path = self.path.clone();
                blocking(move || lock(&path)).await?
            }
        };
        self.lock.guarded.store(true, Ordering::SeqCst);
        Ok(Some(CredentialRefreshGuard::new(Guard {
            _file: file,
            lock: Arc::clone(&self.lock),
        })))
    }
}

/// The lock held through a refresh; dropping it lets loads wait for the lock again.
struct Guard {
    _file: std::fs::File,
    lock: Arc<Handover>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.lock.guarded.store(false, Ordering::SeqCst);
    }
}

fn refresh_token(credentials: &StoredCredentials) -> Option<String> {
    credentials
        .token_response
        .as_ref()?
        .refresh_token()
        .map(|token| token.secret().clone())
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, AuthError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| store_error(error.to_string()))?
        .map_err(store_error)
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

/// An exclusive lock on the lock file beside `path`, held until the file is dropped.
fn lock(path: &Path) -> Result<std::fs::File, String> {
    let lock_path = path.with_extension("lock");
    if let Some(folder) = lock_path.parent() {
        std::fs::create_dir_all(folder)
            .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|error| format!("cannot open {}: {error}", lock_path.display()))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|error| format!("cannot lock {}: {error}", lock_path.display()))?;
    Ok(file)
}
