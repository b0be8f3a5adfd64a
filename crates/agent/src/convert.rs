//! Store rows → wire DTOs for events and views.

use nomos_protocol as wire;
use nomos_store as store;

use crate::AgentError;

pub fn session_status(s: store::SessionStatus) -> wire::SessionStatus {
    match s {
        store::SessionStatus::Idle => wire::SessionStatus::Idle,
        store::SessionStatus::Planning => wire::SessionStatus::Planning,
        store::SessionStatus::Executing => wire::SessionStatus::Executing,
        store::SessionStatus::Done => wire::SessionStatus::Done,
        store::SessionStatus::Partial => wire::SessionStatus::Partial,
        store::SessionStatus::Failed => wire::SessionStatus::Failed,
        store::SessionStatus::Abandoned => wire::SessionStatus::Abandoned,
    }
}

pub fn outcome(o: store::Outcome) -> wire::Outcome {
    match o {
        store::Outcome::Success => wire::Outcome::Success,
        store::Outcome::Partial => wire::Outcome::Partial,
        store::Outcome::Failed => wire::Outcome::Failed,
        store::Outcome::Abandoned => wire::Outcome::Abandoned,
    }
}

pub fn session(s: &store::Session) -> wire::SessionSummary {
    wire::SessionSummary {
        id: s.id,
        title: s.title.clone(),
        goal: s.goal.clone(),
        status: session_status(s.status),
        outcome: s.outcome.map(outcome),
        summary: s.summary.clone(),
        created_at_ms: s.created_at_ms,
        last_active_at_ms: s.last_active_at_ms,
        demo: s.demo,
    }
}

pub fn session_summary(s: store::SessionSummary) -> wire::SessionSummary {
    wire::SessionSummary {
        id: s.id,
        title: s.title,
        goal: s.goal,
        status: session_status(s.status),
        outcome: s.outcome.map(outcome),
        summary: s.summary,
        created_at_ms: s.created_at_ms,
        last_active_at_ms: s.last_active_at_ms,
        demo: s.demo,
    }
}

pub fn class(c: store::CommandClass) -> wire::CommandClass {
    match c {
        store::CommandClass::ReadOnly => wire::CommandClass::ReadOnly,
        store::CommandClass::ConfigMutation => wire::CommandClass::ConfigMutation,
        store::CommandClass::Destructive => wire::CommandClass::Destructive,
    }
}

fn step_status(s: store::StepStatus) -> wire::StepStatus {
    match s {
        store::StepStatus::Pending => wire::StepStatus::Pending,
        store::StepStatus::Running => wire::StepStatus::Running,
        store::StepStatus::Done => wire::StepStatus::Done,
        store::StepStatus::Failed => wire::StepStatus::Failed,
        store::StepStatus::Skipped => wire::StepStatus::Skipped,
        store::StepStatus::Replaced => wire::StepStatus::Replaced,
    }
}

pub fn plan_step(s: &store::PlanStep) -> wire::PlanStep {
    wire::PlanStep {
        id: s.id,
        generation: s.generation,
        seq: s.seq,
        title: s.title.clone(),
        detail: s.detail.clone(),
        target: s.target.clone(),
        status: step_status(s.status),
        note: s.note.clone(),
    }
}

fn exec_status(s: store::ExecStatus) -> wire::ExecStatus {
    match s {
        store::ExecStatus::Queued => wire::ExecStatus::Queued,
        store::ExecStatus::AwaitingApproval => wire::ExecStatus::AwaitingApproval,
        store::ExecStatus::Running => wire::ExecStatus::Running,
        store::ExecStatus::Finished => wire::ExecStatus::Finished,
        store::ExecStatus::Failed => wire::ExecStatus::Failed,
        store::ExecStatus::Cancelled => wire::ExecStatus::Cancelled,
        store::ExecStatus::TimedOut => wire::ExecStatus::TimedOut,
    }
}

fn approval_kind(k: store::ApprovalKind) -> wire::ApprovalKind {
    match k {
        store::ApprovalKind::NotNeeded => wire::ApprovalKind::NotNeeded,
        store::ApprovalKind::OperatorButton => wire::ApprovalKind::OperatorButton,
        store::ApprovalKind::ChatApproval => wire::ApprovalKind::ChatApproval,
        store::ApprovalKind::Window => wire::ApprovalKind::Window,
    }
}

