//! The execution lifecycle: classify → gate → record → run → record the outcome, and the
//! operator's decisions on a command (approve, deny, cancel). The `run` tool asks for it;
//! nothing here knows the model's tool-call format.
//!
//! Every path that runs a command goes through [`start_and_wait`], and what runs is
//! [`exact_command`]: never a string a caller read from the store (I22).
//!
//! A result that arrives after its turn is delivered by the continuation worker (I14), asked
//! through [`Agent::continue_finished`]: the crate root wires the layers, so this module
//! never imports the worker (which runs turns, whose tools call back into here).

use nomos_exec::{ExecOutcome, Limits, Target};
use nomos_protocol::AgentEvent;
use nomos_store::{
    Approval, ApprovalKind, CommandClass, ContinuedVia, ExecStatus, ExecutionResult, NewExecution,
    SessionId,
};
use tokio_util::sync::CancellationToken;

use crate::{Agent, AgentError, convert, notes};

/// What one `run` request came to, for the model.
#[derive(Debug)]
pub(crate) enum RunVerdict {
    /// Refused by a gate before anything was recorded (an error for the model).
    Refused(String),
    /// Answered without running: the same command is in flight or already ran (I18).
    Answered(String),
    /// Recorded and waiting for the operator's approval on this command: the turn ends.
    AwaitsApproval(String),
    /// Started: its result, or a note that it continues in the background.
    Ran(String),
}

/// One command the model asked for: what it names, before anything is checked.
#[derive(Debug)]
pub(crate) struct RunRequest<'a> {
    pub call_id: &'a str,
    pub target: &'a str,
    pub command: &'a str,
    pub step: Option<i64>,
    /// Why a command that already ran in this plan runs again; `None` when not given.
    pub rerun_because: Option<&'a str>,
}

/// The lifecycle of one command: classify → gate → record → run. Every gate that can refuse
/// it (I1 plan first, I22 canonical form, I18 duplicates, I7/I23 approval) is here, and what
/// runs goes through [`start_and_wait`].
pub(crate) async fn run(
    agent: &Agent,
    session: SessionId,
    req: &RunRequest<'_>,
    cancel: &CancellationToken,
) -> Result<RunVerdict, AgentError> {
    let store = &agent.inner.store;
    // I1: no command without a plan.
    if !store.has_plan(session)? {
        return Ok(RunVerdict::Refused(notes::NO_PLAN_FOR_RUN.to_owned()));
    }
    let target = match resolve_target(agent, req.target) {
        Ok(t) => t,
        Err(why) => return Ok(RunVerdict::Refused(why)),
    };
    let decision = nomos_policy::classify(req.command);
    let reason = decision.summary();
    // I22: the classifier's contract: what runs is its canonical form, never the text as typed.
    // A command it could not lower has none, and is refused (fail closed).
    let Some(canonical) = decision.canonical.clone().filter(|c| !c.trim().is_empty()) else {
        return Ok(RunVerdict::Refused(notes::no_canonical_form(&reason)));
    };
    let slug = target.slug.to_string();

    // I18: the same command on the same target still in flight is never started a second
    // time, whatever the reason given: its result comes when it ends.
    if let Some(running) = store.run_in_flight(session, &slug, &canonical)? {
        return Ok(RunVerdict::Answered(notes::duplicate_in_flight(
            running.id,
            running.status.as_str(),
        )));
    }
    // I18: the same command on the same target in this plan is answered from the ledger.
    if req.rerun_because.is_none()
        && let Some(earlier) = store.earlier_run(session, &slug, &canonical)?
    {
        let ago = (store.now_ms() - earlier.finished_at_ms.unwrap_or(earlier.created_at_ms)) / 1000;
        return Ok(RunVerdict::Answered(notes::duplicate_run(
            ago,
            &notes::execution_text(&earlier),
        )));
    }

    // The classifier and the store share one class type: no conversion.
    let class = decision.class;
    // I7, I23: config changes run only inside the operator's window, and only on a target its
    // plan names; destructive never without a per-command approval.
    let approval = match class {
        CommandClass::ReadOnly | CommandClass::Destructive => None,
        CommandClass::ConfigMutation => match store.active_approval_window(session)? {
            Some(w) if store.window_covers(&w, &slug)? => Some(Approval {
                kind: ApprovalKind::Window,
                by: None,
                window_id: Some(w.id),
            }),
            _ => None,
        },
    };
    let needs_card = approval.is_none() && class != CommandClass::ReadOnly;
    let execution = store.create_execution(&NewExecution {
        session_id: session,
        step_seq: req.step,
        call_id: Some(req.call_id.to_owned()),
        target: slug.clone(),
        command: req.command.to_owned(),
        canonical: canonical.clone(),
        class,
        decision_reason: reason.clone(),
        decision: serde_json::to_value(&decision).ok(),
        approval,
    })?;
    remember_exact(agent, execution.id, canonical);
    agent.emit(AgentEvent::Execution {
        session_id: session,
        execution: convert::execution(&execution),
    });
    if needs_card || execution.status == ExecStatus::AwaitingApproval {
        agent.emit(AgentEvent::ApprovalRequested {
            session_id: session,
            execution: Some(convert::execution(&execution)),
        });
        return Ok(RunVerdict::AwaitsApproval(
            notes::awaiting_command_approval(execution.id, class.as_str(), &reason),
        ));
    }
    let text = start_and_wait(agent, execution.id, target, Some(cancel)).await?;
    Ok(RunVerdict::Ran(text))
}
/// I22: holds the exact text of an execution until it runs or is dropped.
fn remember_exact(agent: &Agent, id: i64, exact: String) {
    if let Ok(mut held) = agent.inner.exact.lock() {
        held.insert(id, exact);
    }
}

