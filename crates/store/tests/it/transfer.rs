//! Export a session to JSON and Markdown, import JSON as a new session.

use std::collections::HashMap;
use std::time::Duration;

use nomos_store::{
    Approval, ApprovalKind, CommandClass, ExecStatus, ExecutionResult, NewAudit, NewMessage,
    NewPlanStep, OperatorApproval, Outcome, SessionExport, SessionId, SessionStatus, StepStatus,
    Store,
};

use crate::common::*;

fn result(status: ExecStatus, stdout: &str) -> ExecutionResult {
    ExecutionResult {
        status,
        exit_code: Some(0),
        stdout: stdout.as_bytes().to_vec(),
        stderr: b"warn: `tick` </details>\n".to_vec(),
        error: None,
    }
}

/// A session with everything a review needs: messages and tool calls, two plan generations,
/// an operator's window, a read-only and a window-approved run, audit rows, a completion.
fn rich_session(t: &TestStore) -> SessionId {
    let s = &t.store;
    let sid = new_session(t, "Upgrade nginx </details><script>alert(1)</script>");
    s.append_message(&NewMessage::user(sid, "upgrade nginx on web-01 ```"))
        .unwrap();
    s.set_goal(sid, "nginx 1.26 on web-01").unwrap();
    let plan_v1 = [NewPlanStep::new("Look").target("host:web-01")];
    s.propose_plan(sid, &plan_v1).unwrap();
    let plan = [
        NewPlanStep::new("Check the version").target("host:web-01"),
        NewPlanStep::new("Upgrade")
            .target("host:web-01")
            .detail("apt-get install nginx"),
    ];
    s.propose_plan(sid, &plan).unwrap();
    let m = s.begin_assistant_message(sid, false).unwrap();
    s.append_text(m.id, "# Plan\nI will **check** then upgrade.")
        .unwrap();
    s.record_tool_call(
        m.id,
        "c1",
        "propose_plan",
        r#"{"steps":["Check","Upgrade"]}"#,
    )
    .unwrap();
    s.set_tool_result(m.id, "c1", "Plan set (3 steps).", false)
        .unwrap();
    s.record_tool_call(m.id, "c2", "run", r#"{"command":"nginx -v"}"#)
        .unwrap();
    s.record_audit(
        &NewAudit::new(Some(sid), "propose_plan", "{}", "Plan set")
            .message(m.id)
            .call_id("c1"),
    )
    .unwrap();
    let approve = s
        .append_message(&NewMessage::user(sid, "approved, go"))
        .unwrap();
    let w = s
        .open_approval_window(
            sid,
            &OperatorApproval::ChatMessage {
                message_id: approve.id,
            },
            Some(1_800_000),
        )
        .unwrap();
    step(t, sid, 1, StepStatus::Running);
    let mut ro = read_only(sid, "host:web-01", "nginx -v");
    ro.call_id = Some("c2".into());
    ro.step_seq = Some(1);
    let e1 = s.create_execution(&ro).unwrap();
    s.start_execution(e1.id).unwrap();
    t.clock.advance(Duration::from_millis(120));
    s.finish_execution(
        e1.id,
        &result(ExecStatus::Finished, "nginx version: nginx/1.24.0\n```\n"),
    )
    .unwrap();
    s.set_tool_result(m.id, "c2", "exit 0", false).unwrap();
    s.finish_message(m.id, None).unwrap();
    step(t, sid, 1, StepStatus::Done);
    step(t, sid, 2, StepStatus::Running);
    let mut cm = read_only(sid, "host:web-01", "apt-get install -y nginx");
    cm.class = CommandClass::ConfigMutation;
    cm.step_seq = Some(2);
    cm.approval = Some(Approval {
        kind: ApprovalKind::Window,
        by: Some("desktop".into()),
        window_id: Some(w.id),
    });
    let e2 = s.create_execution(&cm).unwrap();
    s.start_execution(e2.id).unwrap();
    s.finish_execution(
        e2.id,
        &result(ExecStatus::Finished, "Setting up nginx (1.26.0)\n"),
    )
    .unwrap();
    step(t, sid, 2, StepStatus::Done);
    s.update_entity_attributes(
        Some(sid),
        "host:web-01",
        serde_json::json!({"nginx": "1.26.0"}).as_object().unwrap(),
    )
    .unwrap();
    s.complete_task(sid, Outcome::Success, "nginx 1.24 → 1.26")
        .unwrap();
    sid
}

/// The document with every store id replaced by its position (ids differ between stores),
/// and without the export time and the import mark.
fn normal(doc: &SessionExport) -> SessionExport {
    let mut d = doc.clone();
    d.exported_at_ms = 0;
    d.session.id = 0;
    d.session.imported = None;
    let msgs: HashMap<i64, i64> = d
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id, i as i64))
        .collect();
    let wins: HashMap<i64, i64> = d
        .approval_windows
        .iter()
        .enumerate()
        .map(|(i, w)| (w.id, i as i64))
        .collect();
    for m in &mut d.messages {
        m.id = msgs[&m.id];
    }
    for w in &mut d.approval_windows {
        w.id = wins[&w.id];
        w.message_id = w.message_id.map(|id| msgs[&id]);
    }
    for (i, e) in d.executions.iter_mut().enumerate() {
        e.id = i as i64;
        e.approval_window_id = e.approval_window_id.map(|id| wins[&id]);
    }
    for (i, a) in d.audit.iter_mut().enumerate() {
        a.id = i as i64;
        a.message_id = a.message_id.map(|id| msgs[&id]);
    }
    d
}

