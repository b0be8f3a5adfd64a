use nomos_store::{
    ProposePlanOutcome, SessionStatus, StepStatus, UpdateStepOutcome, WRITE_BACK_TITLE,
};

use crate::common::*;

#[test]
fn i2_refuses_reproposal_in_flight() {
    let t = store();
    let sid = new_session(&t, "fleet audit");
    propose(
        &t,
        sid,
        &[
            "Check nginx",
            "Check postgres",
            "Write back: update_entity_attributes",
        ],
    );
    step(&t, sid, 1, StepStatus::Running);

    let r = refused_plan(&t, sid, &["Check nginx", "Check postgres"]);
    assert_eq!(r.code, "I2");
    assert!(r.reason.contains("plan v1"), "{r:?}");
    assert!(r.directive.contains("update_plan_step + run"), "{r:?}");
    assert!(
        r.directive.contains("do NOT call propose_plan again"),
        "{r:?}"
    );
    assert!(r.tool_result().starts_with("Refused: "));

    // Done counts as in flight too; nothing changed by the refusals.
    step(&t, sid, 1, StepStatus::Done);
    let r = refused_plan(&t, sid, &["Something else"]);
    assert_eq!(r.code, "I2");
    assert!(r.directive.contains("Next: step 2"), "{r:?}");
    let plan = t.store.current_plan(sid).unwrap();
    assert_eq!(plan.generation, 1);
    assert_eq!(plan.steps.len(), 3);
    assert_eq!(
        t.store.plan_history(sid).unwrap().len(),
        3,
        "no duplicated steps"
    );
}

#[test]
fn i3_generations_number_and_prestart_reproposal_replaces_pending() {
    let t = store();
    let sid = new_session(&t, "s");
    let p1 = propose(&t, sid, &["a", "b"]);
    assert_eq!(p1.generation, 1);
    assert!(p1.steps.iter().all(|s| s.generation == 1));
    assert_eq!(
        p1.steps.iter().map(|s| s.seq).collect::<Vec<_>>(),
        [1, 2, 3]
    );

    // Nothing started yet: a re-proposal replaces the pending steps with generation 2.
    let p2 = propose(&t, sid, &["c"]);
    assert_eq!(p2.generation, 2);
    assert_eq!(p2.replaced_steps, 3);
    assert_eq!(p2.steps[0].seq, 1, "seq restarts per generation");
    let history = t.store.plan_history(sid).unwrap();
    assert_eq!(history.len(), 5);
    for s in history.iter().filter(|s| s.generation == 1) {
        assert_eq!(s.status, StepStatus::Replaced);
        assert_eq!(s.status_before_replace, Some(StepStatus::Pending));
    }
    let plan = t.store.current_plan(sid).unwrap();
    assert_eq!(plan.generation, 2);
    assert!(plan.in_flight());
    assert_eq!(t.store.get_session(sid).unwrap().plan_generation, 2);
}

#[test]
fn i3_reopened_session_plans_at_max_plus_one() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["a"]);
    propose(&t, sid, &["b"]); // generation 2, nothing started
    step(&t, sid, 1, StepStatus::Done);
    step(&t, sid, 2, StepStatus::Skipped);
    t.store
        .complete_task(sid, nomos_store::Outcome::Success, "done")
        .unwrap();
    t.store.reopen_session(sid).unwrap();
    let p = propose(&t, sid, &["follow-up"]);
    assert_eq!(p.generation, 3);
}

#[test]
fn i4_write_back_step_appended_when_missing() {
    let t = store();
    let sid = new_session(&t, "s");
    // "upsert_knowledge" alone is not a fact write-back step (seed 000 D.2).
    let p = propose(
        &t,
        sid,
        &[
            "Check disks",
            "Write back: upsert_knowledge if anything changed",
        ],
    );
    assert!(p.write_back_appended);
    assert_eq!(p.steps.len(), 3);
    let last = p.steps.last().unwrap();
    assert_eq!(last.title, WRITE_BACK_TITLE);
    assert!(last.write_back);
    assert_eq!(last.seq, 3);

    let sid2 = new_session(&t, "s2");
    let p = propose(
        &t,
        sid2,
        &[
            "Check disks",
            "Record: update_entity_attributes for each disk",
        ],
    );
    assert!(!p.write_back_appended);
    assert_eq!(p.steps.len(), 2);
    assert!(p.steps[1].write_back);
    assert!(!p.steps[0].write_back);
}

