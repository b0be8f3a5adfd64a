//! The execution ledger: every `run`, with its classifier decision, approval, status, exit
//! code, duration, capped output and the I14 continuation bookkeeping.

use rusqlite::{OptionalExtension as _, Row, params};
use serde::Serialize;

use crate::approvals::WindowId;
use crate::db::{Reader, Store, WriteTx};
use crate::error::StoreError;
use crate::messages::MessageId;
use crate::plan::Fact;
use crate::secrets::redact;
use crate::sessions::{SessionId, SessionStatus};
use crate::types::{cap_text, non_blank, text_enum};

/// Execution identifier (rowid).
pub type ExecutionId = i64;

/// Each of stdout and stderr is stored capped at this many bytes (head + tail + marker).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The classifier's class, stored as its text: the one enum every crate shares.
pub use nomos_base::CommandClass;

text_enum! {
    /// Who or what approved an execution.
    pub enum ApprovalKind {
        /// Read-only: no approval needed.
        NotNeeded => "not_needed",
        /// The operator's Approve button on the command's card.
        OperatorButton => "operator_button",
        /// The operator's approval in chat.
        ChatApproval => "chat_approval",
        /// An open approval window (config mutations).
        Window => "window",
    }
}

text_enum! {
    /// Lifecycle of an execution.
    pub enum ExecStatus {
        /// Ready to run.
        Queued => "queued",
        /// Waits for the operator's approval.
        AwaitingApproval => "awaiting_approval",
        /// Running.
        Running => "running",
        /// Ran to completion (any exit code).
        Finished => "finished",
        /// Could not run or was lost (connection, crash).
        Failed => "failed",
        /// Cancelled or denied by the operator.
        Cancelled => "cancelled",
        /// Killed on timeout.
        TimedOut => "timed_out",
    }
}

impl ExecStatus {
    /// `finished`, `failed`, `cancelled`, `timed_out`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ExecStatus::Finished
                | ExecStatus::Failed
                | ExecStatus::Cancelled
                | ExecStatus::TimedOut
        )
    }
}

text_enum! {
    /// How the agent learned an execution's result (I14).
    pub enum ContinuedVia {
        /// `run` returned the result within its short wait.
        Inline => "inline",
        /// A resume turn ran with the result.
        Resume => "resume",
        /// The result was kept as a note for the operator's next message.
        Note => "note",
    }
}

/// An approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    /// Kind.
    pub kind: ApprovalKind,
    /// Who (operator name, message id, "desktop"…).
    pub by: Option<String>,
    /// The window, for [`ApprovalKind::Window`].
    pub window_id: Option<WindowId>,
}

/// Input of [`Store::create_execution`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewExecution {
    /// Session.
    pub session_id: SessionId,
    /// The plan step (seq in the current generation) it serves.
    pub step_seq: Option<i64>,
    /// The model's tool call id.
    pub call_id: Option<String>,
    /// Target entity slug.
    pub target: String,
    /// The command as the model wrote it.
    pub command: String,
    /// The exact canonical form the classifier produced: the executor runs this text, held in
    /// memory by the runner. The row keeps a redacted display copy and this text's digest.
    pub canonical: String,
    /// Classifier class.
    pub class: CommandClass,
    /// Classifier explanation (rule, reason).
    pub decision_reason: String,
    /// Full classifier decision (JSON), if any.
    pub decision: Option<serde_json::Value>,
    /// Approval known at creation (read-only: none needed; window). `None` and not read-only
    /// means the execution waits in `awaiting_approval`.
    pub approval: Option<Approval>,
}

/// Output of a finished execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionResult {
    /// `finished`, `failed`, `cancelled` or `timed_out`.
    pub status: ExecStatus,
    /// Exit code, when the process exited.
    pub exit_code: Option<i32>,
    /// Raw stdout (any bytes; stored as UTF-8 with replacement characters).
    pub stdout: Vec<u8>,
    /// Raw stderr.
    pub stderr: Vec<u8>,
    /// Why it failed, was cancelled or timed out.
    pub error: Option<String>,
}

/// An execution row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Execution {
    /// Rowid.
    pub id: ExecutionId,
    /// Session.
    pub session_id: SessionId,
    /// Plan generation at creation.
    pub generation: Option<i64>,
    /// Plan step.
    pub plan_step_id: Option<i64>,
    /// Tool call id.
    pub call_id: Option<String>,
    /// Target entity slug.
    pub target: String,
    /// Command as written.
    pub command: String,
    /// Canonical form: a display copy, secrets redacted. Never run it: run the exact text
    /// whose digest is [`Execution::canonical_sha256`] (I22).
    pub canonical: String,
    /// SHA-256 (hex) of the exact canonical text that was classified and approved; `None` for
    /// rows written before the digest existed, which can never run.
    pub canonical_sha256: Option<String>,
    /// Classifier class.
    pub class: CommandClass,
    /// Classifier explanation.
    pub decision_reason: String,
    /// Full decision JSON.
    pub decision: Option<serde_json::Value>,
    /// Approval kind.
    pub approval: Option<ApprovalKind>,
    /// Approved by.
    pub approved_by: Option<String>,
    /// Approval window.
    pub approval_window_id: Option<WindowId>,
    /// Approval time.
    pub approved_at_ms: Option<i64>,
    /// Status.
    pub status: ExecStatus,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Failure reason.
    pub error: Option<String>,
    /// Captured stdout (capped).
    pub stdout: String,
    /// Captured stderr (capped).
    pub stderr: String,
    /// Original stdout size in bytes.
    pub stdout_bytes: i64,
    /// Original stderr size in bytes.
    pub stderr_bytes: i64,
    /// stdout was truncated.
    pub stdout_truncated: bool,
    /// stderr was truncated.
    pub stderr_truncated: bool,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
    /// Start time.
    pub started_at_ms: Option<i64>,
    /// End time.
    pub finished_at_ms: Option<i64>,
    /// Duration (start → end).
    pub duration_ms: Option<i64>,
    /// `run` returned before the end: the result must reach the agent by a continuation.
    pub background: bool,
    /// When the agent received the result (I14).
    pub continued_at_ms: Option<i64>,
    /// How it received it.
    pub continued_via: Option<ContinuedVia>,
    /// The process (owner id, I24) that created it; `None` for rows written before owners.
    pub owner: Option<String>,
    /// The local process group it runs in, once started (I24: killed when its owner is gone).
    pub pgid: Option<i64>,
    /// The group leader's start time, clock ticks since boot, to tell a reused pgid apart.
    pub pgid_start_ticks: Option<i64>,
}

