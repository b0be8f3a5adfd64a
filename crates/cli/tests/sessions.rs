#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `nomos sessions …` and `nomos knowledge search`: the real binary on a real data directory,
//! with no model configured and no network (nothing here may need one).

mod common;

use std::path::Path;
use std::process::Output;

use nomos_store::{
    ExecStatus, ExecutionResult, KnowledgeKind, NewExecution, NewKnowledge, NewMessage,
    NewPlanStep, NewSession, Outcome, Store,
};

fn nomos(home: &Path, args: &[&str]) -> Output {
    common::nomos_command(home, None, args).output().unwrap()
}

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {err}", out.status);
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn failed(out: &Output, code: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "succeeded: {err}");
    assert!(err.contains(code), "{code} not in: {err}");
    err
}

/// Two sessions: one finished with a command whose output holds a rare word and a terminal
/// escape, one still planning.
fn seed(home: &Path) -> (i64, i64) {
    let store = Store::open_in_dir(&home.join("data")).unwrap();
    let a = store
        .create_session(NewSession {
            title: "Check the zircon pool".into(),
            goal: None,
        })
        .unwrap()
        .id;
    store
        .append_message(&NewMessage::user(a, "is the pool healthy? \u{1b}[2J"))
        .unwrap();
    store
        .propose_plan(
            a,
            &[NewPlanStep::new("Inspect the pool").target("host:nas")],
        )
        .unwrap();
    let m = store.begin_assistant_message(a, false).unwrap();
    store.append_text(m.id, "Checking the pool now.").unwrap();
    store
        .record_tool_call(m.id, "call_1", "run", r#"{"command":"zpool status"}"#)
        .unwrap();
    let e = store
        .create_execution(&NewExecution {
            session_id: a,
            step_seq: Some(1),
            call_id: Some("call_1".into()),
            target: "host:nas".into(),
            command: "zpool status".into(),
            canonical: "zpool status".into(),
            class: nomos_store::CommandClass::ReadOnly,
            decision_reason: "read-only: zpool status".into(),
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
                stdout:
                    b"pool: tank\nstate: ONLINE\nscan: tourmaline repaired 0B\n\x1b]0;pwned\x07\n"
                        .to_vec(),
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
        .complete_task(a, Outcome::Failed, "pool scrub pending")
        .unwrap();
    let b = store
        .create_session(NewSession {
            title: "Plan the upgrade".into(),
            goal: Some("nginx".into()),
        })
        .unwrap()
        .id;
    store
        .upsert_knowledge(&NewKnowledge {
            session_id: Some(a),
            kind: KnowledgeKind::Investigation,
            slug: None,
            title: "Tourmaline pool audit".into(),
            body: "The pool tank on nas is ONLINE.".into(),
            tags: vec!["audit".into()],
            about: vec!["host:nas".into()],
        })
        .unwrap();
    (a, b)
}

#[test]
fn list_search_and_filters_from_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = seed(home.path());
    let all = ok(&nomos(home.path(), &["sessions", "list"]));
    assert!(
        all.find("Plan the upgrade").unwrap() < all.find("Check the zircon pool").unwrap(),
        "{all}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&ok(&nomos(home.path(), &["sessions", "list", "--json"]))).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    let failed_only: serde_json::Value = serde_json::from_str(&ok(&nomos(
        home.path(),
        &["sessions", "list", "--status", "failed", "--json"],
    )))
    .unwrap();
    assert_eq!(failed_only[0]["id"], a);
    assert_eq!(failed_only.as_array().unwrap().len(), 1);

    // A word only the command's output holds.
    let page: serde_json::Value = serde_json::from_str(&ok(&nomos(
        home.path(),
        &["sessions", "list", "--search", "tourmaline", "--json"],
    )))
    .unwrap();
    let hits = page["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{page}");
    assert_eq!(hits[0]["session"]["id"], a);
    assert_eq!(hits[0]["source"], "stdout");
    assert_eq!(hits[0]["target"], "host:nas");
    assert!(hits[0]["message_id"].is_i64());
    let text = ok(&nomos(
        home.path(),
        &["sessions", "list", "--search", "tourmaline"],
    ));
    assert!(text.contains("stdout on host:nas"), "{text}");
    assert!(
        text.contains("[tourmaline]"),
        "not a terminal: brackets mark the match: {text}"
    );
    let none = ok(&nomos(
        home.path(),
        &[
            "sessions", "list", "--search", "pool", "--status", "planning",
        ],
    ));
    assert!(none.contains("No match."), "{none}");
    let idle = ok(&nomos(
        home.path(),
        &["sessions", "list", "--search", "nginx", "--status", "idle"],
    ));
    assert!(idle.contains(&format!("#{b}")), "{idle}");
    // FTS syntax is text, never an error.
    for hostile in [
        "\"",
        "NEAR(",
        "pool*",
        "-pool",
        "a OR",
        "(",
        "{title}:x",
        "*",
    ] {
        // `--search=…` so a leading dash is the value, not a flag.
        ok(&nomos(
            home.path(),
            &["sessions", "list", &format!("--search={hostile}")],
        ));
    }
}

