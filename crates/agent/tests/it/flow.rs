//! The task flow end to end: goal, plan, approval, execute, write back, complete, iterate.

use nomos_mock_llm::Expect;
use nomos_store::{SessionStatus, StepStatus};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn a_read_only_task_runs_after_approval_and_completes_with_write_back() {
    let mut h = Harness::new(vec![
        call(
            "set_goal",
            json!({"goal": "Know the kernel version of this workstation"}),
        ),
        plan(&[("Read the kernel version", "host:local")]),
        // After "yes": advance.
        call("update_plan_step", json!({"seq": 1, "status": "running"}))
            .expect(Expect::LastUserContains("approved the plan".into())),
        run("uname -s"),
        call(
            "update_plan_step",
            json!({"seq": 1, "status": "done", "note": "Linux"}),
        )
        .expect(Expect::LastToolResultContains("Linux".into())),
        call(
            "update_entity_attributes",
            json!({"slug": "host:local", "attributes": {"kernel": "Linux"}}),
        ),
        call("update_plan_step", json!({"seq": 2, "status": "done"})),
        call(
            "complete_task",
            json!({"outcome": "success", "summary": "Linux."}),
        ),
    ])
    .await;

    let session = h
        .agent
        .send(None, "what kernel does this machine run?")
        .await
        .unwrap();
    assert_eq!(
        h.store().get_session(session).unwrap().status,
        SessionStatus::Planning
    );
    let first_turn = h.drain();
    assert_eq!(dones(&first_turn), vec![false], "one done per turn");
    assert!(!of_type(&first_turn, "approval_requested").is_empty());

    h.agent.send(Some(session), "yes").await.unwrap();
    let s = h.store().get_session(session).unwrap();
    assert_eq!(s.status, SessionStatus::Done, "{s:?}");
    let plan = h.store().current_plan(session).unwrap();
    assert!(
        plan.steps.iter().all(|s| s.status == StepStatus::Done),
        "{plan:?}"
    );
    let execs = h.store().executions(session).unwrap();
    assert_eq!(execs.len(), 1);
    assert_eq!(execs[0].exit_code, Some(0));
    assert!(execs[0].stdout.contains("Linux"));
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i9_a_follow_up_reopens_the_session_with_a_new_plan_generation() {
    let mut h = Harness::new(vec![
        call(
            "complete_task",
            json!({"outcome": "success", "summary": "Answered from knowledge."}),
        ),
        plan(&[("Check uptime", "host:local")])
            .expect(Expect::LastUserContains("uptime too".into())),
    ])
    .await;
    let session = h
        .agent
        .send(None, "what do you know about this host?")
        .await
        .unwrap();
    assert_eq!(
        h.store().get_session(session).unwrap().status,
        SessionStatus::Done
    );

    h.agent
        .send(Some(session), "check its uptime too")
        .await
        .unwrap();
    let events = h.drain();
    assert_eq!(of_type(&events, "task_reopened").len(), 1);
    let s = h.store().get_session(session).unwrap();
    assert_eq!(s.status, SessionStatus::Planning);
    assert_eq!(s.outcome, None, "outcome cleared on reopen");
    assert_eq!(h.store().current_plan(session).unwrap().generation, 1);
    h.assert_no_script_failures();
}
