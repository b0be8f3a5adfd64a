//! Where the refresh token lives: the OS keyring, and nowhere else.
//!
//! The real store is chosen explicitly per platform (Secret Service on Linux and the BSDs,
//! Credential Manager on Windows, Keychain on macOS) through `keyring-core`; there is no
//! mock or file fallback. When the platform store cannot be reached, [`KeyringVault::open`]
//! fails with [`AuthError::KeyringUnavailable`] and the app says so.
//!
//! Every keyring call runs on the blocking pool with a timeout: the Secret Service client is
//! synchronous D-Bus (calling it on a runtime worker can stall or panic the runtime), and a
//! locked keyring may wait on an unlock prompt forever.
//!
//! Windows Credential Manager caps a secret at 2560 bytes, and some providers issue long
//! refresh tokens (JWTs). The token is therefore split into chunks of at most
//! [`CHUNK_BYTES`] bytes on every platform, so the layout is the same everywhere and the
//! splitting is tested on Linux: the head entry (`<account>`) holds
//! `nomos1:<count>:<first chunk>`, the others `<account>#1`, `<account>#2`, … hold the rest.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use crate::config::AuthConfig;
use crate::error::AuthError;
use nomos_base::Secret;

/// Largest chunk stored in one keyring entry. A UTF-8 string of this many bytes is at most
/// this many UTF-16 units, well under the 1280 units (2560 bytes) Windows accepts.
pub const CHUNK_BYTES: usize = 1000;

/// Marks the head entry's format, so a foreign or damaged value is reported, not sent to the
/// provider.
const HEAD_PREFIX: &str = "nomos1:";

/// Most chunks a head may announce (a 64 KB token); more means a damaged entry.
const MAX_CHUNKS: usize = 64;

/// Storage for the refresh token.
///
/// Implementations must keep the token only where the operator's OS protects it. The app
/// uses [`KeyringVault`]; [`MemoryVault`] exists for tests and forgets everything on exit.
#[async_trait]
pub trait TokenVault: Send + Sync + fmt::Debug {
    /// The stored refresh token, if any.
    async fn load(&self) -> Result<Option<Secret>, AuthError>;
    /// Replaces the stored refresh token.
    async fn store(&self, token: &Secret) -> Result<(), AuthError>;
    /// Removes the stored refresh token; succeeds when there is none.
    async fn delete(&self) -> Result<(), AuthError>;
}

/// A vault in process memory. For tests (and a caller that explicitly wants a session that
/// ends with the process); never chosen automatically.
#[derive(Default)]
pub struct MemoryVault {
    token: Mutex<Option<Secret>>,
}

impl MemoryVault {
    /// An empty vault.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for MemoryVault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryVault").finish_non_exhaustive()
    }
}

#[async_trait]
impl TokenVault for MemoryVault {
    async fn load(&self) -> Result<Option<Secret>, AuthError> {
        Ok(self.token.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }

    async fn store(&self, token: &Secret) -> Result<(), AuthError> {
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
        Ok(())
    }

    async fn delete(&self) -> Result<(), AuthError> {
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
        Ok(())
    }
}

/// The refresh token in the OS keyring.
#[derive(Clone)]
pub struct KeyringVault {
    inner: Arc<Keyring>,
    timeout: Duration,
}

struct Keyring {
    store: Arc<keyring_core::CredentialStore>,
    service: String,
    account: String,
}

impl fmt::Debug for KeyringVault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyringVault")
            .field("service", &self.inner.service)
            .field("account", &self.inner.account)
            .field("store", &self.inner.store.vendor())
            .finish()
    }
}

impl KeyringVault {
    /// Connects to the platform keyring and checks that it answers.
    ///
    /// Fails with [`AuthError::KeyringUnavailable`] when there is none (on Linux: no D-Bus
    /// session or no Secret Service on it).
    pub async fn open(
        service: impl Into<String>,
        account: impl Into<String>,
        timeout: Duration,
    ) -> Result<Self, AuthError> {
        let (service, account) = (service.into(), account.into());
        let store = blocking(timeout, platform_store).await?;
        let vault = Self {
            inner: Arc::new(Keyring {
                store,
                service,
                account,
            }),
            timeout,
        };
        // Reading a missing entry proves the collection is reachable and unlocked.
        vault.run(|k| k.read(&k.account).map(|_| ())).await?;
        Ok(vault)
    }

    /// The vault for a configuration's keyring service and account.
    pub async fn for_config(config: &AuthConfig) -> Result<Self, AuthError> {
        Self::open(
            config.keyring_service.clone(),
            config.keyring_account(),
            config.keyring_timeout,
        )
        .await
    }

