//! Plan generations and steps, with the store-level gates I2, I3, I4, I5 (and the I9 reopen).

use rusqlite::{OptionalExtension as _, Row, params};
use serde::Serialize;

use crate::approvals::CloseReason;
use crate::db::{Reader, Store, WriteTx};
use crate::error::StoreError;
use crate::sessions::SessionId;
use crate::types::{Refusal, text_enum};

/// Plan step identifier (rowid).
pub type StepId = i64;

/// At most this many steps in one proposal.
pub const MAX_PLAN_STEPS: usize = 50;

/// Title of the step appended when a proposal has no write-back step (I4).
pub const WRITE_BACK_TITLE: &str =
    "Write back: update_entity_attributes + create_relationship + upsert_knowledge";
/// Detail of the appended write-back step.
pub const WRITE_BACK_DETAIL: &str = "Call update_entity_attributes for every entity you inspected \
     (versions, states, counts), create_relationship for every link you found, then \
     upsert_knowledge with `about` links to those entities.";

text_enum! {
    /// Status of a plan step.
    pub enum StepStatus {
        /// Not started.
        Pending => "pending",
        /// In progress.
        Running => "running",
        /// Finished.
        Done => "done",
        /// Finished unsuccessfully.
        Failed => "failed",
        /// Deliberately not done.
        Skipped => "skipped",
        /// Superseded by a later plan generation (re-proposal or reopen).
        Replaced => "replaced",
    }
}

impl StepStatus {
    /// `done`, `failed`, `skipped`: the step is finished with.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            StepStatus::Done | StepStatus::Failed | StepStatus::Skipped
        )
    }
}

/// One step of a proposal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewPlanStep {
    /// Short imperative title.
    pub title: String,
    /// More detail.
    pub detail: Option<String>,
    /// Target entity slug (`host:web-01`).
    pub target: Option<String>,
}

impl NewPlanStep {
    /// A step with a title only.
    pub fn new(title: impl Into<String>) -> Self {
        NewPlanStep {
            title: title.into(),
            ..Default::default()
        }
    }
    /// Set the target.
    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }
    /// Set the detail.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// A plan step row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanStep {
    /// Rowid.
    pub id: StepId,
    /// Session.
    pub session_id: SessionId,
    /// Plan generation (1, 2, …).
    pub generation: i64,
    /// Position in its generation, from 1.
    pub seq: i64,
    /// Title.
    pub title: String,
    /// Detail.
    pub detail: Option<String>,
    /// Target entity slug.
    pub target: Option<String>,
    /// Status.
    pub status: StepStatus,
    /// For a `replaced` step: the status it had before.
    pub status_before_replace: Option<StepStatus>,
    /// This is a write-back step (proposed as such, or appended by I4).
    pub write_back: bool,
    /// Last note given with a status change.
    pub note: Option<String>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
    /// When it first went `running`.
    pub started_at_ms: Option<i64>,
    /// When it was finished.
    pub finished_at_ms: Option<i64>,
}

/// The current plan of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CurrentPlan {
    /// Current generation (0: none).
    pub generation: i64,
    /// Whether the generation was replaced (after a reopen, before the next proposal).
    pub replaced: bool,
    /// Its steps in order.
    pub steps: Vec<PlanStep>,
}

impl CurrentPlan {
    /// A step of the current generation is pending or running and the plan was not replaced.
    pub fn in_flight(&self) -> bool {
        !self.replaced
            && self
                .steps
                .iter()
                .any(|s| matches!(s.status, StepStatus::Pending | StepStatus::Running))
    }
    /// The first step that is not finished.
    pub fn next_step(&self) -> Option<&PlanStep> {
        self.steps
            .iter()
            .find(|s| matches!(s.status, StepStatus::Pending | StepStatus::Running))
    }
}

/// What the gates know about one plan generation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GenerationFacts {
    /// The generation.
    pub generation: i64,
    /// `run` executions of this generation that reached `finished`.
    pub runs_finished: i64,
    /// `update_entity_attributes` / `create_relationship` calls recorded in this generation.
    pub fact_writes: i64,
    /// `upsert_knowledge` calls recorded in this generation (prose; not a fact write).
    pub knowledge_upserts: i64,
}

/// A successful proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposedPlan {
    /// The new generation.
    pub generation: i64,
    /// Its steps.
    pub steps: Vec<PlanStep>,
    /// I4: a write-back step was appended because none was proposed.
    pub write_back_appended: bool,
    /// Steps of the previous generation marked `replaced`.
    pub replaced_steps: usize,
}

