//! Finished executions whose result the model has not seen yet (I14), and their delivery as
//! a note with the operator's next message. Below the turn and the worker, which both read it.

use std::collections::BTreeMap;

use nomos_store::{ContinuedVia, SessionId, SessionStatus};

use crate::events::add_note;
use crate::{Agent, AgentError, notes};

/// One finished execution the model has not seen: id, result text, its session's status, and
/// whether the operator's Stop paused the session (I21).
pub(crate) type Pending = (i64, String, SessionStatus, bool);

/// Executions whose result the model has not seen, grouped by session.
pub(crate) fn pending_by_session(
    agent: &Agent,
) -> Result<BTreeMap<SessionId, Vec<Pending>>, AgentError> {
    let running: Vec<i64> = agent
        .inner
        .running
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .keys()
        .copied()
        .collect();
    let mut out: BTreeMap<SessionId, Vec<Pending>> = BTreeMap::new();
    let store = &agent.inner.store;
    for p in store.pending_continuations()? {
        if running.contains(&p.execution.id) {
            continue;
        }
        // I24: another live process started it and delivers its result itself.
        if let Some(owner) = p.execution.owner.as_deref()
            && owner != store.owner_id()
            && store.is_owner_alive(Some(owner))
        {
            continue;
        }
        out.entry(p.execution.session_id).or_default().push((
            p.execution.id,
            notes::execution_text(&p.execution),
            p.session_status,
            p.session_paused,
        ));
    }
    Ok(out)
}

/// I14: results that finished while the session was paused or finished reach the model as a
/// note with the operator's next message.
pub(crate) fn deliver_pending_as_note(agent: &Agent, session: SessionId) -> Result<(), AgentError> {
    let pending = pending_by_session(agent)?;
    let Some(results) = pending.get(&session) else {
        return Ok(());
    };
    let plan_in_flight = agent.inner.store.current_plan(session)?.in_flight();
    let texts: Vec<String> = results.iter().map(|r| r.1.clone()).collect();
    add_note(
        agent,
        session,
        &notes::execution_result_for_resume(&texts, plan_in_flight),
    )?;
    for (id, ..) in results {
        agent
            .inner
            .store
            .mark_execution_continued(*id, ContinuedVia::Note)?;
    }
    Ok(())
}
