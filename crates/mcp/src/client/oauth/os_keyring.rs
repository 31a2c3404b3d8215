//! The OS keyring as a token store, through `keyring-core` and the platform's store: the
//! Secret Service over D-Bus on Linux and the BSDs (GNOME Keyring, KWallet, KeePassXC; it
//! keeps secrets on disk, so a login survives a reboot, which the kernel's keyutils would
//! not), the Keychain on macOS, the Credential Manager on Windows.
//!
//! One item per server: service [`SERVICE`], user the server's URL, the secret the JSON of its
//! credentials (the issuer with them). Every call blocks (the Secret Service store runs its
//! own D-Bus connection): call them off the async threads.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use keyring_core::{CredentialStore, Entry, Error};
use rmcp::transport::auth::StoredCredentials;

/// The service name of every item; the user name is the server's URL. With libsecret's tool:
/// `secret-tool search service toolhost-mcp-oauth`.
pub const SERVICE: &str = "toolhost-mcp-oauth";

/// How long reaching the keyring may take before it counts as absent: a session bus that
/// starts a keyring daemon on demand answers within this, a stuck one must not hold up every
/// connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What this platform's keyring is called in messages.
#[cfg(target_os = "macos")]
pub const KEYRING_NAME: &str = "the macOS Keychain";
/// What this platform's keyring is called in messages.
#[cfg(windows)]
pub const KEYRING_NAME: &str = "the Windows Credential Manager";
/// What this platform's keyring is called in messages.
#[cfg(not(any(target_os = "macos", windows)))]
pub const KEYRING_NAME: &str = "the Secret Service";

/// The keyring of this session, reached once per process: the store, or why there is none.
pub(super) fn connect() -> Result<Arc<CredentialStore>, String> {
    static KEYRING: OnceLock<Result<Arc<CredentialStore>, String>> = OnceLock::new();
    KEYRING
        .get_or_init(|| {
            let (sender, receiver) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = sender.send(platform_store());
            });
            receiver.recv_timeout(CONNECT_TIMEOUT).unwrap_or_else(|_| {
                Err(format!(
                    "{KEYRING_NAME} did not answer within {} s",
                    CONNECT_TIMEOUT.as_secs()
                ))
            })
        })
        .clone()
}

#[cfg(target_os = "macos")]
fn platform_store() -> Result<Arc<CredentialStore>, String> {
    match apple_native_keyring_store::keychain::Store::new() {
        Ok(store) => Ok(store),
        Err(error) => Err(error.to_string()),
    }
}

#[cfg(windows)]
fn platform_store() -> Result<Arc<CredentialStore>, String> {
    match windows_native_keyring_store::Store::new() {
        Ok(store) => Ok(store),
        Err(error) => Err(error.to_string()),
    }
}

/// The Secret Service on the session bus (where zbus looks for it: `DBUS_SESSION_BUS_ADDRESS`,
/// else `$XDG_RUNTIME_DIR/bus`).
#[cfg(not(any(target_os = "macos", windows)))]
fn platform_store() -> Result<Arc<CredentialStore>, String> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none()
        && std::env::var_os("XDG_RUNTIME_DIR")
            .is_none_or(|folder| !std::path::Path::new(&folder).join("bus").exists())
    {
        return Err(
            "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)".to_owned(),
        );
    }
    match zbus_secret_service_keyring_store::Store::new() {
        Ok(store) => Ok(store),
        Err(error) => Err(format!("{KEYRING_NAME} cannot be reached: {error}")),
    }
}

fn entry(keyring: &Arc<CredentialStore>, server_url: &str) -> Result<Entry, String> {
    Entry::new_in_store(keyring, SERVICE, server_url).map_err(|error| failed("open", &error))
}

fn failed(what: &str, error: &Error) -> String {
    format!("cannot {what} the OAuth tokens in {KEYRING_NAME}: {error}")
}

/// The credentials of `server_url` in the keyring.
pub(super) fn read(
    keyring: &Arc<CredentialStore>,
    server_url: &str,
) -> Result<Option<StoredCredentials>, String> {
    match entry(keyring, server_url)?.get_secret() {
        Ok(secret) => serde_json::from_slice(&secret).map(Some).map_err(|error| {
            format!(
                "the OAuth tokens of {server_url} in {KEYRING_NAME} are not credentials: {error}"
            )
        }),
        Err(Error::NoEntry) => Ok(None),
        Err(error) => Err(failed("read", &error)),
    }
}

/// Saves the credentials of `server_url` in the keyring, replacing what it held.
pub(super) fn save(
    keyring: &Arc<CredentialStore>,
    server_url: &str,
    credentials: &StoredCredentials,
) -> Result<(), String> {
    let secret = serde_json::to_vec(credentials).map_err(|error| error.to_string())?;
    entry(keyring, server_url)?
        .set_secret(&secret)
        .map_err(|error| failed("save", &error))
}

/// Removes the credentials of `server_url` from the keyring; whether there were any.
pub(super) fn remove(keyring: &Arc<CredentialStore>, server_url: &str) -> Result<bool, String> {
    match entry(keyring, server_url)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(Error::NoEntry) => Ok(false),
        Err(error) => Err(failed("delete", &error)),
    }
}