/// Result of [`Store::propose_plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProposePlanOutcome {
    /// The plan was recorded as a new generation.
    Proposed(ProposedPlan),
    /// Refused (I2 and friends); nothing changed.
    Refused(Refusal),
}

/// Result of [`Store::update_plan_step`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpdateStepOutcome {
    /// The step after the change.
    Updated(PlanStep),
    /// Refused (I5 and friends); nothing changed.
    Refused(Refusal),
}

const STEP_COLS: &str = "id, session_id, generation, seq, title, detail, target, status, \
     status_before_replace, write_back, note, created_at_ms, updated_at_ms, started_at_ms, finished_at_ms";

fn step_from_row(r: &Row<'_>) -> rusqlite::Result<PlanStep> {
    Ok(PlanStep {
        id: r.get(0)?,
        session_id: r.get(1)?,
        generation: r.get(2)?,
        seq: r.get(3)?,
        title: r.get(4)?,
        detail: r.get(5)?,
        target: r.get(6)?,
        status: r.get(7)?,
        status_before_replace: r.get(8)?,
        write_back: r.get(9)?,
        note: r.get(10)?,
        created_at_ms: r.get(11)?,
        updated_at_ms: r.get(12)?,
        started_at_ms: r.get(13)?,
        finished_at_ms: r.get(14)?,
    })
}

fn mentions_fact_write(s: &str) -> bool {
    s.contains("update_entity_attributes") || s.contains("create_relationship")
}

pub(crate) const GENERATION_AT_SQL: &str = "SELECT coalesce(max(generation), 0) FROM plan_generations \
     WHERE session_id = ?1 AND proposed_at_ms <= ?2";

impl Reader<'_> {
    /// The current generation: `(generation, replaced)`; `(0, false)` without a plan.
    pub fn current_generation(&self, session: SessionId) -> Result<(i64, bool), StoreError> {
        Ok(self
            .c
            .prepare_cached(
                "SELECT generation, replaced_at_ms IS NOT NULL FROM plan_generations
                 WHERE session_id = ?1 ORDER BY generation DESC LIMIT 1",
            )?
            .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((0, false)))
    }

    /// The steps of one generation, in order.
    pub fn plan_steps_of(
        &self,
        session: SessionId,
        generation: i64,
    ) -> Result<Vec<PlanStep>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {STEP_COLS} FROM plan_steps WHERE session_id = ?1 AND generation = ?2 ORDER BY seq"
            ))?
            .query_map(params![session, generation], step_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Every step of every generation, oldest generation first (for the plan panel).
    pub fn plan_history(&self, session: SessionId) -> Result<Vec<PlanStep>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {STEP_COLS} FROM plan_steps WHERE session_id = ?1 ORDER BY generation, seq"
            ))?
            .query_map([session], step_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// The plan generation in force at `at_ms` (0 before any plan): the newest proposed by
    /// then. A transcript page that starts mid-session names plans and steps from it.
    pub fn generation_at(&self, session: SessionId, at_ms: i64) -> Result<i64, StoreError> {
        Ok(self
            .c
            .prepare_cached(GENERATION_AT_SQL)?
            .query_row(params![session, at_ms], |r| r.get(0))?)
    }

    /// The current plan.
    pub fn current_plan(&self, session: SessionId) -> Result<CurrentPlan, StoreError> {
        self.session(session)?;
        let (generation, replaced) = self.current_generation(session)?;
        let steps = if generation == 0 {
            Vec::new()
        } else {
            self.plan_steps_of(session, generation)?
        };
        Ok(CurrentPlan {
            generation,
            replaced,
            steps,
        })
    }

    /// Does the session have a plan in flight (I12 resume notes)?
    pub fn plan_in_flight(&self, session: SessionId) -> Result<bool, StoreError> {
        Ok(self.current_plan(session)?.in_flight())
    }

    /// Does the session have a live (proposed, not replaced) plan? `run` needs one (I1).
    pub fn has_plan(&self, session: SessionId) -> Result<bool, StoreError> {
        let (g, replaced) = self.current_generation(session)?;
        Ok(g > 0 && !replaced)
    }

    /// The facts the I6 gate uses, for one generation (zeros when it does not exist).
    pub fn generation_facts(
        &self,
        session: SessionId,
        generation: i64,
    ) -> Result<GenerationFacts, StoreError> {
        Ok(self
            .c
            .prepare_cached(
                "SELECT runs_finished, fact_writes, knowledge_upserts FROM plan_generations
                 WHERE session_id = ?1 AND generation = ?2",
            )?
            .query_row(params![session, generation], |r| {
                Ok(GenerationFacts {
                    generation,
                    runs_finished: r.get(0)?,
                    fact_writes: r.get(1)?,
                    knowledge_upserts: r.get(2)?,
                })
            })
            .optional()?
            .unwrap_or(GenerationFacts {
                generation,
                ..Default::default()
            }))
    }
}

