//! Sessions for offline review: export a session to a versioned JSON document (everything a
//! review needs: the session, its messages and tool calls, every plan generation, the approval
//! windows, the execution ledger with approvals and output, the audit log) or to Markdown,
//! and import such a JSON document as a new session.
//!
//! Never a secret: what the store holds is already masked, and every text is masked again on
//! the way out (a row written before a masking rule existed is caught too) and on the way in.
//! Left out on purpose: the digest of the exact command that ran (`canonical_sha256`: a digest
//! of a text that held a password can be brute-forced offline), process owners and groups,
//! continuation bookkeeping.
//!
//! An import creates a new session (new ids) marked imported, keeps the session's status and
//! runs nothing: its executions can never run (no digest, I22), work that was in flight in the
//! file is recorded as cancelled, approval windows that were open are closed (an imported
//! window never approves anything here), and a live session is paused (I21: nothing resumes
//! it until the operator speaks). A malformed file, or one from a newer format, is a typed
//! error and writes nothing: the whole import is one transaction.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use rusqlite::{OptionalExtension as _, params};
use serde::{Deserialize, Serialize};

use crate::approvals::{ApprovalSource, CloseReason};
use crate::db::{Reader, Store, WriteTx};
use crate::error::StoreError;
use crate::executions::{ApprovalKind, CommandClass, ExecStatus, MAX_OUTPUT_BYTES};
use crate::messages::{MAX_MESSAGE_BYTES, MAX_TOOL_RESULT_BYTES, Role, id_range};
use crate::plan::StepStatus;
use crate::secrets::redact;
use crate::sessions::{Outcome, Session, SessionId, SessionStatus};
use crate::types::{cap_head, cap_text};
use crate::{MAX_AUDIT_ARGUMENTS_BYTES, MAX_AUDIT_SUMMARY_BYTES};

/// The `format` of a session export.
pub const EXPORT_FORMAT: &str = "nomos.session";
/// The newest export format version this build writes and reads.
pub const EXPORT_VERSION: u64 = 1;
/// A file to import larger than this is refused before it is parsed.
pub const MAX_IMPORT_BYTES: usize = 256 * 1024 * 1024;
/// Any one text field of an import other than messages and output (titles, commands,
/// arguments) longer than this is refused.
const MAX_FIELD_BYTES: usize = 1024 * 1024;

/// A session as exported: the JSON document (`format`, `version`) and the source of the
/// Markdown rendering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionExport {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// [`EXPORT_VERSION`] when written by this build.
    pub version: u64,
    /// When the export was made.
    pub exported_at_ms: i64,
    /// The session.
    pub session: ExportSession,
    /// Messages in order, each with its tool calls.
    pub messages: Vec<ExportMessage>,
    /// Every plan generation, oldest first, with its steps.
    pub plan: Vec<ExportGeneration>,
    /// Approval windows the operator opened.
    pub approval_windows: Vec<ExportWindow>,
    /// The execution ledger, oldest first.
    pub executions: Vec<ExportExecution>,
    /// Every tool call as audited, oldest first.
    pub audit: Vec<ExportAudit>,
}

/// The session row of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportSession {
    /// Id in the exporting store.
    pub id: i64,
    /// Title.
    pub title: String,
    /// Goal.
    pub goal: Option<String>,
    /// Status.
    pub status: SessionStatus,
    /// Outcome.
    pub outcome: Option<Outcome>,
    /// Summary.
    pub summary: Option<String>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
    /// Last activity.
    pub last_active_at_ms: i64,
    /// Completion time.
    pub completed_at_ms: Option<i64>,
    /// Set when the exporting store had imported this session itself.
    pub imported: Option<ImportMark>,
    /// A demo session (the scripted model); absent in files from before the field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub demo: bool,
}

/// Where an imported session came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportMark {
    /// When it was imported.
    pub at_ms: i64,
    /// The file it came from (format, version, original id, export time).
    pub from: String,
}

/// A message of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportMessage {
    /// Id in the exporting store (references from windows and the audit log use it).
    pub id: i64,
    /// Role.
    pub role: Role,
    /// Text.
    pub text: String,
    /// Reasoning text.
    pub reasoning: String,
    /// Written by a turn the system started.
    pub auto: bool,
    /// The iteration's error.
    pub error: Option<String>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
    /// Tool calls in order.
    pub tool_calls: Vec<ExportToolCall>,
}

/// A tool call of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportToolCall {
    /// The provider's call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as the model sent them.
    pub arguments: String,
    /// Result given to the model.
    pub result: Option<String>,
    /// The result was truncated.
    pub result_truncated: bool,
    /// The result is an error.
    pub is_error: bool,
    /// When the call was made.
    pub created_at_ms: i64,
    /// When its result came.
    pub finished_at_ms: Option<i64>,
}

/// A plan generation of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportGeneration {
    /// 1, 2, …
    pub generation: i64,
    /// When it was proposed.
    pub proposed_at_ms: i64,
    /// When a later generation or a reopen replaced it.
    pub replaced_at_ms: Option<i64>,
    /// Runs that finished under it (I6).
    pub runs_finished: i64,
    /// Facts written under it (I6).
    pub fact_writes: i64,
    /// Knowledge entries written under it.
    pub knowledge_upserts: i64,
    /// Its steps in order.
    pub steps: Vec<ExportStep>,
}

