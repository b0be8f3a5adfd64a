//! The RFC 8252 loopback redirect listener: `http://127.0.0.1:<ephemeral port>/callback`.
//!
//! Bound to the IPv4 loopback literal (not `localhost`, which may resolve elsewhere or be
//! refused by the provider), on a port the OS picks, for one login only. It hands the query
//! parameters to the login, which checks them; the page it serves says nothing about success
//! because the check happens after the browser is answered.

use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::{mpsc, oneshot};

use crate::error::AuthError;

const PAGE: &str = "<!doctype html><meta charset=utf-8><title>Nomos sign-in</title>\
<p>Nomos received the sign-in response. You can close this tab and return to Nomos.</p>";

/// The redirect's query parameters (they include the authorization code: not printable).
pub(crate) struct Redirect(pub(crate) HashMap<String, String>);

impl fmt::Debug for Redirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<&String> = self.0.keys().collect();
        keys.sort();
        f.debug_struct("Redirect").field("params", &keys).finish()
    }
}

/// A running listener; dropping it stops the server.
pub(crate) struct Loopback {
    port: u16,
    redirects: mpsc::Receiver<Redirect>,
    _stop: oneshot::Sender<()>,
}

impl Loopback {
    /// Binds `127.0.0.1:0` and starts serving `/callback`.
    pub(crate) async fn bind() -> Result<Self, AuthError> {
        let listen_err = |e: std::io::Error| AuthError::Listener {
            message: e.to_string(),
        };
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(listen_err)?;
        let port = listener.local_addr().map_err(listen_err)?.port();
        let (tx, redirects) = mpsc::channel(4);
        let app = Router::new().route(
            "/callback",
            get(move |uri: Uri| {
                let tx = tx.clone();
                async move {
                    let params = uri
                        .query()
                        .map(|q| {
                            openidconnect::url::form_urlencoded::parse(q.as_bytes())
                                .into_owned()
                                .collect()
                        })
                        .unwrap_or_default();
                    // A full channel means a flood of redirects; the login already has one.
                    let _ = tx.try_send(Redirect(params));
                    page()
                }
            }),
        );
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "sign-in redirect listener stopped");
            }
        });
        Ok(Self {
            port,
            redirects,
            _stop: stop,
        })
    }

    /// The redirect URI to register in the authorization request.
    pub(crate) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// The next redirect the browser delivered.
    pub(crate) async fn next(&mut self) -> Option<Redirect> {
        self.redirects.recv().await
    }
}

fn page() -> Response {
    let mut r = (StatusCode::OK, PAGE).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The URL carried a code; nothing about this page should be cached or re-sent.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}
