//! Typed provider errors and their classification from HTTP status, error bodies and
//! in-stream error events.
//!
//! Every variant keeps the provider's own words (`message`), because the operator must be
//! able to tell "overloaded, retry" from "content filter, rephrase" — a generic "empty or
//! unusable response" hides exactly that.

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::auth::CredentialError;
use crate::types::Usage;

/// Everything a provider call can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// 429 (or an in-stream rate-limit error). Retry after `retry_after` when given.
    #[error("rate limited by the model provider{}: {message}", Status(*status))]
    RateLimited {
        /// HTTP status, `None` for an in-stream error.
        status: Option<u16>,
        /// Provider's message.
        message: String,
        /// From `retry-after-ms`, `retry-after`, or the message ("try again in 579ms").
        retry_after: Option<Duration>,
    },
    /// Out of credits or quota (OpenAI `insufficient_quota`, HTTP 402). Waiting won't help.
    #[error("model provider quota exhausted{}: {message}", Status(*status))]
    QuotaExceeded {
        /// HTTP status.
        status: Option<u16>,
        /// Provider's message.
        message: String,
    },
    /// 5xx, 529, 408, 409 or an in-stream server/overloaded error: transient.
    #[error("model provider error{}{}: {message}", Status(*status), Kind(error_type.as_deref()))]
    Server {
        /// HTTP status, `None` for an in-stream error.
        status: Option<u16>,
        /// Provider error type (`server_error`, `overloaded_error`, …).
        error_type: Option<String>,
        /// Provider's message.
        message: String,
        /// From the `retry-after` headers, when sent.
        retry_after: Option<Duration>,
    },
    /// The request was rejected (400, 404, 422, …) for a reason other than the ones below.
    #[error("model provider rejected the request{}{}: {message}", Status(*status), Kind(error_type.as_deref()))]
    BadRequest {
        /// HTTP status.
        status: Option<u16>,
        /// Provider error type (`invalid_request_error`, …).
        error_type: Option<String>,
        /// Provider error code (`model_not_found`, …).
        code: Option<String>,
        /// Provider's message.
        message: String,
    },
    /// The conversation no longer fits the model's context window.
    #[error("conversation too long for the model{}: {message}", Status(*status))]
    ContextLength {
        /// HTTP status.
        status: Option<u16>,
        /// Provider's message.
        message: String,
    },
    /// The provider's content filter blocked the request or the reply.
    #[error("blocked by the provider's content filter: {message}")]
    ContentFilter {
        /// Provider's message or the finish reason that reported it.
        message: String,
    },
    /// The model refused and said why (OpenAI `refusal`).
    #[error("the model refused: {refusal}")]
    Refused {
        /// The refusal text.
        refusal: String,
    },
    /// 401/403 that a fresh token did not cure.
    #[error("model provider did not accept the credentials{}: {message}", Status(*status))]
    Unauthorized {
        /// HTTP status.
        status: Option<u16>,
        /// Provider's message.
        message: String,
    },
    /// The model answered with no text and no tool calls. Not retried blindly: the same
    /// prompt tends to produce the same nothing, so the agent retries with a changed note.
    #[error("the model returned an empty reply (finish_reason: {})", finish_reason.as_deref().unwrap_or("none"))]
    EmptyReply {
        /// The provider's finish/stop reason, verbatim.
        finish_reason: Option<String>,
        /// Characters of reasoning it produced (a reasoning model can spend its whole budget
        /// thinking).
        reasoning_chars: usize,
        /// Usage, when reported.
        usage: Option<Usage>,
    },
    /// Could not connect, or the connection dropped before a response arrived.
    #[error("could not reach the model provider: {message}")]
    Connect {
        /// Transport error chain.
        message: String,
    },
    /// The response stream broke off before its end marker.
    #[error("the model's reply stream was cut: {message}")]
    StreamCut {
        /// What ended it.
        message: String,
    },
    /// No byte arrived for `idle` (headers or body).
    #[error("the model provider sent nothing for {}s", idle.as_secs_f64())]
    IdleTimeout {
        /// The configured idle timeout.
        idle: Duration,
    },
    /// One model call (all its attempts and waits) ran past its overall limit, whatever the
    /// server was sending (keep-alives, a trickle of bytes, nothing).
    #[error("the model did not finish its reply within {}s; the request was abandoned", limit.as_secs_f64())]
    DeadlineExceeded {
        /// The configured limit ([`crate::RetryPolicy::max_total`]).
        limit: Duration,
    },
    /// The caller's cancellation token fired (operator pressed stop).
    #[error("cancelled")]
    Cancelled,
    /// The response grew past the configured limit.
    #[error("the model's reply exceeded {limit} bytes")]
    ResponseTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The response could not be understood (bad JSON chunk, invalid UTF-8, …).
    #[error("unreadable reply from the model provider: {message}")]
    Protocol {
        /// What was wrong.
        message: String,
    },
    /// The token source could not produce a credential (e.g. the operator must sign in).
    #[error("no credentials for the model provider: {0}")]
    Credentials(#[from] CredentialError),
    /// The provider is misconfigured (no model, bad base URL, …).
    #[error("model provider configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// A credential would travel in clear text: plain `http://` to a host that is not this
    /// machine. Keys go over HTTPS, or over HTTP only to loopback (127.0.0.0/8, ::1,
    /// `localhost`).
    #[error(
        "refusing to send an API key over plain HTTP to {host}: use https://, or a loopback \
         address for a local server"
    )]
    InsecureEndpoint {
        /// The host the key would have gone to.
        host: String,
    },
}

