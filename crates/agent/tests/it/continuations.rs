//! Turn gate (I13), continuations (I14), idle sweep (I15) and reconnects (I12).

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::AgentConfig;
use nomos_mock_llm::{Expect, Reply, ScriptedCall, Step};
use nomos_protocol::AgentEvent;
use nomos_store::{ManualClock, SessionStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// Every session's turns alternate started → done: no two overlap.
fn assert_turns_never_overlap(events: &[AgentEvent]) {
    let mut open = std::collections::HashMap::new();
    for e in events {
        match e {
            AgentEvent::TurnStarted { session_id, .. } => {
                assert!(
                    open.insert(*session_id, ()).is_none(),
                    "two turns overlap in session {session_id}"
                );
            }
            AgentEvent::Done { session_id, .. } => {
                assert!(
                    open.remove(session_id).is_some(),
                    "done without a turn in {session_id}"
                );
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn i13_a_live_message_waits_briefly_then_reports_busy() {
    let mut h = Harness::new(vec![Step::new(Reply::Hang {
        text: String::new(),
    })])
    .await;
    let agent = h.agent.clone();
    let first = tokio::spawn(async move { agent.send(None, "long").await });
    assert!(h.server.wait_for_requests(1, Duration::from_secs(5)).await);
    let session = h.store().list_sessions(&Default::default()).unwrap()[0].id;
    let err = h
        .agent
        .send(Some(session), "are you there?")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "agent.busy");
    h.agent.stop(session).unwrap();
    first.await.unwrap().unwrap();
    assert_turns_never_overlap(&h.drain());
    // The busy message was not persisted half-way.
    let texts: Vec<String> = h
        .store()
        .transcript(session)
        .unwrap()
        .messages
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert!(!texts.iter().any(|t| t == "are you there?"), "{texts:?}");
}

fn background_config() -> AgentConfig {
    AgentConfig {
        run_wait: Duration::from_millis(150),
        ..test_config()
    }
}

#[tokio::test]
async fn i14_a_background_result_resumes_the_session_and_is_marked_after_the_resume_ran() {
    let mut h = Harness::with_config(
        vec![
            plan(&[("Slow check", "host:local")]),
            run("sleep 0.6; echo finished-late"),
            text("It continues in the background."),
            text("The slow check printed finished-late.")
                .expect(Expect::LastUserContains("finished-late".into())),
        ],
        background_config(),
    )
    .await;
    let session = h.agent.send(None, "slow check").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    let exec = &h.store().executions(session).unwrap()[0];
    assert!(exec.background, "{exec:?}");
    assert!(
        h.server.wait_for_requests(4, Duration::from_secs(10)).await,
        "the resume turn ran"
    );
    // Give the resume a moment to finish and mark.
    for _ in 0..50 {
        if h.store().executions(session).unwrap()[0]
            .continued_at_ms
            .is_some()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let exec = &h.store().executions(session).unwrap()[0];
    assert_eq!(exec.continued_via, Some(nomos_store::ContinuedVia::Resume));
    assert!(h.store().pending_continuations().unwrap().is_empty());
    assert_turns_never_overlap(&h.drain());
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i14_two_executions_finishing_at_once_resume_one_turn_at_a_time() {
    let mut h = Harness::with_config(
        vec![
            plan(&[("Two slow checks", "host:local")]),
            Step::new(Reply::ToolCalls {
                text: String::new(),
                reasoning: None,
                calls: vec![
                    ScriptedCall::new("run", json!({"target": "host:local", "command": "sleep 0.4; echo one", "reason": "a"})),
                    ScriptedCall::new("run", json!({"target": "host:local", "command": "sleep 0.4; echo two", "reason": "b"})),
                ],
            }),
            text("Both continue in the background."),
        ],
        background_config(),
    )
    .await;
    // Resumes answer with text, however many there are.
    for _ in 0..4 {
        h.server.push(text("Noted the result."));
    }
    let stop = CancellationToken::new();
    let worker = h.agent.spawn_workers(stop.clone());
    let session = h.agent.send(None, "two checks").await.unwrap();
    h.agent.send(Some(session), "go").await.unwrap();
    for _ in 0..100 {
        if h.store().pending_continuations().unwrap().is_empty()
            && h.store()
                .executions(session)
                .unwrap()
                .iter()
                .all(|e| e.continued_at_ms.is_some())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.cancel();
    worker.await.unwrap();
    let execs = h.store().executions(session).unwrap();
    assert_eq!(execs.len(), 2);
    assert!(
        execs.iter().all(|e| e.continued_at_ms.is_some()),
        "{execs:?}"
    );
    assert_turns_never_overlap(&h.drain());
}

#[tokio::test]
async fn i15_an_idle_session_is_nudged_once_then_closed() {
    let clock = Arc::new(ManualClock::at_ms(1_700_000_000_000));
    let mut h = Harness::with_config(
        vec![
            call("set_goal", json!({"goal": "check"})),
            plan(&[("Check", "host:local")]),
            text("Still waiting for approval.").expect(Expect::LastUserContains("idle".into())),
        ],
        AgentConfig {
            idle_after: Duration::from_secs(60),
            close_after_nudge: Duration::from_secs(60),
            ..test_config()
        },
    )
    .await;
    h.set_clock(clock.clone());
    let session = h.agent.send(None, "check").await.unwrap();
    assert!(
        h.agent.sweep_idle().await.unwrap().nudged.is_empty(),
        "not idle yet"
    );
    clock.advance(Duration::from_millis(61_000));
    let report = h.agent.sweep_idle().await.unwrap();
    assert_eq!(report.nudged, vec![session]);
    assert_eq!(h.store().get_session(session).unwrap().completion_nudges, 1);
    clock.advance(Duration::from_millis(61_000));
    let report = h.agent.sweep_idle().await.unwrap();
    assert_eq!(report.closed, vec![session]);
    assert_eq!(
        h.store().get_session(session).unwrap().status,
        SessionStatus::Abandoned
    );
    let _ = h.drain();
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i12_reconnect_carries_the_last_message_and_says_advance_not_repropose() {
    let h = Harness::new(vec![
        plan(&[("Check", "host:local")]),
        text("Resuming.").expect(Expect::LastUserContains("do NOT re-propose".into())),
    ])
    .await;
    let session = h.agent.send(None, "check the backups").await.unwrap();
    assert!(h.agent.reconnect(session).await.unwrap());
    let requests = h.server.requests();
    let last = requests.last().unwrap().last_user_text().unwrap();
    assert!(last.contains("check the backups"), "{last}");
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i12_reconnect_on_a_finished_session_starts_no_turn() {
    let h = Harness::new(vec![call(
        "complete_task",
        json!({"outcome": "success", "summary": "ok"}),
    )])
    .await;
    let session = h.agent.send(None, "hi").await.unwrap();
    let before = h.server.request_count();
    assert!(!h.agent.reconnect(session).await.unwrap());
    assert_eq!(h.server.request_count(), before);
}

#[tokio::test]
async fn i18_the_same_command_still_running_in_the_background_is_not_started_again() {
    // Issued again at once, again with a reason, and a third time: one execution only.
    let again = |reason: Option<&str>| {
        let mut args =
            json!({"target": "host:local", "command": "sleep 0.8; echo once", "reason": "test"});
        if let Some(r) = reason {
            args["rerun_because"] = json!(r);
        }
        call("run", args)
    };
    let mut h = Harness::with_config(
        vec![
            plan(&[("Slow check", "host:local")]),
            run("sleep 0.8; echo once"),
            again(None),
            again(Some("the first one seems slow")).expect(Expect::LastToolResultContains(
                "still running as execution".into(),
            )),
            text("Waiting for it.").expect(Expect::LastToolResultContains(
                "still running as execution".into(),
            )),
            text("It printed once."),
        ],
        background_config(),
    )
    .await;
    let session = h.agent.send(None, "slow check").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    let execs = h.store().executions(session).unwrap();
    assert_eq!(execs.len(), 1, "{execs:?}");
    let (result, is_error) = h.result_of(session, "run");
    assert!(!is_error);
    assert!(
        result.contains(&format!("still running as execution {}", execs[0].id)),
        "{result}"
    );
    // Once it ended, the result arrives as usual (I14).
    let exec = h.wait_continued(execs[0].id).await;
    assert_eq!(exec.exit_code, Some(0));
    let _ = h.drain();
    h.assert_no_script_failures();
}
