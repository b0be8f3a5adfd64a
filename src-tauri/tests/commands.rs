//! The shell's commands on Tauri's mock runtime, with the real capabilities of the app and a
//! real store on disk: what the webview sends, what it gets back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_desktop::AppState;
use serde_json::{Value, json};

mod support;
use support::{app, invoke};

#[test]
fn sessions_round_trip_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));

    assert_eq!(
        invoke(&window, "list_sessions", json!({"query": {}})).unwrap(),
        json!([])
    );

    let created = invoke(
        &window,
        "create_session",
        json!({"title": "  Check disks  "}),
    )
    .unwrap();
    assert_eq!(created["title"], "Check disks");
    assert_eq!(created["status"], "idle");

    let listed = invoke(
        &window,
        "list_sessions",
        json!({"query": {"search": "disks"}}),
    )
    .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], created["id"]);

    let fetched = invoke(&window, "get_session", json!({"id": created["id"]})).unwrap();
    assert_eq!(fetched, created);

    let info = invoke(&window, "app_info", json!({})).unwrap();
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert!(info["schema_version"].as_i64().unwrap() > 20_000_000_000_000);
}

#[test]
fn errors_reach_the_ui_as_code_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));

    let err = invoke(&window, "create_session", json!({"title": "   "})).unwrap_err();
    assert_eq!(err["code"], "session.title_empty");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("Describe the task")
    );

    let err = invoke(&window, "get_session", json!({"id": 4242})).unwrap_err();
    assert_eq!(err["code"], "store.not_found");
}

#[test]
fn a_corrupt_database_is_reported_by_every_command_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nomos.db");
    let garbage: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&db, &garbage).unwrap();

    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let err = invoke(&window, "list_sessions", json!({"query": {}})).unwrap_err();
    assert_eq!(err["code"], "store.corrupt");
    assert!(!err["message"].as_str().unwrap().is_empty());
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "the file must never be overwritten"
    );
}

#[test]
fn commands_not_granted_by_the_capability_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    // A plugin command the main window has no permission for.
    let err = invoke(
        &window,
        "plugin:notification|register_action_types",
        json!({"types": []}),
    );
    assert!(err.is_err(), "ungranted command must be refused: {err:?}");
}

#[test]
fn settings_round_trip_and_the_agent_says_why_it_is_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));

    let view = invoke(&window, "get_settings", json!({})).unwrap();
    // This test process has no model configured unless the environment provides one.
    if std::env::var_os("NOMOS_LLM_BASE_URL").is_none()
        && std::env::var_os("OPENAI_API_KEY").is_none()
    {
        assert_eq!(view["agent_ready"], false);
        assert_eq!(view["agent_error"]["code"], "llm.not_configured");
        let err = invoke(
            &window,
            "send_message",
            json!({"sessionId": null, "text": "hi"}),
        )
        .unwrap_err();
        assert_eq!(err["code"], "llm.not_configured", "{err}");
    }

    // A loopback model needs no key: saving it makes the agent ready at once.
    let saved = invoke(
        &window,
        "save_settings",
        json!({"settings": {"provider": "openai_compatible", "base_url": "http://127.0.0.1:9/v1", "model": "m", "inventory_path": null, "import_ssh_config": false}}),
    )
    .unwrap();
    assert_eq!(saved["agent_ready"], true, "{saved}");
    assert_eq!(saved["settings"]["model"], "m");
    let text = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
    assert!(text.contains("127.0.0.1:9"), "{text}");

    // A broken inventory is a clear error, and the settings are kept.
    let broken = dir.path().join("inventory.toml");
    std::fs::write(&broken, "[[target]]\nslug = 42\n").unwrap();
    let saved = invoke(
        &window,
        "save_settings",
        json!({"settings": {"provider": null, "base_url": "http://127.0.0.1:9/v1", "model": "m", "inventory_path": broken, "import_ssh_config": false}}),
    )
    .unwrap();
    assert_eq!(saved["agent_ready"], false);
    assert_eq!(saved["agent_error"]["code"], "inventory.invalid", "{saved}");
}

/// The graph's stale threshold: saved in the settings file, read back, empty for the
/// default, and refused (with the settings file untouched) outside 1–3650 days.
#[test]
fn the_stale_threshold_is_a_validated_setting() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let form = |days: Value| json!({"settings": {"provider": null, "base_url": null, "model": null, "inventory_path": null, "import_ssh_config": false, "stale_after_days": days}});
    let view = invoke(&window, "get_settings", json!({})).unwrap();
    assert_eq!(view["settings"]["stale_after_days"], Value::Null, "default");
    // Absent from an older form: the default, not an error.
    let old = invoke(
        &window,
        "save_settings",
        json!({"settings": {"provider": null, "base_url": null, "model": null, "inventory_path": null, "import_ssh_config": false}}),
    )
    .unwrap();
    assert_eq!(old["settings"]["stale_after_days"], Value::Null);
    for days in [1, 7, 90, 3650] {
        let saved = invoke(&window, "save_settings", form(json!(days))).unwrap();
        assert_eq!(saved["settings"]["stale_after_days"], days);
        let read = invoke(&window, "get_settings", json!({})).unwrap();
        assert_eq!(read["settings"]["stale_after_days"], days);
    }
    let text = std::fs::read_to_string(dir.path().join("settings.json")).unwrap();
    assert!(
        text.contains("\"stale_after_days\": 3650") || text.contains("\"stale_after_days\":3650"),
        "{text}"
    );
    for bad in [json!(0), json!(3651), json!(u32::MAX)] {
        let err = invoke(&window, "save_settings", form(bad.clone())).unwrap_err();
        assert_eq!(err["code"], "settings.invalid", "{bad}: {err}");
        assert!(err["message"].as_str().unwrap().contains("3650"), "{err}");
        let read = invoke(&window, "get_settings", json!({})).unwrap();
        assert_eq!(read["settings"]["stale_after_days"], 3650, "{bad} left it");
    }
    // Not a whole number of days: the form's type refuses it before the shell sees it.
    for bad in [json!(-1), json!(1.5), json!("30")] {
        assert!(
            invoke(&window, "save_settings", form(bad.clone())).is_err(),
            "{bad}"
        );
    }
    let saved = invoke(&window, "save_settings", form(Value::Null)).unwrap();
    assert_eq!(
        saved["settings"]["stale_after_days"],
        Value::Null,
        "cleared"
    );
}

