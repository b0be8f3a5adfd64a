//! Store benchmarks for the DESIGN.md §14 rows:
//!
//! * append a message + audit row: p99 (budget ≤ 250 µs) and the ratio to a raw insert of the
//!   same bytes into bare tables of the same database, measured in the same run (≤ 1.5×);
//! * open a 10,000-message session (rows → `Transcript`): ≤ 30 ms;
//! * FTS search over 100,000 knowledge entries: p95 ≤ 5 ms;
//! * session search over 1,000,000 messages and 100,000 executions' output: p95 ≤ 20 ms.
//!
//! Criterion prints means; the percentile rows come from the custom loops below (per-iteration
//! durations, sorted); each headline figure is also printed as one machine-readable
//! `BENCH {"id":…,"value":…,"unit":…}` line, read by `make bench` (scripts/bench/table.mjs).
//! `cargo bench -p nomos-store` runs everything; without `--bench`
//! (e.g. `cargo test --benches`) a small smoke version runs instead.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nomos_store::{
    KnowledgeKind, KnowledgeQuery, NewAudit, NewKnowledge, NewMessage, NewSession, SessionId, Store,
};

/// `NOMOS_BENCH_ONLY=append,transcript,fts,sessions,criterion` runs a subset (default: all).
fn want(part: &str) -> bool {
    match std::env::var("NOMOS_BENCH_ONLY") {
        Ok(v) if !v.is_empty() => v.split(',').any(|p| p.trim() == part),
        _ => true,
    }
}

fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

struct Sizes {
    append_iters: usize,
    transcript_messages: usize,
    transcript_iters: usize,
    knowledge_entries: usize,
    search_iters: usize,
    session_messages: usize,
}

fn sizes() -> Sizes {
    // `make bench` with BENCH_QUICK=1: the same loops on smaller fixtures, for a smoke.
    let quick = std::env::var_os("BENCH_QUICK").is_some_and(|v| v == "1");
    if full_run() && quick {
        Sizes {
            append_iters: 2_000,
            transcript_messages: 10_000,
            transcript_iters: 10,
            knowledge_entries: 10_000,
            search_iters: 300,
            session_messages: 50_000,
        }
    } else if full_run() {
        Sizes {
            append_iters: 20_000,
            transcript_messages: 10_000,
            transcript_iters: 30,
            knowledge_entries: 100_000,
            search_iters: 2_000,
            session_messages: 1_000_000,
        }
    } else {
        Sizes {
            append_iters: 200,
            transcript_messages: 500,
            transcript_iters: 3,
            knowledge_entries: 2_000,
            search_iters: 50,
            session_messages: 5_000,
        }
    }
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One headline figure for `make bench` (scripts/bench/table.mjs reads these lines).
fn emit(id: &str, value: f64, unit: &str) {
    println!(
        "BENCH {}",
        serde_json::json!({"id": id, "value": value, "unit": unit})
    );
}

fn mean(v: &[Duration]) -> Duration {
    v.iter().sum::<Duration>() / v.len().max(1) as u32
}

// ---------------------------------------------------------------- fixtures

const WORDS: &[&str] = &[
    "nginx",
    "postgres",
    "nextcloud",
    "jellyfin",
    "proxmox",
    "zfs",
    "scrub",
    "pool",
    "backup",
    "rclone",
    "docker",
    "compose",
    "systemd",
    "journal",
    "kernel",
    "upgrade",
    "apt",
    "package",
    "security",
    "patch",
    "certificate",
    "letsencrypt",
    "renewal",
    "disk",
    "smart",
    "temperature",
    "memory",
    "swap",
    "cpu",
    "load",
    "container",
    "lxc",
    "vm",
    "snapshot",
    "replication",
    "network",
    "bridge",
    "vlan",
    "firewall",
    "nftables",
    "ssh",
    "key",
    "rotation",
    "cron",
    "timer",
    "logrotate",
    "grafana",
    "prometheus",
    "alert",
    "uptime",
];

/// Deterministic pseudo-random generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// A word: a common homelab term, or one of ~20,000 rarer synthetic words.
    fn word(&mut self) -> String {
        if self.below(3) == 0 {
            WORDS[self.below(WORDS.len())].to_owned()
        } else {
            let n = self.below(20_000);
            format!(
                "{}{}",
                ["srv", "pkg", "svc", "lib", "host", "vol"][n % 6],
                n
            )
        }
    }
    fn text(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| self.word())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn message_text(rng: &mut Rng) -> String {
    let n = 30 + rng.below(50);
    rng.text(n)
}

fn open_store(dir: &Path) -> Store {
    Store::open_in_dir(dir).unwrap()
}

// ---------------------------------------------------------------- append

/// A plain connection to its own database file, with the store's settings (WAL,
/// `synchronous=NORMAL`) and the same background checkpointing, so that the comparison is
/// about the inserts, not about who pays for checkpoints or whose page cache another
/// connection's write invalidated.
struct PlainDb {
    conn: rusqlite::Connection,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PlainDb {
    fn open(path: &Path) -> PlainDb {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 20_000)
            .unwrap();
        conn.busy_timeout(Duration::from_secs(5)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let ck = rusqlite::Connection::open(path).unwrap();
        let thread = std::thread::spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                rx.recv_timeout(Duration::from_millis(250))
            {
                let _ = ck.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            }
        });
        PlainDb {
            conn,
            stop: Some(tx),
            thread: Some(thread),
        }
    }
}

