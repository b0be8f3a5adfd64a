//! Turns a scripted reply into the exact bytes (and faults) a real provider would send.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::request::{Format, RecordedRequest};
use crate::script::{Reply, ScriptedCall, Step};

/// One thing the response body does.
#[derive(Debug, Clone)]
pub(crate) enum Action {
    /// Write these bytes.
    Send(Bytes),
    /// Pause.
    Sleep(Duration),
    /// Drop the connection mid-body (no chunked terminator).
    Cut,
    /// Send nothing more until the server shuts down.
    Hang,
    /// Send these bytes (an SSE `: keep-alive` comment, or a space in a JSON body) at this
    /// interval until the server shuts down.
    KeepaliveForever(Duration, &'static [u8]),
}

/// A response to send.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<Action>,
}

impl Rendered {
    fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: vec![Action::Send(Bytes::from(body.to_string()))],
        }
    }

    fn sse(events: Vec<Action>) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: events,
        }
    }
}

/// A provider-style JSON error body.
pub(crate) fn error_body(
    format: Format,
    error_type: &str,
    code: Option<&str>,
    message: &str,
) -> Value {
    match format {
        Format::OpenAi => {
            json!({"error": {"message": message, "type": error_type, "param": null, "code": code}})
        }
        Format::Anthropic => {
            json!({"type": "error", "error": {"type": error_type, "message": message}})
        }
    }
}

/// An error response (used for failed expectations and an exhausted script).
pub(crate) fn error_response(
    format: Format,
    status: u16,
    error_type: &str,
    message: &str,
) -> Rendered {
    Rendered::json(
        status,
        &error_body(format, error_type, Some(error_type), message),
    )
}

fn split_chars(s: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let mut out = Vec::with_capacity(s.len() / n + 1);
    let mut piece = String::new();
    let mut count = 0;
    for c in s.chars() {
        piece.push(c);
        count += 1;
        if count == n {
            out.push(std::mem::take(&mut piece));
            count = 0;
        }
    }
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

/// Deterministic filler text of exactly `bytes` bytes.
fn filler(bytes: usize) -> String {
    const WORDS: &str =
        "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ";
    let mut s = String::with_capacity(bytes);
    while s.len() < bytes {
        let take = (bytes - s.len()).min(WORDS.len());
        s.push_str(&WORDS[..take]);
    }
    s
}

/// Rough token counts so clients see plausible usage.
fn tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4).max(1)
}

/// The parts of a normal (non-fault) reply.
struct Normal<'a> {
    reasoning: Option<&'a str>,
    text: &'a str,
    calls: Vec<(String, String, String)>,
    finish: Option<&'a str>,
}

/// What to do after the normal parts.
enum Tail<'a> {
    /// Finish reason, usage, end marker.
    Finish,
    /// Drop the connection after half of the last call's arguments.
    CutInLastCall,
    /// Drop the connection after the text.
    Cut,
    /// An error event, then the end of the body.
    Error {
        error_type: &'a str,
        message: &'a str,
    },
    /// Silence.
    Hang,
    /// Keep-alive comments forever.
    KeepaliveForever(Duration),
}

struct Writer {
    actions: Vec<Action>,
    delay: Duration,
    keepalive: bool,
}

impl Writer {
    fn push(&mut self, frame: String) {
        if !self.delay.is_zero() && !self.actions.is_empty() {
            self.actions.push(Action::Sleep(self.delay));
        }
        if self.keepalive {
            self.actions
                .push(Action::Send(Bytes::from_static(b": keep-alive\n\n")));
        }
        self.actions.push(Action::Send(Bytes::from(frame)));
    }
}

