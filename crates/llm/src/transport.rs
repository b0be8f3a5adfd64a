//! HTTP plumbing shared by the providers: authentication with one refresh on 401, the idle
//! timeout, the response size cap, cancellation, and feeding the body through the SSE
//! parser.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{FutureExt, Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::anthropic::AnthropicAssembler;
use crate::auth::TokenSource;
use crate::error::{ErrorInfo, LlmError, parse_retry_after};
use crate::openai::OpenAiAssembler;
use crate::types::{ChatResponse, EventSink, FinishReason, StreamEvent};
use nomos_base::Secret;
use nomos_base::{Clock, SystemClock, error_chain};

/// Limits applied to every streamed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamLimits {
    /// Longest silence tolerated while waiting for the headers or the next body bytes.
    /// Keep-alive comments count as bytes, so a provider that pings stays alive.
    pub idle_timeout: Duration,
    /// Cap on the bytes of one response body.
    pub max_response_bytes: usize,
    /// Cap on the time to establish the TCP/TLS connection.
    pub connect_timeout: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            // Reasoning models can think silently for a while before the first token.
            idle_timeout: Duration::from_secs(120),
            max_response_bytes: 32 * 1024 * 1024,
            connect_timeout: Duration::from_secs(15),
        }
    }
}

/// How the credential is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthStyle {
    /// `Authorization: Bearer <token>` (OpenAI-compatible servers, gateways).
    #[default]
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
}

/// One HTTP endpoint with its credential source.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    token: Option<Arc<dyn TokenSource>>,
    auth: AuthStyle,
    headers: Vec<(HeaderName, HeaderValue)>,
    limits: StreamLimits,
    clock: Arc<dyn Clock>,
}