fn forget_exact(agent: &Agent, id: i64) {
    if let Ok(mut held) = agent.inner.exact.lock() {
        held.remove(&id);
    }
}

/// I22: the text to run for an execution: byte for byte the text that was classified and
/// approved, proved by the digest in its row. The row's own copy is a display copy that may be
/// redacted; it can stand in only when its digest proves nothing was redacted (after a
/// restart). Anything else is refused.
fn exact_command(agent: &Agent, row: &nomos_store::Execution) -> Result<String, AgentError> {
    let held = agent
        .inner
        .exact
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .get(&row.id)
        .cloned();
    let text = held.unwrap_or_else(|| row.canonical.clone());
    if row.is_exact_command(&text) {
        Ok(text)
    } else {
        Err(AgentError::ExactCommandUnavailable(row.id))
    }
}

/// Ends an execution that cannot run with the reason, for the operator and the model.
fn refuse_unrunnable(agent: &Agent, id: i64, why: &AgentError) -> Result<(), AgentError> {
    forget_exact(agent, id);
    let row = agent.inner.store.deny_execution(id, &why.to_string())?;
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    Ok(())
}

/// The inventory's slug for a target a plan step names; an unknown name is kept as written.
pub(crate) fn resolve_target(agent: &Agent, slug: &str) -> Result<Target, String> {
    let inventory = agent
        .inner
        .inventory
        .read()
        .map_err(|_| "inventory lock poisoned".to_owned())?;
    inventory.resolve(slug).cloned().map_err(|e| {
        let known: Vec<String> = inventory.targets().map(|t| t.slug.to_string()).collect();
        format!(
            "{e}. Known targets: {}. Call list_targets.",
            known.join(", ")
        )
    })
}

