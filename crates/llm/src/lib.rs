//! Model providers for Nomos.
//!
//! The agent talks to a model through one object-safe trait, [`Provider`]: send a
//! [`ChatRequest`], receive [`StreamEvent`]s as they arrive, get back an assembled
//! [`ChatResponse`] (text, reasoning, tool calls with their exact argument strings, finish
//! reason, usage). Two implementations speak real wire formats:
//!
//! - [`OpenAiProvider`]: OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama,
//!   vLLM, LiteLLM, llama.cpp server, LM Studio, …);
//! - [`AnthropicProvider`]: Anthropic Messages.
//!
//! Failures are typed ([`LlmError`]) with a stable [`code`](LlmError::code), an exhaustive
//! [`is_retryable`](LlmError::is_retryable) and the provider's own message. Retries with
//! backoff, jitter and Retry-After live in [`stream_with_retries`] / [`with_retries`]; a
//! 401 triggers exactly one credential refresh through [`TokenSource`]. Configuration is
//! resolved from settings and an injected environment by [`resolve_config`].
//!
//! **Architecture invariant:** this is the only crate that knows a provider's wire format;
//! it never touches the keyring (the `auth` crate implements [`TokenSource`] for that).

mod anthropic;
mod auth;
mod config;
mod error;
mod openai;
mod provider;
mod retry;
mod service;
mod transport;
mod types;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicConfig, AnthropicProvider, DEFAULT_MAX_TOKENS};
pub use auth::{CredentialError, Env, EnvToken, MapEnv, ProcessEnv, StaticToken, TokenSource};
pub use config::{
    ANTHROPIC_BASE_URL, Credential, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL,
    DEFAULT_OPENROUTER_MODEL, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ENV_PROVIDER, LlmSettings,
    OLLAMA_BASE_URL, OPENAI_BASE_URL, OPENROUTER_BASE_URL, OllamaProbe, ProviderKind,
    ResolvedConfig, build_provider, endpoint_account, legacy_endpoint_account, probe_ollama,
    resolve_config,
};
pub use error::{ErrorInfo, LlmError, parse_retry_after};
/// The workspace's one clock and one secret, re-exported so the provider API stays whole.
pub use nomos_base::{Clock, Secret, SystemClock};
pub use openai::{MaxTokensField, OpenAiConfig, OpenAiProvider, assemble_data_lines};
pub use provider::Provider;
pub use retry::{
    FixedJitter, Jitter, RandomJitter, Retrier, RetryPolicy, Sleeper, TokioSleeper,
    stream_with_retries, with_retries,
};
pub use service::Service;
pub use transport::{AuthStyle, StreamLimits, WireFormat, assemble_body};
pub use types::{
    ChannelSink, ChatRequest, ChatResponse, EventSink, FinishReason, Message, NullSink,
    StreamEvent, ToolCall, ToolSpec, Usage,
};
