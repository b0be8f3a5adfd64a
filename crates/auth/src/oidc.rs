//! The OpenID Connect protocol, on `openidconnect`: discovery, the authorization request with
//! PKCE (S256), checking the redirect (`state`, `iss`), the code exchange with ID-token
//! verification (`nonce`, `at_hash`), refresh and revocation.
//!
//! Nothing here keeps state between calls beyond the discovered metadata; the session owns
//! the tokens.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreClaimName, CoreClaimType, CoreClient,
    CoreClientAuthMethod, CoreErrorResponseType, CoreGrantType, CoreIdTokenVerifier,
    CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJweKeyManagementAlgorithm,
    CoreResponseMode, CoreResponseType, CoreSubjectIdentifierType, CoreTokenResponse,
};
use openidconnect::url::Url;
use openidconnect::{
    AccessTokenHash, AdditionalProviderMetadata, AsyncHttpClient, AuthenticationFlow,
    AuthorizationCode, ClientId, CsrfToken, EndpointMaybeSet, EndpointNotSet, EndpointSet,
    ErrorResponse, HttpRequest, HttpResponse, IssuerUrl, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, ProviderMetadata, RedirectUrl, RefreshToken,
    RequestTokenError, Scope, TokenResponse,
};
use serde::{Deserialize, Serialize};

use crate::config::{AuthConfig, is_loopback};
use crate::error::AuthError;
use crate::status::{Identity, SignInReason};
use nomos_base::Clock;
use nomos_base::Secret;
use nomos_base::error_chain;

/// Discovery fields `openidconnect`'s core metadata does not model.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
struct ExtraMetadata {
    /// RFC 7009 (logout revokes the refresh token when offered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revocation_endpoint: Option<String>,
    /// RFC 9207: when true, a redirect without `iss` is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authorization_response_iss_parameter_supported: Option<bool>,
}

impl AdditionalProviderMetadata for ExtraMetadata {}

type Metadata = ProviderMetadata<
    ExtraMetadata,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

/// The client as built from discovery: authorization endpoint set, token and userinfo
/// endpoints as discovered.
type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

type TokenError =
    RequestTokenError<HttpFailure, openidconnect::StandardErrorResponse<CoreErrorResponseType>>;

/// Tokens from one token response, the ID token already verified.
pub(crate) struct Tokens {
    pub(crate) access: Secret,
    pub(crate) refresh: Option<Secret>,
    pub(crate) lifetime: Option<Duration>,
    /// From the verified ID token, when the response carried one.
    pub(crate) identity: Option<Identity>,
    /// Set when a refresh response's ID token failed verification. The rest is still
    /// returned: the provider has already rotated the refresh token, and the new one must be
    /// saved even though this response is not used, or the next refresh would present the
    /// consumed one and get the whole session revoked.
    pub(crate) id_token_error: Option<AuthError>,
}

/// One login in progress: what the redirect is checked against.
pub(crate) struct PendingLogin {
    pub(crate) auth_url: Url,
    client: Client,
    csrf: CsrfToken,
    nonce: Nonce,
    verifier: PkceCodeVerifier,
}

impl PendingLogin {
    /// The `state` this login sent; the loopback listener lets only a redirect carrying it
    /// through.
    pub(crate) fn state(&self) -> Secret {
        Secret::new(self.csrf.secret().clone())
    }
}

/// A discovered provider.
pub(crate) struct Oidc {
    client: Client,
    issuer: String,
    revocation_url: Option<Url>,
    iss_param_required: bool,
    http: ProviderHttp,
    clock: Arc<dyn Clock>,
    scopes: Vec<String>,
    resource: Option<String>,
    prompt_consent: bool,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.issuer)
            .field("revocation", &self.revocation_url.is_some())
            .finish_non_exhaustive()
    }
}

