//! The manifest: one conversation, its fixtures, its scripted model and its assertions. The
//! file format is documented in `evals/README.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nomos_mock_llm::Script;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::EvalError;
use crate::checks::Check;

/// One golden conversation.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub fixtures: Fixtures,
    pub agent: AgentOverrides,
    pub turns: Vec<Step>,
    /// The scripted model (offline mode); ignored live.
    pub script: Script,
    pub checks: Vec<Scoped>,
}

/// A check and the modes it applies to.
#[derive(Debug, Clone)]
pub struct Scoped {
    pub check: Check,
    pub only: Option<Only>,
}

/// Restricts a check to one mode: a check that only makes sense against a scripted model
/// that misbehaves (a gate refused X) is `only: offline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Only {
    Offline,
    Live,
}

/// State set up before the first turn.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixtures {
    /// Run the store on a manual clock starting at this Unix time (ms); `advance_clock_ms`
    /// turns need it.
    #[serde(default)]
    pub clock_ms: Option<i64>,
    /// Knowledge entries written through the store API.
    #[serde(default)]
    pub knowledge: Vec<KnowledgeFixture>,
    /// Entity attributes written through the store API.
    #[serde(default)]
    pub entities: Vec<EntityFixture>,
    /// Targets beside `host:local`, in the inventory file format (TOML, exec's README): e.g.
    /// local stand-ins (`transport = "local"` on `host:` slugs), so target-bound rules can be
    /// tested offline. Checked when the manifest loads.
    #[serde(default)]
    pub inventory: Option<String>,
}

impl Fixtures {
    /// The agent's inventory: `host:local` plus the fixture's targets.
    pub fn inventory(&self) -> Result<nomos_exec::Inventory, nomos_exec::ExecError> {
        let mut inventory = nomos_exec::Inventory::with_local();
        if let Some(text) = &self.inventory {
            inventory.merge_file(text, "fixtures.inventory")?;
        }
        Ok(inventory)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeFixture {
    /// investigation, document, runbook or note.
    pub kind: String,
    #[serde(default)]
    pub slug: Option<String>,
    pub title: String,
    pub body: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub about: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityFixture {
    pub slug: String,
    pub attributes: Map<String, Value>,
}

/// Agent timings a scenario needs (everything else keeps the eval defaults).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentOverrides {
    /// How long `run` waits before a command continues in the background.
    #[serde(default)]
    pub run_wait_ms: Option<u64>,
    #[serde(default)]
    pub idle_after_ms: Option<u64>,
    #[serde(default)]
    pub close_after_nudge_ms: Option<u64>,
    #[serde(default)]
    pub gate_wait_ms: Option<u64>,
}

/// One entry of `turns`: an operator action, and the error it is expected to be refused
/// with. Turn numbers in assertions are 1-based positions in this list.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub action: Turn,
    /// The action must fail with this error code (`agent.busy`, `agent.nothing_to_approve`
    /// …); it then does not count against the implicit actions check, and succeeding does.
    pub expect_error: Option<String>,
    /// Which session the action is for: sessions are named in the manifest, the first `say`
    /// of a name starts it; `None` is the first session (`main`).
    pub session: Option<String>,
    /// Do not wait for the action, nor for the sessions to settle: the next action starts at
    /// once (to overlap turns). Its outcome is collected at the end.
    pub nowait: bool,
}

/// The name of the session a step without `session:` is for.
pub const MAIN_SESSION: &str = "main";

impl Step {
    /// The session this step acts on.
    pub fn session_name(&self) -> &str {
        self.session.as_deref().unwrap_or(MAIN_SESSION)
    }
}

/// When to press Stop after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopWhen {
    /// A command of this session started running.
    ExecutionRunning,
    /// A command of this session waits for the operator's approval.
    ApprovalRequested,
    /// The model streamed its first text.
    Text,
}

/// An operator action.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// An operator chat message; the first one starts the session.
    Say {
        text: String,
        /// Press Stop this long after sending.
        stop_after_ms: Option<u64>,
        /// Press Stop when this happens in the session.
        stop_when: Option<StopWhen>,
    },
    ApprovePlan,
    /// Approve an execution: the `nth` of the session (1-based, creation order), or the
    /// first one awaiting approval.
    ApproveExecution {
        nth: Option<usize>,
    },
    /// Deny an execution (`nth` as for approve), optionally with a reason the model receives.
    DenyExecution {
        nth: Option<usize>,
        reason: Option<String>,
    },
    /// Press Stop (whatever turn is in flight).
    Stop,
    /// The face reconnected.
    Reconnect,
    WaitMs(u64),
    /// Move the manual clock forward.
    AdvanceClockMs(i64),
    SweepIdle,
    /// One tick of the continuation worker.
    RunContinuations,
}

