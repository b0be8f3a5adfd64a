//! Tool dispatch: every tool's gate and effect, and the execution of commands.

use nomos_exec::{ExecOutcome, Limits, Target};
use nomos_llm::ToolCall;
use nomos_protocol::AgentEvent;
use nomos_store::{
    Approval, ApprovalKind, CommandClass, CompleteOutcome, ContinuedVia, ExecStatus,
    ExecutionResult, KnowledgeKind, KnowledgeQuery, NewExecution, NewKnowledge, NewPlanStep,
    Outcome, ProposePlanOutcome, SessionId, StepStatus, UpdateStepOutcome,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::turn::{TurnFlags, emit_plan, emit_status};
use crate::{Agent, AgentError, convert, notes};

/// What a tool answers the model.
#[derive(Debug)]
pub(crate) struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
    /// The turn stops after this call (a plan waits for approval, a question for an answer).
    pub ends_turn: bool,
}

impl ToolOutcome {
    fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            ends_turn: false,
        }
    }
    pub(crate) fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            ends_turn: false,
        }
    }
    fn ending(mut self) -> Self {
        self.ends_turn = true;
        self
    }
}

/// Cuts a long result for the model with a marker saying how much was left out (I16).
pub(crate) fn cap_result(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head: String = text.chars().take(max_chars * 3 / 4).collect();
    let tail: String = text.chars().skip(total - max_chars / 4).collect();
    format!(
        "{head}\n[… {} characters truncated …]\n{tail}",
        total - max_chars
    )
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolOutcome> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            ToolOutcome::error(format!("Missing argument `{key}` (a non-empty string)."))
        })
}

fn int_arg(args: &Value, key: &str) -> Result<i64, ToolOutcome> {
    args.get(key)
        .and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        })
        .ok_or_else(|| ToolOutcome::error(format!("Missing argument `{key}` (an integer).")))
}

fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("(unserialisable: {e})"))
}

