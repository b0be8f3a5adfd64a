//! `read_only` as a property, not a label: every corpus command the classifier scores
//! `read_only` runs (its canonical text, which is what the executor runs) in a throwaway
//! bubblewrap sandbox over this machine, and the test fails when one changes a file or
//! prints a canary secret. See `harness.rs` for the sandbox.

mod harness;

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use nomos_policy::{Class, classify};

use harness::{Case, ChangeKind, HOME, Outcome, PROBE_FILE, Sandbox, Status};

/// Long enough for an ordinary read to finish on a busy machine; `journalctl -f`, `watch`
/// and `top` never end, and a timeout is not a failure.
const TIMEOUT: Duration = Duration::from_secs(3);

/// The full run's second chance for commands that timed out.
const RETRY_TIMEOUT: Duration = Duration::from_secs(15);

fn scratch() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// The self-checks' timeout: generous, so that a loaded machine cannot turn an expected
/// exit into a timeout.
const SELF_CHECK_TIMEOUT: Duration = Duration::from_secs(8);

fn sandbox(timeout: Duration) -> Sandbox {
    Sandbox::new(scratch(), timeout).unwrap_or_else(|e| panic!("read-only sandbox: {e}"))
}

/// Two sandboxes per core: most of a sandbox's life is spent waiting (on start-up, on I/O,
/// on a command that never ends), not computing.
fn workers() -> usize {
    std::thread::available_parallelism().map_or(4, |n| (n.get() * 2).clamp(4, 16))
}

fn case(command: &str) -> Case {
    Case {
        label: "self-check".into(),
        command: command.into(),
    }
}

/// One line per command: label, status, changes, notes, leaks.
fn describe(case: &Case, o: &Outcome) -> String {
    let mut s = format!(
        "[{}] {:?}: {} in {:.2?}",
        case.label, case.command, o.status, o.elapsed
    );
    for c in &o.changes {
        let _ = write!(s, "; {:?} {}", c.kind, c.path);
    }
    if o.more_changes > 0 {
        let _ = write!(s, "; … {} more changes", o.more_changes);
    }
    for c in &o.notes {
        let _ = write!(s, "; note {:?} {}", c.kind, c.path);
    }
    for p in &o.leaked {
        let _ = write!(s, "; PRINTED CANARY {p}");
    }
    s
}

/// Runs `cases` through the harness directly (bypassing the classifier) and returns the
/// outcomes with the case they belong to.
fn run_direct(commands: &[String]) -> Vec<(Case, Outcome)> {
    let sb = sandbox(SELF_CHECK_TIMEOUT);
    let cases: Vec<Case> = commands.iter().map(|c| case(c)).collect();
    let outcomes = sb.run_all(&cases, workers());
    cases.into_iter().zip(outcomes).collect()
}

/// Without bubblewrap the sandbox tests fail with what to install; they never skip.
#[test]
fn a_missing_bwrap_fails_with_what_to_install() {
    let empty = scratch().join("no-tools-here");
    std::fs::create_dir_all(&empty).unwrap();
    let err = Sandbox::with_search_path(scratch(), TIMEOUT, &empty.to_string_lossy()).unwrap_err();
    assert!(
        err.contains("bubblewrap") && err.contains("apt-get install bubblewrap"),
        "{err}"
    );
}

