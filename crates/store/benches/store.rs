//! Store benchmarks for the DESIGN.md §14 rows:
//!
//! * append a message + audit row: p99 (budget ≤ 1 ms) and the ratio to a raw insert of the
//!   same bytes into bare tables of the same database, measured in the same run (≤ 1.5×);
//! * open a 10,000-message session (rows → `Transcript`): ≤ 100 ms;
//! * FTS search over 100,000 knowledge entries: p95 ≤ 5 ms.
//!
//! Criterion prints means; the percentile rows come from the custom loops below (per-iteration
//! durations, sorted). `cargo bench -p nomos-store` runs everything; without `--bench`
//! (e.g. `cargo test --benches`) a small smoke version runs instead.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nomos_store::{
    KnowledgeKind, KnowledgeQuery, NewAudit, NewKnowledge, NewMessage, NewSession, SessionId, Store,
};

fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

struct Sizes {
    append_iters: usize,
    transcript_messages: usize,
    transcript_iters: usize,
    knowledge_entries: usize,
    search_iters: usize,
}

fn sizes() -> Sizes {
    if full_run() {
        Sizes {
            append_iters: 20_000,
            transcript_messages: 10_000,
            transcript_iters: 30,
            knowledge_entries: 100_000,
            search_iters: 2_000,
        }
    } else {
        Sizes {
            append_iters: 200,
            transcript_messages: 500,
            transcript_iters: 3,
            knowledge_entries: 2_000,
            search_iters: 50,
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

struct AppendFixture {
    store: Store,
    raw: rusqlite::Connection,
    session: SessionId,
    texts: Vec<String>,
    args: String,
    summary: String,
    _dir: tempfile::TempDir,
}

fn append_fixture() -> AppendFixture {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
    let session = store
        .create_session(NewSession {
            title: "append bench".into(),
            goal: None,
        })
        .unwrap()
        .id;
    let raw = rusqlite::Connection::open(dir.path().join("nomos.db")).unwrap();
    raw.pragma_update(None, "synchronous", "NORMAL").unwrap();
    raw.busy_timeout(Duration::from_secs(5)).unwrap();
    raw.execute_batch(
        "CREATE TABLE IF NOT EXISTS raw_messages (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS raw_audit (id INTEGER PRIMARY KEY, arguments TEXT NOT NULL, summary TEXT NOT NULL);",
    )
    .unwrap();
    let mut rng = Rng(7);
    let texts = (0..256).map(|_| message_text(&mut rng)).collect();
    AppendFixture {
        store,
        raw,
        session,
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

    fn raw(&self, i: usize) {
        let text = &self.texts[i % self.texts.len()];
        let tx = self.raw.unchecked_transaction().unwrap();
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
    let mut raw = Vec::with_capacity(sz.append_iters);
    for i in 0..sz.append_iters {
        // Interleaved so both see the same machine noise and the same growing database.
        let t = Instant::now();
        f.ours(i);
        ours.push(t.elapsed());
        let t = Instant::now();
        f.raw(i);
        raw.push(t.elapsed());
    }
    ours.sort();
    raw.sort();
    let (o50, o99, r50, r99) = (
        pct(&ours, 0.5),
        pct(&ours, 0.99),
        pct(&raw, 0.5),
        pct(&raw, 0.99),
    );
    println!(
        "store/append_message+audit   n={}  p50 {:.1} µs  p99 {:.1} µs  mean {:.1} µs   (budget p99 ≤ 1000 µs)",
        ours.len(),
        us(o50),
        us(o99),
        us(mean(&ours))
    );
    println!(
        "store/raw_insert_same_bytes  n={}  p50 {:.1} µs  p99 {:.1} µs  mean {:.1} µs",
        raw.len(),
        us(r50),
        us(r99),
        us(mean(&raw))
    );
    println!(
        "store/append_vs_raw ratio    p50 {:.2}×  p99 {:.2}×  mean {:.2}×   (budget ≤ 1.5×)",
        us(o50) / us(r50),
        us(o99) / us(r99),
        us(mean(&ours)) / us(mean(&raw))
    );
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
        "store/open_session_transcript  messages={count}  p50 {:.1} ms  max {:.1} ms  mean {:.1} ms   (budget ≤ 100 ms)",
        ms(pct(&times, 0.5)),
        ms(*times.last().unwrap()),
        ms(mean(&times))
    );
    (dir, store, sid)
}

// ---------------------------------------------------------------- FTS

fn knowledge_fixture(n: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path());
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
                    let title = format!("{} {} {}", rng.word(), rng.word(), written);
                    let about = vec![format!("host:node{}", rng.below(500))];
                    w.upsert_knowledge(&NewKnowledge {
                        session_id: None,
                        kind: kinds[written % 4],
                        slug: Some(format!("entry-{written}")),
                        title,
                        body: {
                            let words = 40 + rng.below(80);
                            rng.text(words)
                        },
                        tags: vec![WORDS[rng.below(WORDS.len())].to_owned()],
                        about,
                    })?;
                    written += 1;
                }
                Ok(())
            })
            .unwrap();
    }
    (dir, store)
}

fn queries() -> Vec<KnowledgeQuery> {
    let mut rng = Rng(99);
    let mut qs = Vec::new();
    for i in 0..64 {
        let text = match i % 4 {
            0 => WORDS[rng.below(WORDS.len())].to_owned(),
            1 => format!(
                "{} {}",
                WORDS[rng.below(WORDS.len())],
                WORDS[rng.below(WORDS.len())]
            ),
            2 => rng.word(),
            _ => format!(
                "{} {}",
                WORDS[rng.below(WORDS.len())],
                rng.word().chars().take(4).collect::<String>()
            ),
        };
        qs.push(KnowledgeQuery {
            text,
            kinds: Vec::new(),
            limit: 20,
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
    times.sort();
    println!(
        "store/fts_search  entries={}  queries={}  avg hits {:.1}  p50 {:.2} ms  p95 {:.2} ms  p99 {:.2} ms   (budget p95 ≤ 5 ms)",
        sz.knowledge_entries,
        times.len(),
        hits as f64 / times.len() as f64,
        ms(pct(&times, 0.5)),
        ms(pct(&times, 0.95)),
        ms(pct(&times, 0.99))
    );
    (dir, store)
}

// ---------------------------------------------------------------- criterion groups

fn criterion_benches(c: &mut Criterion) {
    let sz = sizes();
    println!("\n== DESIGN.md §14 store rows (custom percentile loops) ==");
    report_append(&sz);
    let (_d1, tstore, sid) = report_transcript(&sz);
    let (_d2, kstore) = report_fts(&sz);
    println!("== criterion (means) ==\n");

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

    let mut g = c.benchmark_group("store_transcript");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function(format!("open_{}_messages", sz.transcript_messages), |b| {
        b.iter(|| black_box(tstore.transcript(sid).unwrap()))
    });
    g.finish();

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

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = criterion_benches
}

criterion_main!(benches);