#[test]
fn show_works_with_no_model_and_escapes_what_hosts_printed() {
    let home = tempfile::tempdir().unwrap();
    let (a, _) = seed(home.path());
    let out = ok(&nomos(home.path(), &["sessions", "show", &a.to_string()]));
    for want in [
        "Check the zircon pool",
        "Status: failed (failed)",
        "Plan v1 (current)",
        "1. [pending] Inspect the pool — host:nas",
        "Operator:",
        "Checking the pool now.",
        "→ run ✓",
        "1. zpool status on host:nas — finished, exit 0",
        "read_only (read-only: zpool status) · approval: not_needed",
        "| scan: tourmaline repaired 0B",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}'),
        "raw control characters: {out:?}"
    );
    assert!(out.contains("\\x1b[2J"), "escaped visibly: {out}");
    failed(
        &nomos(home.path(), &["sessions", "show", "4242"]),
        "store.not_found",
    );
}

#[test]
fn export_then_import_reproduces_the_session() {
    let home = tempfile::tempdir().unwrap();
    let (a, _) = seed(home.path());
    let json = ok(&nomos(
        home.path(),
        &["sessions", "export", &a.to_string(), "--format", "json"],
    ));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["format"], "nomos.session");
    assert_eq!(doc["version"], 1);
    let md = ok(&nomos(
        home.path(),
        &["sessions", "export", &a.to_string(), "--format", "md"],
    ));
    assert!(md.starts_with("# Check the zircon pool"), "{md}");
    assert!(
        md.contains("<details><summary>Tool call: run ✓</summary>"),
        "{md}"
    );
    assert!(md.contains("<details><summary>stdout ("), "{md}");
    assert!(!md.contains('\u{1b}'), "{md:?}");

    // Into another data directory.
    let other = tempfile::tempdir().unwrap();
    let file = home.path().join("export.json");
    std::fs::write(&file, &json).unwrap();
    let imported: serde_json::Value = serde_json::from_str(&ok(&nomos(
        other.path(),
        &["sessions", "import", file.to_str().unwrap(), "--json"],
    )))
    .unwrap();
    assert_eq!(imported["messages"], 2);
    assert_eq!(imported["executions"], 1);
    assert_eq!(imported["session"]["status"], "failed");
    let id = imported["session"]["id"].as_i64().unwrap().to_string();
    let again: serde_json::Value =
        serde_json::from_str(&ok(&nomos(other.path(), &["sessions", "export", &id]))).unwrap();
    for key in ["messages", "plan", "executions", "approval_windows"] {
        assert_eq!(
            again[key].as_array().unwrap().len(),
            doc[key].as_array().unwrap().len(),
            "{key}"
        );
    }
    assert_eq!(
        again["executions"][0]["stdout"],
        doc["executions"][0]["stdout"]
    );
    assert_eq!(again["messages"][1]["text"], doc["messages"][1]["text"]);
    assert!(again["session"]["imported"].is_object());
    let human = ok(&nomos(
        other.path(),
        &["sessions", "import", file.to_str().unwrap()],
    ));
    assert!(human.contains("Nothing ran."), "{human}");
}

