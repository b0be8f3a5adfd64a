//! What a tool is (its arguments' trait) and what it can reach and answer: shared by every
//! tool group, below them and below the registry in `mod.rs`.

use std::future::Future;

use nomos_store::SessionId;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::events::TurnFlags;
use crate::{Agent, AgentError};

/// What a tool answers the model.
#[derive(Debug)]
pub(crate) struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
    /// The turn stops after this call (a plan waits for approval, a question for an answer).
    pub ends_turn: bool,
}

impl ToolOutcome {
    pub(crate) fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            ends_turn: false,
        }
    }
    pub(crate) fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            ends_turn: false,
        }
    }
    pub(crate) fn ending(mut self) -> Self {
        self.ends_turn = true;
        self
    }
}

/// A failure inside a tool reaches the model as an error result, in the error's own words.
impl From<AgentError> for ToolOutcome {
    fn from(e: AgentError) -> Self {
        Self::error(e.to_string())
    }
}

impl From<nomos_store::StoreError> for ToolOutcome {
    fn from(e: nomos_store::StoreError) -> Self {
        Self::error(e.to_string())
    }
}

/// What a tool's handler can reach: the agent, the session and turn it runs in, and its call.
pub(crate) struct ToolContext<'a> {
    pub agent: &'a Agent,
    pub session: SessionId,
    pub flags: &'a TurnFlags,
    pub call_id: &'a str,
    pub cancel: &'a CancellationToken,
}

/// One tool: its arguments are `Self`.
pub(crate) trait ToolArgs: DeserializeOwned + JsonSchema {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// What the model reads about it: when to use it and what it refuses.
    const DESCRIPTION: &'static str;
    /// Runs the tool. `Err` is an early answer (usually an error) for the model.
    fn call(
        self,
        cx: &ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutcome, ToolOutcome>> + Send;
}

/// Cuts a long result for the model with a marker saying how much was left out (I16).
pub(crate) fn cap_result(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head: String = text.chars().take(max_chars * 3 / 4).collect();
    let tail: String = text.chars().skip(total - max_chars / 4).collect();
    format!(
        "{head}\n[… {} characters truncated …]\n{tail}",
        total - max_chars
    )
}

pub(crate) fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("(unserialisable: {e})"))
}