pub fn execution(e: &store::Execution) -> wire::Execution {
    wire::Execution {
        id: e.id,
        session_id: e.session_id,
        call_id: e.call_id.clone(),
        target: e.target.clone(),
        command: e.command.clone(),
        canonical: e.canonical.clone(),
        class: class(e.class),
        reason: e.decision_reason.clone(),
        status: exec_status(e.status),
        approval: e.approval.map(approval_kind),
        exit_code: e.exit_code,
        duration_ms: e.duration_ms,
        stdout: e.stdout.clone(),
        stderr: e.stderr.clone(),
        created_at_ms: e.created_at_ms,
        generation: e.generation,
        plan_step_id: e.plan_step_id,
        error: e.error.clone(),
    }
}

fn role(r: store::Role) -> wire::Role {
    match r {
        store::Role::User => wire::Role::User,
        store::Role::Assistant => wire::Role::Assistant,
        store::Role::System => wire::Role::System,
    }
}

pub fn message(m: &store::Message) -> wire::Message {
    wire::Message {
        id: m.id,
        role: role(m.role),
        text: m.text.clone(),
        pending: m.pending,
        auto: m.auto,
        error: m.error.clone(),
        tool_calls: m.tool_calls.iter().map(tool_call).collect(),
        created_at_ms: m.created_at_ms,
    }
}

pub fn tool_call(c: &store::ToolCall) -> wire::ToolCall {
    wire::ToolCall {
        call_id: c.call_id.clone(),
        name: c.name.clone(),
        arguments: c.arguments.clone(),
        result: c.result.clone(),
        is_error: c.is_error,
    }
}

pub fn session_view(
    st: &store::Store,
    id: store::SessionId,
) -> Result<wire::SessionView, AgentError> {
    let transcript = st.transcript(id)?;
    let plan = st.plan_history(id)?;
    let executions = st.executions(id)?;
    let approval_open = st.active_approval_window(id)?.is_some();
    Ok(wire::SessionView {
        session: session(&transcript.session),
        messages: transcript.messages.iter().map(message).collect(),
        older: false,
        newer: false,
        generation_before: 0,
        plan: plan.iter().map(plan_step).collect(),
        executions: executions.iter().map(execution).collect(),
        approval_open,
    })
}

/// A session as the window opens it: one page of messages (`at`, at most `limit`) with the
/// executions that page shows, the plan and the approval state, read in one snapshot. Its
/// cost follows the page, not the session's length.
pub fn session_page(
    st: &store::Store,
    id: store::SessionId,
    at: store::PageAt,
    limit: u32,
) -> Result<wire::SessionView, AgentError> {
    let now = st.now_ms();
    Ok(st.read(|r| {
        let summary = session(&r.session(id)?);
        let (page, executions, generation_before) = page_with_executions(r, id, at, limit)?;
        Ok(wire::SessionView {
            session: summary,
            messages: page.messages.iter().map(message).collect(),
            older: page.older,
            newer: page.newer,
            generation_before,
            plan: r.plan_history(id)?.iter().map(plan_step).collect(),
            executions: executions.iter().map(execution).collect(),
            approval_open: r.active_approval_window(id, now)?.is_some(),
        })
    })?)
}

/// The next page of a session's messages as the operator scrolls (`at`: before or after the
/// loaded ones), with the executions it shows.
pub fn message_page(
    st: &store::Store,
    id: store::SessionId,
    at: store::PageAt,
    limit: u32,
) -> Result<wire::MessagePage, AgentError> {
    Ok(st.read(|r| {
        r.session(id)?;
        let (page, executions, generation_before) = page_with_executions(r, id, at, limit)?;
        Ok(wire::MessagePage {
            messages: page.messages.iter().map(message).collect(),
            older: page.older,
            newer: page.newer,
            generation_before,
            executions: executions.iter().map(execution).collect(),
        })
    })?)
}

/// A page, the executions it shows and the plan generation in force at its first message.
type Page = (store::MessagePage, Vec<store::Execution>, i64);

fn page_with_executions(
    r: &store::Reader<'_>,
    id: store::SessionId,
    at: store::PageAt,
    limit: u32,
) -> Result<Page, store::StoreError> {
    let page = r.message_page(id, at, limit)?;
    let Some((first, last)) = page.messages.first().zip(page.messages.last()) else {
        // An empty page still carries the live executions (first > last: no message).
        return Ok((page, r.executions_for_page(id, 1, 0)?, 0));
    };
    let executions = r.executions_for_page(id, first.id, last.id)?;
    let generation = r.generation_at(id, first.created_at_ms)?;
    Ok((page, executions, generation))
}

