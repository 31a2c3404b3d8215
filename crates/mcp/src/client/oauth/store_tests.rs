//! The token store's rules with a keyring (keyring-core's in-memory mock standing in for the
//! OS keyring; the real Secret Service is exercised through the binary in
//! `crates/cli/tests/mcp_oauth_keyring.rs`) and with the file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use rmcp::transport::auth::{CredentialStore as _, StoredCredentials};

use toolhost_config::McpOAuthStore;

use super::{Holder, Place, TokenStore};

const URL: &str = "https://mcp.example.com/mcp";

/// Credentials holding `refresh`, minted by an issuer of the test.
fn credentials(refresh: &str) -> StoredCredentials {
    serde_json::from_value(serde_json::json!({
        "client_id": "toolhost-test",
        "token_response": {
            "access_token": format!("access-{refresh}"),
            "token_type": "bearer",
            "refresh_token": refresh,
            "expires_in": 3600,
        },
        "token_received_at": 4_000_000_000_u64,
        "issuer": "https://auth.example.com",
    }))
    .unwrap()
}

fn refresh_of(stored: Option<StoredCredentials>) -> Option<String> {
    stored.as_ref().and_then(super::refresh_token)
}

struct Stores {
    _folder: tempfile::TempDir,
    file: std::path::PathBuf,
    in_file: TokenStore,
    in_keyring: TokenStore,
    keyring: Arc<keyring_core::CredentialStore>,
}

/// The file store and a keyring store chosen as `chosen`, over the same file.
fn stores_chosen(chosen: McpOAuthStore) -> Stores {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join(".toolhost/mcp-oauth.json");
    let keyring: Arc<keyring_core::CredentialStore> = keyring_core::mock::Store::new().unwrap();
    Stores {
        in_file: TokenStore::in_file(file.clone(), URL),
        in_keyring: TokenStore::new(
            Place::Keyring {
                keyring: Arc::clone(&keyring),
                file: file.clone(),
                chosen,
            },
            URL,
        ),
        keyring,
        file,
        _folder: folder,
    }
}

fn stores() -> Stores {
    stores_chosen(McpOAuthStore::Keyring)
}

/// Makes the keyring's next call on the server's item fail, as a full or locked one does.
fn refuse_next_call(keyring: &Arc<keyring_core::CredentialStore>) {
    let entry =
        keyring_core::Entry::new_in_store(keyring, super::os_keyring::SERVICE, URL).unwrap();
    let item: &keyring_core::mock::Cred = entry.as_any().downcast_ref().unwrap();
    item.set_error(keyring_core::Error::TooLong("secret".to_owned(), 2560));
}

#[tokio::test]
async fn a_keyring_store_takes_a_login_left_in_the_file_and_moves_it_at_the_next_save() {
    let stores = stores();
    stores.in_file.save(credentials("r1")).await.unwrap();
    let (held, holder) = stores.in_keyring.read_with_holder().unwrap().unwrap();
    assert_eq!(
        (refresh_of(Some(held)), holder),
        (Some("r1".to_owned()), Holder::File(stores.file.clone()))
    );

    stores.in_keyring.save(credentials("r2")).await.unwrap();
    let (held, holder) = stores.in_keyring.read_with_holder().unwrap().unwrap();
    assert_eq!(
        (refresh_of(Some(held)), holder),
        (Some("r2".to_owned()), Holder::Keyring)
    );
    assert_eq!(
        refresh_of(stores.in_file.read().unwrap()),
        None,
        "moved out of the file"
    );
}

#[tokio::test]
async fn removing_a_login_clears_the_keyring_and_the_file() {
    let stores = stores();
    stores.in_file.save(credentials("old")).await.unwrap();
    stores.in_keyring.save(credentials("new")).await.unwrap();
    stores.in_file.save(credentials("old")).await.unwrap();
    assert!(stores.in_keyring.remove().unwrap());
    assert!(stores.in_keyring.read().unwrap().is_none());
    assert!(stores.in_file.read().unwrap().is_none());
    assert!(
        !stores.in_keyring.remove().unwrap(),
        "nothing left to remove"
    );
}

#[tokio::test]
async fn a_rejected_refresh_token_clears_only_the_credentials_that_held_it() {
    let (file, keyring) = (stores(), stores());
    for store in [&file.in_file, &keyring.in_keyring] {
        store.save(credentials("r2")).await.unwrap();
        // Another process replaced r1 already: its rejection leaves r2 alone.
        store
            .on_refresh_token_rejected(&credentials("r1"))
            .await
            .unwrap();
        assert_eq!(refresh_of(store.read().unwrap()), Some("r2".to_owned()));
        store
            .on_refresh_token_rejected(&credentials("r2"))
            .await
            .unwrap();
        assert_eq!(refresh_of(store.read().unwrap()), None);
    }
}

#[test]
fn a_file_store_leaves_no_file_behind_when_there_was_nothing_to_remove() {
    let stores = stores();
    assert!(!stores.in_file.remove().unwrap());
    assert!(!stores.file.exists());
}

#[tokio::test]
async fn with_auto_a_save_the_keyring_refuses_goes_to_the_file() {
    let auto = stores_chosen(McpOAuthStore::Auto);
    auto.in_keyring.save(credentials("r1")).await.unwrap();
    refuse_next_call(&auto.keyring);
    auto.in_keyring.save(credentials("r2")).await.unwrap();
    let (held, holder) = auto.in_keyring.read_with_holder().unwrap().unwrap();
    assert_eq!(
        (refresh_of(Some(held)), holder),
        (Some("r2".to_owned()), Holder::File(auto.file.clone())),
        "the older copy in the keyring is gone, the file holds the new one"
    );

    let keyring = stores();
    refuse_next_call(&keyring.keyring);
    let refused = keyring
        .in_keyring
        .save(credentials("r1"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("cannot save"), "{refused}");
    assert!(
        !keyring.file.exists(),
        "`keyring` never falls back to the file"
    );
}
