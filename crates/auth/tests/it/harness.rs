//! Real parts for the auth tests: the npm `oidc-provider` on loopback, a gateway that checks
//! bearer tokens against the provider's keys, a headless browser, the keyring (or a notice),
//! captured logs and the "no token anywhere" check.

use std::collections::HashMap;
use std::fs::File;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use nomos_auth::{
    AuthConfig, AuthError, BrowserOpener, KeyringVault, MemoryVault, Session, SessionDeps,
    TokenVault,
};
use openidconnect::url::Url;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const CLIENT_ID: &str = "nomos-test";
pub const RESOURCE: &str = "urn:nomos:gateway";
/// Access-token lifetime the provider is started with (DESIGN.md §15: 6-second tokens).
pub const ACCESS_TTL: u64 = 6;

fn provider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oidc-provider")
}

/// Runs `npm ci` once when `node_modules` is missing, so a fresh clone works.
fn ensure_node_modules() {
    static DONE: OnceLock<()> = OnceLock::new();
    static RUNNING: Mutex<()> = Mutex::new(());
    let _guard = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    DONE.get_or_init(|| {
        let dir = provider_dir();
        if dir.join("node_modules/oidc-provider/package.json").exists() {
            return;
        }
        eprintln!(
            "installing the test OpenID Provider (npm ci in {})",
            dir.display()
        );
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .expect("npm is needed for the auth tests (Node.js 20+)");
        assert!(status.success(), "npm ci failed in {}", dir.display());
    });
}

/// Counters the provider keeps (see server.mjs).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub struct ProviderStats {
    pub refreshes: u64,
    pub refresh_errors: u64,
    pub invalid_grants: u64,
    pub grants_revoked: u64,
    pub codes_exchanged: u64,
}

/// A running `oidc-provider`; killed on drop.
pub struct Provider {
    child: Option<Child>,
    pub issuer: String,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Provider {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (child, issuer, port) = spawn_provider(dir.path(), 0).await;
        Self {
            child: Some(child),
            issuer,
            port,
            dir,
        }
    }

    /// Stops the provider (its in-memory sessions, grants and tokens are gone).
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Starts it again on the same port with the same signing key.
    pub async fn restart(&mut self) {
        self.stop().await;
        let (child, issuer, _) = spawn_provider(self.dir.path(), self.port).await;
        assert_eq!(issuer, self.issuer);
        self.child = Some(child);
    }

    pub async fn stats(&self) -> ProviderStats {
        reqwest::get(format!("{}/__test/stats", self.issuer))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// RFC 7009 revocation, as an administrator ending the session would.
    pub async fn revoke(&self, token: &str) {
        let r = reqwest::Client::new()
            .post(format!("{}/token/revocation", self.issuer))
            .form(&[
                ("token", token),
                ("token_type_hint", "refresh_token"),
                ("client_id", CLIENT_ID),
            ])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "revocation: {}", r.status());
    }

    /// A raw refresh-token grant, outside the library (for the reuse control test).
    pub async fn raw_refresh(&self, refresh_token: &str) -> Result<String, String> {
        let r = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
                ("client_id", CLIENT_ID),
                ("resource", RESOURCE),
            ])
            .send()
            .await
            .unwrap();
        let ok = r.status().is_success();
        let body: serde_json::Value = r.json().await.unwrap();
        if ok {
            Ok(body["refresh_token"].as_str().unwrap().to_owned())
        } else {
            Err(body["error"].as_str().unwrap_or("?").to_owned())
        }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
    }
}

async fn spawn_provider(dir: &Path, port: u16) -> (Child, String, u16) {
    ensure_node_modules();
    let log = File::options()
        .create(true)
        .append(true)
        .open(dir.join("provider.log"))
        .unwrap();
    let mut child = Command::new("node")
        .arg(provider_dir().join("server.mjs"))
        .args(["--port", &port.to_string()])
        .args(["--access-ttl", &ACCESS_TTL.to_string()])
        .arg("--keys")
        .arg(dir.join("jwks.json"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .expect("node is needed for the auth tests (Node.js 20+)");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the test OpenID Provider did not start within 30 s: {}",
                std::fs::read_to_string(dir.join("provider.log")).unwrap_or_default()
            )
        })
        .unwrap()
        .unwrap_or_else(|| {
            panic!(
                "the test OpenID Provider exited: {}",
                std::fs::read_to_string(dir.join("provider.log")).unwrap_or_default()
            )
        });
    let issuer = line
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("unexpected provider output: {line}"))
        .to_owned();
    let port = Url::parse(&issuer).unwrap().port().unwrap();
    // Keep draining stdout so the pipe never fills.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, issuer, port)
}

