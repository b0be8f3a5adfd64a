//! Sign-in on the desktop: the OIDC session (nomos-auth) for the configured provider, its
//! status pushed to the webview, and a notification when the operator must sign in again.

use std::time::UNIX_EPOCH;

use nomos_auth::{AuthConfig, AuthStatus, Session};
use nomos_protocol::{AuthStatusView, IpcError, SignInState};
use tauri::Emitter as _;
use tauri_plugin_notification::NotificationExt as _;

/// The webview listens for this event; its payload is an [`AuthStatusView`].
pub const STATUS_EVENT: &str = "auth-status";

pub fn view(status: &AuthStatus) -> AuthStatusView {
    match status {
        AuthStatus::SignedOut => AuthStatusView {
            state: SignInState::SignedOut,
            who: None,
            expires_at_ms: None,
            detail: None,
        },
        AuthStatus::SignedIn {
            identity,
            expires_at,
        } => AuthStatusView {
            state: SignInState::SignedIn,
            who: identity
                .email
                .clone()
                .or_else(|| identity.name.clone())
                .or_else(|| identity.subject.clone()),
            expires_at_ms: expires_at
                .duration_since(UNIX_EPOCH)
                .ok()
                .and_then(|d| i64::try_from(d.as_millis()).ok()),
            detail: None,
        },
        AuthStatus::Refreshing { last_error, .. } => AuthStatusView {
            state: SignInState::Refreshing,
            who: None,
            expires_at_ms: None,
            detail: last_error.clone(),
        },
        AuthStatus::NeedsSignIn { reason } => AuthStatusView {
            state: SignInState::NeedsSignIn,
            who: None,
            expires_at_ms: None,
            detail: Some(reason.to_string()),
        },
    }
}

pub fn not_configured() -> AuthStatusView {
    AuthStatusView {
        state: SignInState::NotConfigured,
        who: None,
        expires_at_ms: None,
        detail: None,
    }
}

/// Opens the session for the configured provider, resuming a sign-in stored in the keyring.
pub async fn open(
    issuer: &str,
    client_id: &str,
    data_dir: &std::path::Path,
) -> Result<Session, IpcError> {
    Session::open_with_keyring(AuthConfig::new(issuer, client_id, data_dir))
        .await
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))
}

/// Pushes every status change to the webview, and notifies once when sign-in is needed.
pub fn watch<R: tauri::Runtime>(app: tauri::AppHandle<R>, session: &Session) {
    let mut rx = session.subscribe();
    tauri::async_runtime::spawn(async move {
        let mut notified = false;
        loop {
            let status = rx.borrow_and_update().clone();
            let needs = matches!(status, AuthStatus::NeedsSignIn { .. });
            if needs && !notified {
                let _ = app
                    .notification()
                    .builder()
                    .title("Sign in again")
                    .body("Your Nomos session has ended; sign in to continue.")
                    .show();
            }
            notified = needs;
            if let Err(e) = app.emit(STATUS_EVENT, view(&status)) {
                tracing::warn!("auth status not delivered: {e}");
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    });
}
