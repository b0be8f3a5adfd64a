//! Session search for offline review: one query over session titles, goals and summaries,
//! message text and the execution ledger (command, stdout, stderr — stored masked), with
//! filters by status, outcome and target. Each hit names its session and the message or
//! execution that matched, with a short snippet whose matching words are marked.
//!
//! The operator's text is literal: every whitespace-separated chunk becomes a quoted phrase
//! of its words, so FTS5 syntax (`"`, `*`, `-`, `NEAR`, `OR`, parentheses) is never an
//! operator and never an error. Cost is bounded whatever the words: each index is walked
//! newest first and stops after a fixed number of candidates (FTS5's BM25 would read the
//! whole match list of a common word), which are then ranked here.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension as _, params};
use serde::Serialize;

use crate::db::{Reader, Store};
use crate::error::StoreError;
use crate::executions::ExecutionId;
use crate::messages::{MessageId, Role, id_range};
use crate::sessions::{Outcome, SessionId, SessionStatus, SessionSummary};

/// Filter and page of [`Store::search_sessions`].
#[derive(Debug, Clone, Default)]
pub struct SessionSearchQuery {
    /// Words to find, taken literally; every word must match (English stemming: `upgrades`
    /// finds `upgraded`). Blank text finds nothing.
    pub text: String,
    /// The last word also matches as a prefix (search as you type).
    pub prefix: bool,
    /// Only sessions in one of these statuses (empty: any).
    pub statuses: Vec<SessionStatus>,
    /// Only sessions with one of these outcomes (empty: any).
    pub outcomes: Vec<Outcome>,
    /// Only this target: an execution hit must have run on it; any other hit must belong to
    /// a session that ran a command on it or planned a step for it.
    pub target: Option<String>,
    /// At most this many hits (0: [`DEFAULT_SEARCH_LIMIT`]; capped at [`MAX_SEARCH_LIMIT`]).
    pub limit: u32,
    /// Skip this many hits (paging).
    pub offset: u32,
}

/// Hits returned when the query asks for none.
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;
/// Most hits one call returns.
pub const MAX_SEARCH_LIMIT: u32 = 200;
/// Candidates read from each index before ranking (at least; more when the page asks for
/// more): the bound on a search's work.
pub const SESSION_SEARCH_CANDIDATES: u32 = 200;
const MAX_CANDIDATES: u32 = 2000;
/// At most this many phrases of the operator's text are searched.
const MAX_PHRASES: usize = 16;
/// Words of a snippet.
const SNIPPET_TOKENS: i64 = 16;

const MARK_OPEN: char = '\u{E000}';
const MARK_CLOSE: char = '\u{E001}';

/// Where a hit matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    /// The session's title.
    Title,
    /// The session's goal.
    Goal,
    /// The session's completion summary.
    Summary,
    /// A message's text.
    Message,
    /// An execution's command.
    Command,
    /// An execution's standard output.
    Stdout,
    /// An execution's standard error.
    Stderr,
}

impl HitSource {
    /// A short label for faces ("title", "stdout", …).
    pub fn as_str(self) -> &'static str {
        match self {
            HitSource::Title => "title",
            HitSource::Goal => "goal",
            HitSource::Summary => "summary",
            HitSource::Message => "message",
            HitSource::Command => "command",
            HitSource::Stdout => "stdout",
            HitSource::Stderr => "stderr",
        }
    }
}

/// A piece of a snippet: matched words have `hit` set. Plain text, never markup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnippetPart {
    /// The text.
    pub text: String,
    /// These are matching words.
    pub hit: bool,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionHit {
    /// The session it belongs to.
    pub session: SessionSummary,
    /// Where it matched.
    pub source: HitSource,
    /// The message that matched, or the assistant message whose tool call ran the execution
    /// that matched (when known): the place to open the transcript at.
    pub message_id: Option<MessageId>,
    /// The role of the matching message (message hits).
    pub role: Option<Role>,
    /// The execution that matched (command and output hits).
    pub execution_id: Option<ExecutionId>,
    /// The execution's target (command and output hits).
    pub target: Option<String>,
    /// A few words around the match, the matching words marked.
    pub snippet: Vec<SnippetPart>,
    /// When the matching row was written.
    pub at_ms: i64,
    /// Relevance, higher is better: where the words matched (title 5, goal and summary 4,
    /// operator message and command 3, model message and output 2, system note 1); ties go
    /// to the newer row.
    pub score: f64,
}

