//! Which known service a base URL points at: it decides defaults (model, the token-cap
//! field) and the keyring account. A leaf module, so the providers and the config can both
//! ask without importing each other.

use serde::{Deserialize, Serialize};

/// Known services, for defaults and the keyring account name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Service {
    /// api.openai.com
    OpenAi,
    /// openrouter.ai
    OpenRouter,
    /// api.anthropic.com
    Anthropic,
    /// Ollama on this machine.
    Ollama,
    /// Anything else (vLLM, LiteLLM, llama.cpp, LM Studio, a gateway).
    Custom,
}

impl Service {
    /// The service a base URL points at, by its exact host (parsed, so
    /// `https://api.openai.com@evil.tld`, `https://api.openai.com.evil.tld` and
    /// `https://evil.tld/api.openai.com` are not OpenAI). Upper case, a trailing dot and the
    /// default port are the same host; another port is another service.
    pub(crate) fn from_base_url(url: &str) -> Self {
        let Ok(u) = reqwest::Url::parse(url.trim()) else {
            return Self::Custom;
        };
        let Some(host) = u.host_str() else {
            return Self::Custom;
        };
        let host = host.strip_suffix('.').unwrap_or(host);
        // The parser drops a scheme's default port, so `port()` is `None` exactly then.
        let default_port = u.port().is_none();
        if u.port() == Some(11434) {
            return Self::Ollama;
        }
        if !default_port || !u.username().is_empty() || u.password().is_some() {
            return Self::Custom;
        }
        match host {
            "api.openai.com" => Self::OpenAi,
            "openrouter.ai" => Self::OpenRouter,
            "api.anthropic.com" => Self::Anthropic,
            _ => Self::Custom,
        }
    }

    /// The conventional environment variable holding this service's key.
    pub fn key_env_var(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("OPENAI_API_KEY"),
            Self::OpenRouter => Some("OPENROUTER_API_KEY"),
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::Ollama | Self::Custom => None,
        }
    }
}
