//! Tauri commands: convert the DTO, call the core off the UI thread, convert back.

use nomos_protocol::{AppInfo, IpcError, SessionListQuery, SessionSummary};
use nomos_store::{NewSession, SessionQuery, Store};
use tauri::State;

use crate::{AppState, convert};

/// The sidebar never needs more than this many rows at once.
const MAX_SESSIONS: u32 = 500;

pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![app_info, list_sessions, get_session, create_session]
}

/// Runs a store call on the blocking pool so SQLite never stalls the webview's event loop.
async fn with_store<T, F>(state: &AppState, f: F) -> Result<T, IpcError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, nomos_store::StoreError> + Send + 'static,
{
    let store = state.store()?.clone();
    tauri::async_runtime::spawn_blocking(move || f(&store))
        .await
        .map_err(|err| {
            IpcError::new(
                "internal.task_failed",
                format!("The store task stopped: {err}"),
            )
        })?
        .map_err(|err| convert::store_error(&err))
}

#[tauri::command]
async fn app_info(state: State<'_, AppState>) -> Result<AppInfo, IpcError> {
    let schema_version = with_store(&state, Store::schema_version).await?;
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        data_dir: state.data_dir.display().to_string(),
        schema_version,
    })
}

#[tauri::command]
async fn list_sessions(
    state: State<'_, AppState>,
    query: SessionListQuery,
) -> Result<Vec<SessionSummary>, IpcError> {
    let query = SessionQuery {
        search: query.search.filter(|s| !s.trim().is_empty()),
        limit: query.limit.unwrap_or(MAX_SESSIONS).clamp(1, MAX_SESSIONS),
    };
    let rows = with_store(&state, move |store| store.list_sessions(&query)).await?;
    Ok(rows.into_iter().map(convert::session_summary).collect())
}

#[tauri::command]
async fn get_session(state: State<'_, AppState>, id: i64) -> Result<SessionSummary, IpcError> {
    let session = with_store(&state, move |store| store.get_session(id)).await?;
    Ok(convert::session(session))
}

#[tauri::command]
async fn create_session(
    state: State<'_, AppState>,
    title: String,
) -> Result<SessionSummary, IpcError> {
    let title = title.trim().to_owned();
    if title.is_empty() {
        return Err(IpcError::new(
            "session.title_empty",
            "Describe the task before starting a session.",
        ));
    }
    let new = NewSession { title, goal: None };
    let session = with_store(&state, move |store| store.create_session(new)).await?;
    Ok(convert::session(session))
}
