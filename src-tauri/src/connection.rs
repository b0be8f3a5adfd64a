//! "Test connection" in Settings: one tiny real request to the configured model through
//! nomos-llm, with the network path checked step by step first, so the operator learns
//! exactly what failed: the name (DNS), the port (refused, no answer), TLS, the credentials
//! (401/403 with the provider's words), the model (404), or a provider that never answers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::setup::{self, RuntimeSettings};
use nomos_llm::{ChatRequest, Env, LlmError, Message, NullSink, TokenSource};
use nomos_protocol::{ConnectionCheck, ErrorCode, IpcError, ProviderKind};
use tokio_util::sync::CancellationToken;

/// How long each step may take before it is reported as what failed.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Name resolution, and each TCP connect.
    pub network: Duration,
    /// The whole model request (the provider's own retries are not used here).
    pub reply: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            network: Duration::from_secs(10),
            reply: Duration::from_secs(45),
        }
    }
}

/// The characters of the model's answer shown back.
const REPLY_CHARS: usize = 80;

fn fail(code: ErrorCode, message: String) -> IpcError {
    IpcError::new(code, message)
}

/// Tests the endpoint `settings` name, with `token` (sign-in) or the key the environment or
/// the OS keyring holds for it. `Ok` only when the model answered.
pub async fn test(
    settings: &RuntimeSettings,
    token: Option<Arc<dyn TokenSource>>,
    env: &dyn Env,
    limits: Limits,
) -> Result<ConnectionCheck, IpcError> {
    let resolved = nomos_llm::resolve_config(&settings.llm, env, None).map_err(|e| match e {
        LlmError::Config { message } => fail(ErrorCode::LlmNotConfigured, message),
        other => IpcError::from_parts(other.code(), other.to_string(), other.is_retryable()),
    })?;
    let url = tauri::Url::parse(&resolved.base_url).map_err(|e| {
        fail(
            ErrorCode::LlmConfig,
            format!("The base URL {:?} is not a URL: {e}.", resolved.base_url),
        )
    })?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    // Through a proxy the model's host is not ours to reach: the request itself tells.
    let direct = is_loopback(&host) || !proxied(env);
    if direct {
        let addrs = resolve(&host, port, limits.network).await?;
        connect(&host, port, &addrs, limits.network).await?;
    }
    // After the network: a locked keyring must not hide an unreachable host.
    let token = setup::credential_for(&resolved, token)
        .await
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))?;
    let provider = nomos_llm::build_provider(&resolved, token)
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))?;
    let request = ChatRequest {
        messages: vec![Message::user(
            "Connection test from Nomos: reply with the word OK.",
        )],
        max_tokens: Some(16),
        ..ChatRequest::default()
    };
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        limits.reply,
        provider.stream(&request, &mut NullSink, &cancel),
    )
    .await;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let reply = match outcome {
        Err(_) => {
            cancel.cancel();
            return Err(fail(
                ErrorCode::LlmDeadlineExceeded,
                format!(
                    "{} accepted the connection but the model sent no complete answer within {} s.",
                    resolved.base_url,
                    limits.reply.as_secs()
                ),
            ));
        }
        Ok(Ok(response)) => response.text,
        // The model answered; what it said is not the point of a connection test.
        Ok(Err(LlmError::EmptyReply { .. })) => String::new(),
        Ok(Err(LlmError::Refused { refusal })) => refusal,
        Ok(Err(LlmError::ContentFilter { message })) => message,
        Ok(Err(e)) => {
            return Err(explain(
                &e,
                &resolved.base_url,
                &resolved.model,
                url.scheme(),
            ));
        }
    };
    Ok(ConnectionCheck {
        provider: match resolved.kind {
            nomos_llm::ProviderKind::OpenAiCompatible => ProviderKind::OpenaiCompatible,
            nomos_llm::ProviderKind::Anthropic => ProviderKind::Anthropic,
        },
        base_url: resolved.base_url.clone(),
        model: resolved.model.clone(),
        reply: reply.trim().chars().take(REPLY_CHARS).collect(),
        elapsed_ms,
    })
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn proxied(env: &dyn Env) -> bool {
    [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .iter()
    .any(|k| env.var(k).is_some_and(|v| !v.trim().is_empty()))
}

async fn resolve(host: &str, port: u16, limit: Duration) -> Result<Vec<SocketAddr>, IpcError> {
    let dns = |detail: String| {
        fail(
            ErrorCode::LlmDns,
            format!(
                "DNS: the name {host} could not be resolved ({detail}). Check the base URL's host name and this machine's network."
            ),
        )
    };
    match tokio::time::timeout(limit, tokio::net::lookup_host((host, port))).await {
        Err(_) => Err(dns(format!("no answer within {} s", limit.as_secs()))),
        Ok(Err(e)) => Err(dns(e.to_string())),
        Ok(Ok(addrs)) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            if addrs.is_empty() {
                Err(dns("no address".to_owned()))
            } else {
                Ok(addrs)
            }
        }
    }
}