pub(crate) async fn dispatch(
    agent: &Agent,
    session: SessionId,
    flags: &TurnFlags,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let args = match call.parse_arguments() {
        Ok(v) if v.is_object() => v,
        Ok(_) => {
            return ToolOutcome::error(
                "Arguments must be a JSON object matching the tool's schema.",
            );
        }
        Err(e) => {
            return ToolOutcome::error(format!(
                "Arguments are not valid JSON ({e}). Re-send the call with a JSON object matching the schema."
            ));
        }
    };
    match dispatch_parsed(agent, session, flags, &call.name, &call.id, &args, cancel).await {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

#[allow(clippy::too_many_lines)]
async fn dispatch_parsed(
    agent: &Agent,
    session: SessionId,
    flags: &TurnFlags,
    name: &str,
    call_id: &str,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolOutcome> {
    let store = &agent.inner.store;
    let fail = |e: nomos_store::StoreError| ToolOutcome::error(e.to_string());
    let out = match name {
        "set_goal" => {
            store
                .set_goal(session, str_arg(args, "goal")?)
                .map_err(fail)?;
            emit_status(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?;
            ToolOutcome::ok(
                "Goal set. Next: read what is known (search_knowledge, list_targets), then propose_plan.",
            )
        }
        "search_knowledge" => {
            let query = str_arg(args, "query")?;
            let limit = args
                .get("limit")
                .and_then(Value::as_u64)
                .unwrap_or(10)
                .clamp(1, 50) as u32;
            let hits = store
                .search_knowledge(&KnowledgeQuery {
                    text: query.to_owned(),
                    prefix: false,
                    kinds: Vec::new(),
                    limit,
                })
                .map_err(fail)?;
            let entities = store.search_entities(query, limit).map_err(fail)?;
            if hits.is_empty() && entities.is_empty() {
                ToolOutcome::ok(format!("Nothing known matches \"{query}\"."))
            } else {
                ToolOutcome::ok(pretty(&json!({"knowledge": hits, "entities": entities})))
            }
        }
        "get_knowledge_content" => ToolOutcome::ok(pretty(
            &store.get_knowledge(int_arg(args, "id")?).map_err(fail)?,
        )),
        "get_entity" => {
            let slug = str_arg(args, "slug")?;
            match store.entity_detail(slug, 20).map_err(fail)? {
                Some(detail) => ToolOutcome::ok(pretty(&detail)),
                None => ToolOutcome::ok(format!("No entity {slug} is known yet.")),
            }
        }
        "list_entities" => {
            let kind = args.get("kind").and_then(Value::as_str);
            let limit = args
                .get("limit")
                .and_then(Value::as_u64)
                .unwrap_or(100)
                .clamp(1, 500) as u32;
            ToolOutcome::ok(pretty(&store.list_entities(kind, limit).map_err(fail)?))
        }
        "get_relations" => ToolOutcome::ok(pretty(
            &store.relations_of(str_arg(args, "slug")?).map_err(fail)?,
        )),
        "list_targets" => {
            ToolOutcome::ok(list_targets(agent).map_err(|e| ToolOutcome::error(e.to_string()))?)
        }
        "get_health_summary" => ToolOutcome::ok(
            health_summary(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?,
        ),
        "get_state_snapshot" => ToolOutcome::ok(
            state_snapshot(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?,
        ),
        "propose_plan" => propose_plan(agent, session, args)?,
        "update_plan_step" => {
            let seq = int_arg(args, "seq")?;
            let status = match str_arg(args, "status")? {
                "running" => StepStatus::Running,
                "done" => StepStatus::Done,
                "failed" => StepStatus::Failed,
                "skipped" => StepStatus::Skipped,
                other => {
                    return Err(ToolOutcome::error(format!(
                        "Unknown status `{other}`: use running, done, failed or skipped."
                    )));
                }
            };
            let note = args.get("note").and_then(Value::as_str);
            match store
                .update_plan_step(session, seq, status, note)
                .map_err(fail)?
            {
                UpdateStepOutcome::Updated(step) => {
                    emit_plan(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?;
                    ToolOutcome::ok(format!("Step {} is {}.", step.seq, step.status.as_str()))
                }
                UpdateStepOutcome::Refused(r) => {
                    ToolOutcome::error(format!("Refused: {} {}", r.reason, r.directive))
                }
            }
        }
        "run" => run(agent, session, flags, call_id, args, cancel).await?,
        "cancel_execution" => {
            let id = int_arg(args, "id")?;
            match cancel_execution(agent, id, false) {
                Ok(true) => ToolOutcome::ok(format!("Execution {id} cancelled.")),
                Ok(false) => ToolOutcome::ok(format!("Execution {id} was not running or waiting.")),
                Err(e) => ToolOutcome::error(e.to_string()),
            }
        }
        "update_entity_attributes" => {
            let slug = str_arg(args, "slug")?;
            let attributes = args
                .get("attributes")
                .and_then(Value::as_object)
                .ok_or_else(|| {
                    ToolOutcome::error("Missing argument `attributes` (a JSON object).")
                })?;
            let update = store
                .update_entity_attributes(Some(session), slug, attributes)
                .map_err(fail)?;
            ToolOutcome::ok(format!("Recorded on {slug}: {}", pretty(&update)))
        }
        "create_relationship" => {
            let empty = Map::new();
            let attributes = args
                .get("attributes")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let rel = store
                .create_relationship(
                    Some(session),
                    str_arg(args, "from")?,
                    str_arg(args, "kind")?,
                    str_arg(args, "to")?,
                    attributes,
                )
                .map_err(fail)?;
            ToolOutcome::ok(format!("Recorded: {}", pretty(&rel)))
        }
        "upsert_knowledge" => {
            let kind = KnowledgeKind::parse(str_arg(args, "kind")?).ok_or_else(|| {
                ToolOutcome::error("Unknown kind: use investigation, document, runbook or note.")
            })?;
            let strings = |key: &str| -> Vec<String> {
                args.get(key)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let entry = store
                .upsert_knowledge(&NewKnowledge {
                    session_id: Some(session),
                    kind,
                    slug: args.get("slug").and_then(Value::as_str).map(str::to_owned),
                    title: str_arg(args, "title")?.to_owned(),
                    body: str_arg(args, "body")?.to_owned(),
                    tags: strings("tags"),
                    about: strings("about"),
                })
                .map_err(fail)?;
            ToolOutcome::ok(format!(
                "Knowledge entry {} saved ({}).",
                entry.id, entry.slug
            ))
        }
        "ask_operator" => {
            str_arg(args, "question")?;
            ToolOutcome::ok("Question shown to the operator. STOP and wait for the answer.")
                .ending()
        }
        "complete_task" => complete_task(agent, session, args)?,
        other => ToolOutcome::error(format!(
            "Unknown tool `{other}`. Available: {}.",
            crate::tools::specs()
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    Ok(out)
}

fn propose_plan(
    agent: &Agent,
    session: SessionId,
    args: &Value,
) -> Result<ToolOutcome, ToolOutcome> {
    let raw = args
        .get("steps")
        .and_then(Value::as_array)
        .ok_or_else(|| ToolOutcome::error("Missing argument `steps` (a non-empty array)."))?;
    let mut steps: Vec<NewPlanStep> = Vec::with_capacity(raw.len());
    for (i, s) in raw.iter().enumerate() {
        let title = s
            .get("title")
            .and_then(Value::as_str)
            .or_else(|| s.as_str())
            .unwrap_or_default();
        // A step must name a target the inventory knows: an approval covers the targets
        // the steps name (I23), so a name that resolves to nothing is refused, not kept.
        let target = match s.get("target").and_then(Value::as_str) {
            Some(t) if !t.trim().is_empty() => {
                Some(resolve_target(agent, t.trim()).map_err(|e| {
                    ToolOutcome::error(format!(
                        "Refused: step {} names target `{}`, which is not in the inventory. {} \
                     Propose the plan again with known targets.",
                        i + 1,
                        t.trim(),
                        e.text
                    ))
                })?)
            }
            _ => None,
        };
        steps.push(NewPlanStep {
            title: title.to_owned(),
            detail: s.get("detail").and_then(Value::as_str).map(str::to_owned),
            // I23: the window covers the targets the steps name, compared as slugs.
            target: target.map(|t| t.slug.to_string()),
        });
    }
    match agent
        .inner
        .store
        .propose_plan(session, &steps)
        .map_err(|e| ToolOutcome::error(e.to_string()))?
    {
        ProposePlanOutcome::Proposed(plan) => {
            emit_plan(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?;
            emit_status(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?;
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

fn complete_task(
    agent: &Agent,
    session: SessionId,
    args: &Value,
) -> Result<ToolOutcome, ToolOutcome> {
    let outcome = match str_arg(args, "outcome")? {
        "success" => Outcome::Success,
        "partial" => Outcome::Partial,
        "failed" => Outcome::Failed,
        other => {
            return Err(ToolOutcome::error(format!(
                "Unknown outcome `{other}`: use success, partial or failed."
            )));
        }
    };
    let summary = str_arg(args, "summary")?;
    let result = agent
        .inner
        .store
        .complete_task(session, outcome, summary)
        .map_err(|e| ToolOutcome::error(e.to_string()))?;
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
    emit_status(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?;
    emit_plan(agent, session).map_err(|e| ToolOutcome::error(e.to_string()))?;
    Ok(out)
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

fn iso_time(ms: i64) -> String {
    // RFC 3339 in UTC without pulling a date crate into the agent for one format.
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn health_summary(agent: &Agent, session: SessionId) -> Result<String, AgentError> {
    let targets = list_targets(agent)?;
    let failed: Vec<Value> = agent
        .inner
        .store
        .executions(session)?
        .iter()
        .filter(|e| matches!(e.status, ExecStatus::Failed | ExecStatus::TimedOut) || e.exit_code.is_some_and(|c| c != 0))
        .map(|e| json!({"id": e.id, "target": e.target, "command": e.command, "status": e.status.as_str(), "exit_code": e.exit_code}))
        .collect();
    Ok(format!(
        "{targets}\nFailed or non-zero executions in this session: {}",
        pretty(&failed)
    ))
}

fn state_snapshot(agent: &Agent, session: SessionId) -> Result<String, AgentError> {
    let store = &agent.inner.store;
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
    Ok(pretty(&json!({
        "session": {"status": s.status.as_str(), "goal": s.goal, "outcome": s.outcome.map(|o| o.as_str())},
        "plan": {"generation": plan.generation, "steps": plan.steps.iter().map(|st| json!({
            "seq": st.seq, "title": st.title, "target": st.target, "status": st.status.as_str(), "note": st.note
        })).collect::<Vec<_>>()},
        "executions": executions,
        "approval_window_open": store.active_approval_window(session)?.is_some(),
    })))
}

// ---- run and executions ---------------------------------------------------------------

fn store_class(c: nomos_policy::Class) -> CommandClass {
    match c {
        nomos_policy::Class::ReadOnly => CommandClass::ReadOnly,
        nomos_policy::Class::ConfigMutation => CommandClass::ConfigMutation,
        nomos_policy::Class::Destructive => CommandClass::Destructive,
    }
}

async fn run(
    agent: &Agent,
    session: SessionId,
    flags: &TurnFlags,
    call_id: &str,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolOutcome> {
    let store = &agent.inner.store;
    let fail = |e: nomos_store::StoreError| ToolOutcome::error(e.to_string());
    if flags.reconcile {
        return Ok(ToolOutcome::error(notes::RECONCILE_NO_RUN));
    }
    // I1: no command without a plan.
    if !store.has_plan(session).map_err(fail)? {
        return Ok(ToolOutcome::error(notes::NO_PLAN_FOR_RUN));
    }
    let target_slug = str_arg(args, "target")?;
    let command = str_arg(args, "command")?;
    let target = resolve_target(agent, target_slug)?;
    let decision = nomos_policy::classify(command);
    let reason = decision.summary();
    // I22: the classifier's contract: what runs is its canonical form, never the text as typed.
    // A command it could not lower has none, and is refused (fail closed).
    let Some(canonical) = decision.canonical.clone().filter(|c| !c.trim().is_empty()) else {
        return Ok(ToolOutcome::error(notes::no_canonical_form(&reason)));
    };
    let slug = target.slug.to_string();

    // I18: the same command on the same target still in flight is never started a second
    // time, whatever the reason given: its result comes when it ends.
    if let Some(running) = store
        .run_in_flight(session, &slug, &canonical)
        .map_err(fail)?
    {
        return Ok(ToolOutcome::ok(notes::duplicate_in_flight(
            running.id,
            running.status.as_str(),
        )));
    }
    // I18: the same command on the same target in this plan is answered from the ledger.
    if args
        .get("rerun_because")
        .and_then(Value::as_str)
        .is_none_or(|s| s.trim().is_empty())
        && let Some(earlier) = store
            .earlier_run(session, &slug, &canonical)
            .map_err(fail)?
    {
        let ago = (store.now_ms() - earlier.finished_at_ms.unwrap_or(earlier.created_at_ms)) / 1000;
        return Ok(ToolOutcome::ok(notes::duplicate_run(
            ago,
            &execution_text(&earlier),
        )));
    }

    let class = store_class(decision.class);
    // I7, I23: config changes run only inside the operator's window, and only on a target its
    // plan names; destructive never without a per-command approval.
    let approval = match class {
        CommandClass::ReadOnly | CommandClass::Destructive => None,
        CommandClass::ConfigMutation => {
            match store.active_approval_window(session).map_err(fail)? {
                Some(w) if store.window_covers(&w, &slug).map_err(fail)? => Some(Approval {
                    kind: ApprovalKind::Window,
                    by: None,
                    window_id: Some(w.id),
                }),
                _ => None,
            }
        }
    };
    let needs_card = approval.is_none() && class != CommandClass::ReadOnly;
    let execution = store
        .create_execution(&NewExecution {
            session_id: session,
            step_seq: args.get("step").and_then(Value::as_i64),
            call_id: Some(call_id.to_owned()),
            target: slug.clone(),
            command: command.to_owned(),
            canonical: canonical.clone(),
            class,
            decision_reason: reason.clone(),
            decision: serde_json::to_value(&decision).ok(),
            approval,
        })
        .map_err(fail)?;
    remember_exact(agent, execution.id, canonical);
    agent.emit(AgentEvent::Execution {
        session_id: session,
        execution: convert::execution(&execution),
    });
    if needs_card || execution.status == ExecStatus::AwaitingApproval {
        agent.emit(AgentEvent::ApprovalRequested {
            session_id: session,
            execution: Some(convert::execution(&execution)),
        });
        return Ok(ToolOutcome::ok(notes::awaiting_command_approval(
            execution.id,
            class.as_str(),
            &reason,
        ))
        .ending());
    }
    let text = start_and_wait(agent, execution.id, target, Some(cancel))
        .await
        .map_err(|e| ToolOutcome::error(e.to_string()))?;
    Ok(ToolOutcome::ok(text))
}

/// I22: holds the exact text of an execution until it runs or is dropped.
fn remember_exact(agent: &Agent, id: i64, exact: String) {
    if let Ok(mut held) = agent.inner.exact.lock() {
        held.insert(id, exact);
    }
}

fn forget_exact(agent: &Agent, id: i64) {
    if let Ok(mut held) = agent.inner.exact.lock() {
        held.remove(&id);
    }
}

/// I22: the text to run for an execution: byte for byte the text that was classified and
/// approved, proved by the digest in its row. The row's own copy is a display copy that may be
/// redacted; it can stand in only when its digest proves nothing was redacted (after a
/// restart). Anything else is refused.
fn exact_command(agent: &Agent, row: &nomos_store::Execution) -> Result<String, AgentError> {
    let held = agent
        .inner
        .exact
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .get(&row.id)
        .cloned();
    let text = held.unwrap_or_else(|| row.canonical.clone());
    if row.is_exact_command(&text) {
        Ok(text)
    } else {
        Err(AgentError::ExactCommandUnavailable(row.id))
    }
}

/// Ends an execution that cannot run with the reason, for the operator and the model.
fn refuse_unrunnable(agent: &Agent, id: i64, why: &AgentError) -> Result<(), AgentError> {
    forget_exact(agent, id);
    let row = agent.inner.store.deny_execution(id, &why.to_string())?;
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    Ok(())
}

/// The inventory's slug for a target a plan step names; an unknown name is kept as written.
fn resolve_target(agent: &Agent, slug: &str) -> Result<Target, ToolOutcome> {
    let inventory = agent
        .inner
        .inventory
        .read()
        .map_err(|_| ToolOutcome::error("inventory lock poisoned"))?;
    inventory.resolve(slug).cloned().map_err(|e| {
        let known: Vec<String> = inventory.targets().map(|t| t.slug.to_string()).collect();
        ToolOutcome::error(format!(
            "{e}. Known targets: {}. Call list_targets.",
            known.join(", ")
        ))
    })
}

/// Starts an execution and waits briefly; what is still running finishes in the background
/// and the continuation worker resumes the session (I14). `turn_cancel` is the turn that asked
/// for it: only then can a quick result be answered inline; an execution started by an
/// operator's approval after that turn ended always goes through the continuation.
///
/// Every path that runs a command comes through here, and what runs is [`exact_command`]:
/// never a string a caller read from the store (I22).
async fn start_and_wait(
    agent: &Agent,
    id: i64,
    target: Target,
    turn_cancel: Option<&CancellationToken>,
) -> Result<String, AgentError> {
    let store = &agent.inner.store;
    let queued = store.get_execution(id)?;
    let exact = match exact_command(agent, &queued) {
        Ok(text) => text,
        Err(e) => {
            if turn_cancel.is_none() {
                // No turn is waiting: the continuation tells the model.
                store.mark_execution_background(id)?;
            }
            refuse_unrunnable(agent, id, &e)?;
            return Err(e);
        }
    };
    let row = store.start_execution(id)?;
    forget_exact(agent, id);
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    let limits = Limits::with_timeout(agent.inner.config.command_timeout);
    let handle = agent.inner.executor.start(&target, &exact, &limits)?;
    // I24: if this process dies first, the next start-up ends the group by this record.
    if let Some(g) = handle.group() {
        store.record_execution_group(
            id,
            i64::from(g.pgid),
            g.start_ticks.and_then(|t| i64::try_from(t).ok()),
        )?;
    }
    if let Ok(mut running) = agent.inner.running.lock() {
        running.insert(id, handle.clone());
    }
    let Some(cancel) = turn_cancel else {
        // No turn is waiting: the continuation delivers the result (I14).
        store.mark_execution_background(id)?;
        let outcome = handle.wait().await;
        let done = record_outcome(agent, id, &outcome)?;
        return Ok(execution_text(&done));
    };
    let waited = tokio::select! {
        outcome = handle.wait_for(agent.inner.config.run_wait) => outcome,
        _ = cancel.cancelled() => None,
    };
    match waited {
        Some(outcome) => {
            let done = record_outcome(agent, id, &outcome)?;
            store.mark_execution_continued(id, ContinuedVia::Inline)?;
            Ok(execution_text(&done))
        }
        None => {
            store.mark_execution_background(id)?;
            let agent = agent.clone();
            tokio::spawn(async move {
                let outcome = handle.wait().await;
                if let Err(e) = record_outcome(&agent, id, &outcome) {
                    tracing::error!(execution = id, "could not record a background result: {e}");
                }
                // The resume runs now if the session is free, else on a later tick (I14).
                if let Err(e) = crate::worker::continue_finished(&agent).await {
                    tracing::warn!("continuation after execution {id} failed: {e}");
                }
            });
            Ok(format!(
                "Execution {id} is still running; it continues in the background and its result \
                 will be delivered to you when it finishes. Do not start it again."
            ))
        }
    }
}

fn record_outcome(
    agent: &Agent,
    id: i64,
    outcome: &ExecOutcome,
) -> Result<nomos_store::Execution, AgentError> {
    if let Ok(mut running) = agent.inner.running.lock() {
        running.remove(&id);
    }
    forget_exact(agent, id);
    let (status, exit_code, error) = match &outcome.status {
        nomos_exec::ExecStatus::Exited { code } => (ExecStatus::Finished, Some(*code), None),
        nomos_exec::ExecStatus::Signaled { signal } => (
            ExecStatus::Failed,
            None,
            Some(format!("killed by signal {signal}")),
        ),
        nomos_exec::ExecStatus::TimedOut => (
            ExecStatus::TimedOut,
            None,
            Some("timed out; the process group was killed".to_owned()),
        ),
        nomos_exec::ExecStatus::Cancelled => {
            (ExecStatus::Cancelled, None, Some("cancelled".to_owned()))
        }
        nomos_exec::ExecStatus::Failed { error } => {
            (ExecStatus::Failed, None, Some(error.to_string()))
        }
    };
    let row = agent.inner.store.finish_execution(
        id,
        &ExecutionResult {
            status,
            exit_code,
            stdout: shown_output(&outcome.stdout),
            stderr: shown_output(&outcome.stderr),
            error,
        },
    )?;
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    Ok(row)
}

/// What is kept of one output stream for the model and the faces: its text, or for binary
/// output (a NUL byte, invalid UTF-8) a flag saying so, instead of a lossy rendering full of
/// U+FFFD that reads as if it were the output.
pub(crate) fn shown_output(c: &nomos_exec::CapturedOutput) -> Vec<u8> {
    if c.binary {
        format!("[binary output, {} bytes, not shown]", c.total_bytes).into_bytes()
    } else {
        c.text.clone().into_bytes()
    }
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

pub(crate) async fn approve_execution(agent: &Agent, id: i64) -> Result<(), AgentError> {
    let store = &agent.inner.store;
    let row = store.get_execution(id)?;
    if row.status != ExecStatus::AwaitingApproval {
        return Err(AgentError::NotAwaitingApproval(id));
    }
    // B5: only a card of the plan in flight can be approved.
    let session = store.get_session(row.session_id)?;
    let plan = store.current_plan(row.session_id)?;
    if session.status.is_terminal() || plan.replaced || row.generation != Some(plan.generation) {
        return Err(AgentError::StaleExecution(id));
    }
    // I22: refused before anything is approved when the exact text is gone.
    if let Err(e) = exact_command(agent, &row) {
        store.mark_execution_background(id)?;
        refuse_unrunnable(agent, id, &e)?;
        crate::worker::continue_finished(agent).await?;
        return Err(e);
    }
    // The operator acted: a Stop's pause ends (I21).
    store.unpause_session(row.session_id)?;
    let row = store.approve_execution(
        id,
        &Approval {
            kind: ApprovalKind::OperatorButton,
            by: Some("operator".to_owned()),
            window_id: None,
        },
    )?;
    let target = agent
        .inner
        .inventory
        .read()
        .map_err(|_| AgentError::Poisoned)?
        .resolve(&row.target)?
        .clone();
    // The turn that asked has ended; the result comes back through the continuation (I14).
    let agent2 = agent.clone();
    tokio::spawn(async move {
        if let Err(e) = start_and_wait(&agent2, id, target, None).await {
            tracing::error!(execution = id, "approved execution could not start: {e}");
        } else if let Err(e) = crate::worker::continue_finished(&agent2).await {
            tracing::warn!("continuation after execution {id} failed: {e}");
        }
    });
    Ok(())
}

pub(crate) async fn deny_execution(
    agent: &Agent,
    id: i64,
    reason: Option<&str>,
) -> Result<(), AgentError> {
    let status = agent.inner.store.get_execution(id)?.status;
    if !matches!(status, ExecStatus::AwaitingApproval | ExecStatus::Queued) {
        return Err(AgentError::NotAwaitingApproval(id));
    }
    // The turn that asked has ended: the denial reaches the model through the continuation.
    agent.inner.store.mark_execution_background(id)?;
    forget_exact(agent, id);
    let row = agent
        .inner
        .store
        .deny_execution(id, reason.unwrap_or("denied by the operator"))?;
    agent.emit(AgentEvent::Execution {
        session_id: row.session_id,
        execution: convert::execution(&row),
    });
    crate::worker::continue_finished(agent).await?;
    Ok(())
}

/// Cancels a running or waiting execution. `by_operator`: the model did not ask for it, so a
/// command that never ran is reported to the model through the continuation.
pub(crate) fn cancel_execution(
    agent: &Agent,
    id: i64,
    by_operator: bool,
) -> Result<bool, AgentError> {
    let handle = agent
        .inner
        .running
        .lock()
        .map_err(|_| AgentError::Poisoned)?
        .get(&id)
        .cloned();
    if let Some(handle) = handle {
        handle.cancel();
        return Ok(true);
    }
    let row = agent.inner.store.get_execution(id)?;
    if row.status == ExecStatus::AwaitingApproval || row.status == ExecStatus::Queued {
        if by_operator {
            agent.inner.store.mark_execution_background(id)?;
        }
        forget_exact(agent, id);
        let row = agent.inner.store.deny_execution(id, "cancelled")?;
        agent.emit(AgentEvent::Execution {
            session_id: row.session_id,
            execution: convert::execution(&row),
        });
        return Ok(true);
    }
    Ok(false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn captured(text: &str, total: u64, binary: bool) -> nomos_exec::CapturedOutput {
        nomos_exec::CapturedOutput {
            text: text.to_owned(),
            total_bytes: total,
            truncated_bytes: total.saturating_sub(text.len() as u64),
            binary,
        }
    }

    #[test]
    fn binary_output_is_flagged_with_its_size_not_shown() {
        // A NUL byte, invalid UTF-8, a truncated binary stream: the flag, never the bytes.
        for (text, total) in [
            ("a\u{0}b", 3u64),
            ("\u{fffd}\u{fffd}PNG", 8),
            ("ELF\u{fffd}\n[… 10000 bytes truncated …]\n\u{fffd}", 12_000),
        ] {
            let shown = String::from_utf8(shown_output(&captured(text, total, true))).unwrap();
            assert_eq!(shown, format!("[binary output, {total} bytes, not shown]"));
            assert!(!shown.contains('\u{fffd}') && !shown.contains('\u{0}'));
        }
        // Text stays text, byte for byte.
        let t = "disk usage: 42%\nnaïve ✓\n";
        assert_eq!(
            shown_output(&captured(t, t.len() as u64, false)),
            t.as_bytes()
        );
    }
}
