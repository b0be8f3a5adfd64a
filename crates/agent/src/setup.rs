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
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
    /// Limits the operator changed; unset ones keep the agent's defaults.
    #[serde(default)]
    pub limits: Limits,
}

/// The same defaults as a settings file with no fields: `~/.ssh/config` is imported, so the
/// CLI and the desktop see the same targets.
impl Default for RuntimeSettings {
    fn default() -> Self {
        Self {
            llm: LlmSettings::default(),
            inventory_path: None,
            import_ssh_config: yes(),
            limits: Limits::default(),
        }
    }
}

/// The agent's limits an operator may tune (DESIGN.md I20 runaway guard, execution times).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Model iterations in one turn before the runaway guard stops it.
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Tokens one session may spend.
    #[serde(default)]
    pub session_token_budget: Option<u64>,
    /// How long `run` waits before a command continues in the background, in seconds.
    #[serde(default)]
    pub run_wait_secs: Option<u64>,
    /// Hard limit for one command, in seconds.
    #[serde(default)]
    pub command_timeout_secs: Option<u64>,
    /// How long an approval window stays open, in minutes (I23; default 30).
    #[serde(default)]
    pub approval_window_mins: Option<u64>,
    /// Longest one model request may take, retries included, in seconds (default 300).
    #[serde(default)]
    pub model_request_secs: Option<u64>,
    /// Longest one turn may take, in minutes (default 30).
    #[serde(default)]
    pub turn_deadline_mins: Option<u64>,
}

impl Limits {
    /// `base` with every limit the operator set applied (zero is ignored: it would stop
    /// everything).
    pub fn apply(&self, mut base: AgentConfig) -> AgentConfig {
        if let Some(n) = self.max_iterations.filter(|n| *n > 0) {
            base.max_iterations = n;
        }
        if let Some(n) = self.session_token_budget.filter(|n| *n > 0) {
            base.session_token_budget = n;
        }
        if let Some(s) = self.run_wait_secs.filter(|s| *s > 0) {
            base.run_wait = std::time::Duration::from_secs(s);
        }
        if let Some(s) = self.command_timeout_secs.filter(|s| *s > 0) {
            base.command_timeout = std::time::Duration::from_secs(s);
        }
        if let Some(m) = self.approval_window_mins.filter(|m| *m > 0) {
            base.approval_window_ttl = std::time::Duration::from_secs(m.saturating_mul(60));
        }
        if let Some(s) = self.model_request_secs.filter(|s| *s > 0) {
            base.model_retry.max_total = std::time::Duration::from_secs(s);
        }
        if let Some(m) = self.turn_deadline_mins.filter(|m| *m > 0) {
            base.turn_deadline = std::time::Duration::from_secs(m.saturating_mul(60));
        }
        base
    }
}

fn yes() -> bool {
    true
}

/// The settings file the desktop's Settings view writes, beside the database (one JSON
/// object; its `runtime` entry is a [`RuntimeSettings`]).
pub const SETTINGS_FILE: &str = "settings.json";

impl RuntimeSettings {
    /// The settings saved in `data_dir`, so a face without the Settings view (the CLI)
    /// applies the same model, inventory and limits as the desktop. No file, or no `runtime`
    /// entry: the defaults. A file that cannot be read or understood is an error naming it;
    /// the caller decides whether to go on with the defaults (the desktop does, logged).
    pub fn load(data_dir: &Path) -> Result<Self, SettingsFileError> {
        let path = data_dir.join(SETTINGS_FILE);
        let fail = |message: String| SettingsFileError {
            path: path.clone(),
            message,
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(fail(e.to_string())),
        };
        let mut file: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        match file.remove("runtime") {
            None | Some(serde_json::Value::Null) => Ok(Self::default()),
            Some(v) => serde_json::from_value(v).map_err(|e| fail(format!("runtime: {e}"))),
        }
    }
}

/// A settings file that could not be read or understood.
#[derive(Debug, thiserror::Error)]
#[error("The settings file {path} could not be used: {message}")]
pub struct SettingsFileError {
    pub path: PathBuf,
    pub message: String,
}

/// Why an agent could not be assembled; each names what the operator should fix.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The provider configuration is incomplete; the llm crate's message says what to set.
    #[error("{0}")]
    NoModel(String),
    #[error("The inventory file {path} could not be used: {message}")]
    Inventory { path: PathBuf, message: String },
    #[error(
        "No API key is stored for {account}. Add it in Settings (it is kept in the OS keyring) or set NOMOS_LLM_API_KEY."
    )]
    NoApiKey { account: String },
    #[error("The API key for {account} could not be read from the OS keyring: {message}")]
    Keyring { account: String, message: String },
    #[error("The executor could not start: {0}")]
    Executor(#[from] nomos_exec::ExecError),
}