/// Renders `step` for `request` (its `seq` makes ids unique). `model` is what replies name.
pub(crate) fn render(
    step: &Step,
    request: &RecordedRequest,
    model: &str,
) -> Result<Rendered, String> {
    let format = request.format;
    let seq = request.seq;
    let default_chunk = match step.reply {
        Reply::Large { .. } => 4096,
        _ => 12,
    };
    let chunk = step.chunk_chars.unwrap_or(default_chunk).max(1);
    let call_id = |i: usize, c: &ScriptedCall| {
        c.id.clone().unwrap_or_else(|| match format {
            Format::OpenAi => format!("call_mock_{seq}_{i}"),
            Format::Anthropic => format!("toolu_mock_{seq}_{i}"),
        })
    };
    let calls_of = |calls: &[ScriptedCall]| -> Vec<(String, String, String)> {
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| (call_id(i, c), c.name.clone(), c.argument_string()))
            .collect()
    };

    let large;
    let (normal, tail) = match &step.reply {
        Reply::Text {
            text,
            reasoning,
            finish_reason,
        } => (
            Normal {
                reasoning: reasoning.as_deref(),
                text,
                calls: vec![],
                finish: finish_reason.as_deref(),
            },
            Tail::Finish,
        ),
        Reply::ToolCalls {
            text,
            reasoning,
            calls,
        } => (
            Normal {
                reasoning: reasoning.as_deref(),
                text,
                calls: calls_of(calls),
                finish: None,
            },
            Tail::Finish,
        ),
        Reply::Empty {
            finish_reason,
            reasoning,
        } => (
            Normal {
                reasoning: reasoning.as_deref(),
                text: "",
                calls: vec![],
                finish: finish_reason.as_deref(),
            },
            Tail::Finish,
        ),
        Reply::MalformedToolArgs { name, arguments } => (
            Normal {
                reasoning: None,
                text: "",
                calls: vec![(
                    call_id(0, &ScriptedCall::raw("", "")),
                    name.clone(),
                    arguments.clone(),
                )],
                finish: None,
            },
            Tail::Finish,
        ),
        Reply::UnknownTool { name, arguments } => (
            Normal {
                reasoning: None,
                text: "",
                calls: vec![(
                    call_id(0, &ScriptedCall::raw("", "")),
                    name.clone(),
                    arguments
                        .as_ref()
                        .map_or_else(|| "{}".to_owned(), Value::to_string),
                )],
                finish: None,
            },
            Tail::Finish,
        ),
        Reply::Large { bytes } => {
            large = filler(*bytes);
            (
                Normal {
                    reasoning: None,
                    text: &large,
                    calls: vec![],
                    finish: None,
                },
                Tail::Finish,
            )
        }
        Reply::StreamError {
            text,
            error_type,
            message,
        } => (
            Normal {
                reasoning: None,
                text,
                calls: vec![],
                finish: None,
            },
            Tail::Error {
                error_type: error_type.as_deref().unwrap_or(match format {
                    Format::OpenAi => "server_error",
                    Format::Anthropic => "overloaded_error",
                }),
                message,
            },
        ),
        Reply::StreamCut { text, call } => {
            let calls = call
                .as_ref()
                .map(|c| calls_of(std::slice::from_ref(c)))
                .unwrap_or_default();
            let tail = if calls.is_empty() {
                Tail::Cut
            } else {
                Tail::CutInLastCall
            };
            (
                Normal {
                    reasoning: None,
                    text,
                    calls,
                    finish: None,
                },
                tail,
            )
        }
        Reply::Hang { text } => (
            Normal {
                reasoning: None,
                text,
                calls: vec![],
                finish: None,
            },
            Tail::Hang,
        ),
        Reply::KeepaliveForever { text, every_ms } => (
            Normal {
                reasoning: None,
                text,
                calls: vec![],
                finish: None,
            },
            Tail::KeepaliveForever(Duration::from_millis((*every_ms).max(1))),
        ),
        Reply::HttpError {
            status,
            message,
            error_type,
            code,
            retry_after,
        } => {
            let reason = http_reason(*status);
            let error_type = error_type
                .clone()
                .unwrap_or_else(|| default_error_type(format, *status));
            let body = error_body(
                format,
                &error_type,
                code.as_deref(),
                message.as_deref().unwrap_or(reason),
            );
            let mut r = Rendered::json(*status, &body);
            if let Some(ra) = retry_after {
                r.headers.push(("retry-after".into(), ra.clone()));
            }
            return Ok(r);
        }
        Reply::RateLimited {
            retry_after_secs,
            message,
        } => {
            let default_message =
                format!("Rate limit reached (mock). Please try again in {retry_after_secs}s.");
            let body = error_body(
                format,
                match format {
                    Format::OpenAi => "requests",
                    Format::Anthropic => "rate_limit_error",
                },
                Some("rate_limit_exceeded"),
                message.as_deref().unwrap_or(&default_message),
            );
            let mut r = Rendered::json(429, &body);
            r.headers
                .push(("retry-after".into(), format_secs(*retry_after_secs)));
            return Ok(r);
        }
        // Resolved by the server before rendering.
        Reply::Hook { name } => return Err(format!("hook `{name}` was not resolved")),
        Reply::Raw {
            status,
            headers,
            body,
            body_file,
            chunk_bytes,
        } => {
            let bytes = match body_file {
                Some(path) => std::fs::read(path)
                    .map_err(|e| format!("cannot read body_file {}: {e}", path.display()))?,
                None => body.clone().into_bytes(),
            };
            let mut headers = headers.clone();
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                headers.push(("content-type".into(), "text/event-stream".into()));
            }
            let pieces: Vec<Action> = match chunk_bytes {
                Some(n) if *n > 0 => bytes
                    .chunks(*n)
                    .flat_map(|c| {
                        let mut v = Vec::with_capacity(2);
                        if step.chunk_delay_ms > 0 {
                            v.push(Action::Sleep(Duration::from_millis(step.chunk_delay_ms)));
                        }
                        v.push(Action::Send(Bytes::copy_from_slice(c)));
                        v
                    })
                    .collect(),
                _ => vec![Action::Send(Bytes::from(bytes))],
            };
            return Ok(Rendered {
                status: *status,
                headers,
                body: pieces,
            });
        }
    };

    let prompt_tokens = tokens(request.body.to_string().len());
    if !request.is_stream() {
        return Ok(render_whole(
            format,
            seq,
            model,
            &normal,
            tail,
            prompt_tokens,
        ));
    }
    let mut w = Writer {
        actions: Vec::new(),
        delay: Duration::from_millis(step.chunk_delay_ms),
        keepalive: step.keepalive,
    };
    match format {
        Format::OpenAi => openai_stream(&mut w, seq, model, &normal, tail, chunk, prompt_tokens),
        Format::Anthropic => {
            anthropic_stream(&mut w, seq, model, &normal, tail, chunk, prompt_tokens)
        }
    }
    Ok(Rendered::sse(w.actions))
}

