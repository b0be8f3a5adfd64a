//! Drives one manifest against the real agent: a store on disk in a temp dir, the local
//! executor, and either the scripted model server (offline) or the model configured in the
//! environment (live).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::{Agent, AgentConfig, AgentParts, setup};
use nomos_exec::{Executor, ExecutorConfig, Inventory};
use nomos_llm::{OpenAiConfig, OpenAiProvider};
use nomos_mock_llm::MockServer;
use nomos_store::{
    Clock, DB_FILE_NAME, ExecStatus, KnowledgeKind, ManualClock, NewKnowledge, SessionId, Store,
};

use crate::EvalError;
use crate::checks::{CallTrace, ExecTrace, Trace, TurnTrace, Verdict};
use crate::manifest::{Manifest, Only, StopWhen, Turn};

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
                // Only this workstation: evals run real read-only commands here.
                inventory: Inventory::with_local(),
                config,
            });
            (agent, Some(server))
        }
        Mode::Live => {
            let agent = setup::assemble_from_settings(
                store.clone(),
                dir.path(),
                &setup::RuntimeSettings::default(),
                &nomos_llm::ProcessEnv,
                None,
                config,
            )
            .await?;
            (agent, None)
        }
    };
    let settle_timeout = match mode {
        Mode::Offline => Duration::from_secs(30),
        Mode::Live => Duration::from_secs(300),
    };

    let mut events = agent.subscribe();
    let mut session: Option<SessionId> = None;
    let mut turns = Vec::with_capacity(m.turns.len());
    // The newest message and execution before each turn: what comes after belongs to it.
    let mut message_marks = Vec::with_capacity(m.turns.len());
    let mut exec_marks = Vec::with_capacity(m.turns.len());
    for (i, turn) in m.turns.iter().enumerate() {
        let (msg_mark, exec_mark) = marks(&store, session)?;
        message_marks.push(msg_mark);
        exec_marks.push(exec_mark);
        let outcome = perform(
            &agent,
            &mut session,
            &turn.action,
            clock.as_deref(),
            settle_timeout,
        )
        .await;
        // An action expected to be refused passes only when it is refused with that code.
        let (mut error, error_code) = match (outcome, &turn.expect_error) {
            (Ok(()), None) => (None, None),
            (Ok(()), Some(want)) => (
                Some(format!(
                    "expected a refusal with {want}, but the action succeeded"
                )),
                None,
            ),
            (Err(e), Some(want)) if &e.code == want => (None, Some(e.code)),
            (Err(e), Some(want)) => (
                Some(format!("expected {want}, got [{}] {}", e.code, e.message)),
                Some(e.code),
            ),
            (Err(e), None) => (Some(format!("[{}] {}", e.code, e.message)), Some(e.code)),
        };
        if let Some(s) = session
            && let Err(e) = settle(&agent, s, settle_timeout, i + 1, &turn.action).await
        {
            error.get_or_insert(e.to_string());
        }
        let mut turn_events = Vec::new();
        while let Ok(e) = events.try_recv() {
            turn_events.push(e);
        }
        let (status_after, window_open_after, executions_after) = match session {
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
        turns.push(TurnTrace {
            label: turn.action.label(),
            events: turn_events,
            status_after,
            error,
            error_code,
            window_open_after,
            executions_after,
        });
    }
    let session = session.ok_or_else(|| EvalError::Invalid {
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

async fn perform(
    agent: &Agent,
    session: &mut Option<SessionId>,
    turn: &Turn,
    clock: Option<&ManualClock>,
    timeout: Duration,
) -> Result<(), ActionError> {
    if let Turn::Say {
        text,
        stop_after_ms,
        stop_when,
    } = turn
    {
        match (stop_after_ms, stop_when, *session) {
            (Some(ms), _, Some(s)) => {
                let a = agent.clone();
                let text = text.clone();
                let send = tokio::spawn(async move { a.send(Some(s), &text).await });
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                agent.stop(s);
                send.await.map_err(|e| e.to_string())??;
            }
            (Some(_), _, None) => {
                return Err("stop_after_ms needs a session (not on turn 1)".into());
            }
            (None, Some(when), s) => {
                // Subscribe first, so the moment cannot pass before we listen.
                let mut events = agent.subscribe();
                let s = agent.submit(s, text).await?;
                *session = Some(s);
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
                agent.stop(s);
            }
            (None, None, s) => *session = Some(agent.send(s, text).await?),
        }
        return Ok(());
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
        Turn::ApproveExecution { nth } => agent.approve_execution(pick(*nth)?).await?,
        Turn::DenyExecution { nth, reason } => {
            agent.deny_execution(pick(*nth)?, reason.as_deref()).await?
        }
        Turn::Stop => {
            agent.stop(s);
        }
        Turn::Reconnect => {
            agent.reconnect(s).await?;
        }
        Turn::WaitMs(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
        Turn::AdvanceClockMs(ms) => {
            // Through set_ms, so a manifest may also move the clock back (a negative step).
            let clock = clock.ok_or("no manual clock")?;
            clock.set_ms(clock.now_ms().saturating_add(*ms));
        }
        Turn::SweepIdle => {
            agent.sweep_idle().await?;
        }
        Turn::RunContinuations => {
            agent.continue_finished().await?;
        }
    }
    Ok(())
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
