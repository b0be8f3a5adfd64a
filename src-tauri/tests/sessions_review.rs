//! Sessions for offline review through the shell's commands, on Tauri's mock runtime with the
//! app's real capabilities and a real store on disk, and no model configured: search, open,
//! export and import need only the store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_desktop::AppState;
use nomos_store::{
    ExecStatus, ExecutionResult, NewExecution, NewMessage, NewPlanStep, NewSession, Outcome, Store,
};
use serde_json::{Value, json};

mod support;
use support::{app, invoke};

/// A finished session with a command whose output holds a rare word.
fn seed(dir: &std::path::Path) -> (i64, i64) {
    let store = Store::open_in_dir(dir).unwrap();
    let sid = store
        .create_session(NewSession {
            title: "Check the spinel array".into(),
            goal: None,
        })
        .unwrap()
        .id;
    store
        .append_message(&NewMessage::user(sid, "how is the array?"))
        .unwrap();
    store
        .propose_plan(sid, &[NewPlanStep::new("Look").target("host:nas")])
        .unwrap();
    let m = store.begin_assistant_message(sid, false).unwrap();
    store
        .record_tool_call(
            m.id,
            "call_1",
            "run",
            r#"{"command":"mdadm --detail /dev/md0"}"#,
        )
        .unwrap();
    let e = store
        .create_execution(&NewExecution {
            session_id: sid,
            step_seq: Some(1),
            call_id: Some("call_1".into()),
            target: "host:nas".into(),
            command: "mdadm --detail /dev/md0".into(),
            canonical: "mdadm --detail /dev/md0".into(),
            class: nomos_store::CommandClass::ReadOnly,
            decision_reason: "read-only".into(),
            decision: None,
            approval: None,
        })
        .unwrap();
    store.start_execution(e.id).unwrap();
    store
        .finish_execution(
            e.id,
            &ExecutionResult {
                status: ExecStatus::Finished,
                exit_code: Some(0),
                stdout: b"State : clean\nlabradorite members 4\n".to_vec(),
                stderr: Vec::new(),
                error: None,
            },
        )
        .unwrap();
    store
        .set_tool_result(m.id, "call_1", "exit 0", false)
        .unwrap();
    store.finish_message(m.id, None).unwrap();
    store
        .complete_task(sid, Outcome::Success, "array clean")
        .unwrap();
    (sid, m.id)
}

#[test]
fn search_open_export_and_import_work_with_no_model() {
    let dir = tempfile::tempdir().unwrap();
    let (sid, mid) = seed(dir.path());
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    // No model is configured: the agent is not ready, and none of this needs it.
    let settings = invoke(&window, "get_settings", json!({})).unwrap();
    assert_eq!(settings["agent_ready"], false, "{settings}");

    let page = invoke(
        &window,
        "search_sessions",
        json!({"query": {"text": "labradorite"}}),
    )
    .unwrap();
    assert_eq!(page["hits"].as_array().unwrap().len(), 1, "{page}");
    let hit = &page["hits"][0];
    assert_eq!(hit["session"]["id"], sid);
    assert_eq!(hit["source"], "stdout");
    assert_eq!(hit["message_id"], mid);
    assert_eq!(hit["target"], "host:nas");
    assert!(
        hit["snippet"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["hit"] == true && p["text"] == "labradorite"),
        "{hit}"
    );
    let filtered = invoke(
        &window,
        "search_sessions",
        json!({"query": {"text": "labradorite", "statuses": ["failed"], "outcomes": null}}),
    )
    .unwrap();
    assert!(filtered["hits"].as_array().unwrap().is_empty());
    // Operator text with FTS syntax is text.
    for text in ["\"", "NEAR(", "*", "-x", "a OR"] {
        invoke(&window, "search_sessions", json!({"query": {"text": text}})).unwrap();
    }

    // The past session opens without the agent.
    let view = invoke(&window, "session_view", json!({"id": sid})).unwrap();
    assert_eq!(
        view["session"]["status"], "partial",
        "the I6 gate: no fact written back"
    );
    assert_eq!(
        view["executions"][0]["stdout"],
        "State : clean\nlabradorite members 4\n"
    );

    let md = invoke(
        &window,
        "export_session",
        json!({"id": sid, "format": "markdown"}),
    )
    .unwrap();
    assert_eq!(md["mime"], "text/markdown");
    assert!(
        md["file_name"]
            .as_str()
            .unwrap()
            .starts_with(&format!("nomos-session-{sid}-check-the-spinel-array")),
        "{md}"
    );
    assert!(
        md["text"]
            .as_str()
            .unwrap()
            .contains("<details><summary>stdout ("),
        "{md}"
    );
    let exported = invoke(
        &window,
        "export_session",
        json!({"id": sid, "format": "json"}),
    )
    .unwrap();
    assert!(exported["file_name"].as_str().unwrap().ends_with(".json"));
    let text = exported["text"].as_str().unwrap().to_owned();

    let imported = invoke(&window, "import_session", json!({"text": text})).unwrap();
    let new_id = imported["session"]["id"].as_i64().unwrap();
    assert_ne!(new_id, sid);
    assert_eq!(imported["session"]["status"], "partial");
    assert_eq!(imported["messages"], 2);
    assert_eq!(imported["executions"], 1);
    let again = invoke(
        &window,
        "search_sessions",
        json!({"query": {"text": "labradorite"}}),
    )
    .unwrap();
    assert_eq!(again["hits"].as_array().unwrap().len(), 2);

    // A malformed or newer file: a typed error, nothing written.
    let before = invoke(&window, "list_sessions", json!({"query": {}})).unwrap();
    let mut newer: Value = serde_json::from_str(&text).unwrap();
    newer["version"] = json!(3);
    for (body, code) in [
        ("{".to_owned(), "store.import_invalid"),
        ("[]".to_owned(), "store.import_invalid"),
        (newer.to_string(), "store.import_version"),
    ] {
        let err = invoke(&window, "import_session", json!({"text": body})).unwrap_err();
        assert_eq!(err["code"], code, "{err}");
        assert_eq!(err["retryable"], false);
    }
    assert_eq!(
        invoke(&window, "list_sessions", json!({"query": {}})).unwrap(),
        before
    );
    let missing = invoke(
        &window,
        "export_session",
        json!({"id": 4242, "format": "json"}),
    )
    .unwrap_err();
    assert_eq!(missing["code"], "store.not_found");
}

