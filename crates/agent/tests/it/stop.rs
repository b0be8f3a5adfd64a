//! I21: the operator's Stop pauses the session. A command still running finishes in the
//! background; its result waits as a note for the operator's next message; nothing resumes
//! the session by itself (no continuation, no reconnect turn, no idle nudge).

use std::time::Duration;

use nomos_agent::AgentConfig;
use nomos_mock_llm::Expect;
use nomos_store::{ContinuedVia, ExecStatus};

use crate::support::*;

async fn wait_status(h: &Harness, session: i64, status: ExecStatus) -> nomos_store::Execution {
    for _ in 0..200 {
        if let Some(e) = h.store().executions(session).unwrap().first()
            && e.status == status
        {
            return e.clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("execution never became {status}");
}

/// After the command finished in the background, no model request is made by itself: the
/// worker's tick, a reconnect and the idle sweep all leave the session alone.
async fn assert_nothing_resumes(h: &Harness, session: i64, requests: usize) {
    let row = wait_status(h, session, ExecStatus::Finished).await;
    assert!(row.background, "{row:?}");
    // Give the spawned continuation every chance to run.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.agent.continue_finished().await.unwrap(), 0, "worker tick");
    assert!(!h.agent.reconnect(session).await.unwrap(), "reconnect");
    assert_eq!(
        h.server.requests().len(),
        requests,
        "the model was called after the operator's Stop"
    );
    let row = h.store().get_execution(row.id).unwrap();
    assert!(row.continued_at_ms.is_none(), "{row:?}");
    assert!(
        h.agent.is_settled(session).unwrap(),
        "a paused session is settled"
    );
}

/// The operator speaks again: the result reaches the model as a note with that message.
async fn assert_next_message_delivers(h: &Harness, session: i64) {
    h.server.push(
        text("It printed late-result; the plan is paused where you stopped it.")
            .expect(Expect::AnyMessageContains("late-result".into())),
    );
    h.agent.send(Some(session), "what happened?").await.unwrap();
    let row = &h.store().executions(session).unwrap()[0];
    assert_eq!(row.continued_via, Some(ContinuedVia::Note), "{row:?}");
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i21_stop_during_a_run_pauses_and_the_result_waits_for_the_operator() {
    for sleep in ["0.5", "0.8"] {
        let config = AgentConfig {
            run_wait: Duration::from_secs(10),
            ..test_config()
        };
        let h = Harness::with_config(
            vec![
                plan(&[("Slow check", "host:local")]),
                run_step(&format!("sleep {sleep}; echo late-result"), 1),
            ],
            config,
        )
        .await;
        let session = h.agent.send(None, "slow check").await.unwrap();
        let agent = h.agent.clone();
        let turn = tokio::spawn(async move { agent.send(Some(session), "yes").await });
        wait_status(&h, session, ExecStatus::Running).await;
        assert!(h.agent.stop(session).unwrap(), "a turn was running");
        turn.await.unwrap().unwrap();
        let requests = h.server.requests().len();
        assert_eq!(requests, 2);
        assert_nothing_resumes(&h, session, requests).await;
        assert_next_message_delivers(&h, session).await;
    }
}

#[tokio::test]
async fn i21_stop_after_the_turn_left_a_command_running_pauses_too() {
    let config = AgentConfig {
        run_wait: Duration::from_millis(100),
        ..test_config()
    };
    let h = Harness::with_config(
        vec![
            plan(&[("Slow check", "host:local")]),
            run_step("sleep 0.6; echo late-result", 1),
            text("It continues in the background."),
        ],
        config,
    )
    .await;
    let session = h.agent.send(None, "slow check").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    // The turn ended; the command still runs. Stop has no turn to end, and still pauses.
    assert!(!h.agent.stop(session).unwrap());
    let requests = h.server.requests().len();
    assert_nothing_resumes(&h, session, requests).await;
    assert_next_message_delivers(&h, session).await;
}
