use std::path::PathBuf;

use nomos_agent::{Agent, AgentConfig, setup};
use nomos_protocol::IpcError;
use nomos_store::Store;

use crate::convert;

/// What every command can reach. The store or the agent may have failed to start (a newer
/// schema, a corrupt file, no model configured): the window still opens and each command
/// reports that error, so the operator sees why instead of a window that never appears.
#[derive(Debug)]
pub struct AppState {
    pub data_dir: PathBuf,
    pub store: Result<Store, IpcError>,
    pub agent: Result<Agent, IpcError>,
}

impl AppState {
    /// Opens the store in `$NOMOS_DATA_DIR` or the OS data directory.
    pub fn open_default() -> Self {
        match nomos_store::default_data_dir() {
            Ok(dir) => Self::open_in(dir),
            Err(err) => Self {
                data_dir: std::env::temp_dir(),
                store: Err(convert::store_error(&err)),
                agent: Err(convert::store_error(&err)),
            },
        }
    }

    pub fn open_in(data_dir: PathBuf) -> Self {
        let store = Store::open_in_dir(&data_dir).map_err(|err| convert::store_error(&err));
        let agent = match &store {
            Ok(store) => setup::assemble(
                store.clone(),
                &data_dir,
                &setup::RuntimeSettings::default(),
                &nomos_llm::ProcessEnv,
                None,
                AgentConfig::default(),
            )
            .map_err(|e| IpcError::new(e.code(), e.to_string())),
            Err(e) => Err(e.clone()),
        };
        Self {
            data_dir,
            store,
            agent,
        }
    }

    pub fn store(&self) -> Result<&Store, IpcError> {
        self.store.as_ref().map_err(Clone::clone)
    }

    pub fn agent(&self) -> Result<&Agent, IpcError> {
        self.agent.as_ref().map_err(Clone::clone)
    }
}