fn count(store: &Store, table: &str) -> i64 {
    let c = rusqlite::Connection::open(store.path()).unwrap();
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

const TABLES: &[&str] = &[
    "sessions",
    "messages",
    "tool_calls",
    "plan_generations",
    "plan_steps",
    "approval_windows",
    "executions",
    "audit_log",
];

fn counts(store: &Store) -> Vec<i64> {
    TABLES.iter().map(|t| count(store, t)).collect()
}

#[test]
fn export_import_export_gives_the_same_document() {
    let t = store();
    let sid = rich_session(&t);
    let first = t.store.export_session(sid).unwrap();
    assert_eq!(first.messages.len(), 3);
    assert_eq!(first.plan.len(), 2);
    assert_eq!(first.plan[1].steps.len(), 3, "with the write-back step");
    assert_eq!(first.executions.len(), 2);
    assert_eq!(first.approval_windows.len(), 1);
    assert!(!first.audit.is_empty());
    let json = first.to_json().unwrap();

    // Into another data directory, as an operator moving a session would.
    let other = store();
    let imported = other.store.import_session_json(&json).unwrap();
    assert_eq!(imported.messages, 3);
    assert_eq!(imported.session.status, SessionStatus::Done);
    assert_eq!(imported.session.outcome, Some(Outcome::Success));
    let second = other.store.export_session(imported.session.id).unwrap();
    assert!(second.session.imported.is_some(), "marked imported");
    assert_eq!(normal(&second), normal(&first));
    // And into the same store: new ids, the original untouched.
    let again = t.store.import_session_json(&json).unwrap();
    assert_ne!(again.session.id, sid);
    assert_eq!(
        normal(&t.store.export_session(again.session.id).unwrap()),
        normal(&first)
    );
    assert_eq!(
        normal(&t.store.export_session(sid).unwrap()),
        normal(&first)
    );
    assert!(t.store.import_mark(sid).unwrap().is_none());
    // The imported copy is searchable like any session.
    let hits = other
        .store
        .search_sessions(&nomos_store::SessionSearchQuery {
            text: "1.24.0".into(),
            ..Default::default()
        })
        .unwrap()
        .hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session.id, imported.session.id);
}