/// Connects to each address in turn; the first that accepts will do.
async fn connect(
    host: &str,
    port: u16,
    addrs: &[SocketAddr],
    limit: Duration,
) -> Result<(), IpcError> {
    let mut refused = Vec::new();
    let mut silent = Vec::new();
    let mut other = Vec::new();
    for addr in addrs {
        match tokio::time::timeout(limit, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                refused.push(addr.to_string());
            }
            Ok(Err(e)) => other.push(format!("{addr}: {e}")),
            Err(_) => silent.push(addr.to_string()),
        }
    }
    if !other.is_empty() {
        return Err(fail(
            ErrorCode::LlmConnect,
            format!("Could not connect to {host}:{port}: {}.", other.join("; ")),
        ));
    }
    if !silent.is_empty() {
        return Err(fail(
            ErrorCode::LlmConnectTimeout,
            format!(
                "Connecting to {host}:{port} ({}) got no answer within {} s: a firewall, or the wrong host or port.",
                silent.join(", "),
                limit.as_secs()
            ),
        ));
    }
    let target = format!("{host}:{port}");
    let resolved = refused.join(", ");
    let via = if resolved == target {
        String::new()
    } else {
        format!(" ({resolved})")
    };
    Err(fail(
        ErrorCode::LlmConnectRefused,
        format!(
            "Connection refused by {target}{via}: nothing listens on that port. Is the server running, and is the port right?"
        ),
    ))
}

/// What failed once the network path was open, in the provider's own words where it gave
/// any.
fn explain(e: &LlmError, base_url: &str, model: &str, scheme: &str) -> IpcError {
    match e {
        LlmError::Connect { message } if scheme == "https" && looks_like_tls(message) => fail(
            ErrorCode::LlmTls,
            format!("TLS: the secure connection to {base_url} failed: {message}."),
        ),
        LlmError::Unauthorized { status, message } => fail(
            ErrorCode::LlmUnauthorized,
            format!(
                "The provider refused the credentials{}: {message}. Check the API key (or the sign-in) for {base_url}.",
                status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
            ),
        ),
        LlmError::BadRequest {
            status: Some(404),
            error_type,
            code,
            message,
        } => {
            let about_model = [
                code.as_deref(),
                error_type.as_deref(),
                Some(message.as_str()),
            ]
            .into_iter()
            .flatten()
            .any(|t| {
                let t = t.to_ascii_lowercase();
                t.contains("model")
                    || (!model.is_empty() && t.contains(&model.to_ascii_lowercase()))
            });
            if about_model {
                fail(
                    ErrorCode::LlmModelNotFound,
                    format!(
                        "The provider has no model {model:?} (HTTP 404): {message}. Pick a model it serves."
                    ),
                )
            } else {
                fail(
                    ErrorCode::LlmEndpointNotFound,
                    format!(
                        "Nothing answers at {base_url} (HTTP 404): {message}. Check the base URL's path (it usually ends in /v1)."
                    ),
                )
            }
        }
        LlmError::IdleTimeout { idle } => fail(
            ErrorCode::LlmIdleTimeout,
            format!(
                "{base_url} accepted the request but sent nothing for {} s.",
                idle.as_secs()
            ),
        ),
        other => IpcError::from_parts(other.code(), other.to_string(), other.is_retryable()),
    }
}

