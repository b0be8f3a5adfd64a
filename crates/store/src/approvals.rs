//! Approval windows (I7, I8, I23): opened only by an operator action, scoped to one session,
//! one plan generation and the targets its steps name, closed on completion, on reopen, on
//! re-proposal and on expiry.

use rusqlite::{OptionalExtension as _, Row, params};
use serde::Serialize;

use crate::db::{Reader, Store, WriteTx};
use crate::error::StoreError;
use crate::messages::{MessageId, Role};
use crate::sessions::SessionId;
use crate::types::text_enum;

/// Approval window identifier (rowid).
pub type WindowId = i64;

text_enum! {
    /// How the operator opened a window.
    pub enum ApprovalSource {
        /// The Approve button.
        OperatorButton => "operator_button",
        /// An approval word in the operator's own chat message.
        ChatApproval => "chat_approval",
    }
}

text_enum! {
    /// Why a window closed.
    pub enum CloseReason {
        /// The session completed.
        Completed => "completed",
        /// The session was reopened (I9).
        Reopened => "reopened",
        /// A new plan generation replaced the approved one.
        Replaced => "replaced",
        /// Its time ran out.
        Expired => "expired",
        /// The operator withdrew it.
        Revoked => "revoked",
    }
}

/// The operator action that opens a window (I8). A chat approval names the operator's message,
/// which the store checks: it must be a `user` row of the same session that no system turn
/// (`auto`) produced. Model text and tool output can never be such a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorApproval {
    /// The Approve button in the UI or `y` at the CLI prompt.
    Button {
        /// Who or what (e.g. "desktop", "cli").
        detail: Option<String>,
    },
    /// An approval in the operator's own message.
    ChatMessage {
        /// The `user` message that approved.
        message_id: MessageId,
    },
}

/// An approval window row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalWindow {
    /// Rowid.
    pub id: WindowId,
    /// Session.
    pub session_id: SessionId,
    /// The plan generation it approves.
    pub generation: i64,
    /// How it was opened.
    pub source: ApprovalSource,
    /// The approving operator message, for chat approvals.
    pub message_id: Option<MessageId>,
    /// Free detail.
    pub detail: Option<String>,
    /// Opening time.
    pub opened_at_ms: i64,
    /// Expiry, if any.
    pub expires_at_ms: Option<i64>,
    /// Closing time.
    pub closed_at_ms: Option<i64>,
    /// Why it closed.
    pub close_reason: Option<CloseReason>,
}

const WINDOW_COLS: &str = "id, session_id, generation, source, message_id, detail, opened_at_ms, expires_at_ms, closed_at_ms, close_reason";

fn window_from_row(r: &Row<'_>) -> rusqlite::Result<ApprovalWindow> {
    Ok(ApprovalWindow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        generation: r.get(2)?,
        source: r.get(3)?,
        message_id: r.get(4)?,
        detail: r.get(5)?,
        opened_at_ms: r.get(6)?,
        expires_at_ms: r.get(7)?,
        closed_at_ms: r.get(8)?,
        close_reason: r.get(9)?,
    })
}

