//! Typed errors with a stable code and an exhaustive `is_retryable()`.
//!
//! Messages never contain a token: provider error bodies are reduced to the OAuth `error`
//! and `error_description`, and keyring errors that carry the stored bytes are replaced by
//! fixed text.

use std::time::Duration;

use crate::status::SignInReason;

/// Everything that can go wrong in sign-in, refresh, logout and the keyring.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The configuration cannot work (bad issuer URL, plain HTTP to a remote host, …).
    #[error("sign-in is misconfigured: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The provider's discovery document or keys are unusable.
    #[error("the sign-in provider's metadata is unusable: {message}")]
    Discovery {
        /// What is wrong.
        message: String,
    },
    /// The provider (or an API) could not be reached.
    #[error("could not reach the server: {message}")]
    Network {
        /// The transport error.
        message: String,
    },
    /// The provider answered 5xx or 429.
    #[error("the sign-in provider is unavailable (HTTP {status}): {message}")]
    ProviderUnavailable {
        /// HTTP status.
        status: u16,
        /// What it said.
        message: String,
    },
    /// The provider answered with a protocol error other than `invalid_grant`.
    #[error("the sign-in provider refused the request: {message}")]
    Provider {
        /// The OAuth error and description.
        message: String,
    },
    /// The session is over; the operator must sign in again.
    #[error("sign in again: {reason}")]
    SignInRequired {
        /// Why.
        reason: SignInReason,
    },
    /// Nobody is signed in.
    #[error("not signed in")]
    SignedOut,
    /// The browser came back with a `state` this login did not send (CSRF or a stale tab).
    #[error("the sign-in response does not belong to this login (state mismatch)")]
    StateMismatch,
    /// The authorization response names another issuer (RFC 9207 mix-up defence).
    #[error("the sign-in response came from another issuer: expected {expected}, got {got}")]
    IssuerMismatch {
        /// The discovered issuer.
        expected: String,
        /// What the response said (or "nothing").
        got: String,
    },
    /// The ID token failed verification (signature, issuer, audience, expiry, nonce, at_hash).
    #[error("the ID token failed verification: {message}")]
    IdToken {
        /// Which check failed.
        message: String,
    },
    /// The provider redirected back with an error (the operator declined, or policy).
    #[error("sign-in was not completed: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The OAuth error code.
        error: String,
        /// The provider's description.
        description: Option<String>,
    },
    /// The provider issued no refresh token (it needs `offline_access` and consent).
    #[error(
        "the sign-in provider issued no refresh token; the client needs the offline_access scope and consent"
    )]
    NoRefreshToken,
    /// Nobody completed the login in the browser in time.
    #[error("sign-in timed out after {after:?} waiting for the browser")]
    LoginTimeout {
        /// How long we waited.
        after: Duration,
    },
    /// The system browser could not be opened.
    #[error("could not open the browser: {message}")]
    Browser {
        /// Why.
        message: String,
    },
    /// The loopback redirect listener failed.
    #[error("the local sign-in listener failed: {message}")]
    Listener {
        /// Why.
        message: String,
    },
    /// There is no usable OS keyring; the token is never written anywhere else instead.
    #[error(
        "no OS keyring is available ({message}); Nomos keeps the sign-in only in the keyring and will not store it in plain text. On Linux, install and unlock a Secret Service (GNOME Keyring or KWallet)"
    )]
    KeyringUnavailable {
        /// The platform's error.
        message: String,
    },
    /// The keyring is locked or access was denied.
    #[error("the OS keyring is locked or refused access: {message}")]
    KeyringLocked {
        /// The platform's error.
        message: String,
    },
    /// A keyring call did not return in time (a locked keyring can wait on a prompt forever).
    #[error("the OS keyring did not answer within {after:?}")]
    KeyringTimeout {
        /// The limit.
        after: Duration,
    },
    /// Another keyring failure.
    #[error("the OS keyring failed: {message}")]
    Keyring {
        /// The platform's error.
        message: String,
    },
    /// The keyring entry does not hold what Nomos wrote.
    #[error("the keyring entry for the sign-in is damaged: {message}")]
    KeyringCorrupt {
        /// What does not parse (never the stored bytes).
        message: String,
    },
    /// The refresh lock file could not be opened or locked.
    #[error("the refresh lock failed: {message}")]
    Lock {
        /// The I/O error.
        message: String,
    },
    /// Another instance held the refresh lock for too long.
    #[error("another Nomos instance held the refresh lock for more than {after:?}")]
    LockTimeout {
        /// The limit.
        after: Duration,
    },
}

