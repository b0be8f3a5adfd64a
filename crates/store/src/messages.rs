//! Messages (I16): one row per model iteration, text parts accumulated (never overwritten),
//! each tool call stored once, long tool results truncated with a marker, a placeholder that
//! ends empty deleted (I11: no empty bubble is ever persisted).

use rusqlite::{OptionalExtension as _, Row, params};
use serde::Serialize;

use crate::db::{Reader, Store, WriteTx};
use crate::error::{StoreError, missing_parent};
use crate::secrets::redact;
use crate::sessions::{Session, SessionId};
use crate::types::{cap_text, text_enum};

/// Message identifier (rowid).
pub type MessageId = i64;

/// Tool results longer than this many bytes are stored truncated (head + tail + marker).
pub const MAX_TOOL_RESULT_BYTES: usize = 32 * 1024;
/// Messages longer than this are refused (the operator gets a clear error; nothing is cut).
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

text_enum! {
    /// Who wrote a message.
    pub enum Role {
        /// The operator.
        User => "user",
        /// One model iteration.
        Assistant => "assistant",
        /// A note from Nomos itself (resume notes, continuation results, errors).
        System => "system",
    }
}

/// Input of [`Store::append_message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    /// Session.
    pub session_id: SessionId,
    /// Role.
    pub role: Role,
    /// Text (must not be blank).
    pub text: String,
    /// System-initiated turn (resume, continuation, nudge), not typed by the operator.
    pub auto: bool,
}

impl NewMessage {
    /// An operator message.
    pub fn user(session_id: SessionId, text: impl Into<String>) -> Self {
        NewMessage {
            session_id,
            role: Role::User,
            text: text.into(),
            auto: false,
        }
    }
    /// A system note (`auto`).
    pub fn system(session_id: SessionId, text: impl Into<String>) -> Self {
        NewMessage {
            session_id,
            role: Role::System,
            text: text.into(),
            auto: true,
        }
    }
    /// A complete assistant message.
    pub fn assistant(session_id: SessionId, text: impl Into<String>) -> Self {
        NewMessage {
            session_id,
            role: Role::Assistant,
            text: text.into(),
            auto: false,
        }
    }
}

/// A tool call of an assistant iteration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// Rowid.
    pub id: i64,
    /// The assistant message.
    pub message_id: MessageId,
    /// The provider's call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments exactly as the model sent them (JSON text, possibly malformed).
    pub arguments: String,
    /// Result given back to the model (truncated past [`MAX_TOOL_RESULT_BYTES`]).
    pub result: Option<String>,
    /// The result was truncated.
    pub result_truncated: bool,
    /// The result is an error.
    pub is_error: bool,
    /// When the call was recorded.
    pub created_at_ms: i64,
    /// When its result was recorded.
    pub finished_at_ms: Option<i64>,
}

/// A message with its tool calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// Rowid (ordering key within a session).
    pub id: MessageId,
    /// Session.
    pub session_id: SessionId,
    /// Role.
    pub role: Role,
    /// Accumulated visible text.
    pub text: String,
    /// Accumulated reasoning text, if the provider streams it.
    pub reasoning: String,
    /// A placeholder still being filled (the UI shows loading dots).
    pub pending: bool,
    /// Produced by a system-initiated turn.
    pub auto: bool,
    /// The iteration ended with this error (real provider text).
    pub error: Option<String>,
    /// Tool calls, in call order.
    pub tool_calls: Vec<ToolCall>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
}

impl Message {
    /// Nothing to show: no text, no reasoning, no tool call.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty()
            && self.reasoning.trim().is_empty()
            && self.tool_calls.is_empty()
    }
}

/// A session with its messages: what the transcript view and the model replay read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transcript {
    /// The session.
    pub session: Session,
    /// Messages in order.
    pub messages: Vec<Message>,
}

/// Where a page of a session's messages lies ([`Reader::message_page`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAt {
    /// The newest messages (a session opens here).
    Latest,
    /// The messages just before this one (the operator scrolls up).
    Before(MessageId),
    /// The messages just after this one (scrolling down from an older page).
    After(MessageId),
    /// A page holding this message, about half of it before (a search hit opens here).
    Around(MessageId),
}

