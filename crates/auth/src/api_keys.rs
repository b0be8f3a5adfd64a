//! Model API keys in the OS keyring: one entry per provider host (the llm crate's
//! `ResolvedConfig::keyring_account`), under their own keyring service. Never in a settings
//! file, a log or the database.

use std::time::Duration;

use crate::{AuthError, KeyringVault, Secret, TokenVault as _};

/// The keyring service API keys are filed under (refresh tokens use `nomos`).
pub const API_KEY_SERVICE: &str = "nomos-api-key";

/// A locked or hung keyring must not hang the app (DESIGN.md §9).
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

async fn vault(service: &str, account: &str) -> Result<KeyringVault, AuthError> {
    KeyringVault::open(service, account, KEYRING_TIMEOUT).await
}

/// The stored key for `account`, if any.
pub async fn load_api_key(account: &str) -> Result<Option<Secret>, AuthError> {
    load_api_key_in(API_KEY_SERVICE, account).await
}

/// Stores (or replaces) the key for `account`.
pub async fn store_api_key(account: &str, key: &Secret) -> Result<(), AuthError> {
    store_api_key_in(API_KEY_SERVICE, account, key).await
}

/// Forgets the key for `account`; succeeds when there is none.
pub async fn delete_api_key(account: &str) -> Result<(), AuthError> {
    vault(API_KEY_SERVICE, account).await?.delete().await
}

/// [`load_api_key`] under another keyring service (tests use a throw-away one).
pub async fn load_api_key_in(service: &str, account: &str) -> Result<Option<Secret>, AuthError> {
    vault(service, account).await?.load().await
}

/// [`store_api_key`] under another keyring service (tests use a throw-away one).
pub async fn store_api_key_in(service: &str, account: &str, key: &Secret) -> Result<(), AuthError> {
    if key.expose().trim().is_empty() {
        return Err(AuthError::Keyring {
            message: "an empty API key cannot be stored".to_owned(),
        });
    }
    vault(service, account).await?.store(key).await
}