/// A finished background execution whose result the agent has not received (I14).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingContinuation {
    /// The execution.
    pub execution: Execution,
    /// Status of its session now: `executing` resumes automatically; otherwise the result
    /// becomes a note for the operator's next message.
    pub session_status: SessionStatus,
    /// The operator's Stop paused the session (I21): the result waits for the operator's
    /// next message whatever the status.
    pub session_paused: bool,
}

const EXEC_COLS: &str = "id, session_id, generation, plan_step_id, call_id, target, command, canonical, class, \
     decision_reason, decision, approval, approved_by, approval_window_id, approved_at_ms, status, exit_code, \
     error, stdout, stderr, stdout_bytes, stderr_bytes, stdout_truncated, stderr_truncated, created_at_ms, \
     updated_at_ms, started_at_ms, finished_at_ms, duration_ms, background, continued_at_ms, continued_via, canonical_sha256, \
     owner, pgid, pgid_start_ticks";

fn exec_from_row(r: &Row<'_>) -> rusqlite::Result<Execution> {
    let decision: Option<String> = r.get(10)?;
    Ok(Execution {
        id: r.get(0)?,
        session_id: r.get(1)?,
        generation: r.get(2)?,
        plan_step_id: r.get(3)?,
        call_id: r.get(4)?,
        target: r.get(5)?,
        command: r.get(6)?,
        canonical: r.get(7)?,
        class: r.get(8)?,
        decision_reason: r.get(9)?,
        decision: decision.and_then(|d| serde_json::from_str(&d).ok()),
        approval: r.get(11)?,
        approved_by: r.get(12)?,
        approval_window_id: r.get(13)?,
        approved_at_ms: r.get(14)?,
        status: r.get(15)?,
        exit_code: r.get(16)?,
        error: r.get(17)?,
        stdout: r.get(18)?,
        stderr: r.get(19)?,
        stdout_bytes: r.get(20)?,
        stderr_bytes: r.get(21)?,
        stdout_truncated: r.get(22)?,
        stderr_truncated: r.get(23)?,
        created_at_ms: r.get(24)?,
        updated_at_ms: r.get(25)?,
        started_at_ms: r.get(26)?,
        finished_at_ms: r.get(27)?,
        duration_ms: r.get(28)?,
        background: r.get(29)?,
        continued_at_ms: r.get(30)?,
        continued_via: r.get(31)?,
        canonical_sha256: r.get(32)?,
        owner: r.get(33)?,
        pgid: r.get(34)?,
        pgid_start_ticks: r.get(35)?,
    })
}

impl Reader<'_> {
    /// One execution.
    pub fn execution(&self, id: ExecutionId) -> Result<Execution, StoreError> {
        self.c
            .prepare_cached(&format!("SELECT {EXEC_COLS} FROM executions WHERE id = ?1"))?
            .query_row([id], exec_from_row)
            .optional()?
            .ok_or_else(|| StoreError::not_found("execution", id))
    }

    /// Executions of a session, oldest first.
    pub fn executions(&self, session: SessionId) -> Result<Vec<Execution>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {EXEC_COLS} FROM executions WHERE session_id = ?1 ORDER BY id"
            ))?
            .query_map([session], exec_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// What a page of the transcript needs from the ledger: the executions of the `run` calls
    /// of messages `first..=last`, and every one of the session still queued, waiting for
    /// approval or running (the approval cards and the plan panel show those wherever they
    /// were asked). Oldest first. Both reads go through an index; neither grows with the
    /// session's history.
    pub fn executions_for_page(
        &self,
        session: SessionId,
        first: MessageId,
        last: MessageId,
    ) -> Result<Vec<Execution>, StoreError> {
        let mut out = self
            .c
            .prepare_cached(&page_executions_sql())?
            .query_map(params![session, first, last], exec_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let live = self
            .c
            .prepare_cached(&live_executions_sql())?
            .query_map([session], exec_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        out.extend(live);
        out.sort_by_key(|e| e.id);
        out.dedup_by_key(|e| e.id);
        Ok(out)
    }

    /// I18: the latest `finished` execution of the same canonical command on the same target in
    /// the session's current plan generation, if any. Compared by the digest of the exact text:
    /// two commands whose display copies redact to the same text are different commands.
    pub fn earlier_run(
        &self,
        session: SessionId,
        target: &str,
        canonical: &str,
    ) -> Result<Option<Execution>, StoreError> {
        self.latest_same_run(session, target, canonical, "status = 'finished'")
    }

    /// I18: an execution of the same command on the same target in the current plan
    /// generation that has not ended yet (queued, awaiting approval or running), if any.
    /// Starting the command again would run it twice at once.
    pub fn run_in_flight(
        &self,
        session: SessionId,
        target: &str,
        canonical: &str,
    ) -> Result<Option<Execution>, StoreError> {
        self.latest_same_run(
            session,
            target,
            canonical,
            "status IN ('queued','awaiting_approval','running')",
        )
    }

    /// The latest execution of the exact `canonical` on `target` in the current generation
    /// whose status matches `status_sql` (a fixed SQL condition, never operator input).
    fn latest_same_run(
        &self,
        session: SessionId,
        target: &str,
        canonical: &str,
        status_sql: &'static str,
    ) -> Result<Option<Execution>, StoreError> {
        let (generation, _) = self.current_generation(session)?;
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {EXEC_COLS} FROM executions
                 WHERE session_id = ?1 AND generation = ?2 AND target = ?3 AND canonical_sha256 = ?4
                   AND {status_sql}
                 ORDER BY id DESC LIMIT 1"
            ))?
            .query_row(
                params![session, generation, target.trim(), sha256_hex(canonical)],
                exec_from_row,
            )
            .optional()?)
    }

    /// I14: background executions that ended but whose result the agent has not received.
    pub fn pending_continuations(&self) -> Result<Vec<PendingContinuation>, StoreError> {
        let ids: Vec<(ExecutionId, SessionStatus, bool)> = self
            .c
            .prepare_cached(
                "SELECT e.id, s.status, s.paused_at_ms IS NOT NULL FROM executions e JOIN sessions s ON s.id = e.session_id
                 WHERE e.background = 1 AND e.continued_at_ms IS NULL
                   AND e.status IN ('finished','failed','cancelled','timed_out')
                 ORDER BY e.finished_at_ms, e.id",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        ids.into_iter()
            .map(|(id, session_status, session_paused)| {
                Ok(PendingContinuation {
                    execution: self.execution(id)?,
                    session_status,
                    session_paused,
                })
            })
            .collect()
    }

    /// Executions not yet terminal (`queued`, `awaiting_approval`, `running`).
    pub fn active_executions(&self) -> Result<Vec<Execution>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {EXEC_COLS} FROM executions WHERE status IN ('queued','awaiting_approval','running') ORDER BY id"
            ))?
            .query_map([], exec_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }
}

