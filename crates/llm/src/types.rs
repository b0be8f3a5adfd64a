//! Provider-neutral request, response and streaming-event types.
//!
//! These are the only shapes the agent sees; each provider module translates them to and
//! from its own wire format.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One chat turn sent to a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Overrides the provider's configured model for this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Output token cap. Anthropic requires one; the provider fills in a default there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature; `None` leaves the provider default (some models reject any value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The operator (or a system note the agent injects as a user turn).
    User {
        /// Plain text.
        content: String,
    },
    /// A previous model reply, replayed verbatim.
    Assistant {
        /// The text part (may be empty when the reply was only tool calls).
        #[serde(default)]
        content: String,
        /// The tool calls the model made in that reply.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// The tool's name (Anthropic does not need it; some OpenAI-compatible servers do).
        #[serde(default)]
        name: String,
        /// What the tool returned.
        content: String,
        /// True when the tool failed or was refused.
        #[serde(default)]
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }

    /// A successful tool result.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name as the model must spell it.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id; the tool result must quote it. Synthesized (`call_nomos_<n>`)
    /// only when a server sends none.
    pub id: String,
    /// Tool name exactly as the model produced it (may name a tool that does not exist).
    pub name: String,
    /// The arguments exactly as streamed (concatenated fragments), not re-serialized.
    /// May be empty or malformed; see [`ToolCall::parse_arguments`].
    pub arguments: String,
}

impl ToolCall {
    /// Parses the arguments as a JSON object. An empty string means `{}` (several servers
    /// send `""` for a call without arguments).
    pub fn parse_arguments(&self) -> Result<serde_json::Value, serde_json::Error> {
        if self.arguments.trim().is_empty() {
            return Ok(serde_json::Value::Object(serde_json::Map::new()));
        }
        serde_json::from_str(&self.arguments)
    }
}

/// Why the model stopped, normalised across providers. The provider's own word is kept in
/// [`ChatResponse::native_finish_reason`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// Natural end of the reply (`stop`, `end_turn`, `stop_sequence`).
    Stop,
    /// The reply ends with tool calls (`tool_calls`, `tool_use`, `function_call`).
    ToolCalls,
    /// The output token cap was hit (`length`, `max_tokens`).
    Length,
    /// The provider filtered the output (`content_filter`, `refusal`).
    ContentFilter,
    /// The provider reported an error in the stream (`error`).
    Error,
    /// Anything else, verbatim.
    Other(String),
}

impl FinishReason {
    /// Maps an OpenAI-style `finish_reason`.
    pub fn from_openai(s: &str) -> Self {
        match s {
            "stop" | "eos" => Self::Stop,
            "tool_calls" | "function_call" => Self::ToolCalls,
            "length" => Self::Length,
            "content_filter" => Self::ContentFilter,
            "error" => Self::Error,
            other => Self::Other(other.to_owned()),
        }
    }

    /// Maps an Anthropic `stop_reason`.
    pub fn from_anthropic(s: &str) -> Self {
        match s {
            "end_turn" | "stop_sequence" => Self::Stop,
            "tool_use" => Self::ToolCalls,
            "max_tokens" | "model_context_window_exceeded" => Self::Length,
            "refusal" => Self::ContentFilter,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The normalised name (`stop`, `tool_calls`, …; `Other` keeps its text).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::ToolCalls => "tool_calls",
            Self::Length => "length",
            Self::ContentFilter => "content_filter",
            Self::Error => "error",
            Self::Other(s) => s,
        }
    }
}