impl fmt::Debug for Http {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Http")
            .field("token", &self.token)
            .field("auth", &self.auth)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Http {
    pub(crate) fn new(
        base_url: &str,
        token: Option<Arc<dyn TokenSource>>,
        auth: AuthStyle,
        extra_headers: &[(String, String)],
        limits: StreamLimits,
    ) -> Result<Self, LlmError> {
        let url = reqwest::Url::parse(base_url).map_err(|e| LlmError::Config {
            message: format!("invalid base URL {base_url:?}: {e}"),
        })?;
        // Last line of defence: whatever resolved the configuration, a credential never goes
        // out in clear text.
        if token.is_some() {
            refuse_cleartext_credential(&url)?;
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(limits.connect_timeout)
            .tcp_nodelay(true)
            .user_agent(concat!("nomos/", env!("CARGO_PKG_VERSION")));
        // A system proxy must never see loopback traffic (Ollama, the scripted server).
        if is_loopback(&url) {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| LlmError::Config {
            message: format!("HTTP client: {}", error_chain(&e)),
        })?;
        let mut headers = Vec::with_capacity(extra_headers.len());
        for (k, v) in extra_headers {
            let name = HeaderName::try_from(k.as_str()).map_err(|e| LlmError::Config {
                message: format!("header name {k:?}: {e}"),
            })?;
            let value = HeaderValue::try_from(v.as_str()).map_err(|e| LlmError::Config {
                message: format!("header {k:?}: {e}"),
            })?;
            headers.push((name, value));
        }
        Ok(Self {
            client,
            token,
            auth,
            headers,
            limits,
            clock: Arc::new(SystemClock),
        })
    }

    pub(crate) fn set_clock(&mut self, clock: Arc<dyn Clock>) {
        self.clock = clock;
    }

    pub(crate) fn limits(&self) -> &StreamLimits {
        &self.limits
    }

    fn auth_header(&self, token: &Secret) -> Result<(HeaderName, HeaderValue), LlmError> {
        let (name, text) = match self.auth {
            AuthStyle::Bearer => (
                reqwest::header::AUTHORIZATION,
                format!("Bearer {}", token.expose()),
            ),
            AuthStyle::XApiKey => (
                HeaderName::from_static("x-api-key"),
                token.expose().to_owned(),
            ),
        };
        let mut value = HeaderValue::try_from(text).map_err(|_| LlmError::Config {
            // Never quote the value: it is the key.
            message: "the API key contains characters not allowed in an HTTP header".into(),
        })?;
        value.set_sensitive(true);
        Ok((name, value))
    }

    /// POSTs `body` and returns the response once its status is 2xx. On 401 the token
    /// source is asked for a fresh credential once, and the request is sent once more only
    /// when that credential differs from the rejected one.
    pub(crate) async fn post(
        &self,
        url: &str,
        body: Bytes,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, LlmError> {
        let mut refreshed = false;
        let mut fresh: Option<Secret> = None;
        loop {
            let token = match (&self.token, fresh.take()) {
                (_, Some(t)) => Some(t),
                (Some(source), None) => Some(source.token().await?),
                (None, None) => None,
            };
            let mut request = self
                .client
                .post(url)
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "text/event-stream")
                .body(body.clone());
            for (k, v) in &self.headers {
                request = request.header(k, v);
            }
            if let Some(t) = &token {
                let (k, v) = self.auth_header(t)?;
                request = request.header(k, v);
            }
            let idle = self.limits.idle_timeout;
            let response = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                r = tokio::time::timeout(idle, request.send()) => match r {
                    Err(_) => return Err(LlmError::IdleTimeout { idle }),
                    Ok(Err(e)) => return Err(LlmError::Connect { message: error_chain(&e) }),
                    Ok(Ok(r)) => r,
                },
            };
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            if status == reqwest::StatusCode::UNAUTHORIZED
                && !refreshed
                && let (Some(source), Some(rejected)) = (&self.token, &token)
            {
                source.invalidate(rejected).await;
                refreshed = true;
                // Re-send only with a different credential: a fixed key (or an unchanged
                // variable) would be rejected the same way.
                let next = source.token().await?;
                if next.expose() != rejected.expose() {
                    tracing::info!(
                        "model provider answered 401; retrying once with a refreshed credential"
                    );
                    fresh = Some(next);
                    continue;
                }
                tracing::info!(
                    "model provider answered 401 and the credential cannot be refreshed"
                );
            }
            let retry_after = parse_retry_after(response.headers(), self.clock.now());
            let text = self.read_error_body(response, cancel).await?;
            let mut info = ErrorInfo::from_body(Some(status.as_u16()), &text);
            if retry_after.is_some() {
                info.retry_after = retry_after;
            }
            return Err(info.classify());
        }
    }

    /// Reads at most 64 KiB of an error body, within the idle timeout.
    async fn read_error_body(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<String, LlmError> {
        const MAX: usize = 64 * 1024;
        let mut body = Vec::new();
        let mut stream =
            std::pin::pin!(byte_stream(response, self.limits.idle_timeout, usize::MAX));
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                n = stream.next() => n,
            };
            match next {
                Some(Ok(chunk)) => {
                    body.extend_from_slice(&chunk);
                    if body.len() >= MAX {
                        body.truncate(MAX);
                        break;
                    }
                }
                // A half-read error body still tells more than nothing.
                Some(Err(_)) | None => break,
            }
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }
}

/// `Err` when a credential sent to `url` would cross the network unencrypted: any scheme but
/// `https`, unless the host is loopback.
pub(crate) fn refuse_cleartext_credential(url: &reqwest::Url) -> Result<(), LlmError> {
    if url.scheme() == "https" || is_loopback(url) {
        return Ok(());
    }
    Err(LlmError::InsecureEndpoint {
        host: url.host_str().unwrap_or("").to_owned(),
    })
}

pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    match url.host_str() {
        Some(h) if h.eq_ignore_ascii_case("localhost") => true,
        Some(h) => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

/// Why the body stream stopped early.
#[derive(Debug)]
pub(crate) enum BodyError {
    Http(reqwest::Error),
    Idle,
    TooLarge,
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(e) => f.write_str(&error_chain(e)),
            Self::Idle => f.write_str("idle timeout"),
            Self::TooLarge => f.write_str("response too large"),
        }
    }
}