// ---- Session search, export and import (the sidebar, `nomos sessions`) ----------------------

fn store_status(s: wire::SessionStatus) -> store::SessionStatus {
    match s {
        wire::SessionStatus::Idle => store::SessionStatus::Idle,
        wire::SessionStatus::Planning => store::SessionStatus::Planning,
        wire::SessionStatus::Executing => store::SessionStatus::Executing,
        wire::SessionStatus::Done => store::SessionStatus::Done,
        wire::SessionStatus::Partial => store::SessionStatus::Partial,
        wire::SessionStatus::Failed => store::SessionStatus::Failed,
        wire::SessionStatus::Abandoned => store::SessionStatus::Abandoned,
    }
}

fn store_outcome(o: wire::Outcome) -> store::Outcome {
    match o {
        wire::Outcome::Success => store::Outcome::Success,
        wire::Outcome::Partial => store::Outcome::Partial,
        wire::Outcome::Failed => store::Outcome::Failed,
        wire::Outcome::Abandoned => store::Outcome::Abandoned,
    }
}

/// The operator's search; the last word matches as a prefix (search as you type).
pub fn search_query(q: wire::SessionSearchQuery) -> store::SessionSearchQuery {
    store::SessionSearchQuery {
        text: q.text,
        prefix: true,
        statuses: q
            .statuses
            .unwrap_or_default()
            .into_iter()
            .map(store_status)
            .collect(),
        outcomes: q
            .outcomes
            .unwrap_or_default()
            .into_iter()
            .map(store_outcome)
            .collect(),
        target: q.target.filter(|t| !t.trim().is_empty()),
        limit: q.limit.unwrap_or(0),
        offset: q.offset.unwrap_or(0),
    }
}

pub fn hit_source(s: store::HitSource) -> wire::HitSource {
    match s {
        store::HitSource::Title => wire::HitSource::Title,
        store::HitSource::Goal => wire::HitSource::Goal,
        store::HitSource::Summary => wire::HitSource::Summary,
        store::HitSource::Message => wire::HitSource::Message,
        store::HitSource::Command => wire::HitSource::Command,
        store::HitSource::Stdout => wire::HitSource::Stdout,
        store::HitSource::Stderr => wire::HitSource::Stderr,
    }
}

pub fn search_page(p: store::SessionSearchPage) -> wire::SessionSearchPage {
    wire::SessionSearchPage {
        hits: p
            .hits
            .into_iter()
            .map(|h| wire::SessionHit {
                session: session_summary(h.session),
                source: hit_source(h.source),
                message_id: h.message_id,
                role: h.role.map(role),
                execution_id: h.execution_id,
                target: h.target,
                snippet: h
                    .snippet
                    .into_iter()
                    .map(|p| wire::SnippetPart {
                        text: p.text,
                        hit: p.hit,
                    })
                    .collect(),
                at_ms: h.at_ms,
            })
            .collect(),
        has_more: p.has_more,
    }
}

pub fn imported(i: store::ImportedSession) -> wire::ImportedSession {
    wire::ImportedSession {
        session: session(&i.session),
        messages: u32::try_from(i.messages).unwrap_or(u32::MAX),
        executions: u32::try_from(i.executions).unwrap_or(u32::MAX),
    }
}

/// A session rendered for saving: the text, a file name built from its id and title, and the
/// media type.
pub fn export_text(
    doc: &store::SessionExport,
    format: wire::ExportFormat,
) -> Result<wire::SessionExportText, store::StoreError> {
    let slug: String = doc
        .session
        .title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|w| !w.is_empty())
        .take(8)
        .collect::<Vec<_>>()
        .join("-");
    let base = format!(
        "nomos-session-{}{}{slug}",
        doc.session.id,
        if slug.is_empty() { "" } else { "-" }
    );
    Ok(match format {
        wire::ExportFormat::Json => wire::SessionExportText {
            file_name: format!("{base}.json"),
            mime: "application/json".into(),
            text: doc.to_json()?,
        },
        wire::ExportFormat::Markdown => wire::SessionExportText {
            file_name: format!("{base}.md"),
            mime: "text/markdown".into(),
            text: doc.to_markdown(),
        },
    })
}
