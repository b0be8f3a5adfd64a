//! Task tools: a question to the operator, and the end of the task.

use nomos_store::{CompleteOutcome, Outcome};
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::Text;
use super::contract::{ToolArgs, ToolContext, ToolOutcome};
use crate::events::{emit_plan, emit_status};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskOperator {
    // Shown to the operator from the recorded call; required so the turn never ends on an
    // empty question.
    #[allow(dead_code)]
    question: Text,
}

impl ToolArgs for AskOperator {
    const NAME: &'static str = "ask_operator";
    const DESCRIPTION: &'static str = "Ask the operator one precise question and end your turn. The answer is never plan approval: do not ask for approval with it; the operator approves the plan in chat or with the Approve button.";

    async fn call(self, _cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        Ok(
            ToolOutcome::ok("Question shown to the operator. STOP and wait for the answer.")
                .ending(),
        )
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompleteTask {
    outcome: OutcomeArg,
    summary: Text,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum OutcomeArg {
    Success,
    Partial,
    Failed,
}

impl From<OutcomeArg> for Outcome {
    fn from(o: OutcomeArg) -> Self {
        match o {
            OutcomeArg::Success => Outcome::Success,
            OutcomeArg::Partial => Outcome::Partial,
            OutcomeArg::Failed => Outcome::Failed,
        }
    }
}

impl ToolArgs for CompleteTask {
    const NAME: &'static str = "complete_task";
    const DESCRIPTION: &'static str = "Finish the task: outcome success, partial or failed, and a summary the operator can act on (most critical first). Refused on a finished session; success is downgraded to partial when commands gathered facts that were not written back.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let result = cx.agent.inner.store.complete_task(
            cx.session,
            self.outcome.into(),
            self.summary.as_str(),
        )?;
        let out = match result {
            CompleteOutcome::Completed { .. } => {
                ToolOutcome::ok("Task completed. The operator has been notified.").ending()
            }
            CompleteOutcome::Downgraded { refusal, .. } => ToolOutcome::ok(format!(
                "Completed as partial, not success: {} {}",
                refusal.reason, refusal.directive
            ))
            .ending(),
            CompleteOutcome::Refused(r) => {
                return Ok(
                    ToolOutcome::error(format!("Refused: {} {}", r.reason, r.directive)).ending(),
                );
            }
        };
        emit_status(cx.agent, cx.session)?;
        emit_plan(cx.agent, cx.session)?;
        Ok(out)
    }
}