impl Drop for PlainDb {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct AppendFixture {
    store: Store,
    raw: PlainDb,
    tables: PlainDb,
    session: SessionId,
    tables_session: SessionId,
    texts: Vec<String>,
    args: String,
    summary: String,
    _dir: tempfile::TempDir,
}

fn append_fixture() -> AppendFixture {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    let new = || NewSession {
        title: "append bench".into(),
        goal: None,
    };
    let session = store.create_session(new()).unwrap().id;
    // A second store database, written with plain INSERTs.
    let tables_path = dir.path().join("tables.db");
    let tables_session = Store::open(&tables_path)
        .unwrap()
        .create_session(new())
        .unwrap()
        .id;
    let tables = PlainDb::open(&tables_path);
    // First rows with explicit clustered ids; after them SQLite's max + 1 rowids follow.
    tables
        .conn
        .execute_batch(&format!(
            "INSERT INTO messages (id, session_id, role, text, created_at_ms, updated_at_ms)
             VALUES ({id}, {tables_session}, 'user', 'start', 1, 1);
             INSERT INTO audit_log (id, session_id, tool, created_at_ms) VALUES ({id}, {tables_session}, 'start', 1);",
            id = (tables_session << 32) + 1
        ))
        .unwrap();
    let raw = PlainDb::open(&dir.path().join("raw.db"));
    raw.conn
        .execute_batch(
            "CREATE TABLE raw_messages (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
             CREATE TABLE raw_audit (id INTEGER PRIMARY KEY, arguments TEXT NOT NULL, summary TEXT NOT NULL);",
        )
        .unwrap();
    let mut rng = Rng(7);
    let texts = (0..256).map(|_| message_text(&mut rng)).collect();
    AppendFixture {
        store,
        raw,
        tables,
        session,
        tables_session,
        texts,
        args: r#"{"target":"host:web-01","command":"apt list --upgradable"}"#.to_owned(),
        summary: "exit 0; 12 packages upgradable".to_owned(),
        _dir: dir,
    }
}

impl AppendFixture {
    fn ours(&self, i: usize) {
        let text = &self.texts[i % self.texts.len()];
        self.store
            .write(|w| {
                let m = w.append_message(&NewMessage::assistant(self.session, text.as_str()))?;
                w.record_audit(
                    &NewAudit::new(
                        Some(self.session),
                        "run",
                        self.args.as_str(),
                        self.summary.as_str(),
                    )
                    .message(m.id),
                )?;
                Ok(())
            })
            .unwrap();
    }