/// SHA-256 of `text`, lowercase hex.
pub(crate) fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

impl Execution {
    /// Whether `text` is byte for byte the text that was classified and approved for this
    /// execution (I22): only such a text may run.
    pub fn is_exact_command(&self, text: &str) -> bool {
        self.canonical_sha256
            .as_deref()
            .is_some_and(|d| d == sha256_hex(text))
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl WriteTx<'_> {
    fn exec_status(
        &self,
        id: ExecutionId,
    ) -> Result<(SessionId, ExecStatus, Option<i64>), StoreError> {
        self.c
            .prepare_cached("SELECT session_id, status, generation FROM executions WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?
            .ok_or_else(|| StoreError::not_found("execution", id))
    }

    fn bad_transition(id: ExecutionId, from: ExecStatus, to: &str) -> StoreError {
        StoreError::Conflict {
            message: format!("Execution {id} is {from}; it cannot become {to}."),
        }
    }

    /// Record a `run`. Refused without a live plan (I1: `StoreError::Invariant` with code
    /// `"I1"` and a directive). Read-only commands and those with an approval start `queued`;
    /// others wait in `awaiting_approval`. A window approval must name the session's active window
    /// (I7). The current plan generation is stamped (I6, I18).
    pub fn create_execution(&self, new: &NewExecution) -> Result<Execution, StoreError> {
        non_blank("A command", &new.command)?;
        non_blank("A target", &new.target)?;
        crate::sessions::touch_checked(self.c, new.session_id, self.now)?;
        let (generation, replaced) = self.reader().current_generation(new.session_id)?;
        if generation == 0 || replaced {
            return Err(StoreError::invariant(
                "I1",
                format!(
                    "Session {} has no plan; a command cannot run.",
                    new.session_id
                ),
                "Call propose_plan first (even a read-only task needs a one-step plan), then run.",
            ));
        }
        let generation = Some(generation);
        let step_id: Option<i64> = match (new.step_seq, generation) {
            (Some(seq), Some(g)) => self
                .c
                .query_row(
                    "SELECT id FROM plan_steps WHERE session_id = ?1 AND generation = ?2 AND seq = ?3",
                    params![new.session_id, g, seq],
                    |r| r.get(0),
                )
                .optional()?,
            _ => None,
        };
        let approval = match (&new.approval, new.class) {
            (Some(a), _) => Some(a.clone()),
            (None, CommandClass::ReadOnly) => Some(Approval {
                kind: ApprovalKind::NotNeeded,
                by: None,
                window_id: None,
            }),
            (None, _) => None,
        };
        if let Some(a) = &approval {
            self.check_approval(new.session_id, new.class, new.target.trim(), a)?;
        }
        let status = if approval.is_some() {
            ExecStatus::Queued
        } else {
            ExecStatus::AwaitingApproval
        };
        // The decision quotes the exact command (its canonical form, finding spans): it is
        // stored as a display copy like the command itself (I22).
        let decision = new
            .decision
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?
            .map(|d| redact(&d).into_owned());
        self.c
            .prepare_cached(
                "INSERT INTO executions (session_id, generation, plan_step_id, call_id, target, command, canonical,
                     class, decision_reason, decision, approval, approved_by, approval_window_id, approved_at_ms,
                     status, created_at_ms, updated_at_ms, canonical_sha256, owner)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?16, ?17, ?18)",
            )?
            .execute(params![
                new.session_id,
                generation,
                step_id,
                new.call_id,
                new.target.trim(),
                redact(&new.command).as_ref(),
                redact(&new.canonical).as_ref(),
                new.class,
                redact(&new.decision_reason).as_ref(),
                decision,
                approval.as_ref().map(|a| a.kind),
                approval.as_ref().and_then(|a| a.by.clone()),
                approval.as_ref().and_then(|a| a.window_id),
                approval.as_ref().map(|_| self.now),
                status,
                self.now,
                sha256_hex(&new.canonical),
                self.owner,
            ])?;
        let id = self.c.last_insert_rowid();
        self.reader().execution(id)
    }

    fn check_approval(
        &self,
        session: SessionId,
        class: CommandClass,
        target: &str,
        a: &Approval,
    ) -> Result<(), StoreError> {
        match (a.kind, class) {
            (ApprovalKind::NotNeeded, CommandClass::ReadOnly) => Ok(()),
            (ApprovalKind::NotNeeded, _) => Err(StoreError::invariant(
                "I7",
                format!("A {class} command needs an approval."),
                "Wait for the operator's approval.",
            )),
            (ApprovalKind::Window, CommandClass::Destructive) => Err(StoreError::invariant(
                "I7",
                "A destructive command needs its own approval; an approval window does not cover it.",
                "Ask the operator to approve this command on its card.",
            )),
            (ApprovalKind::Window, _) => {
                let active = self.reader().active_approval_window(session, self.now)?;
                match (active, a.window_id) {
                    (Some(w), Some(id)) if w.id == id => {
                        let targets = self.reader().window_targets(session, w.generation)?;
                        if targets.iter().any(|t| t == target) {
                            Ok(())
                        } else {
                            Err(StoreError::invariant(
                                "I23",
                                format!(
                                    "The approval window covers the targets of plan v{} ({}); {target} is not one of them.",
                                    w.generation,
                                    if targets.is_empty() {
                                        "none".to_owned()
                                    } else {
                                        targets.join(", ")
                                    }
                                ),
                                "Ask the operator to approve this command on its card.",
                            ))
                        }
                    }
                    (Some(w), None) => Err(StoreError::invariant(
                        "I7",
                        format!(
                            "Approval by window needs the window id (the open one is {}).",
                            w.id
                        ),
                        "Pass the active window.",
                    )),
                    _ => Err(StoreError::invariant(
                        "I7",
                        "No approval window of the operator covers the current plan.",
                        "Wait for the operator to approve the plan (Approve button or an approval word in chat).",
                    )),
                }
            }
            (ApprovalKind::OperatorButton | ApprovalKind::ChatApproval, _) => Ok(()),
        }
    }

