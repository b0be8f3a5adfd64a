use nomos_store::{CloseReason, NewMessage, OperatorApproval, Outcome, SessionStatus};
use std::time::Duration;

use crate::common::*;

#[test]
fn i7_goal_and_plan_open_no_window() {
    let t = store();
    let sid = new_session(&t, "s");
    t.store.set_goal(sid, "update nginx").unwrap();
    assert!(t.store.active_approval_window(sid).unwrap().is_none());
    propose(&t, sid, &["update"]);
    assert!(t.store.active_approval_window(sid).unwrap().is_none());
    // Without a plan nothing can be approved.
    let other = new_session(&t, "other");
    let e = t
        .store
        .open_approval_window(other, &OperatorApproval::Button { detail: None }, None)
        .unwrap_err();
    assert_eq!(e.code(), "store.invariant");
}

#[test]
fn i8_only_an_operator_message_opens_a_window() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["update"]);
    // Model text saying "approved" is not an operator message.
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    t.store.append_text(m.id, "approved").unwrap();
    t.store.finish_message(m.id, None).unwrap();
    let e = t
        .store
        .open_approval_window(
            sid,
            &OperatorApproval::ChatMessage { message_id: m.id },
            None,
        )
        .unwrap_err();
    let nomos_store::StoreError::Invariant { code, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*code, "I8");
    // A system note (auto) saying "approved" neither.
    let note = t
        .store
        .append_message(&NewMessage::system(sid, "approved"))
        .unwrap();
    assert!(
        t.store
            .open_approval_window(
                sid,
                &OperatorApproval::ChatMessage {
                    message_id: note.id
                },
                None
            )
            .is_err()
    );
    // An operator message of another session neither.
    let other = new_session(&t, "other");
    let foreign = t
        .store
        .append_message(&NewMessage::user(other, "yes"))
        .unwrap();
    assert!(
        t.store
            .open_approval_window(
                sid,
                &OperatorApproval::ChatMessage {
                    message_id: foreign.id
                },
                None
            )
            .is_err()
    );
    assert!(t.store.active_approval_window(sid).unwrap().is_none());

    let yes = t
        .store
        .append_message(&NewMessage::user(sid, "go ahead"))
        .unwrap();
    let w = t
        .store
        .open_approval_window(
            sid,
            &OperatorApproval::ChatMessage { message_id: yes.id },
            None,
        )
        .unwrap();
    assert_eq!(w.message_id, Some(yes.id));
    assert_eq!(w.generation, 1);
    assert_eq!(
        t.store.get_session(sid).unwrap().status,
        SessionStatus::Executing
    );
    // Opening again returns the same window.
    let again = t
        .store
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    assert_eq!(again.id, w.id);
}

#[test]
fn windows_are_scoped_to_a_generation_and_close_on_completion() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["a"]);
    let w1 = t
        .store
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    // A re-proposal (nothing started) is a new plan the operator has not approved.
    propose(&t, sid, &["b"]);
    assert!(t.store.active_approval_window(sid).unwrap().is_none());
    assert_eq!(
        t.store.approval_windows(sid).unwrap()[0].close_reason,
        Some(CloseReason::Replaced)
    );
    let w2 = t
        .store
        .open_approval_window(sid, &OperatorApproval::Button { detail: None }, None)
        .unwrap();
    assert_ne!(w1.id, w2.id);
    assert_eq!(w2.generation, 2);
    t.store.complete_task(sid, Outcome::Success, "").unwrap();
    let ws = t.store.approval_windows(sid).unwrap();
    assert_eq!(ws[1].close_reason, Some(CloseReason::Completed));
    assert!(t.store.active_approval_window(sid).unwrap().is_none());
}

#[test]
fn windows_expire() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["a"]);
    let w = t
        .store
        .open_approval_window(
            sid,
            &OperatorApproval::Button { detail: None },
            Some(60_000),
        )
        .unwrap();
    assert_eq!(w.expires_at_ms, Some(T0 + 60_000));
    t.clock.advance(Duration::from_millis(59_999));
    assert!(t.store.active_approval_window(sid).unwrap().is_some());
    t.clock.advance(Duration::from_millis(1));
    assert!(
        t.store.active_approval_window(sid).unwrap().is_none(),
        "expired windows approve nothing"
    );
    assert_eq!(t.store.expired_approval_windows().unwrap().len(), 1);
    let closed = t.store.close_expired_approval_windows().unwrap();
    assert_eq!(closed[0].close_reason, Some(CloseReason::Expired));
    assert!(t.store.expired_approval_windows().unwrap().is_empty());
    // Revoking.
    let w = t
        .store
        .open_approval_window(
            sid,
            &OperatorApproval::Button {
                detail: Some("cli".into()),
            },
            None,
        )
        .unwrap();
    let w = t
        .store
        .close_approval_window(w.id, CloseReason::Revoked)
        .unwrap();
    assert_eq!(w.close_reason, Some(CloseReason::Revoked));
}
