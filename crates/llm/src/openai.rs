//! OpenAI-compatible Chat Completions with SSE streaming and tools.
//!
//! One client for OpenAI, OpenRouter, Ollama, vLLM, LiteLLM, llama.cpp server, LM Studio,
//! Mistral, Groq and the like. The stream assembler tolerates what these servers really
//! send (each quirk is pinned by a recorded stream in `tests/fixtures/`):
//!
//! - tool-call arguments split into arbitrary fragments, several calls in one reply, calls
//!   sent whole in one chunk (Ollama, Groq);
//! - tool-call `index` missing (Mistral) or not starting at 0 (gateways that keep counting
//!   from an earlier reply); a trailing empty-argument delta must not duplicate a call;
//! - usage in a `choices: []` chunk before `[DONE]`, on every chunk (vLLM continuous
//!   usage), in the finish chunk, or under `x_groq`;
//! - reasoning as `reasoning_content` (llama.cpp, vLLM, DeepSeek) or `reasoning` +
//!   `reasoning_details` (OpenRouter);
//! - keep-alive comments, duplicated finish chunks, `refusal`, errors inside a 200 stream.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::auth::TokenSource;
use crate::error::{ErrorInfo, LlmError};
use crate::provider::Provider;
use crate::service::Service;
use crate::transport::{self, Assembler, AuthStyle, End, Flow, Http, StreamLimits};
use crate::types::{
    ChatRequest, ChatResponse, EventSink, FinishReason, Message, StreamEvent, ToolCall, Usage,
};
use nomos_base::Clock;

/// Which request field carries the output cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaxTokensField {
    /// `max_tokens` (most servers).
    #[default]
    MaxTokens,
    /// `max_completion_tokens` (api.openai.com; reasoning models reject `max_tokens`).
    MaxCompletionTokens,
}

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Base URL including the version segment, e.g. `https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1`. `/chat/completions` is appended.
    pub base_url: String,
    /// Default model.
    pub model: String,
    /// Ask for a usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    /// Output-cap field name.
    pub max_tokens_field: MaxTokensField,
    /// How the key is sent.
    pub auth: AuthStyle,
    /// Extra headers (OpenRouter's `HTTP-Referer` / `X-Title`, gateway headers).
    pub extra_headers: Vec<(String, String)>,
    /// Timeouts and size cap.
    pub limits: StreamLimits,
}

impl OpenAiConfig {
    /// Defaults for `base_url` and `model`; the cap field follows the host.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        let base_url = base_url.into();
        let max_tokens_field = if Service::from_base_url(&base_url) == Service::OpenAi {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        Self {
            base_url,
            model: model.into(),
            include_usage: true,
            max_tokens_field,
            auth: AuthStyle::Bearer,
            extra_headers: Vec::new(),
            limits: StreamLimits::default(),
        }
    }
}

/// The OpenAI-compatible provider.
#[derive(Debug)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    url: String,
    http: Http,
}

impl OpenAiProvider {
    /// Builds the client. `token` is `None` for servers without authentication (Ollama).
    pub fn new(
        config: OpenAiConfig,
        token: Option<Arc<dyn TokenSource>>,
    ) -> Result<Self, LlmError> {
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        let http = Http::new(
            &config.base_url,
            token,
            config.auth,
            &config.extra_headers,
            config.limits.clone(),
        )?;
        Ok(Self { config, url, http })
    }

    /// Replaces the clock used to interpret HTTP-date `Retry-After` headers.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.http.set_clock(clock);
        self
    }

    /// The JSON body this provider sends for `request`.
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &request.messages {
            messages.push(match m {
                Message::User { content } => json!({"role": "user", "content": content}),
                Message::Assistant {
                    content,
                    tool_calls,
                } if tool_calls.is_empty() => json!({"role": "assistant", "content": content}),
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            // Several servers reject "" as arguments; it means "no arguments".
                            let args = if c.arguments.trim().is_empty() {
                                "{}"
                            } else {
                                c.arguments.as_str()
                            };
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": args}})
                        })
                        .collect();
                    let content = if content.is_empty() {
                        Value::Null
                    } else {
                        Value::String(content.clone())
                    };
                    json!({"role": "assistant", "content": content, "tool_calls": calls})
                }
                Message::Tool {
                    tool_call_id,
                    name,
                    content,
                    is_error: _,
                } => {
                    let mut v =
                        json!({"role": "tool", "tool_call_id": tool_call_id, "content": content});
                    if !name.is_empty() {
                        v["name"] = Value::String(name.clone());
                    }
                    v
                }
            });
        }
        let model = request.model.as_deref().unwrap_or(&self.config.model);
        let mut body = json!({"model": model, "messages": messages, "stream": true});
        if self.config.include_usage {
            body["stream_options"] = json!({"include_usage": true});
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
        }
        if let Some(max) = request.max_tokens {
            let field = match self.config.max_tokens_field {
                MaxTokensField::MaxTokens => "max_tokens",
                MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            };
            body[field] = json!(max);
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        body
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai-compatible"
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        let body =
            serde_json::to_vec(&self.request_body(request)).map_err(|e| LlmError::Config {
                message: format!("cannot encode the request: {e}"),
            })?;
        let response = self.http.post(&self.url, Bytes::from(body), cancel).await?;
        let response = transport::drive(
            response,
            self.http.limits(),
            cancel,
            OpenAiAssembler::default(),
            sink,
        )
        .await?;
        transport::finalize(response, sink)
    }
}

