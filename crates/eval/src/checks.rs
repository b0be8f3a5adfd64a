//! Assertions on a finished conversation: its tool-call trace, events and final state.

use nomos_protocol::AgentEvent;
use nomos_store::{Message, Role, Session};
use serde_json::Value;

/// What one run recorded, in the order things happened.
#[derive(Debug, Clone)]
pub struct Trace {
    pub turns: Vec<TurnTrace>,
    /// Every tool call of the session, in call order.
    pub calls: Vec<CallTrace>,
    pub executions: Vec<ExecTrace>,
    pub messages: Vec<Message>,
    pub session: Session,
    /// Distinct plan generations in the plan history.
    pub generations: usize,
}

/// One operator action and what it caused.
#[derive(Debug, Clone)]
pub struct TurnTrace {
    pub label: String,
    pub events: Vec<AgentEvent>,
    /// Session status once the action settled.
    pub status_after: String,
    /// The action itself failed (busy, nothing to approve …).
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct CallTrace {
    /// 1-based turn the call happened in.
    pub turn: usize,
    pub name: String,
    pub result: String,
    pub is_error: bool,
}

impl CallTrace {
    /// A gate answered the call instead of doing it: a refusal, a result answered from the
    /// ledger (I18), a success downgraded (I6), a command held for approval (I7).
    pub fn gated(&self) -> bool {
        let r = self.result.trim_start();
        (self.is_error && r.starts_with("Refused"))
            || r.starts_with("Not re-run")
            || r.starts_with("Completed as partial")
            || (r.starts_with("Execution ") && r.contains("waits for the operator's approval"))
    }

    /// The tool did what was asked.
    pub fn accepted(&self) -> bool {
        !self.is_error && !self.gated()
    }
}

#[derive(Debug, Clone)]
pub struct ExecTrace {
    pub turn: usize,
    pub id: i64,
    pub started: bool,
    pub finished: bool,
    pub continued: bool,
}

/// One assertion kind with its arguments. `turn: None` means the whole conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    ProposesPlan {
        turn: Option<usize>,
    },
    ProposesPlanOnce {
        turn: Option<usize>,
    },
    NoProposePlan {
        turn: Option<usize>,
    },
    PlanBeforeRun,
    PlanGenerations(usize),
    ReopensSession {
        turn: Option<usize>,
    },
    Completes {
        outcome: Option<String>,
    },
    NoDuplicateComplete,
    WritesBack {
        turn: Option<usize>,
    },
    NoRun {
        turn: Option<usize>,
    },
    MaxRunCalls {
        max: usize,
        turn: Option<usize>,
    },
    MaxExecutions {
        max: usize,
        turn: Option<usize>,
    },
    CallsBefore {
        first: String,
        then: String,
    },
    ToolRefused {
        tool: String,
        turn: Option<usize>,
        contains: Option<String>,
    },
    NoEmptyBubble,
    FinalStatus(String),
    StatusAfter {
        turn: usize,
        status: String,
    },
    TurnOk {
        turn: usize,
    },
    NoTurn {
        turn: usize,
    },
    OneDonePerTurn,
    ResultsDelivered,
    CompletionNudges(i64),
}

/// The outcome of one check on one run.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub passed: bool,
    pub reason: String,
}

fn verdict(passed: bool, reason: impl Into<String>) -> Verdict {
    Verdict {
        passed,
        reason: reason.into(),
    }
}

const STATUSES: &[&str] = &[
    "idle",
    "planning",
    "executing",
    "done",
    "partial",
    "failed",
    "abandoned",
];

fn opt_turn(arg: &Value) -> Result<Option<usize>, String> {
    match arg {
        Value::Null | Value::Bool(true) => Ok(None),
        Value::Object(m) => {
            if let Some(extra) = m.keys().find(|k| *k != "turn") {
                return Err(format!("unknown argument `{extra}` (only `turn`)"));
            }
            m.get("turn")
                .map(|t| t.as_u64().map(|t| t as usize).ok_or("`turn` is a number"))
                .transpose()
                .map_err(str::to_owned)
        }
        _ => Err("takes no argument or {turn: N}".into()),
    }
}