#[test]
fn an_import_runs_nothing_and_approves_nothing() {
    let t = store();
    let s = &t.store;
    let sid = new_session(&t, "In flight");
    s.append_message(&NewMessage::user(sid, "restart nginx"))
        .unwrap();
    s.propose_plan(sid, &[NewPlanStep::new("Restart").target("host:a")])
        .unwrap();
    let w = s
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    step(&t, sid, 1, StepStatus::Running);
    let mut cm = read_only(sid, "host:a", "systemctl restart nginx");
    cm.class = CommandClass::ConfigMutation;
    cm.approval = Some(Approval {
        kind: ApprovalKind::Window,
        by: None,
        window_id: Some(w.id),
    });
    let running = s.create_execution(&cm).unwrap();
    s.start_execution(running.id).unwrap();
    let bg = s
        .create_execution(&read_only(sid, "host:a", "uptime"))
        .unwrap();
    s.start_execution(bg.id).unwrap();
    s.mark_execution_background(bg.id).unwrap();
    s.finish_execution(bg.id, &result(ExecStatus::Finished, "up 3 days"))
        .unwrap();
    let waiting = s
        .create_execution(&NewExecutionExt::destructive(
            sid,
            "host:a",
            "rm -rf /tmp/x",
        ))
        .unwrap();
    assert_eq!(waiting.status, ExecStatus::AwaitingApproval);
    let json = s.export_session(sid).unwrap().to_json().unwrap();

    let other = store();
    let before = other.store.pending_continuations().unwrap().len();
    let new = other.store.import_session_json(&json).unwrap().session;
    assert_eq!(
        new.status,
        s.get_session(sid).unwrap().status,
        "status preserved"
    );
    assert!(
        other.store.is_session_paused(new.id).unwrap(),
        "nothing resumes it by itself"
    );
    assert!(
        other
            .store
            .active_approval_window(new.id)
            .unwrap()
            .is_none(),
        "no window open here"
    );
    for e in other.store.executions(new.id).unwrap() {
        assert!(e.status.is_terminal(), "{e:?}");
        assert!(
            e.canonical_sha256.is_none() && !e.is_exact_command(&e.canonical),
            "never runs"
        );
        assert!(e.owner.is_none() && e.pgid.is_none());
    }
    let ex = other.store.executions(new.id).unwrap();
    assert_eq!(ex[0].status, ExecStatus::Cancelled);
    assert_eq!(
        ex[0].error.as_deref(),
        Some(nomos_store::IMPORTED_IN_FLIGHT)
    );
    assert_eq!(
        ex[1].status,
        ExecStatus::Finished,
        "finished work is kept as it was"
    );
    assert_eq!(ex[2].status, ExecStatus::Cancelled);
    assert_eq!(
        other.store.pending_continuations().unwrap().len(),
        before,
        "no continuation owed"
    );
    assert!(other.store.active_executions().unwrap().is_empty());
    other.clock.advance(Duration::from_secs(86_400));
    assert!(
        other
            .store
            .idle_sessions(0)
            .unwrap()
            .iter()
            .all(|s| s.id != new.id)
    );
    let report = other.store.recover_at_startup().unwrap();
    assert!(report.interrupted_executions.is_empty() && report.pending_continuations.is_empty());
    // The window that was open in the file is closed here.
    let windows = other.store.approval_windows(new.id).unwrap();
    assert!(windows.iter().all(|w| w.closed_at_ms.is_some()));
}

/// A destructive command waiting for its approval.
struct NewExecutionExt;
impl NewExecutionExt {
    fn destructive(sid: SessionId, target: &str, cmd: &str) -> nomos_store::NewExecution {
        let mut n = read_only(sid, target, cmd);
        n.class = CommandClass::Destructive;
        n
    }
}

#[test]
fn the_export_holds_no_secret_and_no_exact_command_digest() {
    let t = store();
    let sid = rich_session(&t);
    // A row written before a masking rule existed: raw secret text in the database.
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
    let c = rusqlite::Connection::open(t.path()).unwrap();
    c.execute(
        "UPDATE executions SET stdout = ?1 WHERE session_id = ?2",
        rusqlite::params![key, sid],
    )
    .unwrap();
    c.execute(
        "UPDATE messages SET text = text || ' password: hunter2secret' WHERE session_id = ?1",
        [sid],
    )
    .unwrap();
    c.execute(
        "UPDATE tool_calls SET arguments = '{\"api_key\": \"sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789\"}'",
        [],
    )
    .unwrap();
    let doc = t.store.export_session(sid).unwrap();
    let json = doc.to_json().unwrap();
    let md = doc.to_markdown();
    for text in [&json, &md] {
        for secret in [
            "b3BlbnNzaC1rZXktdjEAAAAA",
            "hunter2secret",
            "AbCdEfGhIjKlMnOpQrStUvWx0123456789",
        ] {
            assert!(!text.contains(secret), "{secret} exported");
        }
        assert!(text.contains(nomos_store::REDACTED));
    }
    let digests: Vec<String> = t
        .store
        .executions(sid)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.canonical_sha256)
        .collect();
    assert_eq!(digests.len(), 2);
    for d in digests {
        assert!(!json.contains(&d), "the exact command's digest is left out");
    }
    for key in ["canonical_sha256", "owner", "pgid", "continued_at_ms"] {
        assert!(!json.contains(&format!("\"{key}\"")), "{key}");
    }
}