/// Which counter of `plan_generations` to bump.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Fact {
    RunFinished,
    Write,
    KnowledgeUpsert,
}

impl WriteTx<'_> {
    /// Bump a counter of the session's current generation (no-op without a plan).
    pub(crate) fn count_fact(
        &self,
        session: SessionId,
        generation: Option<i64>,
        fact: Fact,
    ) -> Result<(), StoreError> {
        let col = match fact {
            Fact::RunFinished => "runs_finished",
            Fact::Write => "fact_writes",
            Fact::KnowledgeUpsert => "knowledge_upserts",
        };
        let generation = match generation {
            Some(g) => g,
            None => self.reader().current_generation(session)?.0,
        };
        if generation > 0 {
            self.c
                .prepare_cached(&format!(
                    "UPDATE plan_generations SET {col} = {col} + 1 WHERE session_id = ?1 AND generation = ?2"
                ))?
                .execute(params![session, generation])?;
        }
        Ok(())
    }

    /// Mark every step not yet replaced as `replaced` and the current generation as replaced.
    pub(crate) fn replace_all_steps(&self, session: SessionId) -> Result<usize, StoreError> {
        let n = self.c.execute(
            "UPDATE plan_steps SET status_before_replace = status, status = 'replaced', updated_at_ms = ?2
             WHERE session_id = ?1 AND status <> 'replaced'",
            params![session, self.now],
        )?;
        self.c.execute(
            "UPDATE plan_generations SET replaced_at_ms = ?2 WHERE session_id = ?1 AND replaced_at_ms IS NULL",
            params![session, self.now],
        )?;
        Ok(n)
    }

    /// `propose_plan`: record `steps` as generation `max + 1`.
    ///
    /// * I2 — refused while a step of the current generation is `running` or `done`; the
    ///   refusal tells the model to advance with `update_plan_step` + `run`.
    /// * I3 — before any step starts, a re-proposal replaces the pending steps (they become
    ///   `replaced`); generations number 1, 2, …; a reopened session continues at `max + 1`.
    /// * I4 — a write-back step is appended when no step mentions `update_entity_attributes`
    ///   or `create_relationship`.
    ///
    /// The session moves to `planning`; open approval windows of the old generation close.
    pub fn propose_plan(
        &self,
        session: SessionId,
        steps: &[NewPlanStep],
    ) -> Result<ProposePlanOutcome, StoreError> {
        let s = self.reader().session(session)?;
        if s.status.is_terminal() {
            return Ok(ProposePlanOutcome::Refused(Refusal::new(
                "I9",
                format!("Session {session} is complete (status={}).", s.status),
                "Do NOT propose a plan on a completed session. Answer in text; the operator's \
                 follow-up reopens the session.",
            )));
        }
        if steps.is_empty() {
            return Ok(ProposePlanOutcome::Refused(Refusal::new(
                "empty_plan",
                "The plan has no steps.",
                "Call propose_plan with at least one step (a one-step plan is fine).",
            )));
        }
        if steps.len() > MAX_PLAN_STEPS {
            return Ok(ProposePlanOutcome::Refused(Refusal::new(
                "plan_too_long",
                format!(
                    "The plan has {} steps; at most {MAX_PLAN_STEPS} are allowed.",
                    steps.len()
                ),
                "Group the work into fewer, larger steps and call propose_plan again.",
            )));
        }
        if let Some(i) = steps.iter().position(|st| st.title.trim().is_empty()) {
            return Ok(ProposePlanOutcome::Refused(Refusal::new(
                "empty_step_title",
                format!("Step {} has no title.", i + 1),
                "Give every step a short imperative title and call propose_plan again.",
            )));
        }
        let (current, replaced) = self.reader().current_generation(session)?;
        let mut replaced_steps = 0;
        if current > 0 && !replaced {
            let old = self.reader().plan_steps_of(session, current)?;
            if let Some(busy) = old
                .iter()
                .find(|st| matches!(st.status, StepStatus::Running | StepStatus::Done))
            {
                let next = old
                    .iter()
                    .find(|st| matches!(st.status, StepStatus::Pending | StepStatus::Running))
                    .map(|st| format!(" Next: step {} \"{}\".", st.seq, st.title))
                    .unwrap_or_default();
                return Ok(ProposePlanOutcome::Refused(Refusal::new(
                    "I2",
                    format!(
                        "A step of plan v{current} is {} (step {} \"{}\"); the plan is in flight.",
                        busy.status, busy.seq, busy.title
                    ),
                    format!(
                        "Advance with update_plan_step + run; do NOT call propose_plan again.{next}"
                    ),
                )));
            }
            replaced_steps = self.c.execute(
                "UPDATE plan_steps SET status_before_replace = status, status = 'replaced', updated_at_ms = ?3
                 WHERE session_id = ?1 AND generation = ?2 AND status <> 'replaced'",
                params![session, current, self.now],
            )?;
            self.c.execute(
                "UPDATE plan_generations SET replaced_at_ms = ?3 WHERE session_id = ?1 AND generation = ?2",
                params![session, current, self.now],
            )?;
        }
        self.close_windows_of_session(session, CloseReason::Replaced)?;
        let generation = current + 1;
        self.c.execute(
            "INSERT INTO plan_generations (session_id, generation, proposed_at_ms) VALUES (?1, ?2, ?3)",
            params![session, generation, self.now],
        )?;
        let has_write_back = steps.iter().any(|st| {
            mentions_fact_write(&st.title) || st.detail.as_deref().is_some_and(mentions_fact_write)
        });
        let mut insert = self.c.prepare_cached(
            "INSERT INTO plan_steps (session_id, generation, seq, title, detail, target, write_back,
                                     created_at_ms, updated_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
        )?;
        let mut seq = 0i64;
        for st in steps {
            seq += 1;
            let wb = mentions_fact_write(&st.title)
                || st.detail.as_deref().is_some_and(mentions_fact_write);
            let detail = st
                .detail
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty());
            let target = st
                .target
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty());
            insert.execute(params![
                session,
                generation,
                seq,
                st.title.trim(),
                detail,
                target,
                wb,
                self.now
            ])?;
        }
        if !has_write_back {
            seq += 1;
            insert.execute(params![
                session,
                generation,
                seq,
                WRITE_BACK_TITLE,
                WRITE_BACK_DETAIL,
                Option::<&str>::None,
                true,
                self.now
            ])?;
        }
        self.c.execute(
            "UPDATE sessions SET status = CASE WHEN status IN ('idle','executing') THEN 'planning' ELSE status END,
                    updated_at_ms = ?2, last_active_at_ms = max(last_active_at_ms, ?2)
             WHERE id = ?1",
            params![session, self.now],
        )?;
        Ok(ProposePlanOutcome::Proposed(ProposedPlan {
            generation,
            steps: self.reader().plan_steps_of(session, generation)?,
            write_back_appended: !has_write_back,
            replaced_steps,
        }))
    }

    /// `update_plan_step(seq, status)` on the current generation, with I5 (ordered
    /// completion: a step is finished only after every earlier step is finished) and no
    /// re-completion of a `done`/`skipped` step.
    pub fn update_plan_step(
        &self,
        session: SessionId,
        seq: i64,
        status: StepStatus,
        note: Option<&str>,
    ) -> Result<UpdateStepOutcome, StoreError> {
        let s = self.reader().session(session)?;
        if s.status.is_terminal() {
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "I9",
                format!("Session {session} is complete (status={}).", s.status),
                "Do not change plan steps of a completed session. Wait for the operator's follow-up.",
            )));
        }
        let plan = self.reader().current_plan(session)?;
        if plan.generation == 0 || plan.replaced {
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "I1",
                "There is no plan in flight.",
                "Call propose_plan first (a one-step plan is fine), then wait for approval.",
            )));
        }
        let g = plan.generation;
        let Some(step) = plan.steps.iter().find(|st| st.seq == seq) else {
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "unknown_step",
                format!(
                    "Plan v{g} has no step {seq}; its steps are 1..{}.",
                    plan.steps.len()
                ),
                "Use a step number of the current plan.",
            )));
        };
        if matches!(status, StepStatus::Pending | StepStatus::Replaced) {
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "bad_status",
                format!("A step cannot be set to {status}."),
                "Use running, done, failed or skipped.",
            )));
        }
        if step.status == status {
            return Ok(UpdateStepOutcome::Updated(step.clone()));
        }
        if matches!(step.status, StepStatus::Done | StepStatus::Skipped) {
            let next = plan
                .next_step()
                .map(|n| {
                    format!(
                        "Advance to step {} \"{}\" with update_plan_step + run.",
                        n.seq, n.title
                    )
                })
                .unwrap_or_else(|| "Every step is finished: call complete_task.".to_owned());
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "step_finished",
                format!("Step {seq} of plan v{g} is already {}.", step.status),
                format!("Do not update it again. {next}"),
            )));
        }
        if step.status == StepStatus::Failed
            && status == StepStatus::Running
            && let Some(later) = plan
                .steps
                .iter()
                .find(|st| st.seq > seq && st.status.is_finished())
        {
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "I5",
                format!(
                    "Step {} \"{}\" after it is already {}; a failed step can be retried only \
                     before later steps finish.",
                    later.seq, later.title, later.status
                ),
                format!(
                    "Leave step {seq} failed and go on with the next unfinished step, or record the \
                     retry's result directly with update_plan_step seq={seq} status=done."
                ),
            )));
        }
        if status.is_finished()
            && let Some(open) = plan.steps.iter().find(|st| {
                st.seq < seq && matches!(st.status, StepStatus::Pending | StepStatus::Running)
            })
        {
            return Ok(UpdateStepOutcome::Refused(Refusal::new(
                "I5",
                format!(
                    "Step {} \"{}\" is still {}; steps complete in order.",
                    open.seq, open.title, open.status
                ),
                format!(
                    "Finish step {} first (update_plan_step seq={} status=done, failed or \
                         skipped), then step {seq}.",
                    open.seq, open.seq
                ),
            )));
        }
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        self.c.execute(
            "UPDATE plan_steps SET status = ?2, note = coalesce(?3, note), updated_at_ms = ?4,
                    started_at_ms = CASE WHEN ?2 = 'running' THEN coalesce(started_at_ms, ?4) ELSE started_at_ms END,
                    finished_at_ms = CASE WHEN ?2 IN ('done','failed','skipped') THEN ?4 ELSE NULL END
             WHERE id = ?1",
            params![step.id, status, note, self.now],
        )?;
        if matches!(status, StepStatus::Running | StepStatus::Done) && !s.status.is_terminal() {
            self.c.execute(
                "UPDATE sessions SET status = 'executing', updated_at_ms = ?2 WHERE id = ?1 AND status <> 'executing'",
                params![session, self.now],
            )?;
        }
        self.touch(session)?;
        let updated = self
            .c
            .prepare_cached(&format!("SELECT {STEP_COLS} FROM plan_steps WHERE id = ?1"))?
            .query_row([step.id], step_from_row)?;
        Ok(UpdateStepOutcome::Updated(updated))
    }
}