fn looks_like_tls(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "tls",
        "ssl",
        "certificate",
        "handshake",
        "corrupt message",
        "unknownissuer",
    ]
    .iter()
    .any(|k| m.contains(k))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use nomos_llm::{LlmSettings, MapEnv};
    use nomos_mock_llm::{MockServer, Reply, Script, Step};

    fn settings(kind: nomos_llm::ProviderKind, base_url: &str) -> RuntimeSettings {
        RuntimeSettings {
            llm: LlmSettings {
                provider: Some(kind),
                base_url: Some(base_url.to_owned()),
                model: Some("mock-model-7".to_owned()),
                ..LlmSettings::default()
            },
            ..RuntimeSettings::default()
        }
    }

    fn quick() -> Limits {
        Limits {
            network: Duration::from_secs(3),
            reply: Duration::from_secs(3),
        }
    }

    async fn check(kind: nomos_llm::ProviderKind, url: &str) -> Result<ConnectionCheck, IpcError> {
        test(&settings(kind, url), None, &MapEnv::default(), quick()).await
    }

    /// Both wire formats, against the same scripted server.
    async fn both(step: Step) -> Vec<Result<ConnectionCheck, IpcError>> {
        let mut out = Vec::new();
        for kind in [
            nomos_llm::ProviderKind::OpenAiCompatible,
            nomos_llm::ProviderKind::Anthropic,
        ] {
            let server = MockServer::start(Script::new([step.clone()]))
                .await
                .unwrap();
            let url = match kind {
                nomos_llm::ProviderKind::OpenAiCompatible => server.base_url(),
                nomos_llm::ProviderKind::Anthropic => server.root_url(),
            };
            out.push(check(kind, &url).await);
            assert_eq!(server.request_count(), 1, "exactly one real request");
            server.shutdown().await;
        }
        out
    }

    fn http_error(status: u16, message: &str, code: Option<&str>) -> Step {
        Step::new(Reply::HttpError {
            status,
            message: Some(message.to_owned()),
            error_type: None,
            code: code.map(str::to_owned),
            retry_after: None,
        })
    }

    #[tokio::test]
    async fn a_model_that_answers_passes_with_what_it_said() {
        for result in both(Step::text("OK, connected.")).await {
            let ok = result.unwrap();
            assert_eq!(ok.reply, "OK, connected.");
            assert_eq!(ok.model, "mock-model-7");
            assert!(ok.base_url.starts_with("http://127.0.0.1:"), "{ok:?}");
        }
        // An empty reply still proves the path, the key and the model.
        for result in both(Step::new(Reply::Empty {
            finish_reason: None,
            reasoning: None,
        }))
        .await
        {
            assert_eq!(result.unwrap().reply, "");
        }
    }

    #[tokio::test]
    async fn refused_credentials_carry_the_providers_words() {
        for status in [401, 403] {
            for result in both(http_error(
                status,
                "Incorrect API key provided: sk-…abcd",
                None,
            ))
            .await
            {
                let err = result.unwrap_err();
                assert_eq!(err.code, ErrorCode::LlmUnauthorized, "{err:?}");
                assert!(
                    err.message.contains("Incorrect API key provided"),
                    "{err:?}"
                );
                assert!(err.message.contains(&format!("HTTP {status}")), "{err:?}");
            }
        }
    }

    #[tokio::test]
    async fn an_unknown_model_is_named() {
        for step in [
            http_error(
                404,
                "The model `mock-model-7` does not exist",
                Some("model_not_found"),
            ),
            http_error(
                404,
                "model \"mock-model-7\" not found, try pulling it first",
                None,
            ),
        ] {
            for result in both(step.clone()).await {
                let err = result.unwrap_err();
                assert_eq!(err.code, ErrorCode::LlmModelNotFound, "{err:?}");
                assert!(err.message.contains("mock-model-7"), "{err:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_404_that_is_not_about_the_model_points_at_the_url() {
        for step in [
            http_error(404, "Invalid URL (POST /v1/v1/chat/completions)", None),
            http_error(404, "Not Found", Some("not_found")),
        ] {
            for result in both(step.clone()).await {
                let err = result.unwrap_err();
                assert_eq!(err.code, ErrorCode::LlmEndpointNotFound, "{err:?}");
                assert!(err.message.contains("base URL"), "{err:?}");
            }
        }
    }

    #[tokio::test]
    async fn each_other_fault_keeps_its_own_code() {
        let cases = [
            (
                http_error(500, "upstream exploded", None),
                ErrorCode::LlmProviderError,
            ),
            (
                Step::new(Reply::RateLimited {
                    retry_after_secs: 1.0,
                    message: Some("slow down".into()),
                }),
                ErrorCode::LlmRateLimited,
            ),
            (
                Step::new(Reply::StreamCut {
                    text: "O".into(),
                    call: None,
                }),
                ErrorCode::LlmStreamCut,
            ),
            (
                Step::new(Reply::Hang {
                    text: String::new(),
                }),
                ErrorCode::LlmDeadlineExceeded,
            ),
        ];
        for (step, code) in cases {
            for result in both(step.clone()).await {
                let err = result.unwrap_err();
                assert_eq!(err.code, code, "{step:?}: {err:?}");
                assert!(!err.message.is_empty());
            }
        }
    }

    #[tokio::test]
    async fn a_closed_port_is_refused_before_any_request() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        for host in ["127.0.0.1", "localhost"] {
            let err = check(
                nomos_llm::ProviderKind::OpenAiCompatible,
                &format!("http://{host}:{port}/v1"),
            )
            .await
            .unwrap_err();
            assert_eq!(err.code, ErrorCode::LlmConnectRefused, "{err:?}");
            assert!(err.message.contains(&port.to_string()), "{err:?}");
        }
    }

    /// A listener whose accept queue is full drops new SYNs: the connect neither succeeds nor
    /// is refused, as behind a firewall that drops packets.
    #[tokio::test]
    async fn a_port_that_never_answers_is_a_connect_timeout() {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        // Fill the accept queue (never accepted); the kernel admits backlog + 1.
        for _ in 0..4 {
            match tokio::time::timeout(
                Duration::from_millis(300),
                tokio::net::TcpStream::connect(addr),
            )
            .await
            {
                Ok(Ok(s)) => held.push(s),
                _ => break,
            }
        }
        let limits = Limits {
            network: Duration::from_secs(1),
            reply: Duration::from_secs(3),
        };
        let err = test(
            &settings(
                nomos_llm::ProviderKind::OpenAiCompatible,
                &format!("http://{addr}/v1"),
            ),
            None,
            &MapEnv::default(),
            limits,
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::LlmConnectTimeout, "{err:?}");
        assert!(err.message.contains(&addr.port().to_string()), "{err:?}");
        drop(listener);
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_is_a_dns_failure() {
        // RFC 6761: `.invalid` never resolves.
        for url in [
            "https://nomos-connection-test.invalid/v1",
            "https://no-such-host.nomos-connection-test.invalid:8443/v1",
        ] {
            let err = check(nomos_llm::ProviderKind::OpenAiCompatible, url)
                .await
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::LlmDns, "{url}: {err:?}");
            assert!(err.message.contains(".invalid"), "{err:?}");
        }
    }

    #[tokio::test]
    async fn tls_to_a_server_that_does_not_speak_it_is_a_tls_failure() {
        let server = MockServer::start(Script::new([Step::text("unused")]))
            .await
            .unwrap();
        for kind in [
            nomos_llm::ProviderKind::OpenAiCompatible,
            nomos_llm::ProviderKind::Anthropic,
        ] {
            let err = check(kind, &format!("https://{}/v1", server.addr()))
                .await
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::LlmTls, "{err:?}");
        }
        assert_eq!(server.request_count(), 0, "no HTTP request got through");
    }

    #[tokio::test]
    async fn nothing_configured_says_so() {
        let err = test(
            &RuntimeSettings::default(),
            None,
            &MapEnv::default(),
            quick(),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::LlmNotConfigured, "{err:?}");
        // A key would go in clear text to another machine: refused before any traffic.
        let err = check(
            nomos_llm::ProviderKind::OpenAiCompatible,
            "http://model.nomos-connection-test.invalid/v1",
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::LlmInsecureEndpoint, "{err:?}");
    }
}