#[test]
fn a_bad_import_file_is_a_clear_error_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (a, _) = seed(home.path());
    let json = ok(&nomos(home.path(), &["sessions", "export", &a.to_string()]));
    let mut newer: serde_json::Value = serde_json::from_str(&json).unwrap();
    newer["version"] = serde_json::json!(7);
    let mut wrong: serde_json::Value = serde_json::from_str(&json).unwrap();
    wrong["messages"][0]["role"] = serde_json::json!("root");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "newer",
            newer.to_string().into_bytes(),
            "store.import_version",
        ),
        (
            "wrong type",
            wrong.to_string().into_bytes(),
            "store.import_invalid",
        ),
        (
            "not json",
            b"{\"format\": \"nomos.session\", \"version\": 1,".to_vec(),
            "store.import_invalid",
        ),
        (
            "not utf-8",
            vec![0xff, 0xfe, b'{', b'}'],
            "store.import_invalid",
        ),
        ("empty", Vec::new(), "store.import_invalid"),
    ];
    for (name, bytes, code) in cases {
        let file = home.path().join(format!("{}.json", name.replace(' ', "_")));
        std::fs::write(&file, bytes).unwrap();
        let err = failed(
            &nomos(home.path(), &["sessions", "import", file.to_str().unwrap()]),
            code,
        );
        assert!(
            err.contains("Nothing was imported") || err.contains("nothing was imported"),
            "{name}: {err}"
        );
        let rows: serde_json::Value =
            serde_json::from_str(&ok(&nomos(home.path(), &["sessions", "list", "--json"])))
                .unwrap();
        assert_eq!(rows.as_array().unwrap().len(), 2, "{name} wrote a session");
    }
    let missing = nomos(home.path(), &["sessions", "import", "/nonexistent/x.json"]);
    failed(&missing, "cli.io");
}

#[test]
fn knowledge_search_from_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    seed(home.path());
    let out = ok(&nomos(home.path(), &["knowledge", "search", "tourmaline"]));
    assert!(
        out.contains("[investigation] Tourmaline pool audit"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&nomos(
        home.path(),
        &["knowledge", "search", "nas", "--json"],
    )))
    .unwrap();
    assert_eq!(json["entities"][0]["slug"], "host:nas", "{json}");
    assert!(json["entries"].as_array().unwrap().len() == 1, "{json}");
    let none = ok(&nomos(home.path(), &["knowledge", "search", "\"NEAR("]));
    assert!(none.contains("No match."), "{none}");
}

/// A demo is labelled from the session's field in every terminal view, never from its title.
#[test]
fn a_demo_session_is_labelled_from_its_field() {
    let home = tempfile::tempdir().unwrap();
    let store = Store::open_in_dir(&home.path().join("data")).unwrap();
    let new = |title: &str| {
        store
            .create_session(NewSession {
                title: title.into(),
                goal: None,
            })
            .unwrap()
            .id
    };
    let titled = new("Demo: an operator's own basalt task");
    let demo = new("What is this basalt workstation running?");
    store.mark_session_demo(demo).unwrap();
    drop(store);

    let list = ok(&nomos(home.path(), &["sessions", "list"]));
    let line = |id: i64| {
        list.lines()
            .find(|l| l.starts_with(&format!("#{id} ")))
            .unwrap_or_else(|| panic!("no row {id}: {list}"))
            .to_owned()
    };
    assert!(line(demo).contains("[demo] What is this basalt"), "{list}");
    assert!(!line(titled).contains("[demo]"), "{list}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&nomos(home.path(), &["sessions", "list", "--json"]))).unwrap();
    let marks: Vec<(i64, bool)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_i64().unwrap(), s["demo"] == true))
        .collect();
    assert_eq!(marks, [(demo, true), (titled, false)]);
    let hits = ok(&nomos(
        home.path(),
        &["sessions", "list", "--search", "basalt"],
    ));
    assert_eq!(hits.matches("[demo]").count(), 1, "{hits}");
    for (id, labelled) in [(demo, true), (titled, false)] {
        let show = ok(&nomos(home.path(), &["sessions", "show", &id.to_string()]));
        let header = show.lines().next().unwrap();
        assert_eq!(header.contains("[demo]"), labelled, "{header}");
    }
}
