//! Where OAuth tokens for remote servers are kept, as `mcp_oauth_store` chooses ([`choose`]):
//! the OS keyring ([`os_keyring`](super::os_keyring)) or one JSON file,
//! `~/.toolhost/mcp-oauth.json` (mode 0600, [`token_file`](super::token_file)); either holds
//! each server's credentials by its URL, with the issuer that minted them (rmcp discards
//! credentials whose issuer no longer matches the server's authorization server). Every load
//! reads the store again, so a token another process refreshed is taken.
//!
//! Refreshes are one at a time across processes, whichever store holds the tokens: rmcp takes
//! [`CredentialStore::acquire_refresh_guard`] before it loads the credentials to refresh and
//! keeps it through the token request and the save; here that guard is an exclusive `flock` on
//! `~/.toolhost/mcp-oauth.lock` (a file, with the keyring too). rmcp decides to refresh on a
//! load made before the guard, and refreshes whatever it loads under it; so that a process that
//! waited takes the token another one just saved instead of refreshing again, a load that
//! finds the access token expiring waits for the lock and reads again: a fresh token is
//! answered (no refresh follows), a stale one is answered with the lock kept for the refresh
//! that follows (handed to the guard; let go after [`HANDOVER_LIMIT`] if no refresh comes).
//! Credentials are cleared only when the authorization server rejects the refresh token
//! (`invalid_grant`), never on a network failure.

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use keyring_core::CredentialStore as Keyring;
use oauth2::TokenResponse as _;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use toolhost_config::McpOAuthStore;

use super::os_keyring::{self, KEYRING_NAME};
use super::token_file::{self, credentials_file};

/// How long a lock taken by a load waits for the refresh it announces.
pub const HANDOVER_LIMIT: Duration = Duration::from_secs(10);

/// rmcp refreshes when fewer than this many seconds are left (its own rule: 30 s, at most
/// half the token's life).
const REFRESH_BUFFER_SECS: u64 = 30;

/// The `mcp_oauth_store` of this process. One choice for every server, whichever part of
/// the configuration named it (a table, an agent file, a plugin, an editor): the tokens are
/// the user's, as the home folder they sit under is.
static CHOICE: RwLock<McpOAuthStore> = RwLock::new(McpOAuthStore::Auto);

/// Sets where this process keeps OAuth tokens (the configuration's `mcp_oauth_store`); until
/// called, [`McpOAuthStore::Auto`].
pub fn choose(choice: McpOAuthStore) {
    *CHOICE.write().unwrap_or_else(PoisonError::into_inner) = choice;
}

fn chosen() -> McpOAuthStore {
    *CHOICE.read().unwrap_or_else(PoisonError::into_inner)
}

/// Where the tokens of a store go.
#[derive(Clone, Debug)]
enum Place {
    /// The OS keyring. An entry still in the file (a login from before the keyring was used)
    /// is read too, and moved to the keyring when it is next saved. With `auto` (`chosen`),
    /// credentials the keyring refuses to save (the Windows Credential Manager takes at most
    /// 2560 bytes; a locked keyring whose prompt was dismissed) go to the file instead.
    Keyring {
        keyring: Arc<Keyring>,
        file: PathBuf,
        chosen: McpOAuthStore,
    },
    /// The 0600 file alone.
    File(PathBuf),
}

/// Which store holds a server's credentials, for `mcp list` and `doctor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    /// The OS keyring.
    Keyring,
    /// The token file.
    File(PathBuf),
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Keyring => write!(f, "in the OS keyring ({KEYRING_NAME})"),
            Self::File(path) => write!(f, "in {}", path.display()),
        }
    }
}

/// The credentials of one server (its URL), in the store this process chose.
#[derive(Clone, Debug)]
pub struct TokenStore {
    place: Place,
    /// Why `auto` chose the file (no keyring answered), for messages.
    fallback: Option<String>,
    lock_path: PathBuf,
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

impl TokenStore {
    /// The store of `server_url`'s credentials in the file at `path` alone (the lock file
    /// beside it).
    pub fn in_file(path: PathBuf, server_url: &str) -> Self {
        Self::new(Place::File(path), server_url)
    }

    fn new(place: Place, server_url: &str) -> Self {
        let file = match &place {
            Place::Keyring { file, .. } | Place::File(file) => file,
        };
        Self {
            lock_path: file.with_extension("lock"),
            place,
            fallback: None,
            server_url: server_url.to_owned(),
            lock: Arc::default(),
        }
    }

    /// The store for `server_url` that [`choose`] says, under the user's home folder
    /// (`$HOME/.toolhost/`). Blocking: it may reach the keyring (once per process).
    ///
    /// # Errors
    /// There is no home folder, or `keyring` was chosen and no keyring answers.
    pub fn for_user(server_url: &str) -> Result<Self, String> {
        let (place, fallback) = user_place()?;
        let mut store = Self::new(place, server_url);
        store.fallback = fallback;
        Ok(store)
    }

    /// Where this store saves tokens, and why when `auto` fell back to the file.
    pub fn where_kept(&self) -> String {
        place_description(&self.place, self.fallback.as_deref())
    }

    /// The stored credentials, read now (blocking).
    pub fn read(&self) -> Result<Option<StoredCredentials>, String> {
        Ok(self.read_with_holder()?.map(|(credentials, _)| credentials))
    }

    /// The stored credentials and the store holding them, read now (blocking).
    pub fn read_with_holder(&self) -> Result<Option<(StoredCredentials, Holder)>, String> {
        let file = match &self.place {
            Place::Keyring { keyring, file, .. } => {
                if let Some(credentials) = os_keyring::read(keyring, &self.server_url)? {
                    return Ok(Some((credentials, Holder::Keyring)));
                }
                file
            }
            Place::File(file) => file,
        };
        Ok(token_file::read(file, &self.server_url)?
            .map(|credentials| (credentials, Holder::File(file.clone()))))
    }