impl LlmError {
    /// A stable code the UI and logs can branch on. Never changes for a variant.
    pub fn code(&self) -> &'static str {
        match self {
            Self::RateLimited { .. } => "llm.rate_limited",
            Self::QuotaExceeded { .. } => "llm.quota_exceeded",
            Self::Server { .. } => "llm.provider_error",
            Self::BadRequest { .. } => "llm.bad_request",
            Self::ContextLength { .. } => "llm.context_length",
            Self::ContentFilter { .. } => "llm.content_filter",
            Self::Refused { .. } => "llm.refused",
            Self::Unauthorized { .. } => "llm.unauthorized",
            Self::EmptyReply { .. } => "llm.empty_reply",
            Self::Connect { .. } => "llm.connect",
            Self::StreamCut { .. } => "llm.stream_cut",
            Self::IdleTimeout { .. } => "llm.idle_timeout",
            Self::DeadlineExceeded { .. } => "llm.deadline_exceeded",
            Self::Cancelled => "llm.cancelled",
            Self::ResponseTooLarge { .. } => "llm.response_too_large",
            Self::Protocol { .. } => "llm.protocol",
            Self::Credentials(_) => "llm.credentials",
            Self::Config { .. } => "llm.config",
            Self::InsecureEndpoint { .. } => "llm.insecure_endpoint",
        }
    }

    /// Whether sending the same request again (after a backoff) can succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. }
            | Self::Server { .. }
            | Self::Connect { .. }
            | Self::StreamCut { .. }
            | Self::IdleTimeout { .. } => true,
            Self::QuotaExceeded { .. }
            | Self::BadRequest { .. }
            | Self::ContextLength { .. }
            | Self::ContentFilter { .. }
            | Self::Refused { .. }
            | Self::Unauthorized { .. }
            | Self::EmptyReply { .. }
            | Self::DeadlineExceeded { .. }
            | Self::Cancelled
            | Self::ResponseTooLarge { .. }
            | Self::Protocol { .. }
            | Self::Credentials(_)
            | Self::Config { .. }
            | Self::InsecureEndpoint { .. } => false,
        }
    }

    /// Why a retry happens, in a few words for the operator ("no reply from the model for
    /// 2 min"); the full text stays in `Display`.
    pub fn retry_reason(&self) -> String {
        match self {
            Self::IdleTimeout { idle } => {
                format!("no reply from the model for {}", human_duration(*idle))
            }
            Self::StreamCut { .. } => "the model's reply was cut".to_owned(),
            Self::RateLimited { .. } => "the model provider is rate-limiting".to_owned(),
            Self::Server { status, .. } => format!("the model provider failed{}", Status(*status)),
            Self::Connect { .. } => "could not reach the model provider".to_owned(),
            other => other.to_string(),
        }
    }

    /// The delay the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Server { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }

    /// The HTTP status that produced this error, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::RateLimited { status, .. }
            | Self::QuotaExceeded { status, .. }
            | Self::Server { status, .. }
            | Self::BadRequest { status, .. }
            | Self::ContextLength { status, .. }
            | Self::Unauthorized { status, .. } => *status,
            _ => None,
        }
    }
}

