//! The turn gate across processes (I13, I24): one lease row per session in `turn_leases`.
//!
//! The in-process gate (a mutex per session in the agent) orders turns inside one process;
//! this row orders them between processes on one data directory. It is taken in a write
//! transaction, so two processes never both see it free. It has no expiry to renew: it is
//! held while its owner's lock is held (see [`crate::owners`]), and a lease whose owner is
//! gone is taken over.

use rusqlite::{OptionalExtension as _, params};

use crate::db::{Store, WriteTx};
use crate::error::StoreError;
use crate::sessions::SessionId;

/// A held turn lease. Give it back with [`Store::release_turn_lease`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnLease {
    /// Session.
    pub session_id: SessionId,
    /// The holder (this store's owner id).
    pub owner: String,
    /// Tells this holding apart from any other by the same owner.
    pub token: i64,
}

/// Outcome of [`Store::try_take_turn_lease`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOutcome {
    /// Taken: this process runs the session's turn.
    Taken(TurnLease),
    /// A live owner holds it (possibly this one, through another gate).
    Busy {
        /// The holder's owner id.
        holder: String,
        /// When it was taken.
        since_ms: i64,
    },
}

impl WriteTx<'_> {
    /// Take the session's turn lease unless a live owner holds it. `is_alive` tells whether an
    /// owner id is a live process.
    pub fn try_take_turn_lease(
        &self,
        session: SessionId,
        token: i64,
        is_alive: &dyn Fn(Option<&str>) -> bool,
    ) -> Result<LeaseOutcome, StoreError> {
        let held: Option<(String, i64)> = self
            .c
            .prepare_cached("SELECT owner, taken_at_ms FROM turn_leases WHERE session_id = ?1")?
            .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((holder, since_ms)) = held {
            if is_alive(Some(&holder)) {
                return Ok(LeaseOutcome::Busy { holder, since_ms });
            }
            tracing::info!(
                session,
                holder,
                "taking over the turn lease of a process that is gone"
            );
        }
        self.c
            .prepare_cached(
                "INSERT INTO turn_leases (session_id, owner, holding, taken_at_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, holding = excluded.holding,
                     taken_at_ms = excluded.taken_at_ms",
            )?
            .execute(params![session, self.owner, token, self.now])
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
                {
                    StoreError::not_found("session", session)
                }
                other => other.into(),
            })?;
        Ok(LeaseOutcome::Taken(TurnLease {
            session_id: session,
            owner: self.owner.to_string(),
            token,
        }))
    }

    /// Give a lease back; a lease already taken over (its row names another holding) is
    /// left alone. Returns whether a row was removed.
    pub fn release_turn_lease(&self, lease: &TurnLease) -> Result<bool, StoreError> {
        let n = self.c.execute(
            "DELETE FROM turn_leases WHERE session_id = ?1 AND owner = ?2 AND holding = ?3",
            params![lease.session_id, lease.owner, lease.token],
        )?;
        Ok(n == 1)
    }

    /// Start-up: drop the leases of owners that are gone.
    pub fn release_dead_turn_leases(
        &self,
        is_alive: &dyn Fn(Option<&str>) -> bool,
    ) -> Result<usize, StoreError> {
        let rows: Vec<(SessionId, String)> = self
            .c
            .prepare_cached("SELECT session_id, owner FROM turn_leases")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut n = 0;
        for (session, owner) in rows {
            if !is_alive(Some(&owner)) {
                n += self.c.execute(
                    "DELETE FROM turn_leases WHERE session_id = ?1 AND owner = ?2",
                    params![session, owner],
                )?;
            }
        }
        Ok(n)
    }
}

impl Store {
    /// Take the session's turn lease unless a live process holds it (I13 across processes).
    pub fn try_take_turn_lease(&self, session: SessionId) -> Result<LeaseOutcome, StoreError> {
        let token = crate::owners::nonce() as i64;
        self.write(|w| w.try_take_turn_lease(session, token, &|o| self.is_owner_alive(o)))
    }

    /// See [`WriteTx::release_turn_lease`].
    pub fn release_turn_lease(&self, lease: &TurnLease) -> Result<bool, StoreError> {
        self.write(|w| w.release_turn_lease(lease))
    }

    /// The current holder of a session's turn lease, if any (live or not).
    pub fn turn_lease_holder(&self, session: SessionId) -> Result<Option<String>, StoreError> {
        self.read(|r| {
            Ok(r.c
                .prepare_cached("SELECT owner FROM turn_leases WHERE session_id = ?1")?
                .query_row([session], |row| row.get(0))
                .optional()?)
        })
    }
}
