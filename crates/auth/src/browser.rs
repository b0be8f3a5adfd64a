//! Opening the authorization URL in the operator's browser, behind a trait so tests drive the
//! provider headlessly.

use std::fmt;

use async_trait::async_trait;
use openidconnect::url::Url;

use crate::error::AuthError;

/// Shows the authorization page to the operator.
///
/// [`crate::Session::login`] runs `open` while it waits for the redirect, so an
/// implementation may return as soon as the browser is launched (the real one) or only after
/// it has driven the whole login itself (a headless test driver).
#[async_trait]
pub trait BrowserOpener: Send + Sync + fmt::Debug {
    /// Opens `url`.
    async fn open(&self, url: &Url) -> Result<(), AuthError>;
}

/// The operator's default browser (`xdg-open`, `open`, `start` through the `open` crate).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemBrowser;

#[async_trait]
impl BrowserOpener for SystemBrowser {
    async fn open(&self, url: &Url) -> Result<(), AuthError> {
        let url = url.to_string();
        // `that_detached` spawns the launcher and does not wait for the browser to exit; it
        // still forks and execs, so keep it off the runtime threads.
        tokio::task::spawn_blocking(move || open::that_detached(url))
            .await
            .map_err(|e| AuthError::Browser {
                message: e.to_string(),
            })?
            .map_err(|e| AuthError::Browser {
                message: e.to_string(),
            })
    }
}
