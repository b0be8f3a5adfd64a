//! Sessions: one conversation with its goal, status, outcome and completion bookkeeping.

use rusqlite::{OptionalExtension as _, Row, params};
use serde::Serialize;

use crate::db::{Reader, Store, WriteTx};
use crate::error::StoreError;
use crate::types::{Refusal, fts_query, non_blank, sql_limit, text_enum};

/// Session identifier: the SQLite rowid (`i64`).
pub type SessionId = i64;

text_enum! {
    /// Where a session is in the task flow.
    pub enum SessionStatus {
        /// Created or waiting for the operator; no goal yet.
        Idle => "idle",
        /// A goal is set or a plan is proposed and waits for approval.
        Planning => "planning",
        /// Approved, or steps are being executed.
        Executing => "executing",
        /// Completed successfully.
        Done => "done",
        /// Completed with partial success.
        Partial => "partial",
        /// Completed as failed.
        Failed => "failed",
        /// Closed without completion (idle sweep, operator).
        Abandoned => "abandoned",
    }
}

impl SessionStatus {
    /// `done`, `partial`, `failed` and `abandoned` are terminal.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionStatus::Done
                | SessionStatus::Partial
                | SessionStatus::Failed
                | SessionStatus::Abandoned
        )
    }
}

text_enum! {
    /// How a completed session ended.
    pub enum Outcome {
        /// The task was done.
        Success => "success",
        /// Part of the task was done.
        Partial => "partial",
        /// The task failed.
        Failed => "failed",
        /// Closed without completion.
        Abandoned => "abandoned",
    }
}

impl Outcome {
    /// The terminal status this outcome puts a session in.
    pub fn status(self) -> SessionStatus {
        match self {
            Outcome::Success => SessionStatus::Done,
            Outcome::Partial => SessionStatus::Partial,
            Outcome::Failed => SessionStatus::Failed,
            Outcome::Abandoned => SessionStatus::Abandoned,
        }
    }
}

/// Input of [`Store::create_session`].
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// Shown in the session list; must not be blank.
    pub title: String,
    /// The goal, when already known.
    pub goal: Option<String>,
}

/// A session row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Session {
    /// Rowid.
    pub id: SessionId,
    /// Title.
    pub title: String,
    /// Goal set by `set_goal`.
    pub goal: Option<String>,
    /// Status.
    pub status: SessionStatus,
    /// Outcome of the last completion (cleared on reopen).
    pub outcome: Option<Outcome>,
    /// Summary of the last completion (cleared on reopen).
    pub summary: Option<String>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change of the row.
    pub updated_at_ms: i64,
    /// Last activity (message, tool call, execution, plan change).
    pub last_active_at_ms: i64,
    /// When the session last reached a terminal status.
    pub completed_at_ms: Option<i64>,
    /// Completion nudges sent by the idle sweep that actually ran (I15).
    pub completion_nudges: i64,
    /// Time of the last counted nudge.
    pub last_nudge_at_ms: Option<i64>,
    /// The current plan generation (0: no plan was ever proposed).
    pub plan_generation: i64,
    /// Started by "Try the demo" (the scripted model), not by an operator's task.
    pub demo: bool,
}

/// A line of the session list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// Rowid.
    pub id: SessionId,
    /// Title.
    pub title: String,
    /// Goal.
    pub goal: Option<String>,
    /// Status.
    pub status: SessionStatus,
    /// Outcome.
    pub outcome: Option<Outcome>,
    /// Summary.
    pub summary: Option<String>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last activity.
    pub last_active_at_ms: i64,
    /// A demo session (see [`Session::demo`]).
    pub demo: bool,
}

/// Filter of [`Store::list_sessions`].
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    /// Full-text search over title, goal and summary (every word must match; the last one as a
    /// prefix, for search as you type).
    pub search: Option<String>,
    /// At most this many rows; 0 means no limit.
    pub limit: u32,
}

