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
    /// Started by "Try the demo" (the scripted model): the faces label it from this field,
    /// never from the title. Absent on the wire when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub demo: bool,
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

/// Search over sessions: titles, goals, summaries, message text and command output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionSearchQuery {
    /// Words to find, taken literally (quotes, stars and operators are only separators);
    /// every word must match, the last one also as a prefix.
    pub text: String,
    /// Only sessions in one of these statuses (absent or empty: any).
    #[ts(optional)]
    pub statuses: Option<Vec<SessionStatus>>,
    /// Only sessions with one of these outcomes (absent or empty: any).
    #[ts(optional)]
    pub outcomes: Option<Vec<Outcome>>,
    /// Only this target (`host:web-01`): commands that ran on it, sessions that ran or
    /// planned something on it.
    #[ts(optional)]
    pub target: Option<String>,
    /// At most this many hits (default 20, at most 200).
    #[ts(optional)]
    pub limit: Option<u32>,
    /// Skip this many hits (paging).
    #[ts(optional)]
    pub offset: Option<u32>,
}

/// Where a search hit matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    Title,
    Goal,
    Summary,
    Message,
    Command,
    Stdout,
    Stderr,
}

/// A piece of a snippet; `hit` marks the matching words. Plain text, never markup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SnippetPart {
    pub text: String,
    pub hit: bool,
}

/// One search hit: the session, and the message or execution that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionHit {
    pub session: SessionSummary,
    pub source: HitSource,
    /// The message to open the transcript at: the matching message, or the one whose tool
    /// call ran the matching execution (when known).
    #[ts(type = "number | null")]
    pub message_id: Option<i64>,
    /// Role of the matching message (message hits).
    pub role: Option<crate::Role>,
    /// The matching execution (command and output hits).
    #[ts(type = "number | null")]
    pub execution_id: Option<i64>,
    /// Where the execution ran.
    pub target: Option<String>,
    pub snippet: Vec<SnippetPart>,
    /// When the matching row was written (Unix milliseconds).
    #[ts(type = "number")]
    pub at_ms: i64,
}

/// A page of search hits, best first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionSearchPage {
    pub hits: Vec<SessionHit>,
    /// More hits follow (ask again with a larger offset).
    pub has_more: bool,
}

/// The formats a session exports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// A versioned JSON document that `import_session` reads back.
    Json,
    /// A transcript for people: plan, tool calls and output folded in `<details>`.
    Markdown,
}

/// A session export: the text and a file name to save it under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionExportText {
    pub file_name: String,
    pub mime: String,
    pub text: String,
}

/// What an import created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ImportedSession {
    /// The new session (new id; status as in the file, nothing runs).
    pub session: SessionSummary,
    #[ts(type = "number")]
    pub messages: u32,
    #[ts(type = "number")]
    pub executions: u32,
}
