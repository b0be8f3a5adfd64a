//! The graph and ledger commands on Tauri's mock runtime over a real store on disk: the
//! webview's arguments in, the DTOs out, and the caps the shell puts on a request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_desktop::AppState;
use nomos_store::{
    CommandClass, ExecStatus, ExecutionResult, NewExecution, NewMessage, NewPlanStep, NewSession,
    ProposePlanOutcome, Store,
};
use serde_json::{Map, Value, json};

mod support;
use support::{app, invoke};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// A session that ran `nginx -v` on host:web-01 and wrote back nginx's version.
fn seed(dir: &std::path::Path) -> (i64, i64) {
    let store = Store::open_in_dir(dir).unwrap();
    let s = store
        .create_session(NewSession {
            title: "Check nginx".into(),
            goal: None,
        })
        .unwrap()
        .id;
    store
        .append_message(&NewMessage::user(s, "which nginx?"))
        .unwrap();
    match store.propose_plan(s, &[NewPlanStep::new("Look")]).unwrap() {
        ProposePlanOutcome::Proposed(_) => {}
        ProposePlanOutcome::Refused(r) => panic!("{r:?}"),
    }
    let e = store
        .create_execution(&NewExecution {
            session_id: s,
            step_seq: None,
            call_id: None,
            target: "host:web-01".into(),
            command: "nginx -v".into(),
            canonical: "nginx -v".into(),
            class: CommandClass::ReadOnly,
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
                stdout: b"nginx/1.26".to_vec(),
                stderr: Vec::new(),
                error: None,
            },
        )
        .unwrap();
    let m = store
        .append_message(&NewMessage::assistant(s, "nginx 1.26"))
        .unwrap();
    store
        .update_entity_attributes(Some(s), "service:nginx", &obj(json!({"version": "1.26"})))
        .unwrap();
    store
        .create_relationship(
            Some(s),
            "service:nginx",
            "runs_on",
            "host:web-01",
            &Map::new(),
        )
        .unwrap();
    for i in 0..30 {
        store
            .create_relationship(
                None,
                &format!("service:s{i}"),
                "runs_on",
                "host:big",
                &Map::new(),
            )
            .unwrap();
    }
    (s, m.id)
}

/// The length of a column of a graph slice.
fn len(slice: &Value, col: &str) -> usize {
    slice[col].as_array().unwrap().len()
}

