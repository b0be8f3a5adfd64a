//! The Nomos agent: the task flow, its tools and the structural gates that keep it honest.
//!
//! The agent takes operator input ([`Agent::send`], [`Agent::approve_plan`],
//! [`Agent::approve_execution`], [`Agent::deny_execution`], [`Agent::stop`]) and emits typed
//! [`nomos_protocol::AgentEvent`]s to every subscriber. It knows no Tauri and no
//! UI: the desktop shell and the CLI are two thin faces over it.
//!
//! Every rule of DESIGN.md §4 that can be enforced in code is enforced here or in the store,
//! never only in the prompt: plan before run (I1), approval from the operator's own words or
//! button only (I7, I8), one turn per session (I13), `done` on every path (I10), empty replies
//! retried with escalating notes (I11), continuations marked only after the resume ran (I14),
//! the runaway guard (I20) and the rest.
//!
//! **Architecture invariant:** nothing the model or a command prints can approve anything:
//! approval enters only through [`Agent::send`] (the operator's text, read by
//! [`approval::detect`]) and the explicit approve methods.

pub mod approval;
mod config;
pub mod convert;
mod error;
mod events;
mod execution;
mod gate;
mod notes;
mod pending;
pub mod setup;
mod tools;
mod turn;
mod worker;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use config::AgentConfig;
pub use error::AgentError;
pub use events::EventStream;

use nomos_exec::{Executor, Inventory};
use nomos_llm::Provider;
use nomos_protocol::{AgentEvent, SessionView};
use nomos_store::{SessionId, Store};
use tokio_util::sync::CancellationToken;

/// The system prompt shipped with the binary (the repository's `SOUL.md`).
pub const SOUL: &str = include_str!("../../../SOUL.md");

/// Everything the agent is built from. Time comes from the store's clock.
#[derive(Debug, Clone)]
pub struct AgentParts {
    pub store: Store,
    pub provider: Arc<dyn Provider>,
    pub executor: Arc<Executor>,
    pub inventory: Inventory,
    pub config: AgentConfig,
}

/// The agent. Cheap to clone; every clone drives the same sessions.
#[derive(Debug, Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    provider: Arc<dyn Provider>,
    executor: Arc<Executor>,
    inventory: std::sync::RwLock<Inventory>,
    config: AgentConfig,
    events: events::EventHub,
    gates: gate::Gates,
    /// Cancellation of the turn running in each session (I10: stop ends it at once).
    turns: Mutex<HashMap<SessionId, CancellationToken>>,
    /// I22: the exact text of each execution not yet run, as classified and approved; the
    /// store keeps only a redacted display copy and this text's digest.
    exact: Mutex<HashMap<i64, String>>,
    /// Executions running in the background, so the operator can cancel them.
    running: Mutex<HashMap<i64, nomos_exec::ExecutionHandle>>,
    /// Tokens spent per session since start-up, for the runaway guard's budget (I20).
    tokens: Mutex<HashMap<SessionId, u64>>,
    /// Sessions an automatic resume (a continuation or a reconnect) has run in since
    /// start-up: their cut work was taken up, so a face's reconnect starts no second turn.
    resumed: Mutex<std::collections::HashSet<SessionId>>,
}

impl Inner {
    fn tokens_used(&self, session: SessionId) -> u64 {
        self.tokens
            .lock()
            .map(|t| t.get(&session).copied().unwrap_or(0))
            .unwrap_or(u64::MAX)
    }

    fn add_tokens(&self, session: SessionId, n: u64) {
        if let Ok(mut t) = self.tokens.lock() {
            *t.entry(session).or_insert(0) += n;
        }
    }
}

