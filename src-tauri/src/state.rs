use std::path::PathBuf;
use std::sync::{Mutex, RwLock};

use nomos_agent::{Agent, AgentConfig, setup};
use nomos_protocol::{ErrorCode, IpcError};
use nomos_store::Store;
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use crate::relay::{self, EventRelay};
use crate::settings::Saved;
use crate::{convert, signin};

/// What every command can reach. The store or the agent may have failed to start (a newer
/// schema, a corrupt file, no model configured): the window still opens and each command
/// reports that error, so the operator sees why instead of a window that never appears.
#[derive(Debug)]
pub struct AppState {
    pub data_dir: PathBuf,
    pub store: Result<Store, IpcError>,
    /// Rebuilt when the operator saves settings or an API key.
    agent: RwLock<Result<Agent, IpcError>>,
    /// Stops the background workers of the current agent when it is replaced.
    workers: Mutex<Option<CancellationToken>>,
    /// The sign-in session for the configured provider, with its (issuer, client id).
    signin: RwLock<Option<(String, String, nomos_auth::Session)>>,
    /// Every agent's events to the notifier and the webviews.
    pub relay: EventRelay,
    /// The demo sessions started here, each with its scripted model and agent.
    pub demos: crate::demo::Demos,
}

fn not_started() -> IpcError {
    IpcError::new(ErrorCode::AgentStarting, "The agent is still starting.")
}

impl AppState {
    /// Opens the store in `$NOMOS_DATA_DIR` or the OS data directory; the agent is built once
    /// the settings can be read ([`AppState::rebuild_agent`]).
    pub fn open_default() -> Self {
        match nomos_store::default_data_dir() {
            Ok(dir) => Self::open_in(dir),
            Err(err) => Self {
                data_dir: std::env::temp_dir(),
                store: Err(convert::store_error(&err)),
                agent: RwLock::new(Err(convert::store_error(&err))),
                workers: Mutex::new(None),
                signin: RwLock::new(None),
                relay: EventRelay::default(),
                demos: crate::demo::Demos::default(),
            },
        }
    }

    pub fn open_in(data_dir: PathBuf) -> Self {
        let store = Store::open_in_dir(&data_dir).map_err(|err| convert::store_error(&err));
        Self {
            data_dir,
            store,
            agent: RwLock::new(Err(not_started())),
            workers: Mutex::new(None),
            signin: RwLock::new(None),
            relay: EventRelay::default(),
            demos: crate::demo::Demos::default(),
        }
    }

    pub fn store(&self) -> Result<&Store, IpcError> {
        self.store.as_ref().map_err(Clone::clone)
    }

    pub fn agent(&self) -> Result<Agent, IpcError> {
        match self.agent.read() {
            Ok(agent) => agent.clone(),
            Err(_) => Err(IpcError::new(ErrorCode::InternalPoisoned, "Restart Nomos.")),
        }
    }

    /// The agent that drives `session`: its demo's, or the configured one.
    pub fn agent_for(&self, session: i64) -> Result<Agent, IpcError> {
        match self.demos.agent_for(session) {
            Some(agent) => Ok(agent),
            None => self.agent(),
        }
    }

    /// The sign-in session, when a provider is configured.
    pub fn signin(&self) -> Option<nomos_auth::Session> {
        self.signin.read().ok()?.as_ref().map(|(_, _, s)| s.clone())
    }

    /// Applies saved settings: opens (or keeps) the sign-in session for the configured
    /// provider, then rebuilds the agent. Returns the error the operator should see, if any.
    pub async fn apply<R: tauri::Runtime>(
        &self,
        app: &tauri::AppHandle<R>,
        saved: &Saved,
    ) -> Option<IpcError> {
        let wanted = saved
            .auth
            .provider()
            .map(|(i, c)| (i.to_owned(), c.to_owned()));
        let current = self
            .signin
            .read()
            .ok()
            .and_then(|s| s.as_ref().map(|(i, c, _)| (i.clone(), c.clone())));
        if wanted != current {
            let next = match &wanted {
                Some((issuer, client)) => {
                    match signin::open(issuer, client, &self.data_dir).await {
                        Ok(session) => {
                            signin::watch(app.clone(), &session);
                            Some((issuer.clone(), client.clone(), session))
                        }
                        Err(e) => {
                            tracing::warn!(code = %e.code, "sign-in unavailable: {}", e.message);
                            None
                        }
                    }
                }
                None => None,
            };
            if let Ok(mut slot) = self.signin.write() {
                *slot = next;
            }
        }
        let token: Option<Arc<dyn nomos_llm::TokenSource>> = if saved.auth.model_uses_sign_in {
            self.signin()
                .map(|s| Arc::new(s) as Arc<dyn nomos_llm::TokenSource>)
        } else {
            None
        };
        self.rebuild_agent(app, &saved.runtime, token).await
    }

    /// Builds the agent from `settings` and the environment (a stored API key comes from the
    /// keyring unless `token` is given), runs start-up recovery and starts its background
    /// workers, replacing any previous agent. Returns the error the operator should see.
    pub async fn rebuild_agent<R: tauri::Runtime>(
        &self,
        app: &tauri::AppHandle<R>,
        settings: &setup::RuntimeSettings,
        token: Option<Arc<dyn nomos_llm::TokenSource>>,
    ) -> Option<IpcError> {
        let built = match &self.store {
            Ok(store) => setup::assemble_from_settings(
                store.clone(),
                &self.data_dir,
                settings,
                &nomos_llm::ProcessEnv,
                token,
                AgentConfig::default(),
            )
            .await
            .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable())),
            Err(e) => Err(e.clone()),
        };
        if let Ok(mut workers) = self.workers.lock()
            && let Some(stop) = workers.take()
        {
            stop.cancel();
        }
        if let Ok(agent) = &built {
            // Subscribed before anything can run, so no event of this agent is missed.
            relay::attach(app, agent);
            match agent.recover() {
                Ok(report) => tracing::info!(?report, "start-up recovery"),
                Err(e) => tracing::error!(code = e.code(), "start-up recovery failed: {e}"),
            }
            let stop = CancellationToken::new();
            let _worker = agent.spawn_workers(stop.clone());
            if let Ok(mut workers) = self.workers.lock() {
                *workers = Some(stop);
            }
        }
        let error = built.as_ref().err().cloned();
        if let Some(e) = &error {
            tracing::warn!(code = %e.code, "agent unavailable: {}", e.message);
        }
        if let Ok(mut slot) = self.agent.write() {
            *slot = built;
        }
        error
    }
}
