//! Two minutes of API calls with 6-second access tokens (DESIGN.md §15): the gateway must
//! never receive an expired token.
//!
//! Runs in the normal suite. `NOMOS_AUTH_SOAK_SECS` shortens it for a quick local loop.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nomos_auth::AuthStatus;

use crate::harness::{self, ACCESS_TTL, HeadlessBrowser, World, assert_no_token_leaks};

const CALLERS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn soak_two_minutes_of_calls_never_sends_an_expired_token() {
    let secs: u64 = std::env::var("NOMOS_AUTH_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let w = Arc::new(World::new("soak").await);
    let vault = harness::vault(&w.config, "soak").await;
    let session = w.session(Arc::clone(&vault)).await;
    session.login(&HeadlessBrowser).await.unwrap();
    let before = w.provider.stats().await;

    let deadline = Instant::now() + Duration::from_secs(secs);
    let failures = Arc::new(AtomicU64::new(0));
    let made = Arc::new(AtomicU64::new(0));
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let mut tasks = Vec::new();
    for _ in 0..CALLERS {
        let (w, s, failures, made) = (
            Arc::clone(&w),
            session.clone(),
            Arc::clone(&failures),
            Arc::clone(&made),
        );
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                made.fetch_add(1, Ordering::Relaxed);
                match w.call(&s).await {
                    Ok(status) if status == 200 => {}
                    Ok(status) => {
                        failures.fetch_add(1, Ordering::Relaxed);
                        eprintln!("soak: gateway answered {status}");
                    }
                    Err(e) => {
                        failures.fetch_add(1, Ordering::Relaxed);
                        eprintln!("soak: {} {e}", e.code());
                    }
                }
                tokio::time::sleep(Duration::from_millis(fastrand::u64(5..40))).await;
            }
        }));
    }
    // Remember the tokens handed out, to look for them in the logs afterwards.
    {
        let (s, seen) = (session.clone(), Arc::clone(&seen));
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                if let Ok(t) = s.access_token().await {
                    seen.lock().unwrap().insert(t.expose().to_owned());
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }

    let after = w.provider.stats().await;
    let g = &w.gateway.counters;
    let calls = g.calls.load(Ordering::Relaxed);
    let expired = g.expired.load(Ordering::Relaxed);
    let invalid = g.invalid.load(Ordering::Relaxed);
    let ok = g.ok.load(Ordering::Relaxed);
    let refreshes = after.refreshes - before.refreshes;
    println!(
        "SOAK {secs}s, {CALLERS} callers, {ACCESS_TTL}s tokens: {} API calls made, gateway saw {calls} \
         ({ok} ok, {expired} expired, {invalid} invalid), {refreshes} refreshes at the provider \
         ({} by the session, {} failed), {} 401 retries, {} failed calls",
        made.load(Ordering::Relaxed),
        session.stats().refreshes,
        session.stats().failed_refreshes,
        session.stats().unauthorized,
        failures.load(Ordering::Relaxed),
    );
    assert_eq!(expired, 0, "the gateway received expired tokens");
    assert_eq!(invalid, 0);
    assert_eq!(failures.load(Ordering::Relaxed), 0);
    assert_eq!(ok, calls);
    assert!(
        calls >= secs * 50,
        "too few calls to mean anything: {calls}"
    );
    // Refreshing half-way through a 6 s life: about one refresh per 3 s, never a storm.
    let expected = secs / (ACCESS_TTL / 2);
    assert!(
        refreshes + 3 >= expected && refreshes <= expected + 5,
        "{refreshes} refreshes in {secs}s"
    );
    assert_eq!(after.grants_revoked, before.grants_revoked);
    assert!(matches!(session.status(), AuthStatus::SignedIn { .. }));

    let mut known: Vec<String> = seen.lock().unwrap().iter().cloned().collect();
    if let Some(rt) = vault.load().await.unwrap() {
        known.push(rt.expose().to_owned());
    }
    assert!(known.len() as u64 >= refreshes / 2);
    assert_no_token_leaks(&known, &[w.data.path()]);
    session.logout().await.unwrap();
}