impl Oidc {
    /// Fetches and validates the discovery document and the provider's keys.
    pub(crate) async fn discover(
        config: &AuthConfig,
        http: reqwest::Client,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, AuthError> {
        let http = ProviderHttp(http);
        let issuer = IssuerUrl::new(config.issuer.clone()).map_err(|e| AuthError::Config {
            message: format!("issuer: {e}"),
        })?;
        // `discover_async` also checks that the document's `issuer` equals the configured one.
        let metadata = Metadata::discover_async(issuer, &http)
            .await
            .map_err(map_discovery_error)?;
        let extra = metadata.additional_metadata().clone();
        let revocation_url = match extra.revocation_endpoint {
            Some(u) => {
                let url = Url::parse(&u).map_err(|e| AuthError::Discovery {
                    message: format!("revocation_endpoint: {e}"),
                })?;
                // The refresh token is posted there: same rule as the issuer.
                if url.scheme() != "https" && !(url.scheme() == "http" && is_loopback(&url)) {
                    return Err(AuthError::Discovery {
                        message: "revocation_endpoint must use https".into(),
                    });
                }
                Some(url)
            }
            None => None,
        };
        let issuer = metadata.issuer().as_str().to_owned();
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(config.client_id.clone()),
            None,
        );
        Ok(Self {
            client,
            issuer,
            revocation_url,
            iss_param_required: extra
                .authorization_response_iss_parameter_supported
                .unwrap_or(false),
            http,
            clock,
            scopes: config
                .scopes
                .iter()
                .filter(|s| s.as_str() != "openid")
                .cloned()
                .collect(),
            resource: config.resource.clone(),
            prompt_consent: config.prompt_consent,
        })
    }

    /// Builds the authorization request for a redirect to `redirect_uri`.
    pub(crate) fn begin_login(&self, redirect_uri: &str) -> Result<PendingLogin, AuthError> {
        let redirect =
            RedirectUrl::new(redirect_uri.to_owned()).map_err(|e| AuthError::Listener {
                message: format!("redirect URI: {e}"),
            })?;
        let client = self.client.clone().set_redirect_uri(redirect);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for scope in &self.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        if self.prompt_consent {
            request = request.add_prompt(CoreAuthPrompt::Consent);
        }
        if let Some(resource) = &self.resource {
            request = request.add_extra_param("resource", resource.clone());
        }
        let (auth_url, csrf, nonce) = request.url();
        Ok(PendingLogin {
            auth_url,
            client,
            csrf,
            nonce,
            verifier,
        })
    }

    /// Checks the redirect's `state`, `error` and `iss`, and returns the code.
    pub(crate) fn check_redirect(
        &self,
        pending: &PendingLogin,
        params: &HashMap<String, String>,
    ) -> Result<AuthorizationCode, AuthError> {
        // State first: an error response with a foreign state is not ours to report.
        let state_ok = params
            .get("state")
            .is_some_and(|s| Secret::new(pending.csrf.secret().clone()).constant_time_eq(s));
        if !state_ok {
            return Err(AuthError::StateMismatch);
        }
        match params.get("iss") {
            Some(iss) if iss != &self.issuer => {
                return Err(AuthError::IssuerMismatch {
                    expected: self.issuer.clone(),
                    got: iss.clone(),
                });
            }
            None if self.iss_param_required => {
                return Err(AuthError::IssuerMismatch {
                    expected: self.issuer.clone(),
                    got: "nothing (the provider promises an iss parameter)".into(),
                });
            }
            Some(_) | None => {}
        }
        if let Some(error) = params.get("error") {
            return Err(AuthError::Denied {
                error: error.clone(),
                description: params.get("error_description").cloned(),
            });
        }
        params
            .get("code")
            .filter(|c| !c.is_empty())
            .map(|c| AuthorizationCode::new(c.clone()))
            .ok_or_else(|| AuthError::Provider {
                message: "the redirect carries neither a code nor an error".into(),
            })
    }

    /// Exchanges the code (with the PKCE verifier) and verifies the ID token against the
    /// login's nonce.
    pub(crate) async fn finish_login(
        &self,
        pending: PendingLogin,
        code: AuthorizationCode,
    ) -> Result<Tokens, AuthError> {
        let mut request = pending
            .client
            .exchange_code(code)
            .map_err(|e| AuthError::Discovery {
                message: e.to_string(),
            })?
            .set_pkce_verifier(pending.verifier);
        if let Some(resource) = &self.resource {
            request = request.add_extra_param("resource", resource.clone());
        }
        let response = request
            .request_async(&self.http)
            .await
            .map_err(map_token_error)?;
        let nonce = pending.nonce;
        let identity = self
            .verify_id_token(&response, Some(&nonce))?
            .ok_or_else(|| AuthError::IdToken {
                message: "the token response has no ID token".into(),
            })?;
        Ok(tokens(&response, Some(identity)))
    }

