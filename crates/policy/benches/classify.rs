//! Classify the labelled corpus, with shell parsing alone as the reference measured in
//! the same run. Prints the median time per command and the classify/parse ratio
//! (budget: ratio ≤ 2, median ≤ 5 µs).
//! Prints `BENCH {"id":…}` lines read by `make bench`; the corpus-pass ratio there is read
//! from criterion's own estimates (`corpus/classify`, `corpus/parse_only`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};

#[path = "support/corpus.rs"]
mod corpus;

fn bench(c: &mut Criterion) {
    let cmds = corpus::commands();
    // Load (and self-test) the specs outside the measurement.
    nomos_policy::Policy::default_policy().unwrap();
    let mut g = c.benchmark_group("corpus");
    g.bench_function("parse_only", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(nomos_policy::parse_only(black_box(cmd)));
            }
        })
    });
    g.bench_function("classify", |b| {
        b.iter(|| {
            for cmd in &cmds {
                black_box(nomos_policy::classify(black_box(cmd)));
            }
        })
    });
    g.finish();
}

/// Per-command medians, measured in the same run, printed as the headline figures.
fn summary() {
    let cmds = corpus::commands();
    nomos_policy::Policy::default_policy().unwrap();
    let rounds = 15;
    let mut classify_med = Vec::with_capacity(cmds.len());
    let mut parse_med = Vec::with_capacity(cmds.len());
    let (mut classify_total, mut parse_total) = (Duration::ZERO, Duration::ZERO);
    let mut excess = Vec::with_capacity(cmds.len());
    for cmd in &cmds {
        let mut cs = Vec::with_capacity(rounds);
        let mut ps = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let t = Instant::now();
            black_box(nomos_policy::parse_only(black_box(cmd)));
            ps.push(t.elapsed());
            let t = Instant::now();
            black_box(nomos_policy::classify(black_box(cmd)));
            cs.push(t.elapsed());
        }
        cs.sort();
        ps.sort();
        classify_med.push(cs[rounds / 2]);
        parse_med.push(ps[rounds / 2]);
        classify_total += cs[rounds / 2];
        parse_total += ps[rounds / 2];
        excess.push((cs[rounds / 2].saturating_sub(ps[rounds / 2]), cmd.as_str()));
    }
    // Where classifying costs most beyond parsing: the commands to look at first.
    if std::env::var_os("NOMOS_BENCH_DETAIL").is_some() {
        excess.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (d, cmd) in excess.iter().take(25) {
            println!(
                "  +{:>8.2} µs  {}",
                d.as_secs_f64() * 1e6,
                cmd.chars().take(100).collect::<String>()
            );
        }
        // How much of the whole excess the costliest commands hold: a small share means
        // the ratio is a cost every command pays, not a few slow ones.
        let all: Duration = excess.iter().map(|e| e.0).sum();
        let share = |n: usize| {
            let top: Duration = excess.iter().take(n).map(|e| e.0).sum();
            100.0 * top.as_secs_f64() / all.as_secs_f64().max(f64::MIN_POSITIVE)
        };
        println!(
            "  excess over parsing: {:.2} ms in all; the costliest 25 hold {:.1}%, 100 hold {:.1}%, 1000 hold {:.1}%",
            all.as_secs_f64() * 1e3,
            share(25),
            share(100),
            share(1000)
        );
    }
    classify_med.sort();
    parse_med.sort();
    let median = |v: &[Duration]| v[v.len() / 2];
    let p95 = |v: &[Duration]| v[v.len() * 95 / 100];
    println!();
    println!("policy classifier over {} corpus commands:", cmds.len());
    println!(
        "  classify:   median {:.2} µs/command, p95 {:.2} µs, total {:.2} ms",
        median(&classify_med).as_secs_f64() * 1e6,
        p95(&classify_med).as_secs_f64() * 1e6,
        classify_total.as_secs_f64() * 1e3
    );
    println!(
        "  parse only: median {:.2} µs/command, p95 {:.2} µs, total {:.2} ms",
        median(&parse_med).as_secs_f64() * 1e6,
        p95(&parse_med).as_secs_f64() * 1e6,
        parse_total.as_secs_f64() * 1e3
    );
    println!(
        "  ratio classify/parse: {:.2}x total, {:.2}x median (budget: <= 2x, median <= 5 µs)",
        classify_total.as_secs_f64() / parse_total.as_secs_f64(),
        median(&classify_med).as_secs_f64() / median(&parse_med).as_secs_f64()
    );
    // Whole passes over the corpus, alternating, as criterion measures them (cold caches
    // between commands included).
    let passes = 21;
    let (mut cp, mut pp) = (Vec::with_capacity(passes), Vec::with_capacity(passes));
    let mut paired = Vec::with_capacity(passes);
    for _ in 0..passes {
        let t = Instant::now();
        for cmd in &cmds {
            black_box(nomos_policy::parse_only(black_box(cmd)));
        }
        let p = t.elapsed();
        let t = Instant::now();
        for cmd in &cmds {
            black_box(nomos_policy::classify(black_box(cmd)));
        }
        let c = t.elapsed();
        pp.push(p);
        cp.push(c);
        paired.push(c.as_secs_f64() / p.as_secs_f64());
    }
    cp.sort();
    pp.sort();
    paired.sort_by(f64::total_cmp);
    println!(
        "  whole corpus pass: classify {:.2} ms, parse only {:.2} ms (medians of {passes}): {:.2}x",
        cp[passes / 2].as_secs_f64() * 1e3,
        pp[passes / 2].as_secs_f64() * 1e3,
        cp[passes / 2].as_secs_f64() / pp[passes / 2].as_secs_f64()
    );
    // A pass walks every command once, so the classifier's larger code and tables start
    // cold in the caches for each, and a busy machine's other processes evict them further.
    // Each classify pass against the parse pass just before it shares that machine state.
    println!(
        "  whole corpus pass, each classify pass ÷ the parse pass before it: median {:.2}x, lowest {:.2}x",
        paired[passes / 2],
        paired[0]
    );
    // Read by `make bench` (scripts/bench/table.mjs).
    for (id, v) in [
        ("policy.classify_median", median(&classify_med)),
        ("policy.parse_median", median(&parse_med)),
    ] {
        println!(
            "BENCH {{\"id\":\"{id}\",\"value\":{},\"unit\":\"us\"}}",
            v.as_secs_f64() * 1e6
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
