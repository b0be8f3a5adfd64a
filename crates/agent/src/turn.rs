//! One turn: the operator's message (or a system resume) in, model iterations and tool calls
//! until the model stops or a gate ends the turn, and exactly one `done` out (I10).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use nomos_llm::{
    ChatRequest, LlmError, Message as LlmMessage, StreamEvent, ToolCall as LlmToolCall,
};
use nomos_protocol::AgentEvent;
use nomos_store::{
    CloseReason, FinishedMessage, NewMessage, NewSession, OperatorApproval, ReopenOutcome, Role,
    SessionId,
};
use tokio_util::sync::CancellationToken;

use crate::approval::{self, Verdict};
use crate::events::{TurnFlags, add_note, emit_plan, emit_status};
use crate::gate::TurnPermit;
use crate::{Agent, AgentError, convert, notes, pending, tools};

/// Largest operator message accepted (a pasted log is fine; a core dump is not).
const MAX_OPERATOR_MESSAGE_BYTES: usize = 256 * 1024;

/// Words an operator uses when the chat and the plan panel disagree (I17). Narrow on
/// purpose: a false positive refuses `run` for the turn ("the chat says nginx is down,
/// restart it" is an instruction, not a complaint).
fn is_state_complaint(text: &str) -> bool {
    let t = text.to_lowercase();
    let mentions_view = [
        "panel",
        "plan view",
        "sidebar",
        "ui ",
        "the ui",
        "screen",
        "chat",
    ]
    .iter()
    .any(|w| t.contains(w));
    let says_mismatch = [
        "disagree",
        "doesn't match",
        "does not match",
        "don't match",
        "do not match",
        "mismatch",
        "out of sync",
        "inconsistent",
        "still shows",
        "still says",
        "not updated",
        "isn't updated",
        "didn't update",
    ]
    .iter()
    .any(|w| t.contains(w));
    mentions_view && says_mismatch
}

/// The operator's message, taken: its session and the turn it starts, not yet run.
pub(crate) struct Accepted {
    pub session: SessionId,
    permit: TurnPermit,
    flags: TurnFlags,
}

impl Accepted {
    /// Runs the turn to its end.
    pub async fn run(self, agent: &Agent) {
        run_turn(agent, self.session, self.permit, self.flags).await;
    }
}

/// The whole turn for an operator message, awaited (the CLI and tests).
pub(crate) async fn operator_message(
    agent: &Agent,
    session: Option<SessionId>,
    text: &str,
) -> Result<SessionId, AgentError> {
    let accepted = accept_message(agent, session, text).await?;
    let session = accepted.session;
    accepted.run(agent).await;
    Ok(session)
}

/// Validates the message, creates or reopens the session, records the message and what it
/// means (approval, decline, complaint), and takes the session's turn permit. Everything
/// that can refuse the message happens here, before any turn starts.
pub(crate) async fn accept_message(
    agent: &Agent,
    session: Option<SessionId>,
    text: &str,
) -> Result<Accepted, AgentError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AgentError::EmptyMessage);
    }
    if text.len() > MAX_OPERATOR_MESSAGE_BYTES {
        return Err(AgentError::MessageTooLong {
            bytes: text.len(),
            max: MAX_OPERATOR_MESSAGE_BYTES,
        });
    }
    let store = &agent.inner.store;
    let session = match session {
        Some(id) => id,
        None => {
            store
                .create_session(NewSession {
                    title: crate::title_from(text),
                    goal: None,
                })?
                .id
        }
    };
    let permit = agent
        .inner
        .gates
        .acquire(&agent.inner.store, session, agent.inner.config.gate_wait)
        .await?;

    // I9: a follow-up on a finished session reopens it with a new plan generation.
    if store.get_session(session)?.status.is_terminal()
        && let ReopenOutcome::Reopened { session: row, .. } = store.reopen_session(session)?
    {
        agent.emit(AgentEvent::TaskReopened {
            session_id: session,
            generation: row.plan_generation + 1,
        });
        emit_status(agent, session)?;
        emit_plan(agent, session)?;
    }

    // I21: the operator speaking again ends the pause their Stop started.
    store.unpause_session(session)?;
    // I23: an answer to the model's question is an answer, whatever its words.
    let answers_question = awaits_answer(agent, session)?;

    let message = store.append_message(&NewMessage::user(session, text))?;
    agent.emit(AgentEvent::Message {
        session_id: session,
        message: convert::message(&message),
    });

    let mut flags = TurnFlags::default();
    let plan = store.current_plan(session)?;
    let window = store.active_approval_window(session)?;
    let verdict = if answers_question {
        Verdict::Other
    } else {
        approval::detect(text)
    };
    match verdict {
        // I7: only the operator's own words open the window, and only for a plan in flight.
        Verdict::Approve if plan.in_flight() && window.is_none() => {
            store.open_approval_window(
                session,
                &OperatorApproval::ChatMessage {
                    message_id: message.id,
                },
                Some(window_ttl_ms(agent)),
            )?;
            add_note(agent, session, &notes::plan_approved_chat())?;
            emit_status(agent, session)?;
        }
        Verdict::Decline => {
            if let Some(window) = window {
                store.close_approval_window(window.id, CloseReason::Revoked)?;
                emit_status(agent, session)?;
            }
            if plan.in_flight() {
                add_note(agent, session, notes::OPERATOR_DECLINED)?;
            }
        }
        Verdict::Approve | Verdict::Other => {}
    }
    if is_state_complaint(text) {
        flags.reconcile = true;
        add_note(agent, session, &notes::reconcile(text))?;
    }
    // I14: results that finished while the session was paused reach the model with this turn.
    pending::deliver_pending_as_note(agent, session)?;
    Ok(Accepted {
        session,
        permit,
        flags,
    })
}

