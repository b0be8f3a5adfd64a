//! The provider trait the agent calls.

use std::fmt;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;
use crate::types::{ChatRequest, ChatResponse, EventSink};

/// A streaming chat model with tool calls. Object-safe: hold it as `Arc<dyn Provider>`.
#[async_trait]
pub trait Provider: Send + Sync + fmt::Debug {
    /// Short name of the wire format (`openai-compatible`, `anthropic`).
    fn name(&self) -> &str;

    /// The model used when the request does not name one.
    fn model(&self) -> &str;

    /// Sends one request and streams the reply.
    ///
    /// Each delta is passed to `sink` as soon as it is parsed. Returns the assembled reply
    /// once the provider's end marker arrives. A reply with no text and no tool calls is an
    /// error ([`LlmError::EmptyReply`], [`LlmError::Refused`] or
    /// [`LlmError::ContentFilter`]), never an empty `Ok`. Firing `cancel` ends the call at
    /// once with [`LlmError::Cancelled`] and drops the connection.
    ///
    /// This makes one attempt (plus one credential refresh on 401); wrap it in
    /// [`crate::stream_with_retries`] for backoff.
    async fn stream(
        &self,
        request: &ChatRequest,
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError>;
}
