//! Continuations under load (I13, I14): many sessions whose background commands finish at
//! random times, two resumes of the same results at once, and a live message during a
//! resume. Each result is delivered once, each continuation runs once, and the turns of a
//! session never overlap — read back from the audit log (`nomos_store::turn_holdings`).
//!
//! The scripted model answers from the conversation it is sent (a hook), so its replies do
//! not depend on the order in which the sessions' requests arrive.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::AgentConfig;
use nomos_mock_llm::{MockServer, RecordedRequest, Reply, Script, Step};
use nomos_store::{ContinuedVia, ExecStatus, Store};

use crate::support::*;

const RESUME_NOTE: &str = "Background execution";

/// The number in the operator's first message ("task 7").
fn task_number(r: &RecordedRequest) -> u64 {
    r.messages()
        .iter()
        .find(|m| m.role == "user")
        .and_then(|m| m.text.strip_prefix("task "))
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(u64::MAX)
}

/// Plan on the task, run its command once approved, then text; a resume gets `resume(n)`.
fn answer(
    r: &RecordedRequest,
    command: &dyn Fn(u64) -> String,
    after_run: &dyn Fn(u64) -> Step,
    resume: &dyn Fn(u64) -> Step,
) -> Step {
    let n = task_number(r);
    let messages = r.messages();
    let Some(last) = messages.last() else {
        return Step::text("Nothing to do.");
    };
    if last.role == "tool" {
        return after_run(n);
    }
    if last.text.contains(RESUME_NOTE) {
        return resume(n);
    }
    if last.text.contains("approved the plan") {
        return run(&command(n));
    }
    if last.text.starts_with("[Nomos]") {
        return Step::text("Noted.");
    }
    plan(&[("Check", "host:local")])
}

async fn hooked_server() -> MockServer {
    MockServer::start(Script {
        model: None,
        replies: Vec::new(),
        fallback: Some(Step::new(Reply::Hook {
            name: "scale".into(),
        })),
    })
    .await
    .unwrap()
}

/// How many resume notes a session's transcript holds, and whether each names `marker`.
fn resume_notes(store: &Store, session: i64) -> Vec<String> {
    store
        .transcript(session)
        .unwrap()
        .messages
        .into_iter()
        .filter(|m| m.text.contains(RESUME_NOTE))
        .map(|m| m.text)
        .collect()
}

/// The session's turns, from the audit log: none overlapping, each given back.
fn holdings(store: &Store, session: i64) -> Vec<nomos_store::TurnHolding> {
    let log = store.audit_log(session, 0).unwrap();
    let h = nomos_store::turn_holdings(&log).unwrap_or_else(|e| panic!("session {session}: {e}"));
    assert!(h.iter().all(|h| h.released), "session {session}: {h:?}");
    h
}

