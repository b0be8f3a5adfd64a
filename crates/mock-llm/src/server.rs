//! The HTTP server: routes, the script queue, request recording.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde::Serialize;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::render::{self, Action, Rendered};
use crate::request::{Format, RecordedRequest};
use crate::script::{Reply, Script, Step};

/// A failed request check, or a request the script had no answer for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The request's `seq`.
    pub request: usize,
    /// The script step that was checked (`None`: the script was exhausted).
    pub step: Option<usize>,
    /// What went wrong, in words.
    pub reason: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.step {
            Some(s) => write!(f, "request {} (step {s}): {}", self.request, self.reason),
            None => write!(f, "request {}: {}", self.request, self.reason),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    queue: VecDeque<Step>,
    fallback: Option<Step>,
    /// Steps taken from the queue so far (the next step's index).
    taken: usize,
    requests: Vec<RecordedRequest>,
    failures: Vec<Failure>,
}

/// Builds a step from the request it answers (see [`MockServer::set_hook`]).
pub type Hook = Arc<dyn Fn(&RecordedRequest) -> Step + Send + Sync>;

struct Shared {
    inner: Mutex<Inner>,
    hooks: Mutex<std::collections::HashMap<String, Hook>>,
    model: Option<String>,
    arrived: Notify,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("inner", &self.inner)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panicking test thread must not wedge the server for the others.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running scripted model server. Dropping it stops the server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<io::Result<()>>>,
}

/// Request bodies larger than this are refused (a runaway client, not a test).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

