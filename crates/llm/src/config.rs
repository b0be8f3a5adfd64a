//! Which provider, base URL, model and credential to use, resolved from settings and the
//! environment.
//!
//! Resolution is a pure function of the settings, an injected [`Env`] and the result of an
//! optional Ollama probe, so every precedence rule is unit-tested. API keys never come from
//! settings: they come from the environment or, via the auth layer, from the keyring.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::auth::{Env, StaticToken, TokenSource};
use crate::error::LlmError;
use crate::openai::{OpenAiConfig, OpenAiProvider};
use crate::provider::Provider;
use crate::service::Service;
use crate::transport::{AuthStyle, StreamLimits, is_loopback};
use nomos_base::Secret;

/// Environment variable: base URL override.
pub const ENV_BASE_URL: &str = "NOMOS_LLM_BASE_URL";
/// Environment variable: model override.
pub const ENV_MODEL: &str = "NOMOS_LLM_MODEL";
/// Environment variable: API key override.
pub const ENV_API_KEY: &str = "NOMOS_LLM_API_KEY";
/// Environment variable: wire format override (`openai` or `anthropic`).
pub const ENV_PROVIDER: &str = "NOMOS_LLM_PROVIDER";

/// OpenAI's API.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// OpenRouter's OpenAI-compatible API.
pub const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";
/// Anthropic's API.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Ollama's OpenAI-compatible API on this machine.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434/v1";

/// Default models when neither settings nor environment name one. The operator can
/// always override them; they only make "I exported OPENAI_API_KEY" work out of the box.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1-mini";
/// Default OpenRouter model.
pub const DEFAULT_OPENROUTER_MODEL: &str = "openai/gpt-4.1-mini";
/// Default Anthropic model.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// The wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions (OpenAI, OpenRouter, Ollama, vLLM, LiteLLM, llama.cpp, LM Studio).
    #[serde(alias = "openai")]
    OpenAiCompatible,
    /// Anthropic Messages.
    Anthropic,
}

/// Provider preferences as stored in the settings file. Deliberately has no key field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmSettings {
    /// Wire format; inferred from the base URL when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderKind>,
    /// Base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Send the credential as a bearer token even to Anthropic (organisation gateway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_style: Option<AuthStyle>,
    /// Idle timeout in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
}

/// What an Ollama probe found (see [`probe_ollama`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaProbe {
    /// The OpenAI-compatible base URL.
    pub base_url: String,
    /// Installed models, as listed by the server.
    pub models: Vec<String>,
}

/// Where the credential comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// No credential (local servers).
    None,
    /// Read from this environment variable.
    Env {
        /// Variable name.
        var: String,
        /// Its value.
        key: Secret,
    },
    /// Ask the credential store (the auth layer's keyring-backed [`TokenSource`]) for the
    /// key of [`ResolvedConfig::keyring_account`].
    Stored,
}

/// The result of configuration resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedConfig {
    /// Wire format.
    pub kind: ProviderKind,
    /// Service, for defaults and the keyring account.
    pub service: Service,
    /// Base URL.
    pub base_url: String,
    /// Model.
    pub model: String,
    /// Credential source.
    pub credential: Credential,
    /// How the credential is presented.
    pub auth_style: AuthStyle,
    /// Idle timeout.
    pub idle_timeout: Duration,
}

impl ResolvedConfig {
    /// The keyring account under which the auth layer stores this endpoint's key: the
    /// endpoint's scheme, host and port (`llm:https://api.openai.com:443`), so keys for two
    /// servers, or for the same host over another scheme or port, never mix.
    pub fn keyring_account(&self) -> String {
        endpoint_account(&self.base_url)
    }
}

/// `llm:<scheme>://<host>:<port>` for a base URL; the host as the URL parser normalises it
/// (lower case, IDN as punycode) without a trailing dot, the port explicit.
pub fn endpoint_account(base_url: &str) -> String {
    let origin = reqwest::Url::parse(base_url.trim()).ok().and_then(|u| {
        let host = u.host_str()?;
        let host = host.strip_suffix('.').unwrap_or(host);
        let port = u.port_or_known_default()?;
        Some(format!("{}://{host}:{port}", u.scheme()))
    });
    format!(
        "llm:{}",
        origin.unwrap_or_else(|| base_url.trim().to_owned())
    )
}