    /// Removes this server's credentials from every store this one reads (blocking); whether
    /// there were any.
    pub fn remove(&self) -> Result<bool, String> {
        let _lock = lock(&self.lock_path)?;
        self.remove_if(|_| true)
    }

    /// Saves this server's credentials; with the keyring, a copy left in the file goes.
    fn save_now(&self, credentials: StoredCredentials) -> Result<(), String> {
        let (keyring, file, chosen) = match &self.place {
            Place::Keyring {
                keyring,
                file,
                chosen,
            } => (keyring, file, *chosen),
            Place::File(file) => return token_file::save(file, &self.server_url, credentials),
        };
        match os_keyring::save(keyring, &self.server_url, &credentials) {
            Ok(()) => token_file::remove(file, &self.server_url, |_| true).map(|_| ()),
            Err(why) if chosen == McpOAuthStore::Auto => {
                tracing::warn!(
                    "{why}: the OAuth tokens of {} are kept in {} instead",
                    self.server_url,
                    file.display()
                );
                // An older copy in the keyring would be read before the file.
                let _ = os_keyring::remove(keyring, &self.server_url);
                token_file::save(file, &self.server_url, credentials)
            }
            Err(why) => Err(why),
        }
    }

    /// Removes this server's credentials wherever `doomed` says so of them.
    fn remove_if(&self, doomed: impl Fn(&StoredCredentials) -> bool) -> Result<bool, String> {
        let file = match &self.place {
            Place::Keyring { keyring, file, .. } => {
                let in_keyring = match os_keyring::read(keyring, &self.server_url)? {
                    Some(credentials) if doomed(&credentials) => {
                        os_keyring::remove(keyring, &self.server_url)?
                    }
                    _ => false,
                };
                return Ok(token_file::remove(file, &self.server_url, &doomed)? || in_keyring);
            }
            Place::File(file) => file,
        };
        token_file::remove(file, &self.server_url, doomed)
    }
}

/// Where this process keeps the user's tokens, as [`where_kept`](TokenStore::where_kept)
/// says it (for `doctor`). Blocking, as [`TokenStore::for_user`].
///
/// # Errors
/// As [`TokenStore::for_user`].
pub fn where_user_tokens_are_kept() -> Result<String, String> {
    user_place().map(|(place, fallback)| place_description(&place, fallback.as_deref()))
}

fn place_description(place: &Place, fallback: Option<&str>) -> String {
    match (place, fallback) {
        (Place::Keyring { .. }, _) => Holder::Keyring.to_string(),
        (Place::File(path), None) => format!("in {} (mode 0600)", path.display()),
        (Place::File(path), Some(why)) => format!(
            "in {} (mode 0600): no OS keyring answered ({why})",
            path.display()
        ),
    }
}

/// Where the user's tokens go, and why `auto` chose the file when it did.
fn user_place() -> Result<(Place, Option<String>), String> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .ok_or("HOME is not set: there is nowhere to keep the OAuth tokens")?;
    let file = credentials_file(Path::new(&home));
    let choice = chosen();
    if choice == McpOAuthStore::File {
        return Ok((Place::File(file), None));
    }
    match os_keyring::connect() {
        Ok(keyring) => {
            if choice == McpOAuthStore::Auto {
                log_choice_once(&format!("in the OS keyring ({KEYRING_NAME})"));
            }
            let place = Place::Keyring {
                keyring,
                file,
                chosen: choice,
            };
            Ok((place, None))
        }
        Err(why) if choice == McpOAuthStore::Auto => {
            log_choice_once(&format!(
                "in {} (mcp_oauth_store = \"auto\" and no OS keyring answered: {why})",
                file.display()
            ));
            Ok((Place::File(file), Some(why)))
        }
        Err(why) => Err(format!(
            "mcp_oauth_store = \"keyring\", but the OS keyring cannot be used: {why}; start a \
             keyring ({KEYRING_NAME}), or set mcp_oauth_store = \"auto\" or \"file\" to keep the \
             tokens in {}",
            file.display()
        )),
    }
}

/// Says once per process where `auto` keeps the tokens, and why.
fn log_choice_once(place: &str) {
    static LOGGED: std::sync::Once = std::sync::Once::new();
    LOGGED.call_once(|| tracing::info!("OAuth tokens of MCP servers are kept {place}"));
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
impl CredentialStore for TokenStore {
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
            let file = lock(&store.lock_path)?;
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
        blocking(move || store.save_now(credentials)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || store.remove_if(|_| true).map(|_| ())).await
    }

    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        // Only the credentials that were refused go: another process may have replaced them.
        let refused = refresh_token(rejected);
        let store = self.clone();
        blocking(move || {
            if store.remove_if(|held| refresh_token(held) == refused)? {
                tracing::warn!(
                    "the authorization server rejected the refresh token of {}: its credentials are cleared",
                    store.server_url
                );
            }
            Ok(())
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
                let path = self.lock_path.clone();
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

/// An exclusive lock on the lock file `lock_path`, held until the file is dropped.
fn lock(lock_path: &Path) -> Result<std::fs::File, String> {
    if let Some(folder) = lock_path.parent() {
        std::fs::create_dir_all(folder)
            .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(lock_path)
        .map_err(|error| format!("cannot open {}: {error}", lock_path.display()))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|error| format!("cannot lock {}: {error}", lock_path.display()))?;
    Ok(file)
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