/// A page of hits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSearchPage {
    /// The hits, best first.
    pub hits: Vec<SessionHit>,
    /// More hits follow this page (ask again with a larger offset).
    pub has_more: bool,
}

/// The operator's text as an FTS5 query of literal phrases: each whitespace-separated chunk
/// is the phrase of its words (`web-01` → `"web 01"`, which matches `web-01` and `web 01`);
/// every phrase must match. Quotes, stars and operators in the input are only separators.
/// With `prefix_last`, the last word (three characters or more) matches as a prefix.
pub(crate) fn literal_query(input: &str, prefix_last: bool) -> Option<String> {
    let phrases: Vec<Vec<&str>> = input
        .split_whitespace()
        .map(|chunk| {
            chunk
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .take(MAX_PHRASES)
        .collect();
    let last = phrases.len().checked_sub(1)?;
    let mut out = String::new();
    for (i, words) in phrases.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push('"');
        out.push_str(&words.join(" "));
        out.push('"');
        let tail = words.last().map_or(0, |w| w.chars().count());
        if prefix_last && i == last && tail >= 3 {
            out.push('*');
        }
    }
    Some(out)
}

/// The session filters shared by every source (`s` is the session row). ?2: statuses as
/// `,a,b,`; ?3: outcomes likewise (`none` for no outcome); ?4: target.
const SESSION_FILTER: &str = "(?2 IS NULL OR instr(?2, ',' || s.status || ',') > 0)
   AND (?3 IS NULL OR instr(?3, ',' || coalesce(s.outcome, 'none') || ',') > 0)";
const TARGET_OF_SESSION: &str = "(?4 IS NULL
        OR EXISTS (SELECT 1 FROM executions t WHERE t.session_id = s.id AND t.target = ?4)
        OR EXISTS (SELECT 1 FROM plan_steps p WHERE p.session_id = s.id AND p.target = ?4))";

/// The walks below read each index newest first and stop after `?2` rows; the filters are
/// applied to the rows as they come (the allowed sessions are known beforehand), so the rows
/// read, not the rows kept, bound the work.
pub(crate) fn sessions_sql() -> String {
    "SELECT s.id, s.last_active_at_ms
     FROM sessions_fts f CROSS JOIN sessions s ON s.id = f.rowid
     WHERE sessions_fts MATCH ?1
     ORDER BY f.rowid DESC LIMIT ?2"
        .to_owned()
}

pub(crate) fn messages_sql() -> String {
    "SELECT m.id, m.session_id, m.role, m.auto, m.created_at_ms
     FROM messages_fts f CROSS JOIN messages m ON m.id = f.rowid
     WHERE messages_fts MATCH ?1
     ORDER BY f.rowid DESC LIMIT ?2"
        .to_owned()
}

/// Messages of one session (a rowid range: ids are `session << 32 | n`), newest first.
pub(crate) fn session_messages_sql() -> String {
    "SELECT m.id, m.session_id, m.role, m.auto, m.created_at_ms
     FROM messages_fts f CROSS JOIN messages m ON m.id = f.rowid
     WHERE messages_fts MATCH ?1 AND f.rowid BETWEEN ?2 AND ?3
     ORDER BY f.rowid DESC LIMIT ?4"
        .to_owned()
}

/// The sessions a filter lets through (?2, ?3, ?4 as in [`SESSION_FILTER`]), newest first.
pub(crate) fn allowed_sessions_sql() -> String {
    format!(
        "SELECT s.id FROM sessions s WHERE ?1 IS NULL AND {SESSION_FILTER} AND {TARGET_OF_SESSION}
         ORDER BY s.id DESC"
    )
}

/// With a filter that lets at most this many sessions through, their messages are searched
/// session by session (rowid ranges) instead of walking every match of the words.
const FEW_SESSIONS: usize = 256;

pub(crate) fn executions_sql() -> String {
    "SELECT e.id, e.session_id, e.target, e.call_id, e.created_at_ms
     FROM executions_fts f CROSS JOIN executions e ON e.id = f.rowid
     WHERE executions_fts MATCH ?1
     ORDER BY f.rowid DESC LIMIT ?2"
        .to_owned()
}

/// At most this many matching rows of each index are read per search (more when the page
/// asks for more): with a selective filter, matches older than that are not reached.
pub const SESSION_SEARCH_SCAN: u32 = 5000;

