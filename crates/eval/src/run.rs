//! Drives one manifest against the real agent: a store on disk in a temp dir, the local
//! executor, and either the scripted model server (offline) or the model configured in the
//! environment (live).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::{Agent, AgentConfig, AgentParts, setup};
use nomos_exec::{Executor, ExecutorConfig};
use nomos_llm::{OpenAiConfig, OpenAiProvider};
use nomos_mock_llm::MockServer;
use nomos_store::{
    Clock, DB_FILE_NAME, ExecStatus, KnowledgeKind, ManualClock, NewKnowledge, SessionId, Store,
};

use crate::EvalError;
use crate::checks::{CallTrace, ExecTrace, Trace, TurnTrace, Verdict};
use crate::manifest::{Manifest, Only, Step, StopWhen, Turn};
use crate::sandbox;

/// Which model answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The manifest's script, served by nomos-mock-llm over real HTTP/SSE.
    Offline,
    /// The provider configured in the environment; the script is ignored.
    Live,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Offline => "offline",
            Mode::Live => "live",
        }
    }
}

/// One run of one manifest.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Each assertion (manifest order, then the implicit ones) with its verdict.
    pub verdicts: Vec<(String, Verdict)>,
    pub tool_calls: BTreeMap<String, usize>,
}

impl RunOutcome {
    pub fn passed(&self) -> bool {
        self.verdicts.iter().all(|(_, v)| v.passed)
    }
}

/// Label of the implicit check that every operator action ran and settled.
pub const ACTIONS_CHECK: &str = "operator actions ran";
/// Label of the implicit offline check that the scripted model saw what it expected.
pub const SCRIPT_CHECK: &str = "scripted model expectations";

fn agent_config(m: &Manifest, mode: Mode) -> AgentConfig {
    let mut c = match mode {
        Mode::Offline => AgentConfig::for_scripted_model(),
        Mode::Live => AgentConfig {
            command_timeout: Duration::from_secs(120),
            ..AgentConfig::default()
        },
    };
    let o = &m.agent;
    if let Some(ms) = o.run_wait_ms {
        c.run_wait = Duration::from_millis(ms);
    }
    if let Some(ms) = o.idle_after_ms {
        c.idle_after = Duration::from_millis(ms);
    }
    if let Some(ms) = o.close_after_nudge_ms {
        c.close_after_nudge = Duration::from_millis(ms);
    }
    if let Some(ms) = o.gate_wait_ms {
        c.gate_wait = Duration::from_millis(ms);
    }
    c
}

fn seed_fixtures(m: &Manifest, store: &Store) -> Result<(), EvalError> {
    for e in &m.fixtures.entities {
        store.update_entity_attributes(None, &e.slug, &e.attributes)?;
    }
    for k in &m.fixtures.knowledge {
        let kind = KnowledgeKind::parse(&k.kind).ok_or_else(|| EvalError::Invalid {
            manifest: m.name.clone(),
            message: format!("unknown knowledge kind `{}`", k.kind),
        })?;
        store.upsert_knowledge(&NewKnowledge {
            session_id: None,
            kind,
            slug: k.slug.clone(),
            title: k.title.clone(),
            body: k.body.clone(),
            tags: k.tags.clone(),
            about: k.about.clone(),
        })?;
    }
    Ok(())
}

/// Runs the manifest once. An operator action that fails is recorded (and fails the
/// implicit actions check); only set-up failures are errors.
pub async fn run_once(m: &Manifest, mode: Mode) -> Result<RunOutcome, EvalError> {
    run_once_with(m, mode, false).await
}

/// [`run_once`]; with `all_replies_used`, a scripted reply the conversation never asked for
/// fails the script check (a manifest whose model was never reached proves nothing).
pub async fn run_once_with(
    m: &Manifest,
    mode: Mode,
    all_replies_used: bool,
) -> Result<RunOutcome, EvalError> {
    run_once_in(m, mode, all_replies_used, &nomos_llm::ProcessEnv).await
}