impl AuthError {
    /// Stable code for the UI and the CLI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Config { .. } => "auth.config",
            Self::Discovery { .. } => "auth.discovery",
            Self::Network { .. } => "auth.network",
            Self::ProviderUnavailable { .. } => "auth.provider_unavailable",
            Self::Provider { .. } => "auth.provider",
            Self::SignInRequired { .. } => "auth.sign_in_required",
            Self::SignedOut => "auth.signed_out",
            Self::StateMismatch => "auth.state_mismatch",
            Self::IssuerMismatch { .. } => "auth.issuer_mismatch",
            Self::IdToken { .. } => "auth.id_token",
            Self::Denied { .. } => "auth.denied",
            Self::NoRefreshToken => "auth.no_refresh_token",
            Self::LoginTimeout { .. } => "auth.login_timeout",
            Self::Browser { .. } => "auth.browser",
            Self::Listener { .. } => "auth.listener",
            Self::KeyringUnavailable { .. } => "auth.keyring_unavailable",
            Self::KeyringLocked { .. } => "auth.keyring_locked",
            Self::KeyringTimeout { .. } => "auth.keyring_timeout",
            Self::Keyring { .. } => "auth.keyring",
            Self::KeyringCorrupt { .. } => "auth.keyring_corrupt",
            Self::Lock { .. } => "auth.lock",
            Self::LockTimeout { .. } => "auth.lock_timeout",
        }
    }

    /// Whether the same call can succeed later without the operator doing anything.
    ///
    /// Exhaustive on purpose: a new variant must decide.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Network { .. }
            | Self::ProviderUnavailable { .. }
            | Self::KeyringTimeout { .. }
            | Self::Keyring { .. }
            | Self::LockTimeout { .. } => true,
            Self::Config { .. }
            | Self::Discovery { .. }
            | Self::Provider { .. }
            | Self::SignInRequired { .. }
            | Self::SignedOut
            | Self::StateMismatch
            | Self::IssuerMismatch { .. }
            | Self::IdToken { .. }
            | Self::Denied { .. }
            | Self::NoRefreshToken
            | Self::LoginTimeout { .. }
            | Self::Browser { .. }
            | Self::Listener { .. }
            | Self::KeyringUnavailable { .. }
            | Self::KeyringLocked { .. }
            | Self::KeyringCorrupt { .. }
            | Self::Lock { .. } => false,
        }
    }

    /// True when the operator has to sign in (again) before anything works.
    pub fn needs_sign_in(&self) -> bool {
        matches!(self, Self::SignInRequired { .. } | Self::SignedOut)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_retryability_is_decided() {
        let network = AuthError::Network {
            message: "refused".into(),
        };
        assert_eq!(network.code(), "auth.network");
        assert!(network.is_retryable());
        let revoked = AuthError::SignInRequired {
            reason: SignInReason::Revoked {
                message: "grant revoked".into(),
            },
        };
        assert_eq!(revoked.code(), "auth.sign_in_required");
        assert!(!revoked.is_retryable());
        assert!(revoked.needs_sign_in());
        assert!(revoked.to_string().contains("sign in again"));
        let keyring = AuthError::KeyringUnavailable {
            message: "no D-Bus session".into(),
        };
        assert!(keyring.to_string().contains("plain text"));
        assert!(!keyring.is_retryable());
    }
}