/// The operator's Retry after a turn failed: the same transcript goes to the model again. No
/// message is added (the operator's last one is still the question), so a retry never
/// duplicates it.
pub(crate) async fn accept_retry(
    agent: &Agent,
    session: SessionId,
) -> Result<Accepted, AgentError> {
    let store = &agent.inner.store;
    let permit = agent
        .inner
        .gates
        .acquire(store, session, agent.inner.config.gate_wait)
        .await?;
    if store.get_session(session)?.status.is_terminal() {
        return Err(AgentError::NothingToRetry(session));
    }
    // I21: asking again is the operator speaking: a pause their Stop started ends.
    store.unpause_session(session)?;
    pending::deliver_pending_as_note(agent, session)?;
    Ok(Accepted {
        session,
        permit,
        flags: TurnFlags::default(),
    })
}

/// How long an approval window stays open (I23).
fn window_ttl_ms(agent: &Agent) -> i64 {
    i64::try_from(agent.inner.config.approval_window_ttl.as_millis()).unwrap_or(i64::MAX)
}

/// I23: the model's last word to the operator was a question (`ask_operator`) that no operator
/// message has answered yet, so the next message is its answer, not a plan approval.
fn awaits_answer(agent: &Agent, session: SessionId) -> Result<bool, AgentError> {
    let transcript = agent.inner.store.transcript(session)?;
    let last = transcript.messages.iter().rev().find(|m| match m.role {
        Role::User => true,
        Role::Assistant => !m.tool_calls.is_empty() || !m.text.trim().is_empty(),
        Role::System => false,
    });
    Ok(last.is_some_and(|m| {
        m.role == Role::Assistant && m.tool_calls.iter().any(|c| c.name == "ask_operator")
    }))
}

pub(crate) async fn approve_plan(
    agent: &Agent,
    session: SessionId,
    generation: i64,
) -> Result<(), AgentError> {
    let store = &agent.inner.store;
    let permit = agent
        .inner
        .gates
        .acquire(&agent.inner.store, session, agent.inner.config.gate_wait)
        .await?;
    let row = store.get_session(session)?;
    let plan = store.current_plan(session)?;
    // B5: the button names the generation the operator saw; a plan completed, re-proposed or
    // reopened since is not the one they approved.
    if row.status.is_terminal() || plan.replaced || plan.generation != generation {
        return Err(AgentError::StalePlan {
            session,
            approved: generation,
            current: plan.generation,
            status: row.status.as_str().to_owned(),
        });
    }
    if !plan.in_flight() {
        return Err(AgentError::NothingToApprove(session));
    }
    store.unpause_session(session)?;
    if store.active_approval_window(session)?.is_none() {
        store.open_approval_window(
            session,
            &OperatorApproval::Button { detail: None },
            Some(window_ttl_ms(agent)),
        )?;
    }
    add_note(agent, session, notes::PLAN_APPROVED_BUTTON)?;
    emit_status(agent, session)?;
    run_turn(agent, session, permit, TurnFlags::auto()).await;
    Ok(())
}

