//! Anthropic Messages API with streaming and tool use.
//!
//! Tolerates what the real API sends: JSON padded with spaces before the closing brace,
//! `ping` events, unknown block and delta types, extra keys (`caller`, `details`), error
//! events inside a 200 stream, and usage split between `message_start` and the cumulative
//! `message_delta`.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::auth::TokenSource;
use crate::error::{ErrorInfo, LlmError};
use crate::provider::Provider;
use crate::transport::{self, Assembler, AuthStyle, End, Flow, Http, StreamLimits};
use crate::types::{
    ChatRequest, ChatResponse, EventSink, FinishReason, Message, StreamEvent, ToolCall, Usage,
};
use nomos_base::Clock;

/// The API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Output cap sent when the request has none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Settings of an Anthropic endpoint.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// `https://api.anthropic.com` (or a gateway); `/v1/messages` is appended, or only
    /// `/messages` when the URL already ends in `/v1`.
    pub base_url: String,
    /// Default model.
    pub model: String,
    /// `x-api-key` for Anthropic itself; `Bearer` for a gateway taking an OIDC token.
    pub auth: AuthStyle,
    /// Extra headers (e.g. `anthropic-beta`).
    pub extra_headers: Vec<(String, String)>,
    /// Timeouts and size cap.
    pub limits: StreamLimits,
}

impl AnthropicConfig {
    /// Defaults for `base_url` and `model`.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            auth: AuthStyle::XApiKey,
            extra_headers: Vec::new(),
            limits: StreamLimits::default(),
        }
    }
}

/// The Anthropic provider.
#[derive(Debug)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    url: String,
    http: Http,
}

impl AnthropicProvider {
    /// Builds the client.
    pub fn new(
        config: AnthropicConfig,
        token: Option<Arc<dyn TokenSource>>,
    ) -> Result<Self, LlmError> {
        let base = config.base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let mut headers = vec![("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned())];
        headers.extend(config.extra_headers.iter().cloned());
        let http = Http::new(
            &config.base_url,
            token,
            config.auth,
            &headers,
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
        // Anthropic wants strictly alternating roles: merge neighbours of the same role,
        // and send tool results as `tool_result` blocks of a user turn.
        let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
        for m in &request.messages {
            let (role, blocks) = match m {
                Message::User { content } => ("user", text_block(content)),
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    let mut blocks = text_block(content);
                    blocks.extend(tool_calls.iter().map(|c| {
                        json!({"type": "tool_use", "id": c.id, "name": c.name,
                               "input": input_object(&c.arguments)})
                    }));
                    ("assistant", blocks)
                }
                Message::Tool {
                    tool_call_id,
                    content,
                    is_error,
                    ..
                } => {
                    let mut block = json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content});
                    if *is_error {
                        block["is_error"] = Value::Bool(true);
                    }
                    ("user", vec![block])
                }
            };
            if blocks.is_empty() {
                continue;
            }
            match messages.last_mut() {
                Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
                _ => messages.push((role, blocks)),
            }
        }
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let model = request.model.as_deref().unwrap_or(&self.config.model);
        let mut body = json!({
            "model": model,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
            "stream": true,
        });
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            body["system"] = Value::String(system.to_owned());
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        body
    }
}

/// Anthropic rejects empty text blocks.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

/// `tool_use.input` must be an object; malformed arguments are kept, not dropped, so the
/// model can see what it sent.
fn input_object(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({"_unparsed_arguments": arguments}),
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
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
            AnthropicAssembler::default(),
            sink,
        )
        .await?;
        transport::finalize(response, sink)
    }
}

// ---- wire types ----

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: u64,
        delta: WireDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: WireMessageDelta,
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
struct WireMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct WireMessageDelta {
    stop_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// `message_delta.usage` overrides what `message_start` said, field by field.
    fn overlay(&mut self, newer: WireUsage) {
        self.input_tokens = newer.input_tokens.or(self.input_tokens);
        self.output_tokens = newer.output_tokens.or(self.output_tokens);
        self.cache_creation_input_tokens = newer
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
        self.cache_read_input_tokens = newer
            .cache_read_input_tokens
            .or(self.cache_read_input_tokens);
    }

    fn to_usage(&self) -> Usage {
        let prompt = self.input_tokens.unwrap_or(0);
        let completion = self.output_tokens.unwrap_or(0);
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            cached_prompt_tokens: self.cache_read_input_tokens,
            cache_creation_tokens: self.cache_creation_input_tokens,
            reasoning_tokens: None,
            cost: None,
        }
    }
}

#[derive(Debug)]
enum Block {
    Text,
    Thinking,
    /// `prefilled`: the arguments came whole in `content_block_start` (a non-streamed
    /// reply); streamed deltas, if any follow, replace them.
    Tool {
        slot: usize,
        prefilled: bool,
    },
    Other,
}

#[derive(Debug, Default)]
pub(crate) struct AnthropicAssembler {
    response: ChatResponse,
    usage: Option<WireUsage>,
    blocks: Vec<(u64, Block)>,
    calls: Vec<ToolCall>,
}

