//! Every scripted fault, through real HTTP, for both providers: each ends in the right typed
//! error (with the real message) or, for faults the agent must handle itself (malformed
//! arguments, unknown tools, a 1 MB reply), in an exact pass-through.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_llm::{LlmError, StreamEvent, StreamLimits};
use nomos_mock_llm::{Reply, ScriptedCall, Step};
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::*;

/// (fault, expected error code, retryable, text the message must contain)
fn error_faults() -> Vec<(Step, &'static str, bool, &'static str)> {
    vec![
        (
            Step::new(Reply::Empty {
                finish_reason: None,
                reasoning: None,
            }),
            "llm.empty_reply",
            false,
            "empty reply (finish_reason: ",
        ),
        (
            Step::new(Reply::HttpError {
                status: 500,
                message: Some("database on fire".into()),
                error_type: None,
                code: None,
                retry_after: None,
            }),
            "llm.provider_error",
            true,
            "(HTTP 500) [",
        ),
        (
            Step::new(Reply::HttpError {
                status: 503,
                message: None,
                error_type: None,
                code: None,
                retry_after: None,
            }),
            "llm.provider_error",
            true,
            "Service Unavailable",
        ),
        (
            Step::new(Reply::RateLimited {
                retry_after_secs: 2.0,
                message: Some("slow down please".into()),
            }),
            "llm.rate_limited",
            true,
            "slow down please",
        ),
        (
            Step::new(Reply::HttpError {
                status: 400,
                message: Some("tools[0].name is invalid".into()),
                error_type: None,
                code: None,
                retry_after: None,
            }),
            "llm.bad_request",
            false,
            "tools[0].name is invalid",
        ),
        (
            Step::new(Reply::HttpError {
                status: 400,
                message: Some("This model's maximum context length is 8192 tokens".into()),
                error_type: None,
                code: None,
                retry_after: None,
            }),
            "llm.context_length",
            false,
            "maximum context length is 8192",
        ),
        (
            Step::new(Reply::HttpError {
                status: 400,
                message: Some("Your request was flagged by our content_filter".into()),
                error_type: None,
                code: None,
                retry_after: None,
            }),
            "llm.content_filter",
            false,
            "flagged",
        ),
        (
            Step::new(Reply::StreamCut {
                text: "Running ".into(),
                call: Some(ScriptedCall::new(
                    "run",
                    json!({"command": "systemctl restart nginx"}),
                )),
            }),
            "llm.stream_cut",
            true,
            "",
        ),
        (
            Step::new(Reply::StreamCut {
                text: "Half a sent".into(),
                call: None,
            }),
            "llm.stream_cut",
            true,
            "",
        ),
        (
            Step::new(Reply::StreamError {
                text: "Partial".into(),
                error_type: None,
                message: "upstream went away".into(),
            }),
            "llm.provider_error",
            true,
            "upstream went away",
        ),
    ]
}

#[tokio::test]
async fn each_fault_becomes_the_right_typed_error_for_both_providers() {
    for kind in KINDS {
        for (step, code, retryable, needle) in error_faults() {
            let label = format!("{kind:?} {:?}", step.reply);
            let server = serve([step]).await;
            let p = provider_for(kind, &server, test_limits());
            let (result, _) = run(p.as_ref(), &request("go")).await;
            let err = result.expect_err(&label);
            assert_eq!(err.code(), code, "{label}: {err:?}");
            assert_eq!(err.is_retryable(), retryable, "{label}");
            assert!(err.to_string().contains(needle), "{label}: {err}");
            assert!(!err.to_string().contains("unusable"), "{label}: {err}");
            server.shutdown().await;
        }
    }
}

#[tokio::test]
async fn rate_limit_carries_retry_after_from_the_header() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::RateLimited {
            retry_after_secs: 3.0,
            message: None,
        })])
        .await;
        let p = provider_for(kind, &server, test_limits());
        let err = run(p.as_ref(), &request("go")).await.0.unwrap_err();
        assert_eq!(err.retry_after(), Some(Duration::from_secs(3)), "{kind:?}");
        assert_eq!(err.status(), Some(429));
    }
}