/// Result of [`Store::complete_task`] (I6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompleteOutcome {
    /// The session is now terminal with the requested outcome.
    Completed {
        /// The session after completion.
        session: Session,
    },
    /// `success` was downgraded to `partial`: commands gathered facts in this plan generation
    /// but no `update_entity_attributes` / `create_relationship` recorded them. The session is
    /// `partial`; after the write-back, `complete_task(success)` is accepted once more.
    Downgraded {
        /// The session, now `partial`.
        session: Session,
        /// Why and what to do, for the model.
        refusal: Refusal,
    },
    /// Nothing changed.
    Refused(Refusal),
}

/// Result of [`Store::reopen_session`] (I9).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReopenOutcome {
    /// The session was terminal and is `executing` again; emit `task.reopened`.
    Reopened {
        /// The session after reopening.
        session: Session,
        /// Plan steps marked `replaced`.
        replaced_steps: usize,
        /// Approval windows closed.
        closed_windows: usize,
    },
    /// The session was not terminal; nothing changed.
    NotTerminal {
        /// The session, unchanged.
        session: Session,
    },
}

pub(crate) const SESSION_COLS: &str = "id, title, goal, status, outcome, summary, created_at_ms, \
     updated_at_ms, last_active_at_ms, completed_at_ms, completion_nudges, last_nudge_at_ms, \
     (SELECT coalesce(max(generation), 0) FROM plan_generations g WHERE g.session_id = sessions.id), \
     demo";

pub(crate) fn session_from_row(r: &Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        title: r.get(1)?,
        goal: r.get(2)?,
        status: r.get(3)?,
        outcome: r.get(4)?,
        summary: r.get(5)?,
        created_at_ms: r.get(6)?,
        updated_at_ms: r.get(7)?,
        last_active_at_ms: r.get(8)?,
        completed_at_ms: r.get(9)?,
        completion_nudges: r.get(10)?,
        last_nudge_at_ms: r.get(11)?,
        plan_generation: r.get(12)?,
        demo: r.get(13)?,
    })
}

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<SessionSummary> {
    Ok(SessionSummary {
        id: r.get(0)?,
        title: r.get(1)?,
        goal: r.get(2)?,
        status: r.get(3)?,
        outcome: r.get(4)?,
        summary: r.get(5)?,
        created_at_ms: r.get(6)?,
        last_active_at_ms: r.get(7)?,
        demo: r.get(8)?,
    })
}