impl AnthropicAssembler {
    fn block(&self, index: u64) -> Option<&Block> {
        self.blocks
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    fn on_usage(&mut self, usage: WireUsage, sink: &mut dyn EventSink) {
        let merged = self.usage.get_or_insert_with(WireUsage::default);
        merged.overlay(usage);
        let usage = merged.to_usage();
        sink.event(StreamEvent::Usage(usage.clone()));
        self.response.usage = Some(usage);
    }
}

impl Assembler for AnthropicAssembler {
    fn on_event(
        &mut self,
        _event: &str,
        data: &str,
        sink: &mut dyn EventSink,
    ) -> Result<Flow, LlmError> {
        if data.trim().is_empty() {
            return Ok(Flow::Continue);
        }
        let event: WireEvent = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            message: format!("bad event ({e}): {}", transport::excerpt(data)),
        })?;
        match event {
            WireEvent::MessageStart { message } => {
                self.response.id = message.id;
                self.response.model = message.model;
                if let Some(u) = message.usage {
                    self.on_usage(u, sink);
                }
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    WireBlock::Text { text } => {
                        if !text.is_empty() {
                            self.response.text.push_str(&text);
                            sink.event(StreamEvent::TextDelta(text));
                        }
                        Block::Text
                    }
                    WireBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        if let Some(sig) = signature.filter(|s| !s.is_empty()) {
                            self.response.reasoning_signature = Some(sig);
                        }
                        if !thinking.is_empty() {
                            self.response.reasoning.push_str(&thinking);
                            sink.event(StreamEvent::ReasoningDelta(thinking));
                        }
                        Block::Thinking
                    }
                    WireBlock::ToolUse { id, name, input } => {
                        let slot = self.calls.len();
                        sink.event(StreamEvent::ToolCallStarted {
                            index: slot,
                            id: id.clone(),
                            name: name.clone(),
                        });
                        let prefilled = input.as_object().is_some_and(|o| !o.is_empty());
                        let arguments = if prefilled {
                            input.to_string()
                        } else {
                            String::new()
                        };
                        if prefilled {
                            sink.event(StreamEvent::ToolCallArgsDelta {
                                index: slot,
                                delta: arguments.clone(),
                            });
                        }
                        self.calls.push(ToolCall {
                            id,
                            name,
                            arguments,
                        });
                        Block::Tool { slot, prefilled }
                    }
                    WireBlock::Other => Block::Other,
                };
                self.blocks.push((index, block));
            }
            WireEvent::ContentBlockDelta { index, delta } => match (self.block(index), delta) {
                (
                    Some(Block::Tool { slot, prefilled }),
                    WireDelta::InputJsonDelta { partial_json },
                ) => {
                    let (slot, prefilled) = (*slot, *prefilled);
                    if prefilled {
                        self.calls[slot].arguments.clear();
                        if let Some((_, Block::Tool { prefilled, .. })) =
                            self.blocks.iter_mut().find(|(i, _)| *i == index)
                        {
                            *prefilled = false;
                        }
                    }
                    if !partial_json.is_empty() {
                        self.calls[slot].arguments.push_str(&partial_json);
                        sink.event(StreamEvent::ToolCallArgsDelta {
                            index: slot,
                            delta: partial_json,
                        });
                    }
                }
                (_, WireDelta::TextDelta { text }) => {
                    self.response.text.push_str(&text);
                    sink.event(StreamEvent::TextDelta(text));
                }
                (_, WireDelta::ThinkingDelta { thinking }) => {
                    self.response.reasoning.push_str(&thinking);
                    sink.event(StreamEvent::ReasoningDelta(thinking));
                }
                (_, WireDelta::SignatureDelta { signature }) => {
                    self.response
                        .reasoning_signature
                        .get_or_insert_with(String::new)
                        .push_str(&signature);
                }
                (_, WireDelta::InputJsonDelta { .. }) | (_, WireDelta::Other) => {}
            },
            WireEvent::ContentBlockStop {} => {}
            WireEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.response.finish_reason = Some(FinishReason::from_anthropic(&reason));
                    self.response.native_finish_reason = Some(reason);
                }
                if let Some(u) = usage {
                    self.on_usage(u, sink);
                }
            }
            WireEvent::MessageStop {} => return Ok(Flow::Done),
            WireEvent::Ping {} | WireEvent::Unknown => {}
            WireEvent::Error { error } => {
                let mut info = ErrorInfo::default();
                info.fill_from_json(&error);
                return Err(info.classify());
            }
        }
        Ok(Flow::Continue)
    }

    fn on_whole(&mut self, body: &str, sink: &mut dyn EventSink) -> Result<(), LlmError> {
        let v: Value = serde_json::from_str(body).map_err(|e| LlmError::Protocol {
            message: format!("bad reply ({e}): {}", transport::excerpt(body)),
        })?;
        if v.get("type").and_then(Value::as_str) == Some("error") {
            let mut info = ErrorInfo::default();
            info.fill_from_json(&v);
            return Err(info.classify());
        }
        // Replay the whole message as the events that would have streamed it.
        let mut events = vec![json!({"type": "message_start", "message": {
            "id": v.get("id"), "model": v.get("model"), "usage": v.get("usage")}})];
        for (i, block) in v
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            events.push(json!({"type": "content_block_start", "index": i, "content_block": block}));
        }
        events
            .push(json!({"type": "message_delta", "delta": {"stop_reason": v.get("stop_reason")}}));
        for e in events {
            self.on_event("message", &e.to_string(), sink)?;
        }
        Ok(())
    }

    fn finish(mut self, end: End) -> Result<ChatResponse, LlmError> {
        if end == End::Eof && self.response.finish_reason.is_none() {
            return Err(LlmError::StreamCut {
                message: format!(
                    "the stream ended without message_stop ({} chars of text, {} tool calls so far)",
                    self.response.text.chars().count(),
                    self.calls.len()
                ),
            });
        }
        self.response.tool_calls = self.calls;
        Ok(self.response)
    }
}