/// Self-check of the harness: commands that do write, in every place and every way a write
/// can land (create, modify, delete, rename, chmod, touch, link, FIFO, background job), are
/// reported with the right path and kind, and none of it reaches the host.
#[test]
fn harness_reports_every_kind_of_write() {
    let probe = PROBE_FILE;
    let dir = Path::new(PROBE_FILE)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let home = HOME;
    let expected: Vec<(String, Vec<(String, ChangeKind)>)> = vec![
        (
            "touch /etc/nomos-canary-write".into(),
            vec![("/etc/nomos-canary-write".into(), ChangeKind::Created)],
        ),
        (
            "printf x > /usr/local/nomos-sandbox-probe".into(),
            vec![("/usr/local/nomos-sandbox-probe".into(), ChangeKind::Created)],
        ),
        (
            "printf x > /tmp/nomos-sandbox-probe".into(),
            vec![("/tmp/nomos-sandbox-probe".into(), ChangeKind::Created)],
        ),
        (
            "printf x > /dev/shm/nomos-sandbox-probe".into(),
            vec![("/dev/shm/nomos-sandbox-probe".into(), ChangeKind::Created)],
        ),
        (
            "touch ~/.nomos-sandbox-probe".into(),
            vec![(format!("{home}/.nomos-sandbox-probe"), ChangeKind::Created)],
        ),
        (
            "touch /root/.nomos-sandbox-probe".into(),
            vec![("/root/.nomos-sandbox-probe".into(), ChangeKind::Created)],
        ),
        (
            "ln -s /etc/passwd /var/tmp/nomos-sandbox-link".into(),
            vec![("/var/tmp/nomos-sandbox-link".into(), ChangeKind::Created)],
        ),
        (
            "mkfifo /run/nomos-sandbox-fifo".into(),
            vec![("/run/nomos-sandbox-fifo".into(), ChangeKind::Created)],
        ),
        (
            "sudo -u www-data -H touch /etc/nomos-sudo-write".into(),
            vec![("/etc/nomos-sudo-write".into(), ChangeKind::Created)],
        ),
        (
            "(sleep 0.2; touch /etc/nomos-background) & wait".into(),
            vec![("/etc/nomos-background".into(), ChangeKind::Created)],
        ),
        (
            format!("mkdir {dir}/new-dir"),
            vec![(format!("{dir}/new-dir"), ChangeKind::DirCreated)],
        ),
        (
            format!("printf more >> {probe}"),
            vec![(probe.into(), ChangeKind::Modified)],
        ),
        (
            format!("sed -i s/probe/PROBE/ {probe}"),
            vec![(probe.into(), ChangeKind::Modified)],
        ),
        (
            "printf x > /etc/shadow".into(),
            vec![("/etc/shadow".into(), ChangeKind::Modified)],
        ),
        (
            format!("rm {probe}"),
            vec![(probe.into(), ChangeKind::Deleted)],
        ),
        (
            format!("rm -r {dir}"),
            vec![(dir.clone(), ChangeKind::Deleted)],
        ),
        (
            format!("mv {probe} {dir}/moved.txt"),
            vec![
                (probe.into(), ChangeKind::Deleted),
                (format!("{dir}/moved.txt"), ChangeKind::Created),
            ],
        ),
        (
            format!("chmod 600 {probe}"),
            vec![(probe.into(), ChangeKind::Metadata)],
        ),
        (
            format!("touch -d @0 {probe}"),
            vec![(probe.into(), ChangeKind::Metadata)],
        ),
        (
            format!("chmod 700 {dir}"),
            vec![(dir.clone(), ChangeKind::Metadata)],
        ),
        // A real file of the host (not of the canary layer): only its time would change if
        // the sandbox leaked, and the test checks that it did not.
        (
            "touch /etc/hostname".into(),
            vec![("/etc/hostname".into(), ChangeKind::Metadata)],
        ),
    ];
    let host_hostname = std::fs::metadata("/etc/hostname")
        .ok()
        .map(|m| m.modified().ok());
    let commands: Vec<String> = expected.iter().map(|(c, _)| c.clone()).collect();
    let mut wrong = Vec::new();
    for ((case, outcome), (_, want)) in run_direct(&commands).iter().zip(&expected) {
        let mut got: Vec<(String, ChangeKind)> = outcome
            .changes
            .iter()
            .map(|c| (c.path.clone(), c.kind))
            .collect();
        got.sort();
        let mut want = want.clone();
        want.sort();
        if got != want || !outcome.offends() || !matches!(outcome.status, Status::Exited(0)) {
            wrong.push(format!("{}\n    want {want:?}", describe(case, outcome)));
        }
    }
    assert!(
        wrong.is_empty(),
        "misreported writes:\n{}",
        wrong.join("\n")
    );
    for host in [
        "/etc/nomos-canary-write",
        "/usr/local/nomos-sandbox-probe",
        "/tmp/nomos-sandbox-probe",
        "/dev/shm/nomos-sandbox-probe",
        "/root/.nomos-sandbox-probe",
        "/var/tmp/nomos-sandbox-link",
        "/run/nomos-sandbox-fifo",
        "/etc/nomos-background",
        "/etc/nomos-sudo-write",
        "/var/lib/nomos-sandbox",
    ] {
        assert!(
            std::fs::symlink_metadata(host).is_err(),
            "{host} reached the host"
        );
    }
    assert_eq!(
        std::fs::metadata("/etc/hostname")
            .ok()
            .map(|m| m.modified().ok()),
        host_hostname,
        "/etc/hostname changed on the host"
    );
}