/// A plan step of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportStep {
    /// Position from 1.
    pub seq: i64,
    /// Title.
    pub title: String,
    /// Detail.
    pub detail: Option<String>,
    /// Target.
    pub target: Option<String>,
    /// Status.
    pub status: StepStatus,
    /// Status before it was replaced.
    pub status_before_replace: Option<StepStatus>,
    /// A write-back step.
    pub write_back: bool,
    /// Last note.
    pub note: Option<String>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
    /// Start time.
    pub started_at_ms: Option<i64>,
    /// End time.
    pub finished_at_ms: Option<i64>,
}

/// An approval window of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportWindow {
    /// Id in the exporting store.
    pub id: i64,
    /// The plan generation it approved.
    pub generation: i64,
    /// How the operator opened it.
    pub source: ApprovalSource,
    /// The operator's approving message (export id).
    pub message_id: Option<i64>,
    /// Detail.
    pub detail: Option<String>,
    /// Opening time.
    pub opened_at_ms: i64,
    /// Expiry.
    pub expires_at_ms: Option<i64>,
    /// Closing time.
    pub closed_at_ms: Option<i64>,
    /// Why it closed.
    pub close_reason: Option<CloseReason>,
}

/// An execution of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportExecution {
    /// Id in the exporting store.
    pub id: i64,
    /// Plan generation.
    pub generation: Option<i64>,
    /// The step (seq in that generation) it served.
    pub step_seq: Option<i64>,
    /// The tool call that asked for it.
    pub call_id: Option<String>,
    /// Target.
    pub target: String,
    /// Command as written (display copy).
    pub command: String,
    /// Canonical form (display copy).
    pub canonical: String,
    /// Classifier class.
    pub class: CommandClass,
    /// Classifier reason.
    pub decision_reason: String,
    /// Full classifier decision.
    pub decision: Option<serde_json::Value>,
    /// Who or what approved it.
    pub approval: Option<ApprovalKind>,
    /// Approved by.
    pub approved_by: Option<String>,
    /// The window that approved it (export id).
    pub approval_window_id: Option<i64>,
    /// Approval time.
    pub approved_at_ms: Option<i64>,
    /// Status.
    pub status: ExecStatus,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Failure reason.
    pub error: Option<String>,
    /// Captured stdout (capped, masked).
    pub stdout: String,
    /// Captured stderr (capped, masked).
    pub stderr: String,
    /// Original stdout size.
    pub stdout_bytes: i64,
    /// Original stderr size.
    pub stderr_bytes: i64,
    /// stdout was cut.
    pub stdout_truncated: bool,
    /// stderr was cut.
    pub stderr_truncated: bool,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
    /// Start time.
    pub started_at_ms: Option<i64>,
    /// End time.
    pub finished_at_ms: Option<i64>,
    /// Duration.
    pub duration_ms: Option<i64>,
    /// Ran on after `run` returned.
    pub background: bool,
}

/// An audit row of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportAudit {
    /// Id in the exporting store.
    pub id: i64,
    /// Plan generation at the time.
    pub generation: Option<i64>,
    /// The assistant message (export id).
    pub message_id: Option<i64>,
    /// Call id.
    pub call_id: Option<String>,
    /// Tool.
    pub tool: String,
    /// Arguments.
    pub arguments: String,
    /// Result summary.
    pub result_summary: String,
    /// Success.
    pub ok: bool,
    /// Duration.
    pub duration_ms: Option<i64>,
    /// Time.
    pub created_at_ms: i64,
}

/// Result of [`Store::import_session_json`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportedSession {
    /// The new session.
    pub session: Session,
    /// Messages written.
    pub messages: usize,
    /// Executions written.
    pub executions: usize,
}

fn m(s: &str) -> String {
    redact(s).into_owned()
}

fn mo(s: Option<String>) -> Option<String> {
    s.map(|s| m(&s))
}