#[test]
fn markdown_folds_tool_calls_and_output_and_cannot_be_broken_by_their_text() {
    let t = store();
    let sid = rich_session(&t);
    let md = t.store.export_session(sid).unwrap().to_markdown();
    assert!(
        md.starts_with("# Upgrade nginx &lt;/details&gt;&lt;script&gt;"),
        "{md}"
    );
    assert!(!md.contains("<script>"));
    assert!(
        md.contains("<details><summary>Tool call: propose_plan ✓</summary>"),
        "{md}"
    );
    assert!(md.contains("### 1. `nginx -v` on `host:web-01`"), "{md}");
    assert!(md.contains("- Class: config_mutation"), "{md}");
    assert!(md.contains("- Approval: window by desktop (window"), "{md}");
    assert!(md.contains("- Status: **finished**, exit 0"), "{md}");
    assert!(
        md.contains("<details><summary>stdout (32 bytes)</summary>"),
        "{md}"
    );
    assert!(md.contains("### Plan v1 (replaced, 2 steps)"), "{md}");
    assert!(md.contains("### Plan v2 (current, 3 steps)"), "{md}");
    assert!(md.contains("> # Plan"), "model markdown is quoted: {md}");
    // Every fold closes, and only the folds open one: no text opened or closed one.
    let opened = md
        .lines()
        .filter(|l| l.starts_with("<details><summary>"))
        .count();
    let closed = md.lines().filter(|l| *l == "</details>").count();
    assert_eq!((opened, closed), (6, 6), "{md}");
    assert!(
        md.contains("\nwarn: `tick` </details>\n```"),
        "a tag in output stays in its fence: {md}"
    );
    // An output holding a fence sits inside a longer one.
    assert!(
        md.contains("````\nnginx version: nginx/1.24.0\n```\n````"),
        "{md}"
    );
}

fn hostile_cases(valid: &serde_json::Value) -> Vec<(&'static str, String)> {
    use serde_json::json;
    let with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = valid.clone();
        f(&mut v);
        v.to_string()
    };
    let mut deep = String::new();
    for _ in 0..100_000 {
        deep.push('[');
    }
    vec![
        ("empty file", String::new()),
        ("not json", "nomos session".into()),
        ("truncated", valid.to_string()[..200].to_owned()),
        ("array", "[]".into()),
        ("empty object", "{}".into()),
        ("string", "\"nomos.session\"".into()),
        ("deep nesting", deep),
        ("wrong format", with(&|v| v["format"] = json!("other.app"))),
        ("format number", with(&|v| v["format"] = json!(1))),
        (
            "missing version",
            with(&|v| {
                v.as_object_mut().unwrap().remove("version");
            }),
        ),
        ("version string", with(&|v| v["version"] = json!("1"))),
        ("version zero", with(&|v| v["version"] = json!(0))),
        ("version negative", with(&|v| v["version"] = json!(-1))),
        ("version float", with(&|v| v["version"] = json!(1.5))),
        (
            "missing session",
            with(&|v| {
                v.as_object_mut().unwrap().remove("session");
            }),
        ),
        (
            "missing messages",
            with(&|v| {
                v.as_object_mut().unwrap().remove("messages");
            }),
        ),
        ("unknown field", with(&|v| v["extra"] = json!(true))),
        ("title number", with(&|v| v["session"]["title"] = json!(42))),
        (
            "title empty",
            with(&|v| v["session"]["title"] = json!("  ")),
        ),
        (
            "title huge",
            with(&|v| v["session"]["title"] = json!("x".repeat(2 * 1024 * 1024))),
        ),
        (
            "status unknown",
            with(&|v| v["session"]["status"] = json!("running")),
        ),
        ("messages object", with(&|v| v["messages"] = json!({}))),
        (
            "role unknown",
            with(&|v| v["messages"][0]["role"] = json!("root")),
        ),
        (
            "message id string",
            with(&|v| v["messages"][0]["id"] = json!("1")),
        ),
        (
            "message id huge",
            with(&|v| v["messages"][0]["id"] = json!(1e30)),
        ),
        (
            "message text null",
            with(&|v| v["messages"][0]["text"] = serde_json::Value::Null),
        ),
        (
            "message text huge",
            with(&|v| v["messages"][0]["text"] = json!("y".repeat(9 * 1024 * 1024))),
        ),
        (
            "message empty",
            with(&|v| {
                v["messages"][0]["text"] = json!("");
                v["messages"][0]["tool_calls"] = json!([]);
            }),
        ),
        (
            "duplicate message id",
            with(&|v| {
                let id = v["messages"][0]["id"].clone();
                v["messages"][1]["id"] = id;
            }),
        ),
        (
            "messages out of order",
            with(&|v| {
                let a = v["messages"][0].clone();
                v["messages"][0] = v["messages"][1].clone();
                v["messages"][1] = a;
            }),
        ),
        (
            "duplicate call id",
            with(&|v| {
                let c = v["messages"][1]["tool_calls"][0].clone();
                v["messages"][1]["tool_calls"][1]["call_id"] = c["call_id"].clone();
            }),
        ),
        (
            "duplicate generation",
            with(&|v| v["plan"][1]["generation"] = json!(1)),
        ),
        (
            "generation zero",
            with(&|v| v["plan"][0]["generation"] = json!(0)),
        ),
        (
            "duplicate step",
            with(&|v| v["plan"][1]["steps"][1]["seq"] = json!(1)),
        ),
        (
            "step seq zero",
            with(&|v| v["plan"][1]["steps"][0]["seq"] = json!(0)),
        ),
        (
            "step status unknown",
            with(&|v| v["plan"][1]["steps"][0]["status"] = json!("exploded")),
        ),
        (
            "window without generation",
            with(&|v| v["approval_windows"][0]["generation"] = json!(9)),
        ),
        (
            "window names a missing message",
            with(&|v| v["approval_windows"][0]["message_id"] = json!(123)),
        ),
        (
            "duplicate window",
            with(&|v| {
                let w = v["approval_windows"][0].clone();
                v["approval_windows"].as_array_mut().unwrap().push(w);
            }),
        ),
        (
            "duplicate execution id",
            with(&|v| {
                let id = v["executions"][0]["id"].clone();
                v["executions"][1]["id"] = id;
            }),
        ),
        (
            "execution of a missing generation",
            with(&|v| v["executions"][0]["generation"] = json!(7)),
        ),
        (
            "execution of a missing step",
            with(&|v| v["executions"][0]["step_seq"] = json!(99)),
        ),
        (
            "execution of a missing window",
            with(&|v| v["executions"][1]["approval_window_id"] = json!(555)),
        ),
        (
            "execution class unknown",
            with(&|v| v["executions"][0]["class"] = json!("harmless")),
        ),
        (
            "execution exit code huge",
            with(&|v| v["executions"][0]["exit_code"] = json!(1u64 << 40)),
        ),
        (
            "execution empty command",
            with(&|v| v["executions"][0]["command"] = json!(" ")),
        ),
        (
            "execution stdout huge",
            with(&|v| v["executions"][0]["stdout"] = json!("z".repeat(9 * 1024 * 1024))),
        ),
        (
            "duplicate audit id",
            with(&|v| {
                let a = v["audit"][0].clone();
                v["audit"].as_array_mut().unwrap().push(a);
            }),
        ),
        (
            "audit names a missing message",
            with(&|v| v["audit"][0]["message_id"] = json!(77)),
        ),
    ]
}

