//! The signed-in session: tokens, proactive single-flight refresh, and the observable status.
//!
//! ## Refresh rules
//!
//! - The access token lives only in memory; the refresh token only in the vault (the OS
//!   keyring). A refresh reads the refresh token from the vault each time, under the
//!   cross-instance file lock, so an instance always spends the token the last refresh
//!   stored, whichever instance did it; the provider revokes the whole session when an old
//!   one is presented again.
//! - Single-flight inside the process: one async gate; callers that waited on it and find a
//!   newer token than the one they saw return that token instead of refreshing again.
//! - Proactive: a background task refreshes at `expires_at - margin` (margin = the configured
//!   one, at most half the lifetime), and every [`Session::access_token`] checks the wall
//!   clock too, which covers a machine that slept through the timer.
//! - Transient failures (network, 5xx, keyring timeout) back off exponentially with jitter;
//!   meanwhile a still-valid token keeps being handed out. `invalid_grant` ends the session:
//!   the status becomes [`AuthStatus::NeedsSignIn`] and every call fails with
//!   [`AuthError::SignInRequired`].
//! - A 401 from an API drops the rejected token so the next request refreshes once; a 401 on
//!   the token minted for that retry ends the session.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime};

use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::browser::BrowserOpener;
use crate::config::AuthConfig;
use crate::error::AuthError;
use crate::lock::{RefreshLock, lock_path};
use crate::loopback::Loopback;
use crate::oidc::{Oidc, Tokens, provider_client};
use crate::status::{AuthStatus, Identity, SignInReason};
use crate::vault::{KeyringVault, TokenVault};
use nomos_base::Secret;
use nomos_base::error_chain;
use nomos_base::{Clock, SystemClock};

/// Longest the background task sleeps before looking at the wall clock again, so a resume
/// from suspend is noticed within this time even if no request comes.
const MAX_NAP: Duration = Duration::from_secs(10);

/// Shortest time between two scheduled refreshes.
const MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(1);

/// Attempts to save a rotated refresh token before giving the session up.
const STORE_ATTEMPTS: u32 = 3;

/// What a session needs besides its configuration.
#[derive(Debug, Clone)]
pub struct SessionDeps {
    /// Where the refresh token lives ([`KeyringVault`] in the app).
    pub vault: Arc<dyn TokenVault>,
    /// Wall-clock time.
    pub clock: Arc<dyn Clock>,
    /// The HTTP client for provider calls; `None` builds one with no redirects and the
    /// configured timeout.
    pub http: Option<reqwest::Client>,
}

impl SessionDeps {
    /// `vault` with the system clock and the default HTTP client.
    pub fn new(vault: Arc<dyn TokenVault>) -> Self {
        Self {
            vault,
            clock: Arc::new(SystemClock),
            http: None,
        }
    }
}

/// How logout went at the provider. The local sign-in is gone in every case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogoutOutcome {
    /// The provider revoked the refresh token (RFC 7009).
    Revoked,
    /// The provider offers no revocation endpoint; the token expires on its own.
    RevocationNotOffered,
    /// There was nothing to revoke.
    NothingToRevoke,
    /// Revocation failed (offline, provider error); the token was deleted locally anyway.
    RevocationFailed {
        /// Why.
        message: String,
    },
}

/// Counters for diagnostics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Refreshes that succeeded.
    pub refreshes: u64,
    /// Refresh attempts that failed (any reason).
    pub failed_refreshes: u64,
    /// Tokens reported rejected (401) by an API.
    pub unauthorized: u64,
}

/// A sign-in session. Cheap to clone; all clones share one state, one refresh gate and one
/// background task (which stops when the last clone is dropped).
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    config: AuthConfig,
    vault: Arc<dyn TokenVault>,
    clock: Arc<dyn Clock>,
    http: reqwest::Client,
    /// The discovered provider; cleared when its keys no longer verify an ID token, so the
    /// next attempt fetches them again (key rotation).
    oidc: tokio::sync::Mutex<Option<Arc<Oidc>>>,
    state: Mutex<TokenState>,
    /// The in-process single-flight gate around refresh, login and logout.
    gate: tokio::sync::Mutex<()>,
    status: watch::Sender<AuthStatus>,
    wake: Arc<Notify>,
    lock_path: PathBuf,
    refreshes: AtomicU64,
    failed_refreshes: AtomicU64,
    unauthorized: AtomicU64,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
    }
}