/// The first line of a task, shortened, names its session.
pub fn title_from(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() > 80 {
        let mut t: String = line.chars().take(79).collect();
        t.push('…');
        t
    } else {
        line.to_owned()
    }
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                provider: parts.provider,
                executor: parts.executor,
                inventory: std::sync::RwLock::new(parts.inventory),
                config: parts.config,
                events: events::EventHub::default(),
                gates: gate::Gates::default(),
                turns: Mutex::new(HashMap::new()),
                exact: Mutex::new(HashMap::new()),
                running: Mutex::new(HashMap::new()),
                resumed: Mutex::new(std::collections::HashSet::new()),
                tokens: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The store the agent writes to.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Every event from now on, for every session.
    pub fn subscribe(&self) -> EventStream {
        self.inner.events.subscribe()
    }

    /// Everything the chat and the plan panel need to render a session.
    pub fn session_view(&self, session: SessionId) -> Result<SessionView, AgentError> {
        convert::session_view(&self.inner.store, session)
    }

    /// The operator's chat message. Starts a session when `session` is `None`; reopens a
    /// finished one (I9); detects approval in the operator's own words (I7). Returns the
    /// session id once the turn has ended.
    pub async fn send(
        &self,
        session: Option<SessionId>,
        text: &str,
    ) -> Result<SessionId, AgentError> {
        turn::operator_message(self, session, text).await
    }

    /// The operator's chat message, for faces that stream: everything that can refuse it
    /// (empty, too long, busy) is checked and the session created or reopened before this
    /// returns; the turn itself then runs detached and is heard as events.
    pub async fn submit(
        &self,
        session: Option<SessionId>,
        text: &str,
    ) -> Result<SessionId, AgentError> {
        let accepted = turn::accept_message(self, session, text).await?;
        Ok(self.detach(accepted))
    }

    /// The operator's Retry after a failed turn: the turn runs again on the same transcript,
    /// detached, without adding the operator's message a second time. Refused for a finished
    /// session (a new message reopens it).
    pub async fn retry_turn(&self, session: SessionId) -> Result<(), AgentError> {
        let accepted = turn::accept_retry(self, session).await?;
        self.detach(accepted);
        Ok(())
    }

    fn detach(&self, accepted: turn::Accepted) -> SessionId {
        let session = accepted.session;
        let agent = self.clone();
        tokio::spawn(async move { accepted.run(&agent).await });
        session
    }

    /// The operator pressed Approve on the plan generation they saw: opens the approval window
    /// and advances. Refused with [`AgentError::StalePlan`] when that generation is no longer
    /// the plan in flight (completed, re-proposed or reopened since).
    pub async fn approve_plan(
        &self,
        session: SessionId,
        generation: i64,
    ) -> Result<(), AgentError> {
        turn::approve_plan(self, session, generation).await
    }

    /// The operator pressed Approve on one command's card: it runs now.
    pub async fn approve_execution(&self, execution: i64) -> Result<(), AgentError> {
        execution::approve_execution(self, execution).await
    }

    /// The operator pressed Deny on one command's card.
    pub async fn deny_execution(
        &self,
        execution: i64,
        reason: Option<&str>,
    ) -> Result<(), AgentError> {
        execution::deny_execution(self, execution, reason).await
    }

    /// The operator cancelled a running execution.
    pub fn cancel_execution(&self, execution: i64) -> Result<bool, AgentError> {
        execution::cancel_execution(self, execution, true)
    }

    /// The operator pressed Stop: the turn in flight ends at once, with no retry (I10), and
    /// the session pauses (I21): a command still running finishes in the background and its
    /// result waits as a note for the operator's next message; nothing resumes by itself.
    /// Returns whether a turn was running. A turn another live process runs (I24) is refused
    /// with [`AgentError::TurnElsewhere`]: pausing the session under it would strand that
    /// process's background work, which nothing would then resume.
    pub fn stop(&self, session: SessionId) -> Result<bool, AgentError> {
        let store = &self.inner.store;
        let here = self
            .inner
            .turns
            .lock()
            .map_err(|_| AgentError::Poisoned)?
            .contains_key(&session);
        if !here
            && let Some(holder) = store.turn_lease_holder(session)?
            && holder != store.owner_id()
            && store.is_owner_alive(Some(&holder))
        {
            return Err(AgentError::TurnElsewhere {
                session,
                pid: gate::holder_pid(&holder),
            });
        }
        // Paused before the turn is cancelled, so the cancelled turn's background execution
        // can never find the session resumable.
        if let Err(e) = store.pause_session(session) {
            tracing::warn!(code = e.code(), session, "could not pause the session: {e}");
        }
        Ok(match self.inner.turns.lock() {
            Ok(turns) => turns.get(&session).map(|t| t.cancel()).is_some(),
            Err(_) => false,
        })
    }

    /// A face reconnected to a session (I12): resumes it with a note carrying the operator's
    /// last message and any results the model has not seen, unless it is finished, busy, or
    /// already resumed since start-up (after a crash the continuation worker and the face
    /// would otherwise each take up the same cut work: one resume only).
    pub async fn reconnect(&self, session: SessionId) -> Result<bool, AgentError> {
        worker::reconnect(self, session).await
    }

    /// One tick of the continuation worker (I14): resumes executing sessions whose background
    /// executions finished. Returns how many resumes ran.
    pub async fn continue_finished(&self) -> Result<usize, AgentError> {
        worker::continue_finished(self).await
    }

    /// One tick of the idle sweep (I15): nudges stale sessions, closes unanswered ones.
    pub async fn sweep_idle(&self) -> Result<worker::SweepReport, AgentError> {
        worker::sweep_idle(self).await
    }

    /// Start-up recovery after a crash: interrupted executions are failed with a reason, cut
    /// turns closed without empty bubbles, and pending continuations left for the worker.
    ///
    /// Only work whose process is gone is taken over (I24): another app or CLI on this data
    /// directory keeps its turns and executions. A command such a process left running is
    /// ended (its process group, after proving it is still that command's) and its row says
    /// so.
    pub fn recover(&self) -> Result<nomos_store::RecoveryReport, AgentError> {
        Ok(self
            .inner
            .store
            .recover_at_startup_with(&end_orphaned_execution)?)
    }

    /// Runs the continuation worker and the idle sweep until `stop` fires.
    pub fn spawn_workers(&self, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let agent = self.clone();
        tokio::spawn(async move {
            let mut ticks: u64 = 0;
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(turn::WORKER_TICK) => {}
                }
                if let Err(e) = agent.continue_finished().await {
                    tracing::warn!(code = e.code(), "continuation worker: {e}");
                }
                ticks += 1;
                // The idle sweep looks at minutes, not milliseconds.
                if ticks.is_multiple_of(120)
                    && let Err(e) = agent.sweep_idle().await
                {
                    tracing::warn!(code = e.code(), "idle sweep: {e}");
                }
            }
        })
    }

    /// Whether the session has a plan in flight with no approval window open yet.
    pub fn has_plan_awaiting_approval(&self, session: SessionId) -> Result<bool, AgentError> {
        let store = &self.inner.store;
        Ok(store.current_plan(session)?.in_flight()
            && store.active_approval_window(session)?.is_none())
    }

    /// Nothing is happening in the session: no turn, no running execution, no result waiting
    /// to be delivered. Headless faces wait for this before asking the operator again.
    pub fn is_settled(&self, session: SessionId) -> Result<bool, AgentError> {
        let turn_running = self
            .inner
            .turns
            .lock()
            .map_err(|_| AgentError::Poisoned)?
            .contains_key(&session);
        if turn_running {
            return Ok(false);
        }
        let store = &self.inner.store;
        let active = store.executions(session)?.iter().any(|e| {
            matches!(
                e.status,
                nomos_store::ExecStatus::Queued | nomos_store::ExecStatus::Running
            )
        });
        let waiting = store.pending_continuations()?.iter().any(|p| {
            p.execution.session_id == session
                && p.session_status == nomos_store::SessionStatus::Executing
                && !p.session_paused
        });
        Ok(!active && !waiting)
    }

    /// Sends an event to every subscriber; the faces use it for errors that happen before a
    /// turn starts (a busy session, a message too long).
    pub fn publish(&self, event: AgentEvent) {
        self.emit(event);
    }

    fn emit(&self, event: AgentEvent) {
        self.inner.events.emit(event);
    }
}

