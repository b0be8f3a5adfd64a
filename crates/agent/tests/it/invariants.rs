//! Agent-level tests for the invariants the store enforces (I3, I4, I5, I16, I19): the agent
//! must surface each gate to the model and keep the record faithful.

use nomos_mock_llm::Expect;
use nomos_store::StepStatus;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn i3_a_reproposal_before_any_step_starts_replaces_the_pending_steps() {
    let h = Harness::new(vec![
        plan(&[("Check uptime", "host:local")]),
        plan(&[("Check uptime", "host:local"), ("Check disk", "host:local")]),
    ])
    .await;
    let session = h.agent.send(None, "check uptime").await.unwrap();
    h.agent
        .send(Some(session), "also check the disk, please")
        .await
        .unwrap();
    let (result, is_error) = h.result_of(session, "propose_plan");
    assert!(!is_error, "{result}");
    let current = h.store().current_plan(session).unwrap();
    let titles: Vec<&str> = current.steps.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(&titles[..2], ["Check uptime", "Check disk"]);
    let history = h.store().plan_history(session).unwrap();
    assert!(
        history
            .iter()
            .filter(|s| s.generation < current.generation)
            .all(|s| s.status == StepStatus::Replaced),
        "{history:?}"
    );
}

#[tokio::test]
async fn i4_a_plan_without_write_back_gets_one_appended_and_the_model_is_told() {
    let h = Harness::new(vec![plan(&[("Read the hostname", "host:local")])]).await;
    let session = h.agent.send(None, "hostname?").await.unwrap();
    let steps = h.store().current_plan(session).unwrap().steps;
    assert_eq!(steps.len(), 2);
    assert!(steps[1].write_back, "{steps:?}");
    let (result, _) = h.result_of(session, "propose_plan");
    assert!(result.contains("write-back step was appended"), "{result}");
}

#[tokio::test]
async fn i5_a_step_completed_out_of_order_is_refused() {
    let h = Harness::new(vec![
        plan(&[("First", "host:local"), ("Second", "host:local")]),
        call("update_plan_step", json!({"seq": 2, "status": "done"})),
        text("I will do step 1 first.").expect(Expect::LastToolResultContains("Refused".into())),
    ])
    .await;
    let session = h.agent.send(None, "two steps").await.unwrap();
    h.agent.send(Some(session), "go").await.unwrap();
    let steps = h.store().current_plan(session).unwrap().steps;
    assert_eq!(steps[1].status, StepStatus::Pending, "{steps:?}");
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i16_the_next_request_replays_calls_and_results_exactly() {
    let args = r#"{"target":"host:local","command":"echo replay-marker","reason":"r"}"#;
    let h = Harness::new(vec![
        plan(&[("Echo", "host:local")]),
        nomos_mock_llm::Step::new(nomos_mock_llm::Reply::ToolCalls {
            text: "Running it.".into(),
            reasoning: None,
            calls: vec![nomos_mock_llm::ScriptedCall::raw("run", args)],
        }),
        text("Done."),
    ])
    .await;
    let session = h.agent.send(None, "echo").await.unwrap();
    h.agent.send(Some(session), "ok").await.unwrap();
    let last = h.server.requests().pop().unwrap();
    let messages = last.body["messages"].as_array().unwrap().clone();
    let call = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .find(|c| c["function"]["name"] == "run")
        .expect("the run call is replayed");
    assert_eq!(
        call["function"]["arguments"], args,
        "arguments replayed byte for byte"
    );
    let result = messages.iter().find(|m| {
        m["role"] == "tool"
            && m["content"]
                .as_str()
                .unwrap_or("")
                .contains("replay-marker")
    });
    assert!(
        result.is_some(),
        "the tool result is replayed: {messages:?}"
    );
    // One assistant row per iteration, none empty.
    let assistants: Vec<_> = h
        .store()
        .transcript(session)
        .unwrap()
        .messages
        .into_iter()
        .filter(|m| m.role == nomos_store::Role::Assistant)
        .collect();
    assert_eq!(assistants.len(), 3, "{assistants:?}");
    assert_eq!(assistants[1].text, "Running it.");
    assert_eq!(assistants[1].tool_calls.len(), 1);
}

#[tokio::test]
async fn i19_list_targets_shows_when_each_target_was_last_audited() {
    let h = Harness::new(vec![
        call("list_targets", json!({})),
        call(
            "upsert_knowledge",
            json!({"kind": "investigation", "title": "Audit of this workstation", "body": "All fine.", "tags": ["audit"], "about": ["host:local"]}),
        ),
        call("list_targets", json!({})),
        text("Listed."),
    ])
    .await;
    let session = h.agent.send(None, "targets?").await.unwrap();
    let results: Vec<String> = h
        .tool_results(session)
        .into_iter()
        .filter(|(n, _, _)| n == "list_targets")
        .map(|(_, r, _)| r)
        .collect();
    assert!(
        results[0].contains("\"last_audited_at\": null"),
        "{}",
        results[0]
    );
    assert!(
        !results[1].contains("\"last_audited_at\": null"),
        "{}",
        results[1]
    );
    assert!(results[1].contains("host:local"));
}