fn format_secs(secs: f64) -> String {
    if secs.fract() == 0.0 && secs >= 0.0 {
        format!("{}", secs as u64)
    } else {
        format!("{secs}")
    }
}

fn http_reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Error",
    }
}

fn default_error_type(format: Format, status: u16) -> String {
    match (format, status) {
        (Format::OpenAi, 401) => "invalid_request_error",
        (Format::OpenAi, s) if s >= 500 => "server_error",
        (Format::OpenAi, _) => "invalid_request_error",
        (Format::Anthropic, 401) => "authentication_error",
        (Format::Anthropic, 429) => "rate_limit_error",
        (Format::Anthropic, 529) => "overloaded_error",
        (Format::Anthropic, s) if s >= 500 => "api_error",
        (Format::Anthropic, _) => "invalid_request_error",
    }
    .to_owned()
}

fn openai_stream(
    w: &mut Writer,
    seq: usize,
    model: &str,
    n: &Normal<'_>,
    tail: Tail<'_>,
    chunk: usize,
    prompt_tokens: u64,
) {
    let id = format!("chatcmpl-mock-{seq}");
    let frame = |delta: Value, finish: Option<&str>| {
        let v = json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000u64, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {v}\n\n")
    };
    w.push(frame(json!({"role": "assistant", "content": ""}), None));
    let mut out_chars = 0;
    if let Some(r) = n.reasoning {
        for piece in split_chars(r, chunk) {
            out_chars += piece.chars().count();
            w.push(frame(json!({"reasoning_content": piece}), None));
        }
    }
    for piece in split_chars(n.text, chunk) {
        out_chars += piece.chars().count();
        w.push(frame(json!({"content": piece}), None));
    }
    let last = n.calls.len().saturating_sub(1);
    for (i, (call_id, name, args)) in n.calls.iter().enumerate() {
        w.push(frame(
            json!({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        let args = if i == last && matches!(tail, Tail::CutInLastCall) {
            let half = args.chars().count() / 2;
            args.chars().take(half).collect()
        } else {
            args.clone()
        };
        for piece in split_chars(&args, chunk) {
            out_chars += piece.chars().count();
            w.push(frame(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    match tail {
        Tail::Finish => {
            let finish = n.finish.unwrap_or(if n.calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            });
            w.push(frame(json!({}), Some(finish)));
            let completion = tokens(out_chars);
            let usage = json!({
                "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000u64, "model": model,
                "choices": [],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                          "total_tokens": prompt_tokens + completion},
            });
            w.push(format!("data: {usage}\n\n"));
            w.push("data: [DONE]\n\n".to_owned());
        }
        Tail::Cut | Tail::CutInLastCall => w.actions.push(Action::Cut),
        Tail::Error {
            error_type,
            message,
        } => {
            let v = json!({"error": {"message": message, "type": error_type}});
            w.push(format!("data: {v}\n\n"));
        }
        Tail::Hang => w.actions.push(Action::Hang),
        Tail::KeepaliveForever(d) => w
            .actions
            .push(Action::KeepaliveForever(d, b": keep-alive\n\n")),
    }
}

fn anthropic_stream(
    w: &mut Writer,
    seq: usize,
    model: &str,
    n: &Normal<'_>,
    tail: Tail<'_>,
    chunk: usize,
    prompt_tokens: u64,
) {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    w.push(event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{seq}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": prompt_tokens, "output_tokens": 1}}}),
    ));
    w.push(event("ping", json!({"type": "ping"})));
    let mut index = 0;
    let mut out_chars = 0;
    if let Some(r) = n.reasoning {
        w.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        for piece in split_chars(r, chunk) {
            out_chars += piece.chars().count();
            w.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "thinking_delta", "thinking": piece}}),
            ));
        }
        w.push(event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": format!("mock-signature-{seq}")}}),
        ));
        w.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    if !n.text.is_empty() {
        w.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in split_chars(n.text, chunk) {
            out_chars += piece.chars().count();
            w.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        if matches!(tail, Tail::Cut) {
            w.actions.push(Action::Cut);
            return;
        }
        w.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let last = n.calls.len().saturating_sub(1);
    for (i, (call_id, name, args)) in n.calls.iter().enumerate() {
        w.push(event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}}),
        ));
        let cut = i == last && matches!(tail, Tail::CutInLastCall);
        let args = if cut {
            let half = args.chars().count() / 2;
            args.chars().take(half).collect()
        } else {
            args.clone()
        };
        for piece in split_chars(&args, chunk) {
            out_chars += piece.chars().count();
            w.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        if cut {
            w.actions.push(Action::Cut);
            return;
        }
        w.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    match tail {
        Tail::Finish => {
            let stop = match (n.finish, n.calls.is_empty()) {
                (None, true) | (Some("stop"), _) => "end_turn",
                (None, false) | (Some("tool_calls"), _) => "tool_use",
                (Some("length"), _) => "max_tokens",
                (Some(other), _) => other,
            };
            w.push(event(
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                       "usage": {"output_tokens": tokens(out_chars)}}),
            ));
            w.push(event("message_stop", json!({"type": "message_stop"})));
        }
        Tail::Cut | Tail::CutInLastCall => w.actions.push(Action::Cut),
        Tail::Error {
            error_type,
            message,
        } => w.push(event(
            "error",
            json!({"type": "error", "error": {"type": error_type, "message": message}}),
        )),
        Tail::Hang => w.actions.push(Action::Hang),
        Tail::KeepaliveForever(d) => w
            .actions
            .push(Action::KeepaliveForever(d, b": keep-alive\n\n")),
    }
}

