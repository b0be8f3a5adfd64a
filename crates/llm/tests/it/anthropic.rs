//! The Anthropic client against the scripted server in Anthropic mode.

use nomos_llm::{ChatRequest, FinishReason, Message, Provider, StreamEvent, ToolCall};
use nomos_mock_llm::{Expect, Reply, ScriptedCall, Step};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

#[tokio::test]
async fn text_thinking_and_tool_calls_stream_and_assemble() {
    let step = Step::new(Reply::ToolCalls {
        text: "Checking both hosts.".into(),
        reasoning: Some("web-1 first, then db-1.".into()),
        calls: vec![
            ScriptedCall::new("run", json!({"command": "uptime"})),
            ScriptedCall::new("run", json!({"command": "df -h"})),
        ],
    })
    .chunk_chars(4)
    .keepalive();
    let server = serve([step]).await;
    let p = anthropic_for(&server, test_limits());
    let (r, events) = run(&p, &request("check")).await;
    let r = r.unwrap();
    assert_eq!(r.id.as_deref(), Some("msg_mock_0"));
    assert_eq!(r.text, "Checking both hosts.");
    assert_eq!(r.reasoning, "web-1 first, then db-1.");
    assert_eq!(r.reasoning_signature.as_deref(), Some("mock-signature-0"));
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.tool_calls,
        vec![
            ToolCall {
                id: "toolu_mock_0_0".into(),
                name: "run".into(),
                arguments: r#"{"command":"uptime"}"#.into()
            },
            ToolCall {
                id: "toolu_mock_0_1".into(),
                name: "run".into(),
                arguments: r#"{"command":"df -h"}"#.into()
            },
        ]
    );
    let u = r.usage.as_ref().unwrap();
    assert!(u.prompt_tokens > 1 && u.completion_tokens > 1, "{u:?}");
    assert_eq!(u.total_tokens, u.prompt_tokens + u.completion_tokens);
    assert_events_match(&r, &events);
    assert!(
        events
            .all()
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallArgsDelta { delta, .. } if delta == "{\"co"))
    );
}

#[tokio::test]
async fn plain_text_ends_turn() {
    let server = serve([Step::text("All services are up.")]).await;
    let p = anthropic_for(&server, test_limits());
    let (r, events) = run(&p, &request("status")).await;
    let r = r.unwrap();
    assert_eq!(r.text, "All services are up.");
    assert_eq!(r.finish_reason, Some(FinishReason::Stop));
    assert_eq!(r.native_finish_reason.as_deref(), Some("end_turn"));
    assert_events_match(&r, &events);
}

#[tokio::test]
async fn request_uses_the_messages_format() {
    let server = serve([Step::text("ok")
        .expect(Expect::SystemContains("You are Nomos.".into()))
        .expect(Expect::LastToolResultContains("Refused".into()))
        .expect(Expect::HasTool("run".into()))
        .expect(Expect::HeaderContains {
            name: "x-api-key".into(),
            value: "sk-ant-test".into(),
        })
        .expect(Expect::HeaderContains {
            name: "anthropic-version".into(),
            value: "2023-06-01".into(),
        })])
    .await;
    let p = anthropic_for(&server, test_limits());
    let req = ChatRequest {
        messages: vec![
            Message::user("update web-1"),
            Message::Assistant {
                content: "Running it.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "toolu_1".into(),
                        name: "run".into(),
                        arguments: r#"{"command":"apt-get upgrade"}"#.into(),
                    },
                    ToolCall {
                        id: "toolu_2".into(),
                        name: "run".into(),
                        arguments: r#"{"command": "ls"#.into(),
                    },
                ],
            },
            Message::tool_result("toolu_1", "run", "ok"),
            Message::Tool {
                tool_call_id: "toolu_2".into(),
                name: "run".into(),
                content: "Refused: bad JSON".into(),
                is_error: true,
            },
            Message::user("and then?"),
        ],
        max_tokens: None,
        ..request("")
    };
    p.stream(&req, &mut nomos_llm::NullSink, &CancellationToken::new())
        .await
        .unwrap();
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    let recorded = &server.requests()[0];
    assert_eq!(recorded.path, "/v1/messages");
    assert!(recorded.header("authorization").is_none(), "x-api-key only");
    let body = &recorded.body;
    assert_eq!(body["system"], "You are Nomos.");
    assert_eq!(body["max_tokens"], nomos_llm::DEFAULT_MAX_TOKENS);
    assert_eq!(body["tools"][0]["input_schema"]["required"][0], "command");
    let messages = body["messages"].as_array().unwrap();
    // user, assistant, then ONE user turn holding both tool results and the new text.
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "text", "text": "Running it."})
    );
    assert_eq!(
        messages[1]["content"][1]["input"],
        json!({"command": "apt-get upgrade"})
    );
    assert_eq!(
        messages[1]["content"][2]["input"],
        json!({"_unparsed_arguments": "{\"command\": \"ls"})
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"})
    );
    assert_eq!(messages[2]["content"][1]["is_error"], true);
    assert_eq!(
        messages[2]["content"][2],
        json!({"type": "text", "text": "and then?"})
    );
}

#[tokio::test]
async fn base_url_with_or_without_v1_reaches_messages() {
    let server = serve([Step::text("a"), Step::text("b")]).await;
    for base in [server.root_url(), server.base_url()] {
        let p = nomos_llm::AnthropicProvider::new(nomos_llm::AnthropicConfig::new(base, "m"), None)
            .unwrap();
        p.stream(
            &request("x"),
            &mut nomos_llm::NullSink,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    }
    let paths: Vec<_> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/messages", "/v1/messages"]);
}