async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what} not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Two resumes that both listed the same finished results: the one that reaches a session
/// after the other delivered them finds nothing left and runs no second turn. (Before, it
/// ran a second resume with the same results: a continuation twice.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i14_two_resumes_of_the_same_results_at_once_deliver_them_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = hooked_server().await;
    // Session 1's resume is slow, session 2's quick; the turn that started each command
    // outlasts it, so neither result is resumed before both resumes below list them.
    server.set_hook("scale", |r| {
        answer(
            r,
            &|n| format!("sleep 0.2; echo result-{n}"),
            &|_| Step::text("It continues in the background.").delay_ms(2500),
            &|n| Step::text(format!("Noted result {n}.")).delay_ms(if n == 1 { 1500 } else { 0 }),
        )
    });
    let store = Store::open_in_dir(dir.path()).unwrap();
    let agent = agent_on(
        store,
        &dir.path().join("exec"),
        &server.base_url(),
        background_config(),
    );
    let mut sessions = Vec::new();
    for n in [1, 2] {
        let s = agent.send(None, &format!("task {n}")).await.unwrap();
        sessions.push(s);
    }
    let (a, b) = tokio::join!(
        agent.send(Some(sessions[0]), "yes"),
        agent.send(Some(sessions[1]), "yes")
    );
    a.unwrap();
    b.unwrap();
    let store = agent.store().clone();
    for s in &sessions {
        let e = &store.executions(*s).unwrap()[0];
        assert!(e.background && e.status == ExecStatus::Finished, "{e:?}");
        assert!(e.continued_at_ms.is_none(), "resumed too early: {e:?}");
    }
    let before = server.request_count();
    // Two resumes at once (the worker's tick and a finishing command's, or two processes).
    let (x, y) = tokio::join!(agent.continue_finished(), agent.continue_finished());
    assert_eq!(x.unwrap() + y.unwrap(), 2, "one resume per session");
    assert_eq!(
        server.request_count() - before,
        2,
        "one model call per resume"
    );
    for (i, s) in sessions.iter().enumerate() {
        let notes = resume_notes(&store, *s);
        assert_eq!(notes.len(), 1, "session {s}: {notes:#?}");
        assert!(notes[0].contains(&format!("result-{}", i + 1)));
        let e = &store.executions(*s).unwrap()[0];
        assert_eq!(e.continued_via, Some(ContinuedVia::Resume));
        // The message's turn, the approval's turn, one resume; and maybe the other resume
        // holding the gate a moment to find the results delivered (it runs nothing).
        let h = holdings(&store, *s);
        assert!(matches!(h.len(), 3 | 4), "{h:?}");
    }
    assert!(store.pending_continuations().unwrap().is_empty());
    assert!(server.failures().is_empty(), "{:?}", server.failures());
}

/// The operator writes while a background result is being resumed: the message waits for
/// the resume's turn (or, past the wait, is refused with nothing stored), never runs beside
/// it, and the result is delivered once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i13_a_live_message_during_a_background_resume_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = hooked_server().await;
    server.set_hook("scale", |r| {
        let last = r.last_user_text().unwrap_or_default();
        if last == "what did it print?" {
            return Step::text("It printed the result.");
        }
        answer(
            r,
            &|n| format!("sleep 0.3; echo result-{n}"),
            &|_| Step::text("It continues in the background."),
            &|n| Step::text(format!("Noted result {n}.")).delay_ms(1200),
        )
    });
    let store = Store::open_in_dir(dir.path()).unwrap();
    let agent = agent_on(
        store.clone(),
        &dir.path().join("exec"),
        &server.base_url(),
        background_config(),
    );
    // The same store through an agent whose live messages wait longer (as the app's do).
    let patient = agent_on(
        store.clone(),
        &dir.path().join("exec"),
        &server.base_url(),
        AgentConfig {
            gate_wait: Duration::from_secs(10),
            ..background_config()
        },
    );
    // The continuation worker, as the app runs it: a resume skipped because the approval's
    // turn still held the gate when the command ended is taken on a later tick.
    let stop = tokio_util::sync::CancellationToken::new();
    let worker = agent.spawn_workers(stop.clone());
    let session = agent.send(None, "task 1").await.unwrap();
    agent.send(Some(session), "yes").await.unwrap();
    // The command finishes and its resume starts by itself (its model reply is slow).
    wait_until(Duration::from_secs(10), "the resume", || {
        resume_notes(&store, session).len() == 1
    })
    .await;
    // A short wait is refused as busy, and nothing of that message is kept.
    let err = agent
        .send(Some(session), "anything yet?")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "agent.busy");
    // A patient one runs after the resume.
    patient
        .send(Some(session), "what did it print?")
        .await
        .unwrap();
    let tr = store.transcript(session).unwrap();
    assert!(!tr.messages.iter().any(|m| m.text == "anything yet?"));
    let texts: Vec<&str> = tr.messages.iter().map(|m| m.text.as_str()).collect();
    let resumed = texts.iter().position(|t| *t == "Noted result 1.").unwrap();
    let asked = texts
        .iter()
        .position(|t| *t == "what did it print?")
        .unwrap();
    assert!(
        resumed < asked,
        "the message ran inside the resume: {texts:#?}"
    );
    assert_eq!(resume_notes(&store, session).len(), 1);
    let h = holdings(&store, session);
    assert_eq!(h.len(), 4, "{h:?}");
    let e = &store.executions(session).unwrap()[0];
    assert_eq!(e.continued_via, Some(ContinuedVia::Resume));
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    stop.cancel();
    worker.await.unwrap();
}