fn req_turn(arg: &Value) -> Result<usize, String> {
    arg.as_u64()
        .or_else(|| arg.get("turn").and_then(Value::as_u64))
        .map(|t| t as usize)
        .ok_or_else(|| "needs a turn: N or {turn: N}".to_owned())
}

/// `N` or `{max: N, turn: T}`.
fn max_and_turn(arg: &Value) -> Result<(usize, Option<usize>), String> {
    if let Some(n) = arg.as_u64() {
        return Ok((n as usize, None));
    }
    let max = arg
        .get("max")
        .and_then(Value::as_u64)
        .ok_or("needs N or {max: N, turn: T}")?;
    let turn = arg.get("turn").and_then(Value::as_u64).map(|t| t as usize);
    Ok((max as usize, turn))
}

fn string_arg(arg: &Value, key: &str) -> Option<String> {
    arg.as_str()
        .map(str::to_owned)
        .or_else(|| arg.get(key).and_then(Value::as_str).map(str::to_owned))
}

impl Check {
    pub fn parse(name: &str, arg: &Value) -> Result<Self, String> {
        let status = |s: String| {
            if STATUSES.contains(&s.as_str()) {
                Ok(s)
            } else {
                Err(format!(
                    "unknown status `{s}`: one of {}",
                    STATUSES.join(", ")
                ))
            }
        };
        Ok(match name {
            "proposes_plan" => Check::ProposesPlan {
                turn: opt_turn(arg)?,
            },
            "proposes_plan_once" => Check::ProposesPlanOnce {
                turn: opt_turn(arg)?,
            },
            "no_propose_plan" => Check::NoProposePlan {
                turn: opt_turn(arg)?,
            },
            "plan_before_run" => Check::PlanBeforeRun,
            "plan_generations" => {
                Check::PlanGenerations(arg.as_u64().ok_or("plan_generations: N")? as usize)
            }
            "reopens_session" => Check::ReopensSession {
                turn: opt_turn(arg)?,
            },
            "completes" => Check::Completes {
                outcome: match arg {
                    Value::Null | Value::Bool(true) => None,
                    _ => Some(
                        string_arg(arg, "outcome")
                            .ok_or("completes: takes nothing, OUTCOME or {outcome: X}")?,
                    ),
                },
            },
            "no_duplicate_complete" => Check::NoDuplicateComplete,
            "writes_back" => Check::WritesBack {
                turn: opt_turn(arg)?,
            },
            "no_run" => Check::NoRun {
                turn: opt_turn(arg)?,
            },
            "max_run_calls" => {
                let (max, turn) = max_and_turn(arg)?;
                Check::MaxRunCalls { max, turn }
            }
            "max_executions" => {
                let (max, turn) = max_and_turn(arg)?;
                Check::MaxExecutions { max, turn }
            }
            "calls_before" => Check::CallsBefore {
                first: string_arg(arg, "first").ok_or("calls_before: {first: A, then: B}")?,
                then: arg
                    .get("then")
                    .and_then(Value::as_str)
                    .ok_or("calls_before: {first: A, then: B}")?
                    .to_owned(),
            },
            "tool_refused" => Check::ToolRefused {
                tool: string_arg(arg, "tool").ok_or("tool_refused: TOOL or {tool: X, …}")?,
                turn: arg.get("turn").and_then(Value::as_u64).map(|t| t as usize),
                contains: arg
                    .get("contains")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
            "no_empty_bubble" => Check::NoEmptyBubble,
            "final_status" => Check::FinalStatus(status(
                string_arg(arg, "status").ok_or("final_status: STATUS")?,
            )?),
            "status_after" => Check::StatusAfter {
                turn: req_turn(arg)?,
                status: status(
                    arg.get("status")
                        .and_then(Value::as_str)
                        .ok_or("status_after: {turn: N, status: S}")?
                        .to_owned(),
                )?,
            },
            "turn_ok" => Check::TurnOk {
                turn: req_turn(arg)?,
            },
            "no_turn" => Check::NoTurn {
                turn: req_turn(arg)?,
            },
            "one_done_per_turn" => Check::OneDonePerTurn,
            "results_delivered" => Check::ResultsDelivered,
            "completion_nudges" => {
                Check::CompletionNudges(arg.as_i64().ok_or("completion_nudges: N")?)
            }
            other => return Err(format!("unknown assertion `{other}`")),
        })
    }

    /// The turn the check is scoped to, if any.
    pub fn turn(&self) -> Option<usize> {
        match self {
            Check::ProposesPlan { turn }
            | Check::ProposesPlanOnce { turn }
            | Check::NoProposePlan { turn }
            | Check::ReopensSession { turn }
            | Check::WritesBack { turn }
            | Check::NoRun { turn }
            | Check::MaxRunCalls { turn, .. }
            | Check::MaxExecutions { turn, .. }
            | Check::ToolRefused { turn, .. } => *turn,
            Check::StatusAfter { turn, .. } | Check::TurnOk { turn } | Check::NoTurn { turn } => {
                Some(*turn)
            }
            _ => None,
        }
    }

    /// How the check reads in a report.
    pub fn label(&self) -> String {
        let scoped = |name: &str, turn: &Option<usize>| match turn {
            Some(t) => format!("{name} (turn {t})"),
            None => name.to_owned(),
        };
        match self {
            Check::ProposesPlan { turn } => scoped("proposes_plan", turn),
            Check::ProposesPlanOnce { turn } => scoped("proposes_plan_once", turn),
            Check::NoProposePlan { turn } => scoped("no_propose_plan", turn),
            Check::PlanBeforeRun => "plan_before_run".into(),
            Check::PlanGenerations(n) => format!("plan_generations {n}"),
            Check::ReopensSession { turn } => scoped("reopens_session", turn),
            Check::Completes { outcome: None } => "completes".into(),
            Check::Completes { outcome: Some(o) } => format!("completes {o}"),
            Check::NoDuplicateComplete => "no_duplicate_complete".into(),
            Check::WritesBack { turn } => scoped("writes_back", turn),
            Check::NoRun { turn } => scoped("no_run", turn),
            Check::MaxRunCalls { max, turn } => scoped(&format!("max_run_calls {max}"), turn),
            Check::MaxExecutions { max, turn } => scoped(&format!("max_executions {max}"), turn),
            Check::CallsBefore { first, then } => format!("calls_before {first} < {then}"),
            Check::ToolRefused { tool, turn, .. } => scoped(&format!("tool_refused {tool}"), turn),
            Check::NoEmptyBubble => "no_empty_bubble".into(),
            Check::FinalStatus(s) => format!("final_status {s}"),
            Check::StatusAfter { turn, status } => format!("status_after (turn {turn}) {status}"),
            Check::TurnOk { turn } => format!("turn_ok (turn {turn})"),
            Check::NoTurn { turn } => format!("no_turn (turn {turn})"),
            Check::OneDonePerTurn => "one_done_per_turn".into(),
            Check::ResultsDelivered => "results_delivered".into(),
            Check::CompletionNudges(n) => format!("completion_nudges {n}"),
        }
    }

    pub fn evaluate(&self, t: &Trace) -> Verdict {
        let calls = |name: &str, turn: &Option<usize>| -> Vec<&CallTrace> {
            t.calls
                .iter()
                .filter(|c| c.name == name && turn.is_none_or(|n| c.turn == n))
                .collect()
        };
        let accepted = |name: &str, turn: &Option<usize>| {
            calls(name, turn)
                .into_iter()
                .filter(|c| c.accepted())
                .count()
        };
        let started = |turn: &Option<usize>| {
            t.executions
                .iter()
                .filter(|e| e.started && turn.is_none_or(|n| e.turn == n))
                .count()
        };
        match self {
            Check::ProposesPlan { turn } => {
                let n = accepted("propose_plan", turn);
                verdict(n >= 1, format!("{n} accepted propose_plan call(s)"))
            }
            Check::ProposesPlanOnce { turn } => {
                let n = accepted("propose_plan", turn);
                let all = calls("propose_plan", turn).len();
                verdict(
                    n == 1,
                    format!("{n} accepted propose_plan call(s) ({all} made)"),
                )
            }
            Check::NoProposePlan { turn } => {
                let n = calls("propose_plan", turn).len();
                verdict(n == 0, format!("{n} propose_plan call(s)"))
            }
            Check::PlanBeforeRun => {
                let mut planned = false;
                for (i, c) in t.calls.iter().enumerate() {
                    if c.name == "propose_plan" && c.accepted() {
                        planned = true;
                    }
                    if c.name == "run" && !planned && !c.is_error {
                        return verdict(
                            false,
                            format!("call #{} (run, turn {}) ran before any plan", i + 1, c.turn),
                        );
                    }
                }
                verdict(true, "no run went through before a plan")
            }
            Check::PlanGenerations(n) => verdict(
                t.generations == *n,
                format!("{} plan generation(s)", t.generations),
            ),
            Check::ReopensSession { turn } => {
                let n: usize = t
                    .turns
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| turn.is_none_or(|n| i + 1 == n))
                    .map(|(_, tt)| {
                        tt.events
                            .iter()
                            .filter(|e| matches!(e, AgentEvent::TaskReopened { .. }))
                            .count()
                    })
                    .sum();
                verdict(n >= 1, format!("{n} task_reopened event(s)"))
            }
            Check::Completes { outcome } => {
                let s = &t.session;
                let status = s.status.as_str();
                let got = s.outcome.map(|o| o.as_str().to_owned());
                let terminal = matches!(status, "done" | "partial" | "failed");
                let ok = terminal && outcome.as_ref().is_none_or(|o| got.as_deref() == Some(o));
                verdict(
                    ok,
                    format!(
                        "status {status}, outcome {}",
                        got.as_deref().unwrap_or("none")
                    ),
                )
            }
            Check::NoDuplicateComplete => {
                let reopened_in = |turn: usize| {
                    t.turns.get(turn - 1).is_some_and(|tt| {
                        tt.events
                            .iter()
                            .any(|e| matches!(e, AgentEvent::TaskReopened { .. }))
                    })
                };
                let mut terminal = false;
                let mut turn_seen = 0;
                for c in &t.calls {
                    if c.turn != turn_seen {
                        turn_seen = c.turn;
                        if reopened_in(c.turn) {
                            terminal = false;
                        }
                    }
                    if c.name == "complete_task" && !c.is_error {
                        if terminal && !c.result.starts_with("Completed as partial") {
                            return verdict(
                                false,
                                format!(
                                    "complete_task accepted again in turn {} on a finished session",
                                    c.turn
                                ),
                            );
                        }
                        terminal = true;
                    }
                }
                verdict(true, "no completion of an already finished session")
            }
            Check::WritesBack { turn } => {
                let n = accepted("update_entity_attributes", turn)
                    + accepted("create_relationship", turn);
                verdict(
                    n >= 1,
                    format!("{n} update_entity_attributes/create_relationship call(s)"),
                )
            }
            Check::NoRun { turn } => {
                let n = started(turn);
                verdict(n == 0, format!("{n} command(s) executed"))
            }
            Check::MaxRunCalls { max, turn } => {
                let n = calls("run", turn).len();
                verdict(n <= *max, format!("{n} run call(s)"))
            }
            Check::MaxExecutions { max, turn } => {
                let n = started(turn);
                verdict(n <= *max, format!("{n} command(s) executed"))
            }
            Check::CallsBefore { first, then } => {
                let a = t.calls.iter().position(|c| &c.name == first);
                let b = t.calls.iter().position(|c| &c.name == then);
                match (a, b) {
                    (None, _) => verdict(false, format!("{first} was never called")),
                    (Some(_), None) => verdict(true, format!("{first} called, {then} never")),
                    (Some(a), Some(b)) => verdict(
                        a < b,
                        format!(
                            "first {first} at call #{}, first {then} at #{}",
                            a + 1,
                            b + 1
                        ),
                    ),
                }
            }
            Check::ToolRefused {
                tool,
                turn,
                contains,
            } => {
                let all = calls(tool, turn);
                let hit = all.iter().find(|c| {
                    c.gated()
                        && contains
                            .as_ref()
                            .is_none_or(|s| c.result.contains(s.as_str()))
                });
                match hit {
                    Some(c) => verdict(true, first_line(&c.result)),
                    None => verdict(
                        false,
                        format!(
                            "no gated {tool} call among {} ({})",
                            all.len(),
                            all.iter()
                                .map(|c| first_line(&c.result))
                                .collect::<Vec<_>>()
                                .join(" | ")
                        ),
                    ),
                }
            }
            Check::NoEmptyBubble => {
                let bad = t
                    .messages
                    .iter()
                    .filter(|m| {
                        m.role == Role::Assistant
                            && (m.pending || m.is_empty() && m.error.is_none())
                    })
                    .count();
                verdict(bad == 0, format!("{bad} empty assistant message(s)"))
            }
            Check::FinalStatus(s) => {
                let got = t.session.status.as_str();
                verdict(got == s, format!("status {got}"))
            }
            Check::StatusAfter { turn, status } => {
                let got = t
                    .turns
                    .get(turn - 1)
                    .map(|tt| tt.status_after.as_str())
                    .unwrap_or("(turn not run)");
                verdict(got == status, format!("status {got} after turn {turn}"))
            }
            Check::TurnOk { turn } => match t.turns.get(turn - 1) {
                None => verdict(false, "turn not run"),
                Some(tt) => {
                    let dones: Vec<bool> = tt
                        .events
                        .iter()
                        .filter_map(|e| match e {
                            AgentEvent::Done { error, .. } => Some(*error),
                            _ => None,
                        })
                        .collect();
                    let errors: Vec<String> = tt
                        .events
                        .iter()
                        .filter_map(|e| match e {
                            AgentEvent::Error { code, message, .. } => {
                                Some(format!("{code}: {}", first_line(message)))
                            }
                            _ => None,
                        })
                        .collect();
                    let ok = tt.error.is_none() && !dones.is_empty() && dones.iter().all(|e| !e);
                    let reason = match (&tt.error, errors.is_empty()) {
                        (Some(e), _) => e.clone(),
                        (None, false) => errors.join("; "),
                        (None, true) => format!("{} turn(s), no error", dones.len()),
                    };
                    verdict(ok, reason)
                }
            },
            Check::NoTurn { turn } => match t.turns.get(turn - 1) {
                None => verdict(false, "turn not run"),
                Some(tt) => {
                    let n = tt
                        .events
                        .iter()
                        .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
                        .count();
                    verdict(n == 0, format!("{n} model turn(s) started"))
                }
            },
            Check::OneDonePerTurn => {
                for (i, tt) in t.turns.iter().enumerate() {
                    let started = tt
                        .events
                        .iter()
                        .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
                        .count();
                    let done = tt
                        .events
                        .iter()
                        .filter(|e| matches!(e, AgentEvent::Done { .. }))
                        .count();
                    if started != done {
                        return verdict(
                            false,
                            format!("turn {}: {started} started, {done} done", i + 1),
                        );
                    }
                }
                verdict(true, "every model turn ended with one done")
            }
            Check::ResultsDelivered => {
                let finished: Vec<&ExecTrace> =
                    t.executions.iter().filter(|e| e.finished).collect();
                if finished.is_empty() {
                    return verdict(false, "no execution finished");
                }
                for e in &finished {
                    let marker = format!("Execution {} on", e.id);
                    let seen = t.messages.iter().any(|m| {
                        m.text.contains(&marker)
                            || m.tool_calls
                                .iter()
                                .any(|c| c.result.as_deref().is_some_and(|r| r.contains(&marker)))
                    });
                    if !e.continued || !seen {
                        return verdict(
                            false,
                            format!(
                                "execution {} result {} (continued: {})",
                                e.id,
                                if seen {
                                    "reached the model"
                                } else {
                                    "never reached the model"
                                },
                                e.continued
                            ),
                        );
                    }
                }
                verdict(
                    true,
                    format!("{} result(s) reached the model", finished.len()),
                )
            }
            Check::CompletionNudges(n) => {
                let got = t.session.completion_nudges;
                verdict(got == *n, format!("{got} counted nudge(s)"))
            }
        }
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() > 120 {
        let mut out: String = line.chars().take(119).collect();
        out.push('…');
        out
    } else {
        line.to_owned()
    }
}
