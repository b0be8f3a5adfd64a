#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Several `nomos ask` processes (the real binary) at once on one data directory (I13, I24):
//! on different sessions and on the same one, each with its own scripted model that makes it
//! run real read-only commands (`sleep`, `echo`) on this workstation.
//!
//! What must hold: no reply is lost, no process sees `store.not_found` or `store.invariant`
//! (a second process's start-up taking the first one's live turn for a crash), no live
//! execution is marked failed, and the turns of one session never overlap — read back from
//! the audit log, where every holding of a session's turn lease is a `turn.start`/`turn.end`
//! pair written in the lease's own transaction (`nomos_store::turn_holdings`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nomos_mock_llm::{MockServer, Reply, Script, ScriptedCall, Step};
use nomos_store::{ExecStatus, SessionStatus, Store};
use serde_json::json;

/// Each process is given this long; the test fails naming the one that hung.
const PROCESS_LIMIT: Duration = Duration::from_secs(60);

/// One scenario at a time: their processes share two cores, and a scenario's timing (a
/// waiting turn gets the gate within its few seconds) should not depend on the others.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn spawn(home: &Path, base_url: &str, args: &[&str]) -> Child {
    common::nomos_command(home, Some(base_url), args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for every child (bounded), in a blocking thread each.
async fn wait_all(children: Vec<Child>) -> Vec<Output> {
    let handles: Vec<_> = children
        .into_iter()
        .enumerate()
        .map(|(i, child)| {
            tokio::task::spawn_blocking(move || {
                let pid = child.id();
                let started = Instant::now();
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = tx.send(child.wait_with_output());
                });
                match rx.recv_timeout(PROCESS_LIMIT) {
                    Ok(out) => out.unwrap(),
                    Err(_) => {
                        // Ends our own child, by its pid.
                        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                        panic!(
                            "nomos process {i} (pid {pid}) still ran after {:?}",
                            started.elapsed()
                        )
                    }
                }
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// No process may see the symptoms of another one taking its work for a crash.
fn assert_no_store_damage(outputs: &[Output]) {
    for (i, o) in outputs.iter().enumerate() {
        let all = text(o);
        for bad in [
            "store.not_found",
            "store.invariant",
            "store.corrupt",
            "panicked",
        ] {
            assert!(!all.contains(bad), "process {i} printed {bad}:\n{all}");
        }
        // `--json`: no error event reached the operator.
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                assert_ne!(v["type"], "error", "process {i}: {line}");
                if v["type"] == "done" {
                    assert_eq!(v["error"], false, "process {i}: {line}");
                }
            }
        }
    }
}

/// Every session's audit log shows its turns one after the other, each given back.
fn assert_turns_serialised(store: &Store, session: i64) -> Vec<nomos_store::TurnHolding> {
    let log = store.audit_log(session, 0).unwrap();
    let holdings = nomos_store::turn_holdings(&log)
        .unwrap_or_else(|e| panic!("session {session}: {e}\n{log:#?}"));
    assert!(!holdings.is_empty(), "session {session}: no turn recorded");
    for h in &holdings {
        assert!(h.released, "session {session}: a turn was cut: {h:?}");
    }
    holdings
}

fn call(name: &str, args: serde_json::Value) -> ScriptedCall {
    ScriptedCall::new(name, args)
}

fn calls(list: Vec<ScriptedCall>) -> Step {
    Step::new(Reply::ToolCalls {
        text: String::new(),
        reasoning: None,
        calls: list,
    })
}

/// A whole task that runs `sleep` then prints `marker`, writes back and completes.
fn whole_task(marker: &str, sleep: &str) -> Script {
    Script::new(vec![
        calls(vec![
            call("set_goal", json!({"goal": format!("Check {marker}")})),
            call(
                "propose_plan",
                json!({"steps": [{"title": format!("Check {marker}"), "target": "host:local"}]}),
            ),
        ]),
        calls(vec![
            call("update_plan_step", json!({"seq": 1, "status": "running"})),
            call(
                "run",
                json!({"target": "host:local", "command": format!("sleep {sleep}; echo {marker}"), "reason": "check", "step": 1}),
            ),
            call("update_plan_step", json!({"seq": 1, "status": "done"})),
        ]),
        calls(vec![
            call(
                "update_entity_attributes",
                json!({"slug": "host:local", "attributes": {marker.replace('-', "_"): "checked"}}),
            ),
            call("update_plan_step", json!({"seq": 2, "status": "done"})),
        ]),
        calls(vec![call(
            "complete_task",
            json!({"outcome": "success", "summary": format!("{marker} checked")}),
        )]),
    ])
}

fn data(home: &Path) -> PathBuf {
    home.join("data")
}

/// `n` processes, each its own task and session, started while the earlier ones are in the
/// middle of a command: every one finishes, with its command's output.
async fn different_sessions(n: usize) {
    let _one = SERIAL.lock().await;
    let home = tempfile::tempdir().unwrap();
    let mut servers = Vec::new();
    let mut children = Vec::new();
    for i in 0..n {
        let server = MockServer::start(whole_task(&format!("marker-{n}-{i}"), "0.8"))
            .await
            .unwrap();
        let task = format!("check number {i}");
        children.push(spawn(
            home.path(),
            &server.base_url(),
            &["ask", "--approve-plan", "--json", &task],
        ));
        // The next one starts while this one's command runs (its second model request).
        assert!(
            server.wait_for_requests(2, Duration::from_secs(30)).await,
            "process {i} never reached its command"
        );
        servers.push(server);
    }
    let outputs = wait_all(children).await;
    assert_no_store_damage(&outputs);
    for (i, o) in outputs.iter().enumerate() {
        assert!(o.status.success(), "process {i}:\n{}", text(o));
    }
    for (i, s) in servers.iter().enumerate() {
        let f = s.failures();
        assert!(f.is_empty(), "process {i}'s model: {f:?}");
        assert_eq!(s.request_count(), 4, "process {i}'s model");
    }
    let store = Store::open_in_dir(&data(home.path())).unwrap();
    let sessions: Vec<_> = store
        .list_sessions(&Default::default())
        .unwrap()
        .iter()
        .map(|s| store.get_session(s.id).unwrap())
        .collect();
    assert_eq!(sessions.len(), n);
    let mut spans = Vec::new();
    for s in &sessions {
        assert_eq!(s.status, SessionStatus::Done, "{s:?}");
        let execs = store.executions(s.id).unwrap();
        assert_eq!(execs.len(), 1, "{execs:?}");
        let e = &execs[0];
        assert_eq!(
            e.status,
            ExecStatus::Finished,
            "a live execution was taken: {e:?}"
        );
        assert_eq!(e.exit_code, Some(0));
        assert!(e.stdout.starts_with("marker-"), "{e:?}");
        assert!(e.error.is_none(), "{e:?}");
        spans.push((e.started_at_ms.unwrap(), e.finished_at_ms.unwrap()));
        let tr = store.transcript(s.id).unwrap();
        assert!(
            tr.messages.iter().all(|m| !m.pending && m.error.is_none()),
            "{tr:#?}"
        );
        // The reply reached the store: the completion's summary is there.
        assert!(
            s.summary.as_deref().is_some_and(|x| x.ends_with("checked")),
            "{s:?}"
        );
        let holdings = assert_turns_serialised(&store, s.id);
        // The message's turn and the plan approval's turn.
        assert_eq!(holdings.len(), 2, "{holdings:?}");
    }
    // The processes really ran at once: some two commands overlapped in time.
    let overlapped = spans
        .iter()
        .enumerate()
        .any(|(i, a)| spans[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1));
    assert!(overlapped, "the commands never overlapped: {spans:?}");
    for s in servers {
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i24_two_asks_on_different_sessions_both_finish_with_their_output() {
    different_sessions(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i24_three_asks_on_different_sessions_all_finish_with_their_output() {
    different_sessions(3).await;
}

/// A session with an approved plan, left executing (the model stops after the approval).
async fn prepared_session(home: &Path) -> i64 {
    let server = MockServer::start(Script::new(vec![
        calls(vec![call(
            "propose_plan",
            json!({"steps": [{"title": "Look around", "target": "host:local"}]}),
        )]),
        Step::text("Plan approved; waiting for follow-ups."),
    ]))
    .await
    .unwrap();
    let child = spawn(
        home,
        &server.base_url(),
        &["ask", "--approve-plan", "--json", "look around"],
    );
    let out = wait_all(vec![child]).await.remove(0);
    // Ends executing, not finished: the CLI says how to continue it.
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_no_store_damage(std::slice::from_ref(&out));
    server.shutdown().await;
    let store = Store::open_in_dir(&data(home)).unwrap();
    let s = &store.list_sessions(&Default::default()).unwrap()[0];
    assert_eq!(s.status, SessionStatus::Executing);
    s.id
}

/// `n` follow-ups on one session at once: one turn after the other (each waits for the gate
/// across processes, or is refused as busy with nothing kept and taken when retried), and
/// nothing of any is lost or doubled.
async fn same_session(n: usize) {
    let _one = SERIAL.lock().await;
    let home = tempfile::tempdir().unwrap();
    let session = prepared_session(home.path()).await;
    let sid = session.to_string();
    let mut servers = Vec::new();
    for i in 0..n {
        servers.push(
            MockServer::start(Script::new(vec![
                calls(vec![call(
                    "run",
                    json!({"target": "host:local", "command": format!("sleep 0.3; echo follow-{i}"), "reason": "look", "step": 1}),
                )]),
                Step::text(format!("Follow-up {i} done.")),
            ]))
            .await
            .unwrap(),
        );
    }
    let messages: Vec<String> = (0..n).map(|i| format!("look again, number {i}")).collect();
    let children: Vec<Child> = servers
        .iter()
        .zip(&messages)
        .map(|(s, m)| {
            spawn(
                home.path(),
                &s.base_url(),
                &["ask", "--session", &sid, "--json", m],
            )
        })
        .collect();
    let outputs = wait_all(children).await;
    assert_no_store_damage(&outputs);
    // Each message either ran its turn (the session stays executing: nothing completed it),
    // or waited the gate's few seconds and was refused as busy in another process (I13),
    // leaving nothing behind.
    let mut accepted = Vec::new();
    for (i, o) in outputs.iter().enumerate() {
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(3) if err.contains("cli.unfinished") => accepted.push(i),
            Some(1) if err.contains("agent.busy") && err.contains("another Nomos process") => {}
            _ => panic!("process {i}:\n{}", text(o)),
        }
    }
    // At least one turn ran; on a loaded machine a turn can outlast the gate's wait. A refused
    // message left nothing behind (checked now), and the operator's retry is then taken.
    assert!(!accepted.is_empty(), "no message was taken");
    let store = Store::open_in_dir(&data(home.path())).unwrap();
    let tr = store.transcript(session).unwrap();
    for (i, m) in messages.iter().enumerate() {
        let said = tr.messages.iter().filter(|x| x.text.trim() == m).count();
        let want = usize::from(accepted.contains(&i));
        assert_eq!(
            said, want,
            "message {i} stored {said} times before any retry"
        );
        if want == 0 {
            assert_eq!(
                servers[i].request_count(),
                0,
                "a refused message reached its model"
            );
        }
    }
    for i in 0..n {
        if accepted.contains(&i) {
            continue;
        }
        let retry = spawn(
            home.path(),
            &servers[i].base_url(),
            &["ask", "--session", &sid, "--json", &messages[i]],
        );
        let out = wait_all(vec![retry]).await.remove(0);
        assert_no_store_damage(std::slice::from_ref(&out));
        assert_eq!(out.status.code(), Some(3), "retry {i}:\n{}", text(&out));
    }
    let tr = store.transcript(session).unwrap();
    for (i, s) in servers.iter().enumerate() {
        assert!(s.failures().is_empty(), "process {i}: {:?}", s.failures());
        assert_eq!(s.request_count(), 2, "process {i}'s model");
        let said = tr
            .messages
            .iter()
            .filter(|x| x.text.trim() == messages[i])
            .count();
        assert_eq!(said, 1, "message {i} stored {said} times");
        let reply = format!("Follow-up {i} done.");
        let got = tr
            .messages
            .iter()
            .filter(|x| x.text.contains(&reply))
            .count();
        assert_eq!(got, 1, "reply {i} stored {got} times");
    }
    assert!(tr.messages.iter().all(|m| !m.pending && m.error.is_none()));
    let execs = store.executions(session).unwrap();
    assert_eq!(execs.len(), n, "{execs:?}");
    for e in &execs {
        assert_eq!(e.status, ExecStatus::Finished, "{e:?}");
        assert!(e.stdout.starts_with("follow-"), "{e:?}");
    }
    let holdings = assert_turns_serialised(&store, session);
    // The preparation's two turns, then one per follow-up, none overlapping.
    assert_eq!(holdings.len(), 2 + n, "{holdings:?}");
    let owners: std::collections::HashSet<&str> =
        holdings[2..].iter().map(|h| h.owner.as_str()).collect();
    assert_eq!(
        owners.len(),
        n,
        "each follow-up's turn ran in its own process"
    );
    // Each follow-up's command ran inside its own turn, not in another process's.
    for h in &holdings[2..] {
        assert!(h.tool_calls >= 1, "{h:?}");
    }
    for s in servers {
        s.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i13_two_asks_on_one_session_take_turns() {
    same_session(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i13_three_asks_on_one_session_take_turns() {
    same_session(3).await;
}