#[test]
fn graph_ledger_and_dependents_reach_the_webview() {
    let dir = tempfile::tempdir().unwrap();
    let (session, message) = seed(dir.path());
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));

    let slice = invoke(
        &window,
        "graph_slice",
        json!({"query": {"touched_by": session}}),
    )
    .unwrap();
    assert_eq!(len(&slice, "node_ids"), 33);
    assert_eq!(len(&slice, "edge_ids"), 31);
    assert_eq!(slice["more_nodes"], false);
    // Every node column has one entry per node, every edge column one per edge.
    for col in [
        "node_slugs",
        "node_kinds",
        "node_updated_at_ms",
        "node_audited_at_ms",
    ] {
        assert_eq!(len(&slice, col), 33, "{col}");
    }
    for col in ["edge_from", "edge_to", "edge_kinds"] {
        assert_eq!(len(&slice, col), 31, "{col}");
    }
    // Decoded through the indexes, the columns say `service:nginx -runs_on-> host:web-01`.
    let col = |name: &str, i: usize| slice[name][i].clone();
    let at = |name: &str, v: &Value| v.as_u64().map(|i| slice[name][i as usize].clone()).unwrap();
    let edges: Vec<(Value, Value, Value)> = (0..31)
        .map(|i| {
            (
                at("node_slugs", &col("edge_from", i)),
                at("relation_kinds", &col("edge_kinds", i)),
                at("node_slugs", &col("edge_to", i)),
            )
        })
        .collect();
    assert!(edges.contains(&(
        json!("service:nginx"),
        json!("runs_on"),
        json!("host:web-01")
    )));
    let kinds: Vec<Value> = (0..33)
        .map(|i| at("kinds", &col("node_kinds", i)))
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == json!("host")).count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == json!("service")).count(), 31);
    assert_eq!(len(&slice, "kinds"), 2, "each kind name once");
    assert_eq!(len(&slice, "relation_kinds"), 1);
    let touched: Vec<&str> = slice["touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(touched, ["host:web-01", "service:nginx"]);

    // A bounded page, and the caps applied to what is asked.
    let page = invoke(&window, "graph_slice", json!({"query": {"max_nodes": 5}})).unwrap();
    assert_eq!(len(&page, "node_ids"), 5);
    assert_eq!(page["more_nodes"], true);
    assert!(page["next_after"].as_i64().is_some());
    let huge = invoke(
        &window,
        "graph_slice",
        json!({"query": {"max_nodes": 4_000_000_000u32, "depth": 200, "focus": "host:big"}}),
    )
    .unwrap();
    assert_eq!(len(&huge, "node_ids"), 31, "depth clamps, caps hold");
    let err = invoke(
        &window,
        "graph_slice",
        json!({"query": {"focus": "host:nowhere"}}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "store.not_found");

    let d = invoke(&window, "entity_details", json!({"slug": "service:nginx"})).unwrap();
    assert_eq!(d["attributes"][0]["key"], "version");
    let h = &d["history"][0];
    assert_eq!(h["session_id"], session);
    assert_eq!(h["session_title"], "Check nginx");
    assert_eq!(h["message_id"], message);
    assert_eq!(h["execution_command"], "nginx -v");
    let d = invoke(&window, "entity_details", json!({"slug": "host:web-01"})).unwrap();
    assert_eq!(d["executions"][0]["command"], "nginx -v");
    let err = invoke(&window, "entity_details", json!({"slug": "host:nowhere"})).unwrap_err();
    assert_eq!(err["code"], "store.not_found");

    let ledger = invoke(
        &window,
        "execution_ledger",
        json!({"query": {"target": "host:web-01", "classes": ["read_only"], "outcomes": ["succeeded"]}}),
    )
    .unwrap();
    assert_eq!(ledger["rows"].as_array().unwrap().len(), 1);
    assert_eq!(ledger["rows"][0]["outcome"], "succeeded");
    assert_eq!(ledger["next"], Value::Null);
    let none = invoke(
        &window,
        "execution_ledger",
        json!({"query": {"outcomes": ["failed"]}}),
    )
    .unwrap();
    assert!(none["rows"].as_array().unwrap().is_empty());

    let deps = invoke(
        &window,
        "target_dependents",
        json!({"target": "host:web-01"}),
    )
    .unwrap();
    assert_eq!(deps["known"], true);
    assert_eq!(deps["dependents"][0]["slug"], "service:nginx");
    assert_eq!(deps["dependents"][0]["relation"], "runs_on");

    let m = invoke(&window, "execution_matrix", json!({"sessionId": session})).unwrap();
    assert_eq!(m["targets"], json!(["host:web-01"]));
    assert_eq!(m["cells"][0]["runs"], 1);
}

#[test]
fn the_home_overview_reaches_the_webview_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let (session, _message) = seed(dir.path());
    let (_app, window) = app(AppState::open_in(dir.path().to_path_buf()));
    let home = invoke(&window, "home_overview", json!({})).unwrap();
    // 33 entities: the small graph holds the 40 newest, so all of them, with their relations.
    assert_eq!(len(&home["graph"], "node_ids"), 33);
    assert_eq!(len(&home["graph"], "edge_ids"), 31);
    let targets: Vec<(&str, &Value)> = home["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["slug"].as_str().unwrap(), &t["last_audited_at_ms"]))
        .collect();
    assert_eq!(
        targets,
        [("host:big", &Value::Null), ("host:web-01", &Value::Null)],
        "targets only, never audited first"
    );
    assert_eq!(home["sessions"][0]["id"], session);
    assert_eq!(home["sessions"][0]["title"], "Check nginx");
    assert_eq!(home["approvals"], json!([]));
    assert_eq!(home["more_approvals"], false);
}