/// A candidate before its snippet is read.
struct Candidate {
    kind: Kind,
    session: SessionId,
    at_ms: i64,
    score: f64,
}

enum Kind {
    Session,
    Message(MessageId, Role),
    Execution {
        id: ExecutionId,
        target: String,
        call_id: Option<String>,
    },
}

fn csv<T: Copy>(items: &[T], name: impl Fn(T) -> &'static str) -> Option<String> {
    (!items.is_empty()).then(|| {
        let mut s = String::from(",");
        for i in items {
            s.push_str(name(*i));
            s.push(',');
        }
        s
    })
}

/// Split a snippet with private-use marks into parts.
fn parts(marked: &str) -> Vec<SnippetPart> {
    let mut out: Vec<SnippetPart> = Vec::new();
    let mut hit = false;
    let mut cur = String::new();
    let flush = |cur: &mut String, hit: bool, out: &mut Vec<SnippetPart>| {
        if !cur.is_empty() {
            out.push(SnippetPart {
                text: std::mem::take(cur),
                hit,
            });
        }
    };
    for c in marked.chars() {
        match c {
            MARK_OPEN => {
                flush(&mut cur, hit, &mut out);
                hit = true;
            }
            MARK_CLOSE => {
                flush(&mut cur, hit, &mut out);
                hit = false;
            }
            c => cur.push(c),
        }
    }
    flush(&mut cur, hit, &mut out);
    out
}

