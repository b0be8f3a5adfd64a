//! What the agent tells its faces while a turn runs, and the transcript they render.
//!
//! One enum, [`AgentEvent`], is streamed to the desktop (through a Tauri channel) and to the
//! CLI (`nomos ask --json` prints one per line). Every turn ends with exactly one
//! [`AgentEvent::Done`], on every path (I10).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{Outcome, SessionStatus};

/// The policy classifier's verdict on a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CommandClass {
    /// Runs at once once a plan exists.
    ReadOnly,
    /// Runs inside the operator's approval window.
    ConfigMutation,
    /// Needs the operator's approval every time (includes anything the classifier cannot model).
    Destructive,
}

/// Status of a plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    Running,
    Done,
    Failed,
    Skipped,
    Replaced,
}

/// One plan step as the plan panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PlanStep {
    #[ts(type = "number")]
    pub id: i64,
    /// Plan version: a reopened session's next plan is the previous one plus one.
    #[ts(type = "number")]
    pub generation: i64,
    /// 1-based order within the generation.
    #[ts(type = "number")]
    pub seq: i64,
    pub title: String,
    pub detail: Option<String>,
    /// Target entity slug such as `host:web-01`.
    pub target: Option<String>,
    pub status: StepStatus,
    /// What the agent reported when the step finished.
    pub note: Option<String>,
}

/// Lifecycle of an execution (the audit ledger's rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ExecStatus {
    Queued,
    AwaitingApproval,
    Running,
    Finished,
    Failed,
    Cancelled,
    TimedOut,
}

/// Who or what let a command run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKind {
    NotNeeded,
    OperatorButton,
    ChatApproval,
    Window,
}

/// One command run on a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Execution {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    /// The model's tool call that asked for it: a card finds its execution by this id, so a
    /// repeated command shows its own run.
    pub call_id: Option<String>,
    pub target: String,
    /// The command as the model wrote it.
    pub command: String,
    /// The re-quoted form that runs, as a display copy: secrets in it are redacted. What runs
    /// is the exact text the classifier produced, never this copy (I22).
    pub canonical: String,
    pub class: CommandClass,
    /// The classifier's explanation (rule and reason), shown on the card.
    pub reason: String,
    pub status: ExecStatus,
    pub approval: Option<ApprovalKind>,
    pub exit_code: Option<i32>,
    #[ts(type = "number | null")]
    pub duration_ms: Option<i64>,
    /// Capped output; a marker says where bytes were cut.
    pub stdout: String,
    pub stderr: String,
    #[ts(type = "number")]
    pub created_at_ms: i64,
    /// The plan generation it ran under: an approval card of an older generation is stale.
    #[ts(type = "number | null")]
    pub generation: Option<i64>,
    /// The plan step (`PlanStep::id`) it serves: the plan panel shows it on that step.
    #[ts(type = "number | null")]
    pub plan_step_id: Option<i64>,
    /// Why it could not run or finish (spawn, connection, timeout), in the core's words.
    pub error: Option<String>,
}

/// A tool call in a transcript, with its result once it has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    /// The arguments exactly as the model sent them (JSON text, possibly malformed).
    pub arguments: String,
    pub result: Option<String>,
    pub is_error: bool,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The operator.
    User,
    /// The model (one row per model iteration).
    Assistant,
    /// A note the system added (a resume, an execution result for the operator).
    System,
}

/// One bubble of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Message {
    #[ts(type = "number")]
    pub id: i64,
    pub role: Role,
    pub text: String,
    /// Still being streamed.
    pub pending: bool,
    /// Produced by a turn the system started (a resume), not by an operator message.
    pub auto: bool,
    /// The iteration ended with this error (the provider's real text).
    pub error: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    #[ts(type = "number")]
    pub created_at_ms: i64,
}

/// Everything the chat and the plan panel need to show a session. The window opens one page
/// of messages (the newest, or around a search hit) and reads the others as the operator
/// scrolls ([`MessagePage`]); the CLI reads the whole transcript (`older`, `newer` false).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SessionView {
    pub session: crate::SessionSummary,
    /// A contiguous run of the session's messages, oldest first.
    pub messages: Vec<Message>,
    /// Messages older than the first of `messages` exist.
    pub older: bool,
    /// Messages newer than the last of `messages` exist.
    pub newer: bool,
    /// The plan generation in force at the first of `messages` (0 before any plan): a page
    /// that starts mid-session names plans and steps from it.
    #[ts(type = "number")]
    pub generation_before: i64,
    /// Every plan generation, oldest first (the panel collapses the replaced ones).
    pub plan: Vec<PlanStep>,
    /// The executions of the `run` calls among `messages`, and every one of the session
    /// still queued, awaiting approval or running, oldest first.
    pub executions: Vec<Execution>,
    /// The operator's approval window is open for the current plan generation.
    pub approval_open: bool,
}