    /// The same rows with plain INSERTs into the store's own tables (indexes, constraints),
    /// without the store's code: shows how the overhead splits between schema and code.
    fn store_tables(&self, i: usize) {
        // One session, so SQLite's default rowid (max + 1) is already the clustered id
        // `session << 32 | n`.
        let text = &self.texts[i % self.texts.len()];
        let tx = self.tables.conn.unchecked_transaction().unwrap();
        tx.prepare_cached(
            "INSERT INTO messages (session_id, role, text, auto, created_at_ms, updated_at_ms)
             VALUES (?1, 'assistant', ?2, 0, 5, 5)",
        )
        .unwrap()
        .execute(rusqlite::params![self.tables_session, text])
        .unwrap();
        let id = tx.last_insert_rowid();
        tx.prepare_cached(
            "INSERT INTO audit_log (session_id, generation, message_id, tool, arguments, result_summary, ok, created_at_ms)
             VALUES (?1, 0, ?2, 'run', ?3, ?4, 1, 5)",
        )
        .unwrap()
        .execute(rusqlite::params![self.tables_session, id, &self.args, &self.summary])
        .unwrap();
        tx.commit().unwrap();
    }

    fn raw(&self, i: usize) {
        let text = &self.texts[i % self.texts.len()];
        let tx = self.raw.conn.unchecked_transaction().unwrap();
        tx.prepare_cached("INSERT INTO raw_messages (body) VALUES (?1)")
            .unwrap()
            .execute([text])
            .unwrap();
        tx.prepare_cached("INSERT INTO raw_audit (arguments, summary) VALUES (?1, ?2)")
            .unwrap()
            .execute([&self.args, &self.summary])
            .unwrap();
        tx.commit().unwrap();
    }
}

fn report_append(sz: &Sizes) {
    let f = append_fixture();
    for i in 0..200 {
        f.ours(i);
        f.raw(i);
    }
    let mut ours = Vec::with_capacity(sz.append_iters);
    let mut tables = Vec::with_capacity(sz.append_iters);
    let mut raw = Vec::with_capacity(sz.append_iters);
    for i in 0..sz.append_iters {
        // Interleaved so all three see the same machine noise and the same growing database.
        let t = Instant::now();
        f.ours(i);
        ours.push(t.elapsed());
        let t = Instant::now();
        f.store_tables(i);
        tables.push(t.elapsed());
        let t = Instant::now();
        f.raw(i);
        raw.push(t.elapsed());
    }
    ours.sort();
    tables.sort();
    raw.sort();
    let row = |name: &str, v: &[Duration], note: &str| {
        println!(
            "store/{name:<28} n={}  p50 {:>6.1} µs  p99 {:>6.1} µs  p99.9 {:>7.1} µs  mean {:>6.1} µs{note}",
            v.len(),
            us(pct(v, 0.5)),
            us(pct(v, 0.99)),
            us(pct(v, 0.999)),
            us(mean(v))
        );
    };
    row("append_message+audit", &ours, "   (budget p99 ≤ 250 µs)");
    row("raw_insert_same_bytes", &raw, "");
    row(
        "plain_insert_store_tables",
        &tables,
        "   (same rows, plain INSERTs into the store's tables)",
    );
    println!(
        "store/append_vs_raw ratio          p50 {:.2}×  p99 {:.2}×  mean {:.2}×   (budget ≤ 1.5×)",
        us(pct(&ours, 0.5)) / us(pct(&raw, 0.5)),
        us(pct(&ours, 0.99)) / us(pct(&raw, 0.99)),
        us(mean(&ours)) / us(mean(&raw))
    );
    // Message text is indexed for search off the commit path; what is still queued after the
    // loop (the background thread indexes when idle or when the queue is long) is indexed
    // here, to show what that work costs per message.
    let t = Instant::now();
    let n = f.store.index_queued_messages().unwrap();
    let d = t.elapsed();
    println!(
        "store/append_index_backlog         {n} queued messages indexed in {:.1} ms ({:.1} µs per message, off the append path)",
        ms(d),
        us(d) / n.max(1) as f64
    );
    emit("store.append.p99", us(pct(&ours, 0.99)), "us");
    emit("store.append.p50", us(pct(&ours, 0.5)), "us");
    emit("store.append.raw_p99", us(pct(&raw, 0.99)), "us");
    emit("store.append.raw_p50", us(pct(&raw, 0.5)), "us");
}

// ---------------------------------------------------------------- transcript

fn transcript_fixture(n: usize) -> (tempfile::TempDir, Store, SessionId) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    let sid = store
        .create_session(NewSession {
            title: "long session".into(),
            goal: None,
        })
        .unwrap()
        .id;
    let mut rng = Rng(11);
    let mut written = 0;
    while written < n {
        store
            .write(|w| {
                for _ in 0..1000.min(n - written) {
                    match written % 3 {
                        0 => {
                            w.append_message(&NewMessage::user(sid, message_text(&mut rng)))?;
                        }
                        1 => {
                            let m = w.begin_assistant_message(sid, false)?;
                            w.append_text(m.id, &message_text(&mut rng))?;
                            let call = format!("call_{written}");
                            w.record_tool_call(
                                m.id,
                                &call,
                                "run",
                                r#"{"target":"host:a","command":"df -h"}"#,
                            )?;
                            w.set_tool_result(m.id, &call, &rng.text(60), false)?;
                            w.finish_message(m.id, None)?;
                        }
                        _ => {
                            w.append_message(&NewMessage::assistant(sid, message_text(&mut rng)))?;
                        }
                    }
                    written += 1;
                }
                Ok(())
            })
            .unwrap();
    }
    (dir, store, sid)
}

