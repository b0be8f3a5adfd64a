//! Tauri commands: convert the DTO, call the core off the UI thread, convert back.

use nomos_agent::convert as dto;
use nomos_protocol::{
    AgentEvent, AppInfo, AuthStatusView, ErrorCode, IpcError, SessionListQuery, SessionSummary,
    SessionView, Settings, SettingsView,
};
use nomos_store::{NewSession, SessionQuery, Store};
use tauri::State;
use tauri::ipc::Channel;

use crate::{AppState, convert, graph, notify, settings, signin};

/// The sidebar never needs more than this many rows at once.
const MAX_SESSIONS: u32 = 500;

pub fn handler<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static
{
    tauri::generate_handler![
        app_info,
        list_sessions,
        get_session,
        create_session,
        session_view,
        send_message,
        retry_turn,
        reconnect_session,
        approve_plan,
        approve_execution,
        deny_execution,
        cancel_execution,
        stop_turn,
        subscribe_events,
        get_settings,
        save_settings,
        set_api_key,
        auth_status,
        sign_in,
        sign_out,
        graph_slice,
        entity_details,
        execution_ledger,
        target_dependents,
        execution_matrix
    ]
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
                ErrorCode::InternalTaskFailed,
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
    Ok(rows.into_iter().map(dto::session_summary).collect())
}

#[tauri::command]
async fn get_session(state: State<'_, AppState>, id: i64) -> Result<SessionSummary, IpcError> {
    let session = with_store(&state, move |store| store.get_session(id)).await?;
    Ok(dto::session(&session))
}

#[tauri::command]
async fn create_session(
    state: State<'_, AppState>,
    title: String,
) -> Result<SessionSummary, IpcError> {
    let title = title.trim().to_owned();
    if title.is_empty() {
        return Err(IpcError::new(
            ErrorCode::SessionTitleEmpty,
            "Describe the task before starting a session.",
        ));
    }
    let new = NewSession { title, goal: None };
    let session = with_store(&state, move |store| store.create_session(new)).await?;
    Ok(dto::session(&session))
}

#[tauri::command]
async fn session_view(state: State<'_, AppState>, id: i64) -> Result<SessionView, IpcError> {
    let agent = state.agent()?;
    tauri::async_runtime::spawn_blocking(move || agent.session_view(id))
        .await
        .map_err(|err| IpcError::new(ErrorCode::InternalTaskFailed, err.to_string()))?
        .map_err(|e| convert::agent_error(&e))
}

/// Starts the turn and returns the session id at once; the turn streams as events. The agent
/// validates, creates or reopens the session and refuses a busy one before this returns.
#[tauri::command]
async fn send_message(
    state: State<'_, AppState>,
    session_id: Option<i64>,
    text: String,
) -> Result<i64, IpcError> {
    let agent = state.agent()?;
    agent
        .submit(session_id, &text)
        .await
        .map_err(|e| convert::agent_error(&e))
}

/// The Retry of a failed turn: the same transcript goes to the model again; the operator's
/// message is not sent a second time.
#[tauri::command]
async fn retry_turn(state: State<'_, AppState>, session_id: i64) -> Result<(), IpcError> {
    let agent = state.agent()?;
    agent
        .retry_turn(session_id)
        .await
        .map_err(|e| convert::agent_error(&e))
}

/// The window came back to a session whose work was cut (a restart, a crash): it resumes
/// unless it is finished, paused by the operator or busy (I12). Returns at once; the
/// resumed turn streams as events.
#[tauri::command]
async fn reconnect_session(state: State<'_, AppState>, session_id: i64) -> Result<(), IpcError> {
    let agent = state.agent()?;
    tauri::async_runtime::spawn(async move {
        if let Err(e) = agent.reconnect(session_id).await {
            agent_error_event(&agent, session_id, &e);
        }
    });
    Ok(())
}

