//! The OS keyring: a real Secret Service (run inside `tests/with-keyring.sh`), and a clear
//! refusal when there is none.

use std::process::Command;
use std::time::Duration;

use nomos_auth::{AuthConfig, AuthError, CHUNK_BYTES, KeyringVault, Secret, TokenVault};

use crate::harness::{self, HeadlessBrowser, keyring_required, unique_service};

fn secret_tool_lookup(service: &str, user: &str) -> Option<String> {
    let out = Command::new("secret-tool")
        .args(["lookup", "service", service, "username", user])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test]
async fn keyring_round_trip_splits_long_tokens_under_the_windows_limit() {
    let dir = tempfile::tempdir().unwrap();
    let service = unique_service("keyring");
    let config = harness::config_for("http://127.0.0.1:1", dir.path(), &service);
    let Some(vault) = harness::keyring(&config, "keyring_round_trip").await else {
        return;
    };
    assert!(
        vault.vendor().contains("Secret Service"),
        "{}",
        vault.vendor()
    );
    let account = config.keyring_account();
    assert_eq!(vault.load().await.unwrap(), None);

    // A 2.6 KB token (longer than Windows' 2560-byte cap) with a multi-byte tail.
    let long = Secret::new(format!("{}{}", "r".repeat(2600), "é".repeat(10)));
    vault.store(&long).await.unwrap();
    assert_eq!(vault.load().await.unwrap().as_ref(), Some(&long));
    // Seen by another Secret Service client: three entries, none over the limit.
    if let Some(head) = secret_tool_lookup(&service, &account) {
        assert!(head.starts_with("nomos1:3:"), "head entry format");
        assert!(head.len() <= CHUNK_BYTES + 16);
        for i in 1..3 {
            let chunk = secret_tool_lookup(&service, &format!("{account}#{i}")).unwrap();
            assert!(chunk.len() <= CHUNK_BYTES);
        }
    } else if keyring_required() {
        panic!("secret-tool (libsecret-tools) is needed to inspect the keyring");
    }

    // A shorter token replaces it and leaves no stale chunks behind.
    let short = Secret::new("rt-short-0123456789");
    vault.store(&short).await.unwrap();
    assert_eq!(vault.load().await.unwrap().as_ref(), Some(&short));
    assert_eq!(secret_tool_lookup(&service, &format!("{account}#1")), None);

    // A second handle (another instance) sees the same entry.
    let other = KeyringVault::for_config(&config).await.unwrap();
    assert_eq!(other.load().await.unwrap().as_ref(), Some(&short));

    vault.delete().await.unwrap();
    assert_eq!(vault.load().await.unwrap(), None);
    assert_eq!(secret_tool_lookup(&service, &account), None);
    vault.delete().await.unwrap();
}

#[tokio::test]
async fn damaged_keyring_entry_is_reported_without_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let service = unique_service("damaged");
    let config = harness::config_for("http://127.0.0.1:1", dir.path(), &service);
    let Some(vault) = harness::keyring(&config, "damaged_entry").await else {
        return;
    };
    let account = config.keyring_account();
    let mut child = Command::new("secret-tool")
        .args([
            "store",
            "--label=foreign",
            "service",
            &service,
            "username",
            &account,
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("secret-tool (libsecret-tools) is needed");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"foreign-secret-value")
        .unwrap();
    assert!(child.wait().unwrap().success());
    let e = vault.load().await.unwrap_err();
    assert_eq!(e.code(), "auth.keyring_corrupt");
    assert!(!e.to_string().contains("foreign-secret-value"));
    vault.delete().await.unwrap();
}

/// Re-invoked by [`no_secret_service_is_a_clear_error_not_a_fallback`] with a D-Bus address
/// that leads nowhere.
#[tokio::test]
async fn no_secret_service_child() {
    if std::env::var("NOMOS_AUTH_NO_DBUS_CHILD").is_err() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config: AuthConfig =
        harness::config_for("http://127.0.0.1:1", dir.path(), "nomos-test-none");
    config.keyring_timeout = Duration::from_secs(5);
    let e = KeyringVault::for_config(&config).await.unwrap_err();
    assert_eq!(e.code(), "auth.keyring_unavailable", "{e:?}");
    let e = nomos_auth::login(config, &HeadlessBrowser)
        .await
        .unwrap_err();
    assert!(matches!(e, AuthError::KeyringUnavailable { .. }), "{e:?}");
    println!("KEYRING_UNAVAILABLE: {e}");
    // Nothing was written in its place.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn no_secret_service_is_a_clear_error_not_a_fallback() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "keyring::no_secret_service_child", "--nocapture"])
        .env("NOMOS_AUTH_NO_DBUS_CHILD", "1")
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/nomos-test-bus",
        )
        .env_remove("NOMOS_REQUIRE_KEYRING")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("KEYRING_UNAVAILABLE"), "{stdout}");
    assert!(
        stdout.contains("will not store it in plain text"),
        "{stdout}"
    );
}

#[tokio::test]
async fn api_keys_round_trip_in_the_keyring_and_never_accept_empty() {
    let dir = tempfile::tempdir().unwrap();
    let service = unique_service("apikey");
    let config = harness::config_for("http://127.0.0.1:1", dir.path(), &service);
    if harness::keyring(&config, "api_keys_round_trip")
        .await
        .is_none()
    {
        return;
    }
    let account = "api.example.test";
    use nomos_auth::api_keys::{load_api_key_in, store_api_key_in};
    assert_eq!(load_api_key_in(&service, account).await.unwrap(), None);
    let key = Secret::new("sk-test-0123456789");
    store_api_key_in(&service, account, &key).await.unwrap();
    assert_eq!(
        load_api_key_in(&service, account).await.unwrap().as_ref(),
        Some(&key)
    );
    assert!(
        store_api_key_in(&service, account, &Secret::new("  "))
            .await
            .is_err()
    );
    // Nothing about the key is on disk in the data dir.
    for entry in walk(dir.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("sk-test-0123456789"),
            "{entry:?}"
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
