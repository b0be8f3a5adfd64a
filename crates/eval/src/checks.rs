//! Assertions on a finished conversation: its tool-call trace, events and final state.

use nomos_protocol::AgentEvent;
use nomos_store::{ExecStatus, Message, Role, Session};
use serde::Deserialize;
use serde::de::DeserializeOwned;
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
    /// Turns of one session that overlapped (any session of the manifest), described.
    pub overlaps: Vec<String>,
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
    /// That failure's error code.
    pub error_code: Option<String>,
    /// An approval window of the session was open once the action settled.
    pub window_open_after: bool,
    /// Every execution of the session once the action settled: (id, status).
    pub executions_after: Vec<(i64, String)>,
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
    /// The command as the model wrote it, and the exact text that was classified.
    pub command: String,
    pub canonical: String,
    pub target: String,
    /// Final status (`finished`, `failed`, `awaiting_approval` …).
    pub status: String,
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
    MinExecutions {
        min: usize,
        turn: Option<usize>,
    },
    /// A command ran (started executing): this exact text, optionally on this target and
    /// with this final status.
    Ran {
        command: String,
        target: Option<String>,
        status: Option<String>,
        turn: Option<usize>,
    },
    /// The turn's action failed, or one of its model turns reported an error, with this code.
    ErrorCode {
        turn: usize,
        code: String,
    },
    /// Counts of any tool's calls (all, or only accepted ones).
    ToolCalls {
        tool: String,
        turn: Option<usize>,
        accepted: bool,
        min: Option<usize>,
        max: Option<usize>,
    },
    /// Exactly one accepted `complete_task` in the turn; without a turn, in every turn that
    /// called it, and at least one overall.
    CompletesOnce {
        turn: Option<usize>,
    },
    /// An approval window is (or is not) open once the turn settled.
    WindowAfter {
        turn: usize,
        open: bool,
    },
    /// The `nth` execution of the session (1-based) has this status once `turn` settled
    /// (default: at the end).
    ExecutionStatus {
        nth: usize,
        status: String,
        turn: Option<usize>,
    },
    /// No turn the system started itself (a continuation or a resume).
    NoAutoTurn {
        turn: Option<usize>,
    },
    /// Two turns of one session never ran at the same time, in any session of the manifest.
    NoOverlappingTurns,
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

/// Reads an assertion's argument map into `T` (which denies unknown fields), so a misspelled
/// key is an error and never a dropped condition.
fn args<T: DeserializeOwned>(name: &str, arg: &Value, form: &str) -> Result<T, String> {
    serde_json::from_value(arg.clone()).map_err(|e| format!("{name}: {e} (written {form})"))
}

/// `{turn: N}`, or nothing for the whole conversation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnOpt {
    turn: Option<usize>,
}