/// [`run_once_with`], reading the live model's settings from `env` instead of the process
/// environment.
pub async fn run_once_in(
    m: &Manifest,
    mode: Mode,
    all_replies_used: bool,
    env: &dyn nomos_llm::Env,
) -> Result<RunOutcome, EvalError> {
    let dir = tempfile::tempdir()?;
    let clock = m
        .fixtures
        .clock_ms
        .map(|ms| Arc::new(ManualClock::at_ms(ms)));
    let store = match &clock {
        Some(c) => {
            let c: Arc<dyn Clock> = c.clone();
            Store::open_with_clock(&dir.path().join(DB_FILE_NAME), c)?
        }
        None => Store::open_in_dir(dir.path())?,
    };
    seed_fixtures(m, &store)?;
    let config = agent_config(m, mode);
    let (agent, server) = match mode {
        Mode::Offline => {
            let server = MockServer::start(m.script.clone())
                .await
                .map_err(EvalError::MockServer)?;
            let provider = OpenAiProvider::new(OpenAiConfig::new(server.base_url(), "mock"), None)?;
            let executor = Executor::new(ExecutorConfig::new(dir.path().join("exec")))?;
            let agent = Agent::new(AgentParts {
                store: store.clone(),
                provider: Arc::new(provider),
                executor: Arc::new(executor),
                // This workstation, plus the fixture's local stand-ins: evals run real
                // read-only commands here.
                inventory: m.fixtures.inventory()?,
                config,
            });
            (agent, Some(server))
        }
        Mode::Live => {
            // The model from the environment; every command it runs goes through a
            // throwaway sandbox on this workstation's targets only (no ssh import).
            let provider =
                setup::provider_from_settings(&setup::RuntimeSettings::default(), env, None)
                    .await?;
            let scratch = dir.path().join("sandbox-home");
            std::fs::create_dir_all(&scratch)?;
            let mut exec_config = ExecutorConfig::new(dir.path().join("exec"));
            exec_config.local_wrapper = sandbox::wrapper(&scratch)?;
            exec_config.local_home = Some(scratch);
            let agent = Agent::new(AgentParts {
                store: store.clone(),
                provider,
                executor: Arc::new(Executor::new(exec_config)?),
                inventory: m.fixtures.inventory()?,
                config,
            });
            (agent, None)
        }
    };
    let settle_timeout = match mode {
        Mode::Offline => Duration::from_secs(30),
        Mode::Live => Duration::from_secs(300),
    };

    let mut events = agent.subscribe();
    // Sessions by manifest name; the first one started is the one the assertions read.
    let mut sessions: BTreeMap<String, SessionId> = BTreeMap::new();
    let mut main: Option<SessionId> = None;
    let mut turns: Vec<TurnTrace> = Vec::with_capacity(m.turns.len());
    // Actions that did not wait: their outcome is filed under their turn at the end.
    let mut in_flight = Vec::new();
    // The newest message and execution before each turn: what comes after belongs to it.
    let mut message_marks = Vec::with_capacity(m.turns.len());
    let mut exec_marks = Vec::with_capacity(m.turns.len());
    for (i, turn) in m.turns.iter().enumerate() {
        let (msg_mark, exec_mark) = marks(&store, main)?;
        message_marks.push(msg_mark);
        exec_marks.push(exec_mark);
        let name = turn.session_name().to_owned();
        let current = sessions.get(&name).copied();
        let action = perform(
            agent.clone(),
            current,
            turn.action.clone(),
            clock.clone(),
            settle_timeout,
            turn.nowait,
        );
        let mut error = None;
        let mut error_code = None;
        if turn.nowait && current.is_some() && !matches!(turn.action, Turn::Say { .. }) {
            in_flight.push((i, tokio::spawn(action)));
        } else {
            // A message is accepted (and its session known) before we go on, even with
            // `nowait`: its turn then runs detached.
            match action.await {
                Ok(s) => {
                    if let Some(s) = s {
                        sessions.insert(name, s);
                        main.get_or_insert(s);
                    }
                }
                Err(e) => (error, error_code) = judge(Err(e), turn.expect_error.as_deref()),
            }
            if error.is_none() && error_code.is_none() {
                (error, error_code) = judge(Ok(None), turn.expect_error.as_deref());
            }
        }
        if !turn.nowait {
            for &s in sessions.values() {
                if let Err(e) = settle(&agent, s, settle_timeout, i + 1, &turn.action).await {
                    error.get_or_insert(e.to_string());
                }
            }
        }
        let mut turn_events = Vec::new();
        while let Ok(e) = events.try_recv() {
            turn_events.push(e);
        }
        turns.push(after_turn(
            &store,
            main,
            turn,
            turn_events,
            error,
            error_code,
        )?);
    }
    // What did not wait is awaited now; then everything settles once more.
    for (i, handle) in in_flight {
        let outcome = handle
            .await
            .unwrap_or_else(|e| Err(ActionError::from(format!("the action panicked: {e}"))));
        let (error, code) = judge(outcome, m.turns[i].expect_error.as_deref());
        turns[i].error = error;
        turns[i].error_code = code;
    }
    let last = m.turns.len();
    for &s in sessions.values() {
        if let Err(e) = settle(&agent, s, settle_timeout, last, &m.turns[last - 1].action).await
            && let Some(t) = turns.last_mut()
        {
            t.error.get_or_insert(e.to_string());
        }
    }
    if let Some(t) = turns.last_mut() {
        while let Ok(e) = events.try_recv() {
            t.events.push(e);
        }
    }
    let overlaps = overlapping_turns(&store, &sessions, &turns)?;
    let session = main.ok_or_else(|| EvalError::Invalid {
        manifest: m.name.clone(),
        message: "no session was started".into(),
    })?;

    let turn_of =
        |marks: &[i64], id: i64| marks.iter().rposition(|&mark| mark < id).unwrap_or(0) + 1;
    let messages = store.transcript(session)?.messages;
    let calls: Vec<CallTrace> = messages
        .iter()
        .flat_map(|msg| msg.tool_calls.iter())
        .map(|c| CallTrace {
            turn: turn_of(&message_marks, c.message_id),
            name: c.name.clone(),
            result: c.result.clone().unwrap_or_default(),
            is_error: c.is_error,
        })
        .collect();
    let executions = store
        .executions(session)?
        .into_iter()
        .map(|e| ExecTrace {
            turn: turn_of(&exec_marks, e.id),
            id: e.id,
            command: e.command.clone(),
            canonical: e.canonical.clone(),
            target: e.target.clone(),
            status: e.status.as_str().to_owned(),
            started: e.started_at_ms.is_some(),
            finished: e.status == ExecStatus::Finished,
            continued: e.continued_at_ms.is_some(),
        })
        .collect();
    let mut generations: Vec<i64> = store
        .plan_history(session)?
        .iter()
        .map(|s| s.generation)
        .collect();
    generations.sort_unstable();
    generations.dedup();
    let mut tool_calls = BTreeMap::new();
    for c in &calls {
        *tool_calls.entry(c.name.clone()).or_insert(0) += 1;
    }
    let trace = Trace {
        turns,
        calls,
        executions,
        messages,
        session: store.get_session(session)?,
        generations: generations.len(),
        overlaps,
    };

    let mut verdicts: Vec<(String, Verdict)> = m
        .checks
        .iter()
        .filter(|s| {
            matches!(
                (s.only, mode),
                (None, _) | (Some(Only::Offline), Mode::Offline) | (Some(Only::Live), Mode::Live)
            )
        })
        .map(|s| (s.check.label(), s.check.evaluate(&trace)))
        .collect();
    let action_errors: Vec<String> = trace
        .turns
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            t.error
                .as_ref()
                .map(|e| format!("turn {} ({}): {e}", i + 1, t.label))
        })
        .collect();
    verdicts.push((
        ACTIONS_CHECK.to_owned(),
        Verdict {
            passed: action_errors.is_empty(),
            reason: if action_errors.is_empty() {
                format!("{} action(s)", trace.turns.len())
            } else {
                action_errors.join("; ")
            },
        },
    ));
    if let Some(server) = server {
        let failures = server.failures();
        let unused = server.remaining();
        let unused_fails = all_replies_used && unused > 0;
        verdicts.push((
            SCRIPT_CHECK.to_owned(),
            Verdict {
                passed: failures.is_empty() && !unused_fails,
                reason: if failures.is_empty() {
                    format!(
                        "{} request(s), {unused} reply(ies) left unused{}",
                        server.request_count(),
                        if unused_fails {
                            " (every reply must be used)"
                        } else {
                            ""
                        }
                    )
                } else {
                    failures
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                },
            },
        ));
        server.shutdown().await;
    }
    Ok(RunOutcome {
        verdicts,
        tool_calls,
    })
}

