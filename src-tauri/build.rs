// App commands get generated `allow-<command>` permissions; capabilities/ grants them one by
// one, so a command that is not listed there cannot be called from the webview.
const COMMANDS: &[&str] = &[
    "app_info",
    "list_sessions",
    "get_session",
    "create_session",
    "session_view",
    "session_messages",
    "send_message",
    "retry_turn",
    "reconnect_session",
    "approve_plan",
    "approve_execution",
    "deny_execution",
    "cancel_execution",
    "stop_turn",
    "subscribe_events",
    "get_settings",
    "save_settings",
    "set_api_key",
    "auth_status",
    "sign_in",
    "sign_out",
    "search_sessions",
    "export_session",
    "import_session",
    "test_connection",
    "start_demo",
    "graph_slice",
    "entity_details",
    "execution_ledger",
    "target_dependents",
    "execution_matrix",
    "home_overview",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .unwrap_or_else(|err| panic!("tauri build step failed: {err:#}"));
}
