//! `nomos sessions …` and `nomos knowledge search`: past work reviewed from the terminal,
//! straight from the store. No model and no network are needed (nor contacted).
//!
//! Everything printed that came from a model, a command or a host goes through `term`.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use nomos_agent::convert as dto;
use nomos_protocol as wire;
use nomos_store::{
    KnowledgeQuery, SessionExport, SessionId, SessionQuery, SessionSearchQuery, Store, StoreError,
    utc,
};
use serde::Serialize;

use crate::error::CliError;
use crate::term;

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// List sessions, newest activity first; with --search, the matches in titles, goals,
    /// summaries, messages and command output.
    List {
        /// Words to find (taken literally).
        #[arg(long)]
        search: Option<String>,
        /// Only sessions in this status (repeat for several).
        #[arg(long, value_enum)]
        status: Vec<StatusArg>,
        /// Only sessions with this outcome (repeat for several; with --search).
        #[arg(long, value_enum)]
        outcome: Vec<OutcomeArg>,
        /// Only this target, e.g. host:web-01 (with --search).
        #[arg(long)]
        target: Option<String>,
        /// At most this many rows.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Skip this many matches (with --search).
        #[arg(long, default_value_t = 0)]
        offset: u32,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show a session: transcript, plans, executions and approvals.
    Show {
        /// The session id.
        id: SessionId,
    },
    /// Export a session to standard output.
    Export {
        /// The session id.
        id: SessionId,
        /// `json` (versioned; `nomos sessions import` reads it) or `md` (for people).
        #[arg(long, value_enum, default_value_t = FormatArg::Json)]
        format: FormatArg,
    },
    /// Import a JSON export as a new session (`-` reads standard input). Nothing runs.
    Import {
        /// The file.
        file: PathBuf,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct KnowledgeArgs {
    #[command(subcommand)]
    command: KnowledgeCommand,
}

#[derive(Debug, Subcommand)]
enum KnowledgeCommand {
    /// Search knowledge entries and graph entities.
    Search {
        /// Words to find.
        text: String,
        /// At most this many of each.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Json,
    #[value(alias = "markdown")]
    Md,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum StatusArg {
    Idle,
    Planning,
    Executing,
    Done,
    Partial,
    Failed,
    Abandoned,
}

impl StatusArg {
    fn store(self) -> nomos_store::SessionStatus {
        use nomos_store::SessionStatus as S;
        match self {
            Self::Idle => S::Idle,
            Self::Planning => S::Planning,
            Self::Executing => S::Executing,
            Self::Done => S::Done,
            Self::Partial => S::Partial,
            Self::Failed => S::Failed,
            Self::Abandoned => S::Abandoned,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutcomeArg {
    Success,
    Partial,
    Failed,
    Abandoned,
}

impl OutcomeArg {
    fn store(self) -> nomos_store::Outcome {
        use nomos_store::Outcome as O;
        match self {
            Self::Success => O::Success,
            Self::Partial => O::Partial,
            Self::Failed => O::Failed,
            Self::Abandoned => O::Abandoned,
        }
    }
}

fn core(e: &StoreError) -> CliError {
    CliError::Core(e.code(), e.to_string())
}

fn open_store() -> Result<Store, CliError> {
    let dir = nomos_store::default_data_dir().map_err(|e| core(&e))?;
    Store::open_in_dir(&dir).map_err(|e| core(&e))
}

fn print_json(value: &impl Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::Io(e.into()))?;
    write_json(&text)
}

/// Pretty JSON to stdout: serde escapes line breaks inside strings, so each line is a piece
/// of one document; `term::json` escapes what serde leaves raw, line by line.
fn write_json(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    for line in text.lines() {
        out.write_all(term::json(line).as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

pub fn run(args: SessionsArgs) -> Result<(), CliError> {
    match args.command {
        SessionsCommand::List {
            search,
            status,
            outcome,
            target,
            limit,
            offset,
            json,
        } => {
            let store = open_store()?;
            match search.filter(|s| !s.trim().is_empty()) {
                Some(text) => {
                    let q = SessionSearchQuery {
                        text,
                        prefix: false,
                        statuses: status.iter().map(|s| s.store()).collect(),
                        outcomes: outcome.iter().map(|o| o.store()).collect(),
                        target,
                        limit,
                        offset,
                    };
                    let page = store.search_sessions(&q).map_err(|e| core(&e))?;
                    let page = dto::search_page(page);
                    if json {
                        print_json(&page)
                    } else {
                        print_hits(&page)
                    }
                }
                None => {
                    let wanted: Vec<_> = status.iter().map(|s| s.store()).collect();
                    let rows = store
                        .list_sessions(&SessionQuery {
                            search: None,
                            limit: if wanted.is_empty() { limit } else { 0 },
                        })
                        .map_err(|e| core(&e))?;
                    let rows: Vec<wire::SessionSummary> = rows
                        .into_iter()
                        .filter(|s| wanted.is_empty() || wanted.contains(&s.status))
                        .filter(|s| {
                            outcome.is_empty()
                                || s.outcome
                                    .is_some_and(|o| outcome.iter().any(|w| w.store() == o))
                        })
                        .take(usize::try_from(limit).unwrap_or(usize::MAX))
                        .map(dto::session_summary)
                        .collect();
                    if json {
                        print_json(&rows)
                    } else {
                        print_list(&rows)
                    }
                }
            }
        }
        SessionsCommand::Show { id } => {
            let store = open_store()?;
            let doc = store.export_session(id).map_err(|e| core(&e))?;
            let mut out = std::io::stdout().lock();
            out.write_all(render_show(&doc).as_bytes())?;
            Ok(())
        }
        SessionsCommand::Export { id, format } => {
            let store = open_store()?;
            let doc = store.export_session(id).map_err(|e| core(&e))?;
            match format {
                FormatArg::Json => {
                    write_json(&doc.to_json().map_err(|e| core(&e))?)?;
                }
                FormatArg::Md => std::io::stdout()
                    .lock()
                    .write_all(term::block(&doc.to_markdown()).as_bytes())?,
            }
            Ok(())
        }
        SessionsCommand::Import { file, json } => {
            let text = read_import(&file)?;
            let store = open_store()?;
            let imported = store.import_session_json(&text).map_err(|e| core(&e))?;
            let imported = dto::imported(imported);
            if json {
                return print_json(&imported);
            }
            let s = &imported.session;
            println!(
                "Imported as session {}: {} ({} messages, {} executions, status {}). Nothing ran.",
                s.id,
                term::line(&s.title),
                imported.messages,
                imported.executions,
                status_text(s.status)
            );
            Ok(())
        }
    }
}

/// The file's text, refusing what is too large or not UTF-8 before the store sees it.
fn read_import(file: &std::path::Path) -> Result<String, CliError> {
    let max = nomos_store::MAX_IMPORT_BYTES;
    let mut bytes = Vec::new();
    let cap = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    if file.as_os_str() == "-" {
        std::io::stdin().lock().take(cap).read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(file)?
            .take(cap)
            .read_to_end(&mut bytes)?;
    }
    if bytes.len() > max {
        return Err(core(&StoreError::ImportInvalid {
            detail: format!("the file is larger than {max} bytes"),
        }));
    }
    String::from_utf8(bytes).map_err(|e| {
        core(&StoreError::ImportInvalid {
            detail: format!(
                "the file is not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        })
    })
}

fn status_text(s: wire::SessionStatus) -> &'static str {
    match s {
        wire::SessionStatus::Idle => "idle",
        wire::SessionStatus::Planning => "planning",
        wire::SessionStatus::Executing => "executing",
        wire::SessionStatus::Done => "done",
        wire::SessionStatus::Partial => "partial",
        wire::SessionStatus::Failed => "failed",
        wire::SessionStatus::Abandoned => "abandoned",
    }
}

fn source_text(s: wire::HitSource) -> &'static str {
    match s {
        wire::HitSource::Title => "title",
        wire::HitSource::Goal => "goal",
        wire::HitSource::Summary => "summary",
        wire::HitSource::Message => "message",
        wire::HitSource::Command => "command",
        wire::HitSource::Stdout => "stdout",
        wire::HitSource::Stderr => "stderr",
    }
}

/// The label of a demo session, from its field (never its title), before the title.
fn demo_mark(demo: bool) -> &'static str {
    if demo { "[demo] " } else { "" }
}

fn print_list(rows: &[wire::SessionSummary]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    if rows.is_empty() {
        writeln!(out, "No sessions.")?;
    }
    for s in rows {
        writeln!(
            out,
            "#{:<5} {:<10} {}  {}{}",
            s.id,
            status_text(s.status),
            utc(s.last_active_at_ms),
            demo_mark(s.demo),
            term::line(&s.title)
        )?;
    }
    Ok(())
}

/// A snippet on one line: matched words bold on a terminal, bracketed otherwise.
fn snippet_line(parts: &[wire::SnippetPart], colour: bool) -> String {
    let mut s = String::new();
    for p in parts {
        let text = term::line(&p.text);
        match (p.hit, colour) {
            (true, true) => s.push_str(&format!("\x1b[1m{text}\x1b[0m")),
            (true, false) => s.push_str(&format!("[{text}]")),
            (false, _) => s.push_str(&text),
        }
    }
    s
}

fn print_hits(page: &wire::SessionSearchPage) -> Result<(), CliError> {
    let colour = std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    if page.hits.is_empty() {
        writeln!(out, "No match.")?;
    }
    for h in &page.hits {
        let mut place = source_text(h.source).to_owned();
        if let Some(t) = &h.target {
            place.push_str(&format!(" on {}", term::line(t)));
        }
        if let Some(m) = h.message_id {
            place.push_str(&format!(", message {}", m & 0xffff_ffff));
        }
        writeln!(
            out,
            "#{:<5} {:<10} {}{}\n       {place}: {}",
            h.session.id,
            status_text(h.session.status),
            demo_mark(h.session.demo),
            term::line(&h.session.title),
            snippet_line(&h.snippet, colour)
        )?;
    }
    if page.has_more {
        writeln!(out, "… more matches: use --offset.")?;
    }
    Ok(())
}

/// The first `n` lines of `text`, each escaped and indented.
fn head(text: &str, n: usize, indent: &str) -> String {
    let mut s = String::new();
    let total = text.lines().count();
    for line in text.lines().take(n) {
        s.push_str(indent);
        s.push_str(&term::line(line));
        s.push('\n');
    }
    if total > n {
        s.push_str(&format!("{indent}… {} more lines\n", total - n));
    }
    s
}

/// A session for the terminal: header, plans, transcript (tool calls one line each),
/// executions with the first lines of their output, approvals.
fn render_show(doc: &SessionExport) -> String {
    use std::fmt::Write as _;
    let s = &doc.session;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Session {} · {}{}",
        s.id,
        demo_mark(s.demo),
        term::line(&s.title)
    );
    let _ = writeln!(
        o,
        "Status: {}{} · started {} · last active {}",
        s.status,
        s.outcome.map(|x| format!(" ({x})")).unwrap_or_default(),
        utc(s.created_at_ms),
        utc(s.last_active_at_ms)
    );
    if let Some(g) = &s.goal {
        let _ = writeln!(o, "Goal: {}", term::line(g));
    }
    if let Some(sum) = &s.summary {
        let _ = writeln!(o, "Summary: {}", term::line(sum));
    }
    if let Some(i) = &s.imported {
        let _ = writeln!(o, "Imported {} from {}", utc(i.at_ms), term::line(&i.from));
    }
    let current = doc.plan.last().map(|g| g.generation);
    for g in &doc.plan {
        let state = if Some(g.generation) == current && g.replaced_at_ms.is_none() {
            "current"
        } else {
            "replaced"
        };
        let _ = writeln!(o, "\nPlan v{} ({state})", g.generation);
        for st in &g.steps {
            let _ = write!(o, "  {}. [{}] {}", st.seq, st.status, term::line(&st.title));
            if let Some(t) = &st.target {
                let _ = write!(o, " — {}", term::line(t));
            }
            o.push('\n');
        }
    }
    o.push_str("\nTranscript\n");
    for m in &doc.messages {
        let who = match (m.role, m.auto) {
            (nomos_store::Role::User, false) => "Operator",
            (nomos_store::Role::User, true) => "Operator (resumed)",
            (nomos_store::Role::Assistant, _) => "Nomos",
            (nomos_store::Role::System, _) => "Note",
        };
        let _ = writeln!(o, "[{}] {who}:", utc(m.created_at_ms));
        for line in m.text.lines() {
            let _ = writeln!(o, "    {}", term::line(line));
        }
        if let Some(e) = &m.error {
            let _ = writeln!(o, "    error: {}", term::line(e));
        }
        for c in &m.tool_calls {
            let mark = match (&c.result, c.is_error) {
                (None, _) => "…",
                (Some(_), true) => "✗",
                (Some(_), false) => "✓",
            };
            let _ = writeln!(o, "    → {} {mark}", term::line(&c.name));
        }
    }
    o.push_str("\nExecutions\n");
    if doc.executions.is_empty() {
        o.push_str("  none\n");
    }
    for (i, e) in doc.executions.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {}. {} on {} — {}{}{}",
            i + 1,
            term::line(&e.command),
            term::line(&e.target),
            e.status,
            e.exit_code
                .map(|c| format!(", exit {c}"))
                .unwrap_or_default(),
            e.duration_ms
                .map(|d| format!(", {d} ms"))
                .unwrap_or_default()
        );
        let approval = match (e.approval, &e.approved_by) {
            (None, _) => "none".to_owned(),
            (Some(k), None) => k.to_string(),
            (Some(k), Some(by)) => format!("{k} by {}", term::line(by)),
        };
        let _ = writeln!(
            o,
            "     {} ({}) · approval: {approval}",
            e.class,
            term::line(&e.decision_reason)
        );
        if let Some(err) = &e.error {
            let _ = writeln!(o, "     error: {}", term::line(err));
        }
        o.push_str(&head(&e.stdout, 5, "     | "));
        o.push_str(&head(&e.stderr, 3, "     ! "));
    }
    if !doc.approval_windows.is_empty() {
        o.push_str("\nApprovals\n");
        for w in &doc.approval_windows {
            let _ = write!(
                o,
                "  plan v{}: opened by {} at {}",
                w.generation,
                w.source,
                utc(w.opened_at_ms)
            );
            if let Some(at) = w.closed_at_ms {
                let reason = w.close_reason.map(|r| r.to_string()).unwrap_or_default();
                let _ = write!(o, ", closed {reason} at {}", utc(at));
            }
            o.push('\n');
        }
    }
    o
}

#[derive(Serialize)]
struct KnowledgeResult {
    entries: Vec<nomos_store::KnowledgeHit>,
    entities: Vec<nomos_store::Entity>,
}

pub fn knowledge(args: KnowledgeArgs) -> Result<(), CliError> {
    match args.command {
        KnowledgeCommand::Search { text, limit, json } => {
            let store = open_store()?;
            let entries = store
                .search_knowledge(&KnowledgeQuery {
                    text: text.clone(),
                    prefix: false,
                    kinds: Vec::new(),
                    limit,
                })
                .map_err(|e| core(&e))?;
            let entities = store
                .search_entities(&text, limit)
                .map_err(|e| core(&e))?
                .into_iter()
                .map(|h| h.entity)
                .collect();
            let result = KnowledgeResult { entries, entities };
            if json {
                return print_json(&result);
            }
            let mut out = std::io::stdout().lock();
            if result.entries.is_empty() && result.entities.is_empty() {
                writeln!(out, "No match.")?;
            }
            for e in &result.entries {
                writeln!(
                    out,
                    "[{}] {} ({}) · updated {}\n    {}",
                    e.kind,
                    term::line(&e.title),
                    term::line(&e.slug),
                    utc(e.updated_at_ms),
                    term::line(&e.snippet)
                )?;
            }
            for e in &result.entities {
                let attrs = serde_json::to_string(&e.attributes).unwrap_or_default();
                writeln!(out, "{} {}", term::line(&e.slug), term::line(&attrs))?;
            }
            Ok(())
        }
    }
}