/// The verdict on an action's outcome: (error for the actions check, the error code). An
/// action expected to be refused passes only when it is refused with that code.
fn judge(
    outcome: Result<Option<SessionId>, ActionError>,
    expect: Option<&str>,
) -> (Option<String>, Option<String>) {
    match (outcome, expect) {
        (Ok(_), None) => (None, None),
        (Ok(_), Some(want)) => (
            Some(format!(
                "expected a refusal with {want}, but the action succeeded"
            )),
            None,
        ),
        (Err(e), Some(want)) if e.code == want => (None, Some(e.code)),
        (Err(e), Some(want)) => (
            Some(format!("expected {want}, got [{}] {}", e.code, e.message)),
            Some(e.code),
        ),
        (Err(e), None) => (Some(format!("[{}] {}", e.code, e.message)), Some(e.code)),
    }
}

/// The state of the main session once a turn settled.
fn after_turn(
    store: &Store,
    main: Option<SessionId>,
    turn: &Step,
    events: Vec<nomos_protocol::AgentEvent>,
    error: Option<String>,
    error_code: Option<String>,
) -> Result<TurnTrace, EvalError> {
    let (status_after, window_open_after, executions_after) = match main {
        Some(s) => (
            store.get_session(s)?.status.as_str().to_owned(),
            store.active_approval_window(s)?.is_some(),
            store
                .executions(s)?
                .iter()
                .map(|e| (e.id, e.status.as_str().to_owned()))
                .collect(),
        ),
        None => ("none".to_owned(), false, Vec::new()),
    };
    Ok(TurnTrace {
        label: match &turn.session {
            Some(name) => format!("{} [{name}]", turn.action.label()),
            None => turn.action.label(),
        },
        events,
        status_after,
        error,
        error_code,
        window_open_after,
        executions_after,
    })
}