// ---- wire types (only what we read; unknown fields are ignored) ----

#[derive(Debug, Deserialize)]
struct Chunk {
    object: Option<String>,
    id: Option<String>,
    model: Option<String>,
    provider: Option<String>,
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    x_groq: Option<XGroq>,
    timings: Option<Value>,
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct XGroq {
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
    native_finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    content: Option<Value>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    reasoning_details: Option<Vec<Value>>,
    refusal: Option<String>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    index: Option<i64>,
    id: Option<String>,
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    cost: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        let prompt = u.prompt_tokens.unwrap_or(0);
        let completion = u.completion_tokens.unwrap_or(0);
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: u.total_tokens.unwrap_or(prompt + completion),
            cached_prompt_tokens: u.prompt_tokens_details.and_then(|d| d.cached_tokens),
            cache_creation_tokens: None,
            reasoning_tokens: u.completion_tokens_details.and_then(|d| d.reasoning_tokens),
            cost: u.cost,
        }
    }
}

#[derive(Debug, Default)]
struct Slot {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles an OpenAI-style chunk stream. Public within the crate for the benchmark.
#[derive(Debug, Default)]
pub(crate) struct OpenAiAssembler {
    response: ChatResponse,
    refusal: String,
    slots: Vec<Slot>,
    /// Provider `index` → slot.
    by_index: Vec<(i64, usize)>,
}

impl OpenAiAssembler {
    fn new_slot(&mut self, sink: &mut dyn EventSink, id: &str, name: &str) -> usize {
        let index = self.slots.len();
        self.slots.push(Slot {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: String::new(),
        });
        sink.event(StreamEvent::ToolCallStarted {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
        });
        index
    }

    fn on_tool_call(&mut self, call: WireToolCall, sink: &mut dyn EventSink) {
        let id = call.id.as_deref().filter(|s| !s.is_empty()).unwrap_or("");
        let (name, arguments) = match call.function {
            Some(f) => (
                f.name.filter(|s| !s.is_empty()),
                match f.arguments {
                    Some(Value::String(s)) => s,
                    Some(Value::Null) | None => String::new(),
                    // Some servers send the arguments as an object instead of a string.
                    Some(other) => other.to_string(),
                },
            ),
            None => (None, String::new()),
        };
        let existing = match call.index {
            Some(i) => self
                .by_index
                .iter()
                .find(|(k, _)| *k == i)
                .map(|(_, s)| *s)
                // Same index but a different id: a server that numbers every call 0.
                .filter(|&s| {
                    id.is_empty() || self.slots[s].id.is_empty() || self.slots[s].id == id
                }),
            // No index (Mistral): a new id starts a new call, otherwise continue the last.
            None => match self.slots.last() {
                Some(last) if id.is_empty() || last.id == id => Some(self.slots.len() - 1),
                _ => None,
            },
        };
        let slot = match existing {
            Some(s) => s,
            None => {
                let s = self.new_slot(sink, id, name.as_deref().unwrap_or(""));
                if let Some(i) = call.index {
                    match self.by_index.iter_mut().find(|(k, _)| *k == i) {
                        Some(entry) => entry.1 = s,
                        None => self.by_index.push((i, s)),
                    }
                }
                s
            }
        };
        let entry = &mut self.slots[slot];
        if entry.id.is_empty() && !id.is_empty() {
            entry.id = id.to_owned();
        }
        if let Some(n) = name
            && entry.name.is_empty()
        {
            entry.name = n;
        }
        if !arguments.is_empty() {
            entry.arguments.push_str(&arguments);
            sink.event(StreamEvent::ToolCallArgsDelta {
                index: slot,
                delta: arguments,
            });
        }
    }

    fn on_delta(&mut self, delta: Delta, sink: &mut dyn EventSink) {
        if let Some(text) = delta.content.and_then(content_text)
            && !text.is_empty()
        {
            self.response.text.push_str(&text);
            sink.event(StreamEvent::TextDelta(text));
        }
        // Servers that send both fields send the same text twice; take one.
        let mut reasoning = delta.reasoning_content.or(delta.reasoning);
        if let Some(details) = delta.reasoning_details {
            for d in &details {
                if let Some(sig) = d.get("signature").and_then(Value::as_str)
                    && !sig.is_empty()
                {
                    self.response.reasoning_signature = Some(sig.to_owned());
                }
            }
            if reasoning.is_none() {
                let text: String = details
                    .iter()
                    .filter_map(|d| {
                        d.get("text")
                            .or_else(|| d.get("summary"))
                            .and_then(Value::as_str)
                    })
                    .collect();
                if !text.is_empty() {
                    reasoning = Some(text);
                }
            }
        }
        if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
            self.response.reasoning.push_str(&r);
            sink.event(StreamEvent::ReasoningDelta(r));
        }
        if let Some(r) = delta.refusal.filter(|r| !r.is_empty()) {
            self.refusal.push_str(&r);
            sink.event(StreamEvent::RefusalDelta(r));
        }
        for call in delta.tool_calls.unwrap_or_default() {
            self.on_tool_call(call, sink);
        }
    }
}