    /// Spends `refresh` for new tokens. A rotated refresh token comes back in `refresh`.
    pub(crate) async fn refresh(&self, refresh: &Secret) -> Result<Tokens, AuthError> {
        let token = RefreshToken::new(refresh.expose().to_owned());
        let mut request =
            self.client
                .exchange_refresh_token(&token)
                .map_err(|e| AuthError::Discovery {
                    message: e.to_string(),
                })?;
        if let Some(resource) = &self.resource {
            request = request.add_extra_param("resource", resource.clone());
        }
        let response = request
            .request_async(&self.http)
            .await
            .map_err(map_token_error)?;
        Ok(match self.verify_id_token(&response, None) {
            Ok(identity) => tokens(&response, identity),
            Err(e) => Tokens {
                id_token_error: Some(e),
                ..tokens(&response, None)
            },
        })
    }

    /// Revokes a token (RFC 7009). `Ok(false)` when the provider offers no revocation.
    ///
    /// A plain form POST rather than `openidconnect`'s request, which insists on HTTPS even
    /// for a provider on loopback; the endpoint was checked at discovery instead.
    pub(crate) async fn revoke(&self, token: &Secret, hint: &str) -> Result<bool, AuthError> {
        let Some(url) = &self.revocation_url else {
            return Ok(false);
        };
        let response = self
            .http
            .0
            .post(url.as_str())
            .form(&[
                ("token", token.expose()),
                ("token_type_hint", hint),
                ("client_id", self.client.client_id().as_str()),
            ])
            .send()
            .await
            .map_err(|e| AuthError::Network {
                message: error_chain(&e),
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(true);
        }
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err(HttpFailure::Unavailable {
                status: status.as_u16(),
            }
            .into());
        }
        // RFC 7009 errors are OAuth error objects; keep only the code and description.
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        let field = |k: &str| {
            body.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        Err(AuthError::Provider {
            message: format!(
                "revocation refused (HTTP {status}): {} {}",
                field("error"),
                field("error_description")
            ),
        })
    }

    /// Verifies the ID token in `response`, if any. With `nonce`, it must be present and
    /// match (login); without, the nonce is not checked (refresh responses repeat the
    /// original one or omit it).
    fn verify_id_token(
        &self,
        response: &CoreTokenResponse,
        nonce: Option<&Nonce>,
    ) -> Result<Option<Identity>, AuthError> {
        let Some(id_token) = response.id_token() else {
            return Ok(None);
        };
        let clock = Arc::clone(&self.clock);
        let verifier: CoreIdTokenVerifier = self
            .client
            .id_token_verifier()
            .set_time_fn(move || chrono::DateTime::<chrono::Utc>::from(clock.now()));
        let id_err = |message: String| AuthError::IdToken { message };
        let claims = match nonce {
            Some(n) => id_token.claims(&verifier, n),
            None => id_token.claims(&verifier, |_: Option<&Nonce>| Ok(())),
        }
        .map_err(|e| id_err(e.to_string()))?;
        if let Some(expected) = claims.access_token_hash() {
            let alg = id_token.signing_alg().map_err(|e| id_err(e.to_string()))?;
            let key = id_token
                .signing_key(&verifier)
                .map_err(|e| id_err(e.to_string()))?;
            let actual = AccessTokenHash::from_token(response.access_token(), alg, key)
                .map_err(|e| id_err(e.to_string()))?;
            if actual != *expected {
                return Err(id_err(
                    "at_hash does not match the access token (substituted token)".into(),
                ));
            }
        }
        Ok(Some(Identity {
            subject: Some(claims.subject().as_str().to_owned()),
            name: claims
                .name()
                .and_then(|n| n.get(None))
                .map(|n| n.as_str().to_owned()),
            email: claims.email().map(|e| e.as_str().to_owned()),
        }))
    }
}

fn tokens(response: &CoreTokenResponse, identity: Option<Identity>) -> Tokens {
    Tokens {
        access: Secret::new(response.access_token().secret().clone()),
        refresh: response
            .refresh_token()
            .map(|r| Secret::new(r.secret().clone())),
        lifetime: response.expires_in(),
        identity,
        id_token_error: None,
    }
}

fn describe<T: ErrorResponse + std::fmt::Display>(r: &T) -> String {
    r.to_string()
}

fn map_token_error(e: TokenError) -> AuthError {
    match e {
        RequestTokenError::ServerResponse(r) => {
            let message = describe(&r);
            match r.error() {
                CoreErrorResponseType::InvalidGrant => AuthError::SignInRequired {
                    reason: SignInReason::Revoked { message },
                },
                CoreErrorResponseType::InvalidClient
                | CoreErrorResponseType::UnauthorizedClient => AuthError::SignInRequired {
                    reason: SignInReason::ProviderRejected { message },
                },
                CoreErrorResponseType::InvalidRequest
                | CoreErrorResponseType::InvalidScope
                | CoreErrorResponseType::UnsupportedGrantType
                | CoreErrorResponseType::Extension(_) => AuthError::Provider { message },
            }
        }
        RequestTokenError::Request(f) => f.into(),
        // Only the JSON path: serde's message can quote a value, and values here are tokens.
        RequestTokenError::Parse(p, _) => AuthError::Provider {
            message: format!("unexpected token response at {}", p.path()),
        },
        RequestTokenError::Other(m) => AuthError::Provider { message: m },
    }
}

fn map_discovery_error(e: openidconnect::DiscoveryError<HttpFailure>) -> AuthError {
    use openidconnect::DiscoveryError as D;
    match e {
        D::Request(f) => f.into(),
        D::Response(status, _, message) if status.is_server_error() || status.as_u16() == 429 => {
            AuthError::ProviderUnavailable {
                status: status.as_u16(),
                message,
            }
        }
        D::Response(status, _, message) => AuthError::Discovery {
            message: format!("HTTP {status}: {message}"),
        },
        D::Parse(p) => AuthError::Discovery {
            message: format!("unexpected discovery document: {p}"),
        },
        D::UrlParse(p) => AuthError::Discovery {
            message: p.to_string(),
        },
        D::Validation(m) | D::Other(m) => AuthError::Discovery { message: m },
        // The enum is non-exhaustive upstream.
        other => AuthError::Discovery {
            message: other.to_string(),
        },
    }
}

/// Why a request to the provider produced no usable HTTP response.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpFailure {
    /// Connect, TLS, timeout, reset.
    #[error("{0}")]
    Network(String),
    /// 5xx or 429: the provider is there but not serving.
    #[error("HTTP {status}")]
    Unavailable { status: u16 },
}

