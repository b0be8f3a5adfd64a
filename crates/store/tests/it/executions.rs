use nomos_store::{
    Approval, ApprovalKind, CommandClass, ContinuedVia, ExecStatus, ExecutionResult,
    MAX_OUTPUT_BYTES, OperatorApproval, SessionStatus, StepStatus,
};
use std::time::Duration;

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
    t.clock.advance(Duration::from_millis(1500));
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
    propose_on(&t, sid, &[("edit config", Some("host:a"))]);
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

fn propose_on(t: &TestStore, sid: i64, steps: &[(&str, Option<&str>)]) {
    let steps: Vec<nomos_store::NewPlanStep> = steps
        .iter()
        .map(|(title, target)| nomos_store::NewPlanStep {
            title: (*title).to_owned(),
            detail: None,
            target: target.map(str::to_owned),
        })
        .collect();
    assert!(matches!(
        t.store.propose_plan(sid, &steps).unwrap(),
        nomos_store::ProposePlanOutcome::Proposed(_)
    ));
}

fn in_window(sid: i64, target: &str, window: i64) -> nomos_store::NewExecution {
    let mut new = read_only(sid, target, "sed -i s/a/b/ /etc/x.conf");
    new.class = CommandClass::ConfigMutation;
    new.approval = Some(Approval {
        kind: ApprovalKind::Window,
        by: None,
        window_id: Some(window),
    });
    new
}

/// I23: a window covers config changes only on the targets its plan's steps name.
#[test]
fn i23_a_window_covers_only_the_targets_of_its_plan() {
    for (steps, target, covered) in [
        (vec![("edit", Some("host:a"))], "host:a", true),
        (vec![("edit", Some(" host:a "))], "host:a", true),
        (vec![("edit", Some("host:a"))], "host:b", false),
        (vec![("edit", None)], "host:a", false),
        (
            vec![("read", Some("host:b")), ("edit", Some("host:c"))],
            "host:c",
            true,
        ),
        (
            vec![("read", Some("host:b")), ("edit", Some("host:c"))],
            "host:a",
            false,
        ),
    ] {
        let t = store();
        let sid = new_session(&t, "s");
        propose_on(&t, sid, &steps);
        let w = t
            .store
            .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
            .unwrap();
        assert_eq!(
            t.store.window_covers(&w, target).unwrap(),
            covered,
            "{steps:?} {target}"
        );
        let result = t.store.create_execution(&in_window(sid, target, w.id));
        match result {
            Ok(e) => assert!(covered, "{steps:?} {target}: ran as {e:?}"),
            Err(e) => {
                assert!(!covered, "{steps:?} {target}: {e}");
                assert!(e.to_string().contains("targets"), "{e}");
            }
        }
    }
}

/// B5/I23: an execution asked under a plan that changed since cannot be approved.
#[test]
fn i23_an_execution_of_a_replaced_or_finished_plan_cannot_be_approved() {
    for change in ["re-proposed", "completed", "reopened"] {
        let t = store();
        let sid = new_session(&t, "s");
        propose(&t, sid, &["x"]);
        let mut new = read_only(sid, "host:a", "rm -rf /tmp/x");
        new.class = CommandClass::Destructive;
        let e = t.store.create_execution(&new).unwrap();
        match change {
            "re-proposed" => {
                propose(&t, sid, &["y"]);
            }
            _ => {
                t.store
                    .complete_task(sid, nomos_store::Outcome::Failed, "stopped")
                    .unwrap();
                if change == "reopened" {
                    t.store.reopen_session(sid).unwrap();
                }
            }
        }
        let err = t
            .store
            .approve_execution(
                e.id,
                &Approval {
                    kind: ApprovalKind::OperatorButton,
                    by: Some("operator".into()),
                    window_id: None,
                },
            )
            .unwrap_err();
        assert_eq!(err.code(), "store.invariant", "{change}: {err}");
        assert_eq!(
            t.store.get_execution(e.id).unwrap().status,
            ExecStatus::AwaitingApproval,
            "{change}"
        );
    }
}

/// I21: a paused session's finished background work is flagged for the operator's next
/// message, and the idle sweep does not pick the session; a terminal session is not paused.
#[test]
fn i21_a_paused_session_is_flagged_and_left_out_of_the_idle_sweep() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "uptime"))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    t.store.mark_execution_background(e.id).unwrap();
    t.store.finish_execution(e.id, &finished("up")).unwrap();
    assert!(!t.store.pending_continuations().unwrap()[0].session_paused);
    assert!(t.store.pause_session(sid).unwrap());
    assert!(t.store.is_session_paused(sid).unwrap());
    assert!(t.store.pending_continuations().unwrap()[0].session_paused);
    t.clock.advance(Duration::from_millis(3_600_000));
    assert!(t.store.idle_sessions(60_000).unwrap().is_empty());
    t.store.unpause_session(sid).unwrap();
    assert!(!t.store.pending_continuations().unwrap()[0].session_paused);
    assert_eq!(t.store.idle_sessions(60_000).unwrap().len(), 1);
    t.store
        .complete_task(sid, nomos_store::Outcome::Failed, "stopped")
        .unwrap();
    assert!(
        !t.store.pause_session(sid).unwrap(),
        "a finished session is not paused"
    );
}

/// I22: the row keeps a redacted display copy and the digest of the exact text.
#[test]
fn i22_the_row_holds_a_display_copy_and_the_digest_of_the_exact_text() {
    for exact in [
        "curl -H 'Authorization: Bearer abcdefghijklmnop' https://x",
        "mysql --password=hunter2222 -e 'select 1'",
        "uname -a",
    ] {
        let t = store();
        let sid = new_session(&t, "s");
        propose(&t, sid, &["x"]);
        let e = t
            .store
            .create_execution(&read_only(sid, "host:a", exact))
            .unwrap();
        assert!(e.is_exact_command(exact), "{exact}");
        assert!(!e.is_exact_command(&format!("{exact} ")), "{exact}");
        if e.canonical != exact {
            assert!(e.canonical.contains(nomos_store::REDACTED), "{e:?}");
            assert!(
                !e.is_exact_command(&e.canonical),
                "the display copy never proves itself"
            );
        } else {
            assert!(e.is_exact_command(&e.canonical));
        }
    }
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