pub use worker::SweepReport;

/// The names of the tools the agent offers the model, in task-flow order: faces that turn
/// tool calls into operator words check they have words for each.
pub fn tool_names() -> Vec<String> {
    tools::specs().into_iter().map(|s| s.name).collect()
}

/// How long an orphaned group gets between SIGTERM and SIGKILL.
const ORPHAN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The recovery reason of an execution whose process died, after ending what it left running.
fn end_orphaned_execution(e: &nomos_store::Execution) -> Option<String> {
    let pgid = i32::try_from(e.pgid?).ok()?;
    let group = nomos_exec::ProcessGroup {
        pgid,
        start_ticks: e.pgid_start_ticks.and_then(|t| u64::try_from(t).ok()),
        started_at_unix_ms: e.started_at_ms,
    };
    let why = match nomos_exec::end_orphaned_group(group, ORPHAN_GRACE) {
        nomos_exec::OrphanOutcome::Killed => format!(
            "The Nomos process that ran it exited; its process group {pgid} was killed. \
             Its result was not captured: check the target before running it again."
        ),
        nomos_exec::OrphanOutcome::AlreadyGone => format!(
            "The Nomos process that ran it exited; its process group {pgid} had already ended. \
             Its result was not captured: check the target before running it again."
        ),
        nomos_exec::OrphanOutcome::NotOurs(detail) => format!(
            "The Nomos process that ran it exited; its process group {pgid} was left alone \
             ({detail}). Its result was not captured: check the target before running it again."
        ),
    };
    tracing::warn!(execution = e.id, pgid, "{why}");
    Some(why)
}