/// Two turns of one session that overlapped, from two sources: the event stream (a turn
/// started before the previous one of that session was done) and the store (an assistant
/// message created before the previous one was finished).
fn overlapping_turns(
    store: &Store,
    sessions: &BTreeMap<String, SessionId>,
    turns: &[TurnTrace],
) -> Result<Vec<String>, EvalError> {
    let mut found = overlaps_in_events(turns);
    for (name, &s) in sessions {
        let assistant: Vec<(i64, i64, i64)> = store
            .transcript(s)?
            .messages
            .iter()
            .filter(|m| m.role == nomos_store::Role::Assistant)
            .map(|m| (m.created_at_ms, m.updated_at_ms, m.id))
            .collect();
        found.extend(overlaps_in_messages(name, assistant));
    }
    Ok(found)
}

/// A turn of a session that started while another turn of it had not sent its `done`.
fn overlaps_in_events(turns: &[TurnTrace]) -> Vec<String> {
    use nomos_protocol::AgentEvent;
    let mut found = Vec::new();
    let mut open: BTreeMap<i64, usize> = BTreeMap::new();
    for (i, t) in turns.iter().enumerate() {
        for e in &t.events {
            match e {
                AgentEvent::TurnStarted { session_id, .. } => {
                    let n = open.entry(*session_id).or_insert(0);
                    *n += 1;
                    if *n > 1 {
                        found.push(format!(
                            "session {session_id}: a turn started in action {} while another ran",
                            i + 1
                        ));
                    }
                }
                AgentEvent::Done { session_id, .. } => {
                    if let Some(n) = open.get_mut(session_id) {
                        *n = n.saturating_sub(1);
                    }
                }
                _ => {}
            }
        }
    }
    found
}

