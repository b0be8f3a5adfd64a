use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the UI receives when a command fails: a stable code to branch on and a message
/// written for the operator. Never a debug string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct IpcError {
    /// Stable, dotted code such as `store.schema_too_new`; the UI branches on this.
    pub code: String,
    /// A sentence for the operator.
    pub message: String,
}

impl IpcError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for IpcError {}
