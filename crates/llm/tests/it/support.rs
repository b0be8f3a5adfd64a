//! Shared helpers: fixtures, providers pointed at a mock server, event capture.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nomos_llm::{
    AnthropicConfig, AnthropicProvider, ChatRequest, ChatResponse, EventSink, LlmError, Message,
    OpenAiConfig, OpenAiProvider, Provider, StaticToken, StreamEvent, StreamLimits, ToolSpec,
};
use nomos_mock_llm::{MockServer, Reply, Script, Step};
use tokio_util::sync::CancellationToken;

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Limits small enough that timeout tests finish quickly.
pub fn test_limits() -> StreamLimits {
    StreamLimits {
        idle_timeout: Duration::from_secs(10),
        ..StreamLimits::default()
    }
}

pub fn openai_for(server: &MockServer, limits: StreamLimits) -> OpenAiProvider {
    let mut c = OpenAiConfig::new(server.base_url(), "test-model");
    c.limits = limits;
    OpenAiProvider::new(c, Some(Arc::new(StaticToken::new("sk-test")))).unwrap()
}

pub fn anthropic_for(server: &MockServer, limits: StreamLimits) -> AnthropicProvider {
    let mut c = AnthropicConfig::new(server.root_url(), "claude-test");
    c.limits = limits;
    AnthropicProvider::new(c, Some(Arc::new(StaticToken::new("sk-ant-test")))).unwrap()
}

/// Which wire format a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    OpenAi,
    Anthropic,
}

pub const KINDS: [Kind; 2] = [Kind::OpenAi, Kind::Anthropic];

pub fn provider_for(kind: Kind, server: &MockServer, limits: StreamLimits) -> Arc<dyn Provider> {
    match kind {
        Kind::OpenAi => Arc::new(openai_for(server, limits)),
        Kind::Anthropic => Arc::new(anthropic_for(server, limits)),
    }
}

pub async fn serve(steps: impl IntoIterator<Item = Step>) -> MockServer {
    MockServer::start(Script::new(steps)).await.unwrap()
}

/// Serves a recorded file byte-for-byte, whole or in `chunk_bytes` pieces.
pub async fn serve_fixture(name: &str, chunk_bytes: Option<usize>) -> MockServer {
    serve([Step::new(Reply::Raw {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: String::new(),
        body_file: Some(fixture(name)),
        chunk_bytes,
    })])
    .await
}

/// A recorded HTTP response file (`status line`, headers, blank line, body).
pub fn parse_http_file(name: &str) -> (u16, Vec<(String, String)>, String) {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let (head, body) = text.split_once("\n\n").unwrap();
    let mut lines = head.lines();
    let status_line = lines.next().unwrap();
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_owned(), v.trim().to_owned())
        })
        .collect();
    (status, headers, body.to_owned())
}

pub fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "run".into(),
        description: "Run a shell command".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    }]
}

pub fn request(text: &str) -> ChatRequest {
    ChatRequest {
        system: Some("You are Nomos.".into()),
        messages: vec![Message::user(text)],
        tools: tools(),
        max_tokens: Some(1024),
        ..ChatRequest::default()
    }
}

/// Captures events (shared so a test can look while the stream runs).
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<StreamEvent>>>);

impl Events {
    pub fn sink(&self) -> impl EventSink + 'static {
        let inner = self.0.clone();
        move |e| inner.lock().unwrap().push(e)
    }

    pub fn all(&self) -> Vec<StreamEvent> {
        self.0.lock().unwrap().clone()
    }

    pub fn text(&self) -> String {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    pub fn reasoning(&self) -> String {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::ReasoningDelta(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    /// Arguments per call index, as streamed.
    pub fn args(&self, index: usize) -> String {
        self.all()
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallArgsDelta { index: i, delta } if i == index => Some(delta),
                _ => None,
            })
            .collect()
    }
}

/// Runs one request and returns the result plus the captured events.
pub async fn run(
    provider: &dyn Provider,
    req: &ChatRequest,
) -> (Result<ChatResponse, LlmError>, Events) {
    let events = Events::default();
    let mut sink = events.sink();
    let result = provider
        .stream(req, &mut sink, &CancellationToken::new())
        .await;
    (result, events)
}

/// The streamed events must add up to the assembled response.
pub fn assert_events_match(resp: &ChatResponse, events: &Events) {
    assert_eq!(events.text(), resp.text, "text deltas");
    assert_eq!(events.reasoning(), resp.reasoning, "reasoning deltas");
    let started = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. }))
        .count();
    assert_eq!(
        started,
        resp.tool_calls.len(),
        "one ToolCallStarted per call"
    );
    for (i, call) in resp.tool_calls.iter().enumerate() {
        assert_eq!(
            events.args(i),
            call.arguments,
            "argument deltas of call {i}"
        );
    }
    assert!(
        matches!(events.all().last(), Some(StreamEvent::Done { .. })),
        "Done comes last"
    );
}