impl Reader<'_> {
    /// Search sessions, their messages and their executions. See [`SessionSearchQuery`].
    pub fn search_sessions(&self, q: &SessionSearchQuery) -> Result<SessionSearchPage, StoreError> {
        let Some(fts) = literal_query(&q.text, q.prefix) else {
            return Ok(SessionSearchPage {
                hits: Vec::new(),
                has_more: false,
            });
        };
        let limit = match q.limit {
            0 => DEFAULT_SEARCH_LIMIT,
            n => n.min(MAX_SEARCH_LIMIT),
        };
        let wanted = q.offset.saturating_add(limit);
        let per_source = wanted
            .saturating_add(1)
            .clamp(SESSION_SEARCH_CANDIDATES, MAX_CANDIDATES);
        let statuses = csv(&q.statuses, SessionStatus::as_str);
        let outcomes = csv(&q.outcomes, Outcome::as_str);
        let target = q.target.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let scan = per_source.max(SESSION_SEARCH_SCAN);
        // A filter decides first which sessions can match at all: none means no hit (and no
        // walk through every match of a common word); a few are searched one by one.
        let allowed: Option<Vec<SessionId>> =
            if statuses.is_some() || outcomes.is_some() || target.is_some() {
                let none: Option<&str> = None;
                let ids = self
                    .c
                    .prepare_cached(&allowed_sessions_sql())?
                    .query_map(params![none, statuses, outcomes, target], |r| r.get(0))?
                    .collect::<Result<Vec<SessionId>, _>>()?;
                if ids.is_empty() {
                    return Ok(SessionSearchPage {
                        hits: Vec::new(),
                        has_more: false,
                    });
                }
                Some(ids)
            } else {
                None
            };
        let allowed_set: Option<HashSet<SessionId>> =
            allowed.as_ref().map(|v| v.iter().copied().collect());
        let ok = |sid: SessionId| allowed_set.as_ref().is_none_or(|s| s.contains(&sid));

        let mut cands: Vec<Candidate> = Vec::new();
        {
            let mut st = self.c.prepare_cached(&sessions_sql())?;
            let mut rows = st.query(params![fts, scan])?;
            let mut kept = 0u32;
            while kept < per_source
                && let Some(r) = rows.next()?
            {
                let id: SessionId = r.get(0)?;
                if !ok(id) {
                    continue;
                }
                kept += 1;
                cands.push(Candidate {
                    kind: Kind::Session,
                    session: id,
                    at_ms: r.get(1)?,
                    score: 5.0,
                });
            }
        }
        let push_message =
            |cands: &mut Vec<Candidate>, r: &rusqlite::Row<'_>| -> rusqlite::Result<()> {
                let role: Role = r.get(2)?;
                let auto: bool = r.get(3)?;
                let score = match (role, auto) {
                    (Role::User, false) => 3.0,
                    (Role::Assistant, _) => 2.0,
                    _ => 1.0,
                };
                cands.push(Candidate {
                    kind: Kind::Message(r.get(0)?, role),
                    session: r.get(1)?,
                    at_ms: r.get(4)?,
                    score,
                });
                Ok(())
            };
        match &allowed {
            Some(ids) if ids.len() <= FEW_SESSIONS => {
                let mut st = self.c.prepare_cached(&session_messages_sql())?;
                let mut found = 0u32;
                for &sid in ids {
                    if found >= per_source {
                        break;
                    }
                    let (lo, hi) = id_range(sid);
                    let mut rows = st.query(params![fts, lo, hi, per_source - found])?;
                    while let Some(r) = rows.next()? {
                        push_message(&mut cands, r)?;
                        found += 1;
                    }
                }
            }
            _ => {
                let mut st = self.c.prepare_cached(&messages_sql())?;
                let mut rows = st.query(params![fts, scan])?;
                let mut kept = 0u32;
                while kept < per_source
                    && let Some(r) = rows.next()?
                {
                    if !ok(r.get(1)?) {
                        continue;
                    }
                    kept += 1;
                    push_message(&mut cands, r)?;
                }
            }
        }
        {
            let mut st = self.c.prepare_cached(&executions_sql())?;
            let mut rows = st.query(params![fts, scan])?;
            let mut kept = 0u32;
            while kept < per_source
                && let Some(r) = rows.next()?
            {
                let session: SessionId = r.get(1)?;
                let on: String = r.get(2)?;
                if !ok(session) || target.is_some_and(|t| t != on) {
                    continue;
                }
                kept += 1;
                cands.push(Candidate {
                    kind: Kind::Execution {
                        id: r.get(0)?,
                        target: on,
                        call_id: r.get(3)?,
                    },
                    session,
                    at_ms: r.get(4)?,
                    score: 2.5,
                });
            }
        }
        // Best first; among equals the newer row, then the larger id (stable pages).
        cands.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.at_ms.cmp(&a.at_ms))
                .then(b.session.cmp(&a.session))
        });
        let offset = usize::try_from(q.offset).unwrap_or(usize::MAX);
        let wanted = usize::try_from(wanted).unwrap_or(usize::MAX);
        let has_more = cands.len() > wanted;
        let mut sessions: HashMap<SessionId, SessionSummary> = HashMap::new();
        let mut hits = Vec::new();
        for c in cands
            .into_iter()
            .skip(offset)
            .take(wanted.saturating_sub(offset))
        {
            let session = match sessions.get(&c.session) {
                Some(s) => s.clone(),
                None => {
                    let s = self.session_summary(c.session)?;
                    sessions.insert(c.session, s.clone());
                    s
                }
            };
            hits.push(self.hit(&fts, session, c)?);
        }
        Ok(SessionSearchPage { hits, has_more })
    }

    fn session_summary(&self, id: SessionId) -> Result<SessionSummary, StoreError> {
        let s = self.session(id)?;
        Ok(SessionSummary {
            id: s.id,
            title: s.title,
            goal: s.goal,
            status: s.status,
            outcome: s.outcome,
            summary: s.summary,
            created_at_ms: s.created_at_ms,
            last_active_at_ms: s.last_active_at_ms,
            demo: s.demo,
        })
    }

    /// The first of `columns` of the FTS row that holds a match, with its snippet (one
    /// statement for all the columns).
    fn best_column<T: Copy>(
        &self,
        table: &str,
        fts: &str,
        rowid: i64,
        columns: &[(i64, T)],
    ) -> Result<Option<(T, Vec<SnippetPart>)>, StoreError> {
        let exprs: Vec<String> = columns
            .iter()
            .map(|(col, _)| format!("snippet({table}, {col}, char(57344), char(57345), '…', ?3)"))
            .collect();
        let texts: Option<Vec<Option<String>>> = self
            .c
            .prepare_cached(&format!(
                "SELECT {} FROM {table} WHERE {table} MATCH ?1 AND rowid = ?2",
                exprs.join(", ")
            ))?
            .query_row(params![fts, rowid, SNIPPET_TOKENS], |r| {
                (0..columns.len()).map(|i| r.get(i)).collect()
            })
            .optional()?;
        let Some(texts) = texts else {
            return Ok(None);
        };
        let mut first = None;
        for (&(_, label), text) in columns.iter().zip(texts) {
            let Some(text) = text else { continue };
            if text.contains(MARK_OPEN) {
                return Ok(Some((label, parts(&text))));
            }
            if first.is_none() && !text.is_empty() {
                first = Some((label, parts(&text)));
            }
        }
        Ok(first)
    }

    fn hit(
        &self,
        fts: &str,
        session: SessionSummary,
        c: Candidate,
    ) -> Result<SessionHit, StoreError> {
        let base = |source, snippet| SessionHit {
            session: session.clone(),
            source,
            message_id: None,
            role: None,
            execution_id: None,
            target: None,
            snippet,
            at_ms: c.at_ms,
            score: c.score,
        };
        Ok(match c.kind {
            Kind::Session => {
                let cols = [
                    (0, HitSource::Title),
                    (1, HitSource::Goal),
                    (2, HitSource::Summary),
                ];
                let (source, snippet) = self
                    .best_column("sessions_fts", fts, c.session, &cols)?
                    .unwrap_or((HitSource::Title, Vec::new()));
                let score = match source {
                    HitSource::Title => 5.0,
                    _ => 4.0,
                };
                SessionHit {
                    score,
                    ..base(source, snippet)
                }
            }
            Kind::Message(id, role) => {
                let (_, snippet) = self
                    .best_column("messages_fts", fts, id, &[(0, HitSource::Message)])?
                    .unwrap_or((HitSource::Message, Vec::new()));
                SessionHit {
                    message_id: Some(id),
                    role: Some(role),
                    ..base(HitSource::Message, snippet)
                }
            }
            Kind::Execution {
                id,
                target,
                call_id,
            } => {
                let cols = [
                    (0, HitSource::Command),
                    (1, HitSource::Stdout),
                    (2, HitSource::Stderr),
                ];
                let (source, snippet) = self
                    .best_column("executions_fts", fts, id, &cols)?
                    .unwrap_or((HitSource::Command, Vec::new()));
                let message_id = match call_id {
                    Some(call) => self.message_of_call(c.session, &call)?,
                    None => None,
                };
                SessionHit {
                    message_id,
                    execution_id: Some(id),
                    target: Some(target),
                    score: if source == HitSource::Command {
                        3.0
                    } else {
                        2.0
                    },
                    ..base(source, snippet)
                }
            }
        })
    }

    /// The assistant message of a session that made the tool call `call_id`.
    fn message_of_call(
        &self,
        session: SessionId,
        call_id: &str,
    ) -> Result<Option<MessageId>, StoreError> {
        let (lo, hi) = id_range(session);
        Ok(self
            .c
            .prepare_cached(
                "SELECT message_id FROM tool_calls
                 WHERE message_id BETWEEN ?1 AND ?2 AND call_id = ?3
                 ORDER BY message_id DESC LIMIT 1",
            )?
            .query_row(params![lo, hi, call_id], |r| r.get(0))
            .optional()?)
    }
}