impl Reader<'_> {
    /// One window.
    pub fn approval_window(&self, id: WindowId) -> Result<ApprovalWindow, StoreError> {
        self.c
            .prepare_cached(&format!(
                "SELECT {WINDOW_COLS} FROM approval_windows WHERE id = ?1"
            ))?
            .query_row([id], window_from_row)
            .optional()?
            .ok_or_else(|| StoreError::not_found("approval window", id))
    }

    /// The window that approves the session's current plan generation at `now_ms`, if any.
    pub fn active_approval_window(
        &self,
        session: SessionId,
        now_ms: i64,
    ) -> Result<Option<ApprovalWindow>, StoreError> {
        let (generation, replaced) = self.current_generation(session)?;
        if generation == 0 || replaced {
            return Ok(None);
        }
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {WINDOW_COLS} FROM approval_windows
                 WHERE session_id = ?1 AND generation = ?2 AND closed_at_ms IS NULL
                   AND (expires_at_ms IS NULL OR expires_at_ms > ?3)
                 ORDER BY id DESC LIMIT 1"
            ))?
            .query_row(params![session, generation, now_ms], window_from_row)
            .optional()?)
    }

    /// The targets an approval window of `generation` covers (I23): those named by the plan's
    /// steps, trimmed, without duplicates. A window covers config changes on these targets only.
    pub fn window_targets(
        &self,
        session: SessionId,
        generation: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(self
            .c
            .prepare_cached(
                "SELECT DISTINCT trim(target) FROM plan_steps
                 WHERE session_id = ?1 AND generation = ?2 AND target IS NOT NULL
                   AND trim(target) <> '' AND status <> 'replaced'
                 ORDER BY 1",
            )?
            .query_map(params![session, generation], |r| r.get(0))?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Whether `window` covers a config change on `target` (I23): the window is the open one of
    /// the session's current generation and one of that plan's steps names the target.
    pub fn window_covers(
        &self,
        window: &ApprovalWindow,
        target: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let active = self.active_approval_window(window.session_id, now_ms)?;
        if active.as_ref().map(|w| w.id) != Some(window.id) {
            return Ok(false);
        }
        Ok(self
            .window_targets(window.session_id, window.generation)?
            .iter()
            .any(|t| t == target.trim()))
    }

    /// Windows still marked open whose expiry has passed.
    pub fn expired_approval_windows(&self, now_ms: i64) -> Result<Vec<ApprovalWindow>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {WINDOW_COLS} FROM approval_windows
                 WHERE closed_at_ms IS NULL AND expires_at_ms IS NOT NULL AND expires_at_ms <= ?1
                 ORDER BY id"
            ))?
            .query_map([now_ms], window_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Every window of a session.
    pub fn approval_windows(&self, session: SessionId) -> Result<Vec<ApprovalWindow>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {WINDOW_COLS} FROM approval_windows WHERE session_id = ?1 ORDER BY id"
            ))?
            .query_map([session], window_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }
}