    /// Which store backs this vault (for diagnostics).
    pub fn vendor(&self) -> String {
        self.inner.store.vendor()
    }

    async fn run<T, F>(&self, f: F) -> Result<T, AuthError>
    where
        T: Send + 'static,
        F: FnOnce(&Keyring) -> Result<T, AuthError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        blocking(self.timeout, move || f(&inner)).await
    }
}

#[async_trait]
impl TokenVault for KeyringVault {
    async fn load(&self) -> Result<Option<Secret>, AuthError> {
        self.run(|k| {
            let Some(head) = k.read(&k.account)? else {
                return Ok(None);
            };
            let (count, first) = parse_head(&head)?;
            let mut token = String::with_capacity(count * CHUNK_BYTES);
            token.push_str(first);
            for i in 1..count {
                match k.read(&chunk_account(&k.account, i))? {
                    Some(chunk) => token.push_str(&chunk),
                    None => {
                        return Err(AuthError::KeyringCorrupt {
                            message: format!("chunk {i} of {count} is missing"),
                        });
                    }
                }
            }
            Ok(Some(Secret::new(token)))
        })
        .await
    }

    async fn store(&self, token: &Secret) -> Result<(), AuthError> {
        let chunks: Vec<String> = split_chunks(token.expose())
            .into_iter()
            .map(str::to_owned)
            .collect();
        if chunks.len() > MAX_CHUNKS {
            return Err(AuthError::Keyring {
                message: format!("the refresh token is too long ({} chunks)", chunks.len()),
            });
        }
        self.run(move |k| {
            // Tails first, head last: the head names the count, so a reader never sees a head
            // pointing at chunks that are not written yet. Readers hold the refresh lock anyway.
            for (i, chunk) in chunks.iter().enumerate().skip(1) {
                k.write(&chunk_account(&k.account, i), chunk)?;
            }
            let first = chunks.first().map(String::as_str).unwrap_or_default();
            k.write(
                &k.account,
                &format!("{HEAD_PREFIX}{}:{first}", chunks.len()),
            )?;
            // A shorter token leaves stale tails of the previous one.
            k.delete_tails_from(chunks.len().max(1))
        })
        .await
    }

    async fn delete(&self) -> Result<(), AuthError> {
        self.run(|k| {
            k.delete(&k.account)?;
            k.delete_tails_from(1)
        })
        .await
    }
}

impl Keyring {
    fn entry(&self, account: &str) -> Result<keyring_core::Entry, AuthError> {
        self.store
            .build(&self.service, account, None)
            .map_err(map_keyring_error)
    }

    fn read(&self, account: &str) -> Result<Option<String>, AuthError> {
        match self.entry(account)?.get_password() {
            Ok(v) => Ok(Some(v)),
            Err(keyring_core::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_keyring_error(e)),
        }
    }

    fn write(&self, account: &str, value: &str) -> Result<(), AuthError> {
        self.entry(account)?
            .set_password(value)
            .map_err(map_keyring_error)
    }

    /// Deletes; true when something was there.
    fn delete(&self, account: &str) -> Result<bool, AuthError> {
        match self.entry(account)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring_core::Error::NoEntry) => Ok(false),
            Err(e) => Err(map_keyring_error(e)),
        }
    }

    fn delete_tails_from(&self, first: usize) -> Result<(), AuthError> {
        for i in first..=MAX_CHUNKS {
            if !self.delete(&chunk_account(&self.account, i))? {
                break;
            }
        }
        Ok(())
    }
}

fn chunk_account(account: &str, index: usize) -> String {
    format!("{account}#{index}")
}

/// Splits on character boundaries into pieces of at most [`CHUNK_BYTES`] bytes.
pub(crate) fn split_chunks(token: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = token;
    while rest.len() > CHUNK_BYTES {
        let mut cut = CHUNK_BYTES;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut);
        out.push(head);
        rest = tail;
    }
    out.push(rest);
    out
}

fn parse_head(head: &str) -> Result<(usize, &str), AuthError> {
    let corrupt = |message: &str| AuthError::KeyringCorrupt {
        message: message.to_owned(),
    };
    let rest = head
        .strip_prefix(HEAD_PREFIX)
        .ok_or_else(|| corrupt("the entry was not written by Nomos"))?;
    let (count, first) = rest
        .split_once(':')
        .ok_or_else(|| corrupt("the entry has no chunk count"))?;
    let count: usize = count
        .parse()
        .map_err(|_| corrupt("the chunk count is not a number"))?;
    if count == 0 || count > MAX_CHUNKS {
        return Err(corrupt("the chunk count is out of range"));
    }
    Ok((count, first))
}

