use nomos_store::{FinishedMessage, MAX_TOOL_RESULT_BYTES, NewMessage, PageAt, Role};

use crate::common::*;

#[test]
fn i16_one_row_per_iteration_with_accumulated_text() {
    let t = store();
    let sid = new_session(&t, "s");
    t.store
        .append_message(&NewMessage::user(sid, "check the disks"))
        .unwrap();
    // Iteration 1: reasoning text + a tool call.
    let m1 = t.store.begin_assistant_message(sid, false).unwrap();
    assert!(m1.pending);
    t.store.append_text(m1.id, "Let me look ").unwrap();
    t.store.append_text(m1.id, "at the disks.").unwrap();
    t.store.append_reasoning(m1.id, "df first").unwrap();
    t.store
        .record_tool_call(m1.id, "call_1", "run", r#"{"command":"df -h"}"#)
        .unwrap();
    t.store
        .set_tool_result(m1.id, "call_1", "Filesystem ...", false)
        .unwrap();
    let FinishedMessage::Kept(m1) = t.store.finish_message(m1.id, None).unwrap() else {
        panic!()
    };
    // Iteration 2: the answer, a separate row.
    let m2 = t.store.begin_assistant_message(sid, false).unwrap();
    t.store.append_text(m2.id, "Disks are fine.").unwrap();
    t.store.finish_message(m2.id, None).unwrap();

    let tr = t.store.transcript(sid).unwrap();
    assert_eq!(tr.messages.len(), 3);
    assert_eq!(
        tr.messages[1].text, "Let me look at the disks.",
        "parts accumulated, not overwritten"
    );
    assert_eq!(tr.messages[1].reasoning, "df first");
    assert_eq!(tr.messages[1].tool_calls.len(), 1);
    assert_eq!(
        tr.messages[1].tool_calls[0].result.as_deref(),
        Some("Filesystem ...")
    );
    assert_eq!(tr.messages[2].text, "Disks are fine.");
    assert!(tr.messages.iter().all(|m| !m.pending));
    assert_eq!(m1.role, Role::Assistant);
}

#[test]
fn i16_each_tool_call_stored_once() {
    let t = store();
    let sid = new_session(&t, "s");
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    let a = t
        .store
        .record_tool_call(m.id, "call_1", "run", r#"{"command":"uptime"}"#)
        .unwrap();
    let b = t
        .store
        .record_tool_call(m.id, "call_1", "run", r#"{"command":"uptime"}"#)
        .unwrap();
    assert_eq!(a.id, b.id);
    t.store
        .record_tool_call(m.id, "call_2", "get_entity", r#"{"slug":"host:a"}"#)
        .unwrap();
    t.store.finish_message(m.id, None).unwrap();
    let m = t.store.get_message(m.id).unwrap();
    assert_eq!(
        m.tool_calls
            .iter()
            .map(|c| c.call_id.as_str())
            .collect::<Vec<_>>(),
        ["call_1", "call_2"]
    );
}

#[test]
fn i16_long_tool_results_truncated_with_a_marker_and_replay_is_faithful() {
    let t = store();
    let sid = new_session(&t, "s");
    let m = t.store.begin_assistant_message(sid, true).unwrap();
    // Malformed arguments are kept exactly as the model sent them.
    let args = r#"{"command": "ls -la /etc", "#;
    t.store.record_tool_call(m.id, "c1", "run", args).unwrap();
    let long = format!("{}END", "é".repeat(MAX_TOOL_RESULT_BYTES));
    let c = t.store.set_tool_result(m.id, "c1", &long, false).unwrap();
    assert!(c.result_truncated);
    let r = c.result.unwrap();
    assert!(r.len() < MAX_TOOL_RESULT_BYTES + 100);
    assert!(r.contains("[truncated "), "marker present");
    assert!(r.ends_with("END"), "the tail is kept");
    t.store.finish_message(m.id, None).unwrap();
    let m = t.store.get_message(m.id).unwrap();
    assert!(m.auto);
    assert_eq!(m.tool_calls[0].arguments, args);
}

#[test]
fn i16_empty_placeholder_is_deleted_never_a_bubble() {
    let t = store();
    let sid = new_session(&t, "s");
    t.store
        .append_message(&NewMessage::user(sid, "proceed"))
        .unwrap();
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    t.store.append_text(m.id, "   ").unwrap();
    let out = t
        .store
        .finish_message(m.id, Some("empty response from the model"))
        .unwrap();
    assert_eq!(out, FinishedMessage::Deleted { message_id: m.id });
    let tr = t.store.transcript(sid).unwrap();
    assert_eq!(tr.messages.len(), 1);
    assert_eq!(tr.messages[0].role, Role::User);
    assert_eq!(
        t.store.get_message(m.id).unwrap_err().code(),
        "store.not_found"
    );
    // And a complete empty message is refused outright.
    assert_eq!(
        t.store
            .append_message(&NewMessage::assistant(sid, ""))
            .unwrap_err()
            .code(),
        "store.invalid_input"
    );
}

#[test]
fn i16_a_finished_message_is_immutable() {
    let t = store();
    let sid = new_session(&t, "s");
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    t.store.append_text(m.id, "hello").unwrap();
    let FinishedMessage::Kept(done) = t.store.finish_message(m.id, Some("stream cut")).unwrap()
    else {
        panic!()
    };
    assert_eq!(done.error.as_deref(), Some("stream cut"));
    let e = t.store.append_text(m.id, " more").unwrap_err();
    assert_eq!(e.code(), "store.invariant");
    assert_eq!(t.store.get_message(m.id).unwrap().text, "hello");
    // Finishing twice returns the kept row.
    assert!(matches!(
        t.store.finish_message(m.id, None).unwrap(),
        FinishedMessage::Kept(_)
    ));
}

#[test]
fn one_megabyte_message_is_kept_whole_and_bigger_input_is_refused() {
    let t = store();
    let sid = new_session(&t, "s");
    let big = "x".repeat(1024 * 1024);
    let m = t
        .store
        .append_message(&NewMessage::user(sid, big.clone()))
        .unwrap();
    assert_eq!(t.store.get_message(m.id).unwrap().text.len(), big.len());
    let huge = "y".repeat(nomos_store::MAX_MESSAGE_BYTES + 1);
    assert_eq!(
        t.store
            .append_message(&NewMessage::user(sid, huge))
            .unwrap_err()
            .code(),
        "store.invalid_input"
    );
}

#[test]
fn transcript_pages_and_last_user_message() {
    let t = store();
    let sid = new_session(&t, "s");
    for i in 0..10 {
        t.store
            .append_message(&NewMessage::user(sid, format!("q{i}")))
            .unwrap();
        t.store
            .append_message(&NewMessage::system(sid, format!("note {i}")))
            .unwrap();
    }
    let all = t.store.transcript(sid).unwrap().messages;
    let page = t
        .store
        .message_page(sid, PageAt::After(all[0].id), 5)
        .unwrap();
    assert_eq!(page.messages.len(), 5);
    assert_eq!(page.messages[0].id, all[1].id);
    let next = t
        .store
        .message_page(sid, PageAt::After(page.messages[4].id), 100)
        .unwrap();
    assert_eq!(next.messages.len(), 14);
    assert!(next.older && !next.newer);
    assert_eq!(t.store.last_user_message(sid).unwrap().unwrap().text, "q9");
    assert_eq!(t.store.transcript(sid).unwrap().messages.len(), 20);
}

/// Ids of a page, as `q<n>` texts.
fn texts(page: &nomos_store::MessagePage) -> Vec<String> {
    page.messages.iter().map(|m| m.text.clone()).collect()
}

fn qs(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("q{i}")).collect()
}

#[test]
fn a_session_opens_page_by_page_from_the_newest_or_around_a_message() {
    let t = store();
    let sid = new_session(&t, "long");
    let other = new_session(&t, "other");
    let mut ids = Vec::new();
    for i in 0..25 {
        ids.push(
            t.store
                .append_message(&NewMessage::user(sid, format!("q{i}")))
                .unwrap()
                .id,
        );
        t.store
            .append_message(&NewMessage::user(other, format!("x{i}")))
            .unwrap();
    }
    // The newest page, then older ones until the first message.
    let last = t.store.message_page(sid, PageAt::Latest, 10).unwrap();
    assert_eq!(texts(&last), qs(15..25));
    assert!(last.older && !last.newer);
    let mid = t
        .store
        .message_page(sid, PageAt::Before(last.messages[0].id), 10)
        .unwrap();
    assert_eq!(texts(&mid), qs(5..15));
    assert!(mid.older && mid.newer);
    let first = t
        .store
        .message_page(sid, PageAt::Before(mid.messages[0].id), 10)
        .unwrap();
    assert_eq!(texts(&first), qs(0..5));
    assert!(!first.older && first.newer);
    // Around a search hit: half before it, then on to newer pages.
    let around = t
        .store
        .message_page(sid, PageAt::Around(ids[3]), 10)
        .unwrap();
    assert_eq!(
        texts(&around),
        qs(0..10),
        "only 3 before it: the rest after"
    );
    assert!(!around.older && around.newer);
    let around = t
        .store
        .message_page(sid, PageAt::Around(ids[12]), 10)
        .unwrap();
    assert_eq!(texts(&around), qs(7..17));
    assert!(around.older && around.newer);
    let next = t
        .store
        .message_page(sid, PageAt::After(around.messages[9].id), 10)
        .unwrap();
    assert_eq!(texts(&next), qs(17..25));
    assert!(next.older && !next.newer);
    let end = t
        .store
        .message_page(sid, PageAt::Around(ids[24]), 10)
        .unwrap();
    assert_eq!(texts(&end), qs(19..25));
    assert!(end.older && !end.newer);
    // A page never holds more than the cap, whatever is asked.
    let all = t.store.message_page(sid, PageAt::Latest, u32::MAX).unwrap();
    assert_eq!(all.messages.len(), 25);
    assert!(!all.older && !all.newer);
    // An empty session has an empty page.
    let empty = new_session(&t, "empty");
    let page = t.store.message_page(empty, PageAt::Latest, 10).unwrap();
    assert!(page.messages.is_empty() && !page.older && !page.newer);
    // A message of another session is refused, with a code.
    let foreign = t
        .store
        .message_page(other, PageAt::Latest, 1)
        .unwrap()
        .messages[0]
        .id;
    for at in [
        PageAt::Before(foreign),
        PageAt::After(foreign),
        PageAt::Around(foreign),
    ] {
        let e = t.store.message_page(sid, at, 10).unwrap_err();
        assert_eq!(e.code(), "store.not_found", "{e}");
    }
}

#[test]
fn a_page_carries_the_executions_of_its_own_runs_and_every_live_one() {
    let t = store();
    let sid = new_session(&t, "runs");
    propose(&t, sid, &["look"]);
    let mut runs = Vec::new();
    for i in 0..3 {
        t.store
            .append_message(&NewMessage::user(sid, format!("run {i}")))
            .unwrap();
        let m = t.store.begin_assistant_message(sid, false).unwrap();
        t.store.append_text(m.id, "running").unwrap();
        let call = format!("call_{i}");
        t.store
            .record_tool_call(m.id, &call, "run", r#"{"command":"uptime"}"#)
            .unwrap();
        t.store.finish_message(m.id, None).unwrap();
        let mut new = read_only(sid, "host:web-01", &format!("uptime {i}"));
        new.call_id = Some(call);
        let e = t.store.create_execution(&new).unwrap();
        if i < 2 {
            t.store.start_execution(e.id).unwrap();
            t.store.finish_execution(e.id, &finished("ok\n")).unwrap();
        }
        runs.push((m.id, e.id));
    }
    // The page of the first run only: its own execution, and the third (still queued).
    let page = t
        .store
        .message_page(sid, PageAt::Around(runs[0].0), 2)
        .unwrap();
    let (first, last) = (page.messages[0].id, page.messages[1].id);
    let ex = t
        .store
        .read(|r| r.executions_for_page(sid, first, last))
        .unwrap();
    assert_eq!(
        ex.iter().map(|e| e.id).collect::<Vec<_>>(),
        [runs[0].1, runs[2].1]
    );
    // The newest page: the third run once, though it is both on the page and live.
    let page = t.store.message_page(sid, PageAt::Latest, 2).unwrap();
    let ex = t
        .store
        .read(|r| r.executions_for_page(sid, page.messages[0].id, page.messages[1].id))
        .unwrap();
    assert_eq!(ex.iter().map(|e| e.id).collect::<Vec<_>>(), [runs[2].1]);
}

#[test]
fn messages_of_unknown_session_are_refused() {
    let t = store();
    let e = t
        .store
        .append_message(&NewMessage::user(999, "hi"))
        .unwrap_err();
    assert_eq!(e.code(), "store.not_found", "{e}");
}