/// What the gateway saw.
#[derive(Debug, Default)]
pub struct GatewayCounters {
    pub calls: AtomicU64,
    pub ok: AtomicU64,
    pub expired: AtomicU64,
    pub invalid: AtomicU64,
    pub missing: AtomicU64,
}

struct GatewayState {
    keys: HashMap<String, jsonwebtoken::DecodingKey>,
    issuer: String,
    counters: Arc<GatewayCounters>,
    reject_all: AtomicBool,
}

/// An API on loopback that accepts the provider's JWT access tokens for [`RESOURCE`], checks
/// signature, issuer and audience, and counts expired ones (compared with the wall clock,
/// no leeway) instead of hiding them.
pub struct Gateway {
    pub url: String,
    pub counters: Arc<GatewayCounters>,
    state: Arc<GatewayState>,
}

impl Gateway {
    pub async fn start(provider: &Provider) -> Self {
        let jwks: jsonwebtoken::jwk::JwkSet = reqwest::get(format!("{}/jwks", provider.issuer))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let keys = jwks
            .keys
            .iter()
            .map(|k| {
                (
                    k.common.key_id.clone().unwrap_or_default(),
                    jsonwebtoken::DecodingKey::from_jwk(k).unwrap(),
                )
            })
            .collect();
        let counters = Arc::new(GatewayCounters::default());
        let state = Arc::new(GatewayState {
            keys,
            issuer: provider.issuer.clone(),
            counters: Arc::clone(&counters),
            reject_all: AtomicBool::new(false),
        });
        let app = Router::new()
            .route("/v1/ping", get(ping))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let url = format!("http://{}/v1/ping", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            counters,
            state,
        }
    }

    /// Makes every request fail with 401 (a gateway that no longer trusts the tokens).
    pub fn reject_all(&self, on: bool) {
        self.state.reject_all.store(on, Ordering::SeqCst);
    }

    /// Checks a token the way the gateway does; `Ok(sub)` when it would be accepted.
    pub fn check(&self, token: &str) -> Result<String, &'static str> {
        verify(&self.state, token)
    }
}

#[derive(serde::Deserialize)]
struct AccessClaims {
    sub: String,
    exp: u64,
}

fn verify(state: &GatewayState, token: &str) -> Result<String, &'static str> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| "invalid")?;
    let key = state
        .keys
        .get(header.kid.as_deref().unwrap_or_default())
        .ok_or("invalid")?;
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[RESOURCE]);
    validation.set_issuer(&[state.issuer.as_str()]);
    // Expiry is judged below, so an expired token is counted rather than lumped in with
    // forged ones.
    validation.validate_exp = false;
    validation.leeway = 0;
    let data =
        jsonwebtoken::decode::<AccessClaims>(token, key, &validation).map_err(|_| "invalid")?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    if now.as_secs_f64() >= data.claims.exp as f64 {
        return Err("expired");
    }
    Ok(data.claims.sub)
}

async fn ping(State(state): State<Arc<GatewayState>>, headers: HeaderMap) -> (StatusCode, String) {
    let c = &state.counters;
    c.calls.fetch_add(1, Ordering::Relaxed);
    let Some(token) = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        c.missing.fetch_add(1, Ordering::Relaxed);
        return (StatusCode::UNAUTHORIZED, "missing token".into());
    };
    match verify(&state, token) {
        Ok(_) if state.reject_all.load(Ordering::SeqCst) => {
            (StatusCode::UNAUTHORIZED, "rejected".into())
        }
        Ok(sub) => {
            c.ok.fetch_add(1, Ordering::Relaxed);
            (StatusCode::OK, sub)
        }
        Err(kind) => {
            if kind == "expired" {
                c.expired.fetch_add(1, Ordering::Relaxed);
            } else {
                c.invalid.fetch_add(1, Ordering::Relaxed);
            }
            (StatusCode::UNAUTHORIZED, kind.into())
        }
    }
}