/// More of a session's messages, read as the operator scrolls past either end of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MessagePage {
    /// A contiguous run of messages, oldest first, next to the one asked from.
    pub messages: Vec<Message>,
    /// Messages older than the first of `messages` exist.
    pub older: bool,
    /// Messages newer than the last of `messages` exist.
    pub newer: bool,
    /// As in [`SessionView::generation_before`].
    #[ts(type = "number")]
    pub generation_before: i64,
    /// As in [`SessionView::executions`], for these messages.
    pub executions: Vec<Execution>,
}

/// What the agent reports while a turn runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A turn began (an operator message, or a resume the system started).
    TurnStarted {
        #[ts(type = "number")]
        session_id: i64,
        auto: bool,
    },
    /// A fragment of the model's visible text for the message being streamed.
    TextDelta {
        #[ts(type = "number")]
        session_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        delta: String,
    },
    /// A model attempt failed and the request is sent again: the text streamed so far for
    /// `message_id` is void (a face drops it, never appends the next attempt to it) and
    /// `notice` tells the operator why ("no reply from the model for 2 min — retrying (2/3)").
    ModelRetrying {
        #[ts(type = "number")]
        session_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        /// The attempt about to start (2 for the first retry).
        attempt: u32,
        /// The most attempts this request makes.
        max_attempts: u32,
        /// The wait before it, in milliseconds.
        #[ts(type = "number")]
        delay_ms: u64,
        /// The failed attempt's error code.
        code: String,
        /// The line to show.
        notice: String,
    },
    /// A message row was created or finished (replaces the streamed text).
    Message {
        #[ts(type = "number")]
        session_id: i64,
        message: Message,
    },
    /// The model called a tool.
    ToolCall {
        #[ts(type = "number")]
        session_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        call: ToolCall,
    },
    /// A tool answered (`is_error` when a gate refused the call or it failed).
    ToolResult {
        #[ts(type = "number")]
        session_id: i64,
        #[ts(type = "number")]
        message_id: i64,
        call_id: String,
        name: String,
        result: String,
        is_error: bool,
    },
    /// The plan changed: a proposal, a step status, a reopen. Carries every generation.
    Plan {
        #[ts(type = "number")]
        session_id: i64,
        steps: Vec<PlanStep>,
    },
    /// The operator's decision is needed: approve the plan, or approve one command.
    ApprovalRequested {
        #[ts(type = "number")]
        session_id: i64,
        /// The command waiting for a per-command approval; absent for a plan approval.
        execution: Option<Execution>,
    },
    /// An execution changed state (started, finished, cancelled …).
    Execution {
        #[ts(type = "number")]
        session_id: i64,
        execution: Execution,
    },
    /// The session's status changed.
    TaskStatus {
        #[ts(type = "number")]
        session_id: i64,
        status: SessionStatus,
        outcome: Option<Outcome>,
        summary: Option<String>,
        /// Whether an approval window is open now: the faces update the plan panel from
        /// this event alone, without fetching the session again.
        approval_open: bool,
    },
    /// A follow-up reopened a finished session with a new plan generation.
    TaskReopened {
        #[ts(type = "number")]
        session_id: i64,
        #[ts(type = "number")]
        generation: i64,
    },
    /// Something failed; `message` is the real text (provider status, finish reason, refusal).
    Error {
        #[ts(type = "number")]
        session_id: i64,
        code: crate::ErrorCode,
        message: String,
        retryable: bool,
    },
    /// The turn ended. Sent exactly once per turn, on every path.
    Done {
        #[ts(type = "number")]
        session_id: i64,
        /// True when the turn ended on an error or a stop.
        error: bool,
    },
}

impl AgentEvent {
    /// The session the event belongs to.
    pub fn session_id(&self) -> i64 {
        match self {
            Self::TurnStarted { session_id, .. }
            | Self::TextDelta { session_id, .. }
            | Self::ModelRetrying { session_id, .. }
            | Self::Message { session_id, .. }
            | Self::ToolCall { session_id, .. }
            | Self::ToolResult { session_id, .. }
            | Self::Plan { session_id, .. }
            | Self::ApprovalRequested { session_id, .. }
            | Self::Execution { session_id, .. }
            | Self::TaskStatus { session_id, .. }
            | Self::TaskReopened { session_id, .. }
            | Self::Error { session_id, .. }
            | Self::Done { session_id, .. } => *session_id,
        }
    }
}
