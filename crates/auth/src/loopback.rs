//! The RFC 8252 loopback redirect listener: `http://127.0.0.1:<ephemeral port>/callback`.
//!
//! Bound to the IPv4 loopback literal (not `localhost`, which may resolve elsewhere or be
//! refused by the provider), on a port the OS picks, for one login only.
//!
//! Any local process can connect to it, so it is not trusted to end the login: a request to
//! `/callback` reaches the login only when it carries this login's `state` (compared in
//! constant time) and a code or an error. Everything else (another path, a wrong or missing
//! `state`, neither code nor error) is answered `400`/`404` and ignored, and the login keeps
//! waiting until the real redirect arrives or it times out. The login checks what it receives
//! again (`iss`, `error`, the code); the page says nothing about success because that check
//! happens after the browser is answered.

use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::{mpsc, oneshot};

use crate::Secret;
use crate::error::AuthError;

const PAGE: &str = "<!doctype html><meta charset=utf-8><title>Nomos sign-in</title>\
<p>Nomos received the sign-in response. You can close this tab and return to Nomos.</p>";

const FOREIGN: &str = "<!doctype html><meta charset=utf-8><title>Nomos sign-in</title>\
<p>This response does not belong to the sign-in in progress; Nomos ignored it.</p>";

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
    expected: Arc<OnceLock<Secret>>,
    _stop: oneshot::Sender<()>,
}

/// `true` when a redirect belongs to the login expecting `state` and can end it.
fn is_ours(expected: &OnceLock<Secret>, params: &HashMap<String, String>) -> bool {
    let Some(expected) = expected.get() else {
        // No login has started yet: nothing can belong to it.
        return false;
    };
    let state_ok = params
        .get("state")
        .is_some_and(|s| expected.constant_time_eq(s));
    let has_outcome =
        params.get("code").is_some_and(|c| !c.is_empty()) || params.contains_key("error");
    state_ok && has_outcome
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
        let expected: Arc<OnceLock<Secret>> = Arc::new(OnceLock::new());
        let expect = Arc::clone(&expected);
        let app = Router::new().route(
            "/callback",
            get(move |uri: Uri| {
                let tx = tx.clone();
                let expect = Arc::clone(&expect);
                async move {
                    let params = uri
                        .query()
                        .map(|q| {
                            openidconnect::url::form_urlencoded::parse(q.as_bytes())
                                .into_owned()
                                .collect()
                        })
                        .unwrap_or_default();
                    if !is_ours(&expect, &params) {
                        tracing::warn!("ignored a sign-in callback that is not this login's");
                        return page(StatusCode::BAD_REQUEST, FOREIGN);
                    }
                    // A full channel means repeated redirects; the login already has one.
                    let _ = tx.try_send(Redirect(params));
                    page(StatusCode::OK, PAGE)
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
            expected,
            _stop: stop,
        })
    }

    /// Sets the `state` a redirect must carry to reach the login (once per listener).
    pub(crate) fn expect_state(&self, state: Secret) {
        let _ = self.expected.set(state);
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

fn page(status: StatusCode, body: &'static str) -> Response {
    let mut r = (status, body).into_response();
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