    /// The operator approved an execution waiting in `awaiting_approval`: it becomes `queued`.
    pub fn approve_execution(
        &self,
        id: ExecutionId,
        approval: &Approval,
    ) -> Result<Execution, StoreError> {
        let (session, status, generation) = self.exec_status(id)?;
        if status != ExecStatus::AwaitingApproval {
            return Err(Self::bad_transition(id, status, "approved"));
        }
        if approval.kind == ApprovalKind::NotNeeded {
            return Err(StoreError::invalid(
                "An approval of kind not_needed approves nothing",
            ));
        }
        let (class, target): (CommandClass, String) = self.c.query_row(
            "SELECT class, target FROM executions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        self.check_current(session, id, generation)?;
        self.check_approval(session, class, &target, approval)?;
        self.c.execute(
            "UPDATE executions SET status = 'queued', approval = ?2, approved_by = ?3, approval_window_id = ?4,
                    approved_at_ms = ?5, updated_at_ms = ?5 WHERE id = ?1",
            params![id, approval.kind, approval.by, approval.window_id, self.now],
        )?;
        self.touch(session)?;
        self.reader().execution(id)
    }

    /// B5/I23: an execution is approvable only while its session is live and the plan
    /// generation it was asked under is still the current one (not completed, re-proposed or
    /// reopened since).
    fn check_current(
        &self,
        session: SessionId,
        id: ExecutionId,
        generation: Option<i64>,
    ) -> Result<(), StoreError> {
        let s = self.reader().session(session)?;
        let (current, replaced) = self.reader().current_generation(session)?;
        let stale = s.status.is_terminal() || replaced || generation != Some(current);
        if stale {
            return Err(StoreError::invariant(
                "I23",
                format!(
                    "Execution {id} was asked under plan v{} of session {session}, which is no longer \
                     the plan in flight (session {}, plan v{current}{}).",
                    generation.unwrap_or(0),
                    s.status,
                    if replaced { " replaced" } else { "" }
                ),
                "Ask the agent to run it again under the current plan.",
            ));
        }
        Ok(())
    }

    /// The operator denied (or cancelled before start) an execution: `cancelled`.
    pub fn deny_execution(&self, id: ExecutionId, reason: &str) -> Result<Execution, StoreError> {
        let (session, status, _) = self.exec_status(id)?;
        if !matches!(status, ExecStatus::AwaitingApproval | ExecStatus::Queued) {
            return Err(Self::bad_transition(id, status, "cancelled before start"));
        }
        self.c.execute(
            "UPDATE executions SET status = 'cancelled', error = ?2, finished_at_ms = ?3, updated_at_ms = ?3
             WHERE id = ?1",
            params![id, reason, self.now],
        )?;
        self.touch(session)?;
        self.reader().execution(id)
    }

    /// `queued` → `running`.
    pub fn start_execution(&self, id: ExecutionId) -> Result<Execution, StoreError> {
        let (session, status, _) = self.exec_status(id)?;
        if status != ExecStatus::Queued {
            return Err(Self::bad_transition(id, status, "running"));
        }
        self.c.execute(
            "UPDATE executions SET status = 'running', started_at_ms = ?2, updated_at_ms = ?2 WHERE id = ?1",
            params![id, self.now],
        )?;
        self.touch(session)?;
        self.reader().execution(id)
    }

    /// `run` stopped waiting: the result will reach the agent by a continuation (I14).
    pub fn mark_execution_background(&self, id: ExecutionId) -> Result<(), StoreError> {
        self.exec_status(id)?;
        self.c
            .execute("UPDATE executions SET background = 1 WHERE id = ?1", [id])?;
        Ok(())
    }

    /// Record the end of an execution. Output is capped at [`MAX_OUTPUT_BYTES`] per stream.
    /// A `finished` run counts for the I6 gate of its generation.
    pub fn finish_execution(
        &self,
        id: ExecutionId,
        result: &ExecutionResult,
    ) -> Result<Execution, StoreError> {
        let (session, status, generation) = self.exec_status(id)?;
        if !result.status.is_terminal() {
            return Err(StoreError::invalid(format!(
                "{} is not an end status",
                result.status
            )));
        }
        let allowed = match result.status {
            ExecStatus::Finished | ExecStatus::TimedOut => status == ExecStatus::Running,
            _ => !status.is_terminal(),
        };
        if !allowed {
            return Err(Self::bad_transition(id, status, result.status.as_str()));
        }
        let out = redact(&lossy(&result.stdout)).into_owned();
        let err = redact(&lossy(&result.stderr)).into_owned();
        let (stdout, stdout_truncated) = cap_text(&out, MAX_OUTPUT_BYTES);
        let (stderr, stderr_truncated) = cap_text(&err, MAX_OUTPUT_BYTES);
        self.c.execute(
            "UPDATE executions SET status = ?2, exit_code = ?3, error = ?4, stdout = ?5, stderr = ?6,
                    stdout_bytes = ?7, stderr_bytes = ?8, stdout_truncated = ?9, stderr_truncated = ?10,
                    finished_at_ms = ?11, updated_at_ms = ?11,
                    duration_ms = CASE WHEN started_at_ms IS NULL THEN NULL ELSE max(0, ?11 - started_at_ms) END
             WHERE id = ?1",
            params![
                id,
                result.status,
                result.exit_code,
                result.error.as_deref().map(|e| redact(e).into_owned()),
                stdout,
                stderr,
                i64::try_from(result.stdout.len()).unwrap_or(i64::MAX),
                i64::try_from(result.stderr.len()).unwrap_or(i64::MAX),
                stdout_truncated,
                stderr_truncated,
                self.now
            ],
        )?;
        if result.status == ExecStatus::Finished
            && let Some(g) = generation
        {
            self.count_fact(session, Some(g), Fact::RunFinished)?;
        }
        self.touch(session)?;
        self.reader().execution(id)
    }

    /// I14: the agent received the result. Call it only after the resume turn actually ran
    /// (or the result was kept as a note, or `run` returned it inline). Returns `false` when
    /// it was already marked.
    pub fn mark_execution_continued(
        &self,
        id: ExecutionId,
        via: ContinuedVia,
    ) -> Result<bool, StoreError> {
        let (_, status, _) = self.exec_status(id)?;
        if !status.is_terminal() {
            return Err(StoreError::Conflict {
                message: format!(
                    "Execution {id} is {status}; only an ended execution can be continued."
                ),
            });
        }
        let n = self.c.execute(
            "UPDATE executions SET continued_at_ms = ?2, continued_via = ?3 WHERE id = ?1 AND continued_at_ms IS NULL",
            params![id, self.now, via],
        )?;
        Ok(n == 1)
    }

    /// Record the process group a started execution runs in (I24), so that a later start-up
    /// can end it if this process dies first.
    pub fn record_execution_group(
        &self,
        id: ExecutionId,
        pgid: i64,
        start_ticks: Option<i64>,
    ) -> Result<(), StoreError> {
        self.exec_status(id)?;
        self.c.execute(
            "UPDATE executions SET pgid = ?2, pgid_start_ticks = ?3 WHERE id = ?1",
            params![id, pgid, start_ticks],
        )?;
        Ok(())
    }

    /// Start-up: executions left `queued`, `running` or `awaiting_approval` by a process that
    /// is gone are marked `failed` and queued for continuation, so the session learns of it.
    /// `reason_for` returns the reason to record for each such execution, or `None` to leave
    /// it alone (its owner is alive: I24).
    pub fn fail_interrupted_executions(
        &self,
        reason_for: &dyn Fn(&Execution) -> Option<String>,
    ) -> Result<Vec<Execution>, StoreError> {
        let mut active = self.reader().active_executions()?;
        let mut reasons = Vec::with_capacity(active.len());
        active.retain(|e| match reason_for(e) {
            Some(r) => {
                reasons.push(r);
                true
            }
            None => false,
        });
        for (e, reason) in active.iter().zip(&reasons) {
            self.c.execute(
                "UPDATE executions SET status = 'failed', error = ?2, background = 1,
                        finished_at_ms = ?3, updated_at_ms = ?3,
                        duration_ms = CASE WHEN started_at_ms IS NULL THEN NULL ELSE max(0, ?3 - started_at_ms) END
                 WHERE id = ?1",
                params![e.id, reason, self.now],
            )?;
        }
        active
            .iter()
            .map(|e| self.reader().execution(e.id))
            .collect()
    }
}

impl Store {
    /// See [`WriteTx::create_execution`].
    pub fn create_execution(&self, new: &NewExecution) -> Result<Execution, StoreError> {
        self.write(|w| w.create_execution(new))
    }
    /// See [`WriteTx::approve_execution`].
    pub fn approve_execution(
        &self,
        id: ExecutionId,
        approval: &Approval,
    ) -> Result<Execution, StoreError> {
        self.write(|w| w.approve_execution(id, approval))
    }
    /// See [`WriteTx::deny_execution`].
    pub fn deny_execution(&self, id: ExecutionId, reason: &str) -> Result<Execution, StoreError> {
        self.write(|w| w.deny_execution(id, reason))
    }
    /// See [`WriteTx::start_execution`].
    pub fn start_execution(&self, id: ExecutionId) -> Result<Execution, StoreError> {
        self.write(|w| w.start_execution(id))
    }
    /// See [`WriteTx::record_execution_group`].
    pub fn record_execution_group(
        &self,
        id: ExecutionId,
        pgid: i64,
        start_ticks: Option<i64>,
    ) -> Result<(), StoreError> {
        self.write(|w| w.record_execution_group(id, pgid, start_ticks))
    }
    /// See [`WriteTx::mark_execution_background`].
    pub fn mark_execution_background(&self, id: ExecutionId) -> Result<(), StoreError> {
        self.write(|w| w.mark_execution_background(id))
    }
    /// See [`WriteTx::finish_execution`].
    pub fn finish_execution(
        &self,
        id: ExecutionId,
        result: &ExecutionResult,
    ) -> Result<Execution, StoreError> {
        self.write(|w| w.finish_execution(id, result))
    }
    /// See [`WriteTx::mark_execution_continued`].
    pub fn mark_execution_continued(
        &self,
        id: ExecutionId,
        via: ContinuedVia,
    ) -> Result<bool, StoreError> {
        self.write(|w| w.mark_execution_continued(id, via))
    }
    /// See [`Reader::execution`].
    pub fn get_execution(&self, id: ExecutionId) -> Result<Execution, StoreError> {
        self.read(|r| r.execution(id))
    }
    /// See [`Reader::executions`].
    pub fn executions(&self, session: SessionId) -> Result<Vec<Execution>, StoreError> {
        self.read(|r| r.executions(session))
    }
    /// See [`Reader::earlier_run`].
    pub fn earlier_run(
        &self,
        session: SessionId,
        target: &str,
        canonical: &str,
    ) -> Result<Option<Execution>, StoreError> {
        self.read(|r| r.earlier_run(session, target, canonical))
    }
    /// See [`Reader::run_in_flight`].
    pub fn run_in_flight(
        &self,
        session: SessionId,
        target: &str,
        canonical: &str,
    ) -> Result<Option<Execution>, StoreError> {
        self.read(|r| r.run_in_flight(session, target, canonical))
    }
    /// See [`Reader::pending_continuations`].
    pub fn pending_continuations(&self) -> Result<Vec<PendingContinuation>, StoreError> {
        self.read(|r| r.pending_continuations())
    }
}

// ---- What ran where: the ledger across sessions and the steps × targets matrix --------------

text_enum! {
    /// How an execution ended, as the ledger filters it.
    pub enum LedgerOutcome {
        /// Finished with exit code 0.
        Succeeded => "succeeded",
        /// Finished with another exit code, failed to run, or timed out.
        Failed => "failed",
        /// Cancelled (denied, stopped) before or while running.
        Cancelled => "cancelled",
        /// Queued, awaiting approval or running.
        Pending => "pending",
    }
}

/// The SQL expression of [`LedgerOutcome`] over `executions x`.
const OUTCOME_EXPR: &str = "CASE WHEN x.status = 'finished' AND x.exit_code = 0 THEN 'succeeded'
     WHEN x.status IN ('finished','failed','timed_out') THEN 'failed'
     WHEN x.status = 'cancelled' THEN 'cancelled' ELSE 'pending' END";

/// A ledger page asks for rows at most this many at once.
pub const MAX_LEDGER_PAGE: u32 = 1000;
/// The matrix of one session reads at most this many executions.
pub const MAX_MATRIX_EXECUTIONS: usize = 10_000;

/// Where a ledger page starts: strictly older than this (the previous page's last row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LedgerCursor {
    /// That row's creation time.
    pub created_at_ms: i64,
    /// That row's id.
    pub id: ExecutionId,
}