/// Runs one turn while holding the session's permit, and always ends it with one `done`.
pub(crate) async fn run_turn(
    agent: &Agent,
    session: SessionId,
    permit: TurnPermit,
    flags: TurnFlags,
) -> bool {
    run_turn_then(agent, session, permit, flags, |_| ()).await.0
}

/// [`run_turn`], then `before_release` (given whether the turn ended well) while the permit
/// is still held: what records that the turn ran (a continuation delivered, a nudge sent) is
/// written before another turn — here or in another process — can start and see it undone.
pub(crate) async fn run_turn_then<T>(
    agent: &Agent,
    session: SessionId,
    permit: TurnPermit,
    flags: TurnFlags,
    before_release: impl FnOnce(bool) -> T,
) -> (bool, T) {
    let cancel = CancellationToken::new();
    if let Ok(mut turns) = agent.inner.turns.lock() {
        turns.insert(session, cancel.clone());
    }
    agent.emit(AgentEvent::TurnStarted {
        session_id: session,
        auto: flags.auto,
    });
    let result = iterate(agent, session, &flags, &cancel).await;
    let error = match result {
        Ok(()) => false,
        Err(end) => {
            agent.emit(AgentEvent::Error {
                session_id: session,
                code: nomos_protocol::ErrorCode::from_code(end.code),
                message: end.message,
                retryable: end.retryable,
            });
            true
        }
    };
    let after = before_release(!error);
    if let Ok(mut turns) = agent.inner.turns.lock() {
        turns.remove(&session);
    }
    drop(permit);
    agent.emit(AgentEvent::Done {
        session_id: session,
        error,
    });
    (!error, after)
}

/// Why a turn ended early, for the operator.
#[derive(Debug)]
pub(crate) struct TurnEnd {
    pub code: &'static str,
    pub message: String,
    pub retryable: bool,
}

impl TurnEnd {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: false,
        }
    }
}

impl From<AgentError> for TurnEnd {
    fn from(e: AgentError) -> Self {
        Self {
            code: e.code(),
            retryable: e.is_retryable(),
            message: e.to_string(),
        }
    }
}

impl From<nomos_store::StoreError> for TurnEnd {
    fn from(e: nomos_store::StoreError) -> Self {
        AgentError::from(e).into()
    }
}

fn llm_end(e: &LlmError) -> TurnEnd {
    TurnEnd {
        code: e.code(),
        // The provider's own words reach the operator (status, message, finish reason).
        message: e.to_string(),
        retryable: e.is_retryable(),
    }
}

