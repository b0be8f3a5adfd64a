//! The 27 recorded provider responses in `tests/fixtures/` (provenance in INDEX.md), served
//! byte-for-byte over HTTP — whole, and again in 7-byte pieces that split lines, JSON and
//! UTF-8 — to the matching client. Expected values are INDEX.md's.

use std::sync::Arc;

use nomos_llm::{
    ChatResponse, FinishReason, LlmError, OpenAiProvider, Provider, StreamLimits, Usage,
};
use nomos_mock_llm::{MockServer, Reply, Step};

use crate::support::*;

/// Both deliveries of a fixture must give the same outcome; returns it with the events of
/// the whole-body run.
async fn replay(kind: Kind, name: &str) -> (Result<ChatResponse, LlmError>, Events) {
    let mut outcomes = Vec::new();
    for chunking in [None, Some(7)] {
        let server = serve_fixture(name, chunking).await;
        let provider = provider_for(kind, &server, StreamLimits::default());
        let (result, events) = run(provider.as_ref(), &request("hi")).await;
        assert_eq!(server.request_count(), 1);
        outcomes.push((result, events));
        server.shutdown().await;
    }
    let (second, _) = outcomes.pop().unwrap();
    let (first, events) = outcomes.pop().unwrap();
    assert_eq!(
        first, second,
        "{name}: chunked delivery differs from whole delivery"
    );
    (first, events)
}

async fn replay_ok(kind: Kind, name: &str) -> ChatResponse {
    let (result, events) = replay(kind, name).await;
    let resp = result.unwrap_or_else(|e| panic!("{name}: {e} ({e:?})"));
    assert_events_match(&resp, &events);
    resp
}

fn calls(resp: &ChatResponse) -> Vec<(&str, &str, &str)> {
    resp.tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect()
}

fn usage(p: u64, c: u64, t: u64) -> Usage {
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: t,
        ..Usage::default()
    }
}

fn tokens(resp: &ChatResponse) -> (u64, u64, u64) {
    let u = resp.usage.as_ref().expect("usage");
    (u.prompt_tokens, u.completion_tokens, u.total_tokens)
}

#[tokio::test]
async fn r01_openai_parallel_tool_calls_usage() {
    let r = replay_ok(Kind::OpenAi, "01-openai-parallel-tool-calls-usage.sse").await;
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [
            (
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
            ),
            (
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#
            ),
        ]
    );
    assert_eq!(tokens(&r), (149, 60, 209));
    assert_eq!(r.usage.as_ref().unwrap().reasoning_tokens, Some(0));
}

#[tokio::test]
async fn r02_openai_parallel_tool_calls_obfuscation() {
    let r = replay_ok(
        Kind::OpenAi,
        "02-openai-parallel-tool-calls-obfuscation.sse",
    )
    .await;
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [
            (
                "call_ehIWdjL1abZk1h8FWGLQ0Hie",
                "add",
                r#"{"a": 2, "b": 3}"#
            ),
            (
                "call_fBSgA47J5VeONggizTIvl7AH",
                "multiply",
                r#"{"a": 2, "b": 3}"#
            ),
        ]
    );
    assert_eq!(tokens(&r), (106, 50, 156));
    assert_eq!(r.usage.as_ref().unwrap().cached_prompt_tokens, Some(0));
    assert_eq!(r.usage.as_ref().unwrap().reasoning_tokens, Some(0));
}

#[tokio::test]
async fn r03_openai_gpt5_tool_call_reasoning_usage() {
    let r = replay_ok(Kind::OpenAi, "03-openai-gpt5-tool-call-reasoning-usage.sse").await;
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [(
            "call_eKRQDHJdZUhEXo1K1cobzFrl",
            "weather",
            r#"{"location":"Florence, Italy"}"#
        )]
    );
    assert_eq!(tokens(&r), (145, 89, 234));
    assert_eq!(r.usage.as_ref().unwrap().reasoning_tokens, Some(64));
    assert_eq!(r.reasoning, "");
}

