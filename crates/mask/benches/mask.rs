//! Masking runs on every command output: a typical 1 MB log (no secrets, the fast path and the
//! full scan where trigger words appear) and 1 MB of secret-dense configuration.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const MB: usize = 1 << 20;

fn typical_log() -> String {
    let lines = [
        "Dec 01 09:11:53 pve systemd[1]: Started session-42.scope - Session 42 of User root.",
        "Dec 01 09:11:54 pve sshd[2211]: Accepted publickey for root from 10.0.0.5 port 51522 ssh2: ED25519 SHA256:Zm9vYmFyYmF6",
        "10.0.0.7 - - [01/Dec/2026:09:12:01 +0000] \"GET /api/v1/status?id=42 HTTP/1.1\" 200 512 \"https://example.org/\" \"curl/8.5.0\"",
        "Dec 01 09:12:03 pve kernel: [12345.678] eth0: link up, 1000Mbps, full-duplex",
        "Dec 01 09:12:04 pve pveproxy[991]: worker 3312 finished; starting 1 worker(s)",
        "2026-12-01T09:12:05Z INFO backup: job 7 wrote 12.4 GiB to pbs@datastore in 311s",
        "Dec 01 09:12:06 pve cron[88]: (root) CMD (test -x /usr/sbin/anacron || run-parts /etc/cron.daily)",
    ];
    fill(&lines)
}

fn secret_dense() -> String {
    let lines = [
        "DB_PASS=Zq7mP3xV9wLr2 GITEA_TOKEN=8c1b2e7d9f0a4c3b5e6d7f8a9b0c1d2e3f4a5b6c",
        "url = postgres://app:S3cr3tPw@db.lan:5432/app",
        "Authorization: Basic YWRtaW46aHVudGVyMg==",
        "root:$6$rounds=5000$saltsalt$Yv5bqk2n4M3HqYl8x7cXr1VbLq9Zk2xWp0tR6sUe3yA:19700:0:99999:7:::",
        "\"api_key\": \"sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789\"",
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "smtp.password = hunter2hunter2",
    ];
    fill(&lines)
}

fn fill(lines: &[&str]) -> String {
    let mut s = String::with_capacity(MB + 256);
    let mut i = 0;
    while s.len() < MB {
        s.push_str(lines[i % lines.len()]);
        s.push('\n');
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("mask");
    g.throughput(Throughput::Bytes(MB as u64));
    g.sample_size(10);
    let log = typical_log();
    g.bench_function("typical_log_1mb", |b| {
        b.iter(|| nomos_mask::mask(black_box(&log)).len())
    });
    let no_trigger =
        fill(&["Dec 01 09:12:03 pve kernel: [12345.678] eth0: link up, 1000Mbps, full-duplex"]);
    g.bench_function("no_trigger_1mb", |b| {
        b.iter(|| nomos_mask::mask(black_box(&no_trigger)).len())
    });
    let dense = secret_dense();
    g.bench_function("secret_dense_1mb", |b| {
        b.iter(|| nomos_mask::mask(black_box(&dense)).len())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
