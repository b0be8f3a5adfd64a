//! SSH connection reuse: the first command to a host (a fresh connection that becomes the
//! ControlMaster) against the second (a session multiplexed over it), both through
//! `Executor::run` to a real `sshd` on 127.0.0.1.
//!
//! Budget (DESIGN §14): second ≤ 15% of first. Reported figures (printed before criterion's
//! own output): the median of each over interleaved rounds in the same run, and their ratio.
//! Loopback makes a fresh connection as cheap as it ever gets (no network round trips), so
//! the ratio here is a pessimistic bound for a real host.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use nomos_exec::testing::TestSshd;
use nomos_exec::{Executor, Limits, SshTransport, Target};
use tokio::runtime::Runtime;

const ROUNDS: usize = 20;

struct Setup {
    rt: Runtime,
    // Dropped last: closes the masters and stops the server.
    sshd: TestSshd,
    exec: Executor,
    target: Target,
    ssh: SshTransport,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("bench").unwrap();
    let ssh = sshd.transport();
    Setup {
        rt,
        sshd,
        exec,
        target,
        ssh,
    }
}

impl Setup {
    /// One command, timed; panics unless it succeeded.
    fn timed_run(&self) -> Duration {
        self.rt.block_on(async {
            let started = Instant::now();
            let out = self
                .exec
                .run(&self.target, "true", &Limits::default())
                .await
                .unwrap();
            let took = started.elapsed();
            assert!(
                out.status.success(),
                "{:?}: {}",
                out.status,
                out.stderr.text
            );
            took
        })
    }

    fn close_master(&self) {
        self.rt.block_on(async {
            self.exec.close_master(&self.ssh).await;
            // `-O exit` returns before the socket is gone; wait so the next run is fresh.
            let deadline = Instant::now() + Duration::from_secs(5);
            while self.exec.master_running(&self.ssh).await && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
    }

    fn ensure_master(&self) {
        if !self.rt.block_on(self.exec.master_running(&self.ssh)) {
            self.timed_run();
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(s: &Setup) {
    // Interleaved, so load from other processes affects both alike.
    let mut first = Vec::with_capacity(ROUNDS);
    let mut second = Vec::with_capacity(ROUNDS);
    let mut ratios = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        s.close_master();
        let a = s.timed_run();
        let b = s.timed_run();
        first.push(a);
        second.push(b);
        ratios.push(b.as_secs_f64() / a.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let (f, sec) = (median(first.clone()), median(second.clone()));
    println!(
        "ssh_reuse: {ROUNDS} rounds against sshd on 127.0.0.1:{}",
        s.sshd.port()
    );
    println!(
        "  first command (fresh connection)  median {:8.2} ms  (min {:.2}, max {:.2})",
        ms(f),
        ms(*first.iter().min().unwrap()),
        ms(*first.iter().max().unwrap())
    );
    println!(
        "  second command (reused master)     median {:8.2} ms  (min {:.2}, max {:.2})",
        ms(sec),
        ms(*second.iter().min().unwrap()),
        ms(*second.iter().max().unwrap())
    );
    println!(
        "  ratio second/first: {:.1}% of medians, {:.1}% median per round (budget ≤ 15%)",
        100.0 * sec.as_secs_f64() / f.as_secs_f64(),
        100.0 * ratios[ratios.len() / 2]
    );
    // Read by `make bench` (scripts/bench/table.mjs).
    for (id, v) in [("exec.ssh.first", ms(f)), ("exec.ssh.second", ms(sec))] {
        println!(
            "BENCH {}",
            serde_json::json!({"id": id, "value": v, "unit": "ms"})
        );
    }
}

fn bench(c: &mut Criterion) {
    let s = setup();
    report(&s);

    let mut group = c.benchmark_group("ssh_reuse");
    group.bench_function("first_command_fresh_master", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                s.close_master();
                total += s.timed_run();
            }
            total
        });
    });
    group.bench_function("second_command_reused_master", |b| {
        b.iter_custom(|iters| {
            s.ensure_master();
            (0..iters).map(|_| s.timed_run()).sum()
        });
    });
    group.finish();
    s.rt.block_on(s.exec.close_all_masters());
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    targets = bench
}
criterion_main!(benches);