#[tokio::test]
async fn r04_openai_single_tool_call_strict() {
    let r = replay_ok(Kind::OpenAi, "04-openai-single-tool-call-strict.sse").await;
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [(
            "call_CTf1nWJLqSeRgDqaCG27xZ74",
            "get_weather",
            r#"{"city":"San Francisco","state":"CA"}"#
        )]
    );
    assert_eq!(tokens(&r), (48, 19, 67));
}

#[tokio::test]
async fn r05_openai_midstream_error_keeps_partial_text_and_message() {
    let (result, events) = replay(Kind::OpenAi, "05-openai-midstream-error.sse").await;
    assert_eq!(events.text(), "The question \"");
    let err = result.unwrap_err();
    assert_eq!(
        err,
        LlmError::Server {
            status: None,
            error_type: Some("server_error".into()),
            message: "The server had an error while processing your request. Sorry about that!"
                .into(),
            retry_after: None,
        }
    );
    assert!(err.is_retryable());
    assert!(err.to_string().contains("Sorry about that!"), "{err}");
}

#[tokio::test]
async fn r06_openrouter_claude_tool_call_keepalive() {
    let r = replay_ok(Kind::OpenAi, "06-openrouter-claude-tool-call-keepalive.sse").await;
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        calls(&r),
        [(
            "toolu_bdrk_01RiGtttFSGiqX2bR4Uoz434",
            "weather",
            r#"{"location": "Florence, Italy"}"#
        )]
    );
    assert_eq!(tokens(&r), (577, 54, 631));
    assert_eq!(r.usage.as_ref().unwrap().cost, Some(0.000847));
    assert_eq!(r.upstream.as_deref(), Some("Amazon Bedrock"));
}

#[tokio::test]
async fn r07_openrouter_claude_reasoning_details_tool_call() {
    let r = replay_ok(
        Kind::OpenAi,
        "07-openrouter-claude-reasoning-details-tool-call.sse",
    )
    .await;
    let expected_reasoning = "The user is asking for weather information in Florence, Italy. I have access to a weather function that takes a location parameter. I should call the weather function with \"Florence, Italy\" or \"Florence\" as the location.\n\nLet me call the weather function with the location being Florence, Italy (or I could try just \"Florence\" - but \"Florence, Italy\" would be more specific and accurate).";
    assert_eq!(r.reasoning, expected_reasoning);
    assert_eq!(r.reasoning.chars().count(), 388);
    assert!(
        r.reasoning_signature
            .as_deref()
            .unwrap()
            .starts_with("Eq0ECkgIDRABGAIqQM/z")
    );
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        calls(&r),
        [(
            "toolu_bdrk_01N8hD5cYDw4WfvnjKXAkA2W",
            "weather",
            r#"{"location": "Florence, Italy"}"#
        )]
    );
    assert_eq!(tokens(&r), (607, 143, 750));
    assert_eq!(r.usage.as_ref().unwrap().reasoning_tokens, Some(99));
    assert_eq!(r.usage.as_ref().unwrap().cost, Some(0.001322));
}

#[tokio::test]
async fn r08_openrouter_gemini_parallel_tool_calls() {
    let r = replay_ok(Kind::OpenAi, "08-openrouter-gemini-parallel-tool-calls.sse").await;
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.native_finish_reason.as_deref(), Some("STOP"));
    assert_eq!(
        calls(&r),
        [
            ("tool_add_kZJN6iFNozVOBiXBMA2Y", "add", r#"{"a":2,"b":3}"#),
            (
                "tool_multiply_7Pq02EcannPbKks8kXlA",
                "multiply",
                r#"{"a":2,"b":3}"#
            ),
        ]
    );
    assert_eq!(tokens(&r), (157, 32, 189));
    assert_eq!(r.usage.as_ref().unwrap().cost, Some(0.00008725));
}