/// Filter of [`Reader::execution_ledger`]; every field narrows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerFilter {
    /// Target slug, exactly.
    pub target: Option<String>,
    /// One session.
    pub session: Option<SessionId>,
    /// Classes (empty: all).
    pub classes: Vec<CommandClass>,
    /// Outcomes (empty: all).
    pub outcomes: Vec<LedgerOutcome>,
    /// Created at or after.
    pub since_ms: Option<i64>,
    /// Created before.
    pub until_ms: Option<i64>,
    /// Page start.
    pub before: Option<LedgerCursor>,
    /// Rows (0: 100; at most [`MAX_LEDGER_PAGE`]).
    pub limit: u32,
}

/// One ledger row: an execution without its output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerRow {
    /// Execution id.
    pub id: ExecutionId,
    /// Session.
    pub session_id: SessionId,
    /// Its title.
    pub session_title: String,
    /// The message whose tool call started it (for a link into the transcript).
    pub message_id: Option<i64>,
    /// Plan generation.
    pub generation: Option<i64>,
    /// Plan step.
    pub plan_step_id: Option<i64>,
    /// Its number.
    pub plan_step_seq: Option<i64>,
    /// Its title.
    pub plan_step_title: Option<String>,
    /// Target slug.
    pub target: String,
    /// Command (display copy).
    pub command: String,
    /// Class.
    pub class: CommandClass,
    /// Classifier reason.
    pub decision_reason: String,
    /// Approval kind.
    pub approval: Option<ApprovalKind>,
    /// Who approved.
    pub approved_by: Option<String>,
    /// When.
    pub approved_at_ms: Option<i64>,
    /// Status.
    pub status: ExecStatus,
    /// Outcome.
    pub outcome: LedgerOutcome,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Failure reason.
    pub error: Option<String>,
    /// Created.
    pub created_at_ms: i64,
    /// Started.
    pub started_at_ms: Option<i64>,
    /// Finished.
    pub finished_at_ms: Option<i64>,
    /// Duration.
    pub duration_ms: Option<i64>,
}

