//! The per-session turn gate (I13, I24): at most one turn per session at any moment, in this
//! process and across every process on the same data directory.
//!
//! Two layers: an async mutex per session orders the turns of this process; the store's turn
//! lease (a row taken in a write transaction, held while this process lives) orders them
//! between processes. A permit holds both; dropping it releases both.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nomos_store::{LeaseOutcome, Store, TurnLease};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::error::AgentError;

/// How often a waiting turn retries a lease another process holds.
const LEASE_POLL: Duration = Duration::from_millis(50);

#[derive(Debug, Default)]
pub(crate) struct Gates {
    gates: Mutex<HashMap<i64, Arc<AsyncMutex<()>>>>,
}

/// Held for the whole turn; dropping it releases the session here and in the store.
#[derive(Debug)]
pub(crate) struct TurnPermit {
    _local: OwnedMutexGuard<()>,
    lease: TurnLease,
    store: Store,
}

impl Drop for TurnPermit {
    fn drop(&mut self) {
        if let Err(e) = self.store.release_turn_lease(&self.lease) {
            // The row stays until this process exits; then another takes it over.
            tracing::warn!(
                session = self.lease.session_id,
                code = e.code(),
                "turn lease not released: {e}"
            );
        }
    }
}

impl Gates {
    fn gate(&self, session: i64) -> Result<Arc<AsyncMutex<()>>, AgentError> {
        let mut gates = self.gates.lock().map_err(|_| AgentError::Poisoned)?;
        Ok(gates.entry(session).or_default().clone())
    }

    /// A live operator message waits up to `wait` for the session's turn to end, here or in
    /// another process; then it is refused as busy.
    pub async fn acquire(
        &self,
        store: &Store,
        session: i64,
        wait: Duration,
    ) -> Result<TurnPermit, AgentError> {
        let deadline = tokio::time::Instant::now() + wait;
        let gate = self.gate(session)?;
        let local = tokio::time::timeout_at(deadline, gate.lock_owned())
            .await
            .map_err(|_| AgentError::Busy(session))?;
        loop {
            match store.try_take_turn_lease(session)? {
                LeaseOutcome::Taken(lease) => {
                    return Ok(TurnPermit {
                        _local: local,
                        lease,
                        store: store.clone(),
                    });
                }
                LeaseOutcome::Busy { holder, .. } => {
                    if tokio::time::Instant::now() + LEASE_POLL > deadline {
                        // This process through another agent (the desktop rebuilds its agent
                        // when settings change): busy here, not elsewhere.
                        if holder == store.owner_id() {
                            return Err(AgentError::Busy(session));
                        }
                        return Err(AgentError::BusyElsewhere {
                            session,
                            pid: holder_pid(&holder),
                        });
                    }
                }
            }
            tokio::time::sleep(LEASE_POLL).await;
        }
    }

    /// A background resume never waits: a session busy here or elsewhere is left for the
    /// next tick.
    pub fn try_acquire(&self, store: &Store, session: i64) -> Option<TurnPermit> {
        let local = self.gate(session).ok()?.try_lock_owned().ok()?;
        match store.try_take_turn_lease(session) {
            Ok(LeaseOutcome::Taken(lease)) => Some(TurnPermit {
                _local: local,
                lease,
                store: store.clone(),
            }),
            Ok(LeaseOutcome::Busy { .. }) => None,
            Err(e) => {
                tracing::warn!(session, code = e.code(), "turn lease not taken: {e}");
                None
            }
        }
    }
}

/// The pid part of an owner id (`<pid>-<nonce>`), for the operator's message.
pub(crate) fn holder_pid(owner: &str) -> Option<u32> {
    owner.split_once('-').and_then(|(pid, _)| pid.parse().ok())
}