fn report_transcript(sz: &Sizes) -> (tempfile::TempDir, Store, SessionId) {
    let (dir, store, sid) = transcript_fixture(sz.transcript_messages);
    black_box(store.transcript(sid).unwrap());
    let mut times = Vec::new();
    let mut count = 0;
    for _ in 0..sz.transcript_iters {
        let t = Instant::now();
        let tr = store.transcript(sid).unwrap();
        times.push(t.elapsed());
        count = tr.messages.len();
        black_box(tr);
    }
    times.sort();
    println!(
        "store/open_session_transcript  messages={count}  p50 {:.1} ms  max {:.1} ms  mean {:.1} ms   (budget ≤ 30 ms)",
        ms(pct(&times, 0.5)),
        ms(*times.last().unwrap()),
        ms(mean(&times))
    );
    emit("store.transcript.messages", count as f64, "count");
    emit("store.transcript.p50", ms(pct(&times, 0.5)), "ms");
    emit("store.transcript.max", ms(*times.last().unwrap()), "ms");
    // What the window reads to open it: the newest page and the executions it shows.
    let mut page_times = Vec::new();
    for _ in 0..sz.transcript_iters.max(10) {
        let t = Instant::now();
        let page = store
            .read(|r| {
                let page = r.message_page(sid, nomos_store::PageAt::Latest, 200)?;
                let (first, last) = (page.messages[0].id, page.messages.last().unwrap().id);
                Ok((r.executions_for_page(sid, first, last)?, page))
            })
            .unwrap();
        page_times.push(t.elapsed());
        black_box(page);
    }
    page_times.sort();
    let page_p50 = ms(pct(&page_times, 0.5));
    println!(
        "store/open_session_page  200 of {count} messages  p50 {page_p50:.2} ms  max {:.2} ms   ({:.3}× the whole transcript, same run)",
        ms(*page_times.last().unwrap()),
        page_p50 / ms(pct(&times, 0.5)),
    );
    emit("store.transcript_page.p50", page_p50, "ms");
    (dir, store, sid)
}

// ---------------------------------------------------------------- FTS