/// The most messages one page holds, whatever the caller asks.
pub const MAX_MESSAGE_PAGE: u32 = 1_000;

/// A contiguous run of a session's messages, oldest first, and whether more lie either side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessagePage {
    /// The messages, with their tool calls.
    pub messages: Vec<Message>,
    /// Messages older than the first exist.
    pub older: bool,
    /// Messages newer than the last exist.
    pub newer: bool,
}

/// Result of [`Store::finish_message`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FinishedMessage {
    /// The iteration produced something; the row is final.
    Kept(Message),
    /// The placeholder ended empty and was deleted.
    Deleted {
        /// The deleted row.
        message_id: MessageId,
    },
}

/// Message and audit ids are clustered by session: `session_id << 32 | n`.
pub(crate) fn id_range(session: i64) -> (i64, i64) {
    let lo = session << 32;
    (lo, lo | 0xFFFF_FFFF)
}

const MSG_COLS: &str =
    "id, session_id, role, text, reasoning, pending, auto, error, created_at_ms, updated_at_ms";

fn message_from_row(r: &Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        id: r.get(0)?,
        session_id: r.get(1)?,
        role: r.get(2)?,
        text: r.get(3)?,
        reasoning: r.get(4)?,
        pending: r.get(5)?,
        auto: r.get(6)?,
        error: r.get(7)?,
        tool_calls: Vec::new(),
        created_at_ms: r.get(8)?,
        updated_at_ms: r.get(9)?,
    })
}

const CALL_COLS: &str = "id, message_id, call_id, name, arguments, result, result_truncated, is_error, created_at_ms, finished_at_ms";

fn call_from_row(r: &Row<'_>) -> rusqlite::Result<ToolCall> {
    Ok(ToolCall {
        id: r.get(0)?,
        message_id: r.get(1)?,
        call_id: r.get(2)?,
        name: r.get(3)?,
        arguments: r.get(4)?,
        result: r.get(5)?,
        result_truncated: r.get(6)?,
        is_error: r.get(7)?,
        created_at_ms: r.get(8)?,
        finished_at_ms: r.get(9)?,
    })
}

pub(crate) const PAGE_DESC_SQL: &str = "SELECT id, session_id, role, text, reasoning, pending, auto, error, created_at_ms, updated_at_ms \
     FROM messages WHERE id >= ?1 AND id <= ?2 ORDER BY id DESC LIMIT ?3";
pub(crate) const PAGE_ASC_SQL: &str = "SELECT id, session_id, role, text, reasoning, pending, auto, error, created_at_ms, updated_at_ms \
     FROM messages WHERE id >= ?1 AND id <= ?2 ORDER BY id LIMIT ?3";
pub(crate) const ANY_MESSAGE_SQL: &str =
    "SELECT EXISTS (SELECT 1 FROM messages WHERE id >= ?1 AND id <= ?2)";
pub(crate) const CALLS_IN_RANGE_SQL: &str = "SELECT id, message_id, call_id, name, arguments, result, result_truncated, \
     is_error, created_at_ms, finished_at_ms FROM tool_calls WHERE message_id BETWEEN ?1 AND ?2 \
     ORDER BY message_id, id";

/// Keeps the first `n` rows; true when there were more.
fn truncate(rows: &mut Vec<Message>, n: i64) -> bool {
    let n = usize::try_from(n).unwrap_or(0);
    let more = rows.len() > n;
    rows.truncate(n);
    more
}

/// Attach tool calls (ordered by message id, then id) to messages (ordered by id).
fn attach(messages: &mut [Message], calls: Vec<ToolCall>) {
    let mut i = 0;
    for call in calls {
        while i < messages.len() && messages[i].id < call.message_id {
            i += 1;
        }
        if i < messages.len() && messages[i].id == call.message_id {
            messages[i].tool_calls.push(call);
        }
    }
}