/// How many messages wait in the search-index queue, counting at most `cap`.
pub(crate) fn queued_for_index(c: &rusqlite::Connection, cap: i64) -> Result<i64, StoreError> {
    Ok(
        c.prepare_cached("SELECT count(*) FROM (SELECT 1 FROM messages_fts_pending LIMIT ?1)")?
            .query_row([cap], |r| r.get(0))?,
    )
}

/// Index the oldest `batch` queued messages (inside the caller's write transaction) and
/// take them off the queue; returns how many were taken. A message written since it was
/// queued is indexed with its text now; the triggers keep a queued message out of the index
/// (migration 20261202010000), so nothing is indexed twice.
pub(crate) fn index_queued_messages(
    c: &rusqlite::Connection,
    batch: i64,
) -> Result<i64, StoreError> {
    let hi: Option<MessageId> = c
        .prepare_cached(
            "SELECT max(message_id) FROM
                (SELECT message_id FROM messages_fts_pending ORDER BY message_id LIMIT ?1)",
        )?
        .query_row([batch], |r| r.get(0))?;
    let Some(hi) = hi else { return Ok(0) };
    c.prepare_cached(
        "INSERT INTO messages_fts (rowid, text)
         SELECT m.id, m.text FROM messages_fts_pending p JOIN messages m ON m.id = p.message_id
         WHERE p.message_id <= ?1 AND m.pending = 0 AND m.text <> ''",
    )?
    .execute([hi])?;
    let n = c
        .prepare_cached("DELETE FROM messages_fts_pending WHERE message_id <= ?1")?
        .execute([hi])?;
    Ok(i64::try_from(n).unwrap_or(i64::MAX))
}