/// The body as a stream of chunks, each awaited under the idle timeout, total capped.
fn byte_stream(
    response: reqwest::Response,
    idle: Duration,
    max_bytes: usize,
) -> impl Stream<Item = Result<Bytes, BodyError>> + Send {
    futures_util::stream::unfold(Some((response, 0usize)), move |state| async move {
        let (mut response, total) = state?;
        match tokio::time::timeout(idle, response.chunk()).await {
            Err(_) => Some((Err(BodyError::Idle), None)),
            Ok(Err(e)) => Some((Err(BodyError::Http(e)), None)),
            Ok(Ok(None)) => None,
            Ok(Ok(Some(chunk))) => {
                let total = total.saturating_add(chunk.len());
                if total > max_bytes {
                    Some((Err(BodyError::TooLarge), None))
                } else {
                    Some((Ok(chunk), Some((response, total))))
                }
            }
        }
    })
}

/// What an assembler wants after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The end marker arrived (`[DONE]`, `message_stop`).
    Done,
}

/// How the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The provider's end marker.
    Marker,
    /// The body ended cleanly without one.
    Eof,
}

/// Turns SSE events of one provider format into [`StreamEvent`]s and a [`ChatResponse`].
pub(crate) trait Assembler {
    /// Handles one dispatched SSE event (`event` is the `event:` field, "message" if none).
    fn on_event(
        &mut self,
        event: &str,
        data: &str,
        sink: &mut dyn EventSink,
    ) -> Result<Flow, LlmError>;

    /// Handles a whole (non-streamed) JSON reply.
    fn on_whole(&mut self, body: &str, sink: &mut dyn EventSink) -> Result<(), LlmError>;

    /// Builds the response once the stream ended.
    fn finish(self, end: End) -> Result<ChatResponse, LlmError>;
}

/// Reads the SSE body into the assembler until the end marker, EOF, an error, the idle
/// timeout or cancellation. A 200 with a JSON body (a server or proxy that ignored
/// `"stream": true`) is read whole and handed to [`Assembler::on_whole`].
pub(crate) async fn drive<A: Assembler>(
    response: reqwest::Response,
    limits: &StreamLimits,
    cancel: &CancellationToken,
    mut assembler: A,
    sink: &mut dyn EventSink,
) -> Result<ChatResponse, LlmError> {
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.trim_start().starts_with("application/json"));
    let bytes = byte_stream(response, limits.idle_timeout, limits.max_response_bytes);
    if is_json {
        let mut bytes = std::pin::pin!(bytes);
        let mut body = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                n = bytes.next() => n,
            };
            match next {
                None => break,
                Some(Ok(chunk)) => body.extend_from_slice(&chunk),
                Some(Err(e)) => return Err(body_error(e, limits)),
            }
        }
        return assemble_whole(assembler, body, sink);
    }
    let mut events = std::pin::pin!(bytes.eventsource());
    let end = loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(LlmError::Cancelled),
            n = events.next() => n,
        };
        match next {
            None => break End::Eof,
            Some(Ok(ev)) => {
                if assembler.on_event(&ev.event, &ev.data, sink)? == Flow::Done {
                    break End::Marker;
                }
            }
            Some(Err(e)) => return Err(stream_error(e, |e| body_error(e, limits))),
        }
    };
    if end == End::Marker {
        // The end of the body normally follows the marker at once; reading it lets the
        // connection go back to the pool instead of being torn down (one handshake less
        // per agent iteration). Bounded, and anything after the marker is ignored.
        let drain = async { while let Some(Ok(_)) = events.next().await {} };
        let _ = tokio::time::timeout(Duration::from_millis(100), drain).await;
    }
    assembler.finish(end)
}

/// A whole (non-streamed) JSON reply through the assembler.
fn assemble_whole<A: Assembler>(
    mut assembler: A,
    body: Vec<u8>,
    sink: &mut dyn EventSink,
) -> Result<ChatResponse, LlmError> {
    let text = String::from_utf8(body).map_err(|e| LlmError::Protocol {
        message: format!("reply is not UTF-8: {e}"),
    })?;
    assembler.on_whole(&text, sink)?;
    assembler.finish(End::Marker)
}

/// The typed error for an event stream that failed; `transport` maps the body's own error.
fn stream_error<E>(e: EventStreamError<E>, transport: impl FnOnce(E) -> LlmError) -> LlmError {
    match e {
        EventStreamError::Transport(e) => transport(e),
        EventStreamError::Utf8(e) => LlmError::Protocol {
            message: format!("stream is not UTF-8: {e}"),
        },
        EventStreamError::Parser(e) => LlmError::Protocol {
            message: format!("malformed event stream: {e}"),
        },
    }
}

