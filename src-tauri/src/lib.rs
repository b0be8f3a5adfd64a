//! The Nomos desktop shell.
//!
//! **Architecture invariant:** this is the only crate that depends on Tauri, and it holds no
//! logic of its own: it opens the core (store, later the agent), registers plugins and thin
//! commands, and converts between core types and `nomos-protocol` DTOs.

mod commands;
mod connection;
mod convert;
mod demo;
mod graph;
mod notify;
mod relay;
mod render;
mod settings;
mod signin;
mod state;

use tauri::Manager as _;

pub use commands::TRANSCRIPT_PAGE;
pub use state::AppState;

/// Registers every plugin, the state and the commands on `builder`.
///
/// Split from [`run`] so tests can configure Tauri's mock builder exactly like the real one.
pub fn configure<R: tauri::Runtime>(
    builder: tauri::Builder<R>,
    state: AppState,
) -> tauri::Builder<R> {
    builder
        // Must be first: a second launch hands over to the running window instead of
        // opening a second writer on the same database.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.show();
                let _ = window.set_focus();
            }
        }))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_store::Builder::default().build())
        .plugin(tauri_plugin_notification::init())
        // A page that starts loading (a reload) has no listener for the old channels: drop
        // them, so the page that subscribes again gets each event once.
        .on_page_load(|webview, payload| {
            if payload.event() == tauri::webview::PageLoadEvent::Started {
                webview
                    .state::<AppState>()
                    .relay
                    .forget_webview(webview.label());
            }
        })
        .setup(|app| {
            render::apply(app.handle());
            start_agent(app.handle());
            Ok(())
        })
        .manage(state)
        .invoke_handler(commands::handler())
}

/// Builds the agent from the saved settings. Runs once the app exists: the settings live in
/// the store plugin, which needs the app handle.
pub fn start_agent<R: tauri::Runtime>(app: &tauri::AppHandle<R>) {
    let state = app.state::<AppState>();
    let saved = settings::load(app, &state.data_dir);
    tauri::async_runtime::block_on(state.apply(app, &saved));
}

/// Starts the desktop application; returns when the last window closes.
pub fn run() {
    let state = AppState::open_default();
    let _log_guard = match nomos_logging::init(&state.data_dir, "nomos-desktop") {
        Ok(guard) => Some(guard),
        Err(err) => {
            // The app still works without a log file; say so where someone can see it.
            eprintln!("nomos: file logging disabled: {err}");
            None
        }
    };
    match &state.store {
        Ok(store) => tracing::info!(db = %store.path().display(), "store opened"),
        Err(err) => tracing::error!(code = %err.code, "store unavailable: {}", err.message),
    }

    let result = configure(tauri::Builder::default(), state).run(tauri::generate_context!());
    if let Err(err) = result {
        tracing::error!("desktop shell stopped: {err}");
        std::process::exit(1);
    }
}