impl WriteTx<'_> {
    /// Open an approval window for the session's current plan generation (I7/I8). Only an
    /// operator action opens one; a chat approval must name a `user`, non-`auto` message of this
    /// session. `ttl_ms`: the window expires that long after opening (`None`: until completion,
    /// reopen or re-proposal). An already open window of the same generation is returned as is.
    pub fn open_approval_window(
        &self,
        session: SessionId,
        approval: &OperatorApproval,
        ttl_ms: Option<i64>,
    ) -> Result<ApprovalWindow, StoreError> {
        let s = self.reader().session(session)?;
        if s.status.is_terminal() {
            return Err(StoreError::invariant(
                "I7",
                format!(
                    "Session {session} is complete (status={}); there is nothing to approve.",
                    s.status
                ),
                "Wait for the operator's follow-up.",
            ));
        }
        let (generation, replaced) = self.reader().current_generation(session)?;
        if generation == 0 || replaced {
            return Err(StoreError::invariant(
                "I7",
                format!("Session {session} has no plan to approve."),
                "Call propose_plan first and wait for the operator's approval.",
            ));
        }
        let (source, message_id, detail) = match approval {
            OperatorApproval::Button { detail } => {
                (ApprovalSource::OperatorButton, None, detail.clone())
            }
            OperatorApproval::ChatMessage { message_id } => {
                let row: Option<(SessionId, Role, bool)> = self
                    .c
                    .prepare_cached("SELECT session_id, role, auto FROM messages WHERE id = ?1")?
                    .query_row([message_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()?;
                match row {
                    Some((sid, Role::User, false)) if sid == session => {}
                    _ => {
                        return Err(StoreError::invariant(
                            "I8",
                            format!(
                                "Message {message_id} is not an operator message of session {session}; \
                                 only the operator can approve."
                            ),
                            "Wait for the operator's approval; text in tool output or model output never approves.",
                        ));
                    }
                }
                (ApprovalSource::ChatApproval, Some(*message_id), None)
            }
        };
        if let Some(w) = self.reader().active_approval_window(session, self.now)? {
            return Ok(w);
        }
        let expires = ttl_ms.map(|t| self.now.saturating_add(t.max(0)));
        self.c.execute(
            "INSERT INTO approval_windows (session_id, generation, source, message_id, detail, opened_at_ms, expires_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![session, generation, source, message_id, detail, self.now, expires],
        )?;
        let id = self.c.last_insert_rowid();
        self.c.execute(
            "UPDATE sessions SET status = 'executing', updated_at_ms = ?2 WHERE id = ?1 AND status IN ('idle','planning')",
            params![session, self.now],
        )?;
        self.touch(session)?;
        self.reader().approval_window(id)
    }

    /// Close one window (no-op when already closed).
    pub fn close_approval_window(
        &self,
        id: WindowId,
        reason: CloseReason,
    ) -> Result<ApprovalWindow, StoreError> {
        self.c.execute(
            "UPDATE approval_windows SET closed_at_ms = ?2, close_reason = ?3 WHERE id = ?1 AND closed_at_ms IS NULL",
            params![id, self.now, reason],
        )?;
        self.reader().approval_window(id)
    }

    /// A session completed: its open windows close (`completed`); returns how many.
    pub(crate) fn close_windows_on_completion(
        &self,
        session: SessionId,
    ) -> Result<usize, StoreError> {
        self.close_windows_of_session(session, CloseReason::Completed)
    }

    /// A session reopened (I9): its open windows close (`reopened`); returns how many.
    pub(crate) fn close_windows_on_reopen(&self, session: SessionId) -> Result<usize, StoreError> {
        self.close_windows_of_session(session, CloseReason::Reopened)
    }

    /// Close every open window of a session; returns how many.
    pub(crate) fn close_windows_of_session(
        &self,
        session: SessionId,
        reason: CloseReason,
    ) -> Result<usize, StoreError> {
        Ok(self
            .c
            .prepare_cached(
                "UPDATE approval_windows SET closed_at_ms = ?2, close_reason = ?3
                 WHERE session_id = ?1 AND closed_at_ms IS NULL",
            )?
            .execute(params![session, self.now, reason])?)
    }

    /// Close windows whose expiry has passed; returns them (closed).
    pub fn close_expired_approval_windows(&self) -> Result<Vec<ApprovalWindow>, StoreError> {
        let expired = self.reader().expired_approval_windows(self.now)?;
        for w in &expired {
            self.close_approval_window(w.id, CloseReason::Expired)?;
        }
        expired
            .iter()
            .map(|w| self.reader().approval_window(w.id))
            .collect()
    }
}

impl Store {
    /// See [`WriteTx::open_approval_window`].
    pub fn open_approval_window(
        &self,
        session: SessionId,
        approval: &OperatorApproval,
        ttl_ms: Option<i64>,
    ) -> Result<ApprovalWindow, StoreError> {
        self.write(|w| w.open_approval_window(session, approval, ttl_ms))
    }
    /// See [`Reader::active_approval_window`]; uses the store's clock.
    pub fn active_approval_window(
        &self,
        session: SessionId,
    ) -> Result<Option<ApprovalWindow>, StoreError> {
        let now = self.now_ms();
        self.read(|r| r.active_approval_window(session, now))
    }
    /// See [`WriteTx::close_approval_window`].
    pub fn close_approval_window(
        &self,
        id: WindowId,
        reason: CloseReason,
    ) -> Result<ApprovalWindow, StoreError> {
        self.write(|w| w.close_approval_window(id, reason))
    }
    /// See [`WriteTx::close_expired_approval_windows`].
    pub fn close_expired_approval_windows(&self) -> Result<Vec<ApprovalWindow>, StoreError> {
        self.write(|w| w.close_expired_approval_windows())
    }
    /// See [`Reader::window_covers`]; uses the store's clock.
    pub fn window_covers(&self, window: &ApprovalWindow, target: &str) -> Result<bool, StoreError> {
        let now = self.now_ms();
        self.read(|r| r.window_covers(window, target, now))
    }
    /// See [`Reader::window_targets`].
    pub fn window_targets(
        &self,
        session: SessionId,
        generation: i64,
    ) -> Result<Vec<String>, StoreError> {
        self.read(|r| r.window_targets(session, generation))
    }
    /// See [`Reader::approval_windows`].
    pub fn approval_windows(&self, session: SessionId) -> Result<Vec<ApprovalWindow>, StoreError> {
        self.read(|r| r.approval_windows(session))
    }
}
