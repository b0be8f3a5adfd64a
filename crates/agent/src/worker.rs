//! Background work: continuations of finished executions (I14), the idle sweep (I15) and
//! reconnects (I12).

use nomos_protocol::AgentEvent;
use nomos_store::{ContinuedVia, SessionId, SessionStatus};

use crate::events::{TurnFlags, add_note, emit_status};
use crate::pending::pending_by_session;
use crate::turn::{run_turn, run_turn_then};
use crate::{Agent, AgentError, notes};

/// What one idle sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SweepReport {
    /// Sessions that got a completion nudge (the resume ran).
    pub nudged: Vec<SessionId>,
    /// Sessions closed because their nudge went unanswered.
    pub closed: Vec<SessionId>,
    /// Sessions skipped because a turn was running.
    pub busy: Vec<SessionId>,
}

/// I14: an executing session whose executions finished is resumed with their results; the
/// executions are marked continued only after the resume turn actually ran. A busy session
/// stays pending for the next tick; paused and finished sessions keep the result for the
/// operator's next message.
///
/// Boxed: a resume turn can start executions whose completion calls this again, and the
/// recursion needs a named, `Send` future type.
pub(crate) fn continue_finished(
    agent: &Agent,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<usize, AgentError>> + Send + '_>> {
    Box::pin(continue_finished_inner(agent))
}

async fn continue_finished_inner(agent: &Agent) -> Result<usize, AgentError> {
    let mut resumed = 0;
    let resumable = |results: &[crate::pending::Pending]| {
        let status = results.first().map(|r| r.2);
        let paused = results.first().is_some_and(|r| r.3);
        // I21: after the operator's Stop the result waits for their next message.
        status == Some(SessionStatus::Executing) && !paused
    };
    for (session, listed) in pending_by_session(agent)? {
        if !resumable(&listed) {
            continue;
        }
        let Some(permit) = agent.inner.gates.try_acquire(&agent.inner.store, session) else {
            continue;
        };
        // Read again under the permit: the list above may be old (another tick, or the
        // resume a finishing execution started, delivered them meanwhile), and a result is
        // delivered once (I14).
        let Some(results) = pending_by_session(agent)?.remove(&session) else {
            continue;
        };
        if !resumable(&results) {
            continue;
        }
        let plan_in_flight = agent.inner.store.current_plan(session)?.in_flight();
        let texts: Vec<String> = results.iter().map(|r| r.1.clone()).collect();
        add_note(
            agent,
            session,
            &notes::execution_result_for_resume(&texts, plan_in_flight),
        )?;
        mark_resumed(agent, session)?;
        // Marked after the turn ran, whatever it produced (the note carrying the result is in
        // the transcript the model read), and before the permit is given back, so no other
        // resume can take them as undelivered. A crash before this re-queues them (I14).
        let (_, marked) = run_turn_then(agent, session, permit, TurnFlags::auto(), |_| {
            results.iter().try_for_each(|(id, ..)| {
                agent
                    .inner
                    .store
                    .mark_execution_continued(*id, ContinuedVia::Resume)
                    .map(drop)
            })
        })
        .await;
        marked?;
        resumed += 1;
    }
    Ok(resumed)
}

/// I15: nudge stale sessions once; close those whose nudge went unanswered.
pub(crate) async fn sweep_idle(agent: &Agent) -> Result<SweepReport, AgentError> {
    let config = &agent.inner.config;
    let store = &agent.inner.store;
    let mut report = SweepReport::default();
    let idle_ms = i64::try_from(config.idle_after.as_millis()).unwrap_or(i64::MAX);
    let close_ms = i64::try_from(config.close_after_nudge.as_millis()).unwrap_or(i64::MAX);
    for session in store.idle_sessions(idle_ms)? {
        let has_running = store
            .executions(session.id)?
            .iter()
            .any(|e| !e.status.is_terminal());
        if has_running {
            continue;
        }
        if session.completion_nudges > 0 {
            let since = store.now_ms()
                - session
                    .last_nudge_at_ms
                    .unwrap_or(session.last_active_at_ms);
            if since >= close_ms
                && store
                    .auto_close_session(session.id, notes::AUTO_CLOSE_SUMMARY)?
                    .is_some()
            {
                emit_status(agent, session.id)?;
                report.closed.push(session.id);
            }
            continue;
        }
        let Some(permit) = agent
            .inner
            .gates
            .try_acquire(&agent.inner.store, session.id)
        else {
            report.busy.push(session.id);
            continue;
        };
        // Read again under the permit: another process may have nudged it meanwhile.
        let now = store.get_session(session.id)?;
        if now.completion_nudges > 0 || now.last_active_at_ms != session.last_active_at_ms {
            continue;
        }
        add_note(agent, session.id, notes::COMPLETION_NUDGE)?;
        // The nudge counts only because its resume ran (I15); recorded before the permit is
        // given back, so no other sweep nudges it a second time.
        let (_, recorded) = run_turn_then(agent, session.id, permit, TurnFlags::auto(), |_| {
            store.record_completion_nudge(session.id)
        })
        .await;
        recorded?;
        report.nudged.push(session.id);
    }
    Ok(report)
}

/// I12: a reconnect resumes a live session with a note carrying the operator's last message;
/// a finished session starts no turn, and a busy one is left alone.
pub(crate) async fn reconnect(agent: &Agent, session: SessionId) -> Result<bool, AgentError> {
    let store = &agent.inner.store;
    let row = store.get_session(session)?;
    // I21: a session the operator stopped stays stopped until they speak.
    if row.status.is_terminal()
        || row.status == SessionStatus::Idle
        || store.is_session_paused(session)?
    {
        return Ok(false);
    }
    if was_resumed(agent, session)? {
        return Ok(false);
    }
    let Some(permit) = agent.inner.gates.try_acquire(&agent.inner.store, session) else {
        return Ok(false);
    };
    let last = store.last_user_message(session)?.map(|m| m.text);
    let in_flight = store.current_plan(session)?.in_flight();
    // Results the model has not seen (a command a crash ended) go in this one resume, not in
    // a second turn of the continuation worker.
    let results = pending_by_session(agent)?
        .remove(&session)
        .unwrap_or_default();
    let mut note = notes::reconnect(last.as_deref(), in_flight);
    if !results.is_empty() {
        let texts: Vec<String> = results.iter().map(|r| r.1.clone()).collect();
        note.push_str("\n\n");
        note.push_str(&notes::execution_result_for_resume(&texts, in_flight));
    }
    add_note(agent, session, &note)?;
    agent.emit(AgentEvent::TaskStatus {
        session_id: session,
        status: crate::convert::session_status(row.status),
        outcome: None,
        summary: None,
        approval_open: store.active_approval_window(session)?.is_some(),
    });
    mark_resumed(agent, session)?;
    let ran = run_turn(agent, session, permit, TurnFlags::auto()).await;
    // As the worker does: marked after the turn ran, so a crash before re-queues them (I14).
    for (id, ..) in &results {
        store.mark_execution_continued(*id, ContinuedVia::Resume)?;
    }
    Ok(ran)
}

/// Records that an automatic resume took up `session`'s work in this process.
fn mark_resumed(agent: &Agent, session: SessionId) -> Result<(), AgentError> {
    agent
        .inner
        .resumed
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .insert(session);
    Ok(())
}

fn was_resumed(agent: &Agent, session: SessionId) -> Result<bool, AgentError> {
    Ok(agent
        .inner
        .resumed
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .contains(&session))
}
