//! The words the agent says to the model: short imperatives, one place (DESIGN.md §4 end).

pub const APPROVAL_WORDS: &str = "yes, ok, go, go ahead, proceed, continue, approved";

pub fn plan_set(generation: i64, steps: usize, write_back_appended: bool) -> String {
    let appended = if write_back_appended {
        " A write-back step was appended: record what you learn as facts before completing."
    } else {
        ""
    };
    format!(
        "Plan v{generation} set ({steps} steps).{appended} STOP. Wait for operator approval. \
         Approval words: {APPROVAL_WORDS}. On approval advance with update_plan_step + run. \
         Do NOT call propose_plan again."
    )
}

pub const NO_PLAN_FOR_RUN: &str = "Refused: no plan. Call propose_plan first (a one-step plan is \
     fine for a read-only question), then wait for the operator's approval. Do NOT run commands \
     before a plan exists.";

pub fn no_canonical_form(reason: &str) -> String {
    format!(
        "Refused: the command could not be checked ({reason}), so it has no checked form to run \
         and will not run as typed. Rewrite it as plain commands (no functions, eval, background \
         jobs or unbalanced quotes) and run that."
    )
}

pub const RECONCILE_NO_RUN: &str = "Refused: the operator says the chat and the plan panel \
     disagree. Do NOT re-run anything. Call get_state_snapshot, reconcile the plan steps with \
     update_plan_step from what is recorded, and report what is actually done.";

pub fn plan_approved_chat() -> String {
    "The operator approved the plan in chat. Advance it now: update_plan_step (running) + run, \
     in order. Do NOT call propose_plan again."
        .to_owned()
}

pub const PLAN_APPROVED_BUTTON: &str = "The operator approved the plan (Approve button). Advance it \
     now: update_plan_step (running) + run, in order. Do NOT call propose_plan again.";

pub const OPERATOR_DECLINED: &str = "The operator did not approve. Do not run anything that \
     changes state. Ask what they want changed, or wait.";

pub fn reconcile(last: &str) -> String {
    format!(
        "The operator says the chat and the plan panel disagree: \"{last}\". Do NOT re-run any \
         command. Read the recorded state with get_state_snapshot, fix the plan steps with \
         update_plan_step to match what was actually done, and tell the operator."
    )
}

pub fn empty_reply(attempt: u32) -> String {
    match attempt {
        1 => "Your last reply was empty. Continue the task: call the next tool or answer in text."
            .to_owned(),
        2 => "Your reply was empty again. You MUST respond now: either call exactly one tool \
              (the next plan step) or write a short answer to the operator."
            .to_owned(),
        _ => "Third empty reply. Reply with one sentence of text saying where the task stands."
            .to_owned(),
    }
}

pub fn reconnect(last_user: Option<&str>, plan_in_flight: bool) -> String {
    let mut note = String::from("The connection to the operator was interrupted and is back.");
    if let Some(last) = last_user {
        note.push_str(&format!(" The operator's last message was: \"{last}\"."));
    }
    if plan_in_flight {
        note.push_str(
            " A plan is in flight: advance it with update_plan_step + run; do NOT re-propose it.",
        );
    } else {
        note.push_str(" Continue where you left off.");
    }
    note
}

pub fn execution_result_for_resume(results: &[String], plan_in_flight: bool) -> String {
    let mut note = format!(
        "Background execution{} finished:\n{}",
        if results.len() == 1 { "" } else { "s" },
        results.join("\n\n")
    );
    if plan_in_flight {
        note.push_str(
            "\nAdvance the plan with update_plan_step + run. Do NOT call propose_plan again.",
        );
    }
    note
}

pub const COMPLETION_NUDGE: &str = "This session has been idle. If the task is finished, call \
     complete_task with an honest outcome and summary now. If something is still needed from \
     the operator, ask it with ask_operator.";

pub const AUTO_CLOSE_SUMMARY: &str =
    "Closed by the idle sweep: the completion nudge went unanswered.";

pub fn awaiting_command_approval(id: i64, class: &str, reason: &str) -> String {
    format!(
        "Execution {id} waits for the operator's approval ({class}: {reason}). STOP. The result \
         arrives when they decide. Do NOT rephrase the command to get past the classifier."
    )
}

pub fn duplicate_run(finished_ago_s: i64, result: &str) -> String {
    format!(
        "Not re-run: this exact command already ran on this target in this plan {finished_ago_s}s \
         ago. Its result:\n{result}\nUse it. To run it again anyway, call run with \
         rerun_because explaining what changed."
    )
}

pub fn duplicate_in_flight(id: i64, status: &str) -> String {
    let state = match status {
        "awaiting_approval" => "is waiting for the operator's approval",
        "queued" => "is queued",
        _ => "is still running",
    };
    format!(
        "Not started again: this exact command on this target {state} as execution {id}. Its \
         result will come when it ends; do not issue it again meanwhile."
    )
}

pub fn runaway_identical(name: &str, times: u32) -> String {
    format!(
        "Stopped: the model called {name} with the same arguments {times} times in one turn. \
         The turn was ended to avoid a loop; send a message to continue."
    )
}

pub fn runaway_iterations(max: u32) -> String {
    format!(
        "Stopped: the turn reached {max} model iterations without finishing. Send a message to \
         continue."
    )
}

pub fn turn_deadline(limit: std::time::Duration) -> String {
    let mins = limit.as_secs() / 60;
    let shown = if mins > 0 && limit.as_secs().is_multiple_of(60) {
        format!("{mins} min")
    } else {
        format!("{:.1} s", limit.as_secs_f64())
    };
    format!(
        "Stopped: the turn ran past its time limit of {shown}. Send a message to continue, or \
         raise the limit in settings."
    )
}

pub fn runaway_budget(used: u64, budget: u64) -> String {
    format!(
        "Stopped: this session used {used} tokens, over its budget of {budget}. Start a new \
         session or raise the budget in settings."
    )
}

/// The result of an execution as the model reads it.
pub(crate) fn execution_text(e: &nomos_store::Execution) -> String {
    let mut out = format!("Execution {} on {}: {}", e.id, e.target, e.status.as_str());
    if let Some(code) = e.exit_code {
        out.push_str(&format!(", exit {code}"));
    }
    if let Some(ms) = e.duration_ms {
        out.push_str(&format!(", {:.1}s", ms as f64 / 1000.0));
    }
    if let Some(err) = &e.error {
        out.push_str(&format!("\nerror: {err}"));
    }
    if !e.stdout.is_empty() {
        out.push_str(&format!("\nstdout:\n{}", e.stdout));
    }
    if !e.stderr.is_empty() {
        out.push_str(&format!("\nstderr:\n{}", e.stderr));
    }
    out
}

pub fn still_running(id: i64) -> String {
    format!(
        "Execution {id} is still running; it continues in the background and its result \
         will be delivered to you when it finishes. Do not start it again."
    )
}
