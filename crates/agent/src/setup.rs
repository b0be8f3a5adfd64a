//! Assembling an agent from settings and the environment: the one path both faces use, so
//! the desktop and the CLI never disagree about which model, inventory or limits apply.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nomos_exec::{Executor, ExecutorConfig, Inventory};
use nomos_llm::{Env, LlmSettings, TokenSource};
use nomos_store::Store;

use crate::{Agent, AgentConfig, AgentParts};

/// Runtime settings that are not secrets (the settings store holds these; keys live in the
/// keyring).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RuntimeSettings {
    /// Model provider: base URL, model, wire format.
    #[serde(default)]
    pub llm: LlmSettings,
    /// An inventory file (TOML) adding targets to the local workstation.
    #[serde(default)]
    pub inventory_path: Option<PathBuf>,
    /// Import `Host` entries of `~/.ssh/config` as targets.
    #[serde(default = "yes")]
    pub import_ssh_config: bool,
}

fn yes() -> bool {
    true
}

/// Why an agent could not be assembled; each names what the operator should fix.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(
        "No model is configured: {0}. Set a provider in Settings, or NOMOS_LLM_BASE_URL and NOMOS_LLM_MODEL (plus NOMOS_LLM_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or ANTHROPIC_API_KEY)."
    )]
    NoModel(String),
    #[error("The inventory file {path} could not be used: {message}")]
    Inventory { path: PathBuf, message: String },
    #[error("The executor could not start: {0}")]
    Executor(#[from] nomos_exec::ExecError),
}

impl SetupError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoModel(_) => "llm.not_configured",
            Self::Inventory { .. } => "inventory.invalid",
            Self::Executor(e) => e.code(),
        }
    }
}

/// The targets: this workstation, `~/.ssh/config` hosts (when asked), then the inventory file.
pub fn load_inventory(settings: &RuntimeSettings, env: &dyn Env) -> Result<Inventory, SetupError> {
    let mut inventory = Inventory::with_local();
    if settings.import_ssh_config
        && let Some(home) = env.var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
    {
        // A broken ~/.ssh/config must not stop the app; its hosts are simply not offered.
        match nomos_exec::ssh_config::load_ssh_config(&home.join(".ssh/config"), &home) {
            Ok(import) => {
                inventory.add_missing(import.targets());
            }
            Err(e) => tracing::warn!("~/.ssh/config not imported: {e}"),
        }
    }
    let path = settings.inventory_path.clone().or_else(|| {
        env.var("NOMOS_INVENTORY")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    if let Some(path) = path {
        let text = std::fs::read_to_string(&path).map_err(|e| SetupError::Inventory {
            path: path.clone(),
            message: e.to_string(),
        })?;
        inventory
            .merge_file(&text, &path.display().to_string())
            .map_err(|e| SetupError::Inventory {
                path,
                message: e.to_string(),
            })?;
    }
    Ok(inventory)
}

/// Builds the agent. `token` overrides the credential (the OIDC gateway's bearer).
pub fn assemble(
    store: Store,
    data_dir: &Path,
    settings: &RuntimeSettings,
    env: &dyn Env,
    token: Option<Arc<dyn TokenSource>>,
    config: AgentConfig,
) -> Result<Agent, SetupError> {
    let resolved = nomos_llm::resolve_config(&settings.llm, env, None)
        .map_err(|e| SetupError::NoModel(e.to_string()))?;
    let provider = nomos_llm::build_provider(&resolved, token)
        .map_err(|e| SetupError::NoModel(e.to_string()))?;
    let executor = Executor::new(ExecutorConfig::new(data_dir.join("exec")))?;
    let inventory = load_inventory(settings, env)?;
    Ok(Agent::new(AgentParts {
        store,
        provider,
        executor: Arc::new(executor),
        inventory,
        config,
    }))
}