impl From<HttpFailure> for AuthError {
    fn from(f: HttpFailure) -> Self {
        match f {
            HttpFailure::Network(message) => AuthError::Network { message },
            HttpFailure::Unavailable { status } => AuthError::ProviderUnavailable {
                status,
                message: "try again later".into(),
            },
        }
    }
}

/// The provider's HTTP client. `openidconnect`'s own reqwest adapter reports a 502 HTML page
/// as a parse error; this one turns 5xx and 429 into [`HttpFailure::Unavailable`] so they are
/// retried instead of ending the session.
#[derive(Debug, Clone)]
pub(crate) struct ProviderHttp(pub(crate) reqwest::Client);

impl<'c> AsyncHttpClient<'c> for ProviderHttp {
    type Error = HttpFailure;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpFailure>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let net = |e: &dyn std::error::Error| HttpFailure::Network(error_chain(e));
            let request: reqwest::Request = request.try_into().map_err(|e| net(&e))?;
            let response = self.0.execute(request).await.map_err(|e| net(&e))?;
            let status = response.status();
            if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                return Err(HttpFailure::Unavailable {
                    status: status.as_u16(),
                });
            }
            let mut builder = openidconnect::http::Response::builder().status(status);
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let body = response.bytes().await.map_err(|e| net(&e))?;
            builder.body(body.to_vec()).map_err(|e| net(&e))
        })
    }
}

/// The HTTP client for provider calls: no redirects (a redirected token request is a
/// server-side request forgery vector), bounded time.
pub(crate) fn provider_client(timeout: Duration) -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .connect_timeout(timeout)
        .build()
        .map_err(|e| AuthError::Config {
            message: format!("HTTP client: {}", error_chain(&e)),
        })
}