impl Store {
    /// See [`WriteTx::propose_plan`].
    pub fn propose_plan(
        &self,
        session: SessionId,
        steps: &[NewPlanStep],
    ) -> Result<ProposePlanOutcome, StoreError> {
        self.write(|w| w.propose_plan(session, steps))
    }
    /// See [`WriteTx::update_plan_step`].
    pub fn update_plan_step(
        &self,
        session: SessionId,
        seq: i64,
        status: StepStatus,
        note: Option<&str>,
    ) -> Result<UpdateStepOutcome, StoreError> {
        self.write(|w| w.update_plan_step(session, seq, status, note))
    }
    /// See [`Reader::current_plan`].
    pub fn current_plan(&self, session: SessionId) -> Result<CurrentPlan, StoreError> {
        self.read(|r| r.current_plan(session))
    }
    /// See [`Reader::plan_history`].
    pub fn plan_history(&self, session: SessionId) -> Result<Vec<PlanStep>, StoreError> {
        self.read(|r| r.plan_history(session))
    }
    /// See [`Reader::plan_in_flight`].
    pub fn plan_in_flight(&self, session: SessionId) -> Result<bool, StoreError> {
        self.read(|r| r.plan_in_flight(session))
    }
    /// See [`Reader::has_plan`].
    pub fn has_plan(&self, session: SessionId) -> Result<bool, StoreError> {
        self.read(|r| r.has_plan(session))
    }
    /// Facts of the session's current generation (I6).
    pub fn current_generation_facts(
        &self,
        session: SessionId,
    ) -> Result<GenerationFacts, StoreError> {
        self.read(|r| {
            let (g, _) = r.current_generation(session)?;
            r.generation_facts(session, g)
        })
    }
}
