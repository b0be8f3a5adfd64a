//! The Nomos store: the only crate that speaks SQL.
//!
//! Sessions, messages, plan steps, executions, the audit ledger, approval windows and the
//! knowledge graph live in one SQLite file (WAL, foreign keys on). The store-level agent
//! invariants of DESIGN.md §4 (I2–I6, I9, I14 bookkeeping, I16, I19) are enforced here,
//! inside write transactions, so they hold whatever the model does. Gate refusals are typed
//! values carrying a [`Refusal`] (`reason` + `directive` for the model); errors are
//! [`StoreError`]s with a stable [`StoreError::code`].
//!
//! Every operation exists three ways: a method on [`Store`] (one transaction), on
//! [`WriteTx`]/[`Reader`] (compose several in one transaction with [`Store::write`] /
//! [`Store::read`]).
//!
//! ```no_run
//! # fn main() -> Result<(), nomos_store::StoreError> {
//! use nomos_store::{NewSession, Store, default_data_dir};
//! let store = Store::open_in_dir(&default_data_dir()?)?;
//! let s = store.create_session(NewSession { title: "Updates".into(), goal: None })?;
//! # let _ = s; Ok(()) }
//! ```

mod approvals;
mod audit;
mod db;
mod error;
mod executions;
mod home;
mod knowledge;
mod leases;
mod messages;
mod owners;
mod plan;
pub mod private;
mod recovery;
mod search;
mod secrets;
mod sessions;
mod transfer;
mod types;

pub use approvals::{ApprovalSource, ApprovalWindow, CloseReason, OperatorApproval, WindowId};
pub use audit::{AuditEntry, MAX_AUDIT_ARGUMENTS_BYTES, MAX_AUDIT_SUMMARY_BYTES, NewAudit};
pub use db::{
    DB_FILE_NAME, Migration, Reader, Store, WriteTx, default_data_dir, latest_schema_version,
    migrations, open_raw_at_version,
};
pub use error::StoreError;
pub use executions::{
    Approval, ApprovalKind, CommandClass, ContinuedVia, ExecStatus, Execution, ExecutionId,
    ExecutionMatrix, ExecutionResult, LedgerCursor, LedgerFilter, LedgerOutcome, LedgerPage,
    LedgerRow, MAX_LEDGER_PAGE, MAX_MATRIX_EXECUTIONS, MAX_OUTPUT_BYTES, MatrixCell, MatrixStep,
    NewExecution, PendingContinuation,
};
pub use home::{
    HOME_TARGETS_SCANNED, HomeLimits, HomeOverview, MAX_HOME_APPROVALS, MAX_HOME_EDGES,
    MAX_HOME_ENTITIES, MAX_HOME_TARGETS, TargetAudit, WaitingApproval,
};
pub use knowledge::{
    AUDIT_TAGS, AttributeChange, Entity, EntityDetail, EntityHit, EntityId, EntityUpdate, EntryId,
    Graph, KnowledgeEntry, KnowledgeHit, KnowledgeKind, KnowledgeQuery, NewKnowledge, Relation,
    SEARCH_CANDIDATES, Slug, TARGET_KINDS, Target, slugify,
};
pub use knowledge::{
    AttributeAge, AttributeProvenance, CONTAINS_KINDS, Dependent, Dependents, GraphNode,
    GraphSlice, GraphSliceQuery, MAX_SLICE_EDGES, MAX_SLICE_NODES, StaleEntity,
};
pub use leases::{
    LeaseOutcome, TURN_END_AUDIT, TURN_START_AUDIT, TurnHolding, TurnLease, turn_holdings,
};
pub use messages::{
    FinishedMessage, MAX_MESSAGE_BYTES, MAX_MESSAGE_PAGE, MAX_TOOL_RESULT_BYTES, Message,
    MessageId, MessagePage, NewMessage, PageAt, Role, ToolCall, Transcript,
};
/// The workspace's one clock, re-exported so callers of the store need not name `nomos-base`.
pub use nomos_base::{Clock, ManualClock, SystemClock};
pub use owners::OWNERS_DIR;
pub use plan::{
    CurrentPlan, GenerationFacts, MAX_PLAN_STEPS, NewPlanStep, PlanStep, ProposePlanOutcome,
    ProposedPlan, StepId, StepStatus, UpdateStepOutcome, WRITE_BACK_DETAIL, WRITE_BACK_TITLE,
};
pub use recovery::{CUT_TURN_ERROR, CutTurn, INTERRUPTED_REASON, RecoveryReport};
pub use search::{
    DEFAULT_SEARCH_LIMIT, HitSource, MAX_SEARCH_LIMIT, SESSION_SEARCH_CANDIDATES,
    SESSION_SEARCH_SCAN, SessionHit, SessionSearchPage, SessionSearchQuery, SnippetPart,
};
pub use secrets::{REDACTED, is_secret_name, redact};
pub use sessions::{
    ACTIVITY_GRANULARITY_MS, CompleteOutcome, NewSession, Outcome, ReopenOutcome, Session,
    SessionId, SessionQuery, SessionStatus, SessionSummary,
};
pub use transfer::{
    EXPORT_FORMAT, EXPORT_VERSION, ExportAudit, ExportExecution, ExportGeneration, ExportMessage,
    ExportSession, ExportStep, ExportToolCall, ExportWindow, IMPORTED_IN_FLIGHT, ImportMark,
    ImportedSession, MAX_IMPORT_BYTES, SessionExport, utc,
};
pub use types::Refusal;