impl SetupError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoModel(_) => "llm.not_configured",
            Self::Inventory { .. } => "inventory.invalid",
            Self::NoApiKey { .. } => "llm.no_api_key",
            Self::Keyring { .. } => "auth.keyring",
            Self::Executor(e) => e.code(),
        }
    }

    /// Whether assembling again may succeed without the operator changing anything (a
    /// keyring that was locked or slow, an executor that failed for a passing reason).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Keyring { .. } => true,
            Self::Executor(e) => e.is_retryable(),
            Self::NoModel(_) | Self::Inventory { .. } | Self::NoApiKey { .. } => false,
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

/// Builds the agent from settings and the environment. The credential is `token` when given
/// (the sign-in session for an organisation gateway), else an environment key, else a key
/// stored in the OS keyring (DESIGN.md §8: keys never in settings files).
pub async fn assemble_from_settings(
    store: Store,
    data_dir: &Path,
    settings: &RuntimeSettings,
    env: &dyn Env,
    token: Option<Arc<dyn TokenSource>>,
    config: AgentConfig,
) -> Result<Agent, SetupError> {
    let resolved = nomos_llm::resolve_config(&settings.llm, env, None)
        .map_err(|e| SetupError::NoModel(e.to_string()))?;
    let token = credential_for(&resolved, token).await?;
    assemble(store, data_dir, settings, env, token, config)
}

/// The model the settings name, with its credential resolved as
/// [`assemble_from_settings`] does: for a face that builds the rest of the agent itself
/// (live evals run commands in a sandbox of their own).
pub async fn provider_from_settings(
    settings: &RuntimeSettings,
    env: &dyn Env,
    token: Option<Arc<dyn TokenSource>>,
) -> Result<Arc<dyn nomos_llm::Provider>, SetupError> {
    let resolved = nomos_llm::resolve_config(&settings.llm, env, None)
        .map_err(|e| SetupError::NoModel(e.to_string()))?;
    let token = credential_for(&resolved, token).await?;
    nomos_llm::build_provider(&resolved, token).map_err(|e| SetupError::NoModel(e.to_string()))
}

/// The credential a resolved endpoint is called with: `token` when given (the sign-in
/// session for an organisation gateway), else the key stored in the OS keyring when the
/// configuration expects one; `None` leaves an environment key (or no key) to the provider.
pub async fn credential_for(
    resolved: &nomos_llm::ResolvedConfig,
    token: Option<Arc<dyn TokenSource>>,
) -> Result<Option<Arc<dyn TokenSource>>, SetupError> {
    Ok(match (token, &resolved.credential) {
        // The sign-in session is the gateway's bearer.
        (Some(token), _) => Some(token),
        (None, nomos_llm::Credential::Stored) => {
            let account = resolved.keyring_account();
            match load_or_migrate_key(&account, &resolved.base_url).await {
                Ok(Some(key)) => Some(Arc::new(nomos_llm::StaticToken::new(key))),
                Ok(None) => return Err(SetupError::NoApiKey { account }),
                Err(e) => {
                    return Err(SetupError::Keyring {
                        account,
                        message: e.to_string(),
                    });
                }
            }
        }
        (None, nomos_llm::Credential::None | nomos_llm::Credential::Env { .. }) => None,
    })
}

/// The endpoint's key; a key an earlier build stored under the host-only account name is
/// copied to the scheme-keyed one (the old entry stays, so nothing is lost).
async fn load_or_migrate_key(
    account: &str,
    base_url: &str,
) -> Result<Option<nomos_auth::Secret>, nomos_auth::AuthError> {
    if let Some(key) = nomos_auth::api_keys::load_api_key(account).await? {
        return Ok(Some(key));
    }
    let Some(legacy) = nomos_llm::legacy_endpoint_account(base_url) else {
        return Ok(None);
    };
    let Some(key) = nomos_auth::api_keys::load_api_key(&legacy).await? else {
        return Ok(None);
    };
    if let Err(e) = nomos_auth::api_keys::store_api_key(account, &key).await {
        tracing::warn!("could not move the API key to {account}: {e}");
    }
    Ok(Some(key))
}

