//! Spec debugging: lists every failing spec example, then classifies the commands typed on
//! stdin (one per line) and prints each decision with all its findings.
//!
//! `cargo run -p nomos-policy --example debug < commands.txt`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::BufRead;

fn main() {
    let policy = match nomos_policy::Policy::default_unchecked() {
        Ok(p) => p,
        Err(e) => {
            println!("specs do not load: {e}");
            std::process::exit(1);
        }
    };
    let failures = policy.example_failures();
    for f in &failures {
        println!("failing example: {f}");
    }
    for line in std::io::stdin().lock().lines() {
        let cmd = line.unwrap();
        let d = policy.classify(&cmd);
        println!(
            "{:?}{}  {cmd}",
            d.class,
            if d.unknown { " (unknown)" } else { "" }
        );
        for f in &d.findings {
            println!(
                "    {:?} {} [{}..{}] {}",
                f.class, f.rule, f.span.start, f.span.end, f.reason
            );
        }
        if let Some(c) = &d.canonical {
            println!("    runs: {c}");
        }
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
}