/// Filler vocabulary: 20,000 words with Zipf-like frequencies (word `r` drawn ∝ 1/r), as in
/// prose: a few words are everywhere, most are rare.
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Zipf {
        let mut acc = 0.0;
        let cumulative = (1..=n)
            .map(|r| {
                acc += 1.0 / r as f64;
                acc
            })
            .collect();
        Zipf { cumulative }
    }
    fn rank(&self, rng: &mut Rng) -> usize {
        let total = *self.cumulative.last().unwrap();
        let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        self.cumulative.partition_point(|c| *c < x)
    }
    fn word(&self, rng: &mut Rng) -> String {
        filler(self.rank(rng))
    }
}

/// Word number `rank` of the prose vocabulary: pronounceable, two to four syllables, so
/// prefixes are shared the way they are in natural language (not `w1`, `w10`, `w100`, …).
fn filler(rank: usize) -> String {
    const SYL: [&str; 24] = [
        "ka", "lo", "mi", "ten", "ru", "sa", "vel", "do", "pi", "gar", "no", "tri", "bel", "shu",
        "fo", "zan", "qui", "ep", "or", "dal", "wy", "ce", "mon", "ix",
    ];
    let mut n = rank + 24 * 24; // at least two syllables
    let mut w = String::new();
    while n > 0 {
        w.push_str(SYL[n % 24]);
        n /= 24;
    }
    w
}

/// Knowledge entries like a homelab's: each is about one to three topics (service, tool or
/// concern names) that recur in its title, tags and body, amid Zipf-distributed prose.
fn knowledge_fixture(n: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    let zipf = Zipf::new(20_000);
    let mut rng = Rng(23);
    let kinds = [
        KnowledgeKind::Investigation,
        KnowledgeKind::Document,
        KnowledgeKind::Runbook,
        KnowledgeKind::Note,
    ];
    let mut written = 0;
    while written < n {
        store
            .write(|w| {
                for _ in 0..5000.min(n - written) {
                    let topics: Vec<&str> = (0..1 + rng.below(3))
                        .map(|_| WORDS[rng.below(WORDS.len())])
                        .collect();
                    let len = 60 + rng.below(90);
                    let body: Vec<String> = (0..len)
                        .map(|_| {
                            if rng.below(10) == 0 {
                                topics[rng.below(topics.len())].to_owned()
                            } else {
                                zipf.word(&mut rng)
                            }
                        })
                        .collect();
                    w.upsert_knowledge(&NewKnowledge {
                        session_id: None,
                        kind: kinds[written % 4],
                        slug: Some(format!("entry-{written}")),
                        title: format!("{} {} {written}", topics.join(" "), zipf.word(&mut rng)),
                        body: body.join(" "),
                        tags: topics.iter().map(|t| (*t).to_owned()).collect(),
                        about: vec![format!("host:node{}", rng.below(500))],
                    })?;
                    written += 1;
                }
                Ok(())
            })
            .unwrap();
    }
    (dir, store)
}

/// Queries as the agent and the UI send them: one to three whole words (topics, common and
/// rarer prose words), and typed prefixes (the UI's search as you type).
fn queries() -> Vec<KnowledgeQuery> {
    let mut rng = Rng(99);
    let mut qs = Vec::new();
    for i in 0..100 {
        let topic = |rng: &mut Rng| WORDS[rng.below(WORDS.len())].to_owned();
        let text = match i % 10 {
            0..=3 => topic(&mut rng),
            4 | 5 => format!("{} {}", topic(&mut rng), topic(&mut rng)),
            6 => format!("{} {}", topic(&mut rng), filler(rng.below(100))),
            7 => filler(100 + rng.below(1900)),
            8 => topic(&mut rng).chars().take(3 + rng.below(2)).collect(),
            _ => format!(
                "{} {} {}",
                topic(&mut rng),
                filler(rng.below(50)),
                filler(50 + rng.below(500))
            ),
        };
        qs.push(KnowledgeQuery {
            text,
            kinds: Vec::new(),
            limit: 20,
            // The UI's search-as-you-type; the agent sends whole words.
            prefix: i % 10 == 8,
        });
    }
    qs
}

