//! One entry for an operator message (issue 17): `submit` refuses what the turn would refuse
//! before returning, then runs the turn detached; `retry_turn` runs the turn again without
//! adding the operator's message a second time.

use std::time::Duration;

use nomos_mock_llm::{Reply, Step};
use nomos_protocol::AgentEvent;
use nomos_store::{Role, SessionId};

use crate::support::*;

/// Events until the turn of `session` is done (or the time is up).
async fn until_done(h: &mut Harness, session: SessionId) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while let Ok(Some(e)) = tokio::time::timeout_at(deadline, h.events.recv()).await {
        let done = matches!(e, AgentEvent::Done { session_id, .. } if session_id == session);
        out.push(e);
        if done {
            return out;
        }
    }
    panic!("the turn of session {session} did not end: {out:?}");
}

fn user_messages(h: &Harness, session: SessionId) -> Vec<String> {
    h.store()
        .transcript(session)
        .unwrap()
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.clone())
        .collect()
}

#[tokio::test]
async fn submit_returns_while_the_turn_runs_and_the_turn_streams_as_events() {
    let mut h = Harness::new(vec![
        Step::new(Reply::Hang {
            text: "thinking…".into(),
        }),
        text("Next turn works."),
    ])
    .await;
    // The model never answers: `submit` must come back anyway, with the new session.
    let session = tokio::time::timeout(
        Duration::from_secs(5),
        h.agent.submit(None, "  check the disks  "),
    )
    .await
    .expect("submit does not wait for the turn")
    .unwrap();
    assert_eq!(user_messages(&h, session), vec!["check the disks"]);
    assert_eq!(
        h.store().get_session(session).unwrap().title,
        "check the disks"
    );
    assert!(h.server.wait_for_requests(1, Duration::from_secs(5)).await);
    // While that turn runs, a second message is refused before anything is recorded.
    let busy = h.agent.submit(Some(session), "and the network").await;
    assert_eq!(busy.unwrap_err().code(), "agent.busy");
    assert_eq!(user_messages(&h, session), vec!["check the disks"]);
    assert!(h.agent.stop(session).unwrap());
    let events = until_done(&mut h, session).await;
    assert_eq!(dones(&events), vec![true]);
}

#[tokio::test]
async fn submit_refuses_bad_messages_without_creating_a_session() {
    let h = Harness::new(Vec::new()).await;
    for text in ["", "   \n\t "] {
        let err = h.agent.submit(None, text).await.unwrap_err();
        assert_eq!(err.code(), "agent.empty_message");
    }
    let long = "x".repeat(2 * 1024 * 1024);
    let err = h.agent.submit(None, &long).await.unwrap_err();
    assert_eq!(err.code(), "agent.message_too_long");
    assert!(
        h.store()
            .list_sessions(&Default::default())
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn retry_runs_the_turn_again_without_repeating_the_message() {
    let mut h = Harness::new(vec![
        Step::new(Reply::HttpError {
            status: 400,
            message: Some("bad request upstream".into()),
            error_type: None,
            code: None,
            retry_after: None,
        }),
        text("Recovered: all disks are healthy."),
    ])
    .await;
    let session = h.agent.submit(None, "check the disks").await.unwrap();
    let first = until_done(&mut h, session).await;
    assert_eq!(dones(&first), vec![true], "the first turn failed");

    h.agent.retry_turn(session).await.unwrap();
    let second = until_done(&mut h, session).await;
    assert_eq!(dones(&second), vec![false], "{second:?}");
    assert_eq!(user_messages(&h, session), vec!["check the disks"]);
    let transcript = h.store().transcript(session).unwrap();
    let last = transcript
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert_eq!(last.text, "Recovered: all disks are healthy.");
    h.assert_no_script_failures();
}

#[tokio::test]
async fn retry_on_a_finished_session_is_refused() {
    let mut h = Harness::new(vec![text("Hello.")]).await;
    let session = h.agent.send(None, "say hello").await.unwrap();
    h.drain();
    h.store()
        .complete_task(session, nomos_store::Outcome::Success, "said hello")
        .unwrap();
    let err = h.agent.retry_turn(session).await.unwrap_err();
    assert_eq!(err.code(), "agent.nothing_to_retry");
    assert_eq!(user_messages(&h, session), vec!["say hello"]);
}
