use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a session is in its life (DESIGN.md §4: terminal states are done, partial, failed,
/// abandoned; a follow-up reopens a terminal session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Idle,
    Planning,
    Executing,
    Done,
    Partial,
    Failed,
    Abandoned,
}

impl SessionStatus {
    /// Terminal sessions have completed; a follow-up reopens them (I9).
    pub fn is_terminal(self) -> bool {
        match self {
            Self::Done | Self::Partial | Self::Failed | Self::Abandoned => true,
            Self::Idle | Self::Planning | Self::Executing => false,
        }
    }
}

/// How a completed session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    Partial,
    Failed,
    Abandoned,
}

/// One row of the sessions sidebar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionSummary {
    #[ts(type = "number")]
    pub id: i64,
    pub title: String,
    pub goal: Option<String>,
    pub status: SessionStatus,
    pub outcome: Option<Outcome>,
    pub summary: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub created_at_ms: i64,
    /// Milliseconds since the Unix epoch; the list is ordered by this, newest first.
    #[ts(type = "number")]
    pub last_active_at_ms: i64,
}

/// Filter for the sessions sidebar.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionListQuery {
    /// Full-text search over titles, goals and summaries; empty or absent lists everything.
    #[ts(optional)]
    pub search: Option<String>,
    /// At most this many rows (the shell applies a sensible default and cap).
    #[ts(optional)]
    pub limit: Option<u32>,
}
