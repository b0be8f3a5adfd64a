//! Approval comes from the operator's own words or button (I7), never from anything else.

use nomos_store::SessionStatus;

use crate::support::*;

#[tokio::test]
async fn i7_a_typo_of_proceed_approves_and_a_negation_does_not() {
    let h = Harness::new(vec![
        plan(&[("Check", "host:local")]),
        text("Waiting for your go."),
        text("Starting."),
    ])
    .await;
    let session = h.agent.send(None, "check").await.unwrap();
    h.agent
        .send(Some(session), "don't proceed yet")
        .await
        .unwrap();
    assert!(h.store().active_approval_window(session).unwrap().is_none());
    h.agent.send(Some(session), "procceed").await.unwrap();
    assert!(h.store().active_approval_window(session).unwrap().is_some());
    assert_eq!(
        h.store().get_session(session).unwrap().status,
        SessionStatus::Executing
    );
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i7_set_goal_and_propose_plan_open_no_window() {
    let h = Harness::new(vec![
        call("set_goal", serde_json::json!({"goal": "check"})),
        plan(&[("Check", "host:local")]),
    ])
    .await;
    let session = h.agent.send(None, "check").await.unwrap();
    assert!(h.store().approval_windows(session).unwrap().is_empty());
}

#[tokio::test]
async fn i7_the_approve_button_opens_the_window_and_advances() {
    let h = Harness::new(vec![
        plan(&[("Check", "host:local")]),
        text("Advancing.").expect(nomos_mock_llm::Expect::LastUserContains(
            "Approve button".into(),
        )),
    ])
    .await;
    let session = h.agent.send(None, "check").await.unwrap();
    h.agent.approve_plan(session, 1).await.unwrap();
    assert!(h.store().active_approval_window(session).unwrap().is_some());
    h.assert_no_script_failures();
}

/// Issue 17: the approval card's reason is the classifier's primary finding, the one
/// `nomos policy classify` prints, even when several findings share the highest class.
#[tokio::test]
async fn the_card_reason_is_the_one_the_cli_prints() {
    // Never approved in this test: it only waits on its card.
    let cmd = "rm -f /nonexistent-nomos-card/a; kill -9 999999";
    let h = Harness::new(vec![
        plan(&[("Clean up", "host:local")]),
        call(
            "run",
            serde_json::json!({"target": "host:local", "command": cmd, "reason": "clean", "step": 1}),
        ),
        text("Waiting for approval."),
    ])
    .await;
    let session = h.agent.send(None, "clean up").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    let rows = h.store().executions(session).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let d = nomos_policy::classify(cmd);
    // The case that differed: the last finding at the highest class is not the primary one.
    let last = d.findings.iter().max_by_key(|f| f.class).unwrap();
    assert_ne!(format!("{}: {}", last.rule, last.reason), d.summary());
    assert_eq!(rows[0].decision_reason, d.summary());
    assert!(
        rows[0].decision_reason.contains("rm"),
        "{}",
        rows[0].decision_reason
    );
}