/// The account name builds before scheme-keyed entries used (`llm:<host>[:<port>]`), for an
/// HTTPS or loopback endpoint only: a key stored under it is migrated, never sent elsewhere.
pub fn legacy_endpoint_account(base_url: &str) -> Option<String> {
    let u = reqwest::Url::parse(base_url.trim()).ok()?;
    let host = u.host_str()?;
    Some(match u.port() {
        Some(p) => format!("llm:{host}:{p}"),
        None => format!("llm:{host}"),
    })
}

fn non_blank(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// Resolves the provider configuration.
///
/// Precedence, highest first:
/// 1. `NOMOS_LLM_PROVIDER` / `NOMOS_LLM_BASE_URL` / `NOMOS_LLM_MODEL` / `NOMOS_LLM_API_KEY`
///    (headless runs and CI override whatever the app saved);
/// 2. the saved settings (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` count as settings-level
///    defaults for their service);
/// 3. the conventional keys, in this order: `OPENAI_API_KEY`, `OPENROUTER_API_KEY`,
///    `ANTHROPIC_API_KEY`;
/// 4. Ollama on this machine when `ollama` says it answered.
///
/// The key: `NOMOS_LLM_API_KEY`, else the service's conventional variable, else no key for
/// a loopback server, else [`Credential::Stored`].
pub fn resolve_config(
    settings: &LlmSettings,
    env: &dyn Env,
    ollama: Option<&OllamaProbe>,
) -> Result<ResolvedConfig, LlmError> {
    let var = |name: &str| non_blank(env.var(name));

    let explicit_kind = match var(ENV_PROVIDER).as_deref() {
        Some("openai") | Some("openai-compatible") | Some("openai_compatible") => {
            Some(ProviderKind::OpenAiCompatible)
        }
        Some("anthropic") => Some(ProviderKind::Anthropic),
        Some(other) => {
            return Err(LlmError::Config {
                message: format!("{ENV_PROVIDER}={other:?}: expected \"openai\" or \"anthropic\""),
            });
        }
        None => settings.provider,
    };
    let explicit_base = var(ENV_BASE_URL).or_else(|| non_blank(settings.base_url.clone()));

    // Pick the endpoint.
    let (base_url, mut kind_guess, mut ollama_model) = match explicit_base {
        Some(url) => {
            let kind = if Service::from_base_url(&url) == Service::Anthropic {
                ProviderKind::Anthropic
            } else {
                ProviderKind::OpenAiCompatible
            };
            (url, kind, None)
        }
        None => {
            let wants_anthropic = explicit_kind == Some(ProviderKind::Anthropic);
            if wants_anthropic {
                (
                    var("ANTHROPIC_BASE_URL").unwrap_or_else(|| ANTHROPIC_BASE_URL.to_owned()),
                    ProviderKind::Anthropic,
                    None,
                )
            } else if var("OPENAI_API_KEY").is_some() || var("OPENAI_BASE_URL").is_some() {
                (
                    var("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
                    ProviderKind::OpenAiCompatible,
                    None,
                )
            } else if var("OPENROUTER_API_KEY").is_some() {
                (
                    OPENROUTER_BASE_URL.to_owned(),
                    ProviderKind::OpenAiCompatible,
                    None,
                )
            } else if var("ANTHROPIC_API_KEY").is_some() && explicit_kind.is_none() {
                (
                    var("ANTHROPIC_BASE_URL").unwrap_or_else(|| ANTHROPIC_BASE_URL.to_owned()),
                    ProviderKind::Anthropic,
                    None,
                )
            } else if let Some(probe) = ollama {
                (
                    probe.base_url.clone(),
                    ProviderKind::OpenAiCompatible,
                    probe.models.first().cloned(),
                )
            } else if var(ENV_API_KEY).is_some() && explicit_kind.is_some() {
                (
                    OPENAI_BASE_URL.to_owned(),
                    ProviderKind::OpenAiCompatible,
                    None,
                )
            } else {
                return Err(LlmError::Config {
                    message: format!(
                        "no model provider configured: choose one in Settings, or set \
                         {ENV_BASE_URL} and {ENV_MODEL} (plus {ENV_API_KEY}), or export \
                         OPENAI_API_KEY, OPENROUTER_API_KEY or ANTHROPIC_API_KEY, or start Ollama"
                    ),
                });
            }
        }
    };
    if let Some(k) = explicit_kind {
        kind_guess = k;
    }
    let kind = kind_guess;
    let service = Service::from_base_url(&base_url);
    if service != Service::Ollama {
        ollama_model = None;
    } else if ollama_model.is_none() {
        ollama_model = ollama
            .filter(|p| p.base_url == base_url)
            .and_then(|p| p.models.first().cloned());
    }

    let model = var(ENV_MODEL)
        .or_else(|| non_blank(settings.model.clone()))
        .or(ollama_model)
        .or_else(|| match service {
            Service::OpenAi => Some(DEFAULT_OPENAI_MODEL.to_owned()),
            Service::OpenRouter => Some(DEFAULT_OPENROUTER_MODEL.to_owned()),
            Service::Anthropic => Some(DEFAULT_ANTHROPIC_MODEL.to_owned()),
            Service::Ollama | Service::Custom => None,
        })
        .ok_or_else(|| LlmError::Config {
            message: format!(
                "no model configured for {base_url}: set one in Settings or {ENV_MODEL}"
            ),
        })?;

    let url = reqwest::Url::parse(&base_url).map_err(|e| LlmError::Config {
        message: format!("invalid base URL {base_url:?}: {e}"),
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(LlmError::Config {
            message: "the base URL must not hold a user name or password; store the key with \
                      the API key setting instead"
                .to_owned(),
        });
    }
    let cleartext = crate::transport::refuse_cleartext_credential(&url);
    let credential = if let Some(key) = var(ENV_API_KEY) {
        Credential::Env {
            var: ENV_API_KEY.to_owned(),
            key: Secret::new(key),
        }
    } else if let Some((name, key)) = service
        .key_env_var()
        .and_then(|name| var(name).map(|k| (name, k)))
    {
        Credential::Env {
            var: name.to_owned(),
            key: Secret::new(key),
        }
    } else if is_loopback(&url) {
        Credential::None
    } else {
        Credential::Stored
    };
    // A key (from the environment or the keyring) never crosses the network in clear text.
    if credential != Credential::None {
        cleartext?;
    }

    let auth_style = settings.auth_style.unwrap_or(match kind {
        ProviderKind::Anthropic => AuthStyle::XApiKey,
        ProviderKind::OpenAiCompatible => AuthStyle::Bearer,
    });
    let idle_timeout = settings
        .idle_timeout_secs
        .map(Duration::from_secs)
        .unwrap_or(StreamLimits::default().idle_timeout);

    Ok(ResolvedConfig {
        kind,
        service,
        base_url,
        model,
        credential,
        auth_style,
        idle_timeout,
    })
}

/// Builds the provider for a resolved configuration.
///
/// `token` is the auth layer's source (keyring key or OIDC bearer); when `None`, an
/// environment key from the configuration is used as a static token.
pub fn build_provider(
    config: &ResolvedConfig,
    token: Option<Arc<dyn TokenSource>>,
) -> Result<Arc<dyn Provider>, LlmError> {
    let token = token.or_else(|| match &config.credential {
        Credential::Env { key, .. } => {
            Some(Arc::new(StaticToken::new(key.clone())) as Arc<dyn TokenSource>)
        }
        Credential::None | Credential::Stored => None,
    });
    let limits = StreamLimits {
        idle_timeout: config.idle_timeout,
        ..StreamLimits::default()
    };
    Ok(match config.kind {
        ProviderKind::OpenAiCompatible => {
            let mut c = OpenAiConfig::new(config.base_url.clone(), config.model.clone());
            c.auth = config.auth_style;
            c.limits = limits;
            if config.service == Service::OpenRouter {
                // OpenRouter's app attribution.
                c.extra_headers = vec![("X-Title".into(), "Nomos".into())];
            }
            Arc::new(OpenAiProvider::new(c, token)?)
        }
        ProviderKind::Anthropic => {
            let mut c = AnthropicConfig::new(config.base_url.clone(), config.model.clone());
            c.auth = config.auth_style;
            c.limits = limits;
            Arc::new(AnthropicProvider::new(c, token)?)
        }
    })
}

/// Asks an Ollama server for its models (`GET {base}/models`, OpenAI-compatible). `None`
/// when nothing answers within `timeout` — the caller then simply doesn't offer Ollama.
pub async fn probe_ollama(base_url: &str, timeout: Duration) -> Option<OllamaProbe> {
    #[derive(Deserialize)]
    struct Models {
        data: Vec<Model>,
    }
    #[derive(Deserialize)]
    struct Model {
        id: String,
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(timeout)
        .build()
        .ok()?;
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let models: Models = response.json().await.ok()?;
    Some(OllamaProbe {
        base_url: base_url.to_owned(),
        models: models.data.into_iter().map(|m| m.id).collect(),
    })
}
