//! `Session` as the credential of an organisation gateway in `nomos-llm`.
//!
//! The model providers call [`TokenSource::token`] before every request and
//! [`TokenSource::invalidate`] on a 401, then retry once; this maps both onto the session's
//! single-flight refresh, so a 401 costs one refresh however many requests saw it.

use async_trait::async_trait;
use nomos_llm::{CredentialError, TokenSource};

use crate::error::AuthError;
use crate::session::Session;
use nomos_base::Secret;

#[async_trait]
impl TokenSource for Session {
    async fn token(&self) -> Result<Secret, CredentialError> {
        self.access_token().await.map_err(|e| credential_error(&e))
    }

    async fn invalidate(&self, rejected: &Secret) {
        self.on_unauthorized(rejected).await;
    }
}

/// The LLM crate's view of an auth failure: sign in again, nothing configured, or try later.
pub fn credential_error(e: &AuthError) -> CredentialError {
    let message = e.to_string();
    match e {
        AuthError::SignedOut => CredentialError::Missing(message),
        AuthError::SignInRequired { .. } => CredentialError::SignInRequired(message),
        AuthError::Network { .. }
        | AuthError::ProviderUnavailable { .. }
        | AuthError::KeyringUnavailable { .. }
        | AuthError::KeyringLocked { .. }
        | AuthError::KeyringTimeout { .. }
        | AuthError::Keyring { .. }
        | AuthError::KeyringCorrupt { .. }
        | AuthError::Lock { .. }
        | AuthError::LockTimeout { .. } => CredentialError::Unavailable(message),
        AuthError::Config { .. }
        | AuthError::Discovery { .. }
        | AuthError::Provider { .. }
        | AuthError::StateMismatch
        | AuthError::IssuerMismatch { .. }
        | AuthError::IdToken { .. }
        | AuthError::Denied { .. }
        | AuthError::NoRefreshToken
        | AuthError::LoginTimeout { .. }
        | AuthError::Browser { .. }
        | AuthError::Listener { .. } => CredentialError::SignInRequired(message),
    }
}
