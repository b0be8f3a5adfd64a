//! What the agent tells its faces: the event hub, and the helpers that emit a session's
//! status, plan and notes. Below the turn, the tools and the workers, which all emit.

use std::sync::Mutex;

use nomos_protocol::AgentEvent;
use nomos_store::{NewMessage, SessionId};
use tokio::sync::mpsc;

use crate::{Agent, AgentError, convert};

/// A subscriber's view of the agent's events, in emission order. Unbounded so a slow face
/// never makes the agent drop a `done`; a face that stops reading is dropped on next emit.
pub type EventStream = mpsc::UnboundedReceiver<AgentEvent>;

#[derive(Debug, Default)]
pub(crate) struct EventHub {
    subscribers: Mutex<Vec<mpsc::UnboundedSender<AgentEvent>>>,
}

impl EventHub {
    pub fn subscribe(&self) -> EventStream {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.push(tx);
        }
        rx
    }

    pub fn emit(&self, event: AgentEvent) {
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.retain(|tx| tx.send(event.clone()).is_ok());
        }
    }
}

/// What a turn may and may not do, decided before it starts.
#[derive(Debug, Default)]
pub(crate) struct TurnFlags {
    /// Produced by the system (resume, nudge, approval button), not an operator message.
    pub auto: bool,
    /// I17: the operator said the chat and the panel disagree; `run` is refused this turn.
    pub reconcile: bool,
}

impl TurnFlags {
    /// A turn the system starts (resume, nudge, reconnect, approval button).
    pub(crate) fn auto() -> Self {
        Self {
            auto: true,
            ..Self::default()
        }
    }
}

/// A note from Nomos in the transcript: the operator sees it, the model reads it.
pub(crate) fn add_note(agent: &Agent, session: SessionId, text: &str) -> Result<(), AgentError> {
    let message = agent
        .inner
        .store
        .append_message(&NewMessage::system(session, text))?;
    agent.emit(AgentEvent::Message {
        session_id: session,
        message: convert::message(&message),
    });
    Ok(())
}

pub(crate) fn emit_status(agent: &Agent, session: SessionId) -> Result<(), AgentError> {
    let row = agent.inner.store.get_session(session)?;
    let approval_open = agent.inner.store.active_approval_window(session)?.is_some();
    agent.emit(AgentEvent::TaskStatus {
        session_id: session,
        status: convert::session_status(row.status),
        outcome: row.outcome.map(convert::outcome),
        summary: row.summary,
        approval_open,
    });
    Ok(())
}

pub(crate) fn emit_plan(agent: &Agent, session: SessionId) -> Result<(), AgentError> {
    let steps = agent.inner.store.plan_history(session)?;
    agent.emit(AgentEvent::Plan {
        session_id: session,
        steps: steps.iter().map(convert::plan_step).collect(),
    });
    Ok(())
}