/// A page of the ledger, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerPage {
    /// Rows.
    pub rows: Vec<LedgerRow>,
    /// The cursor of the next (older) page, when there is one.
    pub next: Option<LedgerCursor>,
}

/// One plan step (row) of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatrixStep {
    /// Step id (`None`: executions outside any plan step).
    pub id: Option<i64>,
    /// Generation.
    pub generation: Option<i64>,
    /// Number in its generation.
    pub seq: Option<i64>,
    /// Title.
    pub title: String,
    /// Status text.
    pub status: Option<String>,
}

/// What ran for one step on one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatrixCell {
    /// Step id (`None`: outside any step).
    pub plan_step_id: Option<i64>,
    /// Target slug.
    pub target: String,
    /// Executions.
    pub runs: u32,
    /// Of which succeeded.
    pub succeeded: u32,
    /// Of which failed.
    pub failed: u32,
    /// The most mutating class among them.
    pub class: CommandClass,
    /// The latest execution.
    pub last_execution_id: ExecutionId,
    /// Its outcome.
    pub last_outcome: LedgerOutcome,
}

/// Plan steps × targets for one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecutionMatrix {
    /// Session.
    pub session_id: SessionId,
    /// Rows: every plan step of every generation in order, then "outside any step" if used.
    pub steps: Vec<MatrixStep>,
    /// Columns: targets, sorted.
    pub targets: Vec<String>,
    /// Non-empty cells.
    pub cells: Vec<MatrixCell>,
    /// The session had more than [`MAX_MATRIX_EXECUTIONS`] executions; the newest are left out.
    pub truncated: bool,
}

/// The ledger query; only the target clause varies, so the planner picks the target index
/// when there is a target and the time index otherwise.
pub(crate) fn ledger_sql(with_target: bool) -> String {
    let target = if with_target {
        "x.target = ?1"
    } else {
        "?1 IS NULL"
    };
    format!(
        "SELECT x.id, x.session_id, s.title,
                (SELECT tc.message_id FROM tool_calls tc
                  WHERE tc.message_id BETWEEN x.session_id << 32 AND (x.session_id << 32) + 4294967295
                    AND tc.call_id = x.call_id LIMIT 1),
                x.generation, x.plan_step_id, p.seq, p.title, x.target, x.command, x.class,
                x.decision_reason, x.approval, x.approved_by, x.approved_at_ms, x.status, {OUTCOME_EXPR},
                x.exit_code, x.error, x.created_at_ms, x.started_at_ms, x.finished_at_ms, x.duration_ms
         FROM executions x JOIN sessions s ON s.id = x.session_id
         LEFT JOIN plan_steps p ON p.id = x.plan_step_id
         WHERE {target}
           AND x.created_at_ms >= ?2 AND x.created_at_ms < ?3
           AND (x.created_at_ms, x.id) < (?4, ?5)
           AND (?6 IS NULL OR x.session_id = ?6)
           AND (?7 IS NULL OR x.class IN (SELECT value FROM json_each(?7)))
           AND (?8 IS NULL OR ({OUTCOME_EXPR}) IN (SELECT value FROM json_each(?8)))
         ORDER BY x.created_at_ms DESC, x.id DESC LIMIT ?9"
    )
}