impl Reader<'_> {
    /// The export document of a session.
    pub fn export_session(&self, id: SessionId, now_ms: i64) -> Result<SessionExport, StoreError> {
        let s = self.session(id)?;
        let (imported_at, imported_from): (Option<i64>, Option<String>) = self.c.query_row(
            "SELECT imported_at_ms, imported_from FROM sessions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let session = ExportSession {
            id: s.id,
            title: m(&s.title),
            goal: mo(s.goal),
            status: s.status,
            outcome: s.outcome,
            summary: mo(s.summary),
            created_at_ms: s.created_at_ms,
            updated_at_ms: s.updated_at_ms,
            last_active_at_ms: s.last_active_at_ms,
            completed_at_ms: s.completed_at_ms,
            imported: imported_at.map(|at_ms| ImportMark {
                at_ms,
                from: imported_from.unwrap_or_default(),
            }),
            demo: s.demo,
        };
        let messages = self
            .all_messages(id)?
            .into_iter()
            .map(|msg| ExportMessage {
                id: msg.id,
                role: msg.role,
                text: m(&msg.text),
                reasoning: m(&msg.reasoning),
                auto: msg.auto,
                error: mo(msg.error),
                created_at_ms: msg.created_at_ms,
                updated_at_ms: msg.updated_at_ms,
                tool_calls: msg
                    .tool_calls
                    .into_iter()
                    .map(|c| ExportToolCall {
                        call_id: c.call_id,
                        name: c.name,
                        arguments: m(&c.arguments),
                        result: mo(c.result),
                        result_truncated: c.result_truncated,
                        is_error: c.is_error,
                        created_at_ms: c.created_at_ms,
                        finished_at_ms: c.finished_at_ms,
                    })
                    .collect(),
            })
            .collect();
        let mut plan: Vec<ExportGeneration> = self
            .c
            .prepare_cached(
                "SELECT generation, proposed_at_ms, replaced_at_ms, runs_finished, fact_writes,
                        knowledge_upserts
                 FROM plan_generations WHERE session_id = ?1 ORDER BY generation",
            )?
            .query_map([id], |r| {
                Ok(ExportGeneration {
                    generation: r.get(0)?,
                    proposed_at_ms: r.get(1)?,
                    replaced_at_ms: r.get(2)?,
                    runs_finished: r.get(3)?,
                    fact_writes: r.get(4)?,
                    knowledge_upserts: r.get(5)?,
                    steps: Vec::new(),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut step_seq: HashMap<i64, i64> = HashMap::new();
        for st in self.plan_history(id)? {
            step_seq.insert(st.id, st.seq);
            if let Some(g) = plan.iter_mut().find(|g| g.generation == st.generation) {
                g.steps.push(ExportStep {
                    seq: st.seq,
                    title: m(&st.title),
                    detail: mo(st.detail),
                    target: st.target,
                    status: st.status,
                    status_before_replace: st.status_before_replace,
                    write_back: st.write_back,
                    note: mo(st.note),
                    created_at_ms: st.created_at_ms,
                    updated_at_ms: st.updated_at_ms,
                    started_at_ms: st.started_at_ms,
                    finished_at_ms: st.finished_at_ms,
                });
            }
        }
        let approval_windows = self
            .approval_windows(id)?
            .into_iter()
            .map(|w| ExportWindow {
                id: w.id,
                generation: w.generation,
                source: w.source,
                message_id: w.message_id,
                detail: mo(w.detail),
                opened_at_ms: w.opened_at_ms,
                expires_at_ms: w.expires_at_ms,
                closed_at_ms: w.closed_at_ms,
                close_reason: w.close_reason,
            })
            .collect();
        let executions = self
            .executions(id)?
            .into_iter()
            .map(|e| ExportExecution {
                id: e.id,
                generation: e.generation,
                step_seq: e.plan_step_id.and_then(|p| step_seq.get(&p).copied()),
                call_id: e.call_id,
                target: e.target,
                command: m(&e.command),
                canonical: m(&e.canonical),
                class: e.class,
                decision_reason: m(&e.decision_reason),
                decision: e.decision.map(mask_json),
                approval: e.approval,
                approved_by: mo(e.approved_by),
                approval_window_id: e.approval_window_id,
                approved_at_ms: e.approved_at_ms,
                status: e.status,
                exit_code: e.exit_code,
                error: mo(e.error),
                stdout: m(&e.stdout),
                stderr: m(&e.stderr),
                stdout_bytes: e.stdout_bytes,
                stderr_bytes: e.stderr_bytes,
                stdout_truncated: e.stdout_truncated,
                stderr_truncated: e.stderr_truncated,
                created_at_ms: e.created_at_ms,
                updated_at_ms: e.updated_at_ms,
                started_at_ms: e.started_at_ms,
                finished_at_ms: e.finished_at_ms,
                duration_ms: e.duration_ms,
                background: e.background,
            })
            .collect();
        let audit = self
            .audit_log(id, 0)?
            .into_iter()
            .map(|a| ExportAudit {
                id: a.id,
                generation: a.generation,
                message_id: a.message_id,
                call_id: a.call_id,
                tool: a.tool,
                arguments: m(&a.arguments),
                result_summary: m(&a.result_summary),
                ok: a.ok,
                duration_ms: a.duration_ms,
                created_at_ms: a.created_at_ms,
            })
            .collect();
        Ok(SessionExport {
            format: EXPORT_FORMAT.to_owned(),
            version: EXPORT_VERSION,
            exported_at_ms: now_ms,
            session,
            messages,
            plan,
            approval_windows,
            executions,
            audit,
        })
    }
}

/// Mask every string inside a JSON value.
fn mask_json(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => Value::String(m(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(mask_json).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, mask_json(v))).collect()),
        other => other,
    }
}

/// Only `format` and `version`, read first so a newer file is named as such, not as
/// malformed.
#[derive(Deserialize)]
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

impl SessionExport {
    /// Parse an export document. A file from a newer format version is
    /// [`StoreError::ImportVersion`]; anything else that is not a valid document is
    /// [`StoreError::ImportInvalid`] saying what and where.
    pub fn from_json(text: &str) -> Result<SessionExport, StoreError> {
        if text.len() > MAX_IMPORT_BYTES {
            return Err(StoreError::import(format!(
                "the file is {} bytes; at most {MAX_IMPORT_BYTES} bytes are read",
                text.len()
            )));
        }
        let header: Header = serde_json::from_str(text)
            .map_err(|e| StoreError::import(format!("not a JSON object ({e})")))?;
        match header.format.as_ref().and_then(|f| f.as_str()) {
            Some(EXPORT_FORMAT) => {}
            Some(other) => {
                return Err(StoreError::import(format!(
                    "its format is {:?}, not {EXPORT_FORMAT:?}",
                    other.chars().take(64).collect::<String>()
                )));
            }
            None => {
                return Err(StoreError::import(format!(
                    "the field `format` (\"{EXPORT_FORMAT}\") is missing or not a string"
                )));
            }
        }
        let version = header
            .version
            .as_ref()
            .and_then(serde_json::Value::as_u64)
            .filter(|v| *v >= 1)
            .ok_or_else(|| {
                StoreError::import("the field `version` is missing or not a positive integer")
            })?;
        if version > EXPORT_VERSION {
            return Err(StoreError::ImportVersion {
                found: version,
                supported: EXPORT_VERSION,
            });
        }
        serde_json::from_str(text).map_err(|e| StoreError::import(e.to_string()))
    }

    /// The JSON document, pretty-printed.
    pub fn to_json(&self) -> Result<String, StoreError> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

fn limit(what: &str, s: &str, max: usize) -> Result<(), StoreError> {
    if s.len() > max {
        return Err(StoreError::import(format!(
            "{what} is {} bytes long; at most {max} bytes are accepted",
            s.len()
        )));
    }
    Ok(())
}

fn limit_opt(what: &str, s: Option<&str>, max: usize) -> Result<(), StoreError> {
    s.map_or(Ok(()), |s| limit(what, s, max))
}

/// Check the document before anything is written: sizes, ids unique and in order, every
/// reference resolvable.
fn validate(doc: &SessionExport) -> Result<(), StoreError> {
    let s = &doc.session;
    if s.title.trim().is_empty() {
        return Err(StoreError::import("the session title is empty"));
    }
    limit("the session title", &s.title, MAX_FIELD_BYTES)?;
    limit_opt("the goal", s.goal.as_deref(), MAX_FIELD_BYTES)?;
    limit_opt("the summary", s.summary.as_deref(), MAX_FIELD_BYTES)?;
    if u32::try_from(doc.messages.len()).is_err() {
        return Err(StoreError::import("too many messages"));
    }
    let mut last = None;
    for (i, msg) in doc.messages.iter().enumerate() {
        if last.is_some_and(|l| msg.id <= l) {
            return Err(StoreError::import(format!(
                "messages[{i}]: id {} is a duplicate or out of order (ids must increase)",
                msg.id
            )));
        }
        last = Some(msg.id);
        limit(&format!("messages[{i}].text"), &msg.text, MAX_MESSAGE_BYTES)?;
        limit(
            &format!("messages[{i}].reasoning"),
            &msg.reasoning,
            MAX_MESSAGE_BYTES,
        )?;
        limit_opt(
            &format!("messages[{i}].error"),
            msg.error.as_deref(),
            MAX_FIELD_BYTES,
        )?;
        if msg.text.trim().is_empty()
            && msg.reasoning.trim().is_empty()
            && msg.tool_calls.is_empty()
        {
            return Err(StoreError::import(format!(
                "messages[{i}] is empty (no text, reasoning or tool call)"
            )));
        }
        let mut calls = HashSet::new();
        for (j, c) in msg.tool_calls.iter().enumerate() {
            if !calls.insert(c.call_id.as_str()) {
                return Err(StoreError::import(format!(
                    "messages[{i}].tool_calls[{j}]: call id {:?} appears twice in the message",
                    c.call_id.chars().take(64).collect::<String>()
                )));
            }
            let at = format!("messages[{i}].tool_calls[{j}]");
            limit(&format!("{at}.call_id"), &c.call_id, 1024)?;
            limit(&format!("{at}.name"), &c.name, 1024)?;
            limit(&format!("{at}.arguments"), &c.arguments, MAX_FIELD_BYTES)?;
            limit_opt(
                &format!("{at}.result"),
                c.result.as_deref(),
                MAX_MESSAGE_BYTES,
            )?;
        }
    }
    let message_ids: HashSet<i64> = doc.messages.iter().map(|m| m.id).collect();
    let mut gens = HashMap::new();
    let mut last = 0;
    for (i, g) in doc.plan.iter().enumerate() {
        if g.generation <= last {
            return Err(StoreError::import(format!(
                "plan[{i}]: generation {} is a duplicate, out of order or below 1",
                g.generation
            )));
        }
        last = g.generation;
        let mut seqs = HashSet::new();
        for (j, st) in g.steps.iter().enumerate() {
            if st.seq < 1 || !seqs.insert(st.seq) {
                return Err(StoreError::import(format!(
                    "plan[{i}].steps[{j}]: seq {} is a duplicate or below 1",
                    st.seq
                )));
            }
            if st.title.trim().is_empty() {
                return Err(StoreError::import(format!(
                    "plan[{i}].steps[{j}]: the title is empty"
                )));
            }
            let at = format!("plan[{i}].steps[{j}]");
            limit(&format!("{at}.title"), &st.title, MAX_FIELD_BYTES)?;
            limit_opt(
                &format!("{at}.detail"),
                st.detail.as_deref(),
                MAX_FIELD_BYTES,
            )?;
            limit_opt(
                &format!("{at}.target"),
                st.target.as_deref(),
                MAX_FIELD_BYTES,
            )?;
            limit_opt(&format!("{at}.note"), st.note.as_deref(), MAX_FIELD_BYTES)?;
        }
        gens.insert(g.generation, seqs);
    }
    let mut windows = HashSet::new();
    for (i, w) in doc.approval_windows.iter().enumerate() {
        if !windows.insert(w.id) {
            return Err(StoreError::import(format!(
                "approval_windows[{i}]: id {} appears twice",
                w.id
            )));
        }
        if !gens.contains_key(&w.generation) {
            return Err(StoreError::import(format!(
                "approval_windows[{i}]: plan generation {} is not in the file",
                w.generation
            )));
        }
        if let Some(mid) = w.message_id
            && !message_ids.contains(&mid)
        {
            return Err(StoreError::import(format!(
                "approval_windows[{i}]: message {mid} is not in the file"
            )));
        }
        limit_opt(
            &format!("approval_windows[{i}].detail"),
            w.detail.as_deref(),
            MAX_FIELD_BYTES,
        )?;
    }
    let mut execs = HashSet::new();
    for (i, e) in doc.executions.iter().enumerate() {
        let at = format!("executions[{i}]");
        if !execs.insert(e.id) {
            return Err(StoreError::import(format!(
                "{at}: id {} appears twice",
                e.id
            )));
        }
        if e.target.trim().is_empty() || e.command.trim().is_empty() {
            return Err(StoreError::import(format!(
                "{at}: the target or the command is empty"
            )));
        }
        if let Some(g) = e.generation {
            let Some(seqs) = gens.get(&g) else {
                return Err(StoreError::import(format!(
                    "{at}: plan generation {g} is not in the file"
                )));
            };
            if let Some(seq) = e.step_seq
                && !seqs.contains(&seq)
            {
                return Err(StoreError::import(format!(
                    "{at}: step {seq} of plan generation {g} is not in the file"
                )));
            }
        } else if e.step_seq.is_some() {
            return Err(StoreError::import(format!(
                "{at}: a step without a plan generation"
            )));
        }
        if let Some(w) = e.approval_window_id
            && !windows.contains(&w)
        {
            return Err(StoreError::import(format!(
                "{at}: approval window {w} is not in the file"
            )));
        }
        limit(&format!("{at}.target"), &e.target, MAX_FIELD_BYTES)?;
        limit(&format!("{at}.command"), &e.command, MAX_FIELD_BYTES)?;
        limit(&format!("{at}.canonical"), &e.canonical, MAX_FIELD_BYTES)?;
        limit(
            &format!("{at}.decision_reason"),
            &e.decision_reason,
            MAX_FIELD_BYTES,
        )?;
        limit_opt(&format!("{at}.call_id"), e.call_id.as_deref(), 1024)?;
        limit_opt(
            &format!("{at}.approved_by"),
            e.approved_by.as_deref(),
            MAX_FIELD_BYTES,
        )?;
        limit_opt(&format!("{at}.error"), e.error.as_deref(), MAX_FIELD_BYTES)?;
        limit(&format!("{at}.stdout"), &e.stdout, MAX_MESSAGE_BYTES)?;
        limit(&format!("{at}.stderr"), &e.stderr, MAX_MESSAGE_BYTES)?;
    }
    let mut audits = HashSet::new();
    for (i, a) in doc.audit.iter().enumerate() {
        if !audits.insert(a.id) {
            return Err(StoreError::import(format!(
                "audit[{i}]: id {} appears twice",
                a.id
            )));
        }
        if let Some(mid) = a.message_id
            && !message_ids.contains(&mid)
        {
            return Err(StoreError::import(format!(
                "audit[{i}]: message {mid} is not in the file"
            )));
        }
        limit(&format!("audit[{i}].tool"), &a.tool, 1024)?;
        limit(
            &format!("audit[{i}].arguments"),
            &a.arguments,
            MAX_FIELD_BYTES,
        )?;
        limit(
            &format!("audit[{i}].result_summary"),
            &a.result_summary,
            MAX_FIELD_BYTES,
        )?;
    }
    Ok(())
}

/// Why an execution that was in flight in the file is recorded as cancelled.
pub const IMPORTED_IN_FLIGHT: &str =
    "Imported while it was in flight elsewhere; it never runs in this Nomos.";

impl WriteTx<'_> {
    /// Import an export document as a new session. See the module documentation.
    pub fn import_session(&self, doc: &SessionExport) -> Result<ImportedSession, StoreError> {
        if doc.format != EXPORT_FORMAT {
            return Err(StoreError::import(format!(
                "its format is not {EXPORT_FORMAT:?}"
            )));
        }
        if doc.version > EXPORT_VERSION {
            return Err(StoreError::ImportVersion {
                found: doc.version,
                supported: EXPORT_VERSION,
            });
        }
        validate(doc)?;
        let s = &doc.session;
        let from = format!(
            "{EXPORT_FORMAT} v{}: session {} exported at {}",
            doc.version, s.id, doc.exported_at_ms
        );
        let paused = (!s.status.is_terminal()).then_some(self.now);
        self.c.execute(
            "INSERT INTO sessions (title, goal, status, outcome, summary, created_at_ms, updated_at_ms,
                 last_active_at_ms, completed_at_ms, paused_at_ms, imported_at_ms, imported_from, demo)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                m(s.title.trim()),
                s.goal.as_deref().map(m),
                s.status,
                s.outcome,
                s.summary.as_deref().map(m),
                s.created_at_ms,
                s.updated_at_ms,
                s.last_active_at_ms,
                s.completed_at_ms,
                paused,
                self.now,
                from,
                s.demo
            ],
        )?;
        let sid = self.c.last_insert_rowid();
        let (lo, _) = id_range(sid);

        // Messages: renumbered in order inside the new session's id range.
        let mut msg_ids: HashMap<i64, i64> = HashMap::new();
        for (n, msg) in doc.messages.iter().enumerate() {
            let new_id = lo + i64::try_from(n).unwrap_or(i64::MAX) + 1;
            msg_ids.insert(msg.id, new_id);
            self.c
                .prepare_cached(
                    "INSERT INTO messages (id, session_id, role, text, reasoning, pending, auto, error,
                         created_at_ms, updated_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7, ?8, ?9)",
                )?
                .execute(params![
                    new_id,
                    sid,
                    msg.role,
                    m(&msg.text),
                    m(&msg.reasoning),
                    msg.auto,
                    msg.error.as_deref().map(m),
                    msg.created_at_ms,
                    msg.updated_at_ms
                ])?;
            for c in &msg.tool_calls {
                let (result, truncated) = match &c.result {
                    Some(r) => {
                        let (r, cut) = cap_text(&m(r), MAX_TOOL_RESULT_BYTES);
                        (Some(r), cut || c.result_truncated)
                    }
                    None => (None, c.result_truncated),
                };
                self.c
                    .prepare_cached(
                        "INSERT INTO tool_calls (message_id, call_id, name, arguments, result,
                             result_truncated, is_error, created_at_ms, finished_at_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )?
                    .execute(params![
                        new_id,
                        c.call_id,
                        c.name,
                        m(&c.arguments),
                        result,
                        truncated,
                        c.is_error,
                        c.created_at_ms,
                        c.finished_at_ms
                    ])?;
            }
        }

        let mut step_ids: HashMap<(i64, i64), i64> = HashMap::new();
        for g in &doc.plan {
            self.c.execute(
                "INSERT INTO plan_generations (session_id, generation, proposed_at_ms, replaced_at_ms,
                     runs_finished, fact_writes, knowledge_upserts)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    sid,
                    g.generation,
                    g.proposed_at_ms,
                    g.replaced_at_ms,
                    g.runs_finished,
                    g.fact_writes,
                    g.knowledge_upserts
                ],
            )?;
            for st in &g.steps {
                self.c.execute(
                    "INSERT INTO plan_steps (session_id, generation, seq, title, detail, target, status,
                         status_before_replace, write_back, note, created_at_ms, updated_at_ms,
                         started_at_ms, finished_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    params![
                        sid,
                        g.generation,
                        st.seq,
                        m(st.title.trim()),
                        st.detail.as_deref().map(m),
                        st.target.as_deref().map(str::trim),
                        st.status,
                        st.status_before_replace,
                        st.write_back,
                        st.note.as_deref().map(m),
                        st.created_at_ms,
                        st.updated_at_ms,
                        st.started_at_ms,
                        st.finished_at_ms
                    ],
                )?;
                step_ids.insert((g.generation, st.seq), self.c.last_insert_rowid());
            }
        }

        // Windows: one that was open in the file is closed here (revoked at import): an
        // imported approval never covers a command in this Nomos.
        let mut window_ids: HashMap<i64, i64> = HashMap::new();
        for w in &doc.approval_windows {
            let (closed, reason) = match w.closed_at_ms {
                Some(at) => (at, w.close_reason.unwrap_or(CloseReason::Revoked)),
                None => (self.now, CloseReason::Revoked),
            };
            self.c.execute(
                "INSERT INTO approval_windows (session_id, generation, source, message_id, detail,
                     opened_at_ms, expires_at_ms, closed_at_ms, close_reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    sid,
                    w.generation,
                    w.source,
                    w.message_id.and_then(|id| msg_ids.get(&id).copied()),
                    w.detail.as_deref().map(m),
                    w.opened_at_ms,
                    w.expires_at_ms,
                    closed,
                    reason
                ],
            )?;
            window_ids.insert(w.id, self.c.last_insert_rowid());
        }

        for e in &doc.executions {
            let (status, error, finished) = if e.status.is_terminal() {
                (e.status, e.error.as_deref().map(m), e.finished_at_ms)
            } else {
                (
                    ExecStatus::Cancelled,
                    Some(IMPORTED_IN_FLIGHT.to_owned()),
                    Some(self.now),
                )
            };
            let (stdout, out_cut) = cap_text(&m(&e.stdout), MAX_OUTPUT_BYTES);
            let (stderr, err_cut) = cap_text(&m(&e.stderr), MAX_OUTPUT_BYTES);
            let decision = e
                .decision
                .clone()
                .map(mask_json)
                .map(|d| serde_json::to_string(&d))
                .transpose()?;
            // No digest: the exact text that was classified is not here, so it never runs
            // (I22). Continued at import: no continuation is owed for it.
            self.c
                .prepare_cached(
                    "INSERT INTO executions (session_id, generation, plan_step_id, call_id, target,
                         command, canonical, class, decision_reason, decision, approval, approved_by,
                         approval_window_id, approved_at_ms, status, exit_code, error, stdout, stderr,
                         stdout_bytes, stderr_bytes, stdout_truncated, stderr_truncated, created_at_ms,
                         updated_at_ms, started_at_ms, finished_at_ms, duration_ms, background,
                         continued_at_ms, continued_via, canonical_sha256, owner)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                         ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, 'note', NULL, NULL)",
                )?
                .execute(params![
                    sid,
                    e.generation,
                    e.generation
                        .zip(e.step_seq)
                        .and_then(|k| step_ids.get(&k).copied()),
                    e.call_id,
                    e.target.trim(),
                    m(&e.command),
                    m(&e.canonical),
                    e.class,
                    m(&e.decision_reason),
                    decision,
                    e.approval,
                    e.approved_by.as_deref().map(m),
                    e.approval_window_id
                        .and_then(|w| window_ids.get(&w).copied()),
                    e.approved_at_ms,
                    status,
                    e.exit_code,
                    error,
                    stdout,
                    stderr,
                    e.stdout_bytes,
                    e.stderr_bytes,
                    e.stdout_truncated || out_cut,
                    e.stderr_truncated || err_cut,
                    e.created_at_ms,
                    e.updated_at_ms,
                    e.started_at_ms,
                    finished,
                    e.duration_ms,
                    e.background,
                    self.now
                ])?;
        }

        for (n, a) in doc.audit.iter().enumerate() {
            let (args, _) = cap_head(&m(&a.arguments), MAX_AUDIT_ARGUMENTS_BYTES);
            let (summary, _) = cap_head(&m(&a.result_summary), MAX_AUDIT_SUMMARY_BYTES);
            self.c
                .prepare_cached(
                    "INSERT INTO audit_log (id, session_id, generation, message_id, call_id, tool,
                         arguments, result_summary, ok, duration_ms, created_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )?
                .execute(params![
                    lo + i64::try_from(n).unwrap_or(i64::MAX) + 1,
                    sid,
                    a.generation,
                    a.message_id.and_then(|id| msg_ids.get(&id).copied()),
                    a.call_id,
                    a.tool,
                    args,
                    summary,
                    a.ok,
                    a.duration_ms,
                    a.created_at_ms
                ])?;
        }
        Ok(ImportedSession {
            session: self.reader().session(sid)?,
            messages: doc.messages.len(),
            executions: doc.executions.len(),
        })
    }
}

