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
    pub turns: Vec<Turn>,
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

/// One entry of `turns`: an operator action. Turn numbers in assertions are 1-based
/// positions in this list.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// An operator chat message; the first one starts the session.
    Say {
        text: String,
        /// Press Stop this long after sending.
        stop_after_ms: Option<u64>,
    },
    ApprovePlan,
    /// Approve the first execution awaiting approval.
    ApproveExecution,
    /// Deny the first execution awaiting approval.
    DenyExecution {
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
            Turn::ApproveExecution => "approve_execution".into(),
            Turn::DenyExecution { .. } => "deny_execution".into(),
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
            .map(|(i, v)| parse_turn(v).map_err(|m| invalid(format!("turn {}: {m}", i + 1))))
            .collect::<Result<Vec<_>, _>>()?;
        if !matches!(turns.first(), Some(Turn::Say { .. })) {
            return Err(invalid(
                "the first turn must be `say` (it starts the session)".into(),
            ));
        }
        if file.fixtures.clock_ms.is_none()
            && turns.iter().any(|t| matches!(t, Turn::AdvanceClockMs(_)))
        {
            return Err(invalid(
                "advance_clock_ms needs fixtures.clock_ms (a manual clock)".into(),
            ));
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

fn parse_turn(v: &Value) -> Result<Turn, String> {
    if let Some(word) = v.as_str() {
        return match word {
            "approve_plan" => Ok(Turn::ApprovePlan),
            "approve_execution" => Ok(Turn::ApproveExecution),
            "deny_execution" => Ok(Turn::DenyExecution { reason: None }),
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
    let key_is = |k: &str| map.contains_key(k);
    let allowed_with_say = ["say", "stop_after_ms"];
    if key_is("say") {
        if let Some(extra) = map.keys().find(|k| !allowed_with_say.contains(&k.as_str())) {
            return Err(format!("unknown key `{extra}` next to `say`"));
        }
        let text = map
            .get("say")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or("`say` needs the message text")?;
        let stop_after_ms = match map.get("stop_after_ms") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or("`stop_after_ms` is a number")?),
        };
        return Ok(Turn::Say {
            text: text.to_owned(),
            stop_after_ms,
        });
    }
    if map.len() != 1 {
        return Err("a turn map has exactly one key".into());
    }
    let (key, value) = map.iter().next().ok_or("empty turn")?;
    match key.as_str() {
        "wait_ms" => Ok(Turn::WaitMs(value.as_u64().ok_or("`wait_ms` is a number")?)),
        "advance_clock_ms" => Ok(Turn::AdvanceClockMs(
            value.as_i64().ok_or("`advance_clock_ms` is a number")?,
        )),
        "deny_execution" => Ok(Turn::DenyExecution {
            reason: value.as_str().map(str::to_owned),
        }),
        word => parse_turn(&Value::String(word.to_owned())),
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
#[allow(clippy::unwrap_used)]
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
        assert_eq!(m.turns[1], Turn::ApprovePlan);
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
}