#[tokio::test]
async fn a_cut_mid_tool_call_streams_the_partial_arguments_first() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::StreamCut {
            text: String::new(),
            call: Some(ScriptedCall::new(
                "run",
                json!({"command": "systemctl restart nginx"}),
            )),
        })
        .chunk_chars(4)])
        .await;
        let p = provider_for(kind, &server, test_limits());
        let (result, events) = run(p.as_ref(), &request("go")).await;
        assert!(
            matches!(result, Err(LlmError::StreamCut { .. })),
            "{kind:?} {result:?}"
        );
        let partial = events.args(0);
        assert!(
            !partial.is_empty() && r#"{"command":"systemctl restart nginx"}"#.starts_with(&partial),
            "{kind:?} {partial}"
        );
        assert!(
            !events
                .all()
                .iter()
                .any(|e| matches!(e, StreamEvent::Done { .. }))
        );
    }
}

#[tokio::test]
async fn malformed_tool_arguments_pass_through_exactly() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::MalformedToolArgs {
            name: "run".into(),
            arguments: r#"{"command": "ls -la /var/log"#.into(),
        })])
        .await;
        let p = provider_for(kind, &server, test_limits());
        let r = run(p.as_ref(), &request("go")).await.0.unwrap();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(
            r.tool_calls[0].arguments, r#"{"command": "ls -la /var/log"#,
            "{kind:?}"
        );
        assert!(r.tool_calls[0].parse_arguments().is_err());
    }
}

#[tokio::test]
async fn unknown_tool_names_pass_through() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::UnknownTool {
            name: "format_disk".into(),
            arguments: Some(json!({"dev": "/dev/sda"})),
        })])
        .await;
        let p = provider_for(kind, &server, test_limits());
        let r = run(p.as_ref(), &request("go")).await.0.unwrap();
        assert_eq!(r.tool_calls[0].name, "format_disk", "{kind:?}");
        assert_eq!(r.tool_calls[0].arguments, r#"{"dev":"/dev/sda"}"#);
    }
}

#[tokio::test]
async fn a_one_megabyte_reply_arrives_whole() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::Large { bytes: 1024 * 1024 })]).await;
        let p = provider_for(kind, &server, test_limits());
        let (r, events) = run(p.as_ref(), &request("go")).await;
        let r = r.unwrap();
        assert_eq!(r.text.len(), 1024 * 1024, "{kind:?}");
        assert_eq!(events.text().len(), 1024 * 1024);
    }
}

#[tokio::test]
async fn a_reply_over_the_size_cap_is_stopped() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::Large { bytes: 1024 * 1024 })]).await;
        let limits = StreamLimits {
            max_response_bytes: 256 * 1024,
            ..test_limits()
        };
        let p = provider_for(kind, &server, limits);
        let err = run(p.as_ref(), &request("go")).await.0.unwrap_err();
        assert_eq!(
            err,
            LlmError::ResponseTooLarge { limit: 256 * 1024 },
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn a_stream_that_never_ends_hits_the_idle_timeout() {
    for kind in KINDS {
        let server = serve([Step::new(Reply::Hang {
            text: "Working on".into(),
        })])
        .await;
        let idle = Duration::from_millis(300);
        let p = provider_for(
            kind,
            &server,
            StreamLimits {
                idle_timeout: idle,
                ..StreamLimits::default()
            },
        );
        let started = Instant::now();
        let (result, events) = run(p.as_ref(), &request("go")).await;
        assert_eq!(
            result.unwrap_err(),
            LlmError::IdleTimeout { idle },
            "{kind:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(events.text(), "Working on");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn slow_headers_hit_the_idle_timeout_too() {
    let server = serve([Step::text("late").delay_ms(5_000)]).await;
    let idle = Duration::from_millis(200);
    let p = provider_for(
        Kind::OpenAi,
        &server,
        StreamLimits {
            idle_timeout: idle,
            ..StreamLimits::default()
        },
    );
    let err = run(p.as_ref(), &request("go")).await.0.unwrap_err();
    assert_eq!(err, LlmError::IdleTimeout { idle });
    assert!(err.is_retryable());
}

#[tokio::test]
async fn keepalives_keep_a_slow_stream_alive() {
    // 6 pieces 150 ms apart with a 400 ms idle limit: fine, each piece resets the timer.
    let server = serve([Step::text("abcdef")
        .chunk_chars(1)
        .chunk_delay_ms(150)
        .keepalive()])
    .await;
    let p = provider_for(
        Kind::OpenAi,
        &server,
        StreamLimits {
            idle_timeout: Duration::from_millis(400),
            ..StreamLimits::default()
        },
    );
    assert_eq!(
        run(p.as_ref(), &request("go")).await.0.unwrap().text,
        "abcdef"
    );
}

#[tokio::test]
async fn connection_refused_is_a_retryable_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let p = nomos_llm::OpenAiProvider::new(
        nomos_llm::OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "m"),
        None,
    )
    .unwrap();
    let err = run(&p, &request("go")).await.0.unwrap_err();
    assert_eq!(err.code(), "llm.connect");
    assert!(err.is_retryable());
    assert!(err.to_string().to_lowercase().contains("refused"), "{err}");
}

#[tokio::test]
async fn connection_reset_before_a_response_is_a_retryable_connect_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        // Read the request, then close without answering.
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = tokio::io::AsyncReadExt::read(&mut sock, &mut buf).await;
        let _ = sock.shutdown().await;
    });
    let p = nomos_llm::OpenAiProvider::new(
        nomos_llm::OpenAiConfig::new(format!("http://{addr}/v1"), "m"),
        None,
    )
    .unwrap();
    let err = run(&p, &request("go")).await.0.unwrap_err();
    assert_eq!(err.code(), "llm.connect", "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn garbage_in_the_stream_is_a_protocol_error_quoting_it() {
    let server = serve([Step::new(Reply::Raw {
        status: 200,
        headers: vec![],
        body: "data: {\"choices\": [oops\n\n".into(),
        body_file: None,
        chunk_bytes: None,
    })])
    .await;
    let p = provider_for(Kind::OpenAi, &server, test_limits());
    let err = run(p.as_ref(), &request("go")).await.0.unwrap_err();
    assert_eq!(err.code(), "llm.protocol");
    assert!(err.to_string().contains("[oops"), "{err}");
}

