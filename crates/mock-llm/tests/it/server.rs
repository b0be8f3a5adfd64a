//! The server seen by a plain HTTP client: exact SSE output, faults, checks, recording.

use std::time::Duration;

use nomos_mock_llm::{Expect, Format, MockServer, Reply, Script, ScriptedCall, Step};
use serde_json::{Value, json};

async fn post(url: String, body: Value) -> (u16, Vec<(String, String)>, String) {
    let resp = reqwest::Client::new()
        .post(url)
        .header("authorization", "Bearer k1")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
        .collect();
    (status, headers, resp.text().await.unwrap())
}

fn chat(stream: bool) -> Value {
    json!({"model": "m1", "stream": stream, "messages": [
        {"role": "system", "content": "You are Nomos."},
        {"role": "user", "content": "hello"}]})
}

/// The `data:` payloads of an SSE body.
fn data_lines(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn openai_text_stream_has_the_real_shape() {
    let server = MockServer::start(Script::new([Step::text("Hello there").chunk_chars(5)]))
        .await
        .unwrap();
    let (status, headers, body) = post(
        format!("{}/chat/completions", server.base_url()),
        chat(true),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "text/event-stream")
    );
    let data = data_lines(&body);
    assert_eq!(data.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Hello there");
    assert_eq!(
        chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
        "stop"
    );
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert!(
        chunks.iter().all(|c| c["model"] == "m1"),
        "the request's model is echoed"
    );
}

#[tokio::test]
async fn anthropic_tool_use_stream_has_the_real_shape() {
    let server = MockServer::start(Script::new([Step::tool_call(
        "run",
        json!({"command": "ls -l"}),
    )
    .chunk_chars(4)]))
    .await
    .unwrap();
    let (status, _, body) = post(format!("{}/v1/messages", server.root_url()), chat(true)).await;
    assert_eq!(status, 200);
    let events: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(
        events,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let data: Vec<Value> = data_lines(&body)
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(data[2]["content_block"]["name"], "run");
    let args: String = data
        .iter()
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(args, r#"{"command":"ls -l"}"#);
    assert_eq!(data[9]["delta"]["stop_reason"], "tool_use");
    assert_eq!(server.requests()[0].format, Format::Anthropic);
}

#[tokio::test]
async fn http_errors_carry_status_body_and_retry_after() {
    let server = MockServer::start(Script::new([
        Step::new(Reply::RateLimited {
            retry_after_secs: 0.5,
            message: None,
        }),
        Step::new(Reply::HttpError {
            status: 529,
            message: None,
            error_type: None,
            code: None,
            retry_after: Some("7".into()),
        }),
    ]))
    .await
    .unwrap();
    let (status, headers, body) = post(
        format!("{}/chat/completions", server.base_url()),
        chat(true),
    )
    .await;
    assert_eq!(status, 429);
    assert!(headers.contains(&("retry-after".into(), "0.5".into())));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    let (status, headers, body) =
        post(format!("{}/v1/messages", server.root_url()), chat(true)).await;
    assert_eq!(status, 529);
    assert!(headers.contains(&("retry-after".into(), "7".into())));
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
}

#[tokio::test]
async fn a_cut_stream_is_a_truncated_body() {
    let server = MockServer::start(Script::new([Step::new(Reply::StreamCut {
        text: "abc".into(),
        call: Some(ScriptedCall::new("run", json!({"command": "0123456789"}))),
    })]))
    .await
    .unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&chat(true))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.text().await.is_err(),
        "the body must end in a transport error"
    );
}

#[tokio::test]
async fn checks_failures_and_exhaustion_are_recorded_and_answered_400() {
    let server = MockServer::start(Script::new([
        Step::text("ok")
            .expect(Expect::LastUserContains("hello".into()))
            .expect(Expect::SystemContains("Nomos".into())),
        Step::text("never").expect(Expect::LastToolResultContains("Refused".into())),
    ]))
    .await
    .unwrap();
    let url = format!("{}/chat/completions", server.base_url());
    assert_eq!(post(url.clone(), chat(false)).await.0, 200);
    let (status, _, body) = post(url.clone(), chat(false)).await;
    assert_eq!(status, 400);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["type"], "mock_expectation_failed");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("there is no last tool result"),
        "{v}"
    );
    let (status, _, body) = post(url, chat(false)).await;
    assert_eq!(status, 400);
    assert!(body.contains("exhausted after 2 replies"));
    let failures = server.failures();
    assert_eq!(failures.len(), 2);
    assert_eq!((failures[0].request, failures[0].step), (1, Some(1)));
    assert_eq!((failures[1].request, failures[1].step), (2, None));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn fallback_serves_forever_without_failures() {
    let server = MockServer::start(Script {
        fallback: Some(Step::text("demo")),
        ..Script::default()
    })
    .await
    .unwrap();
    for _ in 0..3 {
        let (status, _, body) = post(
            format!("{}/chat/completions", server.base_url()),
            chat(false),
        )
        .await;
        assert_eq!(status, 200);
        assert!(body.contains("\"demo\""));
    }
    assert!(server.failures().is_empty());
}