#[tokio::test]
async fn r09_openrouter_kimi_reasoning_tool_call() {
    let r = replay_ok(Kind::OpenAi, "09-openrouter-kimi-reasoning-tool-call.sse").await;
    let expected = " The user is asking for the weather in Florence, Italy. I have a `weather` function that takes a `location` parameter which is the city name. I should call this function with \"Florence\" or \"Florence,Italy\" as the location. Let me use the location provided by the user.";
    assert_eq!(r.reasoning, expected);
    assert_eq!(r.reasoning.chars().count(), 268);
    assert_eq!(r.text, "");
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        calls(&r),
        [(
            "functions.weather:0",
            "weather",
            r#"{"location": "Florence,Italy"}"#
        )]
    );
    assert_eq!(tokens(&r), (69, 87, 156));
    assert_eq!(r.usage.as_ref().unwrap().reasoning_tokens, Some(66));
}

#[tokio::test]
async fn r10_openrouter_grok_parallel_tools_midstream_keepalive() {
    let r = replay_ok(
        Kind::OpenAi,
        "10-openrouter-grok-parallel-tools-midstream-keepalive.sse",
    )
    .await;
    assert_eq!(
        r.reasoning,
        "The user says: \"Add and multiply the number 2 and 3\". I am a helpful assistant and must always use both add and multiply at the same time. I have tools for add and multiply.\n"
    );
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.native_finish_reason.as_deref(), Some("completed"));
    assert_eq!(
        calls(&r),
        [
            ("call_67055809", "add", r#"{"a":2,"b":3}"#),
            ("call_54693838", "multiply", r#"{"a":2,"b":3}"#),
        ]
    );
    let u = r.usage.as_ref().unwrap();
    assert_eq!(tokens(&r), (441, 267, 708));
    assert_eq!(u.cached_prompt_tokens, Some(153));
    assert_eq!(u.reasoning_tokens, Some(199));
    assert_eq!(u.cost, Some(0.00019875));
}

#[tokio::test]
async fn r11_openrouter_docs_midstream_error() {
    let (result, events) = replay(Kind::OpenAi, "11-openrouter-docs-midstream-error.sse").await;
    assert_eq!(events.text(), "");
    let err = result.unwrap_err();
    assert_eq!(
        err,
        LlmError::Server {
            status: None,
            error_type: Some("server_error".into()),
            message: "Provider disconnected".into(),
            retry_after: None,
        }
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn r12_llamacpp_gptoss_tool_call_timings() {
    let r = replay_ok(Kind::OpenAi, "12-llamacpp-gptoss-tool-call-timings.sse").await;
    assert_eq!(
        r.reasoning,
        "User wants weather in Florence, Italy. We can use the weather function."
    );
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [(
            "g2KOIWzn722hzEaZQmNVP4roUPEiYafL",
            "weather",
            r#"{"location":"Florence, Italy"}"#
        )]
    );
    assert_eq!(tokens(&r), (139, 41, 180));
    let t = r.timings.as_ref().unwrap();
    assert_eq!(t["cache_n"], 138);
    assert_eq!(t["prompt_n"], 1);
    assert_eq!(t["prompt_ms"], 8.691);
    assert_eq!(t["predicted_n"], 41);
    assert_eq!(t["predicted_ms"], 339.279);
    assert_eq!(t["predicted_per_second"], 120.84449671214546);
}

#[tokio::test]
async fn r13_ollama_parallel_tool_calls_whole_chunk() {
    let r = replay_ok(
        Kind::OpenAi,
        "13-ollama-parallel-tool-calls-whole-chunk.sse",
    )
    .await;
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [
            ("call_wteop8bt", "run_command", r#"{"command":"ls"}"#),
            ("call_rk2xye1l", "run_command", r#"{"command":"ls -l"}"#),
        ]
    );
    assert_eq!(r.usage, None);
}

#[tokio::test]
async fn r14_vllm_tool_call_continuous_usage_not_duplicated() {
    let r = replay_ok(Kind::OpenAi, "14-vllm-tool-call-continuous-usage.sse").await;
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [(
            "chatcmpl-tool-b3b307239370432d9910d4b79b4dbbaa",
            "searchGoogle",
            r#"{"query": "latest news on ai"}"#
        )]
    );
    assert_eq!(r.usage, Some(usage(226, 20, 246)));
}

#[tokio::test]
async fn r15_copilot_claude_tool_index1_empty_args() {
    let r = replay_ok(Kind::OpenAi, "15-copilot-claude-tool-index1-empty-args.sse").await;
    assert_eq!(r.text, "Now listing your Coder workspaces:");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [(
            "toolu_vrtx_01DbFqUgk6aAtJ4nDBqzFWDF",
            "bmcp_coder_coder_list_workspaces",
            ""
        )]
    );
    assert_eq!(
        r.tool_calls[0].parse_arguments().unwrap(),
        serde_json::json!({})
    );
    assert_eq!(tokens(&r), (25939, 58, 25997));
    assert_eq!(r.usage.as_ref().unwrap().cached_prompt_tokens, Some(25429));
}

#[tokio::test]
async fn r16_mistral_tool_call_no_index() {
    let r = replay_ok(Kind::OpenAi, "16-mistral-tool-call-no-index.sse").await;
    assert_eq!(r.text, "");
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(
        calls(&r),
        [("gSIMJiOkT", "weather", r#"{"location": "San Francisco"}"#)]
    );
    assert_eq!(r.usage, Some(usage(124, 22, 146)));
}

#[tokio::test]
async fn r17_groq_tool_call_x_groq_usage() {
    let r = replay_ok(Kind::OpenAi, "17-groq-tool-call-x-groq-usage.sse").await;
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(calls(&r), [("tk85n1k4m", "weather", "{}")]);
    assert_eq!(tokens(&r), (210, 15, 225));
}

#[tokio::test]
async fn r18_anthropic_tool_use_sdk_fixture() {
    let r = replay_ok(Kind::Anthropic, "18-anthropic-tool-use-sdk-fixture.sse").await;
    assert_eq!(r.id.as_deref(), Some("msg_019Q1hrJbZG26Fb9BQhrkHEr"));
    assert_eq!(r.model.as_deref(), Some("claude-sonnet-4-20250514"));
    assert_eq!(r.text, "I'll check the current weather in Paris for you.");
    assert_eq!(
        calls(&r),
        [(
            "toolu_01NRLabsLyVHZPKxbKvkfSMn",
            "get_weather",
            r#"{"location": "Paris"}"#
        )]
    );
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.usage,
        Some(Usage {
            cached_prompt_tokens: Some(0),
            cache_creation_tokens: Some(0),
            ..usage(377, 65, 442)
        })
    );
}

#[tokio::test]
async fn r19_anthropic_docs_tool_use_example() {
    let r = replay_ok(Kind::Anthropic, "19-anthropic-docs-tool-use-example.sse").await;
    assert_eq!(r.id.as_deref(), Some("msg_014p7gG3wDgGV9EUtLvnow3U"));
    assert_eq!(
        r.text,
        "Okay, let's check the weather for San Francisco, CA:"
    );
    assert_eq!(
        calls(&r),
        [(
            "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "get_weather",
            r#"{"location": "San Francisco, CA", "unit": "fahrenheit"}"#
        )]
    );
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(tokens(&r), (472, 89, 561));
}

#[tokio::test]
async fn r20_anthropic_parallel_tool_use_padded_json() {
    let r = replay_ok(
        Kind::Anthropic,
        "20-anthropic-parallel-tool-use-padded-json.sse",
    )
    .await;
    assert_eq!(r.id.as_deref(), Some("msg_01PSvJdjd5keNSD63VHjYzex"));
    assert_eq!(r.text, "I'll add and multiply the numbers 2 and 3 for you.");
    assert_eq!(
        calls(&r),
        [
            (
                "toolu_01UYxUYC2zRPY8wiutnF48eP",
                "add",
                r#"{"a": 2, "b": 3}"#
            ),
            (
                "toolu_01VaRx1jpWCvPhi7L4kywAcd",
                "multiply",
                r#"{"a": 2, "b": 3}"#
            ),
        ]
    );
    assert_eq!(r.native_finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(tokens(&r), (502, 137, 639));
}

#[tokio::test]
async fn r21_anthropic_midstream_error() {
    let (result, events) = replay(Kind::Anthropic, "21-anthropic-midstream-error.sse").await;
    assert_eq!(events.text(), "");
    let err = result.unwrap_err();
    assert_eq!(
        err,
        LlmError::Server {
            status: None,
            error_type: Some("api_error".into()),
            message: "Overloaded".into(),
            retry_after: None,
        }
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn r22_anthropic_docs_overloaded_error_event() {
    let (result, _) = replay(
        Kind::Anthropic,
        "22-anthropic-docs-overloaded-error-event.sse",
    )
    .await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, LlmError::Server { error_type: Some(t), message, .. } if t == "overloaded_error" && message == "Overloaded"),
        "{err:?}"
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn r23_anthropic_overloaded_error_event_padded() {
    let (result, _) = replay(
        Kind::Anthropic,
        "23-anthropic-overloaded-error-event-padded.sse",
    )
    .await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, LlmError::Server { error_type: Some(t), message, .. } if t == "overloaded_error" && message == "Overloaded"),
        "{err:?}"
    );
}

/// Serves a recorded non-stream error response.
async fn serve_error(status: u16, headers: Vec<(String, String)>, body: String) -> MockServer {
    serve([Step::new(Reply::Raw {
        status,
        headers,
        body,
        body_file: None,
        chunk_bytes: None,
    })])
    .await
}

#[tokio::test]
async fn r24_openai_429_rate_limit_body() {
    let body = std::fs::read_to_string(fixture("24-openai-429-rate-limit-body.json")).unwrap();
    let server = serve_error(
        429,
        vec![("content-type".into(), "application/json".into())],
        body,
    )
    .await;
    let p = OpenAiProvider::new(
        nomos_llm::OpenAiConfig::new(server.base_url(), "gpt-4-turbo-preview"),
        Some(Arc::new(nomos_llm::StaticToken::new("sk"))),
    )
    .unwrap();
    let (result, _) = run(&p, &request("hi")).await;
    let err = result.unwrap_err();
    match &err {
        LlmError::RateLimited {
            status,
            message,
            retry_after,
        } => {
            assert_eq!(*status, Some(429));
            assert_eq!(
                message,
                "Rate limit reached for gpt-4-turbo-preview in organization org-xxx on tokens per min (TPM): Limit 300000, Used 286751, Requested 16144. Please try again in 579ms. Visit https://platform.openai.com/account/rate-limits to learn more."
            );
            // No header was recorded; the wait comes from the message.
            assert_eq!(*retry_after, Some(std::time::Duration::from_millis(579)));
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert!(err.is_retryable());
    assert_eq!(err.code(), "llm.rate_limited");
}

#[tokio::test]
async fn r25_openai_400_context_length() {
    let (status, headers, body) = parse_http_file("25-openai-400-context-length.http");
    assert_eq!(body.len(), 281, "body is served byte-for-byte");
    let server = serve_error(status, headers, body).await;
    let p = provider_for(Kind::OpenAi, &server, StreamLimits::default());
    let (result, _) = run(p.as_ref(), &request("hi")).await;
    let err = result.unwrap_err();
    assert_eq!(
        err,
        LlmError::ContextLength {
            status: Some(400),
            message: "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 3148588 tokens. Please reduce the length of the messages.".into(),
        }
    );
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn r26_anthropic_400_invalid_request() {
    let (status, headers, body) = parse_http_file("26-anthropic-400-invalid-request.http");
    assert_eq!(body.len(), 164);
    let server = serve_error(status, headers, body).await;
    let p = provider_for(Kind::Anthropic, &server, StreamLimits::default());
    let (result, _) = run(p.as_ref(), &request("hi")).await;
    let err = result.unwrap_err();
    assert_eq!(
        err,
        LlmError::ContextLength {
            status: Some(400),
            message: "prompt is too long: 205429 tokens > 200000 maximum".into(),
        }
    );
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn r27_anthropic_529_overloaded() {
    let (status, headers, body) = parse_http_file("27-anthropic-529-overloaded.http");
    assert_eq!(status, 529);
    assert_eq!(body.len(), 75);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "x-should-retry" && v == "true")
    );
    let server = serve_error(status, headers, body).await;
    let p = provider_for(Kind::Anthropic, &server, StreamLimits::default());
    let (result, _) = run(p.as_ref(), &request("hi")).await;
    let err = result.unwrap_err();
    assert_eq!(
        err,
        LlmError::Server {
            status: Some(529),
            error_type: Some("overloaded_error".into()),
            message: "Overloaded".into(),
            retry_after: None,
        }
    );
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        "model provider error (HTTP 529) [overloaded_error]: Overloaded"
    );
}

#[test]
fn every_fixture_is_covered_and_unchanged() {
    use sha2::{Digest, Sha256};
    // sha256 prefixes from INDEX.md: a line-ending conversion or an edit fails here.
    let hashes = [
        (
            "01-openai-parallel-tool-calls-usage.sse",
            "f82268f2fefd5cfb",
        ),
        (
            "02-openai-parallel-tool-calls-obfuscation.sse",
            "f61d3aaaa6eaede4",
        ),
        (
            "03-openai-gpt5-tool-call-reasoning-usage.sse",
            "be5836472f13adf9",
        ),
        ("04-openai-single-tool-call-strict.sse", "a247c49c5fcd492b"),
        ("05-openai-midstream-error.sse", "e9b65a9442cca6ff"),
        (
            "06-openrouter-claude-tool-call-keepalive.sse",
            "5fb738b7252e8920",
        ),
        (
            "07-openrouter-claude-reasoning-details-tool-call.sse",
            "4277ba9eb58ec2d4",
        ),
        (
            "08-openrouter-gemini-parallel-tool-calls.sse",
            "fcff51c5f29130ef",
        ),
        (
            "09-openrouter-kimi-reasoning-tool-call.sse",
            "fbff3ac70f20d710",
        ),
        (
            "10-openrouter-grok-parallel-tools-midstream-keepalive.sse",
            "b0de13fd82c889d7",
        ),
        ("11-openrouter-docs-midstream-error.sse", "4148f9b72f48c55d"),
        (
            "12-llamacpp-gptoss-tool-call-timings.sse",
            "7f0678a8b6631377",
        ),
        (
            "13-ollama-parallel-tool-calls-whole-chunk.sse",
            "8bb567c4e0db9008",
        ),
        ("14-vllm-tool-call-continuous-usage.sse", "8c48a44ed9c8483b"),
        (
            "15-copilot-claude-tool-index1-empty-args.sse",
            "32b1d1573cdf6ab4",
        ),
        ("16-mistral-tool-call-no-index.sse", "d8ecd6e07561a8a9"),
        ("17-groq-tool-call-x-groq-usage.sse", "2c19cd9ac2805a80"),
        ("18-anthropic-tool-use-sdk-fixture.sse", "8ca137ad5a4ca1ed"),
        ("19-anthropic-docs-tool-use-example.sse", "3f53983a82d6e6be"),
        (
            "20-anthropic-parallel-tool-use-padded-json.sse",
            "36d6ac6326510013",
        ),
        ("21-anthropic-midstream-error.sse", "a7ec02e881400494"),
        (
            "22-anthropic-docs-overloaded-error-event.sse",
            "ac081eae25cf057f",
        ),
        (
            "23-anthropic-overloaded-error-event-padded.sse",
            "35b1346f6b62b88e",
        ),
        ("24-openai-429-rate-limit-body.json", "62a70d8b9f8b2d67"),
        ("25-openai-400-context-length.http", "cc11fe1829bbed1b"),
        ("26-anthropic-400-invalid-request.http", "f5a9267d17298c55"),
        ("27-anthropic-529-overloaded.http", "d5d451808d991ca4"),
    ];
    for (name, prefix) in hashes {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let hex: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(
            hex.starts_with(prefix),
            "{name}: sha256 {hex} does not start with {prefix}"
        );
    }
    let on_disk = std::fs::read_dir(fixture(""))
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            n.to_string_lossy().chars().next().unwrap().is_ascii_digit()
        })
        .count();
    assert_eq!(on_disk, hashes.len(), "a fixture without a test");
}

#[allow(dead_code)]
fn _provider_is_object_safe(p: Arc<dyn Provider>) -> Arc<dyn Provider> {
    p
}
