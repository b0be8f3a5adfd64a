//! Model faults end in a clear error and exactly one `done`; nothing is lost (I10, I11).

use std::time::Duration;

use nomos_mock_llm::{Expect, Reply, Step};
use nomos_protocol::AgentEvent;
use nomos_store::Role;

use crate::support::*;

fn no_empty_assistant_rows(h: &Harness, session: i64) {
    for m in h.store().transcript(session).unwrap().messages {
        if m.role == Role::Assistant {
            assert!(
                !(m.text.trim().is_empty() && m.tool_calls.is_empty() && m.error.is_none()),
                "empty assistant bubble persisted: {m:?}"
            );
        }
    }
}

#[tokio::test]
async fn i11_empty_replies_are_retried_with_escalating_notes() {
    let mut h = Harness::new(vec![
        Step::new(Reply::Empty {
            finish_reason: None,
            reasoning: None,
        }),
        Step::new(Reply::Empty {
            finish_reason: None,
            reasoning: None,
        })
        .expect(Expect::LastUserContains("last reply was empty".into())),
        text("Here is the answer.").expect(Expect::LastUserContains("empty again".into())),
    ])
    .await;
    let session = h.agent.send(None, "status?").await.unwrap();
    let events = h.drain();
    assert_eq!(dones(&events), vec![false]);
    no_empty_assistant_rows(&h, session);
    let transcript = h.store().transcript(session).unwrap();
    assert_eq!(
        transcript.messages.last().unwrap().text,
        "Here is the answer."
    );
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i11_four_empty_replies_end_in_a_clear_error_and_no_empty_bubble() {
    let mut h = Harness::new(vec![
        Step::new(Reply::Empty {
            finish_reason: Some("stop".into()),
            reasoning: None,
        }),
        Step::new(Reply::Empty {
            finish_reason: Some("stop".into()),
            reasoning: None,
        }),
        Step::new(Reply::Empty {
            finish_reason: Some("stop".into()),
            reasoning: None,
        }),
        Step::new(Reply::Empty {
            finish_reason: Some("stop".into()),
            reasoning: None,
        }),
    ])
    .await;
    let session = h.agent.send(None, "status?").await.unwrap();
    let events = h.drain();
    assert_eq!(dones(&events), vec![true]);
    let err = of_type(&events, "error");
    assert_eq!(err.len(), 1);
    let text = serde_json::to_string(err[0]).unwrap();
    assert!(
        text.contains("stop"),
        "the real finish_reason reaches the operator: {text}"
    );
    no_empty_assistant_rows(&h, session);
}

fn empty() -> Step {
    Step::new(Reply::Empty {
        finish_reason: None,
        reasoning: None,
    })
}

/// B8: three retries after the first empty reply, each with its own note; the third note is
/// really sent, and a model that recovers on the fourth attempt advances the approved plan in
/// the same turn. Every number of empty replies up to the limit recovers.
#[tokio::test]
async fn i11_a_model_that_recovers_after_up_to_three_retries_advances_the_plan() {
    for empties in 1..=3usize {
        let mut steps = vec![plan(&[("Read the uptime", "host:local")])];
        steps.push(empty());
        let notes = ["last reply was empty", "empty again", "Third empty reply"];
        for note in notes.iter().take(empties - 1) {
            steps.push(empty().expect(Expect::LastUserContains((*note).into())));
        }
        steps.push(run("uptime").expect(Expect::LastUserContains(notes[empties - 1].into())));
        steps.push(text("Uptime read.").expect(Expect::LastToolResultContains("exit 0".into())));
        let mut h = Harness::new(steps).await;
        let session = h.agent.send(None, "uptime?").await.unwrap();
        h.agent.send(Some(session), "go ahead").await.unwrap();
        let events = h.drain();
        assert_eq!(
            dones(&events),
            vec![false, false],
            "{empties} empty replies"
        );
        let runs = h.store().executions(session).unwrap();
        assert_eq!(runs.len(), 1, "{empties} empty replies: the plan advanced");
        assert_eq!(runs[0].exit_code, Some(0));
        no_empty_assistant_rows(&h, session);
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn i10_http_500_then_success_is_retried_and_done_once() {
    let mut h = Harness::new(vec![
        Step::new(Reply::HttpError {
            status: 500,
            message: Some("upstream boom".into()),
            error_type: None,
            code: None,
            retry_after: None,
        }),
        text("Recovered."),
    ])
    .await;
    h.agent.send(None, "hi").await.unwrap();
    assert_eq!(dones(&h.drain()), vec![false]);
}

#[tokio::test]
async fn i10_a_non_retryable_error_carries_the_provider_text() {
    let mut h = Harness::new(vec![Step::new(Reply::HttpError {
        status: 400,
        message: Some("maximum context length is 8192 tokens".into()),
        error_type: Some("invalid_request_error".into()),
        code: Some("context_length_exceeded".into()),
        retry_after: None,
    })])
    .await;
    let session = h.agent.send(None, "hi").await.unwrap();
    let events = h.drain();
    assert_eq!(dones(&events), vec![true]);
    let text = serde_json::to_string(&of_type(&events, "error")).unwrap();
    assert!(
        text.contains("maximum context length is 8192 tokens"),
        "{text}"
    );
    no_empty_assistant_rows(&h, session);
    // The operator's message is kept.
    assert_eq!(
        h.store().transcript(session).unwrap().messages[0].text,
        "hi"
    );
}

#[tokio::test]
async fn i10_rate_limit_with_retry_after_is_honoured() {
    let mut h = Harness::new(vec![
        Step::new(Reply::RateLimited {
            retry_after_secs: 0.2,
            message: None,
        }),
        text("After the wait."),
    ])
    .await;
    let started = std::time::Instant::now();
    h.agent.send(None, "hi").await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(190));
    assert_eq!(dones(&h.drain()), vec![false]);
}

#[tokio::test]
async fn i10_malformed_arguments_and_unknown_tools_get_clear_results() {
    let h = Harness::new(vec![
        Step::new(Reply::MalformedToolArgs {
            name: "run".into(),
            arguments: "{\"command\": \"ls".into(),
        }),
        Step::new(Reply::UnknownTool {
            name: "format_disk".into(),
            arguments: None,
        })
        .expect(Expect::LastToolResultContains("not valid JSON".into())),
        text("Sorry.").expect(Expect::LastToolResultContains(
            "Unknown tool `format_disk`".into(),
        )),
    ])
    .await;
    h.agent.send(None, "hi").await.unwrap();
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i10_stop_ends_the_turn_at_once_without_retry_and_releases_the_gate() {
    let mut h = Harness::new(vec![
        Step::new(Reply::Hang {
            text: "thinking…".into(),
        }),
        text("Next turn works."),
    ])
    .await;
    let agent = h.agent.clone();
    let task = tokio::spawn(async move { agent.send(None, "long task").await });
    assert!(h.server.wait_for_requests(1, Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let session = h.store().list_sessions(&Default::default()).unwrap()[0].id;
    assert!(h.agent.stop(session).unwrap());
    let session = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let events = h.drain();
    assert_eq!(dones(&events), vec![true]);
    assert_eq!(h.server.request_count(), 1, "a stop is never retried");
    // The gate is free: the next message runs at once.
    h.agent.send(Some(session), "again").await.unwrap();
    assert!(matches!(
        h.drain().last(),
        Some(AgentEvent::Done { error: false, .. })
    ));
}

fn no_pending_rows(h: &Harness, session: i64) {
    for m in h.store().transcript(session).unwrap().messages {
        assert!(!m.pending, "pending row left behind: {m:?}");
    }
}

fn deadline_config(request: Duration, turn: Duration) -> nomos_agent::AgentConfig {
    let mut c = test_config();
    c.model_retry.max_total = request;
    c.turn_deadline = turn;
    c
}

#[tokio::test]
async fn i10_endless_keepalive_comments_end_in_a_typed_error_and_one_done() {
    // Keep-alives reset the idle timeout; the request's overall deadline ends it, whether
    // some text came first or not, and whichever of the request and turn limits is shorter.
    for (before, request, turn) in [
        ("", Duration::from_millis(600), Duration::from_secs(60)),
        (
            "The question is",
            Duration::from_millis(600),
            Duration::from_secs(60),
        ),
        ("", Duration::from_secs(60), Duration::from_millis(600)),
    ] {
        let mut h = Harness::with_config(
            vec![
                Step::new(Reply::KeepaliveForever {
                    text: before.into(),
                    every_ms: 20,
                }),
                text("unreached"),
            ],
            deadline_config(request, turn),
        )
        .await;
        let started = std::time::Instant::now();
        let session = tokio::time::timeout(Duration::from_secs(10), h.agent.send(None, "hi"))
            .await
            .expect("the turn ends")
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        let events = h.drain();
        assert_eq!(dones(&events), vec![true], "{before:?}");
        let errors = of_type(&events, "error");
        assert_eq!(errors.len(), 1, "{events:?}");
        let Some(AgentEvent::Error { code, message, .. }) = errors.first().copied() else {
            unreachable!()
        };
        assert_eq!(code.as_str(), "llm.deadline_exceeded", "{message}");
        assert!(message.contains("did not finish"), "{message}");
        assert_eq!(h.server.request_count(), 1);
        no_pending_rows(&h, session);
        no_empty_assistant_rows(&h, session);
    }
}

#[tokio::test]
async fn i10_a_turn_past_its_deadline_starts_no_new_model_iteration() {
    // Each model call is quick, but together they run past the turn's limit.
    let slow = |i: usize| {
        let mut s = Step::new(Reply::UnknownTool {
            name: format!("no_such_tool_{i}"),
            arguments: None,
        });
        s.delay_ms = 150;
        s
    };
    let mut h = Harness::with_config(
        (0..20).map(slow).collect(),
        deadline_config(Duration::from_secs(60), Duration::from_millis(500)),
    )
    .await;
    let session = tokio::time::timeout(Duration::from_secs(20), h.agent.send(None, "hi"))
        .await
        .expect("the turn ends")
        .unwrap();
    let events = h.drain();
    assert_eq!(dones(&events), vec![true]);
    let text = serde_json::to_string(&of_type(&events, "error")).unwrap();
    assert!(
        text.contains("agent.turn_deadline") || text.contains("llm.deadline_exceeded"),
        "{text}"
    );
    assert!(h.server.request_count() < 20);
    no_pending_rows(&h, session);
}

#[tokio::test]
async fn i10_a_stream_cut_mid_text_then_retried_is_replaced_not_appended() {
    // Cut once, twice, at different points; each restart is announced with its reason and
    // count, the partial text is dropped, and the kept reply is the last attempt's alone.
    for cuts in [vec!["The question "], vec!["The q", "The question \"why"]] {
        let mut steps: Vec<Step> = cuts
            .iter()
            .map(|t| {
                Step::new(Reply::StreamCut {
                    text: (*t).into(),
                    call: None,
                })
            })
            .collect();
        steps.push(text("The question \"why\" has one answer."));
        let mut h = Harness::new(steps).await;
        let session = h.agent.send(None, "hi").await.unwrap();
        let events = h.drain();
        assert_eq!(dones(&events), vec![false]);
        let retries: Vec<(i64, u32, u32, String)> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ModelRetrying {
                    message_id,
                    attempt,
                    max_attempts,
                    notice,
                    ..
                } => Some((*message_id, *attempt, *max_attempts, notice.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), cuts.len(), "{events:?}");
        for (i, (_, attempt, max, notice)) in retries.iter().enumerate() {
            assert_eq!(*attempt, i as u32 + 2);
            assert_eq!(*max, 3);
            assert_eq!(
                notice,
                &format!("the model's reply was cut — retrying ({attempt}/3)")
            );
        }
        // Replaying the events as a face does: deltas since the last restart of a message.
        let mut shown = String::new();
        for e in &events {
            match e {
                AgentEvent::TextDelta { delta, .. } => shown.push_str(delta),
                AgentEvent::ModelRetrying { .. } => shown.clear(),
                _ => {}
            }
        }
        assert_eq!(shown, "The question \"why\" has one answer.");
        let kept: Vec<String> = h
            .store()
            .transcript(session)
            .unwrap()
            .messages
            .into_iter()
            .filter(|m| m.role == Role::Assistant)
            .map(|m| m.text)
            .collect();
        assert_eq!(
            kept,
            vec!["The question \"why\" has one answer.".to_owned()]
        );
        no_pending_rows(&h, session);
    }
}