/// A non-streaming reply (`"stream": false`), for curl users and simple clients.
fn render_whole(
    format: Format,
    seq: usize,
    model: &str,
    n: &Normal<'_>,
    tail: Tail<'_>,
    prompt_tokens: u64,
) -> Rendered {
    match tail {
        Tail::Hang => {
            return Rendered {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body: vec![Action::Hang],
            };
        }
        // A JSON body cannot carry comments: whitespace keeps the connection just as busy.
        Tail::KeepaliveForever(d) => {
            return Rendered {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body: vec![Action::KeepaliveForever(d, b" ")],
            };
        }
        Tail::Error {
            error_type,
            message,
        } => return Rendered::json(500, &error_body(format, error_type, None, message)),
        Tail::Cut | Tail::CutInLastCall | Tail::Finish => {}
    }
    let out_chars =
        n.text.chars().count() + n.calls.iter().map(|c| c.2.chars().count()).sum::<usize>();
    let completion = tokens(out_chars);
    let body = match format {
        Format::OpenAi => {
            let calls: Vec<Value> = n
                .calls
                .iter()
                .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
                .collect();
            let mut message = json!({"role": "assistant", "content": n.text});
            if !calls.is_empty() {
                message["tool_calls"] = Value::Array(calls);
            }
            if let Some(r) = n.reasoning {
                message["reasoning_content"] = Value::String(r.to_owned());
            }
            let finish = n.finish.unwrap_or(if n.calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            });
            json!({"id": format!("chatcmpl-mock-{seq}"), "object": "chat.completion", "created": 1_700_000_000u64,
                   "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                             "total_tokens": prompt_tokens + completion}})
        }
        Format::Anthropic => {
            let mut content = Vec::new();
            if let Some(r) = n.reasoning {
                content.push(json!({"type": "thinking", "thinking": r, "signature": format!("mock-signature-{seq}")}));
            }
            if !n.text.is_empty() {
                content.push(json!({"type": "text", "text": n.text}));
            }
            for (id, name, args) in &n.calls {
                let input: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            let stop = if n.calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            };
            json!({"id": format!("msg_mock_{seq}"), "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop, "stop_sequence": null,
                   "usage": {"input_tokens": prompt_tokens, "output_tokens": completion}})
        }
    };
    let mut r = Rendered::json(200, &body);
    if matches!(tail, Tail::Cut | Tail::CutInLastCall) {
        let text = body.to_string();
        let half: String = text.chars().take(text.chars().count() / 2).collect();
        r.body = vec![Action::Send(Bytes::from(half)), Action::Cut];
    }
    r
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_utf8_and_all_text() {
        let s = "héllo wörld ✓";
        let parts = split_chars(s, 3);
        assert_eq!(parts.concat(), s);
        assert!(parts.iter().all(|p| p.chars().count() <= 3));
        assert_eq!(filler(1000).len(), 1000);
        assert_eq!(format_secs(2.0), "2");
        assert_eq!(format_secs(0.25), "0.25");
    }
}