fn ledger_row(r: &Row<'_>) -> rusqlite::Result<LedgerRow> {
    let outcome: String = r.get(16)?;
    Ok(LedgerRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        session_title: r.get(2)?,
        message_id: r.get(3)?,
        generation: r.get(4)?,
        plan_step_id: r.get(5)?,
        plan_step_seq: r.get(6)?,
        plan_step_title: r.get(7)?,
        target: r.get(8)?,
        command: r.get(9)?,
        class: r.get(10)?,
        decision_reason: r.get(11)?,
        approval: r.get(12)?,
        approved_by: r.get(13)?,
        approved_at_ms: r.get(14)?,
        status: r.get(15)?,
        outcome: LedgerOutcome::parse(&outcome).unwrap_or(LedgerOutcome::Pending),
        exit_code: r.get(17)?,
        error: r.get(18)?,
        created_at_ms: r.get(19)?,
        started_at_ms: r.get(20)?,
        finished_at_ms: r.get(21)?,
        duration_ms: r.get(22)?,
    })
}

/// The executions of the `run` calls of one message range (`?1` session, `?2..=?3` messages).
pub(crate) fn page_executions_sql() -> String {
    format!(
        "SELECT {EXEC_COLS} FROM executions
         WHERE session_id = ?1
           AND call_id IN (SELECT call_id FROM tool_calls
                           WHERE message_id BETWEEN ?2 AND ?3 AND name = 'run')"
    )
}

/// A session's executions that have not ended (`?1` session), through the partial index of
/// every live one (a few): by session, the planner would read the session's whole ledger.
pub(crate) fn live_executions_sql() -> String {
    format!(
        "SELECT {EXEC_COLS} FROM executions INDEXED BY executions_active
         WHERE status IN ('queued','awaiting_approval','running') AND session_id = ?1"
    )
}

/// A session's executions for the matrix, oldest first (`?1`: session, `?2`: limit).
pub(crate) fn matrix_sql() -> String {
    format!(
        "SELECT x.id, x.plan_step_id, x.target, x.class, {OUTCOME_EXPR}
         FROM executions x WHERE x.session_id = ?1 ORDER BY x.id LIMIT ?2"
    )
}

/// The plan steps of a session, every generation in order (`?1`: session).
pub(crate) const MATRIX_STEPS_SQL: &str =
    "SELECT id, generation, seq, title, status FROM plan_steps
     WHERE session_id = ?1 ORDER BY generation, seq";

fn class_rank(c: CommandClass) -> u8 {
    match c {
        CommandClass::ReadOnly => 0,
        CommandClass::ConfigMutation => 1,
        CommandClass::Destructive => 2,
    }
}

