//! One command fanned out to 20 SSH hosts against the slowest single host (DESIGN §14:
//! ≤ 1.5× the slowest single host), through `Executor::run` to real `sshd`s on loopback.
//!
//! The 20 "hosts" are 20 loopback addresses (127.0.0.1–10 on each of two `sshd`s; one sshd
//! listens on at most 16 sockets). Distinct addresses matter: the control socket is named
//! by ssh's `%C`, a hash of the host *after* `HostName`, so 20 aliases of one address would
//! share one master connection, which distinct hosts never do.
//!
//! Two forms, measured in the same rounds so machine noise hits both alike:
//! * cold: no master open (20 fresh connections at once);
//! * warm: each host's master already open (the steady state of a session).
//!
//! Each form is measured twice: through Nomos, and as plain `ssh <host> true` runs of the
//! OpenSSH client (no executor, no remote wrapper; masters of its own for the warm form).
//! The plain runs are the machine's reference: on loopback every handshake and every
//! session start is CPU work on this machine (client, server and remote shell), so 20 at
//! once on few cores take about 20 × that work ÷ cores whoever starts them. For each, the
//! slowest single host is each host alone, one after the other, and the ratios printed are
//! fan-out ÷ slowest single (the budget, and what plain ssh reaches on this machine) and
//! Nomos ÷ plain ssh (what the executor adds).
//!
//! Prints `BENCH {"id":…}` lines read by `make bench`. `BENCH_QUICK=1` runs fewer rounds.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_exec::testing::TestSshd;
use nomos_exec::{Executor, Limits, SshTransport, Target, TargetSlug, Transport};
use tokio::process::Command;
use tokio::runtime::Runtime;

const HOSTS: usize = 20;
/// Hosts (loopback addresses) per sshd; sshd listens on at most 16 sockets.
const PER_SERVER: usize = 10;

struct Setup {
    rt: Runtime,
    exec: Arc<Executor>,
    targets: Vec<Target>,
    aliases: Vec<String>,
    plain: Arc<PlainSsh>,
    // Dropped after the executor: closes the masters and stops the servers.
    _sshds: Vec<TestSshd>,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut extra: Vec<String> = vec!["MaxStartups 100".into(), "MaxSessions 100".into()];
    // 127.0.0.1 is in the base config.
    extra.extend((2..=PER_SERVER).map(|i| format!("ListenAddress 127.0.0.{i}")));
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let sshds: Vec<TestSshd> = (0..HOSTS.div_ceil(PER_SERVER))
        .map(|_| TestSshd::start_with(&extra).unwrap())
        .collect();
    let aliases: Vec<String> = (1..=HOSTS).map(|i| format!("fan{i:02}")).collect();
    let mut config = String::new();
    for (i, alias) in aliases.iter().enumerate() {
        let sshd = &sshds[i / PER_SERVER];
        let _ = write!(
            config,
            "Host {alias}\n  HostName 127.0.0.{addr}\n  Port {port}\n  IdentityFile {key}\n  \
             IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n",
            addr = i % PER_SERVER + 1,
            port = sshd.port(),
            key = sshd.user_key().display(),
        );
    }
    let first = &sshds[0];
    let path = first.dir().join("fanout_ssh_config");
    std::fs::write(&path, config).unwrap();
    let plain_control = first.dir().join("plain");
    std::fs::create_dir_all(&plain_control).unwrap();
    let mut cfg = first.executor_config();
    cfg.ssh_config = Some(path.clone());
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
        exec,
        targets,
        aliases,
        plain: Arc::new(PlainSsh {
            config: path,
            control: plain_control,
        }),
        _sshds: sshds,
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

/// How the plain ssh reference runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plain {
    /// A fresh connection, no multiplexing.
    Fresh,
    /// Over (or opening) a master of its own.
    Mux,
}

/// The OpenSSH client on its own, with the same client config.
struct PlainSsh {
    config: PathBuf,
    /// ControlPath directory of the plain runs (apart from the executor's).
    control: PathBuf,
}