#[tokio::test]
async fn requests_are_recorded_with_headers_and_body() {
    let server = MockServer::start(Script::new([Step::text("a")]))
        .await
        .unwrap();
    post(
        format!("{}/chat/completions", server.base_url()),
        chat(true),
    )
    .await;
    let r = &server.requests()[0];
    assert_eq!(r.seq, 0);
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("Authorization"), Some("Bearer k1"));
    assert_eq!(r.model(), Some("m1"));
    assert!(r.is_stream());
    assert_eq!(r.system().as_deref(), Some("You are Nomos."));
    assert_eq!(r.last_user_text().as_deref(), Some("hello"));
}

#[tokio::test]
async fn concurrent_requests_each_get_their_own_step() {
    let steps = (0..8).map(|i| Step::text(format!("reply {i}")));
    let server = MockServer::start(Script::new(steps)).await.unwrap();
    let url = format!("{}/chat/completions", server.base_url());
    let bodies =
        futures_util::future::join_all((0..8).map(|_| post(url.clone(), chat(false)))).await;
    let mut texts: Vec<String> = bodies
        .into_iter()
        .map(|(_, _, b)| {
            serde_json::from_str::<Value>(&b).unwrap()["choices"][0]["message"]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    texts.sort();
    assert_eq!(
        texts,
        (0..8).map(|i| format!("reply {i}")).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn hang_holds_until_shutdown_and_wait_for_requests_sees_it() {
    let server = MockServer::start(Script::new([Step::new(Reply::Hang { text: "x".into() })]))
        .await
        .unwrap();
    let url = format!("{}/chat/completions", server.base_url());
    let client = tokio::spawn(async move {
        let resp = reqwest::Client::new()
            .post(url)
            .json(&chat(true))
            .send()
            .await
            .unwrap();
        resp.text().await
    });
    assert!(server.wait_for_requests(1, Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!client.is_finished());
    let started = std::time::Instant::now();
    server.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        client.await.unwrap().is_err(),
        "the hanging body ends in an error at shutdown"
    );
}

#[tokio::test]
async fn raw_bodies_are_byte_exact_in_any_chunking() {
    let body = "data: {\"x\":\"héllo ✓\"}\n\n: comment\n\ndata: [DONE]\n\n".to_owned();
    let server = MockServer::start(Script::new([
        Step::new(Reply::Raw {
            status: 200,
            headers: vec![],
            body: body.clone(),
            body_file: None,
            chunk_bytes: Some(3),
        }),
        Step::new(Reply::Raw {
            status: 418,
            headers: vec![("x-test".into(), "1".into())],
            body: "teapot".into(),
            body_file: None,
            chunk_bytes: None,
        }),
    ]))
    .await
    .unwrap();
    let url = format!("{}/chat/completions", server.base_url());
    assert_eq!(post(url.clone(), chat(true)).await.2, body);
    let (status, headers, text) = post(url, chat(true)).await;
    assert_eq!((status, text.as_str()), (418, "teapot"));
    assert!(headers.contains(&("x-test".into(), "1".into())));
}

#[tokio::test]
async fn models_and_health_endpoints() {
    let server = MockServer::start(Script {
        model: Some("demo-model".into()),
        ..Script::default()
    })
    .await
    .unwrap();
    let v: Value = reqwest::get(format!("{}/models", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["data"][0]["id"], "demo-model");
    let health = reqwest::get(format!("{}/health", server.root_url()))
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(
        reqwest::get(format!("{}/nope", server.root_url()))
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(server.request_count(), 0, "only chat requests are recorded");
}

/// Another process (the end-to-end tests drive `nomos mock-llm`) reads, in one listing, the
/// request count, the failed checks and every request (bodies whole, in order, the answering
/// step, the last operator and tool texts) with keys hidden; reading is not itself recorded.
#[tokio::test]
async fn recorded_requests_are_listed_over_http_without_keys() {
    let server = MockServer::start(Script::new([
        Step::text("one"),
        Step::new(Reply::HttpError {
            status: 500,
            message: Some("boom".into()),
            error_type: None,
            code: None,
            retry_after: None,
        }),
        Step::text("three").expect(Expect::LastUserContains("never sent".into())),
    ]))
    .await
    .unwrap();
    let list = || async {
        let resp = reqwest::get(format!(
            "{}{}",
            server.root_url(),
            nomos_mock_llm::REQUESTS_PATH
        ))
        .await
        .unwrap();
        assert_eq!(resp.status(), 200);
        resp.json::<Value>().await.unwrap()
    };
    assert_eq!(
        list().await,
        json!({"count": 0, "failures": [], "requests": []})
    );
    let url = format!("{}/chat/completions", server.base_url());
    post(url.clone(), chat(true)).await;
    let mut second = chat(false);
    second["messages"][1]["content"] = json!("the reason: the disk is shared");
    second["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "run", "arguments": "{\"command\": \"df\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "/dev/sda1 12%"}),
    ]);
    let (status, _, _) = post(url.clone(), second).await;
    assert_eq!(status, 500);
    // A failed check, then a request past the end of the script.
    for _ in 0..2 {
        post(url.clone(), chat(true)).await;
    }
    // An Anthropic client's key header is hidden too.
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.root_url()))
        .header("x-api-key", "k2")
        .json(&json!({"model": "m1", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400, "past the end of the script");
    let seen = list().await;
    assert_eq!(seen["count"], 5, "{seen}");
    let requests = seen["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 5, "{seen}");
    assert_eq!(
        server.request_count(),
        5,
        "listing is not a request to the model"
    );
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(request["seq"], i);
        assert_eq!(request["method"], "POST");
        let keys: Vec<&Value> = request["headers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h[0] == "authorization" || h[0] == "x-api-key")
            .map(|h| &h[1])
            .collect();
        assert_eq!(keys, [&json!("***")], "the key is not listed: {request}");
    }
    let paths: Vec<&Value> = requests.iter().map(|r| &r["path"]).collect();
    assert_eq!(
        paths,
        [
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/v1/messages"
        ]
    );
    assert_eq!(requests[4]["format"], "anthropic");
    let steps: Vec<&Value> = requests.iter().map(|r| &r["step"]).collect();
    assert_eq!(
        steps,
        [&json!(0), &json!(1), &json!(2), &Value::Null, &Value::Null]
    );
    assert_eq!(requests[0]["body"]["messages"][1]["content"], "hello");
    assert_eq!(requests[0]["last_user"], "hello");
    assert_eq!(requests[0]["last_tool_result"], Value::Null);
    assert_eq!(
        requests[1]["body"]["messages"][1]["content"],
        "the reason: the disk is shared"
    );
    assert_eq!(requests[1]["last_user"], "the reason: the disk is shared");
    assert_eq!(requests[1]["last_tool_result"], "/dev/sda1 12%");
    assert_eq!(requests[4]["last_user"], "hi");
    let failures = seen["failures"].as_array().unwrap();
    let failed: Vec<(&Value, &Value)> = failures
        .iter()
        .map(|f| (&f["request"], &f["step"]))
        .collect();
    assert_eq!(
        failed,
        [
            (&json!(2), &json!(2)),
            (&json!(3), &Value::Null),
            (&json!(4), &Value::Null)
        ],
        "a failed check and two requests past the script: {seen}"
    );
    assert!(
        failures[0]["reason"]
            .as_str()
            .unwrap()
            .contains("never sent"),
        "{seen}"
    );
    let text = seen.to_string();
    assert!(
        !text.contains("k1") && !text.contains("k2"),
        "no key anywhere: {seen}"
    );
    // Reading again is not a model request either.
    assert_eq!(list().await["count"], 5);
    // The recording itself keeps what arrived.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer k1")
    );
    // The old second listing is gone: one place to read.
    let old = reqwest::get(format!("{}/requests", server.root_url()))
        .await
        .unwrap();
    assert_eq!(old.status().as_u16(), 404);
    server.shutdown().await;
}

#[tokio::test]
async fn a_given_port_is_used() {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let server = MockServer::start_on(Script::default(), ([127, 0, 0, 1], port).into())
        .await
        .unwrap();
    assert_eq!(server.base_url(), format!("http://127.0.0.1:{port}/v1"));
}

#[tokio::test]
async fn keepalive_forever_sends_comments_until_shutdown_and_never_finishes() {
    for (every_ms, stream) in [(10u64, true), (30, true), (10, false)] {
        let server = MockServer::start(Script::new([Step::new(Reply::KeepaliveForever {
            text: "partial".into(),
            every_ms,
        })]))
        .await
        .unwrap();
        let url = format!("{}/chat/completions", server.base_url());
        let mut resp = reqwest::Client::new()
            .post(url)
            .json(&chat(stream))
            .send()
            .await
            .unwrap();
        let mut body = Vec::new();
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_millis(400) {
            match tokio::time::timeout(Duration::from_millis(500), resp.chunk()).await {
                Ok(Ok(Some(c))) => body.extend_from_slice(&c),
                other => panic!("the body ended or stalled: {other:?}"),
            }
        }
        let text = String::from_utf8_lossy(&body);
        // SSE carries comments; a JSON body only whitespace (it stays valid JSON so far).
        let pings = if stream {
            text.matches(": keep-alive").count()
        } else {
            assert!(text.trim().is_empty(), "{text:?}");
            text.len()
        };
        assert!(pings >= 5, "every {every_ms} ms: {pings} pings in {text:?}");
        if stream {
            assert!(text.contains("partial"), "{text}");
            assert!(!text.contains("[DONE]"), "{text}");
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_hook_step_is_built_from_the_request_it_answers() {
    let script = Script::from_yaml(
        "replies:\n  - kind: hook\n    name: echo\n    expect: [{last_user_contains: hello}]\n  - kind: hook\n    name: missing\n",
    )
    .unwrap();
    let server = MockServer::start(script).await.unwrap();
    server.set_hook("echo", |req| {
        Step::text(format!(
            "you said {}",
            req.last_user_text().unwrap_or_default()
        ))
    });
    let (status, _, body) = post(
        format!("{}/chat/completions", server.base_url()),
        chat(false),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["choices"][0]["message"]["content"], "you said hello");
    assert!(server.failures().is_empty());
    // A hook nobody registered is a recorded failure, answered 400.
    let (status, _, body) = post(
        format!("{}/chat/completions", server.base_url()),
        chat(false),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let failures = server.failures();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].reason.contains("no hook named `missing`"),
        "{failures:?}"
    );
}