impl Reader<'_> {
    /// The execution ledger across sessions, newest first, filtered and paginated.
    pub fn execution_ledger(&self, f: &LedgerFilter) -> Result<LedgerPage, StoreError> {
        let limit = if f.limit == 0 {
            100
        } else {
            f.limit.min(MAX_LEDGER_PAGE)
        } as usize;
        let target = f.target.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let classes = (!f.classes.is_empty()).then(|| {
            serde_json::to_string(&f.classes.iter().map(|c| c.as_str()).collect::<Vec<_>>())
                .unwrap_or_default()
        });
        let outcomes = (!f.outcomes.is_empty()).then(|| {
            serde_json::to_string(&f.outcomes.iter().map(|c| c.as_str()).collect::<Vec<_>>())
                .unwrap_or_default()
        });
        let before = f.before.unwrap_or(LedgerCursor {
            created_at_ms: i64::MAX,
            id: i64::MAX,
        });
        let mut rows = self
            .c
            .prepare_cached(&ledger_sql(target.is_some()))?
            .query_map(
                params![
                    target,
                    f.since_ms.unwrap_or(i64::MIN),
                    f.until_ms.unwrap_or(i64::MAX),
                    before.created_at_ms,
                    before.id,
                    f.session,
                    classes,
                    outcomes,
                    i64::try_from(limit + 1).unwrap_or(i64::MAX)
                ],
                ledger_row,
            )?
            .collect::<Result<Vec<_>, _>>()?;
        let next = (rows.len() > limit).then(|| {
            rows.truncate(limit);
            rows.last().map(|r| LedgerCursor {
                created_at_ms: r.created_at_ms,
                id: r.id,
            })
        });
        Ok(LedgerPage {
            rows,
            next: next.flatten(),
        })
    }

    /// The executions that targeted an entity, newest first (at most `limit`, 0: 20).
    pub fn executions_targeting(
        &self,
        slug: &str,
        limit: u32,
    ) -> Result<Vec<LedgerRow>, StoreError> {
        Ok(self
            .execution_ledger(&LedgerFilter {
                target: Some(slug.trim().to_owned()),
                limit: if limit == 0 { 20 } else { limit },
                ..LedgerFilter::default()
            })?
            .rows)
    }

    /// Plan steps × targets for one session: which step ran what where, and how it ended.
    pub fn execution_matrix(&self, session: SessionId) -> Result<ExecutionMatrix, StoreError> {
        self.session(session)?;
        let mut steps: Vec<MatrixStep> = self
            .c
            .prepare_cached(MATRIX_STEPS_SQL)?
            .query_map([session], |r| {
                Ok(MatrixStep {
                    id: Some(r.get(0)?),
                    generation: Some(r.get(1)?),
                    seq: Some(r.get(2)?),
                    title: r.get(3)?,
                    status: Some(r.get(4)?),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let cap = MAX_MATRIX_EXECUTIONS;
        let runs = self
            .c
            .prepare_cached(&matrix_sql())?
            .query_map(
                params![session, i64::try_from(cap + 1).unwrap_or(i64::MAX)],
                |r| {
                    let outcome: String = r.get(4)?;
                    Ok((
                        r.get::<_, ExecutionId>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, CommandClass>(3)?,
                        LedgerOutcome::parse(&outcome).unwrap_or(LedgerOutcome::Pending),
                    ))
                },
            )?
            .collect::<Result<Vec<_>, _>>()?;
        let truncated = runs.len() > cap;
        let mut cells: Vec<MatrixCell> = Vec::new();
        let mut index: std::collections::HashMap<(Option<i64>, String), usize> =
            std::collections::HashMap::new();
        for (id, step, target, class, outcome) in runs.into_iter().take(cap) {
            let i = *index.entry((step, target.clone())).or_insert_with(|| {
                cells.push(MatrixCell {
                    plan_step_id: step,
                    target,
                    runs: 0,
                    succeeded: 0,
                    failed: 0,
                    class,
                    last_execution_id: id,
                    last_outcome: outcome,
                });
                cells.len() - 1
            });
            let c = &mut cells[i];
            c.runs += 1;
            match outcome {
                LedgerOutcome::Succeeded => c.succeeded += 1,
                LedgerOutcome::Failed => c.failed += 1,
                LedgerOutcome::Cancelled | LedgerOutcome::Pending => {}
            }
            if class_rank(class) > class_rank(c.class) {
                c.class = class;
            }
            c.last_execution_id = id;
            c.last_outcome = outcome;
        }
        if cells.iter().any(|c| c.plan_step_id.is_none()) {
            steps.push(MatrixStep {
                id: None,
                generation: None,
                seq: None,
                title: "Outside any plan step".to_owned(),
                status: None,
            });
        }
        let mut targets: Vec<String> = cells.iter().map(|c| c.target.clone()).collect();
        targets.sort();
        targets.dedup();
        Ok(ExecutionMatrix {
            session_id: session,
            steps,
            targets,
            cells,
            truncated,
        })
    }
}

impl Store {
    /// See [`Reader::execution_ledger`].
    pub fn execution_ledger(&self, f: &LedgerFilter) -> Result<LedgerPage, StoreError> {
        self.read(|r| r.execution_ledger(f))
    }
    /// See [`Reader::executions_targeting`].
    pub fn executions_targeting(
        &self,
        slug: &str,
        limit: u32,
    ) -> Result<Vec<LedgerRow>, StoreError> {
        self.read(|r| r.executions_targeting(slug, limit))
    }
    /// See [`Reader::execution_matrix`].
    pub fn execution_matrix(&self, session: SessionId) -> Result<ExecutionMatrix, StoreError> {
        self.read(|r| r.execution_matrix(session))
    }
}

#[cfg(test)]
mod plan_tests {
    //! `EXPLAIN QUERY PLAN` of the ledger queries on a real database file.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::knowledge::plan_tests::{assert_indexed, assert_no_sort, disk_store, plan};

    #[test]
    fn every_ledger_query_reads_through_an_index_in_order() {
        let (_d, s) = disk_store();
        let none: Option<String> = None;
        let null: Option<i64> = None;
        let target = Some("host:web-01".to_owned());
        let classes = Some(r#"["destructive"]"#.to_owned());
        let outcomes = Some(r#"["failed"]"#.to_owned());
        let (lo, hi, max) = (i64::MIN, i64::MAX, i64::MAX);
        let session = Some(1i64);
        let cases: Vec<(&str, String, Vec<&dyn rusqlite::ToSql>, &str)> = vec![
            (
                "ledger, everything",
                ledger_sql(false),
                vec![&none, &lo, &hi, &max, &max, &null, &none, &none, &100i64],
                "executions_by_time",
            ),
            (
                "ledger, by target",
                ledger_sql(true),
                vec![&target, &lo, &hi, &max, &max, &null, &none, &none, &100i64],
                "executions_by_target",
            ),
            (
                "ledger, target + class + outcome + time + session",
                ledger_sql(true),
                vec![
                    &target, &0i64, &hi, &max, &max, &session, &classes, &outcomes, &100i64,
                ],
                "executions_by_target",
            ),
            (
                "ledger, time range + class",
                ledger_sql(false),
                vec![
                    &none, &0i64, &1000i64, &max, &max, &null, &classes, &none, &100i64,
                ],
                "executions_by_time",
            ),
        ];
        for (what, sql, params, index) in cases {
            let lines = plan(&s, &sql, &params);
            assert_indexed(what, "x", &lines, &[]);
            assert_no_sort(what, &lines);
            assert!(
                lines.iter().any(|l| l.contains(index)),
                "{what}: not through {index}:\n{}",
                lines.join("\n")
            );
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with("SEARCH tc") && l.contains("INDEX")),
                "{what}: the message link scans tool_calls:\n{}",
                lines.join("\n")
            );
        }
        let lines = plan(&s, &matrix_sql(), &[&1i64, &10i64]);
        assert_indexed("matrix", "x", &lines, &[]);
        assert_no_sort("matrix", &lines);
        let lines = plan(&s, MATRIX_STEPS_SQL, &[&1i64]);
        assert_indexed("matrix steps", "plan_steps", &lines, &[]);
    }

    /// A transcript page reads the session's messages, their calls and the executions it
    /// shows through indexes only: its cost does not grow with the session's history.
    #[test]
    fn every_transcript_page_query_reads_through_an_index() {
        use crate::messages::{ANY_MESSAGE_SQL, CALLS_IN_RANGE_SQL, PAGE_ASC_SQL, PAGE_DESC_SQL};
        let (_d, s) = disk_store();
        let (lo, hi, n) = (1i64 << 32, (1i64 << 32) + 9_999, 201i64);
        for (what, sql, table) in [
            ("page, newest first", PAGE_DESC_SQL, "messages"),
            ("page, oldest first", PAGE_ASC_SQL, "messages"),
        ] {
            let lines = plan(&s, sql, &[&lo, &hi, &n]);
            assert_indexed(what, table, &lines, &[]);
            assert_no_sort(what, &lines);
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains("INTEGER PRIMARY KEY (rowid>? AND rowid<?)")),
                "{what}: not a rowid range:\n{}",
                lines.join("\n")
            );
        }
        let lines = plan(&s, ANY_MESSAGE_SQL, &[&lo, &hi]);
        // `SELECT EXISTS (…)` reads one constant row around its subquery.
        assert_indexed("more messages", "messages", &lines, &["CONSTANT"]);
        let lines = plan(&s, CALLS_IN_RANGE_SQL, &[&lo, &hi]);
        assert_indexed("page calls", "tool_calls", &lines, &[]);
        assert_no_sort("page calls", &lines);
        let lines = plan(&s, &page_executions_sql(), &[&1i64, &lo, &hi]);
        assert_indexed("page executions", "executions", &lines, &[]);
        assert!(
            lines.iter().any(|l| l.contains("executions_by_call")),
            "page executions: not by call id:\n{}",
            lines.join("\n")
        );
        let lines = plan(&s, crate::plan::GENERATION_AT_SQL, &[&1i64, &lo]);
        assert_indexed("generation in force", "plan_generations", &lines, &[]);
        let lines = plan(&s, &live_executions_sql(), &[&1i64]);
        assert_indexed("live executions", "executions", &lines, &[]);
        assert!(
            lines.iter().any(|l| l.contains("executions_active")),
            "live executions: not through the partial index:\n{}",
            lines.join("\n")
        );
    }
}