/// Token accounting as reported by the provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens (Anthropic `input_tokens`).
    pub prompt_tokens: u64,
    /// Output tokens (Anthropic `output_tokens`, cumulative).
    pub completion_tokens: u64,
    /// As reported, or prompt + completion when the provider omits it.
    pub total_tokens: u64,
    /// Prompt tokens served from cache (`cached_tokens`, `cache_read_input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<u64>,
    /// Anthropic `cache_creation_input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_tokens: Option<u64>,
    /// Reasoning tokens included in `completion_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Cost in credits/USD when the gateway reports it (OpenRouter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// The assembled reply of one streamed request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Provider's response id (`chatcmpl-…`, `msg_…`).
    pub id: Option<String>,
    /// The model that answered, as the provider names it.
    pub model: Option<String>,
    /// The upstream provider behind a gateway (OpenRouter's `provider`).
    pub upstream: Option<String>,
    /// Visible text.
    pub text: String,
    /// Reasoning/thinking text, when the provider streams it.
    pub reasoning: String,
    /// Signature of the reasoning (Anthropic thinking, OpenRouter `reasoning_details`).
    pub reasoning_signature: Option<String>,
    /// The model's refusal text (OpenAI `refusal`), kept for the operator.
    pub refusal: Option<String>,
    /// Tool calls in the order the model started them.
    pub tool_calls: Vec<ToolCall>,
    /// Normalised stop reason.
    pub finish_reason: Option<FinishReason>,
    /// The provider's own stop reason (`native_finish_reason`, Anthropic `stop_reason`).
    pub native_finish_reason: Option<String>,
    /// Final usage (the last one reported wins; Anthropic's is start overlaid with delta).
    pub usage: Option<Usage>,
    /// Server timing figures, when present (llama.cpp `timings`).
    pub timings: Option<serde_json::Value>,
}

impl ChatResponse {
    /// True when the model said nothing usable: no visible text and no tool calls.
    pub fn is_empty_reply(&self) -> bool {
        self.text.trim().is_empty() && self.tool_calls.is_empty()
    }
}

/// What a provider reports while a reply streams in, in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A fragment of visible text.
    TextDelta(String),
    /// A fragment of reasoning/thinking text.
    ReasoningDelta(String),
    /// A fragment of a refusal.
    RefusalDelta(String),
    /// A tool call began; `index` is its position in [`ChatResponse::tool_calls`].
    ToolCallStarted {
        /// Position in the final list.
        index: usize,
        /// Id (empty if the server has not sent one yet).
        id: String,
        /// Tool name (empty if not sent yet).
        name: String,
    },
    /// A fragment of a tool call's arguments.
    ToolCallArgsDelta {
        /// Position in the final list.
        index: usize,
        /// The raw fragment.
        delta: String,
    },
    /// Usage figures arrived (may repeat; the last one wins).
    Usage(Usage),
    /// A retryable failure happened and the request is about to be sent again: everything
    /// streamed since the previous `Retrying` (or the start) must be discarded.
    Retrying {
        /// The attempt that is about to start (2 for the first retry).
        attempt: u32,
        /// The most attempts this call makes ([`crate::RetryPolicy::max_attempts`]).
        max_attempts: u32,
        /// How long the retry waits first.
        delay: Duration,
        /// The failed attempt's error code ([`crate::LlmError::code`]).
        code: &'static str,
        /// The failed attempt's error text.
        message: String,
        /// A short phrase for the operator ([`crate::LlmError::retry_reason`]), e.g. "no
        /// reply from the model for 2 min".
        reason: String,
    },
    /// The reply is complete.
    Done {
        /// Normalised stop reason.
        finish_reason: Option<FinishReason>,
    },
}

/// Receives [`StreamEvent`]s synchronously as they are parsed.
///
/// Implemented for any `FnMut(StreamEvent) + Send` closure and for [`ChannelSink`], so the
/// agent can forward deltas to the UI without buffering the whole reply.
pub trait EventSink: Send {
    /// Called once per event, in order.
    fn event(&mut self, event: StreamEvent);
}

impl<F> EventSink for F
where
    F: FnMut(StreamEvent) + Send,
{
    fn event(&mut self, event: StreamEvent) {
        self(event);
    }
}

/// Forwards events into an unbounded channel (e.g. to a UI task).
#[derive(Debug, Clone)]
pub struct ChannelSink(pub tokio::sync::mpsc::UnboundedSender<StreamEvent>);

impl EventSink for ChannelSink {
    fn event(&mut self, event: StreamEvent) {
        // A dropped receiver means nobody watches the stream any more; the reply is still
        // assembled and returned.
        let _ = self.0.send(event);
    }
}

/// A sink that drops every event (for callers that only want the final [`ChatResponse`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl EventSink for NullSink {
    fn event(&mut self, _event: StreamEvent) {}
}
