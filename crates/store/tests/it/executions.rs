use nomos_store::{
    Approval, ApprovalKind, CommandClass, ContinuedVia, ExecStatus, ExecutionResult,
    MAX_OUTPUT_BYTES, OperatorApproval, SessionStatus, StepStatus,
};

use crate::common::*;

#[test]
fn execution_lifecycle_records_approval_exit_code_duration_and_output() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["restart nginx"]);
    let mut new = read_only(sid, "host:web-01", "systemctl restart nginx");
    new.class = CommandClass::Destructive;
    new.step_seq = Some(1);
    new.call_id = Some("call_7".into());
    new.decision = Some(serde_json::json!({"rule": "systemctl.restart", "class": "destructive"}));
    let e = t.store.create_execution(&new).unwrap();
    assert_eq!(e.status, ExecStatus::AwaitingApproval);
    assert_eq!(e.generation, Some(1));
    assert!(e.plan_step_id.is_some());
    assert_eq!(e.decision.as_ref().unwrap()["rule"], "systemctl.restart");
    assert_eq!(
        t.store.start_execution(e.id).unwrap_err().code(),
        "store.conflict"
    );

    let e = t
        .store
        .approve_execution(
            e.id,
            &Approval {
                kind: ApprovalKind::OperatorButton,
                by: Some("desktop".into()),
                window_id: None,
            },
        )
        .unwrap();
    assert_eq!(e.status, ExecStatus::Queued);
    assert_eq!(e.approval, Some(ApprovalKind::OperatorButton));
    assert_eq!(e.approved_by.as_deref(), Some("desktop"));
    t.store.start_execution(e.id).unwrap();
    t.clock.advance(1500);
    let e = t
        .store
        .finish_execution(
            e.id,
            &ExecutionResult {
                status: ExecStatus::Finished,
                exit_code: Some(3),
                stdout: b"\xff\xfebinary\x00ok".to_vec(),
                stderr: b"warning".to_vec(),
                error: None,
            },
        )
        .unwrap();
    assert_eq!(e.status, ExecStatus::Finished);
    assert_eq!(e.exit_code, Some(3));
    assert_eq!(e.duration_ms, Some(1500));
    assert!(
        e.stdout.contains("binary"),
        "invalid UTF-8 kept as replacement characters"
    );
    assert_eq!(e.stdout_bytes, 11);
    assert_eq!(e.stderr, "warning");
    // Ended executions do not change any more.
    assert_eq!(
        t.store
            .finish_execution(e.id, &finished("again"))
            .unwrap_err()
            .code(),
        "store.conflict"
    );
}

#[test]
fn output_is_capped_head_and_tail() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["logs"]);
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "journalctl"))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    let mut out = "HEAD".to_string();
    out.push_str(&"line\n".repeat(MAX_OUTPUT_BYTES));
    out.push_str("TAIL");
    let e = t.store.finish_execution(e.id, &finished(&out)).unwrap();
    assert!(e.stdout_truncated);
    assert!(e.stdout.starts_with("HEAD") && e.stdout.ends_with("TAIL"));
    assert!(e.stdout.len() <= MAX_OUTPUT_BYTES + 64);
    assert_eq!(e.stdout_bytes as usize, out.len());
}

#[test]
fn i7_window_approval_needs_the_operators_open_window() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["edit config"]);
    let mut new = read_only(sid, "host:a", "sed -i s/a/b/ /etc/x.conf");
    new.class = CommandClass::ConfigMutation;
    new.approval = Some(Approval {
        kind: ApprovalKind::Window,
        by: None,
        window_id: Some(1),
    });
    assert_eq!(
        t.store.create_execution(&new).unwrap_err().code(),
        "store.invariant"
    );
    let w = t
        .store
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    new.approval = Some(Approval {
        kind: ApprovalKind::Window,
        by: None,
        window_id: Some(w.id),
    });
    let e = t.store.create_execution(&new).unwrap();
    assert_eq!(e.status, ExecStatus::Queued);
    assert_eq!(e.approval_window_id, Some(w.id));
    // A destructive command is never covered by a window.
    new.class = CommandClass::Destructive;
    assert_eq!(
        t.store.create_execution(&new).unwrap_err().code(),
        "store.invariant"
    );
    // A mutation cannot claim "not needed".
    new.class = CommandClass::ConfigMutation;
    new.approval = Some(Approval {
        kind: ApprovalKind::NotNeeded,
        by: None,
        window_id: None,
    });
    assert_eq!(
        t.store.create_execution(&new).unwrap_err().code(),
        "store.invariant"
    );
}

#[test]
fn deny_cancels_an_awaiting_execution() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    let mut new = read_only(sid, "host:a", "rm -rf /tmp/x");
    new.class = CommandClass::Destructive;
    let e = t.store.create_execution(&new).unwrap();
    let e = t
        .store
        .deny_execution(e.id, "Denied by the operator")
        .unwrap();
    assert_eq!(e.status, ExecStatus::Cancelled);
    assert_eq!(e.error.as_deref(), Some("Denied by the operator"));
}