/// Assistant messages (created, last updated, id) of one session: one model iteration
/// each, so one that began before the previous one ended means two turns ran at once.
fn overlaps_in_messages(name: &str, mut assistant: Vec<(i64, i64, i64)>) -> Vec<String> {
    assistant.sort_unstable();
    assistant
        .windows(2)
        .filter_map(|pair| {
            let ((_, first_end, a), (second_start, _, b)) = (pair[0], pair[1]);
            (second_start < first_end).then(|| {
                format!(
                    "session `{name}`: message {b} began at {second_start} ms, before message {a} ended at {first_end} ms"
                )
            })
        })
        .collect()
}

fn marks(store: &Store, session: Option<SessionId>) -> Result<(i64, i64), EvalError> {
    let Some(s) = session else {
        return Ok((0, 0));
    };
    let msg = store
        .transcript(s)?
        .messages
        .last()
        .map(|m| m.id)
        .unwrap_or(0);
    let exec = store.executions(s)?.iter().map(|e| e.id).max().unwrap_or(0);
    Ok((msg, exec))
}

/// Why an operator action failed.
struct ActionError {
    code: String,
    message: String,
}

impl From<nomos_agent::AgentError> for ActionError {
    fn from(e: nomos_agent::AgentError) -> Self {
        Self {
            code: e.code().to_owned(),
            message: e.to_string(),
        }
    }
}

impl From<String> for ActionError {
    /// A failure of the harness itself (no session yet, no such execution).
    fn from(message: String) -> Self {
        Self {
            code: "eval.action".to_owned(),
            message,
        }
    }
}