async fn iterate(
    agent: &Agent,
    session: SessionId,
    flags: &TurnFlags,
    cancel: &CancellationToken,
) -> Result<(), TurnEnd> {
    let config = &agent.inner.config;
    let store = &agent.inner.store;
    let mut identical: HashMap<(String, String), u32> = HashMap::new();
    let deadline = Instant::now() + config.turn_deadline;

    for _ in 0..config.max_iterations {
        if Instant::now() >= deadline {
            return Err(TurnEnd::new(
                "agent.turn_deadline",
                notes::turn_deadline(config.turn_deadline),
            ));
        }
        let used = agent.inner.tokens_used(session);
        if used > config.session_token_budget {
            return Err(TurnEnd::new(
                "agent.token_budget",
                notes::runaway_budget(used, config.session_token_budget),
            ));
        }
        let placeholder = store.begin_assistant_message(session, flags.auto)?;
        let response = match stream_reply(agent, session, placeholder.id, cancel, deadline).await {
            Ok(r) => r,
            Err(e) => {
                // No empty bubble (I11): an empty placeholder is deleted, a partial one keeps
                // the real error text.
                let error = e.to_string();
                finish(agent, session, placeholder.id, Some(&error))?;
                return Err(if matches!(e, LlmError::Cancelled) {
                    TurnEnd::new("agent.stopped", "Stopped by the operator.")
                } else {
                    llm_end(&e)
                });
            }
        };
        if let Some(usage) = &response.usage {
            agent.inner.add_tokens(session, usage.total_tokens);
        }
        if !response.reasoning.is_empty() {
            store.append_reasoning(placeholder.id, &response.reasoning)?;
        }
        if !response.text.is_empty() {
            store.append_text(placeholder.id, &response.text)?;
        }
        // I16: every call stored once, before it runs, so a crash leaves a faithful record.
        for call in &response.tool_calls {
            let row =
                store.record_tool_call(placeholder.id, &call.id, &call.name, &call.arguments)?;
            agent.emit(AgentEvent::ToolCall {
                session_id: session,
                message_id: placeholder.id,
                call: convert::tool_call(&row),
            });
        }
        let mut end_turn = response.tool_calls.is_empty();
        let mut runaway = None;
        for call in &response.tool_calls {
            let key = (call.name.clone(), call.arguments.clone());
            let seen = identical.entry(key).or_insert(0);
            *seen += 1;
            let outcome = if *seen >= config.max_identical_calls {
                runaway = Some(notes::runaway_identical(&call.name, *seen));
                tools::ToolOutcome::error(notes::runaway_identical(&call.name, *seen))
            } else if cancel.is_cancelled() {
                tools::ToolOutcome::error("Not run: the operator stopped the turn.".to_owned())
            } else {
                tools::dispatch(agent, session, flags, call, cancel).await
            };
            // Masked here too, so the live event carries what the store keeps (A6).
            let result = nomos_store::redact(&tools::cap_result(
                &outcome.text,
                config.max_tool_result_chars,
            ))
            .into_owned();
            store.set_tool_result(placeholder.id, &call.id, &result, outcome.is_error)?;
            store.record_audit(&nomos_store::NewAudit {
                session_id: Some(session),
                message_id: Some(placeholder.id),
                call_id: Some(call.id.clone()),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
                result_summary: result.chars().take(400).collect(),
                ok: !outcome.is_error,
                duration_ms: None,
            })?;
            agent.emit(AgentEvent::ToolResult {
                session_id: session,
                message_id: placeholder.id,
                call_id: call.id.clone(),
                name: call.name.clone(),
                result,
                is_error: outcome.is_error,
            });
            end_turn |= outcome.ends_turn;
        }
        finish(agent, session, placeholder.id, None)?;
        if let Some(message) = runaway {
            return Err(TurnEnd::new("agent.runaway", message));
        }
        if cancel.is_cancelled() {
            return Err(TurnEnd::new("agent.stopped", "Stopped by the operator."));
        }
        if end_turn {
            return Ok(());
        }
    }
    Err(TurnEnd::new(
        "agent.runaway",
        notes::runaway_iterations(config.max_iterations),
    ))
}

fn finish(
    agent: &Agent,
    session: SessionId,
    message: i64,
    error: Option<&str>,
) -> Result<(), TurnEnd> {
    match agent.inner.store.finish_message(message, error)? {
        FinishedMessage::Kept(m) => agent.emit(AgentEvent::Message {
            session_id: session,
            message: convert::message(&m),
        }),
        FinishedMessage::Deleted { .. } => {}
    }
    Ok(())
}

/// One model reply, with retries: the provider's own retries for 429/5xx/cut streams, and
/// up to `empty_reply_retries` retries after an empty reply, each with its escalating note and
/// backoff (I11). A stop is never retried (I10).
async fn stream_reply(
    agent: &Agent,
    session: SessionId,
    message_id: i64,
    cancel: &CancellationToken,
    deadline: Instant,
) -> Result<nomos_llm::ChatResponse, LlmError> {
    let config = &agent.inner.config;
    let mut policy = config.model_retry.clone();
    // The turn's own deadline bounds its model calls too.
    policy.max_total = policy
        .max_total
        .min(deadline.saturating_duration_since(Instant::now()));
    let retrier = nomos_llm::Retrier::new(policy);
    let mut extra = Vec::new();
    let mut attempt = 0;
    loop {
        let request = build_request(agent, session, &extra).map_err(|e| LlmError::Config {
            message: e.to_string(),
        })?;
        let mut sink = |event: StreamEvent| match event {
            StreamEvent::TextDelta(delta) => agent.emit(AgentEvent::TextDelta {
                session_id: session,
                message_id,
                delta,
            }),
            StreamEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                code,
                reason,
                ..
            } => {
                // The failed attempt's partial text is void: every face drops it (never
                // appends the next attempt to it) and shows why the request is sent again.
                agent.emit(AgentEvent::ModelRetrying {
                    session_id: session,
                    message_id,
                    attempt,
                    max_attempts,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    code: code.to_owned(),
                    notice: format!("{reason} — retrying ({attempt}/{max_attempts})"),
                });
                if let Ok(m) = agent.inner.store.get_message(message_id) {
                    agent.emit(AgentEvent::Message {
                        session_id: session,
                        message: convert::message(&m),
                    });
                }
            }
            _ => {}
        };
        match nomos_llm::stream_with_retries(
            agent.inner.provider.as_ref(),
            &request,
            &mut sink,
            cancel,
            &retrier,
        )
        .await
        {
            Err(LlmError::EmptyReply { .. }) if attempt < config.empty_reply_retries => {
                attempt += 1;
                extra.push(notes::empty_reply(attempt));
                let pause = config.empty_reply_backoff * 2u32.saturating_pow(attempt - 1);
                tokio::select! {
                    _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                    _ = tokio::time::sleep(pause) => {}
                }
            }
            other => return other,
        }
    }
}