#[test]
fn a_hostile_import_is_a_typed_error_and_writes_nothing() {
    let t = store();
    let sid = rich_session(&t);
    let valid: serde_json::Value =
        serde_json::from_str(&t.store.export_session(sid).unwrap().to_json().unwrap()).unwrap();
    let before = counts(&t.store);
    for (name, text) in hostile_cases(&valid) {
        let err = t.store.import_session_json(&text).expect_err(name);
        assert_eq!(err.code(), "store.import_invalid", "{name}: {err}");
        assert!(
            err.to_string().contains("Nothing was imported"),
            "{name}: {err}"
        );
        assert!(
            err.to_string().len() < 2048,
            "{name}: the message stays short"
        );
        assert_eq!(counts(&t.store), before, "{name} wrote something");
    }
    // The valid document itself imports (the cases above are each one change away from it).
    t.store.import_session_json(&valid.to_string()).unwrap();
}

#[test]
fn a_newer_format_is_named_as_such_and_writes_nothing() {
    let t = store();
    let sid = rich_session(&t);
    let mut v: serde_json::Value =
        serde_json::from_str(&t.store.export_session(sid).unwrap().to_json().unwrap()).unwrap();
    let before = counts(&t.store);
    for version in [2u64, 99, u64::MAX] {
        v["version"] = serde_json::json!(version);
        // A newer format may change anything else too: the version is read first.
        v["messages"] = serde_json::json!("a newer shape");
        let err = t.store.import_session_json(&v.to_string()).unwrap_err();
        assert_eq!(err.code(), "store.import_version", "{err}");
        assert!(err.to_string().contains(&version.to_string()), "{err}");
        assert_eq!(counts(&t.store), before);
    }
}
