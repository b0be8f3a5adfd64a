//! Sign-in, refresh, 401 handling, revocation and outages against the real provider.

use std::sync::Arc;
use std::time::Duration;

use nomos_auth::{
    AuthError, AuthStatus, LogoutOutcome, MemoryVault, Secret, SignInReason, TokenVault,
};

use crate::harness::{
    self, ACCESS_TTL, ForgedRedirect, HeadlessBrowser, World, assert_no_token_leaks,
};

fn expose(tokens: &[&Secret]) -> Vec<String> {
    tokens.iter().map(|t| t.expose().to_owned()).collect()
}

/// Waits until the status satisfies `pred`.
async fn wait_for_status(
    rx: &mut tokio::sync::watch::Receiver<AuthStatus>,
    within: Duration,
    pred: impl Fn(&AuthStatus) -> bool,
) -> AuthStatus {
    tokio::time::timeout(within, rx.wait_for(|s| pred(s)))
        .await
        .unwrap_or_else(|_| panic!("status did not change as expected within {within:?}"))
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_refresh_logout_round_trip() {
    let w = World::new("round_trip").await;
    let vault = harness::vault(&w.config, "round_trip").await;
    let session = w.session(Arc::clone(&vault)).await;
    assert_eq!(session.status(), AuthStatus::SignedOut);
    assert!(matches!(
        session.access_token().await,
        Err(AuthError::SignedOut)
    ));
    let mut rx = session.subscribe();

    let identity = session.login(&HeadlessBrowser).await.unwrap();
    assert_eq!(identity.subject.as_deref(), Some("operator"));
    assert_eq!(identity.name.as_deref(), Some("Test Operator"));
    assert_eq!(identity.email.as_deref(), Some("operator@nomos.test"));
    assert!(rx.has_changed().unwrap());
    assert!(matches!(
        &*rx.borrow_and_update(),
        AuthStatus::SignedIn { identity, .. } if identity.subject.as_deref() == Some("operator")
    ));

    let at1 = session.access_token().await.unwrap();
    assert_eq!(w.gateway.check(at1.expose()), Ok("operator".into()));
    let rt1 = vault
        .load()
        .await
        .unwrap()
        .expect("refresh token in the vault");
    assert_ne!(rt1, at1);

    let at2 = session.refresh().await.unwrap();
    assert_ne!(at1, at2);
    let rt2 = vault.load().await.unwrap().unwrap();
    assert_ne!(rt1, rt2, "the rotated refresh token was saved");
    assert_eq!(w.call(&session).await.unwrap(), 200);
    // The first one was rotated away: the provider refuses it.
    assert_eq!(w.provider.stats().await.grants_revoked, 0);

    let outcome = session.logout().await.unwrap();
    assert_eq!(outcome, LogoutOutcome::Revoked);
    assert_eq!(vault.load().await.unwrap(), None);
    assert_eq!(session.status(), AuthStatus::SignedOut);
    assert!(matches!(
        session.access_token().await,
        Err(AuthError::SignedOut)
    ));
    assert_eq!(
        w.provider.raw_refresh(rt2.expose()).await,
        Err("invalid_grant".into()),
        "logout revoked the refresh token at the provider"
    );

    assert_no_token_leaks(&expose(&[&at1, &at2, &rt1, &rt2]), &[w.data.path()]);
}

#[tokio::test]
async fn login_refuses_forged_redirects() {
    let w = World::new("forged").await;
    let vault: Arc<dyn TokenVault> = Arc::new(MemoryVault::new());
    let session = w.session(Arc::clone(&vault)).await;
    let issuer = w.provider.issuer.clone();

    let iss = issuer.clone();
    let wrong_issuer = ForgedRedirect {
        query: Box::new(move |state| {
            let _ = &iss;
            format!("code=abc&state={state}&iss=http%3A%2F%2Fevil.test")
        }),
    };
    let e = session.login(&wrong_issuer).await.unwrap_err();
    assert!(
        matches!(&e, AuthError::IssuerMismatch { got, .. } if got == "http://evil.test"),
        "{e:?}"
    );

    // The provider advertises RFC 9207, so a redirect without `iss` is refused too.
    let no_issuer = ForgedRedirect {
        query: Box::new(|state| format!("code=abc&state={state}")),
    };
    let e = session.login(&no_issuer).await.unwrap_err();
    assert_eq!(e.code(), "auth.issuer_mismatch");

    let iss = issuer.clone();
    let denied = ForgedRedirect {
        query: Box::new(move |state| {
            let iss: String =
                openidconnect::url::form_urlencoded::byte_serialize(iss.as_bytes()).collect();
            format!("error=access_denied&error_description=no&state={state}&iss={iss}")
        }),
    };
    let e = session.login(&denied).await.unwrap_err();
    assert!(
        matches!(&e, AuthError::Denied { error, .. } if error == "access_denied"),
        "{e:?}"
    );

    // A forged code with the right state and issuer reaches the provider, which refuses it.
    let iss = issuer.clone();
    let bad_code = ForgedRedirect {
        query: Box::new(move |state| {
            let iss: String =
                openidconnect::url::form_urlencoded::byte_serialize(iss.as_bytes()).collect();
            format!("code=not-a-code&state={state}&iss={iss}")
        }),
    };
    let e = session.login(&bad_code).await.unwrap_err();
    assert!(e.needs_sign_in() || e.code() == "auth.provider", "{e:?}");

    assert_eq!(session.status(), AuthStatus::SignedOut);
    assert_eq!(vault.load().await.unwrap(), None);
    assert_eq!(w.provider.stats().await.codes_exchanged, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_callers_cause_one_refresh() {
    let mut w = World::new("twenty").await;
    w.config.background_refresh = false;
    let vault = harness::vault(&w.config, "twenty").await;
    let session = w.session(Arc::clone(&vault)).await;
    session.login(&HeadlessBrowser).await.unwrap();
    let first = session.access_token().await.unwrap();
    // Past the refresh point (half of the 6 s lifetime), before expiry.
    tokio::time::sleep(Duration::from_millis(3300)).await;
    let before = w.provider.stats().await;

    let callers: Vec<_> = (0..20)
        .map(|_| {
            let s = session.clone();
            tokio::spawn(async move { s.access_token().await })
        })
        .collect();
    let mut tokens = Vec::new();
    for c in callers {
        tokens.push(c.await.unwrap().unwrap());
    }

    let after = w.provider.stats().await;
    assert_eq!(
        after.refreshes - before.refreshes,
        1,
        "one refresh for 20 callers"
    );
    assert_eq!(session.stats().refreshes, 1);
    assert!(tokens.iter().all(|t| *t == tokens[0]));
    assert_ne!(tokens[0], first);
    assert_eq!(w.gateway.check(tokens[0].expose()), Ok("operator".into()));
    let rt = vault.load().await.unwrap().unwrap();
    assert_no_token_leaks(&expose(&[&first, &tokens[0], &rt]), &[w.data.path()]);
}

#[tokio::test]
async fn a_401_refreshes_once_and_a_second_requires_sign_in() {
    let mut w = World::new("unauthorized").await;
    w.config.background_refresh = false;
    let vault = harness::vault(&w.config, "unauthorized").await;
    let session = w.session(Arc::clone(&vault)).await;
    session.login(&HeadlessBrowser).await.unwrap();
    assert_eq!(w.call(&session).await.unwrap(), 200);

    w.gateway.reject_all(true);
    let before = w.provider.stats().await;
    let e = w.call(&session).await.unwrap_err();
    assert_eq!(
        e,
        AuthError::SignInRequired {
            reason: SignInReason::Unauthorized
        }
    );
    assert_eq!(w.provider.stats().await.refreshes - before.refreshes, 1);
    assert_eq!(
        session.status(),
        AuthStatus::NeedsSignIn {
            reason: SignInReason::Unauthorized
        }
    );
    assert!(session.access_token().await.unwrap_err().needs_sign_in());

    // Signing in again recovers.
    w.gateway.reject_all(false);
    session.login(&HeadlessBrowser).await.unwrap();
    assert_eq!(w.call(&session).await.unwrap(), 200);
    let rt = vault.load().await.unwrap().unwrap();
    assert_no_token_leaks(&expose(&[&rt]), &[w.data.path()]);
}

#[tokio::test]
async fn llm_token_source_refreshes_once_per_rejected_token() {
    use nomos_llm::{CredentialError, TokenSource};

    let mut w = World::new("token_source").await;
    w.config.background_refresh = false;
    let session = w.session(Arc::new(MemoryVault::new())).await;
    session.login(&HeadlessBrowser).await.unwrap();
    let before = w.provider.stats().await;

    let t1 = TokenSource::token(&session).await.unwrap();
    // Five requests saw the same 401.
    for _ in 0..5 {
        session.invalidate(&t1).await;
    }
    let t2 = TokenSource::token(&session).await.unwrap();
    assert_ne!(t1.expose(), t2.expose());
    assert_eq!(w.provider.stats().await.refreshes - before.refreshes, 1);
    // A late report about the old token changes nothing.
    session.invalidate(&t1).await;
    assert_eq!(
        TokenSource::token(&session).await.unwrap().expose(),
        t2.expose()
    );
    // The retry's token is rejected too: sign in again.
    session.invalidate(&t2).await;
    assert!(matches!(
        TokenSource::token(&session).await,
        Err(CredentialError::SignInRequired(_))
    ));
    assert_no_token_leaks(&[t1.expose().into(), t2.expose().into()], &[w.data.path()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoked_session_shows_sign_in_again_without_a_request() {
    let w = World::new("revoked").await;
    let vault = harness::vault(&w.config, "revoked").await;
    let session = w.session(Arc::clone(&vault)).await;
    session.login(&HeadlessBrowser).await.unwrap();
    let at = session.access_token().await.unwrap();
    let rt = vault.load().await.unwrap().unwrap();
    let mut rx = session.subscribe();

    // An administrator revokes the session at the provider.
    w.provider.revoke(rt.expose()).await;

    // The background refresh (at half the 6 s lifetime) finds out on its own.
    let status = wait_for_status(&mut rx, Duration::from_secs(15), |s| {
        matches!(s, AuthStatus::NeedsSignIn { .. })
    })
    .await;
    assert!(
        matches!(&status, AuthStatus::NeedsSignIn { reason: SignInReason::Revoked { message } } if message.contains("invalid_grant")),
        "{status:?}"
    );
    let e = session.access_token().await.unwrap_err();
    assert_eq!(e.code(), "auth.sign_in_required");
    assert!(e.to_string().contains("sign in again"));
    assert_eq!(
        vault.load().await.unwrap(),
        None,
        "the dead token is removed"
    );
    assert_no_token_leaks(&expose(&[&at, &rt]), &[w.data.path()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_is_retried_and_a_forgetful_provider_asks_for_sign_in() {
    let mut w = World::new("outage").await;
    let vault = harness::vault(&w.config, "outage").await;
    let session = w.session(Arc::clone(&vault)).await;
    session.login(&HeadlessBrowser).await.unwrap();
    let at = session.access_token().await.unwrap();
    let rt = vault.load().await.unwrap().unwrap();
    let mut rx = session.subscribe();

    w.provider.stop().await;
    // Past the refresh point: refreshes fail, the still-valid token keeps being served.
    tokio::time::sleep(Duration::from_millis(3400)).await;
    assert_eq!(session.access_token().await.unwrap(), at);
    assert!(session.stats().failed_refreshes >= 1);
    assert!(!matches!(session.status(), AuthStatus::NeedsSignIn { .. }));

    // Past expiry: a retryable error, never an expired token, and still no sign-out.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let e = session.access_token().await.unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert!(
        matches!(
            session.status(),
            AuthStatus::Refreshing {
                last_error: Some(_),
                ..
            }
        ),
        "{:?}",
        session.status()
    );
    assert_eq!(vault.load().await.unwrap().as_ref(), Some(&rt));

    // It comes back having forgotten every session (in-memory adapter).
    w.provider.restart().await;
    let status = wait_for_status(&mut rx, Duration::from_secs(15), |s| {
        matches!(s, AuthStatus::NeedsSignIn { .. })
    })
    .await;
    assert!(
        matches!(
            status,
            AuthStatus::NeedsSignIn {
                reason: SignInReason::Revoked { .. }
            }
        ),
        "{status:?}"
    );
    assert_no_token_leaks(&expose(&[&at, &rt]), &[w.data.path()]);
}

/// The hazard the single-flight refresh exists for, shown without the library: presenting a
/// refresh token a second time revokes the whole session.
#[tokio::test]
async fn reusing_a_rotated_refresh_token_revokes_the_session() {
    let w = World::new("reuse").await;
    let vault = Arc::new(MemoryVault::new());
    let mut config = w.config.clone();
    config.background_refresh = false;
    let session = nomos_auth::Session::open(
        config,
        nomos_auth::SessionDeps::new(vault.clone() as Arc<dyn TokenVault>),
    )
    .await
    .unwrap();
    session.login(&HeadlessBrowser).await.unwrap();
    let rt0 = vault.load().await.unwrap().unwrap();

    let rt1 = w.provider.raw_refresh(rt0.expose()).await.unwrap();
    assert_eq!(
        w.provider.raw_refresh(rt0.expose()).await,
        Err("invalid_grant".into())
    );
    assert_eq!(
        w.provider.raw_refresh(&rt1).await,
        Err("invalid_grant".into()),
        "the reuse revoked the newer token as well"
    );
    assert!(w.provider.stats().await.grants_revoked >= 1);
    assert_no_token_leaks(&[rt0.expose().to_owned(), rt1], &[w.data.path()]);
}

/// A machine that slept through the refresh timer: the next request looks at the (wall)
/// clock, finds the token stale and refreshes before using it.
#[tokio::test]
async fn a_request_after_sleeping_through_the_timer_refreshes_first() {
    let mut w = World::new("suspend").await;
    w.config.background_refresh = false;
    let clock = Arc::new(nomos_auth::ManualClock::new(std::time::SystemTime::now()));
    let deps = nomos_auth::SessionDeps {
        vault: Arc::new(MemoryVault::new()),
        clock: clock.clone(),
        http: None,
    };
    let session = nomos_auth::Session::open(w.config.clone(), deps)
        .await
        .unwrap();
    session.login(&HeadlessBrowser).await.unwrap();
    let before_sleep = session.access_token().await.unwrap();
    assert_eq!(session.access_token().await.unwrap(), before_sleep);

    clock.advance(Duration::from_secs(10));
    // The provider's real clock has not moved: wait out the old token for real too, so
    // only a refreshed token can pass the gateway.
    tokio::time::sleep(Duration::from_secs(ACCESS_TTL)).await;
    let before = w.provider.stats().await.refreshes;
    let after_sleep = session.access_token().await.unwrap();
    assert_ne!(after_sleep, before_sleep);
    assert_eq!(w.provider.stats().await.refreshes - before, 1);
    assert_eq!(w.gateway.check(after_sleep.expose()), Ok("operator".into()));
    assert_eq!(w.gateway.check(before_sleep.expose()), Err("expired"));
    assert_no_token_leaks(&expose(&[&before_sleep, &after_sleep]), &[w.data.path()]);
}

/// What a local process sends to the loopback listener, given the real `state`, and the
/// status it must get back. None of these may end or abort the sign-in.
fn hostile_callbacks(state: &str) -> Vec<(&'static str, String, u16)> {
    let enc = |s: &str| -> String {
        openidconnect::url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
    };
    let mut prefix = state.to_owned();
    prefix.pop();
    let mut flipped = state.to_owned();
    let last = if flipped.pop() == Some('A') { 'B' } else { 'A' };
    flipped.push(last);
    // Case matters: the same letters in the other case are another state.
    let swapped: String = state
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    let swapped = if swapped == state {
        format!("{state}-")
    } else {
        swapped
    };
    vec![
        ("GET", "/callback?code=abc&state=forged".into(), 400),
        ("GET", "/callback?code=abc".into(), 400),
        ("GET", "/callback?code=abc&state=".into(), 400),
        (
            "GET",
            format!("/callback?code=abc&state={}", enc(&prefix)),
            400,
        ),
        (
            "GET",
            format!("/callback?code=abc&state={}", enc(&flipped)),
            400,
        ),
        (
            "GET",
            format!("/callback?code=abc&state={}x", enc(state)),
            400,
        ),
        (
            "GET",
            format!("/callback?code=abc&state={}", enc(&swapped)),
            400,
        ),
        (
            "GET",
            "/callback?error=access_denied&state=forged".into(),
            400,
        ),
        ("GET", "/callback?error=access_denied".into(), 400),
        (
            "GET",
            "/callback?error=server_error&error_description=x&state=nope".into(),
            400,
        ),
        ("GET", "/callback".into(), 400),
        // The right state but neither a code nor an error ends nothing.
        ("GET", format!("/callback?state={}", enc(state)), 400),
        ("GET", format!("/callback?code=&state={}", enc(state)), 400),
        ("GET", "/other?code=abc&state=forged".into(), 404),
        (
            "GET",
            format!("/callbackx?code=abc&state={}", enc(state)),
            404,
        ),
        ("GET", "/".into(), 404),
        (
            "POST",
            format!("/callback?code=abc&state={}", enc(state)),
            405,
        ),
    ]
}

/// Sends the hostile callbacks to the real listener over real HTTP, checks each answer, then
/// (when `then_login`) completes the real sign-in through the provider.
struct HostileThenReal {
    then_login: bool,
}

impl std::fmt::Debug for HostileThenReal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostileThenReal")
    }
}

#[async_trait::async_trait]
impl nomos_auth::BrowserOpener for HostileThenReal {
    async fn open(&self, url: &openidconnect::url::Url) -> Result<(), AuthError> {
        let params: std::collections::HashMap<String, String> =
            url.query_pairs().into_owned().collect();
        let redirect = openidconnect::url::Url::parse(&params["redirect_uri"]).unwrap();
        let origin = format!("http://127.0.0.1:{}", redirect.port().unwrap());
        let client = reqwest::Client::new();
        for (method, path, want) in hostile_callbacks(&params["state"]) {
            let request = match method {
                "POST" => client.post(format!("{origin}{path}")),
                _ => client.get(format!("{origin}{path}")),
            };
            let got = request.send().await.unwrap().status().as_u16();
            assert_eq!(got, want, "{method} {path}");
        }
        if self.then_login {
            HeadlessBrowser.open(url).await
        } else {
            Ok(())
        }
    }
}

/// C4: a local process cannot abort a sign-in through the loopback callback: wrong or
/// missing `state`, other paths, callbacks without a code and foreign `error=` callbacks are
/// answered 400/404 and ignored, and the real redirect that follows completes the sign-in.
#[tokio::test]
async fn c4_foreign_callbacks_neither_abort_nor_complete_the_sign_in() {
    let w = World::new("c4-hostile").await;
    let vault: Arc<dyn TokenVault> = Arc::new(MemoryVault::new());
    let session = w.session(Arc::clone(&vault)).await;
    let identity = session
        .login(&HostileThenReal { then_login: true })
        .await
        .unwrap();
    assert!(identity.subject.is_some());
    assert!(matches!(session.status(), AuthStatus::SignedIn { .. }));
    assert!(vault.load().await.unwrap().is_some());
    assert_eq!(w.provider.stats().await.codes_exchanged, 1);
}

/// C4: when only foreign callbacks arrive, the sign-in waits for its timeout (it is not
/// aborted with a state mismatch by the first one).
#[tokio::test]
async fn c4_only_foreign_callbacks_end_in_the_login_timeout() {
    let mut w = World::new("c4-timeout").await;
    w.config.login_timeout = std::time::Duration::from_secs(2);
    let vault: Arc<dyn TokenVault> = Arc::new(MemoryVault::new());
    let session = w.session(Arc::clone(&vault)).await;
    let e = session
        .login(&HostileThenReal { then_login: false })
        .await
        .unwrap_err();
    assert_eq!(e.code(), "auth.login_timeout", "{e:?}");
    let e = session
        .login(&ForgedRedirect {
            query: Box::new(|_| "code=abc&state=forged".into()),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), "auth.login_timeout", "{e:?}");
    assert_eq!(vault.load().await.unwrap(), None);
    assert_eq!(w.provider.stats().await.codes_exchanged, 0);
}