impl Store {
    /// The export document of a session, stamped with the store's clock.
    pub fn export_session(&self, id: SessionId) -> Result<SessionExport, StoreError> {
        let now = self.now_ms();
        self.read(|r| r.export_session(id, now))
    }

    /// Parse `text` (a JSON export) and import it as a new session, in one transaction:
    /// any error writes nothing.
    pub fn import_session_json(&self, text: &str) -> Result<ImportedSession, StoreError> {
        let doc = SessionExport::from_json(text)?;
        self.write(|w| w.import_session(&doc))
    }

    /// Whether (and from where) a session was imported.
    pub fn import_mark(&self, id: SessionId) -> Result<Option<ImportMark>, StoreError> {
        self.read(|r| {
            let row: Option<(Option<i64>, Option<String>)> =
                r.c.query_row(
                    "SELECT imported_at_ms, imported_from FROM sessions WHERE id = ?1",
                    [id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let (at, from) = row.ok_or_else(|| StoreError::not_found("session", id))?;
            Ok(at.map(|at_ms| ImportMark {
                at_ms,
                from: from.unwrap_or_default(),
            }))
        })
    }
}

// ---- Markdown ---------------------------------------------------------------------------

/// `2026-12-01 14:03:07 UTC` from Unix milliseconds (through chrono: no calendar of our own).
pub fn utc(ms: i64) -> String {
    match chrono::DateTime::from_timestamp(ms.div_euclid(1000), 0) {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        None => format!("(out of range: {ms} ms since 1970)"),
    }
}

/// Text for one line of Markdown: HTML-significant characters as entities, line breaks as
/// spaces, so a title or a command cannot open a tag or end a `<details>`.
fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Inline code that holds any text: a backtick fence longer than any run inside it.
fn code_span(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_run(&s, '`') + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A fenced block that holds any text: its fence is longer than any backtick run inside.
fn fenced(out: &mut String, lang: &str, s: &str) {
    let fence = "`".repeat((longest_run(s, '`') + 1).max(3));
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(s);
    if !s.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
}

fn details(out: &mut String, summary: &str, body: impl FnOnce(&mut String)) {
    let _ = writeln!(out, "<details><summary>{}</summary>\n", inline(summary));
    body(out);
    out.push_str("\n</details>\n\n");
}

fn role_label(role: Role, auto: bool) -> &'static str {
    match (role, auto) {
        (Role::User, false) => "Operator",
        (Role::User, true) => "Operator (resumed)",
        (Role::Assistant, _) => "Nomos",
        (Role::System, _) => "Note",
    }
}

impl SessionExport {
    /// The session as Markdown for a reader: header, plan generations, the transcript with
    /// tool calls folded in `<details>`, the execution ledger (command, target, class,
    /// approval, exit, output folded) and the audit log. Texts from the model and commands
    /// are quoted so they cannot break the document's structure.
    pub fn to_markdown(&self) -> String {
        let s = &self.session;
        let mut out = String::new();
        let _ = writeln!(out, "# {}\n", inline(&s.title));
        let _ = writeln!(
            out,
            "- Session {} · status **{}**{}",
            s.id,
            s.status,
            s.outcome
                .map(|o| format!(" · outcome **{o}**"))
                .unwrap_or_default()
        );
        if let Some(g) = &s.goal {
            let _ = writeln!(out, "- Goal: {}", inline(g));
        }
        let _ = writeln!(
            out,
            "- Started {} · last active {}",
            utc(s.created_at_ms),
            utc(s.last_active_at_ms)
        );
        if let Some(at) = s.completed_at_ms {
            let _ = writeln!(out, "- Completed {}", utc(at));
        }
        if let Some(sum) = &s.summary {
            let _ = writeln!(out, "- Summary: {}", inline(sum));
        }
        if let Some(i) = &s.imported {
            let _ = writeln!(out, "- Imported {} from {}", utc(i.at_ms), inline(&i.from));
        }
        let _ = writeln!(out, "- Exported {}\n", utc(self.exported_at_ms));

        out.push_str("## Plan\n\n");
        if self.plan.is_empty() {
            out.push_str("No plan was proposed.\n\n");
        }
        let current = self.plan.last().map(|g| g.generation);
        for g in &self.plan {
            let state = if g.replaced_at_ms.is_some() || Some(g.generation) != current {
                "replaced"
            } else {
                "current"
            };
            let _ = writeln!(
                out,
                "### Plan v{} ({state}, {} steps) — proposed {}\n",
                g.generation,
                g.steps.len(),
                utc(g.proposed_at_ms)
            );
            for st in &g.steps {
                let _ = write!(out, "{}. [{}] {}", st.seq, st.status, inline(&st.title));
                if let Some(t) = &st.target {
                    let _ = write!(out, " — {}", code_span(t));
                }
                out.push('\n');
                if let Some(d) = &st.detail {
                    let _ = writeln!(out, "   - {}", inline(d));
                }
                if let Some(n) = &st.note {
                    let _ = writeln!(out, "   - Note: {}", inline(n));
                }
            }
            out.push('\n');
        }

        out.push_str("## Transcript\n\n");
        for msg in &self.messages {
            let _ = writeln!(
                out,
                "### {} · {}\n",
                role_label(msg.role, msg.auto),
                utc(msg.created_at_ms)
            );
            if !msg.text.trim().is_empty() {
                // Model text is Markdown: kept as written, but inside a quote so a heading or
                // a closing tag in it stays inside this message.
                for line in msg.text.lines() {
                    let _ = writeln!(out, "> {}", line.replace('<', "&lt;"));
                }
                out.push('\n');
            }
            if let Some(e) = &msg.error {
                let _ = writeln!(out, "**Error:** {}\n", inline(e));
            }
            for c in &msg.tool_calls {
                let mark = match (&c.result, c.is_error) {
                    (None, _) => " (no result)",
                    (Some(_), true) => " ✗",
                    (Some(_), false) => " ✓",
                };
                details(&mut out, &format!("Tool call: {}{mark}", c.name), |out| {
                    out.push_str("Arguments:\n\n");
                    fenced(out, "json", &c.arguments);
                    if let Some(r) = &c.result {
                        out.push_str("\nResult:\n\n");
                        fenced(out, "", r);
                    }
                });
            }
        }

        out.push_str("## Executions\n\n");
        if self.executions.is_empty() {
            out.push_str("No command ran.\n\n");
        }
        for (i, e) in self.executions.iter().enumerate() {
            let _ = writeln!(
                out,
                "### {}. {} on {}\n",
                i + 1,
                code_span(&e.command),
                code_span(&e.target)
            );
            let _ = writeln!(
                out,
                "- Status: **{}**{}{}",
                e.status,
                e.exit_code
                    .map(|c| format!(", exit {c}"))
                    .unwrap_or_default(),
                e.duration_ms
                    .map(|d| format!(", {d} ms"))
                    .unwrap_or_default()
            );
            let _ = writeln!(out, "- Class: {} — {}", e.class, inline(&e.decision_reason));
            let approval = match e.approval {
                None => "none".to_owned(),
                Some(k) => {
                    let mut a = k.as_str().to_owned();
                    if let Some(by) = &e.approved_by {
                        let _ = write!(a, " by {}", inline(by));
                    }
                    if let Some(w) = e.approval_window_id {
                        let _ = write!(a, " (window {w})");
                    }
                    if let Some(at) = e.approved_at_ms {
                        let _ = write!(a, " at {}", utc(at));
                    }
                    a
                }
            };
            let _ = writeln!(out, "- Approval: {approval}");
            if let Some(g) = e.generation {
                let _ = writeln!(
                    out,
                    "- Plan v{g}{}",
                    e.step_seq
                        .map(|s| format!(", step {s}"))
                        .unwrap_or_default()
                );
            }
            if let Some(at) = e.started_at_ms {
                let _ = writeln!(out, "- Started {}", utc(at));
            }
            if let Some(err) = &e.error {
                let _ = writeln!(out, "- Error: {}", inline(err));
            }
            out.push('\n');
            for (name, text, bytes, cut) in [
                ("stdout", &e.stdout, e.stdout_bytes, e.stdout_truncated),
                ("stderr", &e.stderr, e.stderr_bytes, e.stderr_truncated),
            ] {
                if text.is_empty() {
                    continue;
                }
                let label = format!(
                    "{name} ({bytes} bytes{})",
                    if cut { ", truncated" } else { "" }
                );
                details(&mut out, &label, |out| fenced(out, "", text));
            }
        }

        out.push_str("## Approval windows\n\n");
        if self.approval_windows.is_empty() {
            out.push_str("None.\n\n");
        }
        for w in &self.approval_windows {
            let _ = write!(
                out,
                "- Window {} for plan v{}: opened by {} at {}",
                w.id,
                w.generation,
                w.source,
                utc(w.opened_at_ms)
            );
            if let Some(at) = w.closed_at_ms {
                let _ = write!(
                    out,
                    ", closed ({}) at {}",
                    w.close_reason.map_or("closed", CloseReason::as_str),
                    utc(at)
                );
            }
            out.push('\n');
        }
        out.push('\n');

        out.push_str("## Audit log\n\n");
        if self.audit.is_empty() {
            out.push_str("Empty.\n");
        } else {
            out.push_str("| time | tool | ok | result |\n|---|---|---|---|\n");
            for a in &self.audit {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    utc(a.created_at_ms),
                    inline(&a.tool).replace('|', "\\|"),
                    if a.ok { "yes" } else { "no" },
                    inline(&a.result_summary).replace('|', "\\|")
                );
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_764_597_787_000), "2025-12-01 14:03:07 UTC");
        assert_eq!(utc(-1000), "1969-12-31 23:59:59 UTC");
    }

    #[test]
    fn code_and_fences_hold_any_backticks() {
        assert_eq!(code_span("ls"), "`ls`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x`"), "`` `x` ``");
        let mut out = String::new();
        fenced(&mut out, "", "```\nrm -rf /\n```");
        assert!(out.starts_with("````\n"), "{out}");
        assert!(out.ends_with("\n````\n"), "{out}");
    }
}
