//! Start-up recovery (I14, §15 "kill -9 during a turn"): what a crash left behind.

use serde::Serialize;

use crate::approvals::ApprovalWindow;
use crate::db::{Store, WriteTx};
use crate::error::StoreError;
use crate::executions::{Execution, PendingContinuation};
use crate::messages::{FinishedMessage, MessageId};
use crate::sessions::SessionId;

/// Reason recorded on executions that a restart found unfinished.
pub const INTERRUPTED_REASON: &str = "Nomos stopped before this command finished; its result was not captured. Check the target before running it again.";
/// Error recorded on a non-empty placeholder whose turn a crash cut.
pub const CUT_TURN_ERROR: &str = "Nomos stopped during this turn; the reply may be incomplete.";

/// A turn cut by a crash: its placeholder was still `pending`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CutTurn {
    /// Session.
    pub session_id: SessionId,
    /// The placeholder.
    pub message_id: MessageId,
    /// `true`: it had content and was kept (with an error note); `false`: it was empty and
    /// was deleted.
    pub kept: bool,
}

/// What [`Store::recover_at_startup`] found and fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct RecoveryReport {
    /// Executions left queued/awaiting approval/running: now `failed`, queued for continuation.
    pub interrupted_executions: Vec<Execution>,
    /// Turns cut by the crash (placeholders left pending), one per placeholder.
    pub cut_turns: Vec<CutTurn>,
    /// Approval windows whose time ran out: now closed.
    pub expired_windows: Vec<ApprovalWindow>,
    /// Results the agent has not received (including the interrupted ones above): resume the
    /// `executing` sessions, keep a note for the others, then mark each continued.
    pub pending_continuations: Vec<PendingContinuation>,
}

impl WriteTx<'_> {
    /// Finish every placeholder left `pending`: empty ones are deleted, others kept with
    /// [`CUT_TURN_ERROR`].
    pub fn recover_cut_turns(&self) -> Result<Vec<CutTurn>, StoreError> {
        let pending = self.reader().pending_placeholders()?;
        let mut out = Vec::with_capacity(pending.len());
        for m in pending {
            let kept = matches!(
                self.finish_message(m.id, Some(CUT_TURN_ERROR))?,
                FinishedMessage::Kept(_)
            );
            out.push(CutTurn {
                session_id: m.session_id,
                message_id: m.id,
                kept,
            });
        }
        Ok(out)
    }
}

impl Store {
    /// Run once at start-up, before the agent starts: fails executions a crash interrupted
    /// (queuing their continuation), finishes cut turns, closes expired approval windows, and
    /// returns the continuations still owed. Idempotent.
    pub fn recover_at_startup(&self) -> Result<RecoveryReport, StoreError> {
        self.write(|w| {
            let interrupted_executions = w.fail_interrupted_executions(INTERRUPTED_REASON)?;
            let cut_turns = w.recover_cut_turns()?;
            let expired_windows = w.close_expired_approval_windows()?;
            let pending_continuations = w.reader().pending_continuations()?;
            Ok(RecoveryReport {
                interrupted_executions,
                cut_turns,
                expired_windows,
                pending_continuations,
            })
        })
    }

    /// Placeholders still pending (read-only view of the cut turns).
    pub fn pending_placeholders(&self) -> Result<Vec<crate::messages::Message>, StoreError> {
        self.read(|r| r.pending_placeholders())
    }

    /// Approval windows whose expiry has passed but that are still marked open.
    pub fn expired_approval_windows(&self) -> Result<Vec<ApprovalWindow>, StoreError> {
        let now = self.now_ms();
        self.read(|r| r.expired_approval_windows(now))
    }

    /// Executions not yet ended.
    pub fn active_executions(&self) -> Result<Vec<Execution>, StoreError> {
        self.read(|r| r.active_executions())
    }
}
