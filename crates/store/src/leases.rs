//! The turn gate across processes (I13, I24): one lease row per session in `turn_leases`.
//!
//! The in-process gate (a mutex per session in the agent) orders turns inside one process;
//! this row orders them between processes on one data directory. It is taken in a write
//! transaction, so two processes never both see it free. It has no expiry to renew: it is
//! held while its owner's lock is held (see [`crate::owners`]), and a lease whose owner is
//! gone is taken over.
//!
//! Every holding is written to the audit log in the same transaction that takes or gives it
//! back: a `turn.start` row when taken, a `turn.end` row when released (or, `ok` false, when
//! a dead owner's holding is taken over or cleared at start-up). Audit ids grow in one
//! transaction order per session, so the log proves after the fact that no two turns of a
//! session overlapped, across processes (`turn_holdings`).

use rusqlite::{OptionalExtension as _, params};

use crate::audit::NewAudit;
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

/// Audit `tool` of the row written when a turn lease is taken.
pub const TURN_START_AUDIT: &str = "turn.start";
/// Audit `tool` of the row written when a turn lease is given back or taken over.
pub const TURN_END_AUDIT: &str = "turn.end";

/// The audit arguments naming one holding.
fn holding_arguments(owner: &str, holding: i64) -> String {
    serde_json::json!({ "owner": owner, "holding": holding }).to_string()
}

/// One holding of a session's turn lease, as the audit log tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnHolding {
    /// The holder's owner id.
    pub owner: String,
    /// The holding's token.
    pub holding: i64,
    /// Audit id and time of its `turn.start` row.
    pub start: (i64, i64),
    /// Audit id and time of its `turn.end` row; `None` while held.
    pub end: Option<(i64, i64)>,
    /// Ended by its owner (false: taken over or cleared because the owner was gone).
    pub released: bool,
    /// Audit rows of tool calls made while it was held.
    pub tool_calls: usize,
}

/// Reads a session's audit log (oldest first) as turn holdings, and fails naming the first
/// row that shows two turns at once: a start while another holding is open, an end of a
/// holding that is not the open one, a tool call outside every holding, or time going back.
pub fn turn_holdings(log: &[crate::AuditEntry]) -> Result<Vec<TurnHolding>, String> {
    let mut out: Vec<TurnHolding> = Vec::new();
    let mut open: Option<usize> = None;
    let mut last_ms = i64::MIN;
    for row in log {
        if row.created_at_ms < last_ms {
            return Err(format!(
                "audit row {} ({}) is older than the row before it",
                row.id, row.tool
            ));
        }
        last_ms = row.created_at_ms;
        let who = || -> Result<(String, i64), String> {
            let v: serde_json::Value = serde_json::from_str(&row.arguments)
                .map_err(|e| format!("audit row {} has unreadable arguments: {e}", row.id))?;
            match (v["owner"].as_str(), v["holding"].as_i64()) {
                (Some(o), Some(h)) => Ok((o.to_owned(), h)),
                _ => Err(format!("audit row {} names no holding", row.id)),
            }
        };
        match row.tool.as_str() {
            TURN_START_AUDIT => {
                if let Some(i) = open {
                    return Err(format!(
                        "turn {} started (audit row {}) while turn {} of {} was held",
                        out.len() + 1,
                        row.id,
                        i + 1,
                        out[i].owner
                    ));
                }
                let (owner, holding) = who()?;
                open = Some(out.len());
                out.push(TurnHolding {
                    owner,
                    holding,
                    start: (row.id, row.created_at_ms),
                    end: None,
                    released: false,
                    tool_calls: 0,
                });
            }
            TURN_END_AUDIT => {
                let (owner, holding) = who()?;
                let Some(i) = open.take() else {
                    return Err(format!(
                        "audit row {} ends a turn that never started",
                        row.id
                    ));
                };
                let h = &mut out[i];
                if h.owner != owner || h.holding != holding {
                    return Err(format!(
                        "audit row {} ends {owner}'s turn while {}'s was held",
                        row.id, h.owner
                    ));
                }
                h.end = Some((row.id, row.created_at_ms));
                h.released = row.ok;
            }
            tool => match open {
                Some(i) => out[i].tool_calls += 1,
                None => {
                    return Err(format!(
                        "audit row {} ({tool}) was recorded outside every turn",
                        row.id
                    ));
                }
            },
        }
    }
    Ok(out)
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
        let held: Option<(String, i64, i64)> = self
            .c
            .prepare_cached(
                "SELECT owner, taken_at_ms, holding FROM turn_leases WHERE session_id = ?1",
            )?
            .query_row([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        if let Some((holder, since_ms, holding)) = held {
            if is_alive(Some(&holder)) {
                return Ok(LeaseOutcome::Busy { holder, since_ms });
            }
            tracing::info!(
                session,
                holder,
                "taking over the turn lease of a process that is gone"
            );
            self.audit_turn_end(session, &holder, holding, false)?;
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
        self.record_audit(&NewAudit::new(
            Some(session),
            TURN_START_AUDIT,
            holding_arguments(self.owner, token),
            "turn started",
        ))?;
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
        if n == 1 {
            self.audit_turn_end(lease.session_id, &lease.owner, lease.token, true)?;
        }
        Ok(n == 1)
    }

    /// The `turn.end` audit row of one holding: given back (`released`), or its owner gone.
    fn audit_turn_end(
        &self,
        session: SessionId,
        owner: &str,
        holding: i64,
        released: bool,
    ) -> Result<(), StoreError> {
        let summary = if released {
            "turn ended"
        } else {
            "turn cut: its process is gone"
        };
        let mut row = NewAudit::new(
            Some(session),
            TURN_END_AUDIT,
            holding_arguments(owner, holding),
            summary,
        );
        row.ok = released;
        self.record_audit(&row)?;
        Ok(())
    }

    /// Start-up: drop the leases of owners that are gone.
    pub fn release_dead_turn_leases(
        &self,
        is_alive: &dyn Fn(Option<&str>) -> bool,
    ) -> Result<usize, StoreError> {
        let rows: Vec<(SessionId, String, i64)> = self
            .c
            .prepare_cached("SELECT session_id, owner, holding FROM turn_leases")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut n = 0;
        for (session, owner, holding) in rows {
            if !is_alive(Some(&owner)) {
                let removed = self.c.execute(
                    "DELETE FROM turn_leases WHERE session_id = ?1 AND owner = ?2",
                    params![session, owner],
                )?;
                if removed > 0 {
                    self.audit_turn_end(session, &owner, holding, false)?;
                }
                n += removed;
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