impl Store {
    /// Search sessions, messages and executions (see [`Reader::search_sessions`]). Messages
    /// still queued for the index are indexed first, so every message committed before the
    /// call can be found.
    pub fn search_sessions(&self, q: &SessionSearchQuery) -> Result<SessionSearchPage, StoreError> {
        self.index_queued_messages()?;
        self.read(|r| r.search_sessions(q))
    }

    /// Index every message still queued for search; returns how many. The store's
    /// background thread does this when the writer is idle, and every search first.
    pub fn index_queued_messages(&self) -> Result<u64, StoreError> {
        let mut total = 0u64;
        while self.with_reader(|c| queued_for_index(c, 1))? > 0 {
            let n =
                self.with_writer(|tx, _, _| index_queued_messages(tx, crate::db::INDEX_BATCH))?;
            total += u64::try_from(n).unwrap_or(0);
        }
        Ok(total)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn operator_text_becomes_literal_phrases() {
        assert_eq!(literal_query("nginx", false).unwrap(), "\"nginx\"");
        assert_eq!(
            literal_query("web-01 disk", false).unwrap(),
            "\"web 01\" \"disk\""
        );
        assert_eq!(literal_query("a \"b", true).unwrap(), "\"a\" \"b\"");
        assert_eq!(literal_query("ngi", true).unwrap(), "\"ngi\"*");
        assert_eq!(
            literal_query("NEAR(a b)", false).unwrap(),
            "\"NEAR a\" \"b\""
        );
        for blank in ["", "   ", "\"\"", "* - ( ) :", "^"] {
            assert_eq!(literal_query(blank, true), None, "{blank:?}");
        }
    }

    #[test]
    fn snippet_marks_become_parts() {
        let p = parts("…the \u{E000}disk\u{E001} is \u{E000}full\u{E001}");
        let texts: Vec<(&str, bool)> = p.iter().map(|p| (p.text.as_str(), p.hit)).collect();
        assert_eq!(
            texts,
            [
                ("…the ", false),
                ("disk", true),
                (" is ", false),
                ("full", true)
            ]
        );
    }

    /// Every candidate query starts from its FTS index (no scan of messages, executions or
    /// sessions) and reaches the other tables by primary key; the target filter uses the
    /// per-session indexes.
    #[test]
    fn search_queries_use_the_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_dir(dir.path()).unwrap();
        use rusqlite::types::Value as V;
        let walk = || vec![V::Text("\"x\"".into()), V::Integer(10)];
        let filters = vec![
            V::Null,
            V::Text(",done,".into()),
            V::Text(",success,".into()),
            V::Text("host:a".into()),
        ];
        let range = vec![
            V::Text("\"x\"".into()),
            V::Integer(1 << 32),
            V::Integer((2 << 32) - 1),
            V::Integer(10),
        ];
        for (sql, args) in [
            (sessions_sql(), walk()),
            (messages_sql(), walk()),
            (executions_sql(), walk()),
            (session_messages_sql(), range),
        ] {
            let plan: Vec<String> = store
                .read(|r| {
                    let mut st = r.c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
                    let rows = st
                        .query_map(rusqlite::params_from_iter(args), |row| {
                            row.get::<_, String>(3)
                        })?
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(rows)
                })
                .unwrap();
            let text = plan.join("\n");
            assert!(
                plan[0].contains("VIRTUAL TABLE INDEX"),
                "the FTS index drives the query:\n{text}"
            );
            for line in &plan[1..] {
                let full_scan = line.starts_with("SCAN ") && !line.contains("VIRTUAL TABLE");
                assert!(!full_scan, "a full scan in\n{text}");
            }
            assert!(
                !text.contains("USE TEMP B-TREE"),
                "the index order is the result order:\n{text}"
            );
        }
        // The filter's own query: the sessions table (small) with its per-session checks
        // through the executions and plan-step indexes.
        let plan: Vec<String> = store
            .read(|r| {
                let mut st =
                    r.c.prepare(&format!("EXPLAIN QUERY PLAN {}", allowed_sessions_sql()))?;
                let rows = st
                    .query_map(rusqlite::params_from_iter(filters), |row| {
                        row.get::<_, String>(3)
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .unwrap();
        let text = plan.join("\n");
        assert!(text.contains("SEARCH t USING"), "{text}");
        assert!(text.contains("SEARCH p USING"), "{text}");
        assert!(!text.contains("USE TEMP B-TREE"), "{text}");
    }
}
