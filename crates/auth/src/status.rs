//! What the UI and the CLI show about the sign-in: one observable status.

use std::fmt;
use std::time::SystemTime;

/// Who is signed in, from the verified ID token. Not secret; never contains a token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The `sub` claim (stable per provider), when the provider has sent an ID token.
    pub subject: Option<String>,
    /// The `name` claim, when released.
    pub name: Option<String>,
    /// The `email` claim, when released.
    pub email: Option<String>,
}

/// The sign-in state, published on a watch channel ([`crate::Session::subscribe`]).
///
/// `NeedsSignIn` is the state a UI shows as a banner plus a notification and the CLI as a
/// clear error: API calls fail with [`crate::AuthError::SignInRequired`] instead of quietly
/// returning empty data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthStatus {
    /// No session: never signed in, or signed out.
    SignedOut,
    /// A valid access token is held in memory.
    SignedIn {
        /// Who.
        identity: Identity,
        /// When the current access token expires (wall clock).
        expires_at: SystemTime,
    },
    /// A refresh is in progress or being retried after a transient failure.
    Refreshing {
        /// Who, when known (after a restart it is known only after the first refresh).
        identity: Identity,
        /// Failed attempts so far in this round (0 while the first one runs).
        attempt: u32,
        /// Why the last attempt failed, for a "reconnecting" hint.
        last_error: Option<String>,
    },
    /// The session is over; the operator must sign in again.
    NeedsSignIn {
        /// Why.
        reason: SignInReason,
    },
}

impl AuthStatus {
    /// Stable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::SignedOut => "auth.status.signed_out",
            Self::SignedIn { .. } => "auth.status.signed_in",
            Self::Refreshing { .. } => "auth.status.refreshing",
            Self::NeedsSignIn { .. } => "auth.status.needs_sign_in",
        }
    }

    /// The identity, when the state carries one.
    pub fn identity(&self) -> Option<&Identity> {
        match self {
            Self::SignedIn { identity, .. } | Self::Refreshing { identity, .. } => Some(identity),
            Self::SignedOut | Self::NeedsSignIn { .. } => None,
        }
    }
}

/// Why the operator has to sign in again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInReason {
    /// The provider refused the refresh token (`invalid_grant`): revoked, expired, reused
    /// or forgotten by the provider.
    Revoked {
        /// The provider's description.
        message: String,
    },
    /// An API rejected a token that had just been refreshed because of an earlier 401.
    Unauthorized,
    /// The keyring no longer holds the refresh token (another instance signed out, or the
    /// entry was removed by hand).
    TokenMissing,
    /// The provider answered a refresh with an ID token for a different subject.
    IdentityChanged,
    /// The provider rejected the client itself (`invalid_client`, `unauthorized_client`, …).
    ProviderRejected {
        /// The provider's error and description.
        message: String,
    },
    /// A rotated refresh token could not be saved to the keyring, so the session cannot be
    /// continued safely.
    KeyringWriteFailed {
        /// The keyring's error.
        message: String,
    },
}

impl SignInReason {
    /// Stable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Revoked { .. } => "auth.sign_in.revoked",
            Self::Unauthorized => "auth.sign_in.unauthorized",
            Self::TokenMissing => "auth.sign_in.token_missing",
            Self::IdentityChanged => "auth.sign_in.identity_changed",
            Self::ProviderRejected { .. } => "auth.sign_in.provider_rejected",
            Self::KeyringWriteFailed { .. } => "auth.sign_in.keyring_write_failed",
        }
    }
}

impl fmt::Display for SignInReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Revoked { message } => {
                write!(f, "the sign-in provider ended the session ({message})")
            }
            Self::Unauthorized => f.write_str("the server rejected a freshly refreshed token"),
            Self::TokenMissing => f.write_str("the keyring no longer holds the sign-in"),
            Self::IdentityChanged => {
                f.write_str("the provider returned a different account on refresh")
            }
            Self::ProviderRejected { message } => {
                write!(f, "the sign-in provider rejected this app ({message})")
            }
            Self::KeyringWriteFailed { message } => {
                write!(
                    f,
                    "the renewed sign-in could not be saved to the keyring ({message})"
                )
            }
        }
    }
}
