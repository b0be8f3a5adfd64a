use std::sync::Mutex;

use nomos_protocol::AgentEvent;
use tokio::sync::mpsc;

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