fn report_fts(sz: &Sizes) -> (tempfile::TempDir, Store) {
    let t = Instant::now();
    let (dir, store) = knowledge_fixture(sz.knowledge_entries);
    println!(
        "store/fts_fixture  {} entries written in {:.1} s",
        sz.knowledge_entries,
        t.elapsed().as_secs_f64()
    );
    let qs = queries();
    for q in &qs {
        black_box(store.search_knowledge(q).unwrap());
    }
    let mut times = Vec::with_capacity(sz.search_iters);
    let mut hits = 0usize;
    for i in 0..sz.search_iters {
        let q = &qs[i % qs.len()];
        let t = Instant::now();
        let r = store.search_knowledge(q).unwrap();
        times.push(t.elapsed());
        hits += r.len();
    }
    if std::env::var("NOMOS_BENCH_DEBUG").is_ok() {
        let mut per: Vec<(Duration, &str)> = qs
            .iter()
            .map(|q| {
                let t = Instant::now();
                black_box(store.search_knowledge(q).unwrap());
                (t.elapsed(), q.text.as_str())
            })
            .collect();
        per.sort();
        for (d, q) in per.iter().rev().take(8) {
            println!("  slow query {:>7.2} ms  {q}", ms(*d));
        }
    }
    times.sort();
    println!(
        "store/fts_search  entries={}  searches={}  avg hits {:.1}  p50 {:.2} ms  p95 {:.2} ms  p99 {:.2} ms   (budget p95 ≤ 5 ms)",
        sz.knowledge_entries,
        times.len(),
        hits as f64 / times.len() as f64,
        ms(pct(&times, 0.5)),
        ms(pct(&times, 0.95)),
        ms(pct(&times, 0.99))
    );
    emit("store.fts.entries", sz.knowledge_entries as f64, "count");
    emit("store.fts.p95", ms(pct(&times, 0.95)), "ms");
    (dir, store)
}

// ---------------------------------------------------------------- session search

/// `n` messages over `n / 1000` sessions (Zipf prose with homelab topics) and one execution per
/// ten messages with 20 lines of output, written as rows (the triggers index them as they do
/// live rows) in large transactions, so the fixture builds in minutes.
fn session_search_fixture(n: usize) -> (tempfile::TempDir, Store) {
    session_search_fixture_in(tempfile::tempdir().unwrap(), n)
}

fn session_search_fixture_in(dir: tempfile::TempDir, n: usize) -> (tempfile::TempDir, Store) {
    drop(open_store(dir.path()));
    let zipf = Zipf::new(20_000);
    let mut rng = Rng(31);
    let mut c = rusqlite::Connection::open(dir.path().join("nomos.db")).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    c.pragma_update(None, "synchronous", "OFF").unwrap();
    let per_session = 1000usize;
    let statuses = ["done", "partial", "failed", "executing"];
    let mut written = 0usize;
    let mut session = 0i64;
    while written < n {
        session += 1;
        let tx = c.transaction().unwrap();
        let status = statuses[session as usize % 4];
        let outcome = match status {
            "done" => Some("success"),
            "partial" => Some("partial"),
            "failed" => Some("failed"),
            _ => None,
        };
        let topic = WORDS[rng.below(WORDS.len())];
        tx.execute(
            "INSERT INTO sessions (id, title, goal, status, outcome, created_at_ms, updated_at_ms, last_active_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?1, ?1, ?1)",
            rusqlite::params![session, format!("{topic} check {session}"), format!("look at {topic}"), status, outcome],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO plan_generations (session_id, generation, proposed_at_ms) VALUES (?1, 1, ?1)",
            [session],
        )
        .unwrap();
        for k in 0..per_session.min(n - written) {
            let id = (session << 32) + k as i64 + 1;
            let words = 30 + rng.below(50);
            let text: Vec<String> = (0..words)
                .map(|_| {
                    if rng.below(8) == 0 {
                        WORDS[rng.below(WORDS.len())].to_owned()
                    } else {
                        zipf.word(&mut rng)
                    }
                })
                .collect();
            let role = ["user", "assistant", "assistant"][k % 3];
            tx.execute(
                "INSERT INTO messages (id, session_id, role, text, created_at_ms, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?1, ?1)",
                rusqlite::params![id, session, role, text.join(" ")],
            )
            .unwrap();
            if k % 10 == 1 {
                let out: Vec<String> = (0..20)
                    .map(|_| format!("{} {} {}", rng.word(), zipf.word(&mut rng), rng.below(1000)))
                    .collect();
                tx.execute(
                    "INSERT INTO executions (session_id, generation, target, command, canonical, class, status,
                         exit_code, stdout, created_at_ms, updated_at_ms)
                     VALUES (?1, 1, ?2, ?3, ?3, 'read_only', 'finished', 0, ?4, ?5, ?5)",
                    rusqlite::params![
                        session,
                        format!("host:node{}", rng.below(50)),
                        format!("systemctl status {}", WORDS[rng.below(WORDS.len())]),
                        out.join("\n"),
                        id
                    ],
                )
                .unwrap();
            }
            written += 1;
        }
        tx.commit().unwrap();
    }
    drop(c);
    let store = open_store(dir.path());
    // The rows were written with plain INSERTs: their text waits in the index queue.
    let t = Instant::now();
    let n = store.index_queued_messages().unwrap();
    println!(
        "store/session_search_fixture  indexed {n} queued messages in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    (dir, store)
}

