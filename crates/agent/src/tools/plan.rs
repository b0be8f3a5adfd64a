//! Plan tools: the goal, the plan and its steps, and the recorded state to reconcile with.

use std::borrow::Cow;

use nomos_protocol::AgentEvent;
use nomos_store::{NewPlanStep, ProposePlanOutcome, StepStatus, UpdateStepOutcome};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::{Value, json};

use super::args::{Int, Text, field_of};
use super::contract::{ToolArgs, ToolContext, ToolOutcome, cap_result, pretty};
use crate::events::{emit_plan, emit_status};
use crate::{execution, notes};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetGoal {
    goal: Text,
}

impl ToolArgs for SetGoal {
    const NAME: &'static str = "set_goal";
    const DESCRIPTION: &'static str =
        "Record the task's goal in one sentence (what done looks like). Opens no approval.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        cx.agent
            .inner
            .store
            .set_goal(cx.session, self.goal.as_str())?;
        emit_status(cx.agent, cx.session)?;
        Ok(ToolOutcome::ok(
            "Goal set. Next: read what is known (search_knowledge, list_targets), then propose_plan.",
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetStateSnapshot {}

impl ToolArgs for GetStateSnapshot {
    const NAME: &'static str = "get_state_snapshot";
    const DESCRIPTION: &'static str = "The recorded state of this session: goal, status, every plan step with its status, and every execution with its result. Use it to reconcile, never re-run.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let store = &cx.agent.inner.store;
        let session = cx.session;
        let s = store.get_session(session)?;
        let plan = store.current_plan(session)?;
        let executions: Vec<Value> = store
            .executions(session)?
            .iter()
            .map(|e| {
                json!({
                    "id": e.id, "target": e.target, "command": e.command, "status": e.status.as_str(),
                    "exit_code": e.exit_code, "generation": e.generation,
                    "stdout": cap_result(&e.stdout, 1500),
                })
            })
            .collect();
        Ok(ToolOutcome::ok(pretty(&json!({
            "session": {"status": s.status.as_str(), "goal": s.goal, "outcome": s.outcome.map(|o| o.as_str())},
            "plan": {"generation": plan.generation, "steps": plan.steps.iter().map(|st| json!({
                "seq": st.seq, "title": st.title, "target": st.target, "status": st.status.as_str(), "note": st.note
            })).collect::<Vec<_>>()},
            "executions": executions,
            "approval_window_open": store.active_approval_window(session)?.is_some(),
        }))))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProposePlan {
    #[schemars(length(min = 1))]
    steps: Vec<PlanStep>,
}

/// One step as the model writes it; a bare string is read as its title.
#[derive(Debug)]
pub(crate) struct PlanStep(StepFields);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StepFields {
    title: Text,
    detail: Option<String>,
    target: Option<String>,
}

impl<'de> Deserialize<'de> for PlanStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(title) => {
                let title = Text::deserialize(Value::String(title)).map_err(de::Error::custom)?;
                Ok(Self(StepFields {
                    title,
                    detail: None,
                    target: None,
                }))
            }
            v @ Value::Object(_) => serde_path_to_error::deserialize(v)
                .map(Self)
                .map_err(|e| de::Error::custom(format!("{}{}", field_of(e.path()), e.inner()))),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a step object with a title",
            )),
        }
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

impl JsonSchema for PlanStep {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "PlanStep".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        StepFields::json_schema(generator)
    }
}

impl ToolArgs for ProposePlan {
    const NAME: &'static str = "propose_plan";
    const DESCRIPTION: &'static str = "Propose the plan: ordered steps, each with a title and a target. Mandatory before any run. Call it ONCE; after it, STOP and wait for the operator's approval. Refused while a step of the current plan is running or done.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let (agent, session) = (cx.agent, cx.session);
        let mut steps: Vec<NewPlanStep> = Vec::with_capacity(self.steps.len());
        for (i, PlanStep(s)) in self.steps.into_iter().enumerate() {
            // A step must name a target the inventory knows: an approval covers the targets
            // the steps name (I23), so a name that resolves to nothing is refused, not kept.
            let target = match s.target.as_deref().map(str::trim) {
                Some(t) if !t.is_empty() => {
                    Some(execution::resolve_target(agent, t).map_err(|why| {
                        ToolOutcome::error(format!(
                            "Refused: step {} names target `{t}`, which is not in the inventory. \
                             {why} Propose the plan again with known targets.",
                            i + 1,
                        ))
                    })?)
                }
                _ => None,
            };
            steps.push(NewPlanStep {
                title: s.title.0,
                detail: s.detail,
                // I23: the window covers the targets the steps name, compared as slugs.
                target: target.map(|t| t.slug.to_string()),
            });
        }
        match agent.inner.store.propose_plan(session, &steps)? {
            ProposePlanOutcome::Proposed(plan) => {
                emit_plan(agent, session)?;
                emit_status(agent, session)?;
                agent.emit(AgentEvent::ApprovalRequested {
                    session_id: session,
                    execution: None,
                });
                Ok(ToolOutcome::ok(notes::plan_set(
                    plan.generation,
                    plan.steps.len(),
                    plan.write_back_appended,
                ))
                .ending())
            }
            ProposePlanOutcome::Refused(r) => Ok(ToolOutcome::error(format!(
                "Refused: {} {}",
                r.reason, r.directive
            ))),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdatePlanStep {
    #[schemars(range(min = 1))]
    seq: Int,
    status: StepStatusArg,
    note: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StepStatusArg {
    Running,
    Done,
    Failed,
    Skipped,
}

impl From<StepStatusArg> for StepStatus {
    fn from(s: StepStatusArg) -> Self {
        match s {
            StepStatusArg::Running => StepStatus::Running,
            StepStatusArg::Done => StepStatus::Done,
            StepStatusArg::Failed => StepStatus::Failed,
            StepStatusArg::Skipped => StepStatus::Skipped,
        }
    }
}

impl ToolArgs for UpdatePlanStep {
    const NAME: &'static str = "update_plan_step";
    const DESCRIPTION: &'static str = "Move a plan step (by seq) to running, done, failed or skipped, with a short note of what you found. Steps complete in order.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let outcome = cx.agent.inner.store.update_plan_step(
            cx.session,
            self.seq.0,
            self.status.into(),
            self.note.as_deref(),
        )?;
        Ok(match outcome {
            UpdateStepOutcome::Updated(step) => {
                emit_plan(cx.agent, cx.session)?;
                ToolOutcome::ok(format!("Step {} is {}.", step.seq, step.status.as_str()))
            }
            UpdateStepOutcome::Refused(r) => {
                ToolOutcome::error(format!("Refused: {} {}", r.reason, r.directive))
            }
        })
    }
}