#[test]
fn sign_in_without_a_provider_says_what_to_configure() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let status = invoke(&window, "auth_status", json!({})).unwrap();
    assert_eq!(status["state"], "not_configured");
    let err = invoke(&window, "sign_in", json!({})).unwrap_err();
    assert_eq!(err["code"], "auth.not_configured");
    assert!(err["message"].as_str().unwrap().contains("Settings"));
    assert_eq!(
        invoke(&window, "sign_out", json!({})).unwrap()["state"],
        "not_configured"
    );
}

/// The shell follows every agent it builds: a webview subscribed before any model was
/// configured receives the events of the agent Settings builds later, and of the one after.
#[test]
fn events_reach_the_webview_from_each_agent_settings_build() {
    use std::sync::{Arc, Mutex};
    use tauri::Manager as _;
    use tauri::ipc::{Channel, InvokeResponseBody};

    let dir = tempfile::tempdir().unwrap();
    let (app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
    let sink = seen.clone();
    let state = app.state::<AppState>();
    state.relay.subscribe(
        "main",
        Channel::new(move |body| {
            let InvokeResponseBody::Json(json) = body else {
                panic!("events are JSON")
            };
            let event: nomos_protocol::AgentEvent = serde_json::from_str(&json).unwrap();
            sink.lock().unwrap().push(event.session_id());
            Ok(())
        }),
    );
    for (round, port) in [(1_i64, 9), (2, 10)] {
        let saved = invoke(
            &window,
            "save_settings",
            json!({"settings": {"provider": "openai_compatible", "base_url": format!("http://127.0.0.1:{port}/v1"), "model": "m", "inventory_path": null, "import_ssh_config": false}}),
        )
        .unwrap();
        assert_eq!(saved["agent_ready"], true, "{saved}");
        state
            .agent()
            .unwrap()
            .publish(nomos_protocol::AgentEvent::Done {
                session_id: round,
                error: false,
            });
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while seen.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(*seen.lock().unwrap(), [1, 2]);
}

/// First launch without a model: the demo runs in its own session over the real store,
/// classifier and executor, waits for the plan approval like any task, runs its four
/// read-only commands on this workstation and writes what they printed to host:local.
#[test]
fn the_demo_runs_to_completion_with_no_model_configured() {
    use tauri::Manager as _;

    let dir = tempfile::tempdir().unwrap();
    let (app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let state = app.state::<AppState>();
    let store = state.store().unwrap().clone();
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };

    let session = invoke(&window, "start_demo", json!({})).unwrap();
    let session = session.as_i64().unwrap();
    let view = || invoke(&window, "session_view", json!({"id": session})).unwrap();
    assert!(
        view()["session"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Demo:")
    );
    // Marked by its field, from before its first turn: every face labels it from this.
    assert_eq!(view()["session"]["demo"], true);
    assert!(store.get_session(session).unwrap().demo);
    let listed = invoke(&window, "list_sessions", json!({"query": {}})).unwrap();
    assert_eq!(listed[0]["id"], session);
    assert_eq!(listed[0]["demo"], true);
    wait("the plan", &|| {
        view()["plan"].as_array().unwrap().len() == 3 && view()["session"]["status"] == "planning"
    });
    assert!(
        store.executions(session).unwrap().is_empty(),
        "nothing runs before the plan is approved"
    );
    let generation = view()["plan"][0]["generation"].clone();
    invoke(
        &window,
        "approve_plan",
        json!({"sessionId": session, "generation": generation}),
    )
    .unwrap();
    wait("the demo to finish", &|| {
        view()["session"]["status"] == "done"
    });

    let executions = store.executions(session).unwrap();
    let ran: Vec<(&str, &str, Option<i32>)> = executions
        .iter()
        .map(|e| (e.command.as_str(), e.class.as_str(), e.exit_code))
        .collect();
    assert_eq!(ran.len(), 4, "{ran:?}");
    for (command, class, exit) in &ran {
        assert_eq!(*class, "read_only", "{command}");
        assert_eq!(*exit, Some(0), "{command}");
    }
    let host = store.get_entity("host:local").unwrap().unwrap();
    let kernel = std::process::Command::new("uname")
        .arg("-r")
        .output()
        .unwrap();
    let kernel = String::from_utf8(kernel.stdout).unwrap();
    assert_eq!(
        host.attributes["kernel"],
        kernel.trim(),
        "the write-back holds what this machine printed"
    );
    assert!(host.attributes.contains_key("memory_total_mib"));
    assert!(host.attributes.contains_key("root_fs_used"));
    let view = view();
    assert_eq!(view["session"]["outcome"], "success");
    // Nothing the operator did not see: the demo's scripted model had nothing unused or
    // unexpected to answer.
    assert!(
        view["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["error"].is_null()),
        "{view}"
    );
}
