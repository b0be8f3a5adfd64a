use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::IpcError;

/// The model's wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, vLLM, LiteLLM, …).
    OpenaiCompatible,
    /// Anthropic Messages.
    Anthropic,
}

/// Preferences the operator edits in Settings. Never a secret: API keys go to the keyring.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Settings {
    /// Empty means: guess from the base URL and the environment.
    pub provider: Option<ProviderKind>,
    /// e.g. `https://openrouter.ai/api/v1` or `http://127.0.0.1:11434/v1`.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// An inventory file (TOML) adding targets to this workstation.
    pub inventory_path: Option<String>,
    /// Offer `~/.ssh/config` hosts as targets.
    pub import_ssh_config: bool,
    /// The organisation's OpenID Provider (issuer URL), for sign-in.
    pub oidc_issuer: Option<String>,
    /// The client id registered for Nomos at that provider.
    pub oidc_client_id: Option<String>,
    /// Send the signed-in access token as the model gateway's bearer.
    #[serde(default)]
    pub model_uses_sign_in: bool,
    /// Model iterations in one turn before the runaway guard stops it (empty: default).
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Tokens one session may spend (empty: default).
    #[ts(type = "number | null")]
    #[serde(default)]
    pub session_token_budget: Option<u64>,
    /// Seconds `run` waits before a command continues in the background (empty: default).
    #[ts(type = "number | null")]
    #[serde(default)]
    pub run_wait_secs: Option<u64>,
    /// Hard limit for one command, in seconds (empty: default).
    #[ts(type = "number | null")]
    #[serde(default)]
    pub command_timeout_secs: Option<u64>,
    /// Longest one model request may take, retries included, in seconds (empty: 300).
    #[ts(type = "number | null")]
    #[serde(default)]
    pub model_request_secs: Option<u64>,
    /// Longest one turn may take, in minutes (empty: 30).
    #[ts(type = "number | null")]
    #[serde(default)]
    pub turn_deadline_mins: Option<u64>,
    /// Days after which a fact neither changed nor audited is marked stale in the graph view
    /// and the node details (empty: `DEFAULT_STALE_AFTER_DAYS`; 1 to `MAX_STALE_AFTER_DAYS`).
    #[serde(default)]
    pub stale_after_days: Option<u32>,
}

/// Stale threshold when Settings leave it empty: a monthly audit cycle may leave a fact
/// unchecked for thirty days.
pub const DEFAULT_STALE_AFTER_DAYS: u32 = 30;
/// The longest stale threshold Settings accept (ten years): beyond it nothing is ever stale.
pub const MAX_STALE_AFTER_DAYS: u32 = 3650;

/// Where sign-in stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SignInState {
    /// No provider configured in Settings.
    NotConfigured,
    SignedOut,
    SignedIn,
    /// Refreshing, or retrying after a network error.
    Refreshing,
    /// The session ended (revoked, expired refresh token): the operator must sign in again.
    NeedsSignIn,
}

/// The sign-in status shown in the title bar, the banner and Settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AuthStatusView {
    pub state: SignInState,
    /// Email, name or subject of the signed-in operator.
    pub who: Option<String>,
    /// When the current access token expires (ms since the epoch); it is refreshed before.
    #[ts(type = "number | null")]
    pub expires_at_ms: Option<i64>,
    /// Why the operator must sign in again, or the last refresh error.
    pub detail: Option<String>,
}

/// Settings plus what they led to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SettingsView {
    pub settings: Settings,
    /// The agent is ready to take tasks.
    pub agent_ready: bool,
    /// Why it is not (no model, no key, a broken inventory …).
    pub agent_error: Option<IpcError>,
    /// The keyring account an API key for the configured endpoint is stored under.
    pub api_key_account: Option<String>,
}

/// A "Test connection" that succeeded: the provider answered one tiny real request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ConnectionCheck {
    pub provider: ProviderKind,
    pub base_url: String,
    pub model: String,
    /// The start of what the model answered (empty when it answered with nothing).
    pub reply: String,
    /// From the first byte sent to the end of the reply.
    #[ts(type = "number")]
    pub elapsed_ms: u64,
}
