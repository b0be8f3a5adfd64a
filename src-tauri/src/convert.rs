//! Core types → wire DTOs. Kept in one place so the boundary is easy to audit.

use nomos_protocol as wire;
use nomos_store as store;

pub fn store_error(err: &store::StoreError) -> wire::IpcError {
    wire::IpcError::new(err.code(), err.to_string())
}

pub fn session_status(status: store::SessionStatus) -> wire::SessionStatus {
    match status {
        store::SessionStatus::Idle => wire::SessionStatus::Idle,
        store::SessionStatus::Planning => wire::SessionStatus::Planning,
        store::SessionStatus::Executing => wire::SessionStatus::Executing,
        store::SessionStatus::Done => wire::SessionStatus::Done,
        store::SessionStatus::Partial => wire::SessionStatus::Partial,
        store::SessionStatus::Failed => wire::SessionStatus::Failed,
        store::SessionStatus::Abandoned => wire::SessionStatus::Abandoned,
    }
}

pub fn outcome(outcome: store::Outcome) -> wire::Outcome {
    match outcome {
        store::Outcome::Success => wire::Outcome::Success,
        store::Outcome::Partial => wire::Outcome::Partial,
        store::Outcome::Failed => wire::Outcome::Failed,
        store::Outcome::Abandoned => wire::Outcome::Abandoned,
    }
}

pub fn session_summary(row: store::SessionSummary) -> wire::SessionSummary {
    wire::SessionSummary {
        id: row.id,
        title: row.title,
        goal: row.goal,
        status: session_status(row.status),
        outcome: row.outcome.map(outcome),
        summary: row.summary,
        created_at_ms: row.created_at_ms,
        last_active_at_ms: row.last_active_at_ms,
    }
}

pub fn session(row: store::Session) -> wire::SessionSummary {
    wire::SessionSummary {
        id: row.id,
        title: row.title,
        goal: row.goal,
        status: session_status(row.status),
        outcome: row.outcome.map(outcome),
        summary: row.summary,
        created_at_ms: row.created_at_ms,
        last_active_at_ms: row.last_active_at_ms,
    }
}