fn opt_turn(name: &str, arg: &Value) -> Result<Option<usize>, String> {
    match arg {
        Value::Null | Value::Bool(true) => Ok(None),
        _ => Ok(args::<TurnOpt>(name, arg, "without argument or {turn: N}")?.turn),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnReq {
    turn: usize,
}

fn req_turn(name: &str, arg: &Value) -> Result<usize, String> {
    match arg.as_u64() {
        Some(t) => Ok(t as usize),
        None => Ok(args::<TurnReq>(name, arg, "N or {turn: N}")?.turn),
    }
}

/// `N` or `{max: N, turn: T}` (or `min`).
fn bound_and_turn(name: &str, arg: &Value, bound: &str) -> Result<(usize, Option<usize>), String> {
    if let Some(n) = arg.as_u64() {
        return Ok((n as usize, None));
    }
    let form = format!("N or {{{bound}: N, turn: T}}");
    let map = arg
        .as_object()
        .ok_or_else(|| format!("{name}: written {form}"))?;
    if let Some(extra) = map.keys().find(|k| *k != bound && *k != "turn") {
        return Err(format!("{name}: unknown field `{extra}` (written {form})"));
    }
    let n = map
        .get(bound)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{name}: `{bound}` is a number (written {form})"))?;
    let turn = match map.get("turn") {
        None => None,
        Some(t) => Some(
            t.as_u64()
                .ok_or_else(|| format!("{name}: `turn` is a number"))? as usize,
        ),
    };
    Ok((n as usize, turn))
}

/// A bare string is the `key` field; a map is `T`.
fn string_or<T: DeserializeOwned>(
    name: &str,
    arg: &Value,
    key: &str,
    form: &str,
) -> Result<T, String> {
    match arg {
        Value::String(s) => args(name, &serde_json::json!({ key: s }), form),
        _ => args(name, arg, form),
    }
}

fn exec_status(s: String) -> Result<String, String> {
    match ExecStatus::parse(&s) {
        Some(_) => Ok(s),
        None => Err(format!(
            "unknown execution status `{s}`: one of queued, awaiting_approval, running, \
             finished, failed, cancelled, timed_out"
        )),
    }
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
        let none = |check: Check| match arg {
            Value::Null | Value::Bool(true) => Ok(check),
            _ => Err(format!("{name} takes no argument")),
        };
        Ok(match name {
            "proposes_plan" => Check::ProposesPlan {
                turn: opt_turn(name, arg)?,
            },
            "proposes_plan_once" => Check::ProposesPlanOnce {
                turn: opt_turn(name, arg)?,
            },
            "no_propose_plan" => Check::NoProposePlan {
                turn: opt_turn(name, arg)?,
            },
            "plan_before_run" => none(Check::PlanBeforeRun)?,
            "plan_generations" => {
                Check::PlanGenerations(arg.as_u64().ok_or("plan_generations: N")? as usize)
            }
            "reopens_session" => Check::ReopensSession {
                turn: opt_turn(name, arg)?,
            },
            "completes" => Check::Completes {
                outcome: match arg {
                    Value::Null | Value::Bool(true) => None,
                    _ => {
                        #[derive(Deserialize)]
                        #[serde(deny_unknown_fields)]
                        struct A {
                            outcome: String,
                        }
                        let a: A = string_or(
                            name,
                            arg,
                            "outcome",
                            "without argument, OUTCOME or {outcome: X}",
                        )?;
                        if !matches!(a.outcome.as_str(), "success" | "partial" | "failed") {
                            return Err(format!(
                                "completes: unknown outcome `{}`: one of success, partial, failed",
                                a.outcome
                            ));
                        }
                        Some(a.outcome)
                    }
                },
            },
            "no_duplicate_complete" => none(Check::NoDuplicateComplete)?,
            "writes_back" => Check::WritesBack {
                turn: opt_turn(name, arg)?,
            },
            "no_run" => Check::NoRun {
                turn: opt_turn(name, arg)?,
            },
            "max_run_calls" => {
                let (max, turn) = bound_and_turn(name, arg, "max")?;
                Check::MaxRunCalls { max, turn }
            }
            "max_executions" => {
                let (max, turn) = bound_and_turn(name, arg, "max")?;
                Check::MaxExecutions { max, turn }
            }
            "min_executions" => {
                let (min, turn) = bound_and_turn(name, arg, "min")?;
                Check::MinExecutions { min, turn }
            }
            "calls_before" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    first: String,
                    then: String,
                }
                let a: A = args(name, arg, "{first: A, then: B}")?;
                Check::CallsBefore {
                    first: a.first,
                    then: a.then,
                }
            }
            "tool_refused" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    tool: String,
                    turn: Option<usize>,
                    contains: Option<String>,
                }
                let a: A = string_or(
                    name,
                    arg,
                    "tool",
                    "TOOL or {tool: X, turn: N, contains: TEXT}",
                )?;
                Check::ToolRefused {
                    tool: a.tool,
                    turn: a.turn,
                    contains: a.contains,
                }
            }
            "no_empty_bubble" => none(Check::NoEmptyBubble)?,
            "final_status" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    status: String,
                }
                let a: A = string_or(name, arg, "status", "STATUS or {status: S}")?;
                Check::FinalStatus(status(a.status)?)
            }
            "status_after" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    turn: usize,
                    status: String,
                }
                let a: A = args(name, arg, "{turn: N, status: S}")?;
                Check::StatusAfter {
                    turn: a.turn,
                    status: status(a.status)?,
                }
            }
            "turn_ok" => Check::TurnOk {
                turn: req_turn(name, arg)?,
            },
            "no_turn" => Check::NoTurn {
                turn: req_turn(name, arg)?,
            },
            "one_done_per_turn" => none(Check::OneDonePerTurn)?,
            "results_delivered" => none(Check::ResultsDelivered)?,
            "completion_nudges" => {
                Check::CompletionNudges(arg.as_i64().ok_or("completion_nudges: N")?)
            }
            "ran" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    command: String,
                    target: Option<String>,
                    status: Option<String>,
                    turn: Option<usize>,
                }
                let a: A = string_or(
                    name,
                    arg,
                    "command",
                    "COMMAND or {command: C, target: T, status: S, turn: N}",
                )?;
                if a.command.trim().is_empty() {
                    return Err("ran: the command is empty".into());
                }
                Check::Ran {
                    command: a.command,
                    target: a.target,
                    status: a.status.map(exec_status).transpose()?,
                    turn: a.turn,
                }
            }
            "error_code" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    turn: usize,
                    code: String,
                }
                let a: A = args(name, arg, "{turn: N, code: CODE}")?;
                if !a.code.contains('.') {
                    return Err(format!(
                        "error_code: `{}` is not an error code (area.name)",
                        a.code
                    ));
                }
                Check::ErrorCode {
                    turn: a.turn,
                    code: a.code,
                }
            }
            "tool_calls" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    tool: String,
                    turn: Option<usize>,
                    #[serde(default)]
                    accepted: bool,
                    min: Option<usize>,
                    max: Option<usize>,
                    exactly: Option<usize>,
                }
                let a: A = args(
                    name,
                    arg,
                    "{tool: X, min: N, max: N, exactly: N, accepted: true, turn: T}",
                )?;
                let (min, max) = match (a.exactly, a.min, a.max) {
                    (Some(n), None, None) => (Some(n), Some(n)),
                    (Some(_), _, _) => {
                        return Err("tool_calls: `exactly` excludes `min` and `max`".into());
                    }
                    (None, None, None) => {
                        return Err("tool_calls: needs `min`, `max` or `exactly`".into());
                    }
                    (None, min, max) => (min, max),
                };
                if let (Some(lo), Some(hi)) = (min, max)
                    && lo > hi
                {
                    return Err(format!("tool_calls: min {lo} is above max {hi}"));
                }
                Check::ToolCalls {
                    tool: a.tool,
                    turn: a.turn,
                    accepted: a.accepted,
                    min,
                    max,
                }
            }
            "completes_once" => Check::CompletesOnce {
                turn: opt_turn(name, arg)?,
            },
            "window_after" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    turn: usize,
                    open: bool,
                }
                let a: A = args(name, arg, "{turn: N, open: true|false}")?;
                Check::WindowAfter {
                    turn: a.turn,
                    open: a.open,
                }
            }
            "execution_status" => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct A {
                    nth: usize,
                    status: String,
                    turn: Option<usize>,
                }
                let a: A = args(name, arg, "{nth: N, status: S, turn: T}")?;
                if a.nth == 0 {
                    return Err("execution_status: `nth` counts from 1".into());
                }
                Check::ExecutionStatus {
                    nth: a.nth,
                    status: exec_status(a.status)?,
                    turn: a.turn,
                }
            }
            "no_auto_turn" => Check::NoAutoTurn {
                turn: opt_turn(name, arg)?,
            },
            "no_overlapping_turns" => none(Check::NoOverlappingTurns)?,
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
            | Check::MinExecutions { turn, .. }
            | Check::Ran { turn, .. }
            | Check::ToolCalls { turn, .. }
            | Check::CompletesOnce { turn }
            | Check::ExecutionStatus { turn, .. }
            | Check::NoAutoTurn { turn }
            | Check::ToolRefused { turn, .. } => *turn,
            Check::StatusAfter { turn, .. }
            | Check::TurnOk { turn }
            | Check::NoTurn { turn }
            | Check::ErrorCode { turn, .. }
            | Check::WindowAfter { turn, .. } => Some(*turn),
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
            Check::MinExecutions { min, turn } => scoped(&format!("min_executions {min}"), turn),
            Check::Ran {
                command, target, ..
            } => match target {
                Some(t) => format!("ran `{command}` on {t}"),
                None => format!("ran `{command}`"),
            },
            Check::ErrorCode { turn, code } => format!("error_code (turn {turn}) {code}"),
            Check::ToolCalls {
                tool,
                turn,
                accepted,
                min,
                max,
            } => {
                let bound = match (min, max) {
                    (Some(a), Some(b)) if a == b => format!("= {a}"),
                    (Some(a), Some(b)) => format!("{a}..{b}"),
                    (Some(a), None) => format!(">= {a}"),
                    (None, Some(b)) => format!("<= {b}"),
                    (None, None) => String::new(),
                };
                let what = if *accepted { " accepted" } else { "" };
                scoped(&format!("tool_calls {tool}{what} {bound}"), turn)
            }
            Check::CompletesOnce { turn } => scoped("completes_once", turn),
            Check::WindowAfter { turn, open } => format!(
                "window_after (turn {turn}) {}",
                if *open { "open" } else { "closed" }
            ),
            Check::ExecutionStatus { nth, status, turn } => {
                scoped(&format!("execution_status #{nth} {status}"), turn)
            }
            Check::NoAutoTurn { turn } => scoped("no_auto_turn", turn),
            Check::NoOverlappingTurns => "no_overlapping_turns".into(),
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
            Check::MinExecutions { min, turn } => {
                let n = started(turn);
                verdict(n >= *min, format!("{n} command(s) executed"))
            }
            Check::Ran {
                command,
                target,
                status,
                turn,
            } => {
                let want = command.trim();
                let same = |e: &&ExecTrace| {
                    e.started
                        && (e.command.trim() == want || e.canonical.trim() == want)
                        && turn.is_none_or(|n| e.turn == n)
                };
                let matching: Vec<&ExecTrace> = t.executions.iter().filter(same).collect();
                let hit = matching.iter().find(|e| {
                    target.as_ref().is_none_or(|x| &e.target == x)
                        && status.as_ref().is_none_or(|s| &e.status == s)
                });
                match hit {
                    Some(e) => verdict(
                        true,
                        format!("execution {} on {} ({})", e.id, e.target, e.status),
                    ),
                    None if matching.is_empty() => verdict(
                        false,
                        format!(
                            "never ran; commands that ran: {}",
                            t.executions
                                .iter()
                                .filter(|e| e.started)
                                .map(|e| format!("`{}` on {}", e.command, e.target))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ),
                    None => verdict(
                        false,
                        format!(
                            "ran, but as {}",
                            matching
                                .iter()
                                .map(|e| format!("{} on {}", e.status, e.target))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ),
                }
            }
            Check::ErrorCode { turn, code } => match t.turns.get(turn - 1) {
                None => verdict(false, "turn not run"),
                Some(tt) => {
                    let mut codes: Vec<&str> = tt.error_code.as_deref().into_iter().collect();
                    codes.extend(tt.events.iter().filter_map(|e| match e {
                        AgentEvent::Error { code, .. } => Some(code.as_str()),
                        _ => None,
                    }));
                    verdict(
                        codes.contains(&code.as_str()),
                        if codes.is_empty() {
                            "no error".to_owned()
                        } else {
                            format!("error code(s): {}", codes.join(", "))
                        },
                    )
                }
            },
            Check::ToolCalls {
                tool,
                turn,
                accepted: only_accepted,
                min,
                max,
            } => {
                let n = if *only_accepted {
                    accepted(tool, turn)
                } else {
                    calls(tool, turn).len()
                };
                let ok = min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m);
                let what = if *only_accepted { "accepted " } else { "" };
                verdict(ok, format!("{n} {what}{tool} call(s)"))
            }
            Check::CompletesOnce { turn: Some(n) } => {
                let k = accepted("complete_task", &Some(*n));
                verdict(
                    k == 1,
                    format!("{k} accepted complete_task call(s) in turn {n}"),
                )
            }
            Check::CompletesOnce { turn: None } => {
                let mut per_turn: std::collections::BTreeMap<usize, usize> =
                    std::collections::BTreeMap::new();
                for c in t.calls.iter().filter(|c| c.name == "complete_task") {
                    let n = per_turn.entry(c.turn).or_insert(0);
                    if c.accepted() {
                        *n += 1;
                    }
                }
                let bad: Vec<String> = per_turn
                    .iter()
                    .filter(|(_, n)| **n != 1)
                    .map(|(turn, n)| format!("turn {turn}: {n} accepted"))
                    .collect();
                let total: usize = per_turn.values().sum();
                verdict(
                    bad.is_empty() && total >= 1,
                    if bad.is_empty() {
                        format!("{total} accepted complete_task call(s), one per turn")
                    } else {
                        bad.join("; ")
                    },
                )
            }
            Check::WindowAfter { turn, open } => match t.turns.get(turn - 1) {
                None => verdict(false, "turn not run"),
                Some(tt) => verdict(
                    tt.window_open_after == *open,
                    format!(
                        "window {} after turn {turn}",
                        if tt.window_open_after {
                            "open"
                        } else {
                            "closed"
                        }
                    ),
                ),
            },
            Check::ExecutionStatus { nth, status, turn } => {
                let list: Vec<(i64, String)> = match turn {
                    Some(n) => match t.turns.get(n - 1) {
                        Some(tt) => tt.executions_after.clone(),
                        None => return verdict(false, "turn not run"),
                    },
                    None => t
                        .executions
                        .iter()
                        .map(|e| (e.id, e.status.clone()))
                        .collect(),
                };
                match list.get(nth - 1) {
                    None => verdict(false, format!("only {} execution(s)", list.len())),
                    Some((id, got)) => {
                        verdict(got == status, format!("execution {id} (#{nth}) is {got}"))
                    }
                }
            }
            Check::NoAutoTurn { turn } => {
                let n: usize = t
                    .turns
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| turn.is_none_or(|n| i + 1 == n))
                    .map(|(_, tt)| {
                        tt.events
                            .iter()
                            .filter(|e| matches!(e, AgentEvent::TurnStarted { auto: true, .. }))
                            .count()
                    })
                    .sum();
                verdict(n == 0, format!("{n} automatic turn(s) started"))
            }
            Check::NoOverlappingTurns => verdict(
                t.overlaps.is_empty(),
                if t.overlaps.is_empty() {
                    "no two turns of a session overlapped".to_owned()
                } else {
                    t.overlaps.join("; ")
                },
            ),
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
