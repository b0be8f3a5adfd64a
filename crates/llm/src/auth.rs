//! Where a provider gets its credential from.
//!
//! Only the `auth` crate touches the keyring; it implements [`TokenSource`] for stored API
//! keys and for the OIDC access token of an organisation gateway. This crate ships the two
//! sources that need no keyring: a fixed key and an environment variable.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use nomos_base::Secret;

/// Why a token source could not produce a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// Nothing is stored or set.
    #[error("no credential: {0}")]
    Missing(String),
    /// The operator must sign in again (refresh token revoked, `invalid_grant`).
    #[error("sign in again: {0}")]
    SignInRequired(String),
    /// The store could not be reached (locked keyring, IdP unreachable).
    #[error("credential store unavailable: {0}")]
    Unavailable(String),
}

impl CredentialError {
    /// Stable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Missing(_) => "llm.credentials.missing",
            Self::SignInRequired(_) => "llm.credentials.sign_in_required",
            Self::Unavailable(_) => "llm.credentials.unavailable",
        }
    }

    /// Whether asking again later can succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Missing(_) | Self::SignInRequired(_) => false,
            Self::Unavailable(_) => true,
        }
    }
}

/// Supplies the key or bearer token for each request.
///
/// A provider calls [`token`](TokenSource::token) before every request. On a 401 it calls
/// [`invalidate`](TokenSource::invalidate) with the rejected token, asks for a token once
/// more and retries once; a second 401 becomes [`crate::LlmError::Unauthorized`]. Passing the
/// rejected token lets a single-flight refresher skip the refresh when another caller has
/// already rotated it.
#[async_trait]
pub trait TokenSource: Send + Sync + fmt::Debug {
    /// The current credential.
    async fn token(&self) -> Result<Secret, CredentialError>;

    /// The server rejected `rejected`; drop it so the next [`token`](TokenSource::token)
    /// returns a fresh one if the source can produce one.
    async fn invalidate(&self, rejected: &Secret);
}

/// A fixed key (from settings resolution or a test).
#[derive(Debug, Clone)]
pub struct StaticToken(Secret);

impl StaticToken {
    /// Wraps a key.
    pub fn new(key: impl Into<Secret>) -> Self {
        Self(key.into())
    }
}

#[async_trait]
impl TokenSource for StaticToken {
    async fn token(&self) -> Result<Secret, CredentialError> {
        Ok(self.0.clone())
    }

    async fn invalidate(&self, _rejected: &Secret) {
        // A fixed key cannot be refreshed; the retry will fail the same way and surface 401.
    }
}

/// Read access to environment variables, so configuration is testable without touching the
/// process environment.
pub trait Env: Send + Sync + fmt::Debug {
    /// The variable's value, if set.
    fn var(&self, name: &str) -> Option<String>;
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// A fixed map, for tests and for callers that snapshot the environment once.
#[derive(Clone, Default)]
pub struct MapEnv(pub HashMap<String, String>);

impl MapEnv {
    /// Builds a map from pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl fmt::Debug for MapEnv {
    // Values may be keys: print the names only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.0.keys().collect();
        names.sort();
        f.debug_struct("MapEnv").field("vars", &names).finish()
    }
}

impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

/// Reads the key from an environment variable on every request, so a rotated key exported
/// into a long-running headless session is picked up.
#[derive(Debug, Clone)]
pub struct EnvToken {
    var: String,
    env: Arc<dyn Env>,
}

impl EnvToken {
    /// Reads `var` from `env`.
    pub fn new(var: impl Into<String>, env: Arc<dyn Env>) -> Self {
        Self {
            var: var.into(),
            env,
        }
    }
}

#[async_trait]
impl TokenSource for EnvToken {
    async fn token(&self) -> Result<Secret, CredentialError> {
        match self.env.var(&self.var).map(Secret::from) {
            Some(s) if !s.is_blank() => Ok(s),
            _ => Err(CredentialError::Missing(format!("{} is not set", self.var))),
        }
    }

    async fn invalidate(&self, _rejected: &Secret) {
        // Nothing cached: the next call reads the variable again.
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn env_token_reads_injected_env_and_hides_values() {
        let env = Arc::new(MapEnv::from_pairs([("K", "sk-1"), ("EMPTY", " ")]));
        assert_eq!(
            EnvToken::new("K", env.clone())
                .token()
                .await
                .unwrap()
                .expose(),
            "sk-1"
        );
        assert!(matches!(
            EnvToken::new("EMPTY", env.clone()).token().await,
            Err(CredentialError::Missing(_))
        ));
        assert!(!format!("{env:?}").contains("sk-1"));
    }
}
