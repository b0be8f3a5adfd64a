//! Sign-in for Nomos: OpenID Connect with the OS keyring and proactive, single-flight token
//! refresh.
//!
//! The organisation's gateway (and any API Nomos calls on the operator's behalf) takes the
//! OIDC access token as its bearer. This crate gets that token and keeps it fresh:
//!
//! - [`login`] / [`Session::login`]: discovery, Authorization Code + PKCE (S256) in the
//!   system browser with an RFC 8252 loopback redirect on `127.0.0.1:<ephemeral>`, `state`
//!   and `iss` checked, the ID token verified (signature, issuer, audience, expiry, nonce,
//!   `at_hash`).
//! - The refresh token lives only in the OS keyring ([`KeyringVault`], split into chunks
//!   under Windows' 2560-byte limit); the access token only in memory. No keyring, no
//!   sign-in: [`AuthError::KeyringUnavailable`] says so, nothing falls back to a file.
//! - [`Session::access_token`] before every request; a background task refreshes before
//!   expiry; refresh is single-flight in the process and, through a file lock in the data
//!   directory plus re-reading the keyring under it, across instances (the provider rotates
//!   refresh tokens and revokes the session when an old one is reused).
//! - [`Session::on_unauthorized`] after a 401: one refresh, one retry; a second 401, or
//!   `invalid_grant`, moves the observable [`AuthStatus`] to [`AuthStatus::NeedsSignIn`].
//! - [`Session::logout`] revokes the refresh token where the provider offers revocation.
//!
//! With the default `llm` feature, [`Session`] implements `nomos_llm::TokenSource`.
//!
//! **Architecture invariant:** this is the only crate that touches the keyring, and no token
//! it handles reaches a log, the database or a settings file ([`Secret`] redacts itself).

pub mod api_keys;
mod browser;
mod config;
mod error;
#[cfg(feature = "llm")]
mod llm;
mod lock;
mod loopback;
mod oidc;
mod session;
mod status;
mod vault;

pub use browser::{BrowserOpener, SystemBrowser};
pub use config::{AuthConfig, DEFAULT_SCOPES};
pub use error::AuthError;
#[cfg(feature = "llm")]
pub use llm::credential_error;
/// The workspace's one clock and one secret, re-exported so the auth API stays whole.
pub use nomos_base::{Clock, ManualClock, Secret, SystemClock};
pub use session::{LogoutOutcome, Session, SessionDeps, SessionStats};
pub use status::{AuthStatus, Identity, SignInReason};
pub use vault::{CHUNK_BYTES, KeyringVault, MemoryVault, TokenVault};

/// Signs in with the OS keyring and the given browser, returning the live session.
///
/// The entry point for the desktop shell and the CLI: [`Session::open_with_keyring`] then
/// [`Session::login`]. Use [`SystemBrowser`] for the operator's browser.
pub async fn login(config: AuthConfig, browser: &dyn BrowserOpener) -> Result<Session, AuthError> {
    let session = Session::open_with_keyring(config).await?;
    session.login(browser).await?;
    Ok(session)
}
