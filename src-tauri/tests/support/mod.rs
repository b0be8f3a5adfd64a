//! Set-up shared by the shell's integration tests: the app on Tauri's mock runtime with the
//! real capabilities, and a call as the webview makes it.
#![allow(dead_code)]

use nomos_desktop::{AppState, configure, start_agent};
use serde_json::Value;
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response};
use tauri::webview::InvokeRequest;

pub fn app(state: AppState) -> (tauri::App<MockRuntime>, tauri::WebviewWindow<MockRuntime>) {
    let app = configure(tauri::test::mock_builder(), state)
        .build(tauri::generate_context!())
        .expect("app builds");
    // The mock runtime does not run the setup hook; do what it does.
    start_agent(app.handle());
    let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .expect("main window");
    (app, window)
}

pub fn invoke(
    window: &tauri::WebviewWindow<MockRuntime>,
    cmd: &str,
    body: Value,
) -> Result<Value, Value> {
    get_ipc_response(
        window,
        InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Value>().unwrap())
}
