//! One command fanned out to 20 SSH hosts against the slowest single host (DESIGN §14:
//! ≤ 1.5× the slowest single host), through `Executor::run` to a real `sshd` on 127.0.0.1.
//!
//! The 20 "hosts" are 20 ssh aliases of the same loopback server, so each has its own
//! connection and ControlMaster, as distinct hosts would. Two forms, interleaved per round
//! so machine noise hits both alike:
//! * cold: no master open (20 fresh connections at once);
//! * warm: each host's master already open (the steady state of a session).
//!
//! The reference, in the same run, is each host alone, one after the other: the slowest of
//! those is the "slowest single host". On loopback a fresh connection costs CPU (key
//! exchange) rather than network round trips, so the cold fan-out on a 2-core machine is a
//! pessimistic bound for real hosts, where the time is mostly waiting.
//!
//! Prints `BENCH {"id":…}` lines read by `make bench`. `BENCH_QUICK=1` runs fewer rounds.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_exec::testing::{TEST_HOST_ALIAS, TestSshd};
use nomos_exec::{Executor, Limits, SshTransport, Target, TargetSlug, Transport};
use tokio::runtime::Runtime;

const HOSTS: usize = 20;

struct Setup {
    rt: Runtime,
    // Dropped after the executor: closes the masters and stops the server.
    _sshd: TestSshd,
    exec: Arc<Executor>,
    targets: Vec<Target>,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // sshd's default MaxStartups (10:30:100) drops some of 20 simultaneous handshakes.
    let sshd = TestSshd::start_with(&["MaxStartups 100", "MaxSessions 100"]).unwrap();
    let base = std::fs::read_to_string(sshd.client_config()).unwrap();
    let aliases: Vec<String> = (1..=HOSTS).map(|i| format!("fan{i:02}")).collect();
    let needle = format!("Host {TEST_HOST_ALIAS}");
    assert!(base.contains(&needle), "unexpected test ssh config: {base}");
    let config = base.replacen(&needle, &format!("{needle} {}", aliases.join(" ")), 1);
    let path = sshd.dir().join("fanout_ssh_config");
    std::fs::write(&path, config).unwrap();
    let mut cfg = sshd.executor_config();
    cfg.ssh_config = Some(path);
    let exec = Arc::new(Executor::new(cfg).unwrap());
    let targets = aliases
        .iter()
        .map(|a| {
            Target::new(
                TargetSlug::parse(&format!("host:{a}")).unwrap(),
                Transport::Ssh(SshTransport::new(a.as_str())),
            )
            .unwrap()
        })
        .collect();
    Setup {
        rt,
        _sshd: sshd,
        exec,
        targets,
    }
}

async fn run_one(exec: &Executor, target: &Target) {
    let out = exec.run(target, "true", &Limits::default()).await.unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        out.stderr.text
    );
}

impl Setup {
    fn close_all(&self) {
        self.rt.block_on(async {
            self.exec.close_all_masters().await;
            // `-O exit` returns before the sockets are gone; wait so the next run is fresh.
            let deadline = Instant::now() + Duration::from_secs(10);
            for t in &self.targets {
                if let Transport::Ssh(ssh) = &t.transport {
                    while self.exec.master_running(ssh).await && Instant::now() < deadline {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            }
        });
    }

    /// All hosts at once: the wall time until the last one finished.
    fn fan_out(&self) -> Duration {
        self.rt.block_on(async {
            let started = Instant::now();
            let mut set = tokio::task::JoinSet::new();
            for t in &self.targets {
                let exec = self.exec.clone();
                let t = t.clone();
                set.spawn(async move { run_one(&exec, &t).await });
            }
            while let Some(r) = set.join_next().await {
                r.unwrap();
            }
            started.elapsed()
        })
    }

    /// Each host alone, one after the other: the slowest single host. `cold` closes every
    /// master before each host.
    fn slowest_single(&self, cold: bool) -> Duration {
        let mut slowest = Duration::ZERO;
        for t in &self.targets {
            if cold {
                self.close_all();
            }
            let took = self.rt.block_on(async {
                let started = Instant::now();
                run_one(&self.exec, t).await;
                started.elapsed()
            });
            slowest = slowest.max(took);
        }
        slowest
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn emit(id: &str, value: f64, unit: &str) {
    println!(
        "BENCH {}",
        serde_json::json!({"id": id, "value": value, "unit": unit})
    );
}

fn main() {
    // `cargo test --benches` runs bench targets without `--bench`: one short round then.
    let full = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var_os("BENCH_QUICK").is_some_and(|v| v == "1");
    let rounds = match (full, quick) {
        (false, _) => 1,
        (true, true) => 3,
        (true, false) => 9,
    };
    let s = setup();
    let (mut cold_fan, mut cold_single, mut warm_fan, mut warm_single) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        s.close_all();
        cold_fan.push(s.fan_out());
        // Masters are open now: the warm form.
        warm_fan.push(s.fan_out());
        warm_single.push(s.slowest_single(false));
        cold_single.push(s.slowest_single(true));
    }
    s.close_all();
    let (cf, cs, wf, ws) = (
        median(cold_fan),
        median(cold_single),
        median(warm_fan),
        median(warm_single),
    );
    println!(
        "ssh_fanout: `true` on {HOSTS} hosts (aliases of one loopback sshd), medians of {rounds} rounds"
    );
    println!(
        "  cold (fresh connections): fan-out {:8.2} ms, slowest single host {:8.2} ms, ratio {:.2}x (budget ≤ 1.5x)",
        ms(cf),
        ms(cs),
        cf.as_secs_f64() / cs.as_secs_f64()
    );
    println!(
        "  warm (masters open):      fan-out {:8.2} ms, slowest single host {:8.2} ms, ratio {:.2}x (budget ≤ 1.5x)",
        ms(wf),
        ms(ws),
        wf.as_secs_f64() / ws.as_secs_f64()
    );
    emit("exec.fanout.hosts", HOSTS as f64, "count");
    emit("exec.fanout.cold", ms(cf), "ms");
    emit("exec.fanout.cold_slowest_single", ms(cs), "ms");
    emit("exec.fanout.warm", ms(wf), "ms");
    emit("exec.fanout.warm_slowest_single", ms(ws), "ms");
}