fn session_queries() -> Vec<nomos_store::SessionSearchQuery> {
    use nomos_store::{Outcome, SessionSearchQuery, SessionStatus};
    let mut rng = Rng(77);
    (0..100)
        .map(|i| {
            let topic = |rng: &mut Rng| WORDS[rng.below(WORDS.len())].to_owned();
            let text = match i % 10 {
                0..=2 => topic(&mut rng),
                3 => format!("{} {}", topic(&mut rng), topic(&mut rng)),
                4 => format!("{} {}", topic(&mut rng), filler(rng.below(100))),
                5 => filler(100 + rng.below(1900)),
                6 => rng.word(),
                7 => topic(&mut rng).chars().take(3 + rng.below(2)).collect(),
                _ => format!("systemctl {}", topic(&mut rng)),
            };
            SessionSearchQuery {
                text,
                prefix: i % 10 == 7,
                statuses: if i % 4 == 0 {
                    vec![SessionStatus::Failed]
                } else {
                    Vec::new()
                },
                outcomes: if i % 7 == 0 {
                    vec![Outcome::Success]
                } else {
                    Vec::new()
                },
                target: (i % 9 == 0).then(|| format!("host:node{}", i % 50)),
                limit: 30,
                offset: 0,
            }
        })
        .collect()
}

/// Bumped whenever `session_search_fixture` writes different rows, so a cached file is
/// never read by a generator it was not made by.
const SESSION_FIXTURE_GENERATION: u32 = 1;

/// The 1,000,000-message fixture takes minutes to write, so it is kept on disk under the
/// target directory (`CARGO_TARGET_TMPDIR`), keyed by the store's schema version, the
/// generator's version and the size; a new schema builds a new one. Written to a scratch
/// directory and renamed into place only when complete, so an interrupted build is never
/// reused. `NOMOS_BENCH_NO_CACHE=1` builds it in a temporary directory instead.
fn cached_session_search_store(n: usize) -> (Option<tempfile::TempDir>, Store) {
    if std::env::var_os("NOMOS_BENCH_NO_CACHE").is_some() || !full_run() {
        let (dir, store) = session_search_fixture(n);
        return (Some(dir), store);
    }
    let schema = nomos_store::latest_schema_version();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nomos-bench");
    std::fs::create_dir_all(&root).unwrap();
    let dir = root.join(format!(
        "session-search-schema{schema}-gen{SESSION_FIXTURE_GENERATION}-{n}"
    ));
    if !dir.join(nomos_store::DB_FILE_NAME).exists() {
        let (scratch, store) = session_search_fixture_in(tempfile::tempdir_in(&root).unwrap(), n);
        drop(store);
        let scratch = scratch.keep();
        std::fs::rename(&scratch, &dir).unwrap();
        println!("store/session_search_fixture cached in {}", dir.display());
    } else {
        println!("store/session_search_fixture reused from {}", dir.display());
    }
    (None, open_store(&dir))
}

