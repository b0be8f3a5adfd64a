//! Two app instances (two processes) sharing one keyring entry refresh at the same moment.
//!
//! Each process needs its own access token (access tokens live in memory only), so each
//! refreshes once; the file lock makes the two refreshes run one after the other, the second
//! reading the refresh token the first one stored. The provider must see two refreshes of two
//! different tokens, no reuse, no revoked grant, and both instances stay signed in.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nomos_auth::{KeyringVault, Session, SessionDeps, TokenVault};

use crate::harness::{self, HeadlessBrowser, World, assert_no_token_leaks};

fn unix_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_refreshing_at_once_spend_each_token_once_and_stay_signed_in() {
    let mut w = World::new("two_process").await;
    w.config.background_refresh = false;
    let Some(vault) = harness::keyring(&w.config, "two_process").await else {
        return;
    };
    let vault = Arc::new(vault);
    let session = w.session(vault.clone() as Arc<dyn TokenVault>).await;
    session.login(&HeadlessBrowser).await.unwrap();
    let rt0 = vault.load().await.unwrap().unwrap();
    drop(session);
    let before = w.provider.stats().await;

    // Both start at the same instant and both need a token: both refresh at once.
    let start_at = unix_ms() + 1500;
    let children: Vec<_> = (0..2)
        .map(|i| {
            tokio::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "two_process::instance_child", "--nocapture"])
                .env("NOMOS_AUTH_CHILD", "1")
                .env("NOMOS_AUTH_CHILD_ISSUER", &w.provider.issuer)
                .env("NOMOS_AUTH_CHILD_DATA", w.data.path())
                .env("NOMOS_AUTH_CHILD_SERVICE", &w.config.keyring_service)
                .env("NOMOS_AUTH_CHILD_GATEWAY", &w.gateway.url)
                .env("NOMOS_AUTH_CHILD_START_MS", start_at.to_string())
                .env(
                    "NOMOS_AUTH_TEST_LOG",
                    w.data.path().join(format!("instance-{i}.log")),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .unwrap()
        })
        .collect();
    let mut outputs = Vec::new();
    for child in children {
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("an instance hung")
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "instance failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(stdout);
    }
    for out in &outputs {
        assert!(
            out.contains("INSTANCE status=auth.status.signed_in gateway=200 refreshes=1"),
            "{out}"
        );
    }

    let after = w.provider.stats().await;
    println!(
        "two instances: provider refreshes {}, refresh errors {}, grants revoked {}",
        after.refreshes - before.refreshes,
        after.refresh_errors - before.refresh_errors,
        after.grants_revoked - before.grants_revoked
    );
    assert_eq!(
        after.refreshes - before.refreshes,
        2,
        "one refresh per instance"
    );
    assert_eq!(
        after.refresh_errors, before.refresh_errors,
        "no refresh failed"
    );
    assert_eq!(
        after.grants_revoked, before.grants_revoked,
        "no reuse detected"
    );
    assert_eq!(after.invalid_grants, before.invalid_grants);

    // The session is alive: a third instance refreshes with what the keyring holds now.
    let rt2 = vault.load().await.unwrap().unwrap();
    assert_ne!(rt2, rt0);
    let third = w.session(vault.clone() as Arc<dyn TokenVault>).await;
    let at = third.access_token().await.unwrap();
    assert_eq!(w.gateway.check(at.expose()), Ok("operator".into()));
    let rt3 = vault.load().await.unwrap().unwrap();

    let known: Vec<String> = [&rt0, &rt2, &rt3, &at]
        .iter()
        .map(|t| t.expose().to_owned())
        .collect();
    assert_no_token_leaks(&known, &[w.data.path()]);
    third.logout().await.unwrap();
}

/// One app instance, run as its own process by the test above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instance_child() {
    if std::env::var("NOMOS_AUTH_CHILD").is_err() {
        return;
    }
    harness::init_logging();
    let var = |k: &str| std::env::var(k).unwrap();
    let mut config = harness::config_for(
        &var("NOMOS_AUTH_CHILD_ISSUER"),
        std::path::Path::new(&var("NOMOS_AUTH_CHILD_DATA")),
        &var("NOMOS_AUTH_CHILD_SERVICE"),
    );
    config.background_refresh = false;
    let vault = KeyringVault::for_config(&config).await.unwrap();
    let session = Session::open(config, SessionDeps::new(Arc::new(vault)))
        .await
        .unwrap();
    let start_at: u64 = var("NOMOS_AUTH_CHILD_START_MS").parse().unwrap();
    tokio::time::sleep(Duration::from_millis(start_at.saturating_sub(unix_ms()))).await;

    let token = session.access_token().await.unwrap();
    let status = reqwest::Client::new()
        .get(var("NOMOS_AUTH_CHILD_GATEWAY"))
        .bearer_auth(token.expose())
        .send()
        .await
        .unwrap()
        .status();
    println!(
        "INSTANCE status={} gateway={} refreshes={}",
        session.status().code(),
        status.as_u16(),
        session.stats().refreshes
    );
}