/// Builds the agent. `token` overrides the credential (a keyring key, the OIDC gateway's
/// bearer).
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
        config: settings.limits.apply(config),
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Issue 17: `nomos ask` uses the default settings and must import `~/.ssh/config`
    /// like the desktop does (the README says both faces offer those hosts).
    #[test]
    fn default_settings_import_ssh_config_hosts() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::write(
            home.path().join(".ssh/config"),
            "Host web1\n  HostName 10.0.0.5\n  User ops\n",
        )
        .unwrap();
        let env = nomos_llm::MapEnv::from_pairs([("HOME", home.path().display().to_string())]);
        let inv = load_inventory(&RuntimeSettings::default(), &env).unwrap();
        let slugs: Vec<String> = inv.targets().map(|t| t.slug.to_string()).collect();
        assert!(slugs.iter().any(|s| s.contains("web1")), "{slugs:?}");
        // A settings file written before the field existed reads the same way.
        let old: RuntimeSettings = serde_json::from_str("{}").unwrap();
        assert!(old.import_ssh_config);
        let off = RuntimeSettings {
            import_ssh_config: false,
            ..RuntimeSettings::default()
        };
        let inv = load_inventory(&off, &env).unwrap();
        assert!(!inv.targets().any(|t| t.slug.to_string().contains("web1")));
    }

    /// The file the desktop writes (tauri-plugin-store: `runtime` and `auth` entries) is
    /// what the CLI reads: every limit and the model settings, whatever else the file holds.
    #[test]
    fn the_desktop_settings_file_is_read_with_its_limits() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            RuntimeSettings::load(dir.path()).unwrap().limits,
            Limits::default(),
            "no file: the defaults"
        );
        for (text, request, idle) in [
            (
                r#"{"runtime":{"llm":{"idle_timeout_secs":3},"limits":{"model_request_secs":4}},"auth":{}}"#,
                Some(4),
                Some(3),
            ),
            (
                r#"{"auth":{"issuer":"x"},"runtime":{"limits":{"model_request_secs":9,"turn_deadline_mins":2}}}"#,
                Some(9),
                None,
            ),
            (r#"{"auth":{}}"#, None, None),
            (r#"{"runtime":null}"#, None, None),
            ("{}", None, None),
        ] {
            std::fs::write(dir.path().join(SETTINGS_FILE), text).unwrap();
            let s = RuntimeSettings::load(dir.path()).unwrap();
            assert_eq!(s.limits.model_request_secs, request, "{text}");
            assert_eq!(s.llm.idle_timeout_secs, idle, "{text}");
            let applied = s.limits.apply(AgentConfig::default());
            if let Some(r) = request {
                assert_eq!(
                    applied.model_retry.max_total,
                    std::time::Duration::from_secs(r)
                );
            }
        }
        // Not understood: an error naming the file (never silently other limits).
        for bad in [
            "not json",
            "[]",
            r#"{"runtime":{"limits":{"model_request_secs":"soon"}}}"#,
            r#"{"runtime":7}"#,
        ] {
            std::fs::write(dir.path().join(SETTINGS_FILE), bad).unwrap();
            let err = RuntimeSettings::load(dir.path()).unwrap_err();
            assert!(err.to_string().contains(SETTINGS_FILE), "{bad}: {err}");
        }
    }

    #[test]
    fn limits_override_only_what_the_operator_set() {
        let limits = Limits {
            max_iterations: Some(7),
            session_token_budget: Some(0),
            run_wait_secs: None,
            command_timeout_secs: Some(60),
            approval_window_mins: Some(5),
            model_request_secs: Some(45),
            turn_deadline_mins: Some(0),
        };
        let base = AgentConfig::default();
        let applied = limits.apply(base.clone());
        assert_eq!(applied.max_iterations, 7);
        assert_eq!(
            applied.session_token_budget, base.session_token_budget,
            "zero is ignored"
        );
        assert_eq!(applied.run_wait, base.run_wait);
        assert_eq!(applied.command_timeout, std::time::Duration::from_secs(60));
        assert_eq!(
            applied.approval_window_ttl,
            std::time::Duration::from_secs(300)
        );
        assert_eq!(
            base.approval_window_ttl,
            std::time::Duration::from_secs(30 * 60),
            "the default window is 30 minutes"
        );
        assert_eq!(
            applied.model_retry.max_total,
            std::time::Duration::from_secs(45)
        );
        assert_eq!(
            base.model_retry.max_total,
            std::time::Duration::from_secs(5 * 60),
            "a model request ends within 5 minutes by default"
        );
        assert_eq!(applied.turn_deadline, base.turn_deadline, "zero is ignored");
    }
}
