//! Preferences in tauri-plugin-store (`settings.json`, no secrets) ↔ the agent's runtime
//! settings; API keys go to the OS keyring through the auth crate.

use std::path::Path;

use nomos_agent::setup::RuntimeSettings;
use nomos_protocol as wire;
use tauri_plugin_store::StoreExt as _;

/// Next to the database, so `NOMOS_DATA_DIR` moves everything together.
const FILE: &str = "settings.json";
const KEY: &str = "runtime";

pub fn to_wire(s: &RuntimeSettings) -> wire::Settings {
    wire::Settings {
        provider: s.llm.provider.map(|p| match p {
            nomos_llm::ProviderKind::OpenAiCompatible => wire::ProviderKind::OpenaiCompatible,
            nomos_llm::ProviderKind::Anthropic => wire::ProviderKind::Anthropic,
        }),
        base_url: s.llm.base_url.clone(),
        model: s.llm.model.clone(),
        inventory_path: s.inventory_path.as_ref().map(|p| p.display().to_string()),
        import_ssh_config: s.import_ssh_config,
    }
}

fn non_blank(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

pub fn from_wire(s: wire::Settings) -> RuntimeSettings {
    let mut out = RuntimeSettings::default();
    out.llm.provider = s.provider.map(|p| match p {
        wire::ProviderKind::OpenaiCompatible => nomos_llm::ProviderKind::OpenAiCompatible,
        wire::ProviderKind::Anthropic => nomos_llm::ProviderKind::Anthropic,
    });
    out.llm.base_url = non_blank(s.base_url);
    out.llm.model = non_blank(s.model);
    out.inventory_path = non_blank(s.inventory_path).map(Into::into);
    out.import_ssh_config = s.import_ssh_config;
    out
}

/// The saved settings; defaults when there are none or they cannot be read (logged).
pub fn load<R: tauri::Runtime>(app: &tauri::AppHandle<R>, data_dir: &Path) -> RuntimeSettings {
    let value = match app.store(data_dir.join(FILE)) {
        Ok(store) => store.get(KEY),
        Err(e) => {
            tracing::warn!("settings store unavailable: {e}");
            None
        }
    };
    match value.map(serde_json::from_value::<RuntimeSettings>) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            tracing::warn!("settings not understood, using defaults: {e}");
            RuntimeSettings::default()
        }
        None => RuntimeSettings {
            import_ssh_config: true,
            ..RuntimeSettings::default()
        },
    }
}

pub fn save<R: tauri::Runtime>(
    app: &tauri::AppHandle<R>,
    data_dir: &Path,
    settings: &RuntimeSettings,
) -> Result<(), wire::IpcError> {
    let fail = |e: String| {
        wire::IpcError::new("settings.save", format!("Settings could not be saved: {e}"))
    };
    let store = app
        .store(data_dir.join(FILE))
        .map_err(|e| fail(e.to_string()))?;
    store.set(
        KEY,
        serde_json::to_value(settings).map_err(|e| fail(e.to_string()))?,
    );
    store.save().map_err(|e| fail(e.to_string()))
}

/// The keyring account the configured endpoint's key lives under.
pub fn api_key_account(settings: &RuntimeSettings) -> Option<String> {
    nomos_llm::resolve_config(&settings.llm, &nomos_llm::ProcessEnv, None)
        .ok()
        .map(|c| c.keyring_account())
}