/// Which provider's wire format a body is in (for [`assemble_body`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI-compatible Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// Runs a response body, split into `chunks` as the network would deliver it, through the
/// same SSE parser, assembler and final checks as a streamed reply (or, with `json`, a
/// whole JSON reply), without HTTP. The fuzzing entry: any bytes must end in a response or
/// a typed error, never a panic.
#[doc(hidden)]
pub fn assemble_body(
    format: WireFormat,
    json: bool,
    chunks: &[&[u8]],
    sink: &mut dyn EventSink,
) -> Result<ChatResponse, LlmError> {
    let response = match format {
        WireFormat::OpenAi => assemble_chunks(OpenAiAssembler::default(), json, chunks, sink),
        WireFormat::Anthropic => assemble_chunks(AnthropicAssembler::default(), json, chunks, sink),
    }?;
    finalize(response, sink)
}

fn assemble_chunks<A: Assembler>(
    mut assembler: A,
    json: bool,
    chunks: &[&[u8]],
    sink: &mut dyn EventSink,
) -> Result<ChatResponse, LlmError> {
    if json {
        return assemble_whole(assembler, chunks.concat(), sink);
    }
    let bytes = futures_util::stream::iter(
        chunks
            .iter()
            .map(|c| Ok::<Bytes, std::convert::Infallible>(Bytes::copy_from_slice(c))),
    );
    let mut events = std::pin::pin!(bytes.eventsource());
    loop {
        // The source is in memory, so every poll is ready; a pending one would be a bug in
        // the parser, reported as a protocol error rather than a hang.
        let Some(next) = events.next().now_or_never() else {
            return Err(LlmError::Protocol {
                message: "event stream stalled on an in-memory body".to_owned(),
            });
        };
        match next {
            None => return assembler.finish(End::Eof),
            Some(Ok(ev)) => {
                if assembler.on_event(&ev.event, &ev.data, sink)? == Flow::Done {
                    return assembler.finish(End::Marker);
                }
            }
            Some(Err(e)) => return Err(stream_error(e, |never| match never {})),
        }
    }
}

fn body_error(e: BodyError, limits: &StreamLimits) -> LlmError {
    match e {
        BodyError::Idle => LlmError::IdleTimeout {
            idle: limits.idle_timeout,
        },
        BodyError::TooLarge => LlmError::ResponseTooLarge {
            limit: limits.max_response_bytes,
        },
        BodyError::Http(e) => LlmError::StreamCut {
            message: error_chain(&e),
        },
    }
}

/// Applies the rules for replies that carry nothing usable, then reports `Done`.
///
/// No text and no tool calls is never returned as an `Ok`: it is a refusal (with its text),
/// a content filter, or a typed [`LlmError::EmptyReply`] carrying the finish reason.
pub(crate) fn finalize(
    response: ChatResponse,
    sink: &mut dyn EventSink,
) -> Result<ChatResponse, LlmError> {
    if response.is_empty_reply() {
        if let Some(refusal) = response.refusal.as_ref().filter(|r| !r.trim().is_empty()) {
            return Err(LlmError::Refused {
                refusal: refusal.clone(),
            });
        }
        if response.finish_reason == Some(FinishReason::ContentFilter) {
            return Err(LlmError::ContentFilter {
                message: format!(
                    "the reply was withheld (finish_reason: {})",
                    response
                        .native_finish_reason
                        .as_deref()
                        .or(response.finish_reason.as_ref().map(FinishReason::as_str))
                        .unwrap_or("content_filter")
                ),
            });
        }
        return Err(LlmError::EmptyReply {
            finish_reason: response.native_finish_reason.clone().or_else(|| {
                response
                    .finish_reason
                    .as_ref()
                    .map(|f| f.as_str().to_owned())
            }),
            reasoning_chars: response.reasoning.chars().count(),
            usage: response.usage.clone(),
        });
    }
    sink.event(StreamEvent::Done {
        finish_reason: response.finish_reason.clone(),
    });
    Ok(response)
}

/// A short excerpt of a payload for error messages.
pub(crate) fn excerpt(s: &str) -> String {
    const MAX: usize = 300;
    if s.len() <= MAX {
        return s.to_owned();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
