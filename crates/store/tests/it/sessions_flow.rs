use nomos_store::{
    CloseReason, CompleteOutcome, OperatorApproval, Outcome, ReopenOutcome, SessionStatus,
    StepStatus,
};
use serde_json::json;
use std::time::Duration;

use crate::common::*;

fn attrs(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn i6_refuses_recompletion_of_a_terminal_session() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["answer from knowledge"]);
    let CompleteOutcome::Completed { session } = t
        .store
        .complete_task(sid, Outcome::Success, "Answered.")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(session.status, SessionStatus::Done);
    assert_eq!(session.outcome, Some(Outcome::Success));
    assert_eq!(session.summary.as_deref(), Some("Answered."));
    assert!(session.completed_at_ms.is_some());

    let CompleteOutcome::Refused(r) = t
        .store
        .complete_task(sid, Outcome::Success, "again")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(r.code, "I6");
    assert!(r.reason.contains("already complete"), "{r:?}");
    assert!(
        r.directive.contains("Do NOT call complete_task again"),
        "{r:?}"
    );
    assert_eq!(
        t.store.get_session(sid).unwrap().summary.as_deref(),
        Some("Answered.")
    );
}

#[test]
fn i6_downgrades_success_without_fact_write_back() {
    let t = store();
    let sid = new_session(&t, "fleet");
    propose(&t, sid, &["check nginx"]);
    run_to_end(&t, sid, "host:web-01", "nginx -v");
    // Prose alone does not count.
    t.store
        .upsert_knowledge(&nomos_store::NewKnowledge {
            session_id: Some(sid),
            kind: nomos_store::KnowledgeKind::Investigation,
            slug: None,
            title: "nginx audit".into(),
            body: "nginx 1.24".into(),
            tags: vec!["audit".into()],
            about: vec!["host:web-01".into()],
        })
        .unwrap();
    let facts = t.store.current_generation_facts(sid).unwrap();
    assert_eq!(
        (
            facts.runs_finished,
            facts.fact_writes,
            facts.knowledge_upserts
        ),
        (1, 0, 1)
    );

    let CompleteOutcome::Downgraded { session, refusal } = t
        .store
        .complete_task(sid, Outcome::Success, "All checked.")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(session.status, SessionStatus::Partial);
    assert_eq!(session.outcome, Some(Outcome::Partial));
    assert_eq!(refusal.code, "I6");
    assert!(
        refusal.directive.contains("update_entity_attributes"),
        "{refusal:?}"
    );
    assert!(
        refusal
            .directive
            .contains("complete_task(outcome=success) again"),
        "{refusal:?}"
    );
    assert!(
        refusal
            .directive
            .contains("upsert_knowledge alone does not count"),
        "{refusal:?}"
    );

    // Still no write-back: downgraded again, not refused.
    assert!(matches!(
        t.store.complete_task(sid, Outcome::Success, "x").unwrap(),
        CompleteOutcome::Downgraded { .. }
    ));
    // After the write-back, success is accepted once.
    t.store
        .update_entity_attributes(
            Some(sid),
            "host:web-01",
            &attrs(json!({"nginx_version": "1.24"})),
        )
        .unwrap();
    let CompleteOutcome::Completed { session } = t
        .store
        .complete_task(sid, Outcome::Success, "All checked.")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(session.status, SessionStatus::Done);
    assert!(matches!(
        t.store.complete_task(sid, Outcome::Success, "x").unwrap(),
        CompleteOutcome::Refused(_)
    ));
}

#[test]
fn i6_relationship_counts_as_write_back_and_reads_are_not_discovery() {
    let t = store();
    // Pure knowledge Q&A: reads only, no run → success is not downgraded.
    let qa = new_session(&t, "qa");
    propose(&t, qa, &["answer"]);
    t.store
        .search_knowledge(&nomos_store::KnowledgeQuery {
            text: "nginx".into(),
            ..Default::default()
        })
        .unwrap();
    t.store.get_entity("host:web-01").unwrap();
    assert!(matches!(
        t.store.complete_task(qa, Outcome::Success, "").unwrap(),
        CompleteOutcome::Completed { .. }
    ));

    let sid = new_session(&t, "s");
    propose(&t, sid, &["inspect"]);
    run_to_end(&t, sid, "host:pve", "pct list");
    t.store
        .create_relationship(
            Some(sid),
            "lxc:nextcloud",
            "runs_on",
            "host:pve",
            &serde_json::Map::new(),
        )
        .unwrap();
    assert!(matches!(
        t.store.complete_task(sid, Outcome::Success, "").unwrap(),
        CompleteOutcome::Completed { .. }
    ));
}

#[test]
fn i6_counts_only_the_current_generation() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["inspect"]);
    run_to_end(&t, sid, "host:a", "uptime");
    t.store
        .update_entity_attributes(Some(sid), "host:a", &attrs(json!({"uptime_days": 3})))
        .unwrap();
    step(&t, sid, 1, StepStatus::Done);
    assert!(matches!(
        t.store.complete_task(sid, Outcome::Success, "").unwrap(),
        CompleteOutcome::Completed { .. }
    ));
    // Follow-up: a new generation runs a command but writes nothing back.
    t.store.reopen_session(sid).unwrap();
    propose(&t, sid, &["inspect again"]);
    run_to_end(&t, sid, "host:a", "df -h");
    assert!(matches!(
        t.store.complete_task(sid, Outcome::Success, "").unwrap(),
        CompleteOutcome::Downgraded { .. }
    ));
}