impl From<&str> for ActionError {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

/// Whether `event` of `session` is the moment a `stop_when` waits for.
fn is_stop_moment(when: StopWhen, session: SessionId, event: &nomos_protocol::AgentEvent) -> bool {
    use nomos_protocol::{AgentEvent, ExecStatus as WireStatus};
    if event.session_id() != session {
        return false;
    }
    match (when, event) {
        (StopWhen::ExecutionRunning, AgentEvent::Execution { execution, .. }) => {
            execution.status == WireStatus::Running
        }
        (StopWhen::ApprovalRequested, AgentEvent::ApprovalRequested { .. }) => true,
        (StopWhen::Text, AgentEvent::TextDelta { delta, .. }) => !delta.is_empty(),
        _ => false,
    }
}

/// Performs one operator action on `session` (None: the action starts one). Returns the
/// session a message went to. With `nowait`, a message is only accepted and its turn runs
/// detached.
async fn perform(
    agent: Agent,
    session: Option<SessionId>,
    turn: Turn,
    clock: Option<Arc<ManualClock>>,
    timeout: Duration,
    nowait: bool,
) -> Result<Option<SessionId>, ActionError> {
    if let Turn::Say {
        text,
        stop_after_ms,
        stop_when,
    } = &turn
    {
        return match (stop_after_ms, stop_when, session) {
            (Some(ms), _, Some(s)) => {
                let a = agent.clone();
                let text = text.clone();
                let send = tokio::spawn(async move { a.send(Some(s), &text).await });
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                agent.stop(s)?;
                send.await.map_err(|e| e.to_string())??;
                Ok(Some(s))
            }
            (Some(_), _, None) => Err("stop_after_ms needs a session (not on turn 1)".into()),
            (None, Some(when), s) => {
                // Subscribe first, so the moment cannot pass before we listen.
                let mut events = agent.subscribe();
                let s = agent.submit(s, text).await?;
                let deadline = tokio::time::Instant::now() + timeout;
                loop {
                    match tokio::time::timeout_at(deadline, events.recv()).await {
                        Ok(Some(e)) if is_stop_moment(*when, s, &e) => break,
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => {
                            return Err(format!("stop_when {when:?}: the moment never came").into());
                        }
                    }
                }
                agent.stop(s)?;
                Ok(Some(s))
            }
            (None, None, s) if nowait => Ok(Some(agent.submit(s, text).await?)),
            (None, None, s) => Ok(Some(agent.send(s, text).await?)),
        };
    }
    let s = session.ok_or("no session yet")?;
    let pick = |nth: Option<usize>| -> Result<i64, ActionError> {
        let all = agent
            .store()
            .executions(s)
            .map_err(|e| ActionError::from(e.to_string()))?;
        match nth {
            Some(n) => all
                .get(n - 1)
                .map(|e| e.id)
                .ok_or_else(|| format!("no execution #{n} (the session has {})", all.len()).into()),
            None => all
                .iter()
                .find(|e| e.status == ExecStatus::AwaitingApproval)
                .map(|e| e.id)
                .ok_or_else(|| "no execution awaits approval".into()),
        }
    };
    match turn {
        Turn::Say { .. } => {}
        Turn::ApprovePlan => {
            // The operator approves the generation on screen: the current one.
            let generation = agent
                .store()
                .current_plan(s)
                .map_err(|e| e.to_string())?
                .generation;
            agent.approve_plan(s, generation).await?
        }
        Turn::ApproveExecution { nth } => agent.approve_execution(pick(nth)?).await?,
        Turn::DenyExecution { nth, reason } => {
            agent.deny_execution(pick(nth)?, reason.as_deref()).await?
        }
        Turn::Stop => {
            agent.stop(s)?;
        }
        Turn::Reconnect => {
            agent.reconnect(s).await?;
        }
        Turn::WaitMs(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        Turn::AdvanceClockMs(ms) => {
            // Through set_ms, so a manifest may also move the clock back (a negative step).
            let clock = clock.ok_or("no manual clock")?;
            clock.set_ms(clock.now_ms().saturating_add(ms));
        }
        Turn::SweepIdle => {
            agent.sweep_idle().await?;
        }
        Turn::RunContinuations => {
            agent.continue_finished().await?;
        }
    }
    Ok(Some(s))
}

/// Waits until nothing happens in the session: no turn, no running command, no result
/// waiting. Meanwhile it ticks the continuation worker as the app's worker would (every
/// 500 ms), so background results are delivered without a real worker loop.
async fn settle(
    agent: &Agent,
    session: SessionId,
    timeout: Duration,
    turn: usize,
    action: &Turn,
) -> Result<(), EvalError> {
    let start = Instant::now();
    let mut last_tick = Instant::now();
    let mut calm = 0;
    loop {
        if agent.is_settled(session)? {
            calm += 1;
            // Twice in a row: a spawned continuation may be between two states.
            if calm >= 2 {
                return Ok(());
            }
        } else {
            calm = 0;
        }
        if last_tick.elapsed() >= Duration::from_millis(500) {
            agent.continue_finished().await?;
            last_tick = Instant::now();
        }
        if start.elapsed() > timeout {
            return Err(EvalError::Timeout {
                turn,
                action: action.label(),
                secs: timeout.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

#[cfg(test)]
mod tests {
    use nomos_protocol::AgentEvent;

    use super::*;

    fn turn(events: Vec<AgentEvent>) -> TurnTrace {
        TurnTrace {
            label: "t".into(),
            events,
            status_after: "executing".into(),
            error: None,
            error_code: None,
            window_open_after: false,
            executions_after: Vec::new(),
        }
    }

    fn started(s: i64) -> AgentEvent {
        AgentEvent::TurnStarted {
            session_id: s,
            auto: false,
        }
    }

    fn done(s: i64) -> AgentEvent {
        AgentEvent::Done {
            session_id: s,
            error: false,
        }
    }

    /// The overlap check sees two turns of one session at once, in events and in the
    /// store, and not two sessions side by side or one turn after the other.
    #[test]
    fn overlapping_turns_are_found_and_side_by_side_sessions_are_not() {
        let fine = [
            turn(vec![started(1), started(2), done(2), done(1)]),
            turn(vec![started(1), done(1)]),
        ];
        assert!(overlaps_in_events(&fine).is_empty());
        let across_actions = [turn(vec![started(1)]), turn(vec![started(1), done(1)])];
        assert_eq!(overlaps_in_events(&across_actions).len(), 1);
        assert!(
            overlaps_in_messages("main", vec![(0, 10, 1), (10, 20, 2), (25, 30, 3)]).is_empty()
        );
        let hits = overlaps_in_messages("main", vec![(15, 30, 2), (0, 20, 1)]);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].contains("message 2"), "{hits:?}");
    }
}