/// `content` is a string, or (Mistral reasoning models) an array of typed parts.
fn content_text(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => None,
    }
}

impl Assembler for OpenAiAssembler {
    fn on_event(
        &mut self,
        _event: &str,
        data: &str,
        sink: &mut dyn EventSink,
    ) -> Result<Flow, LlmError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            message: format!("bad chunk ({e}): {}", transport::excerpt(data)),
        })?;
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            let mut info = ErrorInfo::default();
            info.fill_from_json(&err);
            return Err(info.classify());
        }
        if chunk.object.as_deref() == Some("error") {
            // vLLM's older in-stream error shape: the chunk itself is the error object.
            let mut info = ErrorInfo::default();
            info.fill_from_json(&serde_json::from_str(data).unwrap_or(Value::Null));
            return Err(info.classify());
        }
        let r = &mut self.response;
        if r.id.is_none() {
            r.id = chunk.id;
        }
        if r.model.is_none() {
            r.model = chunk.model;
        }
        if r.upstream.is_none() {
            r.upstream = chunk.provider;
        }
        if chunk.timings.is_some() {
            r.timings = chunk.timings;
        }
        // n = 1: only the first choice is ours.
        if let Some(choice) = chunk
            .choices
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.index.unwrap_or(0) == 0)
        {
            if let Some(reason) = choice.finish_reason.filter(|s| !s.is_empty()) {
                self.response.finish_reason = Some(FinishReason::from_openai(&reason));
            }
            if let Some(native) = choice.native_finish_reason.filter(|s| !s.is_empty()) {
                self.response.native_finish_reason = Some(native);
            }
            if let Some(delta) = choice.delta {
                self.on_delta(delta, sink);
            }
        }
        if let Some(usage) = chunk.usage.or(chunk.x_groq.and_then(|x| x.usage)) {
            let usage = Usage::from(usage);
            sink.event(StreamEvent::Usage(usage.clone()));
            self.response.usage = Some(usage);
        }
        Ok(Flow::Continue)
    }

    fn on_whole(&mut self, body: &str, sink: &mut dyn EventSink) -> Result<(), LlmError> {
        let v: Value = serde_json::from_str(body).map_err(|e| LlmError::Protocol {
            message: format!("bad reply ({e}): {}", transport::excerpt(body)),
        })?;
        // Recast the completion as one chunk whose delta is the whole message, so both
        // shapes go through the same assembly.
        let choice = v.pointer("/choices/0").cloned().unwrap_or(Value::Null);
        let mut message = choice.get("message").cloned().unwrap_or(Value::Null);
        if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (i, c) in calls.iter_mut().enumerate() {
                c["index"] = json!(i);
            }
        }
        let chunk = json!({
            "object": v.get("object"), "id": v.get("id"), "model": v.get("model"),
            "provider": v.get("provider"), "usage": v.get("usage"), "timings": v.get("timings"),
            "error": v.get("error"),
            "choices": [{"index": 0, "delta": message,
                         "finish_reason": choice.get("finish_reason"),
                         "native_finish_reason": choice.get("native_finish_reason")}],
        });
        self.on_event("message", &chunk.to_string(), sink)
            .map(|_| ())
    }

    fn finish(mut self, end: End) -> Result<ChatResponse, LlmError> {
        if end == End::Eof && self.response.finish_reason.is_none() {
            return Err(LlmError::StreamCut {
                message: format!(
                    "the stream ended without [DONE] or a finish_reason ({} chars of text, {} tool calls so far)",
                    self.response.text.chars().count(),
                    self.slots.len()
                ),
            });
        }
        self.response.tool_calls = self
            .slots
            .into_iter()
            .enumerate()
            .map(|(i, s)| ToolCall {
                id: if s.id.is_empty() {
                    format!("call_nomos_{i}")
                } else {
                    s.id
                },
                name: s.name,
                arguments: s.arguments,
            })
            .collect();
        if !self.refusal.is_empty() {
            self.response.refusal = Some(self.refusal);
        }
        Ok(self.response)
    }
}

/// Feeds raw SSE `data:` payloads through the assembler without HTTP (benchmark baseline).
#[doc(hidden)]
pub fn assemble_data_lines<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    sink: &mut dyn EventSink,
) -> Result<ChatResponse, LlmError> {
    let mut a = OpenAiAssembler::default();
    for line in lines {
        if a.on_event("message", line, sink)? == Flow::Done {
            return a.finish(End::Marker);
        }
    }
    a.finish(End::Eof)
}