impl Reader<'_> {
    /// One session.
    pub fn session(&self, id: SessionId) -> Result<Session, StoreError> {
        self.c
            .prepare_cached(&format!(
                "SELECT {SESSION_COLS} FROM sessions WHERE id = ?1"
            ))?
            .query_row([id], session_from_row)
            .optional()?
            .ok_or_else(|| StoreError::not_found("session", id))
    }

    /// Sessions, newest activity first, optionally filtered by full-text search.
    pub fn list_sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>, StoreError> {
        let limit = sql_limit(query.limit);
        let rows = match query.search.as_deref().and_then(|q| fts_query(q, true)) {
            None => self
                .c
                .prepare_cached(
                    "SELECT id, title, goal, status, outcome, summary, created_at_ms, last_active_at_ms,
                            demo
                     FROM sessions ORDER BY last_active_at_ms DESC, id DESC LIMIT ?1",
                )?
                .query_map([limit], summary_from_row)?
                .collect::<Result<Vec<_>, _>>()?,
            Some(q) => self
                .c
                .prepare_cached(
                    "SELECT s.id, s.title, s.goal, s.status, s.outcome, s.summary, s.created_at_ms,
                            s.last_active_at_ms, s.demo
                     FROM sessions_fts JOIN sessions s ON s.id = sessions_fts.rowid
                     WHERE sessions_fts MATCH ?1
                     ORDER BY s.last_active_at_ms DESC, s.id DESC LIMIT ?2",
                )?
                .query_map(params![q, limit], summary_from_row)?
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(rows)
    }

    /// Non-terminal sessions with a goal (`planning`, `executing`) whose last activity is older
    /// than `stale_after_ms` (I15 idle sweep). Oldest first.
    pub fn idle_sessions(
        &self,
        now_ms: i64,
        stale_after_ms: i64,
    ) -> Result<Vec<Session>, StoreError> {
        let rows = self
            .c
            .prepare_cached(&format!(
                "SELECT {SESSION_COLS} FROM sessions
                 WHERE status IN ('planning', 'executing') AND last_active_at_ms < ?1
                   AND paused_at_ms IS NULL
                 ORDER BY last_active_at_ms"
            ))?
            .query_map([now_ms.saturating_sub(stale_after_ms)], session_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

fn terminal_directive(s: &Session) -> Refusal {
    Refusal::new(
        "I6",
        format!(
            "Session {} is already complete (status={}).",
            s.id, s.status
        ),
        "Do NOT call complete_task again. Answer the operator in text; a follow-up message from \
         the operator reopens the session with a new plan.",
    )
}

impl WriteTx<'_> {
    /// Activity on a session that is known to exist: moves `last_active_at_ms` forward at
    /// [`ACTIVITY_GRANULARITY_MS`]; a session this writer touched within that time is skipped
    /// without a statement.
    pub(crate) fn touch(&self, id: SessionId) -> Result<(), StoreError> {
        if let Some(&at) = self.touched.borrow().get(&id)
            && at <= self.now
            && self.now - at < ACTIVITY_GRANULARITY_MS
        {
            return Ok(());
        }
        touch(self.c, id, self.now)?;
        let mut cache = self.touched.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        cache.insert(id, self.now);
        Ok(())
    }

    /// Bump `last_active_at_ms` (only ever forward).
    pub fn touch_session(&self, id: SessionId) -> Result<(), StoreError> {
        touch_checked(self.c, id, self.now)
    }

    /// Create a session in status `idle`.
    pub fn create_session(&self, new: &NewSession) -> Result<Session, StoreError> {
        let title = non_blank("A session title", &new.title)?;
        let goal = new.goal.as_deref().map(str::trim).filter(|g| !g.is_empty());
        self.c
            .prepare_cached(
                "INSERT INTO sessions (title, goal, status, created_at_ms, updated_at_ms, last_active_at_ms)
                 VALUES (?1, ?2, 'idle', ?3, ?3, ?3)",
            )?
            .execute(params![title, goal, self.now])?;
        self.reader().session(self.c.last_insert_rowid())
    }

    /// Marks a session as a demo (the faces label it from this, never from its title).
    pub fn mark_session_demo(&self, id: SessionId) -> Result<Session, StoreError> {
        let n = self.c.execute(
            "UPDATE sessions SET demo = 1, updated_at_ms = ?2 WHERE id = ?1",
            params![id, self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("session", id));
        }
        self.reader().session(id)
    }

    /// Rename a session.
    pub fn rename_session(&self, id: SessionId, title: &str) -> Result<Session, StoreError> {
        let title = non_blank("A session title", title)?;
        let n = self.c.execute(
            "UPDATE sessions SET title = ?2, updated_at_ms = ?3 WHERE id = ?1",
            params![id, title, self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("session", id));
        }
        self.reader().session(id)
    }

    /// `set_goal`: record the goal; an idle session moves to `planning`. Opens no approval
    /// window (I7). Refused on a terminal session (a follow-up reopens it first, I9).
    pub fn set_goal(&self, id: SessionId, goal: &str) -> Result<Session, StoreError> {
        let goal = non_blank("A goal", goal)?;
        let s = self.reader().session(id)?;
        if s.status.is_terminal() {
            return Err(StoreError::invariant(
                "I9",
                format!(
                    "Session {id} is complete (status={}); its goal cannot change.",
                    s.status
                ),
                "Do not call set_goal on a completed session. Wait for the operator's follow-up.",
            ));
        }
        self.c.execute(
            "UPDATE sessions SET goal = ?2, updated_at_ms = ?3, last_active_at_ms = max(last_active_at_ms, ?3),
                    status = CASE status WHEN 'idle' THEN 'planning' ELSE status END
             WHERE id = ?1",
            params![id, goal, self.now],
        )?;
        self.reader().session(id)
    }

    /// `complete_task(outcome, summary)` with the I6 gates: a terminal session is not
    /// completed again; `success` is downgraded to `partial` when this plan generation ran a
    /// command to completion but recorded no fact (`update_entity_attributes` /
    /// `create_relationship`). Closes open approval windows.
    pub fn complete_task(
        &self,
        id: SessionId,
        outcome: Outcome,
        summary: &str,
    ) -> Result<CompleteOutcome, StoreError> {
        let s = self.reader().session(id)?;
        let downgraded_before: bool = self.c.query_row(
            "SELECT completion_downgraded FROM sessions WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?;
        if s.status.is_terminal() {
            // The one exception: a success downgraded by the write-back gate may be completed
            // once more, as success, once the facts are written back.
            let retry = downgraded_before
                && s.status == SessionStatus::Partial
                && outcome == Outcome::Success;
            if !retry {
                return Ok(CompleteOutcome::Refused(terminal_directive(&s)));
            }
        }
        let summary = summary.trim();
        let facts = self.reader().generation_facts(id, s.plan_generation)?;
        let gate = outcome == Outcome::Success && facts.runs_finished > 0 && facts.fact_writes == 0;
        let (final_outcome, downgraded) = if gate {
            (Outcome::Partial, true)
        } else {
            (outcome, false)
        };
        self.c.execute(
            "UPDATE sessions SET status = ?2, outcome = ?3, summary = ?4, completed_at_ms = ?5,
                    updated_at_ms = ?5, last_active_at_ms = max(last_active_at_ms, ?5),
                    completion_downgraded = ?6
             WHERE id = ?1",
            params![
                id,
                final_outcome.status(),
                final_outcome,
                if summary.is_empty() {
                    None
                } else {
                    Some(summary)
                },
                self.now,
                downgraded
            ],
        )?;
        self.close_windows_on_completion(id)?;
        let session = self.reader().session(id)?;
        if downgraded {
            let g = s.plan_generation;
            let n = facts.runs_finished;
            return Ok(CompleteOutcome::Downgraded {
                session,
                refusal: Refusal::new(
                    "I6",
                    format!(
                        "Outcome downgraded to partial: plan v{g} ran {n} command(s) that gathered \
                         facts, but none were written back to the knowledge graph."
                    ),
                    "Call update_entity_attributes for every entity you inspected (versions, \
                     states, counts) and create_relationship for links you found, then call \
                     complete_task(outcome=success) again. upsert_knowledge alone does not count.",
                ),
            });
        }
        Ok(CompleteOutcome::Completed { session })
    }

    /// I9: a follow-up on a terminal session reopens it: status back to `executing`, outcome
    /// and summary cleared, every old plan step `replaced`, approval windows closed. The next
    /// `propose_plan` starts generation `max + 1`. A non-terminal session is left alone.
    pub fn reopen_session(&self, id: SessionId) -> Result<ReopenOutcome, StoreError> {
        let s = self.reader().session(id)?;
        if !s.status.is_terminal() {
            touch_checked(self.c, id, self.now)?;
            return Ok(ReopenOutcome::NotTerminal {
                session: self.reader().session(id)?,
            });
        }
        let replaced_steps = self.replace_all_steps(id)?;
        let closed_windows = self.close_windows_on_reopen(id)?;
        self.c.execute(
            "UPDATE sessions SET status = 'executing', outcome = NULL, summary = NULL,
                    completed_at_ms = NULL, completion_downgraded = 0, completion_nudges = 0,
                    last_nudge_at_ms = NULL, updated_at_ms = ?2,
                    last_active_at_ms = max(last_active_at_ms, ?2)
             WHERE id = ?1",
            params![id, self.now],
        )?;
        Ok(ReopenOutcome::Reopened {
            session: self.reader().session(id)?,
            replaced_steps,
            closed_windows,
        })
    }

    /// I21: the operator's Stop pauses the session: until the operator's next message nothing
    /// resumes it by itself (continuations wait as notes, no nudge, no reconnect turn).
    /// Returns whether the session was live (a terminal session is not paused).
    pub fn pause_session(&self, id: SessionId) -> Result<bool, StoreError> {
        let s = self.reader().session(id)?;
        if s.status.is_terminal() {
            return Ok(false);
        }
        self.c.execute(
            "UPDATE sessions SET paused_at_ms = coalesce(paused_at_ms, ?2), updated_at_ms = ?2 WHERE id = ?1",
            params![id, self.now],
        )?;
        Ok(true)
    }

    /// I21: the operator spoke again: the pause ends.
    pub fn unpause_session(&self, id: SessionId) -> Result<(), StoreError> {
        self.c.execute(
            "UPDATE sessions SET paused_at_ms = NULL WHERE id = ?1 AND paused_at_ms IS NOT NULL",
            [id],
        )?;
        Ok(())
    }

    /// I15: count a completion nudge. Call it only after the nudge's resume turn actually ran.
    pub fn record_completion_nudge(&self, id: SessionId) -> Result<Session, StoreError> {
        let n = self.c.execute(
            "UPDATE sessions SET completion_nudges = completion_nudges + 1, last_nudge_at_ms = ?2,
                    updated_at_ms = ?2
             WHERE id = ?1",
            params![id, self.now],
        )?;
        if n == 0 {
            return Err(StoreError::not_found("session", id));
        }
        self.reader().session(id)
    }

    /// I15: close a session whose nudge went unanswered: `abandoned`, approval windows closed.
    /// Returns `None` when the session is already terminal.
    pub fn auto_close_session(
        &self,
        id: SessionId,
        summary: &str,
    ) -> Result<Option<Session>, StoreError> {
        let s = self.reader().session(id)?;
        if s.status.is_terminal() {
            return Ok(None);
        }
        self.c.execute(
            "UPDATE sessions SET status = 'abandoned', outcome = 'abandoned', summary = ?2,
                    completed_at_ms = ?3, updated_at_ms = ?3
             WHERE id = ?1",
            params![id, summary.trim(), self.now],
        )?;
        self.close_windows_on_completion(id)?;
        Ok(Some(self.reader().session(id)?))
    }

    /// Delete a session and everything that belongs to it (messages, plan, executions, audit
    /// rows). Knowledge it wrote stays; its links to the session are cleared.
    pub fn delete_session(&self, id: SessionId) -> Result<(), StoreError> {
        let n = self.c.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
        if n == 0 {
            return Err(StoreError::not_found("session", id));
        }
        Ok(())
    }
}

/// `last_active_at_ms` moves only when it is this much behind: activity is kept to the second,
/// and a burst of appends writes the session row once per second rather than once per append.
pub const ACTIVITY_GRANULARITY_MS: i64 = 1000;

pub(crate) fn touch(c: &rusqlite::Connection, id: SessionId, now: i64) -> Result<(), StoreError> {
    // Callers have already proved the session exists (a row referencing it was written), or
    // use `touch_checked`.
    c.prepare_cached(
        "UPDATE sessions SET last_active_at_ms = ?2 WHERE id = ?1 AND last_active_at_ms <= ?2 - ?3",
    )?
    .execute(params![id, now, ACTIVITY_GRANULARITY_MS])?;
    Ok(())
}

pub(crate) fn touch_checked(
    c: &rusqlite::Connection,
    id: SessionId,
    now: i64,
) -> Result<(), StoreError> {
    let n = c
        .prepare_cached(
            "UPDATE sessions SET last_active_at_ms = ?2 WHERE id = ?1 AND last_active_at_ms < ?2",
        )?
        .execute(params![id, now])?;
    if n == 0 {
        let exists: bool = c
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)")?
            .query_row([id], |r| r.get(0))?;
        if !exists {
            return Err(StoreError::not_found("session", id));
        }
    }
    Ok(())
}

impl Store {
    /// Create a session in status `idle`.
    pub fn create_session(&self, new: NewSession) -> Result<Session, StoreError> {
        self.write(|w| w.create_session(&new))
    }
    /// See [`WriteTx::mark_session_demo`].
    pub fn mark_session_demo(&self, id: SessionId) -> Result<Session, StoreError> {
        self.write(|w| w.mark_session_demo(id))
    }
    /// One session.
    pub fn get_session(&self, id: SessionId) -> Result<Session, StoreError> {
        self.read(|r| r.session(id))
    }
    /// See [`WriteTx::pause_session`].
    pub fn pause_session(&self, id: SessionId) -> Result<bool, StoreError> {
        self.write(|w| w.pause_session(id))
    }
    /// See [`WriteTx::unpause_session`].
    pub fn unpause_session(&self, id: SessionId) -> Result<(), StoreError> {
        self.write(|w| w.unpause_session(id))
    }
    /// Whether the operator's Stop paused the session (I21).
    pub fn is_session_paused(&self, id: SessionId) -> Result<bool, StoreError> {
        self.read(|r| {
            r.c.prepare_cached("SELECT paused_at_ms IS NOT NULL FROM sessions WHERE id = ?1")?
                .query_row([id], |row| row.get::<_, bool>(0))
                .optional()?
                .ok_or_else(|| StoreError::not_found("session", id))
        })
    }
    /// Sessions, newest activity first, optionally filtered by full-text search.
    pub fn list_sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>, StoreError> {
        self.read(|r| r.list_sessions(query))
    }
    /// See [`WriteTx::rename_session`].
    pub fn rename_session(&self, id: SessionId, title: &str) -> Result<Session, StoreError> {
        self.write(|w| w.rename_session(id, title))
    }
    /// See [`WriteTx::touch_session`].
    pub fn touch_session(&self, id: SessionId) -> Result<(), StoreError> {
        self.write(|w| w.touch_session(id))
    }
    /// See [`WriteTx::set_goal`].
    pub fn set_goal(&self, id: SessionId, goal: &str) -> Result<Session, StoreError> {
        self.write(|w| w.set_goal(id, goal))
    }
    /// See [`WriteTx::complete_task`].
    pub fn complete_task(
        &self,
        id: SessionId,
        outcome: Outcome,
        summary: &str,
    ) -> Result<CompleteOutcome, StoreError> {
        self.write(|w| w.complete_task(id, outcome, summary))
    }
    /// See [`WriteTx::reopen_session`].
    pub fn reopen_session(&self, id: SessionId) -> Result<ReopenOutcome, StoreError> {
        self.write(|w| w.reopen_session(id))
    }
    /// See [`Reader::idle_sessions`]; uses the store's clock.
    pub fn idle_sessions(&self, stale_after_ms: i64) -> Result<Vec<Session>, StoreError> {
        let now = self.now_ms();
        self.read(|r| r.idle_sessions(now, stale_after_ms))
    }
    /// See [`WriteTx::record_completion_nudge`].
    pub fn record_completion_nudge(&self, id: SessionId) -> Result<Session, StoreError> {
        self.write(|w| w.record_completion_nudge(id))
    }
    /// See [`WriteTx::auto_close_session`].
    pub fn auto_close_session(
        &self,
        id: SessionId,
        summary: &str,
    ) -> Result<Option<Session>, StoreError> {
        self.write(|w| w.auto_close_session(id, summary))
    }
    /// See [`WriteTx::delete_session`].
    pub fn delete_session(&self, id: SessionId) -> Result<(), StoreError> {
        self.write(|w| w.delete_session(id))
    }
}