/// Starts an execution and waits briefly; what is still running finishes in the background
/// and the continuation worker resumes the session (I14). `turn_cancel` is the turn that asked
/// for it: only then can a quick result be answered inline; an execution started by an
/// operator's approval after that turn ended always goes through the continuation.
///
/// Every path that runs a command comes through here, and what runs is [`exact_command`]:
/// never a string a caller read from the store (I22).
async fn start_and_wait(
    agent: &Agent,
    id: i64,
    target: Target,
    turn_cancel: Option<&CancellationToken>,
) -> Result<String, AgentError> {
    let store = &agent.inner.store;
    let queued = store.get_execution(id)?;
    let exact = match exact_command(agent, &queued) {
        Ok(text) => text,
        Err(e) => {
            if turn_cancel.is_none() {
                // No turn is waiting: the continuation tells the model.
                store.mark_execution_background(id)?;
            }
            refuse_unrunnable(agent, id, &e)?;
            return Err(e);
        }
    };
    let row = store.start_execution(id)?;
    forget_exact(agent, id);
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    let limits = Limits::with_timeout(agent.inner.config.command_timeout);
    let handle = agent.inner.executor.start(&target, &exact, &limits)?;
    // I24: if this process dies first, the next start-up ends the group by this record.
    if let Some(g) = handle.group() {
        store.record_execution_group(
            id,
            i64::from(g.pgid),
            g.start_ticks.and_then(|t| i64::try_from(t).ok()),
        )?;
    }
    if let Ok(mut running) = agent.inner.running.lock() {
        running.insert(id, handle.clone());
    }
    let Some(cancel) = turn_cancel else {
        // No turn is waiting: the continuation delivers the result (I14).
        store.mark_execution_background(id)?;
        let outcome = handle.wait().await;
        let done = record_outcome(agent, id, &outcome)?;
        return Ok(notes::execution_text(&done));
    };
    let waited = tokio::select! {
        outcome = handle.wait_for(agent.inner.config.run_wait) => outcome,
        _ = cancel.cancelled() => None,
    };
    match waited {
        Some(outcome) => {
            let done = record_outcome(agent, id, &outcome)?;
            store.mark_execution_continued(id, ContinuedVia::Inline)?;
            Ok(notes::execution_text(&done))
        }
        None => {
            store.mark_execution_background(id)?;
            let agent = agent.clone();
            tokio::spawn(async move {
                let outcome = handle.wait().await;
                if let Err(e) = record_outcome(&agent, id, &outcome) {
                    tracing::error!(execution = id, "could not record a background result: {e}");
                }
                // The resume runs now if the session is free, else on a later tick (I14).
                if let Err(e) = agent.continue_finished().await {
                    tracing::warn!("continuation after execution {id} failed: {e}");
                }
            });
            Ok(notes::still_running(id))
        }
    }
}

fn record_outcome(
    agent: &Agent,
    id: i64,
    outcome: &ExecOutcome,
) -> Result<nomos_store::Execution, AgentError> {
    if let Ok(mut running) = agent.inner.running.lock() {
        running.remove(&id);
    }
    forget_exact(agent, id);
    let (status, exit_code, error) = match &outcome.status {
        nomos_exec::ExecStatus::Exited { code } => (ExecStatus::Finished, Some(*code), None),
        nomos_exec::ExecStatus::Signaled { signal } => (
            ExecStatus::Failed,
            None,
            Some(format!("killed by signal {signal}")),
        ),
        nomos_exec::ExecStatus::TimedOut => (
            ExecStatus::TimedOut,
            None,
            Some("timed out; the process group was killed".to_owned()),
        ),
        nomos_exec::ExecStatus::Cancelled => {
            (ExecStatus::Cancelled, None, Some("cancelled".to_owned()))
        }
        nomos_exec::ExecStatus::Failed { error } => {
            (ExecStatus::Failed, None, Some(error.to_string()))
        }
    };
    let row = agent.inner.store.finish_execution(
        id,
        &ExecutionResult {
            status,
            exit_code,
            stdout: shown_output(&outcome.stdout),
            stderr: shown_output(&outcome.stderr),
            error,
        },
    )?;
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    Ok(row)
}

/// What is kept of one output stream for the model and the faces: its text, or for binary
/// output (a NUL byte, invalid UTF-8) a flag saying so, instead of a lossy rendering full of
/// U+FFFD that reads as if it were the output.
pub(crate) fn shown_output(c: &nomos_exec::CapturedOutput) -> Vec<u8> {
    if c.binary {
        format!("[binary output, {} bytes, not shown]", c.total_bytes).into_bytes()
    } else {
        c.text.clone().into_bytes()
    }
}