fn platform_store() -> Result<Arc<keyring_core::CredentialStore>, AuthError> {
    #[cfg(all(
        unix,
        not(any(target_os = "macos", target_os = "ios", target_os = "android"))
    ))]
    let store = zbus_secret_service_keyring_store::Store::new();
    #[cfg(target_os = "windows")]
    let store = windows_native_keyring_store::Store::new();
    #[cfg(target_os = "macos")]
    let store = apple_native_keyring_store::keychain::Store::new();
    #[cfg(any(
        all(
            unix,
            not(any(target_os = "macos", target_os = "ios", target_os = "android"))
        ),
        target_os = "windows",
        target_os = "macos"
    ))]
    {
        store
            .map(|s| s as Arc<keyring_core::CredentialStore>)
            .map_err(|e| AuthError::KeyringUnavailable {
                message: keyring_error_text(&e),
            })
    }
    #[cfg(not(any(
        all(
            unix,
            not(any(target_os = "macos", target_os = "ios", target_os = "android"))
        ),
        target_os = "windows",
        target_os = "macos"
    )))]
    Err(AuthError::KeyringUnavailable {
        message: "no supported keyring on this platform".into(),
    })
}

fn map_keyring_error(e: keyring_core::Error) -> AuthError {
    use keyring_core::Error as K;
    match &e {
        K::NoStorageAccess(_) => AuthError::KeyringLocked {
            message: keyring_error_text(&e),
        },
        K::NoDefaultStore => AuthError::KeyringUnavailable {
            message: keyring_error_text(&e),
        },
        K::BadEncoding(_) | K::BadDataFormat(..) | K::BadStoreFormat(_) | K::Ambiguous(_) => {
            AuthError::KeyringCorrupt {
                message: keyring_error_text(&e),
            }
        }
        _ => AuthError::Keyring {
            message: keyring_error_text(&e),
        },
    }
}

/// Text for an error without the stored bytes some variants carry.
fn keyring_error_text(e: &keyring_core::Error) -> String {
    use keyring_core::Error as K;
    match e {
        K::BadEncoding(_) => "the stored value is not UTF-8".into(),
        K::BadDataFormat(..) => "the stored value is malformed".into(),
        K::Ambiguous(items) => format!("{} entries match", items.len()),
        other => nomos_base::error_chain(other),
    }
}

/// Runs a keyring call on the blocking pool, bounded by `timeout`. On timeout the thread is
/// left to finish on its own (a blocked D-Bus call cannot be cancelled); the caller moves on.
async fn blocking<T, F>(timeout: Duration, f: F) -> Result<T, AuthError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, AuthError> + Send + 'static,
{
    match tokio::time::timeout(timeout, tokio::task::spawn_blocking(f)).await {
        Err(_) => Err(AuthError::KeyringTimeout { after: timeout }),
        Ok(Err(join)) => Err(AuthError::Keyring {
            message: format!("the keyring call panicked: {join}"),
        }),
        Ok(Ok(result)) => result,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn chunks_respect_the_limit_and_char_boundaries() {
        assert_eq!(split_chunks(""), vec![""]);
        assert_eq!(split_chunks("abc"), vec!["abc"]);
        let long = "x".repeat(2500);
        let parts = split_chunks(&long);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.len() <= CHUNK_BYTES));
        assert_eq!(parts.concat(), long);
        // 'é' is two bytes: a cut never lands inside it.
        let accented = "é".repeat(1500);
        let parts = split_chunks(&accented);
        assert!(
            parts
                .iter()
                .all(|p| p.len() <= CHUNK_BYTES && p.encode_utf16().count() <= 1280)
        );
        assert_eq!(parts.concat(), accented);
    }

    #[test]
    fn head_parsing_rejects_foreign_values() {
        assert_eq!(parse_head("nomos1:2:abc").ok(), Some((2, "abc")));
        assert_eq!(parse_head("nomos1:1:a:b").ok(), Some((1, "a:b")));
        for bad in [
            "abc",
            "nomos1:x:abc",
            "nomos1:0:abc",
            "nomos1:65:a",
            "nomos1:3",
        ] {
            let e = parse_head(bad).unwrap_err();
            assert_eq!(e.code(), "auth.keyring_corrupt", "{bad}");
            assert!(
                !e.to_string().contains("abc"),
                "{bad}: error leaks the value"
            );
        }
    }

    #[tokio::test]
    async fn memory_vault_round_trips() {
        let v = MemoryVault::new();
        assert_eq!(v.load().await.unwrap(), None);
        v.store(&Secret::new("rt-1")).await.unwrap();
        assert_eq!(v.load().await.unwrap(), Some(Secret::new("rt-1")));
        v.delete().await.unwrap();
        assert_eq!(v.load().await.unwrap(), None);
        assert!(!format!("{v:?}").contains("rt-1"));
    }
}