fn agent_error_event(agent: &nomos_agent::Agent, session: i64, e: &nomos_agent::AgentError) {
    tracing::warn!(session, code = e.code(), "turn not started: {e}");
    agent.publish(AgentEvent::Error {
        session_id: session,
        code: ErrorCode::from_code(e.code()),
        message: e.to_string(),
        retryable: e.is_retryable(),
    });
}

#[tauri::command]
async fn approve_plan(
    state: State<'_, AppState>,
    session_id: i64,
    generation: i64,
) -> Result<(), IpcError> {
    let agent = state.agent()?;
    // Validate now (the operator sees a refusal at once); the turn itself runs detached.
    if !agent
        .has_plan_awaiting_approval(session_id)
        .map_err(|e| convert::agent_error(&e))?
    {
        return Err(convert::agent_error(
            &nomos_agent::AgentError::NothingToApprove(session_id),
        ));
    }
    tauri::async_runtime::spawn(async move {
        if let Err(e) = agent.approve_plan(session_id, generation).await {
            agent_error_event(&agent, session_id, &e);
        }
    });
    Ok(())
}

#[tauri::command]
async fn approve_execution(state: State<'_, AppState>, execution_id: i64) -> Result<(), IpcError> {
    let agent = state.agent()?;
    agent
        .approve_execution(execution_id)
        .await
        .map_err(|e| convert::agent_error(&e))
}

#[tauri::command]
async fn deny_execution(
    state: State<'_, AppState>,
    execution_id: i64,
    reason: Option<String>,
) -> Result<(), IpcError> {
    let agent = state.agent()?;
    agent
        .deny_execution(execution_id, reason.as_deref())
        .await
        .map_err(|e| convert::agent_error(&e))
}

#[tauri::command]
async fn cancel_execution(state: State<'_, AppState>, execution_id: i64) -> Result<bool, IpcError> {
    state
        .agent()?
        .cancel_execution(execution_id)
        .map_err(|e| convert::agent_error(&e))
}

#[tauri::command]
async fn stop_turn(state: State<'_, AppState>, session_id: i64) -> Result<bool, IpcError> {
    Ok(state.agent()?.stop(session_id))
}

/// The webview's event stream: every agent event, in order, through one channel.
#[tauri::command]
async fn subscribe_events<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    on_event: Channel<AgentEvent>,
) -> Result<(), IpcError> {
    let mut events = state.agent()?.subscribe();
    tauri::async_runtime::spawn(async move {
        let mut notifier = notify::Notifier::default();
        while let Some(event) = events.recv().await {
            notifier.maybe_notify(&app, &event);
            if on_event.send(event).is_err() {
                // The webview reloaded or closed; it subscribes again when it comes back.
                break;
            }
        }
    });
    Ok(())
}

fn settings_view<R: tauri::Runtime>(app: &tauri::AppHandle<R>, state: &AppState) -> SettingsView {
    let saved = settings::load(app, &state.data_dir);
    let agent = state.agent();
    SettingsView {
        settings: settings::to_wire(&saved),
        agent_ready: agent.is_ok(),
        agent_error: agent.err(),
        api_key_account: settings::api_key_account(&saved.runtime),
    }
}

#[tauri::command]
async fn get_settings<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<SettingsView, IpcError> {
    Ok(settings_view(&app, &state))
}

/// Saves the preferences, reopens sign-in if its provider changed and rebuilds the agent.
#[tauri::command]
async fn save_settings<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    settings: Settings,
) -> Result<SettingsView, IpcError> {
    let saved = settings::from_wire(settings);
    settings::save(&app, &state.data_dir, &saved)?;
    state.apply(&app, &saved).await;
    Ok(settings_view(&app, &state))
}