impl MockServer {
    /// Starts on `127.0.0.1` with an ephemeral port.
    pub async fn start(script: Script) -> io::Result<Self> {
        Self::start_on(script, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts on `addr`.
    pub async fn start_on(script: Script, addr: SocketAddr) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                queue: script.replies.into(),
                fallback: script.fallback,
                ..Inner::default()
            }),
            hooks: Mutex::default(),
            model: script.model,
            arrived: Notify::new(),
            shutdown: CancellationToken::new(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let stop = shared.shutdown.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await
        });
        tracing::debug!(%addr, "mock-llm listening");
        Ok(Self {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>/v1` — the base URL for OpenAI-compatible clients (and
    /// Anthropic clients that accept a base ending in `/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:<port>` — the base URL for Anthropic clients.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Appends a step to the script.
    pub fn push(&self, step: impl Into<Step>) {
        self.shared.lock().queue.push_back(step.into());
    }

    /// Registers the hook that builds the step for every `kind: hook` reply named `name`.
    pub fn set_hook(
        &self,
        name: impl Into<String>,
        hook: impl Fn(&RecordedRequest) -> Step + Send + Sync + 'static,
    ) {
        let mut hooks = self.shared.hooks.lock().unwrap_or_else(|e| e.into_inner());
        hooks.insert(name.into(), Arc::new(hook));
    }

    /// Steps not served yet.
    pub fn remaining(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Failed checks and requests past the end of the script.
    pub fn failures(&self) -> Vec<Failure> {
        self.shared.lock().failures.clone()
    }

    /// Waits until at least `n` requests arrived; `false` on timeout.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.shared.arrived.notified();
                if self.request_count() >= n {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    /// Stops accepting, ends hanging streams and waits (briefly) for the server task.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let format = if path.ends_with("/chat/completions") {
        Format::OpenAi
    } else if path.ends_with("/messages") {
        Format::Anthropic
    } else if method == "GET" && path.ends_with("/models") {
        return models(&shared);
    } else if method == "GET" && (path == "/" || path == "/health") {
        return plain(StatusCode::OK, "mock-llm ok\n");
    } else if method == "GET" && path == REQUESTS_PATH {
        return recorded_requests(&shared);
    } else {
        return plain(StatusCode::NOT_FOUND, "mock-llm: unknown path\n");
    };
    if method != "POST" {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "mock-llm: POST only\n");
    }
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match axum::body::to_bytes(request.into_body(), MAX_REQUEST_BYTES).await {
        Ok(b) => b,
        Err(e) => return plain(StatusCode::PAYLOAD_TOO_LARGE, &format!("mock-llm: {e}\n")),
    };
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);

    // Take the next step and record the request under one lock, so concurrent requests
    // get distinct steps in arrival order.
    let (recorded, outcome) = {
        let mut inner = shared.lock();
        let seq = inner.requests.len();
        let (step_index, step) = match inner.queue.pop_front() {
            Some(s) => {
                inner.taken += 1;
                (Some(inner.taken - 1), Some(s))
            }
            None => (None, inner.fallback.clone()),
        };
        let recorded = RecordedRequest {
            seq,
            method,
            path,
            format,
            headers,
            body,
            step: step_index,
        };
        let outcome: Result<Step, String> = match step {
            None => Err(format!(
                "the script is exhausted after {} replies",
                inner.taken
            )),
            Some(s) => match s.expect.iter().try_for_each(|e| recorded.check(e)) {
                Ok(()) => resolve_hook(&shared, s, &recorded),
                Err(reason) => Err(format!("expectation failed: {reason}")),
            },
        };
        if let Err(reason) = &outcome {
            tracing::warn!(request = seq, "mock-llm: {reason}");
            inner.failures.push(Failure {
                request: seq,
                step: step_index,
                reason: reason.clone(),
            });
        }
        inner.requests.push(recorded.clone());
        (recorded, outcome)
    };
    shared.arrived.notify_waiters();

    let rendered = match outcome {
        // A non-retryable status, so a client under test fails loudly instead of retrying.
        Err(reason) => render::error_response(
            format,
            400,
            "mock_expectation_failed",
            &format!("mock-llm: {reason}"),
        ),
        Ok(step) => {
            if step.delay_ms > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(step.delay_ms)) => {}
                    () = shared.shutdown.cancelled() => {}
                }
            }
            let model = shared
                .model
                .clone()
                .or_else(|| recorded.model().map(str::to_owned))
                .unwrap_or_else(|| "mock-model".to_owned());
            match render::render(&step, &recorded, &model) {
                Ok(r) => r,
                Err(reason) => {
                    shared.lock().failures.push(Failure {
                        request: recorded.seq,
                        step: recorded.step,
                        reason: reason.clone(),
                    });
                    render::error_response(
                        format,
                        500,
                        "mock_script_error",
                        &format!("mock-llm: {reason}"),
                    )
                }
            }
        }
    };
    respond(rendered, shared.shutdown.clone())
}

/// A `kind: hook` step becomes what its hook builds from the request (its own checks ran).
fn resolve_hook(shared: &Shared, step: Step, request: &RecordedRequest) -> Result<Step, String> {
    let Reply::Hook { name } = &step.reply else {
        return Ok(step);
    };
    let hook = shared
        .hooks
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .cloned();
    match hook {
        Some(hook) => {
            let built = hook(request);
            if matches!(built.reply, Reply::Hook { .. }) {
                Err(format!("hook `{name}` returned another hook"))
            } else {
                Ok(built)
            }
        }
        None => Err(format!("no hook named `{name}` is registered")),
    }
}

fn models(shared: &Shared) -> Response {
    let id = shared
        .model
        .clone()
        .unwrap_or_else(|| "mock-model".to_owned());
    let body = serde_json::json!({"object": "list", "data": [{"id": id, "object": "model", "owned_by": "mock-llm"}]});
    let mut r = Response::new(Body::from(body.to_string()));
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Where a test in another process (the end-to-end tests drive `nomos mock-llm`) reads what the
/// server received, as JSON: `count`, `failures` and every request in order (`seq`, `method`,
/// `path`, `format`, `headers` with keys masked, `body`, `step`, and the `last_user` and
/// `last_tool_result` texts the checks read). Not under `/v1`, so no client under test
/// reaches it by accident, and not recorded itself.
pub const REQUESTS_PATH: &str = "/_mock/requests";

/// Headers a client may put a key in; the recording keeps them, this listing does not.
fn is_credential_header(name: &str) -> bool {
    [
        "authorization",
        "x-api-key",
        "api-key",
        "proxy-authorization",
    ]
    .contains(&name)
}

fn recorded_requests(shared: &Shared) -> Response {
    let inner = shared.lock();
    let requests: Vec<serde_json::Value> = inner
        .requests
        .iter()
        .map(|r| {
            let headers: Vec<(&str, &str)> = r
                .headers
                .iter()
                .map(|(name, value)| {
                    let shown = if is_credential_header(name) {
                        "***"
                    } else {
                        value.as_str()
                    };
                    (name.as_str(), shown)
                })
                .collect();
            serde_json::json!({
                "seq": r.seq,
                "method": r.method,
                "path": r.path,
                "format": r.format,
                "headers": headers,
                "body": r.body,
                "step": r.step,
                "last_user": r.last_user_text(),
                "last_tool_result": r.last_tool_result(),
            })
        })
        .collect();
    let body = serde_json::json!({
        "count": inner.requests.len(),
        "failures": inner.failures,
        "requests": requests,
    });
    drop(inner);
    json(body.to_string())
}

fn json(body: String) -> Response {
    let mut r = Response::new(Body::from(body));
    r.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn plain(status: StatusCode, text: &str) -> Response {
    let mut r = Response::new(Body::from(text.to_owned()));
    *r.status_mut() = status;
    r
}

/// Headers the HTTP layer computes itself; copying them from a recording would conflict.
fn is_hop_header(name: &str) -> bool {
    [
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

fn respond(rendered: Rendered, shutdown: CancellationToken) -> Response {
    let body = futures_util::stream::unfold(
        (rendered.body.into_iter(), shutdown),
        |(mut actions, shutdown)| async move {
            loop {
                match actions.next()? {
                    Action::Send(bytes) => {
                        return Some((Ok::<Bytes, io::Error>(bytes), (actions, shutdown)));
                    }
                    Action::Sleep(d) => {
                        tokio::select! {
                            () = tokio::time::sleep(d) => {}
                            () = shutdown.cancelled() => return Some((Err(io::Error::other("mock-llm shut down")), (Vec::new().into_iter(), shutdown))),
                        }
                    }
                    // An error from the body stream makes hyper drop the connection without
                    // the final chunk: the client sees a truncated body, like a real cut.
                    // Pause first: while the stream is pending hyper flushes what it has, so
                    // the client really receives the head and the partial body.
                    Action::Cut => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        return Some((
                            Err(io::Error::new(
                                io::ErrorKind::ConnectionReset,
                                "mock-llm: scripted stream cut",
                            )),
                            (Vec::new().into_iter(), shutdown),
                        ));
                    }
                    Action::KeepaliveForever(every, bytes) => {
                        tokio::select! {
                            () = tokio::time::sleep(every) => {}
                            () = shutdown.cancelled() => return Some((Err(io::Error::other("mock-llm shut down")), (Vec::new().into_iter(), shutdown))),
                        }
                        let again = vec![Action::KeepaliveForever(every, bytes)].into_iter();
                        return Some((Ok(Bytes::from_static(bytes)), (again, shutdown)));
                    }
                    Action::Hang => {
                        shutdown.cancelled().await;
                        return Some((
                            Err(io::Error::other("mock-llm shut down")),
                            (Vec::new().into_iter(), shutdown),
                        ));
                    }
                }
            }
        },
    );
    let mut response = Response::new(Body::from_stream(body));
    *response.status_mut() =
        StatusCode::from_u16(rendered.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (k, v) in rendered.headers {
        if is_hop_header(&k) {
            continue;
        }
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) {
            response.headers_mut().append(name, value);
        }
    }
    response
}