/// Completes the provider's login without a browser: follows the authorization URL with a
/// cookie-keeping HTTP client; the test provider approves login and consent, and the last
/// redirect lands on the loopback listener.
#[derive(Debug, Default)]
pub struct HeadlessBrowser;

#[async_trait]
impl BrowserOpener for HeadlessBrowser {
    async fn open(&self, url: &Url) -> Result<(), AuthError> {
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::limited(20))
            .build()
            .unwrap();
        let response = client
            .get(url.as_str())
            .send()
            .await
            .map_err(|e| AuthError::Browser {
                message: e.to_string(),
            })?;
        let landed = response.url().clone();
        let status = response.status();
        if !status.is_success() || landed.path() != "/callback" {
            let body = response.text().await.unwrap_or_default();
            return Err(AuthError::Browser {
                message: format!("login ended at {} with {status}: {body}", landed.path()),
            });
        }
        Ok(())
    }
}

/// A browser that skips the provider and delivers a crafted redirect to the listener.
pub struct ForgedRedirect {
    /// Builds the query from the real `state`.
    pub query: Box<dyn Fn(&str) -> String + Send + Sync>,
}

impl std::fmt::Debug for ForgedRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ForgedRedirect")
    }
}

#[async_trait]
impl BrowserOpener for ForgedRedirect {
    async fn open(&self, url: &Url) -> Result<(), AuthError> {
        let params: HashMap<String, String> = url.query_pairs().into_owned().collect();
        let redirect = &params["redirect_uri"];
        let target = format!("{redirect}?{}", (self.query)(&params["state"]));
        reqwest::get(target).await.unwrap();
        Ok(())
    }
}

static KEYRING_SEQ: AtomicU64 = AtomicU64::new(0);

/// A keyring service name no other test uses.
pub fn unique_service(test: &str) -> String {
    format!(
        "nomos-test-{}-{}-{test}",
        std::process::id(),
        KEYRING_SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn keyring_required() -> bool {
    std::env::var("NOMOS_REQUIRE_KEYRING").is_ok_and(|v| v == "1")
}

/// The real keyring for `config`, or `None` with a notice when there is none and it is not
/// required. With `NOMOS_REQUIRE_KEYRING=1` its absence fails the test.
pub async fn keyring(config: &AuthConfig, test: &str) -> Option<KeyringVault> {
    match KeyringVault::for_config(config).await {
        Ok(v) => Some(v),
        Err(e) if keyring_required() => panic!(
            "{test}: NOMOS_REQUIRE_KEYRING=1 but no Secret Service is usable: {e}\n\
             run the tests inside crates/auth/tests/with-keyring.sh"
        ),
        Err(e) => {
            eprintln!(
                "NOTICE {test}: no Secret Service ({}); run inside crates/auth/tests/with-keyring.sh \
                 for the keyring path",
                e.code()
            );
            None
        }
    }
}

/// The keyring when there is one (or when required), else an in-memory vault.
pub async fn vault(config: &AuthConfig, test: &str) -> Arc<dyn TokenVault> {
    match keyring(config, test).await {
        Some(v) => Arc::new(v),
        None => {
            eprintln!("NOTICE {test}: using an in-memory vault");
            Arc::new(MemoryVault::new())
        }
    }
}

/// One test's world: provider, gateway, data dir, config.
pub struct World {
    pub provider: Provider,
    pub gateway: Gateway,
    pub data: tempfile::TempDir,
    pub config: AuthConfig,
    pub http: reqwest::Client,
}

impl World {
    pub async fn new(test: &str) -> Self {
        init_logging();
        let provider = Provider::start().await;
        let gateway = Gateway::start(&provider).await;
        let data = tempfile::tempdir().unwrap();
        let config = config_for(&provider.issuer, data.path(), &unique_service(test));
        Self {
            provider,
            gateway,
            data,
            config,
            http: reqwest::Client::new(),
        }
    }

    pub async fn session(&self, vault: Arc<dyn TokenVault>) -> Session {
        Session::open(self.config.clone(), SessionDeps::new(vault))
            .await
            .unwrap()
    }

    /// Calls the gateway through the session (refresh and 401 handling included).
    pub async fn call(&self, session: &Session) -> Result<reqwest::StatusCode, AuthError> {
        let client = self.http.clone();
        let url = self.gateway.url.clone();
        session.send(|| client.get(&url)).await.map(|r| r.status())
    }
}

pub fn config_for(issuer: &str, data_dir: &Path, service: &str) -> AuthConfig {
    let mut c = AuthConfig::new(issuer, CLIENT_ID, data_dir);
    c.scopes.push("gateway".into());
    c.resource = Some(RESOURCE.into());
    c.keyring_service = service.into();
    c.login_timeout = Duration::from_secs(20);
    c.http_timeout = Duration::from_secs(5);
    c.lock_timeout = Duration::from_secs(20);
    c.base_backoff = Duration::from_millis(200);
    c.max_backoff = Duration::from_secs(2);
    c
}

/// Where this process's logs go (debug for everything, trace for nomos_auth).
pub fn log_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| match std::env::var_os("NOMOS_AUTH_TEST_LOG") {
        Some(p) => PathBuf::from(p),
        // In the target directory, one file per test process, kept for reading after a failure.
        None => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nomos-auth-it");
            std::fs::create_dir_all(&dir).unwrap();
            dir.join(format!("test-{}.log", std::process::id()))
        }
    })
    .clone()
}

