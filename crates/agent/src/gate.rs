//! The per-session turn gate (I13): at most one turn per session at any moment.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

#[derive(Debug, Default)]
pub(crate) struct Gates {
    gates: Mutex<HashMap<i64, Arc<AsyncMutex<()>>>>,
}

/// Held for the whole turn; dropping it releases the session.
pub(crate) type TurnPermit = OwnedMutexGuard<()>;

impl Gates {
    fn gate(&self, session: i64) -> Option<Arc<AsyncMutex<()>>> {
        let mut gates = self.gates.lock().ok()?;
        Some(gates.entry(session).or_default().clone())
    }

    /// A live operator message waits up to `wait` for the session's turn to end.
    pub async fn acquire(&self, session: i64, wait: Duration) -> Option<TurnPermit> {
        let gate = self.gate(session)?;
        tokio::time::timeout(wait, gate.lock_owned()).await.ok()
    }

    /// A background resume never waits: a busy session is left for the next tick.
    pub fn try_acquire(&self, session: i64) -> Option<TurnPermit> {
        self.gate(session)?.try_lock_owned().ok()
    }
}