/// `2 min`, `90 s`, `1.5 s`, `200 ms`: whole minutes when exact, else seconds.
pub(crate) fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 60_000 && ms.is_multiple_of(60_000) {
        format!("{} min", ms / 60_000)
    } else if ms >= 1000 {
        let s = d.as_secs_f64();
        if ms.is_multiple_of(1000) {
            format!("{s:.0} s")
        } else {
            format!("{s:.1} s")
        }
    } else {
        format!("{ms} ms")
    }
}

/// Renders ` (HTTP 429)` or nothing.
struct Status(Option<u16>);

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, " (HTTP {s})"),
            None => Ok(()),
        }
    }
}

/// Renders ` [overloaded_error]` or nothing.
struct Kind<'a>(Option<&'a str>);

impl fmt::Display for Kind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(k) if !k.is_empty() => write!(f, " [{k}]"),
            _ => Ok(()),
        }
    }
}

/// The fields of a provider error, from an HTTP error body or an in-stream error event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorInfo {
    /// HTTP status; `None` for an error inside a 200 stream.
    pub status: Option<u16>,
    /// `error.type`.
    pub error_type: Option<String>,
    /// `error.code` (string or number, rendered as text).
    pub code: Option<String>,
    /// `error.message`, or the raw body when it is not JSON.
    pub message: String,
    /// Parsed from the response headers.
    pub retry_after: Option<Duration>,
}

/// Longest raw body quoted in an error message.
const MAX_QUOTED_BODY: usize = 2000;

impl ErrorInfo {
    /// Reads an error body. Understands OpenAI (`{"error":{message,type,code}}`), Anthropic
    /// (`{"type":"error","error":{type,message}}`), OpenRouter (`code` as number, upstream
    /// text in `metadata.raw`), Ollama (`{"error":"text"}`) and FastAPI (`{"detail":…}`);
    /// anything else is quoted as text.
    pub fn from_body(status: Option<u16>, body: &str) -> Self {
        let mut info = Self {
            status,
            ..Self::default()
        };
        match serde_json::from_str::<serde_json::Value>(body) {
            Ok(v) => info.fill_from_json(&v),
            Err(_) => info.message = quote(body.trim()),
        }
        if info.message.is_empty() {
            info.message = match status {
                Some(s) => format!(
                    "HTTP {s}{}",
                    reqwest::StatusCode::from_u16(s)
                        .ok()
                        .and_then(|c| c.canonical_reason())
                        .map(|r| format!(" {r}"))
                        .unwrap_or_default()
                ),
                None => "unspecified error".to_owned(),
            };
        }
        if info.retry_after.is_none() {
            info.retry_after = retry_hint_in_message(&info.message);
        }
        info
    }