pub fn init_logging() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        let file = File::options()
            .create(true)
            .append(true)
            .open(log_path())
            .unwrap();
        let writer = Mutex::new(file);
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("debug,nomos_auth=trace"))
            .with_ansi(false)
            .with_writer(writer)
            .try_init();
        tracing::info!("nomos-auth integration tests logging here");
    });
}

/// Fails if any of `tokens` appears in a file under `dirs` or in the captured logs.
/// Also fails on anything shaped like a JWT (the provider's access and ID tokens are JWTs),
/// which catches tokens the test never saw (rotated by a child process). The same places go
/// through the project's secrets scanner too (scripts/scan_secrets.py), which also looks for
/// each token base64-, percent-, JSON-escaped and in UTF-16.
pub fn assert_no_token_leaks(tokens: &[String], dirs: &[&Path]) {
    let mut files = vec![log_path()];
    for dir in dirs {
        collect_files(dir, &mut files);
    }
    scan_with_the_project_scanner(tokens, &files);
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for t in tokens.iter().filter(|t| t.len() >= 16) {
            assert!(
                !text.contains(t.as_str()),
                "a token leaked into {}",
                file.display()
            );
        }
        assert!(
            !text.contains("eyJhbGciOi")
                && !text.contains("eyJ0eXAiOi")
                && !text.contains("eyJraWQiOi"),
            "something JWT-shaped leaked into {}",
            file.display()
        );
    }
}

/// The issued tokens, as a list the scanner reads (kept in a private temporary folder, never
/// printed), checked against `files`; the report names a file and a label only.
fn scan_with_the_project_scanner(tokens: &[String], files: &[PathBuf]) {
    use std::fmt::Write as _;
    let list_dir = tempfile::tempdir().unwrap();
    let list = list_dir.path().join("secrets.tsv");
    let mut text = String::new();
    for (i, t) in tokens.iter().filter(|t| t.len() >= 16).enumerate() {
        let _ = writeln!(text, "issued token {}\t{t}", i + 1);
    }
    if text.is_empty() {
        return;
    }
    std::fs::write(&list, text).unwrap();
    let scanner = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/scan_secrets.py");
    let existing: Vec<&PathBuf> = files.iter().filter(|f| f.exists()).collect();
    if existing.is_empty() {
        return;
    }
    let out = std::process::Command::new("python3")
        .arg(&scanner)
        .arg("--secrets")
        .arg(&list)
        .args(existing)
        .output()
        .expect("python3 runs the secrets scanner");
    assert!(
        out.status.success(),
        "the secrets scanner found an issued token: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_files(&p, out);
        } else {
            out.push(p);
        }
    }
}