impl Turn {
    /// Short label for reports.
    pub fn label(&self) -> String {
        match self {
            Turn::Say { text, .. } => {
                let short: String = text.chars().take(40).collect();
                format!("say \"{short}\"")
            }
            Turn::ApprovePlan => "approve_plan".into(),
            Turn::ApproveExecution { nth: None } => "approve_execution".into(),
            Turn::ApproveExecution { nth: Some(n) } => format!("approve_execution #{n}"),
            Turn::DenyExecution { nth: None, .. } => "deny_execution".into(),
            Turn::DenyExecution { nth: Some(n), .. } => format!("deny_execution #{n}"),
            Turn::Stop => "stop".into(),
            Turn::Reconnect => "reconnect".into(),
            Turn::WaitMs(ms) => format!("wait_ms {ms}"),
            Turn::AdvanceClockMs(ms) => format!("advance_clock_ms {ms}"),
            Turn::SweepIdle => "sweep_idle".into(),
            Turn::RunContinuations => "run_continuations".into(),
        }
    }
}

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: Option<String>,
    #[serde(default)]
    description: String,
    /// Free-form provenance (seed finding, gate ids); kept for readers.
    #[serde(default)]
    #[allow(dead_code)]
    seed: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    gates: Vec<String>,
    #[serde(default)]
    fixtures: Fixtures,
    #[serde(default)]
    agent: AgentOverrides,
    turns: Vec<Value>,
    #[serde(default)]
    script: Script,
    #[serde(rename = "assert")]
    assertions: Vec<Value>,
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Self, EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self, EvalError> {
        // Before the parser, whose time grows with the square of the flow nesting.
        nomos_base::check_flow_depth(text, nomos_base::MAX_YAML_FLOW_DEPTH).map_err(|line| {
            EvalError::Parse {
                path: path.to_owned(),
                message: format!(
                    "flow collections ([…] or {{…}}) nest deeper than {} levels at line {line}",
                    nomos_base::MAX_YAML_FLOW_DEPTH
                ),
            }
        })?;
        let file: File = serde_yaml_ng::from_str(text).map_err(|e| EvalError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let name = file.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "manifest".into())
        });
        let invalid = |message: String| EvalError::Invalid {
            manifest: name.clone(),
            message,
        };
        let turns = file
            .turns
            .iter()
            .enumerate()
            .map(|(i, v)| parse_step(v).map_err(|m| invalid(format!("turn {}: {m}", i + 1))))
            .collect::<Result<Vec<_>, _>>()?;
        if !matches!(
            turns.first(),
            Some(
                first @ Step {
                    action: Turn::Say { .. },
                    expect_error: None,
                    ..
                }
            ) if first.session_name() == MAIN_SESSION
        ) {
            return Err(invalid(
                "the first turn must be `say` (it starts the session)".into(),
            ));
        }
        // Every other session also starts with a message before anything acts on it.
        let mut started = std::collections::BTreeSet::new();
        for (i, t) in turns.iter().enumerate() {
            let name = t.session_name();
            if !started.contains(name) {
                if !matches!(t.action, Turn::Say { .. }) {
                    return Err(invalid(format!(
                        "turn {}: session `{name}` has not started (its first turn is `say`)",
                        i + 1
                    )));
                }
                started.insert(name.to_owned());
            }
            if t.nowait && t.expect_error.is_some() {
                return Err(invalid(format!(
                    "turn {}: `nowait` and `expect_error` exclude each other",
                    i + 1
                )));
            }
        }
        if file.fixtures.clock_ms.is_none()
            && turns
                .iter()
                .any(|t| matches!(t.action, Turn::AdvanceClockMs(_)))
        {
            return Err(invalid(
                "advance_clock_ms needs fixtures.clock_ms (a manual clock)".into(),
            ));
        }
        if let Err(e) = file.fixtures.inventory() {
            return Err(invalid(e.to_string()));
        }
        let checks = file
            .assertions
            .iter()
            .enumerate()
            .map(|(i, v)| {
                parse_scoped(v, turns.len()).map_err(|m| invalid(format!("assert {}: {m}", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if checks.is_empty() {
            return Err(invalid("no assertions".into()));
        }
        Ok(Manifest {
            name,
            path: path.to_owned(),
            description: file.description,
            fixtures: file.fixtures,
            agent: file.agent,
            turns,
            script: file.script,
            checks,
        })
    }
}

/// One turn: an action name, or a map of one action key plus the modifiers `expect_error`,
/// `session` and `nowait`.
fn parse_step(v: &Value) -> Result<Step, String> {
    let Some(map) = v.as_object() else {
        return Ok(Step {
            action: parse_turn(v)?,
            expect_error: None,
            session: None,
            nowait: false,
        });
    };
    let mut rest = map.clone();
    let expect_error = match rest.remove("expect_error") {
        None => None,
        Some(Value::String(code)) if code.contains('.') => Some(code),
        Some(_) => return Err("`expect_error` is an error code such as `agent.busy`".into()),
    };
    let session = match rest.remove("session") {
        None => None,
        Some(Value::String(name)) if !name.trim().is_empty() => Some(name),
        Some(_) => return Err("`session` is a session name".into()),
    };
    let nowait = match rest.remove("nowait") {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err("`nowait` is true or false".into()),
    };
    let action = if rest.len() == 1
        && let Some((key, Value::Null)) = rest.iter().next()
    {
        // `- {approve_plan: , expect_error: …}` and `- approve_plan` are the same action.
        parse_turn(&Value::String(key.clone()))?
    } else {
        parse_turn(&Value::Object(rest))?
    };
    Ok(Step {
        action,
        expect_error,
        session,
        nowait,
    })
}

fn parse_turn(v: &Value) -> Result<Turn, String> {
    if let Some(word) = v.as_str() {
        return match word {
            "approve_plan" => Ok(Turn::ApprovePlan),
            "approve_execution" => Ok(Turn::ApproveExecution { nth: None }),
            "deny_execution" => Ok(Turn::DenyExecution {
                nth: None,
                reason: None,
            }),
            "stop" => Ok(Turn::Stop),
            "reconnect" => Ok(Turn::Reconnect),
            "sweep_idle" => Ok(Turn::SweepIdle),
            "run_continuations" => Ok(Turn::RunContinuations),
            other => Err(format!(
                "unknown action `{other}` (a message is written `say: TEXT`)"
            )),
        };
    }
    let map = v
        .as_object()
        .ok_or("a turn is an action name or a one-key map")?;
    if map.contains_key("say") {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Say {
            say: String,
            stop_after_ms: Option<u64>,
            stop_when: Option<StopWhen>,
        }
        let say: Say = serde_json::from_value(v.clone()).map_err(|e| format!("say: {e}"))?;
        if say.say.trim().is_empty() {
            return Err("`say` needs the message text".into());
        }
        if say.stop_after_ms.is_some() && say.stop_when.is_some() {
            return Err("`stop_after_ms` and `stop_when` exclude each other".into());
        }
        return Ok(Turn::Say {
            text: say.say,
            stop_after_ms: say.stop_after_ms,
            stop_when: say.stop_when,
        });
    }
    if map.len() != 1 {
        return Err(
            "a turn map has exactly one action key (plus `expect_error`, `session`, `nowait`)"
                .into(),
        );
    }
    let (key, value) = map.iter().next().ok_or("empty turn")?;
    /// `{nth: N, reason: TEXT}` of approve/deny.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Pick {
        nth: Option<usize>,
        reason: Option<String>,
    }
    let pick = |value: &Value| -> Result<Pick, String> {
        let pick: Pick =
            serde_json::from_value(value.clone()).map_err(|e| format!("{key}: {e}"))?;
        if pick.nth == Some(0) {
            return Err(format!("{key}: `nth` counts from 1"));
        }
        Ok(pick)
    };
    match key.as_str() {
        "wait_ms" => Ok(Turn::WaitMs(value.as_u64().ok_or("`wait_ms` is a number")?)),
        "advance_clock_ms" => Ok(Turn::AdvanceClockMs(
            value.as_i64().ok_or("`advance_clock_ms` is a number")?,
        )),
        "deny_execution" => match value {
            Value::String(reason) => Ok(Turn::DenyExecution {
                nth: None,
                reason: Some(reason.clone()),
            }),
            Value::Null => parse_turn(&Value::String(key.clone())),
            _ => {
                let p = pick(value)?;
                Ok(Turn::DenyExecution {
                    nth: p.nth,
                    reason: p.reason,
                })
            }
        },
        "approve_execution" => match value {
            Value::Null => parse_turn(&Value::String(key.clone())),
            _ => {
                let p = pick(value)?;
                if p.reason.is_some() {
                    return Err("approve_execution takes no reason".into());
                }
                Ok(Turn::ApproveExecution { nth: p.nth })
            }
        },
        word => match value {
            Value::Null => parse_turn(&Value::String(word.to_owned())),
            _ => Err(format!("`{word}` takes no value")),
        },
    }
}

fn parse_scoped(v: &Value, turns: usize) -> Result<Scoped, String> {
    let (name, arg, only) = match v {
        Value::String(s) => (s.clone(), Value::Null, None),
        Value::Object(map) => {
            let mut only = None;
            let mut rest: BTreeMap<&String, &Value> = BTreeMap::new();
            for (k, v) in map {
                if k == "only" {
                    only = Some(
                        serde_json::from_value::<Only>(v.clone())
                            .map_err(|_| "`only` is offline or live".to_owned())?,
                    );
                } else {
                    rest.insert(k, v);
                }
            }
            if rest.len() != 1 {
                return Err("an assertion is one kind (plus an optional `only`)".into());
            }
            let (k, v) = rest.into_iter().next().ok_or("empty assertion")?;
            (k.clone(), v.clone(), only)
        }
        _ => return Err("an assertion is a kind name or a one-key map".into()),
    };
    let check = Check::parse(&name, &arg)?;
    if let Some(t) = check.turn()
        && (t == 0 || t > turns)
    {
        return Err(format!(
            "turn {t} is out of range (the manifest has {turns} turns)"
        ));
    }
    Ok(Scoped { check, only })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_manifest_parses() {
        let m = Manifest::parse(
            "turns:\n  - say: hi\n  - approve_plan\n  - wait_ms: 10\nassert:\n  - no_run\n  - proposes_plan_once: {turn: 1}\n  - max_run_calls: 2\n",
            Path::new("x/minimal.yaml"),
        )
        .unwrap();
        assert_eq!(m.name, "minimal");
        assert_eq!(m.turns.len(), 3);
        assert_eq!(m.turns[1].action, Turn::ApprovePlan);
        assert_eq!(m.checks.len(), 3);
    }

    #[test]
    fn mistakes_are_reported_with_their_place() {
        let err = Manifest::parse(
            "turns:\n  - say: hi\nassert:\n  - proposes_plan_once: {turn: 3}\n",
            Path::new("m.yaml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
        let err = Manifest::parse(
            "turns:\n  - approve_plan\nassert:\n  - no_run\n",
            Path::new("m.yaml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("first turn"), "{err}");
        let err = Manifest::parse(
            "turns:\n  - say: hi\nassert:\n  - no_such_check\n",
            Path::new("m.yaml"),
        )
        .unwrap_err();
        assert_eq!(err.code(), "eval.invalid");
    }

    /// Issue 16: a misspelled or extra key anywhere in a turn or an assertion is an error
    /// naming it, never a dropped condition that lets the manifest pass.
    #[test]
    fn every_misspelled_key_is_an_error() {
        let turns = [
            "{say: hi, stop_aftr_ms: 3}",
            "{say: hi, stop_when: execution_runing}",
            "{say: hi, stop_after_ms: 3, stop_when: text}",
            "{approve_execution: {nht: 1}}",
            "{approve_execution: {nth: 0}}",
            "{approve_execution: {nth: 1, reason: x}}",
            "{deny_execution: {nth: 1, reasn: x}}",
            "{approve_plan: 1}",
            "{stop: yes}",
            "{wait_ms: 10, expect_eror: agent.busy}",
            "{wait_ms: 10, expect_error: busy}",
            "{wait_ms: 10, sweep_idle: }",
        ];
        for turn in turns {
            let text = format!("turns:\n  - say: hi\n  - {turn}\nassert:\n  - no_run\n");
            let err = Manifest::parse(&text, Path::new("m.yaml"))
                .expect_err(&format!("turn `{turn}` must not parse"));
            assert_eq!(err.code(), "eval.invalid", "{turn}: {err}");
            assert!(err.to_string().contains("turn 2"), "{turn}: {err}");
        }
        let assertions = [
            ("max_run_calls: {max: 2, trun: 1}", "trun"),
            ("max_executions: {mx: 2}", "mx"),
            ("min_executions: {min: 1, turns: 1}", "turns"),
            ("tool_refused: {tool: run, contans: x}", "contans"),
            ("calls_before: {first: a, then: b, also: c}", "also"),
            ("status_after: {turn: 1, status: done, x: 1}", "x"),
            ("status_after: {turn: 1, status: finished}", "finished"),
            ("completes: {outcom: success}", "outcom"),
            ("completes: sucess", "sucess"),
            ("turn_ok: {turn: 1, x: 1}", "x"),
            ("no_turn: {trun: 1}", "trun"),
            ("final_status: {status: done, y: 1}", "y"),
            ("proposes_plan: {turm: 1}", "turm"),
            ("plan_before_run: {turn: 1}", "no argument"),
            ("no_empty_bubble: {turn: 1}", "no argument"),
            ("ran: {command: uname, targt: x}", "targt"),
            ("ran: {command: uname, status: done}", "done"),
            ("error_code: {turn: 1, code: agent.busy, z: 1}", "z"),
            ("error_code: {turn: 1, code: busy}", "busy"),
            ("tool_calls: {tool: run, mn: 1}", "mn"),
            ("tool_calls: {tool: run}", "needs"),
            ("tool_calls: {tool: run, exactly: 1, max: 2}", "exactly"),
            ("tool_calls: {tool: run, min: 3, max: 2}", "above"),
            ("window_after: {turn: 1, opn: true}", "opn"),
            (
                "execution_status: {nth: 1, status: finished, trn: 1}",
                "trn",
            ),
            (
                "execution_status: {nth: 0, status: finished}",
                "counts from 1",
            ),
            ("no_auto_turn: {turns: 1}", "turns"),
            ("completes_once: {tunr: 1}", "tunr"),
        ];
        for (assertion, named) in assertions {
            let text = format!("turns:\n  - say: hi\nassert:\n  - {assertion}\n");
            let err = Manifest::parse(&text, Path::new("m.yaml"))
                .expect_err(&format!("`{assertion}` must not parse"));
            assert_eq!(err.code(), "eval.invalid", "{assertion}: {err}");
            assert!(
                err.to_string().contains(named),
                "`{assertion}`: the error must name `{named}`: {err}"
            );
        }
    }

    #[test]
    fn an_inventory_fixture_is_checked_when_the_manifest_loads() {
        let ok = Manifest::parse(
            "fixtures:\n  inventory: |\n    [[target]]\n    slug = \"host:web1\"\n    transport = \"local\"\nturns:\n  - say: hi\nassert:\n  - no_run\n",
            Path::new("inv.yaml"),
        )
        .unwrap();
        let inventory = ok.fixtures.inventory().unwrap();
        assert_eq!(inventory.len(), 2, "host:local and host:web1");
        for bad in [
            "[[target]]\n    slug = \"lxc:web1\"\n    transport = \"local\"",
            "[[target]]\n    slug = \"host:web1\"\n    transport = \"teleport\"",
            "[[target]]\n    slug = \"host:web1\"\n    transprt = \"local\"",
            "[[target]]\n    slug = \"host:web1\"\n    transport = \"local\"\n    [[target]]\n    slug = \"host:web1\"\n    transport = \"local\"",
            "not toml at all [",
        ] {
            let text = format!(
                "fixtures:\n  inventory: |\n    {bad}\nturns:\n  - say: hi\nassert:\n  - no_run\n"
            );
            let err = Manifest::parse(&text, Path::new("inv.yaml"))
                .expect_err(&format!("inventory `{bad}` must be refused"));
            assert_eq!(err.code(), "eval.invalid", "{bad}: {err}");
            assert!(
                err.to_string().contains("fixtures.inventory"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn the_new_forms_parse() {
        let m = Manifest::parse(
            "turns:\n  - say: hi\n  - {say: go, stop_when: execution_running}\n  - deny_execution: {nth: 2, reason: no}\n  - {approve_execution: {nth: 2}, expect_error: agent.not_awaiting_approval}\n  - {approve_plan: , expect_error: agent.nothing_to_approve}\nassert:\n  - ran: uname -s\n  - tool_calls: {tool: run, min: 1, accepted: true}\n  - error_code: {turn: 4, code: agent.not_awaiting_approval}\n  - window_after: {turn: 3, open: false}\n  - execution_status: {nth: 1, status: finished, turn: 2}\n  - no_auto_turn\n  - completes_once: {turn: 2}\n  - min_executions: {min: 1, turn: 2}\n",
            Path::new("new.yaml"),
        )
        .unwrap();
        assert_eq!(m.turns.len(), 5);
        assert_eq!(
            m.turns[2].action,
            Turn::DenyExecution {
                nth: Some(2),
                reason: Some("no".into())
            }
        );
        assert_eq!(
            m.turns[3].expect_error.as_deref(),
            Some("agent.not_awaiting_approval")
        );
        assert_eq!(m.turns[4].action, Turn::ApprovePlan);
        assert_eq!(m.checks.len(), 8);
    }
}