/// Ids of a page's messages.
fn ids(page: &Value) -> Vec<i64> {
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn a_long_session_opens_one_page_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    // The run (with its execution) first, then 450 more messages.
    let (sid, run_message) = seed(dir.path());
    {
        let store = Store::open_in_dir(dir.path()).unwrap();
        for i in 0..450 {
            store
                .append_message(&NewMessage::user(sid, format!("message {i}")))
                .unwrap();
        }
    }
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let page = nomos_desktop::TRANSCRIPT_PAGE as usize;

    // The newest page, with no execution: its messages ran nothing.
    let view = invoke(&window, "session_view", json!({"id": sid})).unwrap();
    let newest = ids(&view);
    assert_eq!(newest.len(), page);
    assert_eq!(
        (view["older"].clone(), view["newer"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(view["messages"][page - 1]["text"], "message 449");
    assert!(
        view["executions"].as_array().unwrap().is_empty(),
        "{}",
        view["executions"]
    );
    // The whole plan comes with any page (the step and the store's write-back step).
    assert_eq!(view["plan"][0]["title"], "Look", "{}", view["plan"]);

    // Scrolling up: the pages before it, contiguous, until the first message.
    let mut first = newest[0];
    let mut seen = newest.len();
    loop {
        let older = invoke(
            &window,
            "session_messages",
            json!({"id": sid, "before": first}),
        )
        .unwrap();
        let got = ids(&older);
        assert!(got.windows(2).all(|w| w[0] < w[1]) && *got.last().unwrap() < first);
        assert_eq!(older["newer"], true);
        seen += got.len();
        first = got[0];
        if older["older"] == false {
            // The first page holds the run and its execution, for the run card.
            assert!(got.contains(&run_message));
            assert_eq!(older["executions"][0]["call_id"], "call_1");
            break;
        }
    }
    assert_eq!(seen, 452, "every message once");

    // A search hit opens around its message, and the page after it follows on.
    let at = invoke(
        &window,
        "session_view",
        json!({"id": sid, "around": run_message}),
    )
    .unwrap();
    assert!(ids(&at).contains(&run_message));
    assert_eq!(
        (at["older"].clone(), at["newer"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(
        at["executions"][0]["stdout"],
        "State : clean\nlabradorite members 4\n"
    );
    let last = *ids(&at).last().unwrap();
    let next = invoke(
        &window,
        "session_messages",
        json!({"id": sid, "after": last}),
    )
    .unwrap();
    assert!(ids(&next)[0] > last);

    // Bad requests are refused with a code, and change nothing.
    for body in [
        json!({"id": sid}),
        json!({"id": sid, "before": first, "after": first}),
    ] {
        let e = invoke(&window, "session_messages", body).unwrap_err();
        assert_eq!(e["code"], "store.invalid_input", "{e}");
    }
    let e = invoke(&window, "session_view", json!({"id": sid, "around": 7})).unwrap_err();
    assert_eq!(e["code"], "store.not_found", "{e}");
}