fn report_session_search(sz: &Sizes) {
    let t = Instant::now();
    let (_dir, store) = cached_session_search_store(sz.session_messages);
    println!(
        "store/session_search_fixture  {} messages, {} executions ready in {:.1} s",
        sz.session_messages,
        sz.session_messages / 10,
        t.elapsed().as_secs_f64()
    );
    let qs = session_queries();
    for q in &qs {
        black_box(store.search_sessions(q).unwrap());
    }
    let mut times = Vec::with_capacity(sz.search_iters);
    let mut hits = 0usize;
    let mut per: Vec<(Duration, String)> = Vec::new();
    for i in 0..sz.search_iters {
        let q = &qs[i % qs.len()];
        let t = Instant::now();
        let r = store.search_sessions(q).unwrap();
        let d = t.elapsed();
        times.push(d);
        hits += r.hits.len();
        if i < qs.len() {
            per.push((d, q.text.clone()));
        }
    }
    if std::env::var("NOMOS_BENCH_DEBUG").is_ok() {
        per.sort();
        for (d, q) in per.iter().rev().take(8) {
            println!("  slow query {:>7.2} ms  {q}", ms(*d));
        }
    }
    times.sort();
    println!(
        "store/session_search  messages={}  searches={}  avg hits {:.1}  p50 {:.2} ms  p95 {:.2} ms  p99 {:.2} ms   (budget p95 ≤ 20 ms)",
        sz.session_messages,
        times.len(),
        hits as f64 / times.len() as f64,
        ms(pct(&times, 0.5)),
        ms(pct(&times, 0.95)),
        ms(pct(&times, 0.99))
    );
    emit(
        "store.session_search.messages",
        sz.session_messages as f64,
        "count",
    );
    emit("store.session_search.p95", ms(pct(&times, 0.95)), "ms");
}

// ---------------------------------------------------------------- criterion groups

fn criterion_benches(c: &mut Criterion) {
    let sz = sizes();
    println!("\n== DESIGN.md §14 store rows (custom percentile loops) ==");
    if want("append") {
        report_append(&sz);
    }
    let transcript = want("transcript").then(|| report_transcript(&sz));
    let knowledge = want("fts").then(|| report_fts(&sz));
    if want("sessions") {
        report_session_search(&sz);
    }
    if !want("criterion") {
        return;
    }
    println!("== criterion (means) ==\n");

    if want("append") {
        let f = append_fixture();
        let mut g = c.benchmark_group("store_append");
        let mut i = 0usize;
        g.bench_function("append_message+audit", |b| {
            b.iter(|| {
                i += 1;
                f.ours(i)
            })
        });
        g.bench_function("raw_insert_same_bytes", |b| {
            b.iter(|| {
                i += 1;
                f.raw(i)
            })
        });
        g.finish();
    }

    if let Some((_dir, tstore, sid)) = &transcript {
        let mut g = c.benchmark_group("store_transcript");
        g.sample_size(10).measurement_time(Duration::from_secs(5));
        g.bench_function(format!("open_{}_messages", sz.transcript_messages), |b| {
            b.iter(|| black_box(tstore.transcript(*sid).unwrap()))
        });
        g.finish();
    }

    if let Some((_dir, kstore)) = &knowledge {
        let qs = queries();
        let mut g = c.benchmark_group("store_fts");
        let mut qi = 0usize;
        g.bench_function(format!("search_{}_entries", sz.knowledge_entries), |b| {
            b.iter(|| {
                qi += 1;
                black_box(kstore.search_knowledge(&qs[qi % qs.len()]).unwrap())
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = criterion_benches
}

criterion_main!(benches);
