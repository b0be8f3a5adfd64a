use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nomos_store::{ManualClock, Store};

pub const T0: i64 = 1_764_000_000_000;

pub struct TestStore {
    pub store: Store,
    pub clock: Arc<ManualClock>,
    pub dir: tempfile::TempDir,
}

impl TestStore {
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("nomos.db")
    }
}

pub fn store() -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::at_ms(T0));
    let store = Store::open_in_dir(dir.path())
        .unwrap()
        .with_clock(clock.clone());
    TestStore { store, clock, dir }
}

/// Deterministic pseudo-random bytes (xorshift64*).
pub fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        out.extend_from_slice(&seed.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

use nomos_store::{
    CommandClass, ExecStatus, Execution, ExecutionResult, NewExecution, NewPlanStep, NewSession,
    ProposePlanOutcome, ProposedPlan, Refusal, SessionId, StepStatus, UpdateStepOutcome,
};

pub fn new_session(t: &TestStore, title: &str) -> SessionId {
    t.store
        .create_session(NewSession {
            title: title.into(),
            goal: None,
        })
        .unwrap()
        .id
}

pub fn steps(titles: &[&str]) -> Vec<NewPlanStep> {
    titles.iter().map(|t| NewPlanStep::new(*t)).collect()
}

pub fn propose(t: &TestStore, sid: SessionId, titles: &[&str]) -> ProposedPlan {
    match t.store.propose_plan(sid, &steps(titles)).unwrap() {
        ProposePlanOutcome::Proposed(p) => p,
        ProposePlanOutcome::Refused(r) => panic!("refused: {r:?}"),
    }
}

pub fn refused_plan(t: &TestStore, sid: SessionId, titles: &[&str]) -> Refusal {
    match t.store.propose_plan(sid, &steps(titles)).unwrap() {
        ProposePlanOutcome::Refused(r) => r,
        ProposePlanOutcome::Proposed(p) => panic!("accepted: {p:?}"),
    }
}

pub fn step(t: &TestStore, sid: SessionId, seq: i64, status: StepStatus) -> nomos_store::PlanStep {
    match t.store.update_plan_step(sid, seq, status, None).unwrap() {
        UpdateStepOutcome::Updated(s) => s,
        UpdateStepOutcome::Refused(r) => panic!("refused: {r:?}"),
    }
}

pub fn step_refused(t: &TestStore, sid: SessionId, seq: i64, status: StepStatus) -> Refusal {
    match t.store.update_plan_step(sid, seq, status, None).unwrap() {
        UpdateStepOutcome::Refused(r) => r,
        UpdateStepOutcome::Updated(s) => panic!("accepted: {s:?}"),
    }
}

pub fn read_only(sid: SessionId, target: &str, cmd: &str) -> NewExecution {
    NewExecution {
        session_id: sid,
        step_seq: None,
        call_id: None,
        target: target.into(),
        command: cmd.into(),
        canonical: cmd.into(),
        class: CommandClass::ReadOnly,
        decision_reason: "read-only: test".into(),
        decision: None,
        approval: None,
    }
}

pub fn finished(stdout: &str) -> ExecutionResult {
    ExecutionResult {
        status: ExecStatus::Finished,
        exit_code: Some(0),
        stdout: stdout.as_bytes().to_vec(),
        stderr: Vec::new(),
        error: None,
    }
}

/// A read-only `run` from creation to `finished`.
pub fn run_to_end(t: &TestStore, sid: SessionId, target: &str, cmd: &str) -> Execution {
    let e = t
        .store
        .create_execution(&read_only(sid, target, cmd))
        .unwrap();
    assert_eq!(e.status, ExecStatus::Queued);
    t.store.start_execution(e.id).unwrap();
    t.clock.advance(Duration::from_millis(250));
    t.store.finish_execution(e.id, &finished("ok\n")).unwrap()
}
