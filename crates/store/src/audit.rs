//! The audit log: every tool call with its arguments, a result summary, session and time.

use rusqlite::{Row, params};
use serde::Serialize;

use crate::db::{Reader, Store, WriteTx};
use crate::error::{StoreError, missing_parent};
use crate::messages::MessageId;
use crate::messages::id_range;
use crate::secrets::redact;
use crate::sessions::SessionId;
use crate::types::{cap_head, sql_limit};

/// Result summaries longer than this are cut.
pub const MAX_AUDIT_SUMMARY_BYTES: usize = 2048;
/// Arguments longer than this are cut.
pub const MAX_AUDIT_ARGUMENTS_BYTES: usize = 16 * 1024;

/// Input of [`Store::record_audit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAudit {
    /// Session, if the call belongs to one.
    pub session_id: Option<SessionId>,
    /// The assistant message of the call.
    pub message_id: Option<MessageId>,
    /// Provider call id.
    pub call_id: Option<String>,
    /// Tool name.
    pub tool: String,
    /// Arguments (JSON text).
    pub arguments: String,
    /// Short result summary.
    pub result_summary: String,
    /// Whether the call succeeded.
    pub ok: bool,
    /// How long it took.
    pub duration_ms: Option<i64>,
}

impl NewAudit {
    /// A successful call.
    pub fn new(
        session_id: Option<SessionId>,
        tool: impl Into<String>,
        arguments: impl Into<String>,
        result_summary: impl Into<String>,
    ) -> Self {
        NewAudit {
            session_id,
            message_id: None,
            call_id: None,
            tool: tool.into(),
            arguments: arguments.into(),
            result_summary: result_summary.into(),
            ok: true,
            duration_ms: None,
        }
    }
    /// Set the message.
    pub fn message(mut self, id: MessageId) -> Self {
        self.message_id = Some(id);
        self
    }
    /// Set the call id.
    pub fn call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }
    /// Mark as failed.
    pub fn failed(mut self) -> Self {
        self.ok = false;
        self
    }
    /// Set the duration.
    pub fn duration_ms(mut self, ms: i64) -> Self {
        self.duration_ms = Some(ms);
        self
    }
}

/// An audit row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    /// Rowid.
    pub id: i64,
    /// Session.
    pub session_id: Option<SessionId>,
    /// Plan generation at the time of the call.
    pub generation: Option<i64>,
    /// Assistant message.
    pub message_id: Option<MessageId>,
    /// Provider call id.
    pub call_id: Option<String>,
    /// Tool name.
    pub tool: String,
    /// Arguments (JSON text, secrets scrubbed).
    pub arguments: String,
    /// Result summary.
    pub result_summary: String,
    /// Success.
    pub ok: bool,
    /// Duration.
    pub duration_ms: Option<i64>,
    /// Time.
    pub created_at_ms: i64,
}

fn audit_from_row(r: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    Ok(AuditEntry {
        id: r.get(0)?,
        session_id: r.get(1)?,
        generation: r.get(2)?,
        message_id: r.get(3)?,
        call_id: r.get(4)?,
        tool: r.get(5)?,
        arguments: r.get(6)?,
        result_summary: r.get(7)?,
        ok: r.get(8)?,
        duration_ms: r.get(9)?,
        created_at_ms: r.get(10)?,
    })
}

impl Reader<'_> {
    /// The audit ledger of a session, oldest first (`limit` 0: all). Session `0` lists the
    /// calls recorded outside any session.
    pub fn audit_log(&self, session: SessionId, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
        let (lo, hi) = id_range(session);
        Ok(self
            .c
            .prepare_cached(
                "SELECT id, session_id, generation, message_id, call_id, tool, arguments, result_summary, ok,
                        duration_ms, created_at_ms
                 FROM audit_log WHERE id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3",
            )?
            .query_map(params![lo, hi, sql_limit(limit)], audit_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }
}

impl WriteTx<'_> {
    /// Record one tool call in the audit log. The session's current plan generation is stamped.
    pub fn record_audit(&self, new: &NewAudit) -> Result<i64, StoreError> {
        let (args, _) = cap_head(&redact(&new.arguments), MAX_AUDIT_ARGUMENTS_BYTES);
        let (summary, _) = cap_head(&redact(&new.result_summary), MAX_AUDIT_SUMMARY_BYTES);
        // One statement: the clustered id and the session's current generation are subqueries.
        self.c
            .prepare_cached(
                "INSERT INTO audit_log (id, session_id, generation, message_id, call_id, tool, arguments,
                                        result_summary, ok, duration_ms, created_at_ms)
                 VALUES (
                    coalesce((SELECT id FROM audit_log
                              WHERE id BETWEEN coalesce(?1, 0) << 32 AND (coalesce(?1, 0) << 32) | 4294967295
                              ORDER BY id DESC LIMIT 1), coalesce(?1, 0) << 32) + 1,
                    ?1,
                    CASE WHEN ?1 IS NULL THEN NULL
                         ELSE (SELECT coalesce(max(generation), 0) FROM plan_generations WHERE session_id = ?1) END,
                    ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                new.session_id,
                new.message_id,
                new.call_id,
                new.tool,
                args,
                summary,
                new.ok,
                new.duration_ms,
                self.now
            ])
            .map_err(|e| missing_parent(e, "session", new.session_id.unwrap_or(0)))?;
        Ok(self.c.last_insert_rowid())
    }
}

impl Store {
    /// See [`WriteTx::record_audit`].
    pub fn record_audit(&self, new: &NewAudit) -> Result<i64, StoreError> {
        self.write(|w| w.record_audit(new))
    }
    /// See [`Reader::audit_log`].
    pub fn audit_log(&self, session: SessionId, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
        self.read(|r| r.audit_log(session, limit))
    }
}
