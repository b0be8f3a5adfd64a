//! The OpenAI-compatible client against the scripted server: streaming, tool calls,
//! request encoding, cancellation, idle timeout.

use std::time::{Duration, Instant};

use nomos_llm::{
    ChannelSink, ChatRequest, FinishReason, LlmError, Message, Provider, StreamEvent, StreamLimits,
    ToolCall,
};
use nomos_mock_llm::{Expect, Reply, ScriptedCall, Step};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

#[tokio::test]
async fn text_reply_streams_in_pieces() {
    let server =
        serve([Step::text("Checking the fleet now. All 12 hosts answered.").chunk_chars(5)]).await;
    let p = openai_for(&server, test_limits());
    let (r, events) = run(&p, &request("status?")).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Checking the fleet now. All 12 hosts answered.");
    assert_eq!(r.finish_reason, Some(FinishReason::Stop));
    assert!(r.usage.as_ref().unwrap().completion_tokens > 0);
    let text_events = events
        .all()
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .count();
    assert_eq!(text_events, 10, "46 chars in pieces of 5");
    assert_events_match(&r, &events);
}

#[tokio::test]
async fn deltas_are_delivered_as_they_arrive() {
    // 10 pieces, 150 ms apart: the first delta must reach the sink long before the end.
    let server = serve([Step::text("0123456789").chunk_chars(1).chunk_delay_ms(150)]).await;
    let p = openai_for(&server, test_limits());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let call = tokio::spawn(async move {
        let mut sink = ChannelSink(tx);
        p.stream(&request("go"), &mut sink, &CancellationToken::new())
            .await
    });
    let first_text = loop {
        match rx.recv().await.unwrap() {
            StreamEvent::TextDelta(t) => break t,
            _ => continue,
        }
    };
    let first_at = started.elapsed();
    let r = call.await.unwrap().unwrap();
    let total = started.elapsed();
    assert_eq!(first_text, "0");
    assert_eq!(r.text, "0123456789");
    assert!(total >= Duration::from_millis(1500), "{total:?}");
    assert!(
        first_at + Duration::from_millis(900) < total,
        "first delta at {first_at:?}, stream ended at {total:?}"
    );
}

#[tokio::test]
async fn several_tool_calls_with_arguments_split_across_chunks() {
    let step = Step::new(Reply::ToolCalls {
        text: "Let me look.".into(),
        reasoning: Some("Two hosts, two commands.".into()),
        calls: vec![
            ScriptedCall::new("run", json!({"target": "web-1", "command": "uptime"})),
            ScriptedCall::new(
                "run",
                json!({"target": "db-1", "command": "df -h /var/lib/postgresql"}),
            ),
        ],
    })
    .chunk_chars(3);
    let server = serve([step]).await;
    let p = openai_for(&server, test_limits());
    let (r, events) = run(&p, &request("check disks")).await;
    let r = r.unwrap();
    assert_eq!(r.text, "Let me look.");
    assert_eq!(r.reasoning, "Two hosts, two commands.");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        r.tool_calls,
        vec![
            ToolCall {
                id: "call_mock_0_0".into(),
                name: "run".into(),
                arguments: r#"{"command":"uptime","target":"web-1"}"#.into()
            },
            ToolCall {
                id: "call_mock_0_1".into(),
                name: "run".into(),
                arguments: r#"{"command":"df -h /var/lib/postgresql","target":"db-1"}"#.into()
            },
        ]
    );
    assert!(
        events
            .all()
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallArgsDelta { .. }))
            .count()
            > 10
    );
    assert_events_match(&r, &events);
}

#[tokio::test]
async fn keepalive_comments_are_ignored() {
    let server = serve([Step::text("pong").keepalive()]).await;
    let p = openai_for(&server, test_limits());
    let (r, _) = run(&p, &request("ping")).await;
    assert_eq!(r.unwrap().text, "pong");
}

#[tokio::test]
async fn request_carries_system_tools_history_and_tool_results() {
    let server = serve([Step::text("done")
        .expect(Expect::SystemContains("You are Nomos.".into()))
        .expect(Expect::HasTool("run".into()))
        .expect(Expect::LastToolResultContains("Refused".into()))
        .expect(Expect::LastUserContains("update web-1".into()))
        .expect(Expect::HeaderContains {
            name: "authorization".into(),
            value: "Bearer sk-test".into(),
        })])
    .await;
    let p = openai_for(&server, test_limits());
    let req = ChatRequest {
        messages: vec![
            Message::user("update web-1"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "run".into(),
                        arguments: r#"{"command":"apt-get upgrade -y"}"#.into(),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "list_hosts".into(),
                        arguments: String::new(),
                    },
                ],
            },
            Message::tool_result("call_2", "list_hosts", "web-1"),
            Message::Tool {
                tool_call_id: "call_1".into(),
                name: "run".into(),
                content: "Refused: needs approval".into(),
                is_error: true,
            },
        ],
        temperature: Some(0.2),
        ..request("")
    };
    let r = p
        .stream(&req, &mut nomos_llm::NullSink, &CancellationToken::new())
        .await;
    assert_eq!(r.unwrap().text, "done");
    assert!(server.failures().is_empty(), "{:?}", server.failures());

    let body = &server.requests()[0].body;
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 1024);
    assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are Nomos."})
    );
    assert_eq!(body["messages"][2]["content"], serde_json::Value::Null);
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        r#"{"command":"apt-get upgrade -y"}"#
    );
    // An empty argument string goes back as "{}": several servers reject "".
    assert_eq!(
        body["messages"][2]["tool_calls"][1]["function"]["arguments"],
        "{}"
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "web-1", "name": "list_hosts"})
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "run");
}

