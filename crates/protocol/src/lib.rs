//! Wire types shared by the core, the desktop shell, the CLI and the UI.
//!
//! This crate is the one place the frontend contract is declared: every type that crosses
//! the IPC boundary lives here, derives `TS`, and is listed in [`typescript_bindings`]. The
//! checked-in `ui/src/lib/ipc/types.gen.ts` is generated from that list and a test fails when
//! the two drift (`UPDATE_BINDINGS=1 cargo test -p nomos-protocol` rewrites it).
//!
//! Transport DTOs stay at the boundary: the store and the agent have their own domain types
//! and the faces (`src-tauri`, `cli`) convert.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

mod agent;
mod batch;
mod error;
mod graph;
mod session;
mod settings;

pub use agent::{
    AgentEvent, ApprovalKind, CommandClass, ExecStatus, Execution, Message, MessagePage, PlanStep,
    Role, SessionView, StepStatus, ToolCall,
};
pub use batch::DeltaBatcher;
pub use error::{ErrorCode, IpcError};
pub use graph::{
    AttributeChangeView, AttributeView, DependentView, DependentsView, EntityDetailsView,
    ExecutionMatrixView, GraphEdgeView, GraphNodeView, GraphQuery, GraphSliceView,
    HomeOverviewView, KnowledgeRefView, LedgerCursor, LedgerOutcome, LedgerPageView, LedgerQuery,
    LedgerRowView, MatrixCellView, MatrixStepView, TargetAuditView, WaitingApprovalView,
};
pub use session::{
    ExportFormat, HitSource, ImportedSession, Outcome, SessionExportText, SessionHit,
    SessionListQuery, SessionSearchPage, SessionSearchQuery, SessionStatus, SessionSummary,
    SnippetPart,
};
pub use settings::{
    AuthStatusView, ConnectionCheck, DEFAULT_STALE_AFTER_DAYS, MAX_STALE_AFTER_DAYS, ProviderKind,
    Settings, SettingsView, SignInState,
};

/// Facts about the running application, shown in the UI's about/status area.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct AppInfo {
    /// Semantic version of the core.
    pub version: String,
    /// Where the database and logs live (operators ask this when backing up).
    pub data_dir: String,
    /// Schema version of the open database (a migration timestamp).
    #[ts(type = "number")]
    pub schema_version: i64,
}

/// The generated TypeScript for every IPC type, as one module.
///
/// The order is fixed so the output is deterministic; adding an IPC type means adding it here.
pub fn typescript_bindings() -> String {
    let cfg = ts_rs::Config::default();
    let decls = [
        AgentEvent::decl(&cfg),
        AppInfo::decl(&cfg),
        AuthStatusView::decl(&cfg),
        ApprovalKind::decl(&cfg),
        CommandClass::decl(&cfg),
        ConnectionCheck::decl(&cfg),
        ErrorCode::decl(&cfg),
        ExecStatus::decl(&cfg),
        Execution::decl(&cfg),
        IpcError::decl(&cfg),
        Message::decl(&cfg),
        Outcome::decl(&cfg),
        PlanStep::decl(&cfg),
        ProviderKind::decl(&cfg),
        Role::decl(&cfg),
        SessionListQuery::decl(&cfg),
        SessionStatus::decl(&cfg),
        SessionSummary::decl(&cfg),
        SessionView::decl(&cfg),
        MessagePage::decl(&cfg),
        Settings::decl(&cfg),
        SettingsView::decl(&cfg),
        SignInState::decl(&cfg),
        StepStatus::decl(&cfg),
        ToolCall::decl(&cfg),
        HitSource::decl(&cfg),
        SnippetPart::decl(&cfg),
        SessionHit::decl(&cfg),
        SessionSearchPage::decl(&cfg),
        SessionSearchQuery::decl(&cfg),
        ExportFormat::decl(&cfg),
        SessionExportText::decl(&cfg),
        ImportedSession::decl(&cfg),
        GraphQuery::decl(&cfg),
        GraphNodeView::decl(&cfg),
        GraphEdgeView::decl(&cfg),
        GraphSliceView::decl(&cfg),
        TargetAuditView::decl(&cfg),
        WaitingApprovalView::decl(&cfg),
        HomeOverviewView::decl(&cfg),
        AttributeChangeView::decl(&cfg),
        AttributeView::decl(&cfg),
        KnowledgeRefView::decl(&cfg),
        LedgerOutcome::decl(&cfg),
        LedgerRowView::decl(&cfg),
        EntityDetailsView::decl(&cfg),
        LedgerCursor::decl(&cfg),
        LedgerQuery::decl(&cfg),
        LedgerPageView::decl(&cfg),
        MatrixStepView::decl(&cfg),
        MatrixCellView::decl(&cfg),
        ExecutionMatrixView::decl(&cfg),
        DependentView::decl(&cfg),
        DependentsView::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from crates/protocol by `UPDATE_BINDINGS=1 cargo test -p nomos-protocol`.\n\
         // Do not edit by hand: a test fails when this file drifts from the Rust types.\n",
    );
    for decl in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    }
    out
}