#[derive(Default)]
struct TokenState {
    access: Option<Held>,
    /// Bumped on every new access token; lets a waiter see that someone else refreshed.
    generation: u64,
    identity: Identity,
    /// The next token is minted because an API answered 401.
    after_unauthorized: bool,
    /// Consecutive failed refreshes, and when the next one may run.
    failures: u32,
    next_attempt: Option<SystemTime>,
    last_failure: Option<AuthError>,
}

struct Held {
    token: Secret,
    expires_at: SystemTime,
    refresh_at: SystemTime,
    /// Minted for the retry after a 401: a second 401 on it ends the session.
    after_unauthorized: bool,
}

impl Held {
    fn fresh(&self, now: SystemTime) -> bool {
        now < self.refresh_at
    }

    fn usable(&self, now: SystemTime, safety: Duration) -> bool {
        now + safety < self.expires_at
    }
}

/// When to refresh a token with `lifetime` obtained at `obtained_at`:
/// `(expires_at, refresh_at)`.
pub(crate) fn schedule(
    obtained_at: SystemTime,
    lifetime: Duration,
    margin: Duration,
) -> (SystemTime, SystemTime) {
    let expires_at = obtained_at + lifetime;
    let margin = margin.min(lifetime / 2);
    let refresh_at = expires_at.checked_sub(margin).unwrap_or(obtained_at);
    // A provider announcing a (nearly) zero lifetime must not spin the background task.
    (
        expires_at,
        refresh_at.max(obtained_at + MIN_REFRESH_INTERVAL),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// A caller needs a token; honours the backoff after a failure.
    Request,
    /// The background task, at the scheduled time.
    Background,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("issuer", &self.inner.config.issuer)
            .field("status", &self.inner.status.borrow().code())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Opens the session for `config`: nothing is signed in yet when the vault is empty
    /// ([`AuthStatus::SignedOut`]); otherwise the stored sign-in is resumed and the first
    /// access token is fetched in the background ([`AuthStatus::Refreshing`]).
    ///
    /// Needs a tokio runtime (the background refresh task is spawned on it). Does not touch
    /// the network: discovery happens on first use, so an offline start works.
    pub async fn open(config: AuthConfig, deps: SessionDeps) -> Result<Self, AuthError> {
        config.validate()?;
        let http = match deps.http {
            Some(h) => h,
            None => provider_client(config.http_timeout)?,
        };
        let resumed = deps.vault.load().await?.is_some();
        let status = if resumed {
            AuthStatus::Refreshing {
                identity: Identity::default(),
                attempt: 0,
                last_error: None,
            }
        } else {
            AuthStatus::SignedOut
        };
        let inner = Arc::new(Inner {
            lock_path: lock_path(&config.data_dir),
            vault: deps.vault,
            clock: deps.clock,
            http,
            oidc: tokio::sync::Mutex::new(None),
            state: Mutex::new(TokenState::default()),
            gate: tokio::sync::Mutex::new(()),
            status: watch::Sender::new(status),
            wake: Arc::new(Notify::new()),
            refreshes: AtomicU64::new(0),
            failed_refreshes: AtomicU64::new(0),
            unauthorized: AtomicU64::new(0),
            task: Mutex::new(None),
            config,
        });
        if inner.config.background_refresh {
            let task = tokio::spawn(background(Arc::downgrade(&inner), Arc::clone(&inner.wake)));
            *lock(&inner.task) = Some(task);
        }
        Ok(Self { inner })
    }

    /// [`Session::open`] with the OS keyring ([`KeyringVault`]), the system clock and the
    /// default HTTP client. Fails with [`AuthError::KeyringUnavailable`] when there is no
    /// keyring; there is no plain-text fallback.
    pub async fn open_with_keyring(config: AuthConfig) -> Result<Self, AuthError> {
        let vault = KeyringVault::for_config(&config).await?;
        Self::open(config, SessionDeps::new(Arc::new(vault))).await
    }

    /// The current status.
    pub fn status(&self) -> AuthStatus {
        self.inner.status.borrow().clone()
    }

    /// A receiver that sees every status change (for the UI banner and notification).
    pub fn subscribe(&self) -> watch::Receiver<AuthStatus> {
        self.inner.status.subscribe()
    }

    /// Counters since the session was opened.
    pub fn stats(&self) -> SessionStats {
        SessionStats {
            refreshes: self.inner.refreshes.load(Ordering::Relaxed),
            failed_refreshes: self.inner.failed_refreshes.load(Ordering::Relaxed),
            unauthorized: self.inner.unauthorized.load(Ordering::Relaxed),
        }
    }

    /// The configuration this session runs with.
    pub fn config(&self) -> &AuthConfig {
        &self.inner.config
    }

    /// Signs in through the browser: Authorization Code with PKCE, a loopback redirect
    /// listener, `state` and `iss` checked, the ID token verified against the nonce. The
    /// refresh token goes to the vault; the access token stays in memory.
    ///
    /// `browser.open` runs while the listener waits, bounded by
    /// [`AuthConfig::login_timeout`].
    pub async fn login(&self, browser: &dyn BrowserOpener) -> Result<Identity, AuthError> {
        let cfg = &self.inner.config;
        let oidc = self.oidc().await?;
        let mut loopback = Loopback::bind().await?;
        let pending = oidc.begin_login(&loopback.redirect_uri())?;
        // Any local process can reach the listener: only a redirect carrying this login's
        // `state` (and a code or an error) ends the wait; anything else is answered 400 and
        // the login keeps waiting for the real one or its timeout.
        loopback.expect_state(pending.state());
        tracing::info!(issuer = %cfg.issuer, "opening the browser for sign-in");
        let redirect = {
            let open = browser.open(&pending.auth_url);
            tokio::pin!(open);
            let deadline = tokio::time::sleep(cfg.login_timeout);
            tokio::pin!(deadline);
            let mut opened = false;
            loop {
                tokio::select! {
                    r = &mut open, if !opened => {
                        r?;
                        opened = true;
                    }
                    r = loopback.next() => {
                        break r.ok_or_else(|| AuthError::Listener {
                            message: "the listener stopped before the browser returned".into(),
                        })?;
                    }
                    () = &mut deadline => {
                        return Err(AuthError::LoginTimeout { after: cfg.login_timeout });
                    }
                }
            }
        };
        drop(loopback);
        let code = oidc.check_redirect(&pending, &redirect.0)?;
        let obtained_at = self.now();
        let tokens = oidc.finish_login(pending, code).await?;
        let Some(refresh) = tokens.refresh.clone() else {
            return Err(AuthError::NoRefreshToken);
        };

        let _gate = self.inner.gate.lock().await;
        {
            let _lock = RefreshLock::acquire(&self.inner.lock_path, cfg.lock_timeout).await?;
            self.inner.vault.store(&refresh).await?;
        }
        let identity = tokens.identity.clone().unwrap_or_default();
        {
            let mut st = self.state();
            *st = TokenState {
                generation: st.generation,
                ..TokenState::default()
            };
            self.install(&mut st, tokens, obtained_at);
        }
        tracing::info!(subject = ?identity.subject, "signed in");
        self.inner.wake.notify_one();
        Ok(identity)
    }

    /// A valid access token for the next request.
    ///
    /// Returns the held token while it is fresh; otherwise refreshes (single-flight, across
    /// instances too) and returns the new one. Fails with [`AuthError::SignInRequired`] or
    /// [`AuthError::SignedOut`] when there is no session, and with a retryable error while
    /// the provider is unreachable and the held token has expired.
    pub async fn access_token(&self) -> Result<Secret, AuthError> {
        let seen = {
            let st = self.state();
            self.check_status()?;
            if let Some(held) = &st.access
                && held.fresh(self.now())
            {
                return Ok(held.token.clone());
            }
            st.generation
        };
        self.refresh_from(seen, Trigger::Request).await
    }

    /// Refreshes now (single-flight: if another caller refreshed while this one waited,
    /// returns that token).
    pub async fn refresh(&self) -> Result<Secret, AuthError> {
        let seen = self.state().generation;
        self.check_status()?;
        self.refresh_from(seen, Trigger::Request).await
    }

    /// An API answered 401 to `rejected`. Drops it so the next [`Session::access_token`]
    /// refreshes; if `rejected` was itself minted for the retry after a 401, the session
    /// ends ([`SignInReason::Unauthorized`]). A token already replaced is ignored, so many
    /// callers failing on the same token cause one refresh.
    pub async fn on_unauthorized(&self, rejected: &Secret) {
        let mut st = self.state();
        let Some(held) = &st.access else { return };
        if !held.token.constant_time_eq(rejected.expose()) {
            return;
        }
        self.inner.unauthorized.fetch_add(1, Ordering::Relaxed);
        if held.after_unauthorized {
            tracing::warn!("a freshly refreshed token was rejected too; sign-in required");
            self.end_locked(&mut st, SignInReason::Unauthorized);
            return;
        }
        tracing::info!("an API rejected the access token; refreshing before the retry");
        st.access = None;
        st.after_unauthorized = true;
    }

    /// Sends the request `build` makes with a fresh bearer token (added here); on 401
    /// refreshes once and retries once; a second 401 ends the session and returns
    /// [`AuthError::SignInRequired`]. Transport failures are [`AuthError::Network`].
    pub async fn send<F>(&self, build: F) -> Result<reqwest::Response, AuthError>
    where
        F: Fn() -> reqwest::RequestBuilder,
    {
        let mut retried = false;
        loop {
            let token = self.access_token().await?;
            let response = build()
                .bearer_auth(token.expose())
                .send()
                .await
                .map_err(|e| AuthError::Network {
                    message: error_chain(&e),
                })?;
            if response.status() != reqwest::StatusCode::UNAUTHORIZED {
                return Ok(response);
            }
            self.on_unauthorized(&token).await;
            if retried {
                // `on_unauthorized` has ended the session if the retry's token was minted for
                // it; if another caller's refresh won the race, end it here all the same.
                self.check_status()?;
                return Err(self.end(SignInReason::Unauthorized));
            }
            retried = true;
        }
    }

    /// Signs out: revokes the refresh token at the provider when it offers revocation,
    /// deletes it from the vault and forgets the access token. Local sign-out happens even
    /// when revocation fails (offline); the outcome says how revocation went.
    pub async fn logout(&self) -> Result<LogoutOutcome, AuthError> {
        let cfg = &self.inner.config;
        let _gate = self.inner.gate.lock().await;
        let _lock = RefreshLock::acquire(&self.inner.lock_path, cfg.lock_timeout).await?;
        let stored = self.inner.vault.load().await?;
        let access = self.state().access.take().map(|h| h.token);
        // Revoking the refresh token ends the grant at most providers; the access token is
        // revoked only when there is nothing else.
        let token = match (&stored, &access) {
            (Some(rt), _) => Some((rt, "refresh_token")),
            (None, Some(at)) => Some((at, "access_token")),
            (None, None) => None,
        };
        let outcome = match token {
            None => LogoutOutcome::NothingToRevoke,
            Some((token, hint)) => match self.oidc().await {
                Err(e) => LogoutOutcome::RevocationFailed {
                    message: e.to_string(),
                },
                Ok(oidc) => match oidc.revoke(token, hint).await {
                    Ok(true) => LogoutOutcome::Revoked,
                    Ok(false) => LogoutOutcome::RevocationNotOffered,
                    Err(e) => LogoutOutcome::RevocationFailed {
                        message: e.to_string(),
                    },
                },
            },
        };
        self.inner.vault.delete().await?;
        {
            let mut st = self.state();
            *st = TokenState {
                generation: st.generation,
                ..TokenState::default()
            };
        }
        self.inner.status.send_replace(AuthStatus::SignedOut);
        tracing::info!(outcome = ?outcome, "signed out");
        Ok(outcome)
    }

    fn now(&self) -> SystemTime {
        self.inner.clock.now()
    }

    fn state(&self) -> MutexGuard<'_, TokenState> {
        lock(&self.inner.state)
    }

    fn check_status(&self) -> Result<(), AuthError> {
        match &*self.inner.status.borrow() {
            AuthStatus::SignedOut => Err(AuthError::SignedOut),
            AuthStatus::NeedsSignIn { reason } => Err(AuthError::SignInRequired {
                reason: reason.clone(),
            }),
            AuthStatus::SignedIn { .. } | AuthStatus::Refreshing { .. } => Ok(()),
        }
    }

    async fn oidc(&self) -> Result<Arc<Oidc>, AuthError> {
        let mut slot = self.inner.oidc.lock().await;
        if let Some(oidc) = &*slot {
            return Ok(Arc::clone(oidc));
        }
        let oidc = Arc::new(
            Oidc::discover(
                &self.inner.config,
                self.inner.http.clone(),
                Arc::clone(&self.inner.clock),
            )
            .await?,
        );
        *slot = Some(Arc::clone(&oidc));
        Ok(oidc)
    }

    /// Refreshes unless someone else did since the caller saw generation `seen`.
    async fn refresh_from(&self, seen: u64, trigger: Trigger) -> Result<Secret, AuthError> {
        let _gate = self.inner.gate.lock().await;
        let safety = self.inner.config.expiry_safety;
        {
            let st = self.state();
            self.check_status()?;
            let now = self.now();
            if st.generation != seen
                && let Some(held) = st.access.as_ref().filter(|h| h.usable(now, safety))
            {
                return Ok(held.token.clone());
            }
            // Backing off after a failure: don't hammer the provider from every request.
            if trigger == Trigger::Request
                && let Some(next) = st.next_attempt
                && now < next
            {
                if let Some(held) = st.access.as_ref().filter(|h| h.usable(now, safety)) {
                    return Ok(held.token.clone());
                }
                let e = st.last_failure.clone().unwrap_or(AuthError::Network {
                    message: "the last refresh failed; retrying shortly".into(),
                });
                // The held token has run out while waiting: say so rather than "signed in".
                self.inner.status.send_if_modified(|s| {
                    if matches!(s, AuthStatus::SignedIn { .. }) {
                        *s = AuthStatus::Refreshing {
                            identity: st.identity.clone(),
                            attempt: st.failures,
                            last_error: Some(e.to_string()),
                        };
                        true
                    } else {
                        false
                    }
                });
                return Err(e);
            }
        }
        match self.refresh_locked().await {
            Ok(token) => Ok(token),
            Err(e) => {
                self.inner.failed_refreshes.fetch_add(1, Ordering::Relaxed);
                if e.needs_sign_in() {
                    return Err(e);
                }
                // Everything else (network, 5xx, a locked keyring, a busy lock) is retried by
                // the background task with backoff; a still-valid token keeps being served.
                let mut st = self.state();
                st.failures += 1;
                let delay = self.backoff(st.failures);
                let now = self.now();
                st.next_attempt = Some(now + delay);
                st.last_failure = Some(e.clone());
                tracing::warn!(
                    code = e.code(),
                    error = %e,
                    attempt = st.failures,
                    retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    "token refresh failed"
                );
                let usable = st
                    .access
                    .as_ref()
                    .filter(|h| h.usable(now, safety))
                    .map(|h| (h.token.clone(), h.expires_at));
                match usable {
                    Some((token, expires_at)) => {
                        self.inner.status.send_replace(AuthStatus::SignedIn {
                            identity: st.identity.clone(),
                            expires_at,
                        });
                        Ok(token)
                    }
                    None => {
                        self.inner.status.send_replace(AuthStatus::Refreshing {
                            identity: st.identity.clone(),
                            attempt: st.failures,
                            last_error: Some(e.to_string()),
                        });
                        Err(e)
                    }
                }
            }
        }
    }

    /// One refresh, with the in-process gate held by the caller.
    async fn refresh_locked(&self) -> Result<Secret, AuthError> {
        let cfg = &self.inner.config;
        {
            let st = self.state();
            self.inner.status.send_replace(AuthStatus::Refreshing {
                identity: st.identity.clone(),
                attempt: st.failures,
                last_error: st.last_failure.as_ref().map(ToString::to_string),
            });
        }
        let oidc = self.oidc().await?;
        let file_lock = RefreshLock::acquire(&self.inner.lock_path, cfg.lock_timeout).await?;
        // Read under the lock: another instance may have rotated the token a moment ago.
        let Some(refresh) = self.inner.vault.load().await? else {
            return Err(self.end(SignInReason::TokenMissing));
        };
        let obtained_at = self.now();
        let tokens = match oidc.refresh(&refresh).await {
            Ok(t) => t,
            Err(AuthError::SignInRequired { reason }) => {
                if matches!(reason, SignInReason::Revoked { .. })
                    && let Err(e) = self.inner.vault.delete().await
                {
                    tracing::warn!(code = e.code(), error = %e, "could not delete the revoked sign-in");
                }
                return Err(self.end(reason));
            }
            Err(e) => return Err(e),
        };
        if let Some(rotated) = &tokens.refresh
            && let Err(e) = self.store_rotated(rotated).await
        {
            // The provider has already consumed the stored token; presenting it again would
            // revoke the session anyway, so remove it and ask for a new sign-in.
            let _ = self.inner.vault.delete().await;
            return Err(self.end(SignInReason::KeyringWriteFailed {
                message: e.to_string(),
            }));
        }
        drop(file_lock);
        if let Some(e) = tokens.id_token_error {
            // Perhaps the provider rotated its signing keys: rediscover on the next attempt.
            *self.inner.oidc.lock().await = None;
            return Err(e);
        }

        let mut st = self.state();
        if let (Some(old), Some(new)) = (
            st.identity.subject.as_deref(),
            tokens.identity.as_ref().and_then(|i| i.subject.as_deref()),
        ) && old != new
        {
            return Err(self.end_locked(&mut st, SignInReason::IdentityChanged));
        }
        let token = self.install(&mut st, tokens, obtained_at);
        self.inner.refreshes.fetch_add(1, Ordering::Relaxed);
        Ok(token)
    }

    /// Installs new tokens and publishes `SignedIn`.
    fn install(&self, st: &mut TokenState, tokens: Tokens, obtained_at: SystemTime) -> Secret {
        let cfg = &self.inner.config;
        let lifetime = tokens.lifetime.unwrap_or(cfg.assumed_lifetime);
        let (expires_at, refresh_at) = schedule(obtained_at, lifetime, cfg.refresh_margin);
        let after_unauthorized = std::mem::take(&mut st.after_unauthorized);
        st.access = Some(Held {
            token: tokens.access.clone(),
            expires_at,
            refresh_at,
            after_unauthorized,
        });
        st.generation += 1;
        st.failures = 0;
        st.next_attempt = None;
        st.last_failure = None;
        if let Some(identity) = tokens.identity {
            st.identity = identity;
        }
        tracing::debug!(
            generation = st.generation,
            lifetime_s = lifetime.as_secs(),
            "new access token"
        );
        self.inner.status.send_replace(AuthStatus::SignedIn {
            identity: st.identity.clone(),
            expires_at,
        });
        tokens.access
    }

    async fn store_rotated(&self, token: &Secret) -> Result<(), AuthError> {
        let mut attempt = 1;
        loop {
            match self.inner.vault.store(token).await {
                Ok(()) => return Ok(()),
                Err(e) if e.is_retryable() && attempt < STORE_ATTEMPTS => {
                    tracing::warn!(code = e.code(), error = %e, attempt, "saving the rotated refresh token failed; retrying");
                    tokio::time::sleep(Duration::from_millis(200) * attempt).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn end(&self, reason: SignInReason) -> AuthError {
        self.end_locked(&mut self.state(), reason)
    }

    /// Ends the session: forgets the access token and publishes `NeedsSignIn`.
    fn end_locked(&self, st: &mut TokenState, reason: SignInReason) -> AuthError {
        st.access = None;
        st.after_unauthorized = false;
        st.next_attempt = None;
        tracing::warn!(code = reason.code(), reason = %reason, "sign-in required");
        self.inner.status.send_replace(AuthStatus::NeedsSignIn {
            reason: reason.clone(),
        });
        AuthError::SignInRequired { reason }
    }

    fn backoff(&self, failures: u32) -> Duration {
        let cfg = &self.inner.config;
        let exp = cfg
            .base_backoff
            .saturating_mul(1u32 << failures.saturating_sub(1).min(16));
        let capped = exp.min(cfg.max_backoff);
        // ±20% so instances that failed together do not retry together.
        capped.mul_f64(0.8 + 0.4 * fastrand::f64())
    }

    /// How long the background task may sleep, and whether a refresh is due now.
    fn next_wake(&self) -> Option<Duration> {
        if self.check_status().is_err() {
            return Some(MAX_NAP);
        }
        let st = self.state();
        let now = self.now();
        let mut due = st.access.as_ref().map_or(now, |h| h.refresh_at).max(now);
        if let Some(next) = st.next_attempt {
            due = due.max(next);
        }
        let wait = due.duration_since(now).unwrap_or_default();
        if wait.is_zero() { None } else { Some(wait) }
    }
}

/// Refreshes ahead of expiry until the session is dropped.
async fn background(session: Weak<Inner>, wake: Arc<Notify>) {
    loop {
        let nap = {
            let Some(inner) = session.upgrade() else {
                return;
            };
            Session { inner }.next_wake()
        };
        if let Some(nap) = nap {
            tokio::select! {
                () = tokio::time::sleep(nap.min(MAX_NAP)) => {}
                () = wake.notified() => {}
            }
            continue;
        }
        let Some(inner) = session.upgrade() else {
            return;
        };
        let s = Session { inner };
        let seen = s.state().generation;
        // Failures are recorded (backoff, status) by `refresh_from`; `next_wake` honours them.
        if let Err(e) = s.refresh_from(seen, Trigger::Background).await {
            tracing::debug!(code = e.code(), "background refresh did not complete");
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data; keep going with it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn short_tokens_refresh_half_way_long_ones_at_the_margin() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let margin = Duration::from_secs(120);
        let (exp, at) = schedule(t0, Duration::from_secs(6), margin);
        assert_eq!(exp, t0 + Duration::from_secs(6));
        assert_eq!(at, t0 + Duration::from_secs(3));
        let (exp, at) = schedule(t0, Duration::from_secs(3600), margin);
        assert_eq!(exp, t0 + Duration::from_secs(3600));
        assert_eq!(at, t0 + Duration::from_secs(3480));
    }

    #[test]
    fn held_token_is_fresh_then_usable_then_dead() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let (expires_at, refresh_at) = schedule(t0, Duration::from_secs(6), Duration::MAX);
        let h = Held {
            token: Secret::new("at"),
            expires_at,
            refresh_at,
            after_unauthorized: false,
        };
        let safety = Duration::from_secs(1);
        assert!(h.fresh(t0 + Duration::from_secs(2)));
        assert!(!h.fresh(t0 + Duration::from_secs(3)));
        assert!(h.usable(t0 + Duration::from_secs(4), safety));
        assert!(!h.usable(t0 + Duration::from_secs(5), safety));
    }
}
