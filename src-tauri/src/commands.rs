//! Tauri commands: convert the DTO, call the core off the UI thread, convert back.

use nomos_agent::convert as dto;
use nomos_protocol::{
    AgentEvent, AppInfo, AuthStatusView, ConnectionCheck, ErrorCode, ExportFormat, ImportedSession,
    IpcError, MessagePage, SessionExportText, SessionListQuery, SessionSearchPage,
    SessionSearchQuery, SessionSummary, SessionView, Settings, SettingsView,
};
use nomos_store::{NewSession, PageAt, SessionQuery, Store};
use tauri::State;
use tauri::ipc::Channel;

use crate::{AppState, convert, graph, settings, signin};

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
        session_messages,
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
        search_sessions,
        export_session,
        import_session,
        test_connection,
        start_demo,
        graph_slice,
        entity_details,
        execution_ledger,
        target_dependents,
        execution_matrix,
        home_overview
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

/// Messages the window reads at once when it opens a session or scrolls past a page's end:
/// a screenful many times over, and a small part of a long session.
pub const TRANSCRIPT_PAGE: u32 = 200;

/// Reads the store only: a past session opens with no model configured and no network. One
/// page of messages: the newest, or around `around` (a search hit).
#[tauri::command]
async fn session_view(
    state: State<'_, AppState>,
    id: i64,
    around: Option<i64>,
) -> Result<SessionView, IpcError> {
    let store = state.store()?.clone();
    let at = around.map_or(PageAt::Latest, PageAt::Around);
    tauri::async_runtime::spawn_blocking(move || dto::session_page(&store, id, at, TRANSCRIPT_PAGE))
        .await
        .map_err(|err| IpcError::new(ErrorCode::InternalTaskFailed, err.to_string()))?
        .map_err(|e| convert::agent_error(&e))
}

/// The page of messages just before `before` (scrolling up) or just after `after` (scrolling
/// down from an older page); exactly one of the two.
#[tauri::command]
async fn session_messages(
    state: State<'_, AppState>,
    id: i64,
    before: Option<i64>,
    after: Option<i64>,
) -> Result<MessagePage, IpcError> {
    let at = match (before, after) {
        (Some(m), None) => PageAt::Before(m),
        (None, Some(m)) => PageAt::After(m),
        _ => {
            return Err(IpcError::new(
                ErrorCode::StoreInvalidInput,
                "Ask for the messages before one message or after one, not both or neither.",
            ));
        }
    };
    let store = state.store()?.clone();
    tauri::async_runtime::spawn_blocking(move || dto::message_page(&store, id, at, TRANSCRIPT_PAGE))
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
    let agent = match session_id {
        Some(id) => state.agent_for(id)?,
        None => state.agent()?,
    };
    agent
        .submit(session_id, &text)
        .await
        .map_err(|e| convert::agent_error(&e))
}