/// A small deterministic generator (xorshift) for the commands' sleeps.
fn sleeps(n: usize, mut seed: u64) -> Vec<u64> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            100 + seed % 1400
        })
        .collect()
}

/// 50 active sessions, each with a real command sleeping 0.1–1.5 s in the background while
/// the continuation worker runs: every result is captured and resumed exactly once, no two
/// turns of a session overlap, all within a bounded time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i14_fifty_sessions_with_background_results_each_resume_once() {
    const N: usize = 50;
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let server = hooked_server().await;
    let m = Arc::new(sleeps(N, 0x5eed_1234_abcd_0001));
    server.set_hook("scale", move |r| {
        answer(
            r,
            &|n| {
                let t = m[usize::try_from(n).unwrap_or(0) % N];
                format!("sleep {}.{:03}; echo result-{n}", t / 1000, t % 1000)
            },
            &|_| Step::text("It continues in the background."),
            &|n| Step::text(format!("Noted result {n}.")),
        )
    });
    let store = Store::open_in_dir(dir.path()).unwrap();
    let agent = agent_on(
        store.clone(),
        &dir.path().join("exec"),
        &server.base_url(),
        background_config(),
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let worker = agent.spawn_workers(stop.clone());
    // All sessions start at once; their commands finish while others are still starting.
    let starts: Vec<_> = (0..N)
        .map(|n| {
            let a = agent.clone();
            tokio::spawn(async move {
                let s = a.send(None, &format!("task {n}")).await.unwrap();
                // Approval may meet a resume of nothing yet: wait as the app's message would.
                a.send(Some(s), "yes").await.unwrap();
                s
            })
        })
        .collect();
    let mut sessions = Vec::new();
    for s in starts {
        sessions.push(s.await.unwrap());
    }
    wait_until(Duration::from_secs(90), "every result resumed", || {
        sessions.iter().all(|s| {
            store
                .executions(*s)
                .unwrap()
                .iter()
                .all(|e| e.continued_at_ms.is_some())
        })
    })
    .await;
    // Let any duplicate resume that was going to happen happen.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.cancel();
    worker.await.unwrap();
    for s in &sessions {
        let n = store.get_session(*s).unwrap().title;
        let execs = store.executions(*s).unwrap();
        assert_eq!(execs.len(), 1, "{n}: {execs:?}");
        let e = &execs[0];
        assert_eq!(e.status, ExecStatus::Finished, "{n}: {e:?}");
        let want = format!("result-{}", n.trim_start_matches("task "));
        assert_eq!(e.stdout.trim(), want, "{n}: {e:?}");
        let notes = resume_notes(&store, *s);
        // Captured once and resumed once (or, when it finished inside the run's own wait,
        // answered inline with no resume at all).
        match e.continued_via {
            Some(ContinuedVia::Resume) => {
                assert_eq!(notes.len(), 1, "{n}: {notes:#?}");
                assert!(notes[0].contains(&want), "{n}: {notes:#?}");
            }
            Some(ContinuedVia::Inline) => assert!(notes.is_empty(), "{n}: {notes:#?}"),
            other => panic!("{n}: continued via {other:?}"),
        }
        holdings(&store, *s);
    }
    let resumed = sessions
        .iter()
        .filter(|s| store.executions(**s).unwrap()[0].continued_via == Some(ContinuedVia::Resume))
        .count();
    assert!(resumed >= N / 2, "only {resumed} ran in the background");
    assert!(store.pending_continuations().unwrap().is_empty());
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "took {:?}",
        started.elapsed()
    );
}