#[test]
fn i6_failed_and_unfinished_runs_do_not_trigger_the_gate() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["inspect"]);
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "uptime"))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    t.store
        .finish_execution(
            e.id,
            &nomos_store::ExecutionResult {
                status: nomos_store::ExecStatus::Failed,
                exit_code: None,
                stdout: vec![],
                stderr: vec![],
                error: Some("ssh: connect refused".into()),
            },
        )
        .unwrap();
    assert!(matches!(
        t.store.complete_task(sid, Outcome::Success, "").unwrap(),
        CompleteOutcome::Completed { .. }
    ));
}

#[test]
fn i9_reopen_marks_old_steps_replaced_and_clears_outcome() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["one", "two"]);
    step(&t, sid, 1, StepStatus::Done);
    let w = t
        .store
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    t.store
        .complete_task(sid, Outcome::Partial, "half")
        .unwrap();
    assert_eq!(
        t.store.approval_windows(sid).unwrap()[0].close_reason,
        Some(CloseReason::Completed)
    );
    let _ = w;

    let ReopenOutcome::Reopened {
        session,
        replaced_steps,
        ..
    } = t.store.reopen_session(sid).unwrap()
    else {
        panic!()
    };
    assert_eq!(session.status, SessionStatus::Executing);
    assert_eq!(session.outcome, None);
    assert_eq!(session.summary, None);
    assert_eq!(session.completed_at_ms, None);
    assert_eq!(replaced_steps, 3);
    let history = t.store.plan_history(sid).unwrap();
    assert!(history.iter().all(|s| s.status == StepStatus::Replaced));
    assert_eq!(history[0].status_before_replace, Some(StepStatus::Done));
    assert_eq!(history[1].status_before_replace, Some(StepStatus::Pending));
    let plan = t.store.current_plan(sid).unwrap();
    assert!(plan.replaced);
    assert!(!plan.in_flight());
    assert!(
        !t.store.has_plan(sid).unwrap(),
        "run needs a new plan after a reopen"
    );
    // The new plan is accepted (no I2 refusal from the old done step).
    assert_eq!(propose(&t, sid, &["fix it"]).generation, 2);
}

#[test]
fn i9_reopen_closes_open_windows_and_is_a_noop_when_not_terminal() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["one"]);
    t.store
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    let ReopenOutcome::NotTerminal { session } = t.store.reopen_session(sid).unwrap() else {
        panic!()
    };
    assert_eq!(session.status, SessionStatus::Executing);
    assert!(t.store.active_approval_window(sid).unwrap().is_some());

    t.store.auto_close_session(sid, "no answer").unwrap();
    let ReopenOutcome::Reopened { closed_windows, .. } = t.store.reopen_session(sid).unwrap()
    else {
        panic!()
    };
    assert_eq!(
        closed_windows, 0,
        "already closed when the session was auto-closed"
    );
    assert!(t.store.active_approval_window(sid).unwrap().is_none());
}

#[test]
fn set_goal_and_plan_refused_on_terminal_session() {
    let t = store();
    let sid = new_session(&t, "s");
    t.store.complete_task(sid, Outcome::Failed, "nope").unwrap();
    assert_eq!(
        t.store.set_goal(sid, "x").unwrap_err().code(),
        "store.invariant"
    );
    assert_eq!(refused_plan(&t, sid, &["a"]).code, "I9");
    assert_eq!(step_refused(&t, sid, 1, StepStatus::Running).code, "I9");
}

#[test]
fn i15_nudges_count_reset_on_operator_message_and_auto_close() {
    let t = store();
    let sid = new_session(&t, "s");
    t.store.set_goal(sid, "audit").unwrap();
    assert!(t.store.idle_sessions(60_000).unwrap().is_empty());
    t.clock.advance(Duration::from_millis(120_000));
    let idle = t.store.idle_sessions(60_000).unwrap();
    assert_eq!(idle.iter().map(|s| s.id).collect::<Vec<_>>(), [sid]);
    assert_eq!(
        t.store
            .record_completion_nudge(sid)
            .unwrap()
            .completion_nudges,
        1
    );
    t.store
        .append_message(&nomos_store::NewMessage::user(sid, "still there?"))
        .unwrap();
    let s = t.store.get_session(sid).unwrap();
    assert_eq!(
        s.completion_nudges, 0,
        "an operator message answers the nudge"
    );
    assert_eq!(s.last_nudge_at_ms, None);
    t.store.record_completion_nudge(sid).unwrap();
    let closed = t
        .store
        .auto_close_session(sid, "Closed after no activity.")
        .unwrap()
        .unwrap();
    assert_eq!(closed.status, SessionStatus::Abandoned);
    assert_eq!(closed.outcome, Some(Outcome::Abandoned));
    assert!(t.store.auto_close_session(sid, "again").unwrap().is_none());
    assert!(t.store.idle_sessions(0).unwrap().is_empty());
}

#[test]
fn delete_session_cascades_but_keeps_knowledge() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["a"]);
    run_to_end(&t, sid, "host:a", "uptime");
    t.store
        .append_message(&nomos_store::NewMessage::user(sid, "hi"))
        .unwrap();
    t.store
        .update_entity_attributes(Some(sid), "host:a", &attrs(json!({"os": "debian"})))
        .unwrap();
    t.store.delete_session(sid).unwrap();
    assert_eq!(
        t.store.get_session(sid).unwrap_err().code(),
        "store.not_found"
    );
    let e = t.store.get_entity("host:a").unwrap().unwrap();
    assert_eq!(e.attributes["os"], "debian");
    assert_eq!(
        t.store.attribute_history("host:a").unwrap()[0].session_id,
        None
    );
}