/// The Retry of a failed turn: the same transcript goes to the model again; the operator's
/// message is not sent a second time.
#[tauri::command]
async fn retry_turn(state: State<'_, AppState>, session_id: i64) -> Result<(), IpcError> {
    let agent = state.agent_for(session_id)?;
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
    let agent = state.agent_for(session_id)?;
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
    let agent = state.agent_for(session_id)?;
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

/// The agent that drives the session an execution belongs to (a demo's, or the configured).
async fn agent_for_execution(
    state: &AppState,
    execution_id: i64,
) -> Result<nomos_agent::Agent, IpcError> {
    let execution = with_store(state, move |store| store.get_execution(execution_id)).await?;
    state.agent_for(execution.session_id)
}

#[tauri::command]
async fn approve_execution(state: State<'_, AppState>, execution_id: i64) -> Result<(), IpcError> {
    let agent = agent_for_execution(&state, execution_id).await?;
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
    let agent = agent_for_execution(&state, execution_id).await?;
    agent
        .deny_execution(execution_id, reason.as_deref())
        .await
        .map_err(|e| convert::agent_error(&e))
}

#[tauri::command]
async fn cancel_execution(state: State<'_, AppState>, execution_id: i64) -> Result<bool, IpcError> {
    agent_for_execution(&state, execution_id)
        .await?
        .cancel_execution(execution_id)
        .map_err(|e| convert::agent_error(&e))
}

#[tauri::command]
async fn stop_turn(state: State<'_, AppState>, session_id: i64) -> Result<bool, IpcError> {
    state
        .agent_for(session_id)?
        .stop(session_id)
        .map_err(|e| convert::agent_error(&e))
}

/// The webview's event stream: every agent event, in order, through one channel. Needs no
/// agent yet (the relay follows each one as it is built); a reload replaces the channel.
#[tauri::command]
async fn subscribe_events<R: tauri::Runtime>(
    webview: tauri::Webview<R>,
    state: State<'_, AppState>,
    on_event: Channel<AgentEvent>,
) -> Result<(), IpcError> {
    state.relay.subscribe(webview.label(), on_event);
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
    let saved = settings::from_wire(settings)?;
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

/// Search over titles, goals, summaries, message text and command output. Needs only the
/// store: works with no model configured.
#[tauri::command]
async fn search_sessions(
    state: State<'_, AppState>,
    query: SessionSearchQuery,
) -> Result<SessionSearchPage, IpcError> {
    let query = dto::search_query(query);
    let page = with_store(&state, move |store| store.search_sessions(&query)).await?;
    Ok(dto::search_page(page))
}

/// The session as text to save (JSON that imports back, or Markdown); the webview saves it.
#[tauri::command]
async fn export_session(
    state: State<'_, AppState>,
    id: i64,
    format: ExportFormat,
) -> Result<SessionExportText, IpcError> {
    with_store(&state, move |store| {
        let doc = store.export_session(id)?;
        dto::export_text(&doc, format)
    })
    .await
}

/// A JSON export read by the webview, imported as a new session in one transaction; nothing
/// runs. A malformed or newer file is refused with `store.import_invalid` /
/// `store.import_version` and writes nothing.
#[tauri::command]
async fn import_session(
    state: State<'_, AppState>,
    text: String,
) -> Result<ImportedSession, IpcError> {
    let imported = with_store(&state, move |store| store.import_session_json(&text)).await?;
    Ok(dto::imported(imported))
}

/// Settings' "Test connection": one tiny real request to the model the form names (saved or
/// not), with the key the environment or the keyring holds for it. Fails with the step that
/// failed: `llm.dns`, `llm.connect_refused`, `llm.connect_timeout`, `llm.tls`,
/// `llm.unauthorized`, `llm.model_not_found`, `llm.endpoint_not_found`, a timeout, or the
/// provider's own error.
#[tauri::command]
async fn test_connection(
    state: State<'_, AppState>,
    settings: Settings,
) -> Result<ConnectionCheck, IpcError> {
    let saved = settings::from_wire(settings)?;
    let token: Option<std::sync::Arc<dyn nomos_llm::TokenSource>> = if saved.auth.model_uses_sign_in
    {
        state
            .signin()
            .map(|s| std::sync::Arc::new(s) as std::sync::Arc<dyn nomos_llm::TokenSource>)
    } else {
        None
    };
    crate::connection::test(
        &saved.runtime,
        token,
        &nomos_llm::ProcessEnv,
        crate::connection::Limits::default(),
    )
    .await
}

/// "Try the demo": a new session driven by the scripted model (in-process, loopback) over
/// real read-only commands on this workstation. Returns the session id; the turn streams.
#[tauri::command]
async fn start_demo<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
) -> Result<i64, IpcError> {
    let store = state.store()?.clone();
    state.demos.start(&app, store, &state.data_dir).await
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

/// Recent sessions the start screen lists.
const HOME_SESSIONS: u32 = 8;

/// The start screen's overview: the entities changed last and their relations, targets by
/// last audit, recent sessions and the commands waiting for approval (each bounded).
#[tauri::command]
async fn home_overview(
    state: State<'_, AppState>,
) -> Result<nomos_protocol::HomeOverviewView, IpcError> {
    let (overview, sessions) = with_store(&state, move |store| {
        store.read(|r| {
            let overview = r.home_overview(nomos_store::HomeLimits::default())?;
            let sessions = r.list_sessions(&SessionQuery {
                search: None,
                limit: HOME_SESSIONS,
            })?;
            Ok((overview, sessions))
        })
    })
    .await?;
    Ok(graph::home(
        overview,
        sessions.into_iter().map(dto::session_summary).collect(),
    ))
}