/// Self-check of the harness: every canary, printed plainly, partly, to stderr or encoded
/// (base64 wrapped or not, hex dumps, reversed), is reported with the file it came from.
#[test]
fn harness_reports_every_printed_canary() {
    let home = HOME;
    let mut expected: Vec<(String, &str)> = harness::canary_paths()
        .map(|p| (format!("cat {p}"), p))
        .collect();
    expected.extend([
        ("head -n1 /etc/shadow".into(), "/etc/shadow"),
        ("sudo cat /root/.my.cnf".into(), "/root/.my.cnf"),
        (
            "sudo -n -u postgres cat ~/.pgpass".into(),
            "/home/nomos-operator/.pgpass",
        ),
        ("grep root /etc/gshadow".into(), "/etc/gshadow"),
        (
            "cat /etc/pve/priv/authkey.key >&2".into(),
            "/etc/pve/priv/authkey.key",
        ),
        ("base64 /etc/shadow".into(), "/etc/shadow"),
        ("base64 -w0 /etc/gshadow".into(), "/etc/gshadow"),
        ("tail -c +7 /root/.pgpass | base64".into(), "/root/.pgpass"),
        ("od -An -tx1 /root/.env".into(), "/root/.env"),
        (format!("xxd -p {home}/.env"), "/home/nomos-operator/.env"),
        (format!("rev {home}/.netrc"), "/home/nomos-operator/.netrc"),
        (
            "sort ~/.aws/credentials".into(),
            "/home/nomos-operator/.aws/credentials",
        ),
        (
            "tar -cf - -C /etc/ssh . | cat".into(),
            "/etc/ssh/ssh_host_ed25519_key",
        ),
        (
            "grep -r PrivateKey /etc/wireguard".into(),
            "/etc/wireguard/wg0.conf",
        ),
        ("cat .pgpass".into(), "/home/nomos-operator/.pgpass"),
    ]);
    let commands: Vec<String> = expected.iter().map(|(c, _)| c.clone()).collect();
    let mut wrong = Vec::new();
    for ((case, outcome), (_, path)) in run_direct(&commands).iter().zip(&expected) {
        if !outcome.leaked.contains(path) || !outcome.changes.is_empty() || !outcome.offends() {
            wrong.push(format!(
                "{}\n    want leak of {path}",
                describe(case, outcome)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "misreported canaries:\n{}",
        wrong.join("\n")
    );
}

/// Self-check of the harness: reads pass clean (including reads of canary metadata and a
/// file opened for appending without a write), and the statuses are told apart: a timeout
/// kills the whole sandbox (a `setsid` child included) and is not a failure, a missing tool
/// is exit 127, exit codes come through.
#[test]
fn harness_passes_reads_and_tells_statuses_apart() {
    let probe = PROBE_FILE;
    let clean: Vec<(String, Status)> = vec![
        ("true".into(), Status::Exited(0)),
        ("sudo -l".into(), Status::Exited(0)),
        ("sudo -u nobody sh -c 'exit 4'".into(), Status::Exited(4)),
        ("cat /etc/hostname /etc/passwd".into(), Status::Exited(0)),
        (
            "ls -la / /root ~ /etc/ssl/private /dev/shm".into(),
            Status::Exited(0),
        ),
        ("stat /etc/shadow ~/.ssh/id_rsa".into(), Status::Exited(0)),
        (
            "wc -c /etc/shadow /root/.ssh/id_ed25519".into(),
            Status::Exited(0),
        ),
        ("ps aux; df -h; id".into(), Status::Exited(0)),
        (format!(": >> {probe}"), Status::Exited(0)),
        ("t=$(mktemp) && rm \"$t\"".into(), Status::Exited(0)),
        ("exit 3".into(), Status::Exited(3)),
        ("nomos-no-such-tool --version".into(), Status::NotInstalled),
        ("sleep 30".into(), Status::TimedOut),
        ("setsid sleep 60 & exec sleep 60".into(), Status::TimedOut),
        ("tail -f /dev/null".into(), Status::TimedOut),
    ];
    let commands: Vec<String> = clean.iter().map(|(c, _)| c.clone()).collect();
    let mut wrong = Vec::new();
    for ((case, outcome), (_, status)) in run_direct(&commands).iter().zip(&clean) {
        let slow = outcome.elapsed > SELF_CHECK_TIMEOUT + Duration::from_secs(2);
        if outcome.offends() || outcome.status != *status || slow {
            wrong.push(format!(
                "{} in {:?}\n    want {status}, no change, no canary",
                describe(case, outcome),
                outcome.elapsed
            ));
        }
    }
    assert!(wrong.is_empty(), "misreported reads:\n{}", wrong.join("\n"));
}

/// Writes of read tools that change nothing an operator or a later command relies on. Each
/// applies only to the tool named (a word of the command) and the exact path and kind;
/// `~` is the sandbox's `HOME`, `*` any run of characters other than `/`.
const BENIGN: &[(&str, &str, ChangeKind, &str)] = &[
    (
        "top",
        "~/.config/procps",
        ChangeKind::DirCreated,
        "procps-ng top creates its empty rc directory at start; it writes toprc only on the \
         interactive W key, which batch mode never reads",
    ),
    (
        "npm",
        "~/.npm",
        ChangeKind::DirCreated,
        "npm's cache directory",
    ),
    (
        "npm",
        "~/.npm/_logs",
        ChangeKind::DirCreated,
        "npm's log directory",
    ),
    (
        "npm",
        "~/.npm/_logs/*-debug-0.log",
        ChangeKind::Created,
        "npm's per-run debug log (rotated, ten kept)",
    ),
    (
        "npm",
        "~/.npm/_update-notifier-last-checked",
        ChangeKind::Created,
        "npm's update-check time stamp",
    ),
    (
        "terraform",
        "~/.terraform.d",
        ChangeKind::DirCreated,
        "HashiCorp checkpoint's per-user directory",
    ),
    (
        "terraform",
        "~/.terraform.d/checkpoint_signature",
        ChangeKind::Created,
        "HashiCorp checkpoint's anonymous signature for version checks (CHECKPOINT_DISABLE \
         turns it off); no server state",
    ),
];

/// Open findings of the first sandbox run, routed to the classifier's owners: corpus
/// commands labelled `read_only` that changed state or printed a secret. The test fails on
/// any offender not listed here, and on an entry that ran cleanly (remove it then), so this
/// list only shrinks.
const KNOWN: &[(&str, &str)] = &[
    (
        "systemd-analyze verify /etc/systemd/system/restic-backup.service",
        "creates /run/systemd/systemd-units-load (the manager's unit-load time stamp)",
    ),
    (
        "systemd-analyze verify /etc/systemd/system/frigate.service",
        "creates /run/systemd/systemd-units-load (the manager's unit-load time stamp)",
    ),
    (
        "systemd-analyze verify /etc/systemd/system/backup.service",
        "creates /run/systemd/systemd-units-load (the manager's unit-load time stamp)",
    ),
    ("apt-get --simulate dist-upgrade | grep ^Inst", APT_EIPP),
    (
        "apt-get -s dist-upgrade | grep -E \"^(Inst|Remv)\"",
        APT_EIPP,
    ),
    ("apt-get -s dist-upgrade | grep -E \"^Inst\"", APT_EIPP),
    ("apt-get -s upgrade | grep -c \"^Inst\"", APT_EIPP),
    ("apt-get -s dist-upgrade 2>&1 | tail -n 20", APT_EIPP),
    ("apt-get -s dist-upgrade", APT_EIPP),
    (
        "apt-get install -s --no-install-recommends nut-client",
        APT_EIPP,
    ),
    ("apt-get install --dry-run nginx", APT_EIPP),
    ("apt-get -s dist-upgrade | grep -i security", APT_EIPP),
    ("apt-get -s upgrade", APT_EIPP),
    ("apt-get install -s nginx", APT_EIPP),
    ("apt install --dry-run htop", APT_EIPP),
    ("apt-get --simulate dist-upgrade", APT_EIPP),
    ("sudo apt-get install --dry-run -y nginx-full", APT_EIPP),
    ("sudo apt-get -s dist-upgrade | grep '^Inst'", APT_EIPP),
];

const APT_EIPP: &str = "a simulated install/upgrade as root rewrites /var/log/apt/eipp.log.xz \
                        (the solver's planning log, which keeps only the last run); seen only \
                        when apt finishes planning, often after the 3 s timeout (full run)";

fn benign(command: &str, path: &str, kind: ChangeKind) -> bool {
    BENIGN.iter().any(|(tool, pattern, k, _)| {
        *k == kind
            && command
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .any(|w| w == *tool)
            && glob_match(&pattern.replacen('~', HOME, 1), path)
    })
}

/// `*` matches any run of characters other than `/`; everything else is literal.
fn glob_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|&i| rest.is_char_boundary(i))
                .take_while(|&i| !rest[..i].contains('/'))
                .any(|i| glob_match(tail, &rest[i..]))
        }
    }
}

