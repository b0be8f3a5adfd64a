//! I23: an approval window is bound to one plan generation and the targets its steps name, and
//! it expires; an answer to `ask_operator` and a question are neither approval nor revocation.
//! B5: approvals name what the operator saw; a plan or card that changed since is refused.

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::AgentConfig;
use nomos_mock_llm::Step;
use nomos_store::{CommandClass, ExecStatus, ManualClock, SessionStatus};
use serde_json::json;

use crate::support::*;

/// A config change that is harmless here: it only creates a file in the test's directory.
fn config_change(h: &Harness, name: &str) -> String {
    format!("touch {}", h.dir.path().join(name).display())
}

fn ask(question: &str) -> Step {
    call("ask_operator", json!({"question": question}))
}

#[tokio::test]
async fn i23_the_window_expires_after_the_configured_time() {
    for (ttl_min, wait_min, open_after) in [
        (30, 29, true),
        (30, 31, false),
        (5, 4, true),
        (5, 6, false),
        (60, 45, true),
    ] {
        let config = AgentConfig {
            approval_window_ttl: Duration::from_secs(ttl_min * 60),
            ..test_config()
        };
        let mut h = Harness::with_config(Vec::new(), config).await;
        let clock = Arc::new(ManualClock::at_ms(1_800_000_000_000));
        h.set_clock(clock.clone());
        let marker = config_change(&h, "marker");
        h.server.push(plan(&[("Create the marker", "host:local")]));
        h.server.push(text("Approved; starting soon."));
        let session = h.agent.send(None, "create the marker").await.unwrap();
        h.agent.send(Some(session), "yes").await.unwrap();
        let window = h.store().active_approval_window(session).unwrap().unwrap();
        assert_eq!(
            window.expires_at_ms,
            Some(window.opened_at_ms + i64::try_from(ttl_min * 60_000).unwrap())
        );
        clock.advance(Duration::from_secs(wait_min * 60));
        h.server.push(run_step(&marker, 1));
        h.server.push(text("Done or waiting."));
        h.agent.send(Some(session), "status").await.unwrap();
        let row = &h.store().executions(session).unwrap()[0];
        assert_eq!(row.class, CommandClass::ConfigMutation);
        if open_after {
            assert_eq!(row.status, ExecStatus::Finished, "ttl {ttl_min}: {row:?}");
        } else {
            assert_eq!(
                row.status,
                ExecStatus::AwaitingApproval,
                "ttl {ttl_min}, {wait_min} min later: the window expired: {row:?}"
            );
        }
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn i23_the_approve_button_window_expires_too() {
    let mut h = Harness::new(Vec::new()).await;
    let clock = Arc::new(ManualClock::at_ms(1_800_000_000_000));
    h.set_clock(clock.clone());
    h.server.push(plan(&[("Create the marker", "host:local")]));
    h.server.push(text("Starting."));
    let session = h.agent.send(None, "create the marker").await.unwrap();
    h.agent.approve_plan(session, 1).await.unwrap();
    let window = h.store().active_approval_window(session).unwrap().unwrap();
    assert_eq!(
        window.expires_at_ms,
        Some(window.opened_at_ms + 30 * 60_000)
    );
    clock.advance(Duration::from_millis(30 * 60_000 + 1));
    assert!(h.store().active_approval_window(session).unwrap().is_none());
}

#[tokio::test]
async fn i23_the_window_covers_only_the_targets_the_plan_names() {
    // (steps of the plan, whether a config change on host:local runs in the window)
    let cases: Vec<(serde_json::Value, bool)> = vec![
        (
            json!([{"title": "Change it", "target": "host:local"}]),
            true,
        ),
        (
            json!([{"title": "Change it", "target": " host:local "}]),
            true,
        ),
        (
            json!([{"title": "Change web-01", "target": "host:web-01"}]),
            false,
        ),
        (json!([{"title": "Change it"}]), false),
        (
            json!([{"title": "Read", "target": "host:db"}, {"title": "Change", "target": "lxc:101"}]),
            false,
        ),
    ];
    for (steps, covered) in cases {
        let h = Harness::with_inventory(Vec::new(), test_config(), lab_inventory()).await;
        let marker = config_change(&h, "marker");
        h.server
            .push(call("propose_plan", json!({"steps": steps.clone()})));
        h.server.push(run_step(&marker, 1));
        h.server.push(text("Done or waiting."));
        let session = h.agent.send(None, "change it").await.unwrap();
        h.agent.send(Some(session), "go ahead").await.unwrap();
        assert!(h.store().active_approval_window(session).unwrap().is_some());
        let row = &h.store().executions(session).unwrap()[0];
        let want = if covered {
            ExecStatus::Finished
        } else {
            ExecStatus::AwaitingApproval
        };
        assert_eq!(row.status, want, "plan {steps}: {row:?}");
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn i23_an_answer_to_ask_operator_is_not_plan_approval() {
    for answer in [
        "ok",
        "yes",
        "sure, go for it",
        "go ahead",
        "proceed",
        "yes please",
    ] {
        let h = Harness::new(vec![
            plan(&[("Restart the service", "host:local")]),
            ask("Should I also clear the cache?"),
            text("Noted. The plan still waits for your approval."),
        ])
        .await;
        let session = h.agent.send(None, "restart the service").await.unwrap();
        // The model asks a question before the operator approved anything.
        h.agent
            .send(Some(session), "what will the restart touch")
            .await
            .unwrap();
        h.agent.send(Some(session), answer).await.unwrap();
        assert!(
            h.store().approval_windows(session).unwrap().is_empty(),
            "{answer:?} answered a question; it opened a window"
        );
        assert_eq!(
            h.store().get_session(session).unwrap().status,
            SessionStatus::Planning,
            "{answer:?}"
        );
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn i23_after_the_answer_the_next_approval_counts() {
    let h = Harness::new(vec![
        plan(&[("Restart the service", "host:local")]),
        ask("Should I also clear the cache?"),
        text("Understood: no cache. Approve the plan when ready."),
        text("Starting."),
    ])
    .await;
    let session = h.agent.send(None, "restart the service").await.unwrap();
    h.agent
        .send(Some(session), "anything to know")
        .await
        .unwrap();
    h.agent.send(Some(session), "ok").await.unwrap();
    assert!(h.store().approval_windows(session).unwrap().is_empty());
    h.agent.send(Some(session), "go ahead").await.unwrap();
    assert!(h.store().active_approval_window(session).unwrap().is_some());
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i23_a_question_after_approval_does_not_revoke_the_window() {
    for question in [
        "how long is the wait?",
        "how long is the wait",
        "wait, which host is this?",
        "should I stop nginx first?",
        "no?",
        "why stop there?",
        "is it safe to cancel later?",
    ] {
        let h = Harness::new(vec![
            plan(&[("Restart the service", "host:local")]),
            text("Starting."),
            text("About a minute."),
        ])
        .await;
        let session = h.agent.send(None, "restart the service").await.unwrap();
        h.agent.send(Some(session), "yes").await.unwrap();
        h.agent.send(Some(session), question).await.unwrap();
        let windows = h.store().approval_windows(session).unwrap();
        assert_eq!(windows.len(), 1);
        assert!(
            windows[0].close_reason.is_none(),
            "{question:?} revoked the window: {windows:?}"
        );
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn b5_approve_plan_names_the_generation_the_operator_saw() {
    let h = Harness::new(vec![
        plan(&[("Check the disk", "host:local")]),
        plan(&[
            ("Check the disk", "host:local"),
            ("Check memory", "host:local"),
        ]),
        text("Starting."),
    ])
    .await;
    let session = h.agent.send(None, "check").await.unwrap();
    h.agent
        .send(Some(session), "add a memory check to the plan")
        .await
        .unwrap();
    assert_eq!(h.store().current_plan(session).unwrap().generation, 2);
    for seen in [1, 0, 3, -1] {
        let err = h.agent.approve_plan(session, seen).await.unwrap_err();
        assert_eq!(err.code(), "agent.stale_plan", "v{seen}: {err}");
        assert!(h.store().approval_windows(session).unwrap().is_empty());
    }
    h.agent.approve_plan(session, 2).await.unwrap();
    assert!(h.store().active_approval_window(session).unwrap().is_some());
    h.assert_no_script_failures();
}

#[tokio::test]
async fn b5_approve_plan_on_a_completed_session_is_refused() {
    let h = Harness::new(vec![
        plan(&[("Answer", "host:local")]),
        call(
            "complete_task",
            json!({"outcome": "failed", "summary": "cancelled by the operator"}),
        ),
    ])
    .await;
    let session = h.agent.send(None, "check").await.unwrap();
    h.agent.send(Some(session), "never mind").await.unwrap();
    assert!(h.store().get_session(session).unwrap().status.is_terminal());
    let err = h.agent.approve_plan(session, 1).await.unwrap_err();
    assert_eq!(err.code(), "agent.stale_plan", "{err}");
}

/// A card waits; then the plan it belongs to changes in one of three ways.
#[tokio::test]
async fn b5_a_card_of_a_plan_that_changed_can_no_longer_be_approved() {
    for change in ["re-proposed", "completed", "reopened"] {
        let h = Harness::new(Vec::new()).await;
        let victim = h.dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        h.server.push(plan(&[("Remove the file", "host:local")]));
        h.server
            .push(run_step(&format!("rm -f {}", victim.display()), 1));
        let session = h.agent.send(None, "remove it").await.unwrap();
        h.agent.send(Some(session), "yes").await.unwrap();
        let card = h.store().executions(session).unwrap()[0].clone();
        assert_eq!(card.status, ExecStatus::AwaitingApproval);
        match change {
            "re-proposed" => {
                h.server
                    .push(plan(&[("Archive the file instead", "host:local")]));
                h.agent
                    .send(Some(session), "archive it instead of removing")
                    .await
                    .unwrap();
            }
            "completed" | "reopened" => {
                h.server.push(call(
                    "complete_task",
                    json!({"outcome": "failed", "summary": "not removed"}),
                ));
                h.agent
                    .send(Some(session), "forget it, close the task")
                    .await
                    .unwrap();
                if change == "reopened" {
                    h.server.push(text("Reopened; what next?"));
                    h.agent
                        .send(Some(session), "actually one more thing")
                        .await
                        .unwrap();
                }
            }
            _ => unreachable!(),
        }
        let err = h.agent.approve_execution(card.id).await.unwrap_err();
        assert_eq!(err.code(), "agent.stale_execution", "{change}: {err}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(victim.exists(), "{change}: nothing ran");
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn i23_an_answer_does_not_revoke_an_open_window() {
    let h = Harness::new(vec![
        plan(&[("Restart the service", "host:local")]),
        ask("Which port should it listen on?"),
        text("Using 8080."),
    ])
    .await;
    let session = h.agent.send(None, "restart the service").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    h.agent.send(Some(session), "no, 8080").await.unwrap();
    assert!(
        h.store().active_approval_window(session).unwrap().is_some(),
        "an answer to the model's question kept the window"
    );
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i23_a_plan_naming_an_unknown_target_is_refused_with_the_known_targets() {
    // Misspelt, unknown kind, absent host, unknown container; alone or beside a good step.
    for bad in ["host:web-1", "host:nosuch", "lxc:999", "vm:db", "web-01"] {
        for steps in [
            json!([{"title": "Change it", "target": bad}]),
            json!([{"title": "Read", "target": "host:local"}, {"title": "Change it", "target": bad}]),
        ] {
            let h = Harness::with_inventory(Vec::new(), test_config(), lab_inventory()).await;
            h.server
                .push(call("propose_plan", json!({"steps": steps.clone()})));
            h.server.push(text("I will fix the plan."));
            let session = h.agent.send(None, "change it").await.unwrap();
            assert!(
                !h.store().has_plan(session).unwrap(),
                "{steps}: a plan naming `{bad}` was accepted"
            );
            let (result, is_error) = h.result_of(session, "propose_plan");
            assert!(is_error, "{result}");
            assert!(result.contains(bad.trim()), "{result}");
            for known in ["host:local", "host:web-01", "host:db", "lxc:101"] {
                assert!(
                    result.contains(known),
                    "{bad}: {known} not listed: {result}"
                );
            }
        }
    }
}