#[tokio::test]
async fn request_model_overrides_the_configured_one() {
    let server = serve([Step::text("ok")]).await;
    let p = openai_for(&server, test_limits());
    let req = ChatRequest {
        model: Some("other-model".into()),
        ..request("hi")
    };
    let r = p
        .stream(&req, &mut nomos_llm::NullSink, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        r.model.as_deref(),
        Some("other-model"),
        "the server echoes the model"
    );
    assert_eq!(server.requests()[0].model(), Some("other-model"));
}

#[tokio::test]
async fn a_failed_expectation_is_an_error_with_the_reason_and_is_recorded() {
    let server =
        serve([Step::text("never sent").expect(Expect::LastToolResultContains("Refused".into()))])
            .await;
    let p = openai_for(&server, test_limits());
    let (r, _) = run(&p, &request("no tool results here")).await;
    let err = r.unwrap_err();
    assert_eq!(err.code(), "llm.bad_request");
    assert!(!err.is_retryable());
    assert!(
        err.to_string()
            .contains("expected the last tool result to contain \"Refused\""),
        "{err}"
    );
    let failures = server.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].request, 0);
    assert_eq!(failures[0].step, Some(0));
}

#[tokio::test]
async fn an_exhausted_script_is_a_visible_failure() {
    let server = serve([Step::text("one")]).await;
    let p = openai_for(&server, test_limits());
    run(&p, &request("1")).await.0.unwrap();
    let err = run(&p, &request("2")).await.0.unwrap_err();
    assert!(
        err.to_string()
            .contains("script is exhausted after 1 replies"),
        "{err}"
    );
    assert_eq!(server.failures().len(), 1);
}

#[tokio::test]
async fn replies_pushed_at_runtime_are_served_in_order() {
    let server = serve([]).await;
    server.push(Step::text("first"));
    server.push(Step::text("second"));
    let p = openai_for(&server, test_limits());
    assert_eq!(run(&p, &request("a")).await.0.unwrap().text, "first");
    assert_eq!(run(&p, &request("b")).await.0.unwrap().text, "second");
    assert_eq!(server.remaining(), 0);
    let seen: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.last_user_text().unwrap())
        .collect();
    assert_eq!(seen, ["a", "b"]);
}

#[tokio::test]
async fn cancellation_ends_a_stream_at_once() {
    let server = serve([Step::new(Reply::Hang {
        text: "partial".into(),
    })])
    .await;
    let p = openai_for(&server, StreamLimits::default());
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let events = Events::default();
    let mut sink = events.sink();
    let started = Instant::now();
    let err = p
        .stream(&request("go"), &mut sink, &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        events.text(),
        "partial",
        "what arrived before the stop was delivered"
    );
}

#[tokio::test]
async fn cancellation_while_waiting_for_headers() {
    let server = serve([Step::text("late").delay_ms(10_000)]).await;
    let p = openai_for(&server, StreamLimits::default());
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c2.cancel();
    });
    let started = Instant::now();
    let err = p
        .stream(&request("go"), &mut nomos_llm::NullSink, &cancel)
        .await
        .unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn reasoning_only_reply_is_an_empty_reply_with_its_finish_reason() {
    let server = serve([Step::new(Reply::Empty {
        finish_reason: Some("length".into()),
        reasoning: Some("Thinking about which host first...".into()),
    })])
    .await;
    let p = openai_for(&server, test_limits());
    let (r, events) = run(&p, &request("go")).await;
    assert_eq!(
        r.unwrap_err(),
        LlmError::EmptyReply {
            finish_reason: Some("length".into()),
            reasoning_chars: 34,
            usage: r_usage(&events),
        }
    );
}

fn r_usage(events: &Events) -> Option<nomos_llm::Usage> {
    events.all().into_iter().rev().find_map(|e| match e {
        StreamEvent::Usage(u) => Some(u),
        _ => None,
    })
}

#[tokio::test]
async fn refusal_is_kept_for_the_operator() {
    let body = concat!(
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't help \"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"with wiping disks.\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let server = serve([Step::new(Reply::Raw {
        status: 200,
        headers: vec![],
        body: body.into(),
        body_file: None,
        chunk_bytes: None,
    })])
    .await;
    let p = openai_for(&server, test_limits());
    let (r, events) = run(&p, &request("wipe")).await;
    assert_eq!(
        r.unwrap_err(),
        LlmError::Refused {
            refusal: "I can't help with wiping disks.".into()
        }
    );
    assert!(
        events
            .all()
            .contains(&StreamEvent::RefusalDelta("I can't help ".into()))
    );
}

#[tokio::test]
async fn an_answer_withheld_by_the_content_filter_says_so() {
    let server = serve([Step::new(Reply::Empty {
        finish_reason: Some("content_filter".into()),
        reasoning: None,
    })])
    .await;
    let p = openai_for(&server, test_limits());
    let err = run(&p, &request("x")).await.0.unwrap_err();
    assert_eq!(err.code(), "llm.content_filter");
    assert!(!err.is_retryable());
    assert!(err.to_string().contains("content_filter"), "{err}");
}

#[tokio::test]
async fn non_streaming_reply_shape_is_also_served() {
    // Plain HTTP clients (curl, a health check) get a whole JSON reply when stream=false.
    let server = serve([Step::tool_call("run", json!({"command": "ls"}))]).await;
    let resp = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        r#"{"command":"ls"}"#
    );
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
}
