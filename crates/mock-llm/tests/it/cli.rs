//! `run_until` (the body of `nomos mock-llm`) serves a script file and reports failures.

use nomos_mock_llm::{MockError, run_until};

#[tokio::test]
async fn serves_a_script_file_until_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.yaml");
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    std::fs::write(&path, "replies:\n  - kind: text\n    text: scripted hello\n    expect:\n      - last_user_contains: hello\n").unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn({
        let path = path.clone();
        async move { run_until(&path, Some(port), async { stop_rx.await.unwrap_or(()) }).await }
    });
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let mut body = None;
    for _ in 0..50 {
        match reqwest::Client::new()
            .post(&url)
            .json(&serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]}))
            .send()
            .await
        {
            Ok(r) => {
                body = Some(r.text().await.unwrap());
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    }
    assert!(body.unwrap().contains("scripted hello"));
    stop_tx.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn failed_expectations_make_the_run_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(
        &path,
        r#"{"replies": [{"kind": "text", "text": "x", "expect": [{"has_tool": "run"}]}]}"#,
    )
    .unwrap();
    let (port_tx, port_rx) = tokio::sync::oneshot::channel::<()>();
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let run = tokio::spawn({
        let path = path.clone();
        async move { run_until(&path, Some(port), async { port_rx.await.unwrap_or(()) }).await }
    });
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let mut status = None;
    for _ in 0..50 {
        if let Ok(r) = reqwest::Client::new()
            .post(&url)
            .json(&serde_json::json!({"messages": []}))
            .send()
            .await
        {
            status = Some(r.status().as_u16());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(status, Some(400));
    port_tx.send(()).unwrap();
    let err = run.await.unwrap().unwrap_err();
    assert_eq!(err.code(), "mock_llm.expectations_failed");
    assert!(
        err.to_string()
            .contains("expected tool \"run\" to be offered"),
        "{err}"
    );
}

#[tokio::test]
async fn a_bad_script_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, "replies:\n  - kind: nonsense\n").unwrap();
    let err = run_until(&path, None, async {}).await.unwrap_err();
    assert!(matches!(err, MockError::ScriptParse { .. }), "{err:?}");
    assert!(err.to_string().contains("bad.yaml"));
    let err = run_until(&dir.path().join("missing.yaml"), None, async {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), "mock_llm.script_read");
}
