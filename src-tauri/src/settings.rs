//! Preferences in tauri-plugin-store (`settings.json` next to the database, no secrets) ↔ the
//! agent's runtime settings and the sign-in provider; API keys go to the OS keyring through
//! the auth crate.

use std::path::Path;

use nomos_agent::setup::RuntimeSettings;
use nomos_protocol as wire;
use serde::{Deserialize, Serialize};
use tauri_plugin_store::StoreExt as _;

/// Next to the database, so `NOMOS_DATA_DIR` moves everything together.
const FILE: &str = "settings.json";
const RUNTIME: &str = "runtime";
const AUTH: &str = "auth";
const VIEW: &str = "view";

/// Preferences of the views (no effect on the agent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewSettings {
    /// Days after which the graph marks a fact stale (empty: the default).
    #[serde(default)]
    pub stale_after_days: Option<u32>,
}

/// The sign-in provider (identifiers only; tokens live in the keyring).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthSettings {
    #[serde(default)]
    pub issuer: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    /// The model gateway takes the signed-in access token as its bearer.
    #[serde(default)]
    pub model_uses_sign_in: bool,
}

impl AuthSettings {
    pub fn provider(&self) -> Option<(&str, &str)> {
        Some((self.issuer.as_deref()?, self.client_id.as_deref()?))
    }
}

/// Everything the Settings view edits.
#[derive(Debug, Clone, Default)]
pub struct Saved {
    pub runtime: RuntimeSettings,
    pub auth: AuthSettings,
    pub view: ViewSettings,
}

pub fn to_wire(s: &Saved) -> wire::Settings {
    wire::Settings {
        provider: s.runtime.llm.provider.map(|p| match p {
            nomos_llm::ProviderKind::OpenAiCompatible => wire::ProviderKind::OpenaiCompatible,
            nomos_llm::ProviderKind::Anthropic => wire::ProviderKind::Anthropic,
        }),
        base_url: s.runtime.llm.base_url.clone(),
        model: s.runtime.llm.model.clone(),
        inventory_path: s
            .runtime
            .inventory_path
            .as_ref()
            .map(|p| p.display().to_string()),
        import_ssh_config: s.runtime.import_ssh_config,
        oidc_issuer: s.auth.issuer.clone(),
        oidc_client_id: s.auth.client_id.clone(),
        model_uses_sign_in: s.auth.model_uses_sign_in,
        max_iterations: s.runtime.limits.max_iterations,
        session_token_budget: s.runtime.limits.session_token_budget,
        run_wait_secs: s.runtime.limits.run_wait_secs,
        command_timeout_secs: s.runtime.limits.command_timeout_secs,
        model_request_secs: s.runtime.limits.model_request_secs,
        turn_deadline_mins: s.runtime.limits.turn_deadline_mins,
        stale_after_days: s.view.stale_after_days,
    }
}

/// The stale threshold the operator typed: empty, or whole days within the accepted range.
pub fn stale_after_days(days: Option<u32>) -> Result<Option<u32>, wire::IpcError> {
    match days {
        None => Ok(None),
        Some(d) if (1..=wire::MAX_STALE_AFTER_DAYS).contains(&d) => Ok(Some(d)),
        Some(d) => Err(wire::IpcError::new(
            wire::ErrorCode::SettingsInvalid,
            format!(
                "The stale threshold must be between 1 and {} days (got {d}); leave it empty for {}.",
                wire::MAX_STALE_AFTER_DAYS,
                wire::DEFAULT_STALE_AFTER_DAYS
            ),
        )),
    }
}

fn non_blank(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// The form's settings, validated.
pub fn from_wire(s: wire::Settings) -> Result<Saved, wire::IpcError> {
    let view = ViewSettings {
        stale_after_days: stale_after_days(s.stale_after_days)?,
    };
    let mut runtime = RuntimeSettings::default();
    runtime.llm.provider = s.provider.map(|p| match p {
        wire::ProviderKind::OpenaiCompatible => nomos_llm::ProviderKind::OpenAiCompatible,
        wire::ProviderKind::Anthropic => nomos_llm::ProviderKind::Anthropic,
    });
    runtime.llm.base_url = non_blank(s.base_url);
    runtime.llm.model = non_blank(s.model);
    runtime.inventory_path = non_blank(s.inventory_path).map(Into::into);
    runtime.import_ssh_config = s.import_ssh_config;
    runtime.limits = nomos_agent::setup::Limits {
        max_iterations: s.max_iterations,
        session_token_budget: s.session_token_budget,
        run_wait_secs: s.run_wait_secs,
        command_timeout_secs: s.command_timeout_secs,
        // Not on the settings form yet: the 30-minute default applies (I23).
        approval_window_mins: None,
        model_request_secs: s.model_request_secs,
        turn_deadline_mins: s.turn_deadline_mins,
    };
    Ok(Saved {
        runtime,
        auth: AuthSettings {
            issuer: non_blank(s.oidc_issuer),
            client_id: non_blank(s.oidc_client_id),
            model_uses_sign_in: s.model_uses_sign_in,
        },
        view,
    })
}

fn read<T: serde::de::DeserializeOwned>(value: Option<serde_json::Value>, what: &str) -> Option<T> {
    match value.map(serde_json::from_value::<T>) {
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            tracing::warn!("{what} settings not understood, using defaults: {e}");
            None
        }
        None => None,
    }
}

/// The saved settings; defaults when there are none or they cannot be read (logged).
pub fn load<R: tauri::Runtime>(app: &tauri::AppHandle<R>, data_dir: &Path) -> Saved {
    let store = match app.store(data_dir.join(FILE)) {
        Ok(store) => store,
        Err(e) => {
            tracing::warn!("settings store unavailable: {e}");
            return Saved::default();
        }
    };
    Saved {
        runtime: read(store.get(RUNTIME), "runtime").unwrap_or_default(),
        auth: read(store.get(AUTH), "sign-in").unwrap_or_default(),
        // A threshold edited out of range in the file is ignored (logged), not obeyed.
        view: read::<ViewSettings>(store.get(VIEW), "view")
            .map(|v| ViewSettings {
                stale_after_days: stale_after_days(v.stale_after_days).unwrap_or_else(|e| {
                    tracing::warn!("view settings: {}", e.message);
                    None
                }),
            })
            .unwrap_or_default(),
    }
}

pub fn save<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    data_dir: &Path,
    saved: &Saved,
) -> Result<(), wire::IpcError> {
    let fail = |e: String| {
        wire::IpcError::new(
            wire::ErrorCode::SettingsSave,
            format!("Settings could not be saved: {e}"),
        )
    };
    let store = app
        .store(data_dir.join(FILE))
        .map_err(|e| fail(e.to_string()))?;
    store.set(
        RUNTIME,
        serde_json::to_value(&saved.runtime).map_err(|e| fail(e.to_string()))?,
    );
    store.set(
        AUTH,
        serde_json::to_value(&saved.auth).map_err(|e| fail(e.to_string()))?,
    );
    store.set(
        VIEW,
        serde_json::to_value(&saved.view).map_err(|e| fail(e.to_string()))?,
    );
    store.save().map_err(|e| fail(e.to_string()))
}

/// The keyring account the configured endpoint's key lives under.
pub fn api_key_account(settings: &RuntimeSettings) -> Option<String> {
    nomos_llm::resolve_config(&settings.llm, &nomos_llm::ProcessEnv, None)
        .ok()
        .map(|c| c.keyring_account())
}