#[tokio::test]
async fn a_clean_eof_without_end_marker_is_a_cut() {
    // Text then a clean end of body: no [DONE], no finish_reason.
    let server = serve([Step::new(Reply::Raw {
        status: 200,
        headers: vec![],
        body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n".into(),
        body_file: None,
        chunk_bytes: None,
    })])
    .await;
    let p = provider_for(Kind::OpenAi, &server, test_limits());
    let err = run(p.as_ref(), &request("go")).await.0.unwrap_err();
    assert_eq!(err.code(), "llm.stream_cut");
    assert!(err.to_string().contains("3 chars of text"), "{err}");
}

#[test]
fn providers_are_object_safe() {
    fn take(_: Arc<dyn nomos_llm::Provider>) {}
    let _ = take;
}

#[tokio::test]
async fn a_whole_json_reply_to_a_streaming_request_is_still_understood() {
    // Some proxies ignore "stream": true and answer with one chat.completion / message.
    let openai = r#"{"id":"c9","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_a","type":"function","function":{"name":"run","arguments":"{\"command\":\"ls\"}"}},{"id":"call_b","type":"function","function":{"name":"run","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}"#;
    let anthropic = r#"{"id":"msg_9","type":"message","role":"assistant","model":"claude","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_a","name":"run","input":{"command":"ls"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":7}}"#;
    for (kind, body) in [(Kind::OpenAi, openai), (Kind::Anthropic, anthropic)] {
        let server = serve([Step::new(Reply::Raw {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            body_file: None,
            chunk_bytes: Some(16),
        })])
        .await;
        let p = provider_for(kind, &server, test_limits());
        let (r, events) = run(p.as_ref(), &request("go")).await;
        let r = r.unwrap();
        assert_eq!(r.text, "Checking.", "{kind:?}");
        assert_eq!(r.tool_calls[0].name, "run");
        assert_eq!(r.tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert_eq!(r.finish_reason, Some(nomos_llm::FinishReason::ToolCalls));
        assert_eq!(r.usage.as_ref().unwrap().total_tokens, 12);
        assert_events_match(&r, &events);
    }
}

#[tokio::test]
async fn a_vllm_style_error_chunk_is_an_error() {
    let server = serve([Step::new(Reply::Raw {
        status: 200,
        headers: vec![],
        body: "data: {\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens.\",\"type\":\"BadRequestError\",\"code\":400}\n\n".into(),
        body_file: None,
        chunk_bytes: None,
    })])
    .await;
    let p = provider_for(Kind::OpenAi, &server, test_limits());
    let err = run(p.as_ref(), &request("go")).await.0.unwrap_err();
    assert_eq!(err.code(), "llm.context_length", "{err:?}");
    assert!(err.to_string().contains("4096 tokens"));
}
