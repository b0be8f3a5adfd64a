//! Run and execution tools: the targets, the fleet's health, running a command and cancelling
//! one. What a command goes through (classify → gate → run → record) is
//! [`crate::execution`]; this module only reads the model's arguments and words the answer.

use nomos_exec::Target;
use nomos_store::ExecStatus;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args::{Int, Text, given};
use super::contract::{ToolArgs, ToolContext, ToolOutcome, pretty};
use crate::execution::{self, RunRequest, RunVerdict};
use crate::{Agent, AgentError, notes};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListTargets {}

impl ToolArgs for ListTargets {
    const NAME: &'static str = "list_targets";
    const DESCRIPTION: &'static str =
        "The targets commands can run on, with their transport and when each was last audited.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        Ok(ToolOutcome::ok(list_targets(cx.agent)?))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetHealthSummary {}

impl ToolArgs for GetHealthSummary {
    const NAME: &'static str = "get_health_summary";
    const DESCRIPTION: &'static str = "A short summary of the fleet: targets, when each was last audited, recent failed executions.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let targets = list_targets(cx.agent)?;
        let failed: Vec<Value> = cx
            .agent
            .inner
            .store
            .executions(cx.session)?
            .iter()
            .filter(|e| matches!(e.status, ExecStatus::Failed | ExecStatus::TimedOut) || e.exit_code.is_some_and(|c| c != 0))
            .map(|e| json!({"id": e.id, "target": e.target, "command": e.command, "status": e.status.as_str(), "exit_code": e.exit_code}))
            .collect();
        Ok(ToolOutcome::ok(format!(
            "{targets}\nFailed or non-zero executions in this session: {}",
            pretty(&failed)
        )))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Run {
    /// target slug from list_targets, e.g. host:local
    target: Text,
    command: Text,
    /// why this command, for the operator
    // Required so every command carries its why; the faces read it from the recorded call.
    #[allow(dead_code)]
    reason: Text,
    /// the plan step (seq) it serves
    step: Option<Int>,
    /// only to re-run a command that already ran in this plan: what changed
    rerun_because: Option<String>,
}

impl ToolArgs for Run {
    const NAME: &'static str = "run";
    const DESCRIPTION: &'static str = "Run one shell command on one target. The policy classifier decides: read-only runs at once once a plan exists; config changes need the operator's approval window; destructive or unknown commands wait for the operator's approval on this command.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        if cx.flags.reconcile {
            return Ok(ToolOutcome::error(notes::RECONCILE_NO_RUN));
        }
        let request = RunRequest {
            call_id: cx.call_id,
            target: self.target.as_str(),
            command: self.command.as_str(),
            step: self.step.map(|s| s.0),
            rerun_because: given(&self.rerun_because),
        };
        Ok(
            match execution::run(cx.agent, cx.session, &request, cx.cancel).await? {
                RunVerdict::Refused(why) => ToolOutcome::error(why),
                RunVerdict::Answered(text) | RunVerdict::Ran(text) => ToolOutcome::ok(text),
                RunVerdict::AwaitsApproval(text) => ToolOutcome::ok(text).ending(),
            },
        )
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CancelExecution {
    id: Int,
}

impl ToolArgs for CancelExecution {
    const NAME: &'static str = "cancel_execution";
    const DESCRIPTION: &'static str = "Cancel a running or waiting execution by id.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let id = self.id.0;
        Ok(match execution::cancel_execution(cx.agent, id, false) {
            Ok(true) => ToolOutcome::ok(format!("Execution {id} cancelled.")),
            Ok(false) => ToolOutcome::ok(format!("Execution {id} was not running or waiting.")),
            Err(e) => ToolOutcome::error(e.to_string()),
        })
    }
}

fn list_targets(agent: &Agent) -> Result<String, AgentError> {
    let known = agent.inner.store.list_targets()?;
    let inventory: Vec<Value> = agent
        .inner
        .inventory
        .read()
        .map_err(|_| AgentError::Poisoned)?
        .targets()
        .map(|t| {
            let slug = t.slug.to_string();
            let audited = known
                .iter()
                .find(|k| k.entity.slug == slug)
                .and_then(|k| k.last_audited_at_ms);
            json!({
                "slug": slug,
                "transport": transport_name(t),
                "last_audited_at": audited.map(iso_time),
            })
        })
        .collect();
    Ok(pretty(&json!({"targets": inventory})))
}

fn transport_name(t: &Target) -> &'static str {
    match t.transport {
        nomos_exec::Transport::Local => "local",
        nomos_exec::Transport::Ssh(_) => "ssh",
        nomos_exec::Transport::Pct(_) => "pct",
    }
}

/// RFC 3339 in UTC to the second (`1970-01-01T00:00:00Z`), from Unix milliseconds. A time
/// outside what a calendar can show (hundreds of thousands of years away) says so.
pub(crate) fn iso_time(ms: i64) -> String {
    match chrono::DateTime::from_timestamp(ms.div_euclid(1000), 0) {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => format!("(out of range: {ms} ms since 1970)"),
    }
}

#[cfg(test)]
mod tests {
    use super::iso_time;

    #[test]
    fn iso_time_is_rfc3339_utc_to_the_second() {
        for (ms, want) in [
            (0, "1970-01-01T00:00:00Z"),
            (999, "1970-01-01T00:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (86_399_999, "1970-01-01T23:59:59Z"),
            // Leap days: 2000 is a leap year (divisible by 400), 2024 one by 4.
            (951_782_400_000, "2000-02-29T00:00:00Z"),
            (951_868_799_000, "2000-02-29T23:59:59Z"),
            (951_868_800_000, "2000-03-01T00:00:00Z"),
            (1_709_164_800_000, "2024-02-29T00:00:00Z"),
            (1_709_251_200_000, "2024-03-01T00:00:00Z"),
            // 2100 is not a leap year (divisible by 100, not 400): Feb 28 → Mar 1.
            (4_107_542_399_000, "2100-02-28T23:59:59Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00Z"),
            (1_735_689_599_000, "2024-12-31T23:59:59Z"),
            (1_735_689_600_000, "2025-01-01T00:00:00Z"),
            (253_402_300_799_000, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(iso_time(ms), want, "{ms}");
        }
    }

    /// The hand-written days-to-civil (Howard Hinnant's) that `iso_time` used before chrono,
    /// kept here as the reference the crate must agree with.
    fn reference(ms: i64) -> String {
        let secs = ms.div_euclid(1000);
        let z = secs.div_euclid(86_400) + 719_468;
        let rem = secs.rem_euclid(86_400);
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )
    }

    #[test]
    fn iso_time_agrees_with_the_calendar_it_replaced_from_year_1_to_9999() {
        let first = -62_135_596_800_000_i64; // 0001-01-01T00:00:00Z
        let last = 253_402_300_799_999_i64; // 9999-12-31T23:59:59.999Z
        // 29 days and just under an hour: the days drift through every month and leap cycle,
        // the times through every hour of the day.
        let stride = 86_400_000 * 29 + 3_599_999;
        let mut ms = first;
        let mut checked = 0;
        while ms <= last {
            assert_eq!(iso_time(ms), reference(ms), "{ms}");
            ms += stride;
            checked += 1;
        }
        assert!(checked > 100_000, "{checked}");
        for ms in [first, last, 0, -1, 1] {
            assert_eq!(iso_time(ms), reference(ms), "{ms}");
        }
    }

    #[test]
    fn iso_time_says_so_out_of_range_instead_of_panicking() {
        for ms in [i64::MAX, i64::MIN] {
            assert!(iso_time(ms).starts_with("(out of range"), "{ms}");
        }
    }
}
