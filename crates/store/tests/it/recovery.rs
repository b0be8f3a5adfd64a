use nomos_store::{
    CUT_TURN_ERROR, ContinuedVia, ExecStatus, INTERRUPTED_REASON, NewMessage, OperatorApproval,
    StepStatus, Store,
};
use std::time::Duration;

use crate::common::*;

/// A crash (the store dropped without finishing anything), then a restart on the same file.
#[test]
fn startup_recovery_after_a_crash_mid_turn() {
    let t = store();
    let sid = new_session(&t, "s");
    t.store
        .append_message(&NewMessage::user(sid, "update everything"))
        .unwrap();
    propose(&t, sid, &["apt"]);
    step(&t, sid, 1, StepStatus::Running);
    t.store
        .open_approval_window(
            sid,
            &OperatorApproval::Button { detail: None },
            Some(60_000),
        )
        .unwrap();
    // Turn in progress: one placeholder with text, one empty.
    let kept = t.store.begin_assistant_message(sid, false).unwrap();
    t.store
        .append_text(kept.id, "Running apt-get update…")
        .unwrap();
    t.store
        .record_tool_call(kept.id, "c1", "run", "{}")
        .unwrap();
    let empty = t.store.begin_assistant_message(sid, true).unwrap();
    let running = t
        .store
        .create_execution(&read_only(sid, "host:a", "apt-get update"))
        .unwrap();
    t.store.start_execution(running.id).unwrap();
    let done = t
        .store
        .create_execution(&read_only(sid, "host:b", "apt-get update"))
        .unwrap();
    t.store.start_execution(done.id).unwrap();
    t.store.mark_execution_background(done.id).unwrap();
    t.store.finish_execution(done.id, &finished("ok")).unwrap();
    let path = t.path();
    let clock = t.clock.clone();
    drop(t.store); // kill -9: nothing else runs

    clock.advance(Duration::from_millis(120_000));
    let store = Store::open(&path).unwrap().with_clock(clock.clone());
    assert_eq!(store.pending_placeholders().unwrap().len(), 2);
    assert_eq!(store.active_executions().unwrap().len(), 1);
    assert_eq!(store.expired_approval_windows().unwrap().len(), 1);

    let report = store.recover_at_startup().unwrap();
    assert_eq!(report.interrupted_executions.len(), 1);
    let failed = &report.interrupted_executions[0];
    assert_eq!(failed.id, running.id);
    assert_eq!(failed.status, ExecStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some(INTERRUPTED_REASON));
    assert_eq!(report.cut_turns.len(), 2);
    assert!(
        report
            .cut_turns
            .iter()
            .any(|c| c.message_id == kept.id && c.kept)
    );
    assert!(
        report
            .cut_turns
            .iter()
            .any(|c| c.message_id == empty.id && !c.kept)
    );
    assert_eq!(report.expired_windows.len(), 1);
    let owed: Vec<_> = report
        .pending_continuations
        .iter()
        .map(|p| p.execution.id)
        .collect();
    assert_eq!(
        owed,
        [done.id, running.id],
        "the finished result and the failure are both re-queued"
    );

    // Nothing persisted was lost; no empty or duplicate bubble.
    let tr = store.transcript(sid).unwrap();
    assert_eq!(tr.messages.len(), 2);
    assert_eq!(tr.messages[1].text, "Running apt-get update…");
    assert_eq!(tr.messages[1].error.as_deref(), Some(CUT_TURN_ERROR));
    assert_eq!(tr.messages[1].tool_calls.len(), 1);
    assert!(tr.messages.iter().all(|m| !m.pending));

    // The session can go on, and recovery is idempotent.
    for id in owed {
        store
            .mark_execution_continued(id, ContinuedVia::Resume)
            .unwrap();
    }
    let again = store.recover_at_startup().unwrap();
    assert!(again.interrupted_executions.is_empty() && again.cut_turns.is_empty());
    assert!(again.expired_windows.is_empty() && again.pending_continuations.is_empty());
    store
        .append_message(&NewMessage::user(sid, "go on"))
        .unwrap();
    assert!(store.plan_in_flight(sid).unwrap());
}

#[test]
fn crash_in_the_middle_of_a_write_transaction_leaves_no_trace() {
    let t = store();
    let sid = new_session(&t, "s");
    let res: Result<(), nomos_store::StoreError> = t.store.write(|w| {
        w.append_message(&NewMessage::user(sid, "one"))?;
        w.append_message(&NewMessage::user(sid, "two"))?;
        Err(nomos_store::StoreError::Busy)
    });
    assert!(res.is_err());
    assert_eq!(
        t.store.transcript(sid).unwrap().messages.len(),
        0,
        "all or nothing"
    );
    // A panic inside a transaction rolls back too and the store stays usable.
    let store = t.store.clone();
    let r = std::thread::spawn(move || {
        let _ = store.write(|w| -> Result<(), nomos_store::StoreError> {
            w.append_message(&NewMessage::user(sid, "three"))?;
            panic!("boom");
        });
    })
    .join();
    assert!(r.is_err());
    t.store
        .append_message(&NewMessage::user(sid, "four"))
        .unwrap();
    let texts: Vec<_> = t
        .store
        .transcript(sid)
        .unwrap()
        .messages
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(texts, ["four"]);
}