#[test]
fn i5_steps_complete_in_order() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["one", "two", "three: create_relationship"]);
    let r = step_refused(&t, sid, 2, StepStatus::Done);
    assert_eq!(r.code, "I5");
    assert!(r.reason.contains("Step 1"), "{r:?}");
    assert!(r.directive.contains("seq=1"), "{r:?}");
    // Skipping and failing are completions too.
    assert_eq!(step_refused(&t, sid, 3, StepStatus::Skipped).code, "I5");
    assert_eq!(step_refused(&t, sid, 2, StepStatus::Failed).code, "I5");
    // Starting a later step is allowed; completing it still needs the earlier ones.
    step(&t, sid, 2, StepStatus::Running);
    assert_eq!(step_refused(&t, sid, 2, StepStatus::Done).code, "I5");
    step(&t, sid, 1, StepStatus::Done);
    let s2 = step(&t, sid, 2, StepStatus::Done);
    assert_eq!(s2.status, StepStatus::Done);
    assert!(s2.finished_at_ms.is_some());
    step(&t, sid, 3, StepStatus::Done);
}

#[test]
fn i5_no_recompletion_of_a_finished_step() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["one", "two"]);
    step(&t, sid, 1, StepStatus::Done);
    // Same status again is a harmless no-op.
    assert_eq!(step(&t, sid, 1, StepStatus::Done).status, StepStatus::Done);
    let r = step_refused(&t, sid, 1, StepStatus::Running);
    assert_eq!(r.code, "step_finished");
    assert!(r.directive.contains("step 2"), "{r:?}");
}

#[test]
fn update_plan_step_refusals_are_directive() {
    let t = store();
    let sid = new_session(&t, "s");
    let r = step_refused(&t, sid, 1, StepStatus::Running);
    assert_eq!(r.code, "I1");
    assert!(r.directive.contains("propose_plan"));
    propose(&t, sid, &["one"]);
    assert_eq!(
        step_refused(&t, sid, 9, StepStatus::Running).code,
        "unknown_step"
    );
    assert_eq!(
        step_refused(&t, sid, 1, StepStatus::Pending).code,
        "bad_status"
    );
    assert_eq!(
        step_refused(&t, sid, 1, StepStatus::Replaced).code,
        "bad_status"
    );
}

#[test]
fn status_follows_the_flow() {
    let t = store();
    let sid = new_session(&t, "s");
    assert_eq!(
        t.store.set_goal(sid, "check disks").unwrap().status,
        SessionStatus::Planning
    );
    propose(&t, sid, &["one"]);
    assert_eq!(
        t.store.get_session(sid).unwrap().status,
        SessionStatus::Planning
    );
    step(&t, sid, 1, StepStatus::Running);
    assert_eq!(
        t.store.get_session(sid).unwrap().status,
        SessionStatus::Executing
    );
}

#[test]
fn failed_step_allows_a_revised_plan_but_running_does_not() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["one", "two"]);
    step(&t, sid, 1, StepStatus::Failed);
    // DESIGN I2: only running or done steps block a re-proposal.
    let p = propose(&t, sid, &["other approach"]);
    assert_eq!(p.generation, 2);
    let old = t.store.plan_history(sid).unwrap();
    assert_eq!(old[0].status_before_replace, Some(StepStatus::Failed));
}

#[test]
fn propose_plan_validates_input() {
    let t = store();
    let sid = new_session(&t, "s");
    assert_eq!(refused_plan(&t, sid, &[]).code, "empty_plan");
    assert_eq!(
        refused_plan(&t, sid, &["ok", "  "]).code,
        "empty_step_title"
    );
    let many: Vec<String> = (0..51).map(|i| format!("s{i}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(refused_plan(&t, sid, &refs).code, "plan_too_long");
    assert_eq!(t.store.current_plan(sid).unwrap().generation, 0);
}

#[test]
fn plan_outcomes_serialize_with_a_kind_tag() {
    let t = store();
    let sid = new_session(&t, "s");
    let out = t.store.propose_plan(sid, &steps(&["a"])).unwrap();
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["kind"], "proposed");
    assert_eq!(json["generation"], 1);
    step(&t, sid, 1, StepStatus::Running);
    let ProposePlanOutcome::Refused(_) = t.store.propose_plan(sid, &steps(&["a"])).unwrap() else {
        panic!()
    };
    let UpdateStepOutcome::Updated(s) = t
        .store
        .update_plan_step(sid, 1, StepStatus::Done, Some("all good"))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(s.note.as_deref(), Some("all good"));
}

#[test]
fn i5_a_failed_step_is_not_reopened_after_later_steps_finished() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["one", "two", "three: create_relationship"]);
    step(&t, sid, 1, StepStatus::Failed);
    // Retrying right away is fine.
    step(&t, sid, 1, StepStatus::Running);
    step(&t, sid, 1, StepStatus::Failed);
    step(&t, sid, 2, StepStatus::Done);
    let r = step_refused(&t, sid, 1, StepStatus::Running);
    assert_eq!(r.code, "I5");
    assert!(r.directive.contains("status=done"), "{r:?}");
    // Recording the retry's result directly keeps the order intact.
    assert_eq!(step(&t, sid, 1, StepStatus::Done).status, StepStatus::Done);
}