pub(crate) async fn approve_execution(agent: &Agent, id: i64) -> Result<(), AgentError> {
    let store = &agent.inner.store;
    let row = store.get_execution(id)?;
    if row.status != ExecStatus::AwaitingApproval {
        return Err(AgentError::NotAwaitingApproval(id));
    }
    // B5: only a card of the plan in flight can be approved.
    let session = store.get_session(row.session_id)?;
    let plan = store.current_plan(row.session_id)?;
    if session.status.is_terminal() || plan.replaced || row.generation != Some(plan.generation) {
        return Err(AgentError::StaleExecution(id));
    }
    // I22: refused before anything is approved when the exact text is gone.
    if let Err(e) = exact_command(agent, &row) {
        store.mark_execution_background(id)?;
        refuse_unrunnable(agent, id, &e)?;
        agent.continue_finished().await?;
        return Err(e);
    }
    // The operator acted: a Stop's pause ends (I21).
    store.unpause_session(row.session_id)?;
    let row = store.approve_execution(
        id,
        &Approval {
            kind: ApprovalKind::OperatorButton,
            by: Some("operator".to_owned()),
            window_id: None,
        },
    )?;
    let target = agent
        .inner
        .inventory
        .read()
        .map_err(|_| AgentError::Poisoned)?
        .resolve(&row.target)?
        .clone();
    // The turn that asked has ended; the result comes back through the continuation (I14).
    let agent2 = agent.clone();
    tokio::spawn(async move {
        if let Err(e) = start_and_wait(&agent2, id, target, None).await {
            tracing::error!(execution = id, "approved execution could not start: {e}");
        } else if let Err(e) = agent2.continue_finished().await {
            tracing::warn!("continuation after execution {id} failed: {e}");
        }
    });
    Ok(())
}

pub(crate) async fn deny_execution(
    agent: &Agent,
    id: i64,
    reason: Option<&str>,
) -> Result<(), AgentError> {
    let status = agent.inner.store.get_execution(id)?.status;
    if !matches!(status, ExecStatus::AwaitingApproval | ExecStatus::Queued) {
        return Err(AgentError::NotAwaitingApproval(id));
    }
    // The turn that asked has ended: the denial reaches the model through the continuation.
    agent.inner.store.mark_execution_background(id)?;
    forget_exact(agent, id);
    let row = agent
        .inner
        .store
        .deny_execution(id, reason.unwrap_or("denied by the operator"))?;
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    agent.continue_finished().await?;
    Ok(())
}

/// Cancels a running or waiting execution. `by_operator`: the model did not ask for it, so a
/// command that never ran is reported to the model through the continuation.
pub(crate) fn cancel_execution(
    agent: &Agent,
    id: i64,
    by_operator: bool,
) -> Result<bool, AgentError> {
    let handle = agent
        .inner
        .running
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .get(&id)
        .cloned();
    if let Some(handle) = handle {
        handle.cancel();
        return Ok(true);
    }
    let row = agent.inner.store.get_execution(id)?;
    if row.status == ExecStatus::AwaitingApproval || row.status == ExecStatus::Queued {
        if by_operator {
            agent.inner.store.mark_execution_background(id)?;
        }
        forget_exact(agent, id);
        let row = agent.inner.store.deny_execution(id, "cancelled")?;
        agent.emit(AgentEvent::Execution {
            session_id: row.session_id,
            execution: convert::execution(&row),
        });
        return Ok(true);
    }
    Ok(false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn captured(text: &str, total: u64, binary: bool) -> nomos_exec::CapturedOutput {
        nomos_exec::CapturedOutput {
            text: text.to_owned(),
            total_bytes: total,
            truncated_bytes: total.saturating_sub(text.len() as u64),
            binary,
        }
    }

    #[test]
    fn binary_output_is_flagged_with_its_size_not_shown() {
        // A NUL byte, invalid UTF-8, a truncated binary stream: the flag, never the bytes.
        for (text, total) in [
            ("a\u{0}b", 3u64),
            ("\u{fffd}\u{fffd}PNG", 8),
            ("ELF\u{fffd}\n[… 10000 bytes truncated …]\n\u{fffd}", 12_000),
        ] {
            let shown = String::from_utf8(shown_output(&captured(text, total, true))).unwrap();
            assert_eq!(shown, format!("[binary output, {total} bytes, not shown]"));
            assert!(!shown.contains('\u{fffd}') && !shown.contains('\u{0}'));
        }
        // Text stays text, byte for byte.
        let t = "disk usage: 42%\nnaïve ✓\n";
        assert_eq!(
            shown_output(&captured(t, t.len() as u64, false)),
            t.as_bytes()
        );
    }
}