impl PlainSsh {
    /// `ssh <alias> true`, as an operator would type it.
    async fn run(&self, alias: &str, mode: Plain) {
        let mut cmd = Command::new("ssh");
        cmd.arg("-F")
            .arg(&self.config)
            .args(["-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-T"]);
        match mode {
            Plain::Fresh => cmd.args(["-o", "ControlMaster=no", "-o", "ControlPath=none"]),
            Plain::Mux => cmd
                .args(["-o", "ControlMaster=auto", "-o"])
                .arg(format!("ControlPath=\"{}/%C\"", self.control.display()))
                .args(["-o", "ControlPersist=600s"]),
        };
        let out = cmd
            .args(["--", alias, "true"])
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "plain ssh {alias}: {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Closes the plain runs' masters (before the servers go away).
    fn close(&self) {
        let Ok(entries) = std::fs::read_dir(&self.control) else {
            return;
        };
        for entry in entries.flatten() {
            let _ = std::process::Command::new("ssh")
                .args(["-F", "/dev/null", "-o"])
                .arg(format!("ControlPath=\"{}\"", entry.path().display()))
                .args(["-O", "exit", "plain-master"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
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

    /// All hosts at once through Nomos: the wall time until the last one finished.
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

    /// All hosts at once with plain ssh.
    fn plain_fan_out(&self, mode: Plain) -> Duration {
        self.rt.block_on(async {
            let started = Instant::now();
            let mut set = tokio::task::JoinSet::new();
            for a in &self.aliases {
                let plain = self.plain.clone();
                let a = a.clone();
                set.spawn(async move { plain.run(&a, mode).await });
            }
            while let Some(r) = set.join_next().await {
                r.unwrap();
            }
            started.elapsed()
        })
    }

    /// Each host alone through Nomos, one after the other: the slowest single host. `cold`
    /// closes every master before each host.
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

    /// Each host alone with plain ssh: the slowest single host.
    fn plain_slowest_single(&self, mode: Plain) -> Duration {
        let mut slowest = Duration::ZERO;
        for a in &self.aliases {
            let took = self.rt.block_on(async {
                let started = Instant::now();
                self.plain.run(a, mode).await;
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

/// Medians of one form: Nomos fan-out, Nomos slowest single, plain fan-out, plain single.
#[derive(Default)]
struct Form {
    fan: Vec<Duration>,
    single: Vec<Duration>,
    plain_fan: Vec<Duration>,
    plain_single: Vec<Duration>,
}

impl Form {
    fn report(self, name: &str, label: &str) {
        let (f, s, pf, ps) = (
            median(self.fan),
            median(self.single),
            median(self.plain_fan),
            median(self.plain_single),
        );
        let r = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        println!(
            "  {label:<26} Nomos:     fan-out {:8.2} ms, slowest single host {:8.2} ms, ratio {:.2}x (budget ≤ 1.5x)",
            ms(f),
            ms(s),
            r(f, s)
        );
        println!(
            "  {:<26} plain ssh: fan-out {:8.2} ms, slowest single host {:8.2} ms, ratio {:.2}x (this machine's floor)",
            "",
            ms(pf),
            ms(ps),
            r(pf, ps)
        );
        println!(
            "  {:<26} Nomos ÷ plain ssh: fan-out {:.2}x, single host {:.2}x",
            "",
            r(f, pf),
            r(s, ps)
        );
        emit(&format!("exec.fanout.{name}"), ms(f), "ms");
        emit(&format!("exec.fanout.{name}_slowest_single"), ms(s), "ms");
        emit(&format!("exec.fanout.{name}_plain"), ms(pf), "ms");
        emit(
            &format!("exec.fanout.{name}_plain_slowest_single"),
            ms(ps),
            "ms",
        );
    }
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
    let (mut cold, mut warm) = (Form::default(), Form::default());
    for _ in 0..rounds {
        s.close_all();
        cold.fan.push(s.fan_out());
        cold.plain_fan.push(s.plain_fan_out(Plain::Fresh));
        // The executor's masters are open now: the warm form.
        warm.fan.push(s.fan_out());
        // Opens the plain runs' masters, or makes sure they are still up (the executor's
        // were opened by the cold fan-out).
        s.plain_fan_out(Plain::Mux);
        warm.plain_fan.push(s.plain_fan_out(Plain::Mux));
        warm.single.push(s.slowest_single(false));
        warm.plain_single.push(s.plain_slowest_single(Plain::Mux));
        cold.single.push(s.slowest_single(true));
        cold.plain_single.push(s.plain_slowest_single(Plain::Fresh));
    }
    s.close_all();
    s.plain.close();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "ssh_fanout: `true` on {HOSTS} hosts (loopback addresses of 2 sshd, one connection each), {cpus} CPUs, medians of {rounds} rounds"
    );
    cold.report("cold", "cold (fresh connections):");
    warm.report("warm", "warm (masters open):");
    emit("exec.fanout.hosts", HOSTS as f64, "count");
    emit("exec.fanout.cpus", cpus as f64, "count");
}
