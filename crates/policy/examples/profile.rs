//! Profiling driver for the classifier over the labelled corpus (the benchmark measures;
//! this is for looking inside). `MODE N`:
//! - `parse|lower|classify N`: N passes of one stage, for `valgrind --tool=callgrind
//!   --collect-atstart=no --toggle-collect=profile::run` or `perf record`;
//! - `phases N`: best-of-N whole passes of each stage, and their ratios to parsing;
//! - `warm N`: each command classified twice in a row (cold vs warm caches);
//! - `rank N`: the N commands that cost most over parsing.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::hint::black_box;
use std::time::Instant;

#[path = "../benches/support/corpus.rs"]
mod corpus;

fn main() {
    let cmds = corpus::commands();
    nomos_policy::Policy::default_policy().unwrap();
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("phases");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    run(mode, n, &cmds);
}

#[inline(never)]
fn run(mode: &str, n: usize, cmds: &[String]) {
    match mode {
        "parse" => {
            for _ in 0..n {
                for c in cmds {
                    black_box(nomos_policy::parse_only(c));
                }
            }
        }
        "lower" => {
            for _ in 0..n {
                for c in cmds {
                    black_box(nomos_policy::lower_only(c));
                }
            }
        }
        "classify" => {
            for _ in 0..n {
                for c in cmds {
                    black_box(nomos_policy::classify(c));
                }
            }
        }
        "phases" => {
            let mut best = [f64::MAX; 3];
            for _ in 0..n {
                let t = Instant::now();
                for c in cmds {
                    black_box(nomos_policy::parse_only(c));
                }
                best[0] = best[0].min(t.elapsed().as_secs_f64());
                let t = Instant::now();
                for c in cmds {
                    black_box(nomos_policy::lower_only(c));
                }
                best[1] = best[1].min(t.elapsed().as_secs_f64());
                let t = Instant::now();
                for c in cmds {
                    black_box(nomos_policy::classify(c));
                }
                best[2] = best[2].min(t.elapsed().as_secs_f64());
            }
            println!(
                "parse {:.2} ms, lower {:.2} ms ({:.2}x), classify {:.2} ms ({:.2}x)",
                best[0] * 1e3,
                best[1] * 1e3,
                best[1] / best[0],
                best[2] * 1e3,
                best[2] / best[0]
            );
        }
        "warm" => {
            // Diagnostic: per command, time a second (warm) run right after a first.
            let (mut cw, mut pw, mut cc, mut pc) = (0f64, 0f64, 0f64, 0f64);
            let secs = |f: &dyn Fn()| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            };
            for _ in 0..n {
                for c in cmds {
                    let parse = || {
                        black_box(nomos_policy::parse_only(c));
                    };
                    let classify = || {
                        black_box(nomos_policy::classify(c));
                    };
                    pc += secs(&parse);
                    pw += secs(&parse);
                    cc += secs(&classify);
                    cw += secs(&classify);
                }
            }
            let k = n as f64 / 1e3;
            println!(
                "parse first {:.2} ms warm {:.2} ms; classify first {:.2} ms warm {:.2} ms; ratio first {:.2} warm {:.2}",
                pc / k,
                pw / k,
                cc / k,
                cw / k,
                cc / pc,
                cw / pw
            );
        }
        "rank" => {
            let mut v: Vec<(f64, &String)> = cmds
                .iter()
                .map(|c| {
                    let mut b = f64::MAX;
                    let mut p = f64::MAX;
                    for _ in 0..9 {
                        let t = Instant::now();
                        black_box(nomos_policy::classify(c));
                        b = b.min(t.elapsed().as_secs_f64());
                        let t = Instant::now();
                        black_box(nomos_policy::parse_only(c));
                        p = p.min(t.elapsed().as_secs_f64());
                    }
                    (b - p, c)
                })
                .collect();
            v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
            let tot: f64 = v.iter().map(|x| x.0).sum();
            println!("total extra {:.2} ms", tot * 1e3);
            for (t, c) in v.iter().take(n) {
                println!(
                    "{:8.2} µs  {}",
                    t * 1e6,
                    c.chars().take(150).collect::<String>()
                );
            }
        }
        other => {
            eprintln!("unknown mode `{other}`; use parse, lower, classify, phases, warm or rank");
            std::process::exit(2);
        }
    }
}