impl Reader<'_> {
    /// One message with its tool calls.
    pub fn message(&self, id: MessageId) -> Result<Message, StoreError> {
        let mut m = self
            .c
            .prepare_cached(&format!("SELECT {MSG_COLS} FROM messages WHERE id = ?1"))?
            .query_row([id], message_from_row)
            .optional()?
            .ok_or_else(|| StoreError::not_found("message", id))?;
        m.tool_calls = self
            .c
            .prepare_cached(&format!(
                "SELECT {CALL_COLS} FROM tool_calls WHERE message_id = ?1 ORDER BY id"
            ))?
            .query_map([id], call_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(m)
    }

    /// The whole transcript of a session (rows → [`Transcript`]).
    pub fn transcript(&self, session: SessionId) -> Result<Transcript, StoreError> {
        let session = self.session(session)?;
        let messages = self.all_messages(session.id)?;
        Ok(Transcript { session, messages })
    }

    /// Every message of a session in order (the whole transcript, an export). A window
    /// reads pages instead ([`Reader::message_page`]).
    pub(crate) fn all_messages(&self, session: SessionId) -> Result<Vec<Message>, StoreError> {
        let (lo, hi) = id_range(session);
        let mut messages = self.message_rows(lo + 1, hi, -1, false)?;
        self.attach_calls(&mut messages)?;
        Ok(messages)
    }

    /// One page of a session's messages (at most `limit`, clamped to 1..=[`MAX_MESSAGE_PAGE`]),
    /// read by primary key over the session's id range: its cost does not grow with the
    /// session. A `Before`/`After`/`Around` message must lie in the session's range.
    pub fn message_page(
        &self,
        session: SessionId,
        at: PageAt,
        limit: u32,
    ) -> Result<MessagePage, StoreError> {
        let (lo, hi) = id_range(session);
        let n = i64::from(limit.clamp(1, MAX_MESSAGE_PAGE));
        let anchor = match at {
            PageAt::Latest => None,
            PageAt::Before(id) | PageAt::After(id) | PageAt::Around(id) => Some(id),
        };
        if let Some(id) = anchor
            && !(id > lo && id <= hi)
        {
            return Err(StoreError::not_found(
                "message",
                format!("{id} of session {session}"),
            ));
        }
        // Each arm reads one row more than it keeps: that row says whether more lie beyond.
        let (mut messages, older, newer) = match at {
            PageAt::Latest => {
                let mut rows = self.message_rows(lo, hi, n + 1, true)?;
                let older = truncate(&mut rows, n);
                rows.reverse();
                (rows, older, false)
            }
            PageAt::Before(id) => {
                let mut rows = self.message_rows(lo, id - 1, n + 1, true)?;
                let older = truncate(&mut rows, n);
                rows.reverse();
                (rows, older, self.any_message(id, hi)?)
            }
            PageAt::After(id) => {
                let mut rows = self.message_rows(id + 1, hi, n + 1, false)?;
                let newer = truncate(&mut rows, n);
                (rows, self.any_message(lo, id)?, newer)
            }
            PageAt::Around(id) => {
                let half = n / 2;
                let mut rows = self.message_rows(lo, id - 1, half + 1, true)?;
                let older = truncate(&mut rows, half);
                rows.reverse();
                let rest = n - rows.len() as i64;
                let mut after = self.message_rows(id, hi, rest + 1, false)?;
                let newer = truncate(&mut after, rest);
                rows.append(&mut after);
                (rows, older, newer)
            }
        };
        self.attach_calls(&mut messages)?;
        Ok(MessagePage {
            messages,
            older,
            newer,
        })
    }

    /// Messages with `from <= id <= to`, at most `limit`, newest first when `desc`.
    fn message_rows(
        &self,
        from: MessageId,
        to: MessageId,
        limit: i64,
        desc: bool,
    ) -> Result<Vec<Message>, StoreError> {
        let sql = if desc { PAGE_DESC_SQL } else { PAGE_ASC_SQL };
        Ok(self
            .c
            .prepare_cached(sql)?
            .query_map(params![from, to, limit], message_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Whether a message with `from <= id <= to` exists.
    fn any_message(&self, from: MessageId, to: MessageId) -> Result<bool, StoreError> {
        Ok(self
            .c
            .prepare_cached(ANY_MESSAGE_SQL)?
            .query_row(params![from, to], |r| r.get(0))?)
    }

    /// Reads the tool calls of `messages` (ordered by id) in one range query.
    fn attach_calls(&self, messages: &mut [Message]) -> Result<(), StoreError> {
        let (Some(first), Some(last)) = (messages.first(), messages.last()) else {
            return Ok(());
        };
        let calls = self
            .c
            .prepare_cached(CALLS_IN_RANGE_SQL)?
            .query_map(params![first.id, last.id], call_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        attach(messages, calls);
        Ok(())
    }

    /// The operator's last message in a session (I12 resume notes).
    pub fn last_user_message(&self, session: SessionId) -> Result<Option<Message>, StoreError> {
        let (lo, hi) = id_range(session);
        let id: Option<MessageId> = self
            .c
            .prepare_cached(
                "SELECT id FROM messages WHERE id BETWEEN ?1 AND ?2 AND role = 'user' AND auto = 0
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row(params![lo, hi], |r| r.get(0))
            .optional()?;
        id.map(|id| self.message(id)).transpose()
    }

    /// Placeholders still `pending` (a turn cut by a crash), oldest first.
    pub fn pending_placeholders(&self) -> Result<Vec<Message>, StoreError> {
        let ids: Vec<MessageId> = self
            .c
            .prepare_cached("SELECT id FROM messages WHERE pending = 1 ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<_>, _>>()?;
        ids.into_iter().map(|id| self.message(id)).collect()
    }

    /// Number of messages in a session.
    pub fn message_count(&self, session: SessionId) -> Result<i64, StoreError> {
        Ok(self
            .c
            .prepare_cached("SELECT count(*) FROM messages WHERE id BETWEEN ?1 AND ?2")?
            .query_row(params![id_range(session).0, id_range(session).1], |r| {
                r.get(0)
            })?)
    }
}

fn check_len(text: &str) -> Result<(), StoreError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(StoreError::invalid(format!(
            "The message is {} bytes long; at most {} bytes are accepted.",
            text.len(),
            MAX_MESSAGE_BYTES
        )));
    }
    Ok(())
}

impl WriteTx<'_> {
    fn pending_message(&self, id: MessageId) -> Result<SessionId, StoreError> {
        let row: Option<(SessionId, bool)> = self
            .c
            .prepare_cached("SELECT session_id, pending FROM messages WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        match row {
            None => Err(StoreError::not_found("message", id)),
            Some((_, false)) => Err(StoreError::invariant(
                "I16",
                format!("Message {id} is finished; it cannot change any more."),
                "Start a new assistant message for a new model iteration.",
            )),
            Some((sid, true)) => Ok(sid),
        }
    }

    /// Append a complete message. Blank text is refused (no empty bubble); an operator message
    /// resets the completion nudges (I15) of its session.
    pub fn append_message(&self, new: &NewMessage) -> Result<Message, StoreError> {
        if new.text.trim().is_empty() {
            return Err(StoreError::invalid("An empty message is not stored"));
        }
        check_len(&new.text)?;
        let text = redact(&new.text);
        self.c
            .prepare_cached(
                "INSERT INTO messages (id, session_id, role, text, auto, created_at_ms, updated_at_ms, owner)
                 VALUES (coalesce((SELECT id FROM messages WHERE id BETWEEN ?1 << 32 AND (?1 << 32) | 4294967295
                                   ORDER BY id DESC LIMIT 1), ?1 << 32) + 1,
                         ?1, ?2, ?3, ?4, ?5, ?5, ?6)",
            )?
            .execute(params![
                new.session_id,
                new.role,
                text.as_ref(),
                new.auto,
                self.now,
                self.owner
            ])
            .map_err(|e| missing_parent(e, "session", new.session_id))?;
        let id = self.c.last_insert_rowid();
        self.touch(new.session_id)?;
        if new.role == Role::User && !new.auto {
            self.c
                .prepare_cached(
                    "UPDATE sessions SET completion_nudges = 0, last_nudge_at_ms = NULL
                     WHERE id = ?1 AND completion_nudges <> 0",
                )?
                .execute([new.session_id])?;
        }
        Ok(Message {
            id,
            session_id: new.session_id,
            role: new.role,
            text: text.into_owned(),
            reasoning: String::new(),
            pending: false,
            auto: new.auto,
            error: None,
            tool_calls: Vec::new(),
            created_at_ms: self.now,
            updated_at_ms: self.now,
        })
    }

    /// Start an assistant iteration: an empty `pending` placeholder.
    pub fn begin_assistant_message(
        &self,
        session: SessionId,
        auto: bool,
    ) -> Result<Message, StoreError> {
        self.c
            .prepare_cached(
                "INSERT INTO messages (id, session_id, role, pending, auto, created_at_ms, updated_at_ms, owner)
                 VALUES (coalesce((SELECT id FROM messages WHERE id BETWEEN ?1 << 32 AND (?1 << 32) | 4294967295
                                   ORDER BY id DESC LIMIT 1), ?1 << 32) + 1,
                         ?1, 'assistant', 1, ?2, ?3, ?3, ?4)",
            )?
            .execute(params![session, auto, self.now, self.owner])
            .map_err(|e| missing_parent(e, "session", session))?;
        let id = self.c.last_insert_rowid();
        self.touch(session)?;
        self.reader().message(id)
    }

    /// Append a text part to a pending message (accumulated, never overwritten).
    pub fn append_text(&self, id: MessageId, part: &str) -> Result<(), StoreError> {
        self.append_column(id, "text", part)
    }

    /// Append a reasoning part to a pending message.
    pub fn append_reasoning(&self, id: MessageId, part: &str) -> Result<(), StoreError> {
        self.append_column(id, "reasoning", part)
    }

    fn append_column(&self, id: MessageId, col: &str, part: &str) -> Result<(), StoreError> {
        self.pending_message(id)?;
        if part.is_empty() {
            return Ok(());
        }
        let part = redact(part);
        let len: i64 = self.c.query_row(
            &format!("SELECT length(CAST({col} AS BLOB)) FROM messages WHERE id = ?1"),
            [id],
            |r| r.get(0),
        )?;
        check_len_total(len, part.len())?;
        self.c
            .prepare_cached(&format!(
                "UPDATE messages SET {col} = {col} || ?2, updated_at_ms = ?3 WHERE id = ?1"
            ))?
            .execute(params![id, part.as_ref(), self.now])?;
        Ok(())
    }

    /// Record a tool call of a pending assistant message. Stored once: recording the same
    /// `call_id` again returns the existing row unchanged.
    pub fn record_tool_call(
        &self,
        message: MessageId,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> Result<ToolCall, StoreError> {
        let session = self.pending_message(message)?;
        let args = redact(arguments);
        self.c
            .prepare_cached(
                "INSERT INTO tool_calls (message_id, call_id, name, arguments, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (message_id, call_id) DO NOTHING",
            )?
            .execute(params![message, call_id, name, args.as_ref(), self.now])?;
        self.touch(session)?;
        self.tool_call(message, call_id)
    }

    fn tool_call(&self, message: MessageId, call_id: &str) -> Result<ToolCall, StoreError> {
        self.c
            .prepare_cached(&format!(
                "SELECT {CALL_COLS} FROM tool_calls WHERE message_id = ?1 AND call_id = ?2"
            ))?
            .query_row(params![message, call_id], call_from_row)
            .optional()?
            .ok_or_else(|| StoreError::not_found("tool call", call_id))
    }

    /// Record the result of a tool call (truncated past [`MAX_TOOL_RESULT_BYTES`] with a marker).
    pub fn set_tool_result(
        &self,
        message: MessageId,
        call_id: &str,
        result: &str,
        is_error: bool,
    ) -> Result<ToolCall, StoreError> {
        self.pending_message(message)?;
        let (capped, truncated) = cap_text(&redact(result), MAX_TOOL_RESULT_BYTES);
        let n = self
            .c
            .prepare_cached(
                "UPDATE tool_calls SET result = ?3, result_truncated = ?4, is_error = ?5, finished_at_ms = ?6
                 WHERE message_id = ?1 AND call_id = ?2",
            )?
            .execute(params![message, call_id, capped, truncated, is_error, self.now])?;
        if n == 0 {
            return Err(StoreError::not_found("tool call", call_id));
        }
        self.tool_call(message, call_id)
    }

    /// End an assistant iteration. A placeholder with no text, reasoning or tool call is
    /// deleted (never persisted as a bubble); otherwise it is kept with `pending` cleared and
    /// `error` recorded.
    pub fn finish_message(
        &self,
        id: MessageId,
        error: Option<&str>,
    ) -> Result<FinishedMessage, StoreError> {
        let m = self.reader().message(id)?;
        if !m.pending {
            return Ok(FinishedMessage::Kept(m));
        }
        if m.is_empty() {
            self.c.execute("DELETE FROM messages WHERE id = ?1", [id])?;
            return Ok(FinishedMessage::Deleted { message_id: id });
        }
        self.c.execute(
            "UPDATE messages SET pending = 0, error = ?2, updated_at_ms = ?3 WHERE id = ?1",
            params![id, error.map(|e| redact(e).into_owned()), self.now],
        )?;
        self.touch(m.session_id)?;
        Ok(FinishedMessage::Kept(self.reader().message(id)?))
    }
}

fn check_len_total(current: i64, add: usize) -> Result<(), StoreError> {
    let total = usize::try_from(current).unwrap_or(0).saturating_add(add);
    if total > MAX_MESSAGE_BYTES {
        return Err(StoreError::invalid(format!(
            "The message would grow to {total} bytes; at most {MAX_MESSAGE_BYTES} bytes are accepted."
        )));
    }
    Ok(())
}

impl Store {
    /// See [`WriteTx::append_message`].
    pub fn append_message(&self, new: &NewMessage) -> Result<Message, StoreError> {
        self.write(|w| w.append_message(new))
    }
    /// See [`WriteTx::begin_assistant_message`].
    pub fn begin_assistant_message(
        &self,
        session: SessionId,
        auto: bool,
    ) -> Result<Message, StoreError> {
        self.write(|w| w.begin_assistant_message(session, auto))
    }
    /// See [`WriteTx::append_text`].
    pub fn append_text(&self, id: MessageId, part: &str) -> Result<(), StoreError> {
        self.write(|w| w.append_text(id, part))
    }
    /// See [`WriteTx::append_reasoning`].
    pub fn append_reasoning(&self, id: MessageId, part: &str) -> Result<(), StoreError> {
        self.write(|w| w.append_reasoning(id, part))
    }
    /// See [`WriteTx::record_tool_call`].
    pub fn record_tool_call(
        &self,
        message: MessageId,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> Result<ToolCall, StoreError> {
        self.write(|w| w.record_tool_call(message, call_id, name, arguments))
    }
    /// See [`WriteTx::set_tool_result`].
    pub fn set_tool_result(
        &self,
        message: MessageId,
        call_id: &str,
        result: &str,
        is_error: bool,
    ) -> Result<ToolCall, StoreError> {
        self.write(|w| w.set_tool_result(message, call_id, result, is_error))
    }
    /// See [`WriteTx::finish_message`].
    pub fn finish_message(
        &self,
        id: MessageId,
        error: Option<&str>,
    ) -> Result<FinishedMessage, StoreError> {
        self.write(|w| w.finish_message(id, error))
    }
    /// See [`Reader::message`].
    pub fn get_message(&self, id: MessageId) -> Result<Message, StoreError> {
        self.read(|r| r.message(id))
    }
    /// See [`Reader::transcript`].
    pub fn transcript(&self, session: SessionId) -> Result<Transcript, StoreError> {
        self.read(|r| r.transcript(session))
    }
    /// See [`Reader::message_page`].
    pub fn message_page(
        &self,
        session: SessionId,
        at: PageAt,
        limit: u32,
    ) -> Result<MessagePage, StoreError> {
        self.read(|r| r.message_page(session, at, limit))
    }
    /// See [`Reader::last_user_message`].
    pub fn last_user_message(&self, session: SessionId) -> Result<Option<Message>, StoreError> {
        self.read(|r| r.last_user_message(session))
    }
}