#[test]
fn i14_continued_only_when_marked_and_pending_until_then() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    step(&t, sid, 1, StepStatus::Running);
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "apt-get update"))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    t.store.mark_execution_background(e.id).unwrap();
    // Still running: nothing to continue; marking is refused.
    assert!(t.store.pending_continuations().unwrap().is_empty());
    assert_eq!(
        t.store
            .mark_execution_continued(e.id, ContinuedVia::Resume)
            .unwrap_err()
            .code(),
        "store.conflict"
    );
    t.store.finish_execution(e.id, &finished("done")).unwrap();

    // The resume was skipped (gate busy): the item stays pending for the next tick.
    let p = t.store.pending_continuations().unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].execution.id, e.id);
    assert_eq!(p[0].session_status, SessionStatus::Executing);
    assert_eq!(
        t.store.pending_continuations().unwrap().len(),
        1,
        "reading does not consume"
    );

    // The resume ran: mark it; exactly once.
    assert!(
        t.store
            .mark_execution_continued(e.id, ContinuedVia::Resume)
            .unwrap()
    );
    assert!(
        !t.store
            .mark_execution_continued(e.id, ContinuedVia::Resume)
            .unwrap()
    );
    assert!(t.store.pending_continuations().unwrap().is_empty());
    let e = t.store.get_execution(e.id).unwrap();
    assert_eq!(e.continued_via, Some(ContinuedVia::Resume));
    assert!(e.continued_at_ms.is_some());
}

#[test]
fn i14_inline_results_are_never_pending_and_two_results_for_one_session_both_wait() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    let inline = run_to_end(&t, sid, "host:a", "uptime");
    assert!(
        t.store
            .mark_execution_continued(inline.id, ContinuedVia::Inline)
            .unwrap()
    );
    let mut ids = Vec::new();
    for cmd in ["apt-get update", "apt list --upgradable"] {
        let e = t
            .store
            .create_execution(&read_only(sid, "host:b", cmd))
            .unwrap();
        t.store.start_execution(e.id).unwrap();
        t.store.mark_execution_background(e.id).unwrap();
        t.store.finish_execution(e.id, &finished("ok")).unwrap();
        ids.push(e.id);
    }
    let p: Vec<_> = t
        .store
        .pending_continuations()
        .unwrap()
        .into_iter()
        .map(|p| p.execution.id)
        .collect();
    assert_eq!(p, ids, "both results are owed, in finish order");
    t.store
        .mark_execution_continued(ids[0], ContinuedVia::Resume)
        .unwrap();
    let p: Vec<_> = t
        .store
        .pending_continuations()
        .unwrap()
        .into_iter()
        .map(|p| p.execution.id)
        .collect();
    assert_eq!(
        p,
        [ids[1]],
        "the second is not lost when only the first resume ran"
    );
}

#[test]
fn i14_terminal_session_gets_the_result_as_a_note() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "apt-get update"))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    t.store.mark_execution_background(e.id).unwrap();
    t.store
        .complete_task(sid, nomos_store::Outcome::Failed, "gave up")
        .unwrap();
    t.store.finish_execution(e.id, &finished("done")).unwrap();
    let p = t.store.pending_continuations().unwrap();
    assert_eq!(p[0].session_status, SessionStatus::Failed);
    assert!(
        t.store
            .mark_execution_continued(e.id, ContinuedVia::Note)
            .unwrap()
    );
}

#[test]
fn i18_finds_the_earlier_run_of_the_same_command_in_the_same_generation() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    assert!(
        t.store
            .earlier_run(sid, "host:a", "apt list --upgradable")
            .unwrap()
            .is_none()
    );
    let first = run_to_end(&t, sid, "host:a", "apt list --upgradable");
    let found = t
        .store
        .earlier_run(sid, "host:a", "apt list --upgradable")
        .unwrap()
        .unwrap();
    assert_eq!(found.id, first.id);
    assert!(
        found.finished_at_ms.is_some(),
        "the earlier result comes with its time"
    );
    assert!(
        t.store
            .earlier_run(sid, "host:b", "apt list --upgradable")
            .unwrap()
            .is_none(),
        "other target"
    );
    assert!(
        t.store
            .earlier_run(sid, "host:a", "apt list")
            .unwrap()
            .is_none(),
        "other command"
    );
    // A new generation (after a reopen) runs it again legitimately.
    t.store
        .complete_task(sid, nomos_store::Outcome::Failed, "")
        .unwrap();
    t.store.reopen_session(sid).unwrap();
    propose(&t, sid, &["again"]);
    assert!(
        t.store
            .earlier_run(sid, "host:a", "apt list --upgradable")
            .unwrap()
            .is_none()
    );
}

#[test]
fn i1_run_is_refused_without_a_plan_and_after_a_reopen() {
    let t = store();
    let sid = new_session(&t, "s");
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "uptime"))
        .unwrap_err();
    let nomos_store::StoreError::Invariant {
        code, directive, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*code, "I1");
    assert!(directive.contains("propose_plan"), "{directive}");
    propose(&t, sid, &["x"]);
    t.store
        .create_execution(&read_only(sid, "host:a", "uptime"))
        .unwrap();
    t.store
        .complete_task(sid, nomos_store::Outcome::Success, "")
        .unwrap();
    t.store.reopen_session(sid).unwrap();
    assert_eq!(
        t.store
            .create_execution(&read_only(sid, "host:a", "uptime"))
            .unwrap_err()
            .code(),
        "store.invariant"
    );
}