/// Stores the API key for the configured endpoint in the OS keyring (never in a file) and
/// rebuilds the agent with it.
#[tauri::command]
async fn set_api_key<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    key: String,
) -> Result<SettingsView, IpcError> {
    let saved = settings::load(&app, &state.data_dir);
    let account = settings::api_key_account(&saved.runtime).ok_or_else(|| {
        IpcError::new(
            ErrorCode::SettingsNoEndpoint,
            "Set the model's base URL (or provider) first.",
        )
    })?;
    nomos_auth::api_keys::store_api_key(&account, &nomos_auth::Secret::new(key.trim().to_owned()))
        .await
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))?;
    state.apply(&app, &saved).await;
    Ok(settings_view(&app, &state))
}

#[tauri::command]
async fn auth_status(state: State<'_, AppState>) -> Result<AuthStatusView, IpcError> {
    Ok(match state.signin() {
        Some(session) => signin::view(&session.status()),
        None => signin::not_configured(),
    })
}

/// Signs in with the system browser; resolves when the provider redirected back.
#[tauri::command]
async fn sign_in(state: State<'_, AppState>) -> Result<AuthStatusView, IpcError> {
    let session = state.signin().ok_or_else(|| {
        IpcError::new(
            ErrorCode::AuthNotConfigured,
            "Set the OpenID Provider and client id in Settings first.",
        )
    })?;
    session
        .login(&nomos_auth::SystemBrowser)
        .await
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))?;
    Ok(signin::view(&session.status()))
}

#[tauri::command]
async fn sign_out(state: State<'_, AppState>) -> Result<AuthStatusView, IpcError> {
    let Some(session) = state.signin() else {
        return Ok(signin::not_configured());
    };
    session
        .logout()
        .await
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))?;
    Ok(signin::view(&session.status()))
}

/// A bounded piece of the knowledge graph (see `GraphQuery`); with `touched_by`, also the
/// slugs that session touched.
#[tauri::command]
async fn graph_slice(
    state: State<'_, AppState>,
    query: nomos_protocol::GraphQuery,
) -> Result<nomos_protocol::GraphSliceView, IpcError> {
    let touched_by = query.touched_by;
    let q = graph::slice_query(query);
    with_store(&state, move |store| {
        store.read(|r| {
            let slice = r.graph_slice(&q)?;
            let touched = match touched_by {
                Some(s) => r.entities_touched_by(s)?,
                None => Vec::new(),
            };
            Ok(graph::slice(slice, touched))
        })
    })
    .await
}

/// The details panel of one entity: attributes with their history and provenance, relations,
/// knowledge, last audit and the executions that targeted it.
#[tauri::command]
async fn entity_details(
    state: State<'_, AppState>,
    slug: String,
) -> Result<nomos_protocol::EntityDetailsView, IpcError> {
    let wanted = slug.trim().to_owned();
    let found = with_store(&state, move |store| {
        store.read(|r| graph::details(r, &slug))
    })
    .await?;
    found.ok_or_else(|| {
        IpcError::new(
            ErrorCode::StoreNotFound,
            format!("Nomos knows nothing about {wanted} (yet)."),
        )
    })
}

/// The execution ledger across sessions, newest first, filtered and paginated.
#[tauri::command]
async fn execution_ledger(
    state: State<'_, AppState>,
    query: nomos_protocol::LedgerQuery,
) -> Result<nomos_protocol::LedgerPageView, IpcError> {
    let filter = graph::ledger_filter(query);
    let page = with_store(&state, move |store| store.execution_ledger(&filter)).await?;
    Ok(graph::ledger_page(page))
}

/// The blast radius of a target: what runs on it and what depends on it, to depth 2.
#[tauri::command]
async fn target_dependents(
    state: State<'_, AppState>,
    target: String,
) -> Result<nomos_protocol::DependentsView, IpcError> {
    let d = with_store(&state, move |store| store.dependents(&target, 0)).await?;
    Ok(graph::dependents(d))
}

/// Plan steps × targets for one session.
#[tauri::command]
async fn execution_matrix(
    state: State<'_, AppState>,
    session_id: i64,
) -> Result<nomos_protocol::ExecutionMatrixView, IpcError> {
    let m = with_store(&state, move |store| store.execution_matrix(session_id)).await?;
    Ok(graph::matrix(m))
}
