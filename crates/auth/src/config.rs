//! What the app tells the auth layer: the provider, the client and the timings.

use std::path::PathBuf;
use std::time::Duration;

use openidconnect::url::Url;

use crate::error::AuthError;

/// The scopes asked for when the settings name none: identity plus a refresh token.
pub const DEFAULT_SCOPES: &[&str] = &["openid", "profile", "email", "offline_access"];

/// Sign-in settings. Holds no secret: Nomos is a public native client (PKCE, no client
/// secret), and tokens live in the keyring and in memory only.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The OpenID Provider's issuer URL (discovery is `<issuer>/.well-known/openid-configuration`).
    pub issuer: String,
    /// The client registered for Nomos at the provider.
    pub client_id: String,
    /// Scopes to request; `openid` is always sent.
    pub scopes: Vec<String>,
    /// RFC 8707 resource indicator of the gateway the access token is for. Sent on the
    /// authorization, code and refresh requests so the token's audience is the gateway.
    pub resource: Option<String>,
    /// Send `prompt=consent`. OIDC drops `offline_access` (and so the refresh token)
    /// without it at many providers, `oidc-provider` included.
    pub prompt_consent: bool,
    /// Nomos's data directory; the cross-instance refresh lock file lives in it. No token
    /// is ever written here.
    pub data_dir: PathBuf,
    /// The keyring "service" the refresh token is stored under.
    pub keyring_service: String,
    /// Refresh this long before the access token expires (capped at half its lifetime, so
    /// short-lived tokens are refreshed half-way).
    pub refresh_margin: Duration,
    /// Never hand out a token closer to expiry than this: covers the provider rounding `exp`
    /// down to whole seconds and the request's time in flight.
    pub expiry_safety: Duration,
    /// Lifetime assumed when the token response has no `expires_in`.
    pub assumed_lifetime: Duration,
    /// How long the browser may take to complete the login.
    pub login_timeout: Duration,
    /// Timeout of one HTTP request to the provider.
    pub http_timeout: Duration,
    /// Timeout of one keyring call (a locked keyring may wait on a prompt forever).
    pub keyring_timeout: Duration,
    /// How long to wait for another instance's refresh before giving up.
    pub lock_timeout: Duration,
    /// Run the background task that refreshes before expiry. Tests that need the token to go
    /// stale on purpose turn it off; every token request still checks expiry itself.
    pub background_refresh: bool,
    /// First delay after a failed background refresh; doubles up to [`Self::max_backoff`].
    pub base_backoff: Duration,
    /// Cap on the background retry delay.
    pub max_backoff: Duration,
}

impl AuthConfig {
    /// Settings with the defaults for everything but the provider, the client and the data
    /// directory.
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
            scopes: DEFAULT_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
            resource: None,
            prompt_consent: true,
            data_dir: data_dir.into(),
            keyring_service: "nomos".to_owned(),
            refresh_margin: Duration::from_secs(120),
            expiry_safety: Duration::from_secs(1),
            assumed_lifetime: Duration::from_secs(300),
            login_timeout: Duration::from_secs(300),
            http_timeout: Duration::from_secs(30),
            keyring_timeout: Duration::from_secs(10),
            lock_timeout: Duration::from_secs(60),
            background_refresh: true,
            base_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }

    /// The keyring account: one per provider and client, so two configured providers never
    /// overwrite each other's token.
    pub fn keyring_account(&self) -> String {
        format!(
            "oidc:{}:{}",
            self.issuer.trim_end_matches('/'),
            self.client_id
        )
    }

    /// Checks what can be checked without the network.
    pub fn validate(&self) -> Result<Url, AuthError> {
        let config = |message: String| AuthError::Config { message };
        let issuer = Url::parse(&self.issuer)
            .map_err(|e| config(format!("issuer {:?} is not a URL: {e}", self.issuer)))?;
        match issuer.scheme() {
            "https" => {}
            // Plain HTTP would expose the code exchange and the tokens; only a provider on
            // this machine (tests, a local dev IdP) may use it.
            "http" if is_loopback(&issuer) => {}
            other => {
                return Err(config(format!(
                    "issuer must use https (got {other}://; plain http is allowed only on loopback)"
                )));
            }
        }
        if self.client_id.trim().is_empty() {
            return Err(config("client_id is empty".into()));
        }
        if self.keyring_service.trim().is_empty() {
            return Err(config("keyring_service is empty".into()));
        }
        if self.data_dir.as_os_str().is_empty() {
            return Err(config("data_dir is empty".into()));
        }
        if let Some(r) = &self.resource {
            Url::parse(r).map_err(|e| config(format!("resource {r:?} is not a URI: {e}")))?;
        }
        Ok(issuer)
    }
}

pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(openidconnect::url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(openidconnect::url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(openidconnect::url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_on_loopback() {
        let mut c = AuthConfig::new("http://127.0.0.1:9000", "nomos", "/tmp/x");
        assert!(c.validate().is_ok());
        c.issuer = "http://idp.example.com".into();
        assert_eq!(c.validate().map(|_| ()).unwrap_err().code(), "auth.config");
        c.issuer = "https://idp.example.com/realms/ops".into();
        assert!(c.validate().is_ok());
        c.client_id = " ".into();
        assert!(c.validate().is_err());
    }

    #[test]
    fn keyring_account_names_issuer_and_client() {
        let c = AuthConfig::new("https://idp.example.com/", "nomos", "/tmp/x");
        assert_eq!(c.keyring_account(), "oidc:https://idp.example.com:nomos");
    }
}
