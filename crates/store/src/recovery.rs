//! Start-up recovery (I14, §15 "kill -9 during a turn"): what a crash left behind.

use std::collections::HashMap;

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
    /// Finish every placeholder left `pending` by an owner that is gone (`is_alive` says no):
    /// empty ones are deleted, others kept with [`CUT_TURN_ERROR`]. A live process's turn in
    /// progress is left alone (I24).
    pub fn recover_cut_turns(
        &self,
        is_alive: &dyn Fn(Option<&str>) -> bool,
    ) -> Result<Vec<CutTurn>, StoreError> {
        let pending: Vec<(MessageId, SessionId, Option<String>)> = self
            .c
            .prepare_cached(
                "SELECT id, session_id, owner FROM messages WHERE pending = 1 ORDER BY id",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::with_capacity(pending.len());
        for (id, session_id, owner) in pending {
            if is_alive(owner.as_deref()) {
                continue;
            }
            let kept = matches!(
                self.finish_message(id, Some(CUT_TURN_ERROR))?,
                FinishedMessage::Kept(_)
            );
            out.push(CutTurn {
                session_id,
                message_id: id,
                kept,
            });
        }
        Ok(out)
    }
}

impl Store {
    /// Run once at start-up, before the agent starts: fails executions whose process is gone
    /// (queuing their continuation), finishes the turns such a process cut, drops its turn
    /// leases, closes expired approval windows, and returns the continuations this process
    /// owes. Work of a live process (another app or CLI on this data directory) is never
    /// touched (I24). Idempotent. Process groups are left running: see
    /// [`Store::recover_at_startup_with`].
    pub fn recover_at_startup(&self) -> Result<RecoveryReport, StoreError> {
        self.recover_at_startup_with(&|_| None)
    }

    /// [`Store::recover_at_startup`], ending what orphaned executions left running: `reap` is
    /// called, outside any transaction, for each execution of a dead owner that recorded a
    /// process group; it ends the group and returns the reason to record (`None`: nothing
    /// was ended, [`INTERRUPTED_REASON`] is recorded).
    pub fn recover_at_startup_with(
        &self,
        reap: &dyn Fn(&Execution) -> Option<String>,
    ) -> Result<RecoveryReport, StoreError> {
        self.inner.owner.sweep_dead();
        let is_alive = |o: Option<&str>| self.is_owner_alive(o);
        let mut reasons: HashMap<i64, String> = HashMap::new();
        for e in self.active_executions()? {
            if e.pgid.is_some()
                && !is_alive(e.owner.as_deref())
                && let Some(r) = reap(&e)
            {
                reasons.insert(e.id, r);
            }
        }
        self.write(|w| {
            let interrupted_executions = w.fail_interrupted_executions(&|e| {
                (!is_alive(e.owner.as_deref())).then(|| {
                    reasons
                        .get(&e.id)
                        .cloned()
                        .unwrap_or_else(|| INTERRUPTED_REASON.to_string())
                })
            })?;
            let cut_turns = w.recover_cut_turns(&is_alive)?;
            w.release_dead_turn_leases(&is_alive)?;
            let expired_windows = w.close_expired_approval_windows()?;
            let own = w.owner();
            let pending_continuations = w
                .reader()
                .pending_continuations()?
                .into_iter()
                .filter(|p| {
                    let o = p.execution.owner.as_deref();
                    o == Some(own) || !is_alive(o)
                })
                .collect();
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