    /// Fills the fields from an already parsed JSON error value (a whole body or the payload
    /// of an in-stream error event).
    pub fn fill_from_json(&mut self, v: &serde_json::Value) {
        let err = v.get("error").unwrap_or(v);
        if let Some(s) = err.as_str() {
            self.message = quote(s);
            return;
        }
        self.error_type = err.get("type").and_then(value_text);
        self.code = err.get("code").and_then(value_text);
        let mut message = err
            .get("message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(value_text)
            .unwrap_or_default();
        // OpenRouter wraps the upstream provider's words in metadata.raw.
        if let Some(meta) = err.get("metadata") {
            let who = meta.get("provider_name").and_then(value_text);
            if let Some(raw) = meta.get("raw").and_then(value_text) {
                let raw = quote(&raw);
                message = match who {
                    Some(p) => format!("{message} ({p}: {raw})"),
                    None => format!("{message} ({raw})"),
                };
            }
        }
        if message.is_empty() && !v.is_null() {
            message = quote(&v.to_string());
        }
        self.message = message;
    }

    /// Turns the fields into the matching [`LlmError`] variant.
    pub fn classify(self) -> LlmError {
        let ErrorInfo {
            status,
            error_type,
            code,
            message,
            retry_after,
        } = self;
        let haystack = format!(
            "{} {} {}",
            error_type.as_deref().unwrap_or(""),
            code.as_deref().unwrap_or(""),
            message
        )
        .to_ascii_lowercase();
        let has = |needles: &[&str]| needles.iter().any(|n| haystack.contains(n));

        if has(&[
            "context_length_exceeded",
            "context length",
            "context window",
            "maximum context",
            "prompt is too long",
            "input tokens exceed",
            "too many tokens",
            "reduce the length",
        ]) {
            return LlmError::ContextLength { status, message };
        }
        if has(&[
            "content_filter",
            "content_policy",
            "content management policy",
            "moderation",
            "flagged",
        ]) {
            return LlmError::ContentFilter { message };
        }
        let numeric_code = code.as_deref().and_then(|c| c.parse::<u16>().ok());
        match status.or(numeric_code) {
            Some(401) | Some(403) => LlmError::Unauthorized { status, message },
            Some(402) => LlmError::QuotaExceeded { status, message },
            Some(429) if has(&["insufficient_quota", "billing", "credits"]) => {
                LlmError::QuotaExceeded { status, message }
            }
            Some(429) => LlmError::RateLimited {
                status,
                message,
                retry_after,
            },
            Some(408) | Some(409) => LlmError::Server {
                status,
                error_type: kind_of(error_type, code),
                message,
                retry_after,
            },
            Some(s) if s >= 500 => LlmError::Server {
                status,
                error_type: kind_of(error_type, code),
                message,
                retry_after,
            },
            Some(_) => LlmError::BadRequest {
                status,
                error_type,
                code,
                message,
            },
            // An error event inside a 200 stream: classify by its type.
            None if has(&["rate_limit"]) => LlmError::RateLimited {
                status,
                message,
                retry_after,
            },
            None if has(&[
                "authentication_error",
                "permission_error",
                "invalid_api_key",
            ]) =>
            {
                LlmError::Unauthorized { status, message }
            }
            None if has(&["invalid_request_error", "not_found_error"]) => LlmError::BadRequest {
                status,
                error_type,
                code,
                message,
            },
            // server_error, overloaded_error, api_error, "Provider disconnected", unknown:
            // a stream that dies mid-way is transient far more often than not.
            None => LlmError::Server {
                status,
                error_type: kind_of(error_type, code),
                message,
                retry_after,
            },
        }
    }
}

/// The error's kind for display: its `type`, else a textual `code` (OpenRouter puts
/// `server_error` there).
fn kind_of(error_type: Option<String>, code: Option<String>) -> Option<String> {
    error_type.or(code.filter(|c| c.parse::<u16>().is_err()))
}

fn value_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn quote(s: &str) -> String {
    if s.len() <= MAX_QUOTED_BODY {
        return s.to_owned();
    }
    let mut end = MAX_QUOTED_BODY;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// Parses the retry headers the way the official SDKs do: `retry-after-ms` first, then
/// `retry-after` as (fractional) seconds, then as an HTTP date relative to `now`.
pub fn parse_retry_after(
    headers: &reqwest::header::HeaderMap,
    now: SystemTime,
) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return duration_from_secs(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn duration_from_secs(secs: f64) -> Option<Duration> {
    if secs.is_finite() && secs >= 0.0 {
        Duration::try_from_secs_f64(secs).ok()
    } else {
        None
    }
}

/// OpenAI puts the wait into the 429 text ("Please try again in 579ms." / "in 1.5s").
fn retry_hint_in_message(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let rest = &lower[lower.find("try again in ")? + "try again in ".len()..];
    let num_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..num_len].parse().ok()?;
    let unit = &rest[num_len..];
    if unit.starts_with("ms") {
        duration_from_secs(value / 1000.0)
    } else if unit.starts_with('s') {
        duration_from_secs(value)
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn retry_reasons_are_short_and_name_the_silence() {
        let idle = |ms| LlmError::IdleTimeout {
            idle: Duration::from_millis(ms),
        };
        assert_eq!(
            idle(120_000).retry_reason(),
            "no reply from the model for 2 min"
        );
        assert_eq!(
            idle(90_000).retry_reason(),
            "no reply from the model for 90 s"
        );
        assert_eq!(
            idle(1_500).retry_reason(),
            "no reply from the model for 1.5 s"
        );
        assert_eq!(
            idle(200).retry_reason(),
            "no reply from the model for 200 ms"
        );
        let server = LlmError::Server {
            status: Some(503),
            error_type: None,
            message: "x".into(),
            retry_after: None,
        };
        assert_eq!(
            server.retry_reason(),
            "the model provider failed (HTTP 503)"
        );
        let cut = LlmError::StreamCut {
            message: "reset".into(),
        };
        assert_eq!(cut.retry_reason(), "the model's reply was cut");
    }

    #[test]
    fn retry_after_prefers_ms_then_seconds_then_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2.5"));
        assert_eq!(
            parse_retry_after(&h, now),
            Some(Duration::from_millis(2500))
        );
        h.insert("retry-after-ms", HeaderValue::from_static("120"));
        assert_eq!(parse_retry_after(&h, now), Some(Duration::from_millis(120)));

        let mut h = HeaderMap::new();
        let date = httpdate::fmt_http_date(now + Duration::from_secs(7));
        h.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        assert_eq!(parse_retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(parse_retry_after(&h, now), None);
    }

    #[test]
    fn retry_hint_from_openai_message() {
        assert_eq!(
            retry_hint_in_message("Please try again in 579ms. Visit"),
            Some(Duration::from_millis(579))
        );
        assert_eq!(
            retry_hint_in_message("Please try again in 1.5s."),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(retry_hint_in_message("try again later"), None);
    }

    #[test]
    fn classification_by_status_and_type() {
        let e = ErrorInfo::from_body(Some(503), "").classify();
        assert!(matches!(
            e,
            LlmError::Server {
                status: Some(503),
                ..
            }
        ));
        assert!(e.to_string().contains("Service Unavailable"), "{e}");
        let e = ErrorInfo::from_body(Some(429), r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#).classify();
        assert_eq!(e.code(), "llm.quota_exceeded");
        let e = ErrorInfo::from_body(
            None,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#,
        )
        .classify();
        assert_eq!(e.code(), "llm.bad_request");
        let e =
            ErrorInfo::from_body(Some(404), r#"{"error":"model 'llama9' not found"}"#).classify();
        assert_eq!(
            e.to_string(),
            "model provider rejected the request (HTTP 404): model 'llama9' not found"
        );
        let e = ErrorInfo::from_body(Some(502), r#"{"error":{"code":502,"message":"Provider returned error","metadata":{"raw":"upstream boom","provider_name":"Anthropic"}}}"#).classify();
        assert!(
            e.to_string()
                .contains("Provider returned error (Anthropic: upstream boom)"),
            "{e}"
        );
        let e = ErrorInfo::from_body(Some(400), "<html>nope</html>").classify();
        assert!(e.to_string().ends_with("<html>nope</html>"));
    }
}