/// The request for the next iteration: the soul, then the transcript replayed faithfully
/// (I16), then any ephemeral notes.
pub(crate) fn build_request(
    agent: &Agent,
    session: SessionId,
    extra: &[String],
) -> Result<ChatRequest, AgentError> {
    let transcript = agent.inner.store.transcript(session)?;
    let mut messages = Vec::with_capacity(transcript.messages.len() * 2);
    for m in &transcript.messages {
        match m.role {
            Role::User => messages.push(LlmMessage::user(m.text.clone())),
            Role::System => messages.push(LlmMessage::user(format!("[Nomos] {}", m.text))),
            Role::Assistant => {
                if m.pending || (m.text.trim().is_empty() && m.tool_calls.is_empty()) {
                    continue;
                }
                messages.push(LlmMessage::Assistant {
                    content: m.text.clone(),
                    tool_calls: m
                        .tool_calls
                        .iter()
                        .map(|c| LlmToolCall {
                            id: c.call_id.clone(),
                            name: c.name.clone(),
                            arguments: c.arguments.clone(),
                        })
                        .collect(),
                });
                for c in &m.tool_calls {
                    messages.push(LlmMessage::Tool {
                        tool_call_id: c.call_id.clone(),
                        name: c.name.clone(),
                        content: c.result.clone().unwrap_or_else(|| {
                            "No result recorded: the turn was interrupted.".to_owned()
                        }),
                        is_error: c.is_error || c.result.is_none(),
                    });
                }
            }
        }
    }
    for note in extra {
        messages.push(LlmMessage::user(format!("[Nomos] {note}")));
    }
    Ok(ChatRequest {
        model: agent.inner.config.model.clone(),
        system: Some(system_prompt(agent, &transcript.session)),
        messages,
        tools: tools::specs(),
        max_tokens: agent.inner.config.max_tokens,
        temperature: None,
    })
}

fn system_prompt(agent: &Agent, session: &nomos_store::Session) -> String {
    let targets: Vec<String> = agent
        .inner
        .inventory
        .read()
        .map(|inv| inv.targets().map(|t| t.slug.to_string()).collect())
        .unwrap_or_default();
    format!(
        "{}\n\n## This session\n\n- status: {}\n- goal: {}\n- plan generation: {}\n- targets: {}\n",
        crate::SOUL,
        session.status.as_str(),
        session.goal.as_deref().unwrap_or("(not set)"),
        session.plan_generation,
        if targets.is_empty() {
            "(none)".to_owned()
        } else {
            targets.join(", ")
        },
    )
}

/// Time a background worker waits between ticks when nothing woke it.
pub(crate) const WORKER_TICK: Duration = Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use super::is_state_complaint;

    #[test]
    fn i17_complaints_about_the_panel_are_recognised_and_instructions_are_not() {
        for t in [
            "the plan panel still shows step 1 pending, it doesn't match the chat",
            "Chat and panel disagree",
            "the UI is out of sync with what you said",
            "plan panel didn't update",
        ] {
            assert!(is_state_complaint(t), "{t}");
        }
        for t in [
            "the chat says nginx is down, restart it",
            "show me the panel of disks",
            "what's wrong with the screen session on web-01?",
        ] {
            assert!(!is_state_complaint(t), "{t}");
        }
    }
}