/// FNV-1a of the command text: a sample that stays the same when other commands are added.
fn in_sample(command: &str, one_in: u64) -> bool {
    let h = command.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    h % one_in == 0
}

/// The property itself, over the labelled corpus: every command the classifier still scores
/// `read_only` runs in the sandbox (its canonical text), and none may change a file or print
/// a canary. A deterministic eighth of the corpus runs by default (the whole section takes
/// minutes on two shared cores); `NOMOS_SANDBOX_FULL=1` runs all of it. Every command's
/// outcome is written to `sandbox-report.txt` in the test scratch directory.
#[test]
fn read_only_corpus_commands_change_nothing_and_print_no_canary() {
    let full = std::env::var_os("NOMOS_SANDBOX_FULL").is_some_and(|v| v == "1");
    let mut cases = Vec::new();
    let mut meta = Vec::new();
    let (mut not_read_only, mut total) = (0, 0);
    for (class, group, command) in crate::corpus::cases() {
        if class != Class::ReadOnly {
            continue;
        }
        total += 1;
        let known = KNOWN.iter().any(|(k, _)| *k == command);
        if !full && !known && !in_sample(&command, 8) {
            continue;
        }
        let d = classify(&command);
        let (Class::ReadOnly, Some(canonical)) = (d.class, d.canonical) else {
            not_read_only += 1;
            continue;
        };
        let why: Vec<String> = d
            .findings
            .iter()
            .map(|f| format!("{}: {}", f.rule, f.reason))
            .collect();
        cases.push(Case {
            label: group,
            command: canonical,
        });
        meta.push((command, why.join("; ")));
    }
    assert!(!cases.is_empty(), "no read_only corpus command to run");
    let sb = sandbox(TIMEOUT);
    let started = Instant::now();
    let mut outcomes = sb.run_all(&cases, workers());
    // A write that comes after the timeout is not seen: the full run gives every command
    // that timed out a second, longer chance (the ones that never end cost the extra time).
    let mut retried = 0;
    if full {
        let slow: Vec<usize> = (0..cases.len())
            .filter(|&i| outcomes[i].status == Status::TimedOut)
            .collect();
        let again: Vec<Case> = slow.iter().map(|&i| cases[i].clone()).collect();
        let long = sandbox(RETRY_TIMEOUT);
        for (i, o) in slow.into_iter().zip(long.run_all(&again, workers())) {
            retried += 1;
            outcomes[i] = o;
        }
    }
    let wall = started.elapsed();

    let mut report = String::new();
    let (mut offenders, mut open, mut stale) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ran, mut missing, mut timed_out, mut ignored) = (0, 0, 0, 0);
    for ((case, outcome), (original, why)) in cases.iter().zip(&mut outcomes).zip(&meta) {
        match outcome.status {
            Status::Exited(_) | Status::Signalled(_) => ran += 1,
            Status::NotInstalled => missing += 1,
            Status::TimedOut => timed_out += 1,
            Status::Escaped | Status::SandboxFailed(_) => {}
        }
        let before = outcome.changes.len();
        outcome
            .changes
            .retain(|c| !benign(&case.command, &c.path, c.kind));
        ignored += before - outcome.changes.len();
        let line = describe(case, outcome);
        let _ = writeln!(report, "{line}");
        let known = KNOWN.iter().find(|(k, _)| k == original);
        match (outcome.offends(), known) {
            (true, None) => offenders.push(format!(
                "{line}\n    corpus text: {original:?}\n    decision: {why}"
            )),
            (true, Some((_, what))) => open.push(format!("{original:?}: {what}")),
            // Only a run that could have shown the finding makes an entry stale.
            (false, Some(_)) if matches!(outcome.status, Status::Exited(_)) => {
                stale.push(original.clone());
            }
            (false, _) => {}
        }
    }
    let summary = format!(
        "{} of {total} read_only corpus commands run{} in {wall:.1?} ({} workers): {ran} ran, \
         {missing} not installed, {timed_out} timed out ({retried} that timed out at {TIMEOUT:?} ran \
         again with {RETRY_TIMEOUT:?}); {} new offenders, {} known open \
         findings, {ignored} benign writes ignored; {not_read_only} no longer classify \
         read_only and were not run",
        cases.len(),
        if full {
            ""
        } else {
            " (sample; NOMOS_SANDBOX_FULL=1 runs all)"
        },
        workers(),
        offenders.len(),
        open.len(),
    );
    let _ = writeln!(report, "{summary}");
    let path = scratch().join("sandbox-report.txt");
    let _ = std::fs::write(&path, &report);
    println!(
        "{summary}\nknown open findings:\n  {}\nfull report: {}",
        open.join("\n  "),
        path.display()
    );
    assert!(
        offenders.is_empty(),
        "{} read_only commands changed files or printed a canary in the sandbox:\n{}\n{summary}",
        offenders.len(),
        offenders.join("\n")
    );
    assert!(
        stale.is_empty(),
        "these KNOWN entries ran cleanly; remove them from the list: {stale:?}"
    );
}

#[test]
fn benign_writes_match_only_their_tool_path_and_kind() {
    let log = format!("{HOME}/.npm/_logs/2026-01-01T00_00_00_000Z-debug-0.log");
    assert!(benign("npm ls -g", &log, ChangeKind::Created));
    assert!(!benign("npm ls -g", &log, ChangeKind::Modified));
    assert!(!benign("npx ls", &log, ChangeKind::Created));
    assert!(!benign("cat x | tee npmrc", &log, ChangeKind::Created));
    assert!(!benign(
        "npm ls",
        &format!("{HOME}/.npm/_logs/x/y-debug-0.log"),
        ChangeKind::Created
    ));
    assert!(!benign(
        "npm ls",
        "/root/.npm/_update-notifier-last-checked",
        ChangeKind::Created
    ));
    assert!(benign(
        "top -bn1 | head",
        &format!("{HOME}/.config/procps"),
        ChangeKind::DirCreated
    ));
    assert!(!benign(
        "top -bn1",
        &format!("{HOME}/.config/procps/toprc"),
        ChangeKind::Created
    ));
    assert!(!benign(
        "htop",
        &format!("{HOME}/.config/procps"),
        ChangeKind::DirCreated
    ));
}
