//! A throwaway sandbox that runs shell commands which claim to only read, and reports what
//! each one changed and which canary secret it printed.
//!
//! Every command runs in its own bubblewrap sandbox whose root is an overlay: this machine's
//! root file system read-only at the bottom, a layer of canary secrets over it, and a fresh
//! upper directory on top that collects every write. `/root` gets its own overlay whose only
//! lower layer is the canary layer (the real one is never shown), and `/dev/shm` is a scratch
//! directory. After the command ends, or is killed at the timeout, the harness reads the upper
//! directories: anything in them is a change the command made. Stdout and stderr are scanned
//! for the canary tokens as they stream (plain, reversed, hex and base64, whitespace removed).
//!
//! bubblewrap 0.8 (Debian 12) has no `--overlay`, so the overlays are mounted by `mount` in a
//! private mount namespace (`unshare --mount`), which then execs bwrap with the merged
//! directory as the sandbox's root. No network, own PID/IPC/UTS namespaces, no capabilities,
//! `/proc/sys`, `/proc/sysrq-trigger` and friends and `/sys` read-only (writes there are
//! refused, not observed), clean environment like the executor's, stdin `/dev/null`.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use aho_corasick::AhoCorasick;

/// The executor's environment (`nomos_exec::FIXED_ENV`, which this pure crate cannot depend
/// on): every command runs with exactly these variables plus `HOME`.
const FIXED_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const FIXED_ENV: &[(&str, &str)] = &[
    ("PATH", FIXED_PATH),
    ("PAGER", "cat"),
    ("SYSTEMD_PAGER", ""),
    ("GIT_PAGER", "cat"),
    ("LC_ALL", "C.UTF-8"),
    ("TERM", "dumb"),
];

/// The operator's home inside the sandbox: fresh, from the canary layer, also the working
/// directory (the executor runs local commands in the operator's home).
pub const HOME: &str = "/home/nomos-operator";

/// A harmless file of the canary layer the self-check may modify, delete and chmod: it does
/// not exist on the host, so even a broken sandbox could not damage anything through it.
pub const PROBE_FILE: &str = "/var/lib/nomos-sandbox/probe.txt";

/// Secrets planted over their real paths: `{T}` is replaced by the file's own random token,
/// on every line that carries secret material.
const CANARIES: &[(&str, u32, &str)] = &[
    (
        "/etc/shadow",
        0o640,
        "root:$6$nomos${T}:20000:0:99999:7:::\ndaemon:*{T}:20000:0:99999:7:::\noperator:$y$j9T${T}:20000:0:99999:7:::\n",
    ),
    (
        "/etc/gshadow",
        0o640,
        "root:*{T}::\nsudo:!{T}::operator\nadm:!{T}::operator\n",
    ),
    ("/etc/ssh/ssh_host_rsa_key", 0o600, PEM_OPENSSH),
    ("/etc/ssh/ssh_host_ecdsa_key", 0o600, PEM_OPENSSH),
    ("/etc/ssh/ssh_host_ed25519_key", 0o600, PEM_OPENSSH),
    ("/etc/ssl/private/ssl-cert-snakeoil.key", 0o640, PEM_PKCS8),
    ("/etc/ssl/private/nomos.example.org.key", 0o600, PEM_PKCS8),
    ("/etc/pve/priv/authkey.key", 0o600, PEM_PKCS8),
    (
        "/etc/letsencrypt/live/example.org/privkey.pem",
        0o600,
        PEM_PKCS8,
    ),
    (
        "/etc/wireguard/wg0.conf",
        0o600,
        "[Interface]\nPrivateKey = {T}\nAddress = 10.8.0.1/24\n",
    ),
    (
        "/etc/mysql/debian.cnf",
        0o600,
        "[client]\nuser = debian-sys-maint\npassword = {T}\n",
    ),
    (
        "/opt/immich/.env",
        0o600,
        "DB_PASSWORD={T}\nJWT_SECRET={T}\n",
    ),
    (
        "/srv/app/.env",
        0o600,
        "DATABASE_URL=postgres://app:{T}@db/app\nSECRET_KEY={T}\n",
    ),
    (
        "/run/credentials/paperless.service/secret_key",
        0o400,
        "{T}\n",
    ),
    ("/root/.ssh/id_rsa", 0o600, PEM_OPENSSH),
    ("/root/.ssh/id_ed25519", 0o600, PEM_OPENSSH),
    ("/root/.pgpass", 0o600, "db.lan:5432:*:postgres:{T}\n"),
    ("/root/.env", 0o600, "API_TOKEN={T}\n"),
    ("/root/.my.cnf", 0o600, "[client]\npassword={T}\n"),
    ("/home/nomos-operator/.ssh/id_rsa", 0o600, PEM_OPENSSH),
    ("/home/nomos-operator/.ssh/id_ed25519", 0o600, PEM_OPENSSH),
    (
        "/home/nomos-operator/.env",
        0o600,
        "API_TOKEN={T}\nDB_PASSWORD={T}\n",
    ),
    (
        "/home/nomos-operator/.pgpass",
        0o600,
        "*:5432:*:operator:{T}\n",
    ),
    (
        "/home/nomos-operator/.aws/credentials",
        0o600,
        "[default]\naws_access_key_id = AKIA{T}\naws_secret_access_key = {T}\n",
    ),
    (
        "/home/nomos-operator/.docker/config.json",
        0o600,
        "{\"auths\": {\"registry.example.org\": {\"auth\": \"{T}\"}}}\n",
    ),
    (
        "/home/nomos-operator/.kube/config",
        0o600,
        "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: {T}\n",
    ),
    (
        "/home/nomos-operator/.netrc",
        0o600,
        "machine example.org login operator password {T}\n",
    ),
    (
        "/home/nomos-operator/.git-credentials",
        0o600,
        "https://operator:{T}@git.example.org\n",
    ),
    (
        "/home/nomos-operator/.config/rclone/rclone.conf",
        0o600,
        "[b2]\ntype = b2\naccount = {T}\nkey = {T}\n",
    ),
];

const PEM_OPENSSH: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{T}\n{T}AAAAC3NzaC1lZDI1NTE5\n{T}\n-----END OPENSSH PRIVATE KEY-----\n";
const PEM_PKCS8: &str =
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI{T}\n{T}\n-----END PRIVATE KEY-----\n";

/// Ordinary files of the layer, so everyday commands find what they expect (no secrets).
const PLAIN_FILES: &[(&str, u32, &str)] = &[
    (PROBE_FILE, 0o644, "nomos sandbox probe\n"),
    ("/root/.ssh/authorized_keys", 0o600, PUBKEY),
    ("/root/.ssh/id_ed25519.pub", 0o644, PUBKEY),
    ("/home/nomos-operator/.ssh/authorized_keys", 0o600, PUBKEY),
    ("/home/nomos-operator/.ssh/id_ed25519.pub", 0o644, PUBKEY),
    (
        "/home/nomos-operator/.ssh/known_hosts",
        0o644,
        "pve2.home.lan ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNvbWVob3N0a2V5\n",
    ),
    ("/root/.bashrc", 0o644, "# ~/.bashrc\n"),
    ("/home/nomos-operator/.bashrc", 0o644, "# ~/.bashrc\n"),
    ("/usr/local/sbin/sudo", 0o755, SUDO),
];

/// The sandbox's `sudo`, first on `PATH`: a tenth of the corpus starts with `sudo`, and the
/// real one cannot run without capabilities (or is not installed). Everything already runs
/// as root, so it runs the command as given, skipping sudo's options and their values.
const SUDO: &str = r#"#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -l|-ll) printf '%s\n' 'User root may run the following commands on this host:' '    (ALL : ALL) ALL'; exit 0 ;;
    -u|-g|-p|-C|-D|-h|-r|-t|-T|-U|--user|--group|--prompt|--chdir|--host|--role|--type|--other-user|--close-from|--command-timeout) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || exit 0
exec "$@"
"#;
const PUBKEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG5vbW9zLXNhbmRib3gtcHVibGljLWtleQ operator@laptop\n";

/// Directories of the layer that must be private (their real counterparts are).
const PRIVATE_DIRS: &[&str] = &[
    "/root",
    "/root/.ssh",
    "/home/nomos-operator/.ssh",
    "/etc/pve/priv",
    "/etc/wireguard",
    "/run/credentials",
];

/// Fixed wrapper run by `sh` inside the private mount namespace: copies the canary layer
/// onto a tmpfs (overlayfs refuses a lower layer that lies inside another one, and every
/// directory of this machine lies inside `/`), mounts the two overlays and execs the rest of
/// its arguments (prlimit, then bwrap). Only paths the harness made reach it.
const WRAPPER: &str = r#"s=$1 l=$2 o=$3
shift 3
fail() { echo "nomos-sandbox: overlay mount failed" >&2; exit 125; }
mount -t tmpfs -o mode=0755 nomos-canaries "$s/layer" && cp -a "$l/." "$s/layer/" || fail
mount -t overlay nomos-sandbox -o "lowerdir=$s/layer/fs:/,upperdir=$s/upper/fs,workdir=$s/ovl/fs$o" "$s/merged" || fail
mount -t overlay nomos-sandbox -o "lowerdir=$s/layer/root,upperdir=$s/upper/root,workdir=$s/ovl/root$o" "$s/merged/root" || fail
exec "$@""#;
const WRAPPER_MARK: &str = "nomos-sandbox: overlay mount failed";

/// Paths of the fresh procfs made read-only: writable by uid 0 even without capabilities
/// (sysctls, sysrq, IRQ affinity), so a misclassified command could reach the host's kernel.
const PROC_READ_ONLY: &[&str] = &[
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
    "/proc/acpi",
    "/proc/mtrr",
    "/proc/sysvipc",
    "/proc/driver",
];

/// Output scanned per stream; the rest is drained unscanned (the command is time-bounded).
const SCAN_CAP: usize = 64 << 20;
/// Changes listed per command; the rest are counted.
const CHANGE_CAP: usize = 40;

/// One command to run, with a label to report it by.
#[derive(Debug, Clone)]
pub struct Case {
    pub label: String,
    pub command: String,
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Exited with this code (not 127).
    Exited(i32),
    /// Exit code 127: the command (or the last one of a pipeline) is not installed here.
    NotInstalled,
    /// Still running at the timeout; the whole sandbox was killed. Not a failure.
    TimedOut,
    /// Killed by this signal before the timeout.
    Signalled(i32),
    /// Its output pipes stayed open after the sandbox was killed: a process escaped.
    Escaped,
    /// The sandbox itself could not be set up (overlay mount or bwrap failed).
    SandboxFailed(String),
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exited(c) => write!(f, "ran (exit {c})"),
            Self::NotInstalled => f.write_str("not installed (exit 127)"),
            Self::TimedOut => f.write_str("timed out"),
            Self::Signalled(s) => write!(f, "killed by signal {s}"),
            Self::Escaped => f.write_str("ESCAPED the sandbox kill"),
            Self::SandboxFailed(m) => write!(f, "sandbox failed: {m}"),
        }
    }
}

/// What happened to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeKind {
    /// A file (or symlink, FIFO, …) that did not exist.
    Created,
    /// A directory that did not exist.
    DirCreated,
    /// Existing file with other content (or type or link target).
    Modified,
    /// Existing file or directory with other mode, owner or modification time.
    Metadata,
    /// Existing path removed (an overlay whiteout).
    Deleted,
    /// Not a change: an existing file opened for writing, left byte- and time-identical.
    OpenedForWrite,
    /// Not a change: an existing directory whose entries were created and removed again.
    Transient,
}

impl ChangeKind {
    /// A state change (the test fails on these), as opposed to a note.
    pub fn is_change(self) -> bool {
        !matches!(self, Self::OpenedForWrite | Self::Transient)
    }
}

/// One path the command touched.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
}

/// The result of running one case.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: Status,
    /// State changes, sorted; at most [`CHANGE_CAP`] (see `more_changes`).
    pub changes: Vec<Change>,
    pub more_changes: usize,
    /// Touches that are not changes (see [`ChangeKind::is_change`]).
    pub notes: Vec<Change>,
    /// Canary files whose token appeared in stdout or stderr.
    pub leaked: Vec<&'static str>,
    pub elapsed: Duration,
}

impl Outcome {
    /// Whether the command broke the read-only promise (or the sandbox could not tell).
    pub fn offends(&self) -> bool {
        !self.changes.is_empty()
            || !self.leaked.is_empty()
            || matches!(self.status, Status::Escaped | Status::SandboxFailed(_))
    }
}

/// The paths of every planted canary secret.
pub fn canary_paths() -> impl Iterator<Item = &'static str> {
    CANARIES.iter().map(|c| c.0)
}

/// A canary layer and the tools to run commands over it. Drop removes its scratch directory.
#[derive(Debug)]
pub struct Sandbox {
    base: PathBuf,
    layer: PathBuf,
    tools: Tools,
    timeout: Duration,
    /// The canary tokens' patterns, shared with the output scanners.
    needles: Arc<Needles>,
    runs: AtomicUsize,
}

#[derive(Debug, Clone)]
struct Tools {
    unshare: PathBuf,
    prlimit: PathBuf,
    bwrap: PathBuf,
    sh: PathBuf,
    bash: PathBuf,
}

#[derive(Debug)]
struct Needles {
    /// Matched against the output as it is.
    plain: AhoCorasick,
    plain_owner: Vec<usize>,
    /// Matched against the output with ASCII whitespace removed (wrapped base64, hex dumps).
    squeezed: AhoCorasick,
    squeezed_owner: Vec<usize>,
    longest: usize,
}

impl Sandbox {
    /// Builds the canary layer under `scratch`. Fails, with what to install, when bubblewrap or
    /// util-linux's `unshare`/`prlimit` is missing, and when a probe sandbox cannot start.
    pub fn new(scratch: &Path, timeout: Duration) -> Result<Self, String> {
        Self::with_search_path(scratch, timeout, FIXED_PATH)
    }

    /// [`Sandbox::new`], finding the tools on `search_path` (a `PATH`-like list).
    pub fn with_search_path(
        scratch: &Path,
        timeout: Duration,
        search_path: &str,
    ) -> Result<Self, String> {
        let find = |name| find_tool(search_path, name);
        let tools = Tools {
            bwrap: find("bwrap").ok_or(
                "bubblewrap (`bwrap`) is not installed, and the read-only sandbox test needs it: \
                 `apt-get install bubblewrap` (scripts/lib.sh lists it in TEST_PACKAGES)",
            )?,
            unshare: find("unshare")
                .ok_or("util-linux `unshare` is not installed (apt-get install util-linux)")?,
            prlimit: find("prlimit")
                .ok_or("util-linux `prlimit` is not installed (apt-get install util-linux)")?,
            sh: find("sh").ok_or("no `sh` on PATH")?,
            bash: find("bash").ok_or("no `bash` on PATH")?,
        };
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = scratch.join(format!(
            "nomos-sandbox-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let text = base.to_string_lossy();
        if text.contains([',', ':', '\\']) || text.contains(char::is_whitespace) {
            return Err(format!(
                "scratch path {text:?} cannot be an overlay option (no , : \\ or spaces)"
            ));
        }
        remove_stale(scratch);
        let layer = base.join("layer");
        if !is_root() {
            return Err(
                "the sandbox mounts overlays in a private mount namespace and must run \
                        as root, as CI and the development machines do"
                    .into(),
            );
        }
        let tokens = build_layer(&layer).map_err(|e| format!("canary layer: {e}"))?;
        let needles = Needles::new(&tokens).map_err(|e| format!("canary patterns: {e}"))?;
        let sandbox = Self {
            base,
            layer,
            tools,
            timeout,
            needles: Arc::new(needles),
            runs: AtomicUsize::new(0),
        };
        let probe = sandbox.run_one(":");
        if probe.status != Status::Exited(0) || !probe.changes.is_empty() {
            return Err(format!(
                "the probe sandbox did not run cleanly: {}, changes {:?}",
                probe.status, probe.changes
            ));
        }
        Ok(sandbox)
    }

    /// Runs every case, `workers` at a time, and returns their outcomes in order.
    pub fn run_all(&self, cases: &[Case], workers: usize) -> Vec<Outcome> {
        let next = AtomicUsize::new(0);
        let mut slots: Vec<Option<Outcome>> = vec![None; cases.len()];
        thread::scope(|scope| {
            let (tx, rx) = mpsc::channel();
            for _ in 0..workers.max(1) {
                let tx = tx.clone();
                let next = &next;
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(case) = cases.get(i) else { break };
                        if tx.send((i, self.run_one(&case.command))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for (i, outcome) in rx {
                slots[i] = Some(outcome);
            }
        });
        slots
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| Outcome {
                    status: Status::SandboxFailed("worker died".into()),
                    changes: Vec::new(),
                    more_changes: 0,
                    notes: Vec::new(),
                    leaked: Vec::new(),
                    elapsed: Duration::ZERO,
                })
            })
            .collect()
    }

    /// Runs one command (bash, like the executor) in a fresh sandbox and inspects it.
    pub fn run_one(&self, command: &str) -> Outcome {
        let n = self.runs.fetch_add(1, Ordering::Relaxed);
        let dir = self.base.join(format!("run-{n}"));
        let started = Instant::now();
        let outcome = match self.prepare(&dir) {
            Ok(()) => self.execute(&dir, command, started),
            Err(e) => Outcome {
                status: Status::SandboxFailed(format!("scratch directory: {e}")),
                changes: Vec::new(),
                more_changes: 0,
                notes: Vec::new(),
                leaked: Vec::new(),
                elapsed: started.elapsed(),
            },
        };
        let _ = remove_tree(&dir);
        outcome
    }

    fn prepare(&self, dir: &Path) -> io::Result<()> {
        for sub in [
            "upper/fs",
            "upper/root",
            "ovl/fs",
            "ovl/root",
            "merged",
            "layer",
            "shm",
        ] {
            fs::create_dir_all(dir.join(sub))?;
        }
        fs::set_permissions(dir.join("shm"), fs::Permissions::from_mode(0o1777))
    }

    fn command(&self, dir: &Path, command: &str) -> Command {
        let mut c = Command::new(&self.tools.unshare);
        c.args(["--mount", "--propagation", "private", "--"])
            .arg(&self.tools.sh)
            .args(["-c", WRAPPER, "nomos-sandbox"])
            .arg(dir)
            .arg(&self.layer)
            // Plain copy-up: a chmod copies the whole file, a rename of a directory fails
            // instead of leaving a redirect, so the upper directory reads as it looks.
            .arg(",metacopy=off,redirect_dir=off");
        // Bounds that keep a runaway command from filling the disk or the memory.
        c.arg(&self.tools.prlimit)
            .args(["--as=4294967296", "--fsize=268435456", "--core=0", "--"]);
        c.arg(&self.tools.bwrap)
            .args(["--unshare-all", "--die-with-parent", "--new-session"]);
        c.arg("--bind").arg(dir.join("merged")).arg("/");
        c.args(["--dev", "/dev"]);
        c.arg("--bind").arg(dir.join("shm")).arg("/dev/shm");
        c.args(["--proc", "/proc"]);
        for p in PROC_READ_ONLY {
            c.args(["--ro-bind-try", p, p]);
        }
        c.args(["--ro-bind", "/sys", "/sys", "--clearenv"]);
        for (k, v) in FIXED_ENV {
            c.args(["--setenv", k, v]);
        }
        c.args(["--setenv", "HOME", HOME, "--chdir", HOME, "--"])
            .arg(&self.tools.bash)
            .args(["--noprofile", "--norc", "-c", command]);
        c.env_clear()
            .env("PATH", FIXED_PATH)
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn execute(&self, dir: &Path, command: &str, started: Instant) -> Outcome {
        let mut child = match self.command(dir, command).spawn() {
            Ok(c) => c,
            Err(e) => {
                return Outcome {
                    status: Status::SandboxFailed(format!("spawn: {e}")),
                    changes: Vec::new(),
                    more_changes: 0,
                    notes: Vec::new(),
                    leaked: Vec::new(),
                    elapsed: started.elapsed(),
                };
            }
        };
        let (tx, rx) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            spawn_scanner(out, Arc::clone(&self.needles), false, tx.clone());
        }
        if let Some(err) = child.stderr.take() {
            spawn_scanner(err, Arc::clone(&self.needles), true, tx.clone());
        }
        drop(tx);
        let exit = wait_until(&mut child, started + self.timeout);
        let elapsed = started.elapsed();
        // Killing bwrap kills the sandbox's PID namespace, so both pipes close at once; one
        // that stays open means a process outlived the sandbox.
        let mut leaked_ids = BTreeSet::new();
        let mut stderr_head = Vec::new();
        let mut closed = 0;
        while closed < 2 {
            match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(scan) => {
                    closed += 1;
                    leaked_ids.extend(scan.found);
                    if scan.is_stderr {
                        stderr_head = scan.head;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return self.finish(dir, Status::Escaped, leaked_ids, elapsed);
                }
            }
        }
        let head = String::from_utf8_lossy(&stderr_head);
        let status = match exit {
            None => Status::TimedOut,
            Some(Err(e)) => Status::SandboxFailed(format!("wait: {e}")),
            Some(Ok(st)) => classify_exit(st, &head),
        };
        self.finish(dir, status, leaked_ids, elapsed)
    }

    fn finish(
        &self,
        dir: &Path,
        status: Status,
        leaked_ids: BTreeSet<usize>,
        elapsed: Duration,
    ) -> Outcome {
        let mut found = Vec::new();
        let fs_lower = Lower::Layered(self.layer.join("fs"));
        let root_lower = Lower::Only(self.layer.join("root"));
        let mut err = None;
        for (upper, at, lower) in [
            (dir.join("upper/fs"), "/", &fs_lower),
            (dir.join("upper/root"), "/root", &root_lower),
            (dir.join("shm"), "/dev/shm", &Lower::Nothing),
        ] {
            if let Err(e) = scan_upper(&upper, Path::new(at), lower, &mut found) {
                err = Some(format!("reading {}: {e}", upper.display()));
            }
        }
        found.sort();
        let (mut changes, notes): (Vec<_>, Vec<_>) =
            found.into_iter().partition(|c| c.kind.is_change());
        let more_changes = changes.len().saturating_sub(CHANGE_CAP);
        changes.truncate(CHANGE_CAP);
        let status = match err {
            Some(e) if !matches!(status, Status::SandboxFailed(_)) => Status::SandboxFailed(e),
            _ => status,
        };
        Outcome {
            status,
            changes,
            more_changes,
            notes,
            leaked: leaked_ids.into_iter().map(|i| CANARIES[i].0).collect(),
            elapsed,
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = remove_tree(&self.base);
    }
}

fn classify_exit(st: ExitStatus, stderr_head: &str) -> Status {
    if stderr_head.starts_with("bwrap: ") || stderr_head.contains(WRAPPER_MARK) {
        let line = stderr_head.lines().next().unwrap_or_default();
        return Status::SandboxFailed(line.to_owned());
    }
    match (st.code(), st.signal()) {
        (Some(127), _) => Status::NotInstalled,
        (Some(c), _) => Status::Exited(c),
        (None, Some(s)) => Status::Signalled(s),
        (None, None) => Status::SandboxFailed("no exit status".into()),
    }
}

/// Polls until the child exits or the deadline passes; then kills it. `None` means timed out.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<io::Result<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(Ok(st)),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        let now = Instant::now();
        if now >= deadline {
            // SIGKILL to bwrap; --die-with-parent takes its child, and with it the sandbox's
            // PID namespace and every process in it.
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

struct Scan {
    is_stderr: bool,
    found: BTreeSet<usize>,
    head: Vec<u8>,
}

fn spawn_scanner<R: Read + Send + 'static>(
    mut stream: R,
    needles: Arc<Needles>,
    is_stderr: bool,
    tx: mpsc::Sender<Scan>,
) {
    thread::spawn(move || {
        let mut found = BTreeSet::new();
        let mut head = Vec::new();
        let mut plain: Vec<u8> = Vec::new();
        let mut squeezed: Vec<u8> = Vec::new();
        let mut seen = 0usize;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            if head.len() < 4096 {
                head.extend_from_slice(&chunk[..chunk.len().min(4096 - head.len())]);
            }
            if seen >= SCAN_CAP {
                continue;
            }
            seen += n;
            plain.extend_from_slice(chunk);
            squeezed.extend(chunk.iter().copied().filter(|b| !b.is_ascii_whitespace()));
            for m in needles.plain.find_overlapping_iter(&plain) {
                found.insert(needles.plain_owner[m.pattern().as_usize()]);
            }
            for m in needles.squeezed.find_overlapping_iter(&squeezed) {
                found.insert(needles.squeezed_owner[m.pattern().as_usize()]);
            }
            // Keep only what a needle split across two reads could still need.
            let keep = needles.longest;
            for v in [&mut plain, &mut squeezed] {
                if v.len() > keep {
                    v.drain(..v.len() - keep);
                }
            }
        }
        let _ = tx.send(Scan {
            is_stderr,
            found,
            head,
        });
    });
}

impl Needles {
    fn new(tokens: &[String]) -> Result<Self, aho_corasick::BuildError> {
        let (mut plain, mut plain_owner) = (Vec::new(), Vec::new());
        let (mut squeezed, mut squeezed_owner) = (Vec::new(), Vec::new());
        for (i, t) in tokens.iter().enumerate() {
            let b = t.as_bytes();
            plain.push(b.to_vec());
            plain.push(b.iter().rev().copied().collect());
            plain_owner.extend([i, i]);
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            squeezed.push(hex.to_uppercase().into_bytes());
            squeezed.push(hex.into_bytes());
            squeezed_owner.extend([i, i]);
            // The token may sit at any offset of the file, so each of the three alignments
            // encodes differently: keep the whole base64 groups inside the token.
            for skip in 0..3 {
                let inner = &b[skip..];
                let whole = inner.len() / 3 * 3;
                squeezed.push(base64(&inner[..whole]).into_bytes());
                squeezed_owner.push(i);
            }
        }
        let longest = plain
            .iter()
            .chain(&squeezed)
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        Ok(Self {
            plain: AhoCorasick::new(&plain)?,
            plain_owner,
            squeezed: AhoCorasick::new(&squeezed)?,
            squeezed_owner,
            longest,
        })
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len() / 3 * 4);
    for g in bytes.chunks_exact(3) {
        let n = (u32::from(g[0]) << 16) | (u32::from(g[1]) << 8) | u32::from(g[2]);
        for shift in [18, 12, 6, 0] {
            out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
        }
    }
    out
}

/// Where the sandbox saw an upper path before the command: the canary layer over the host's
/// root, the layer alone (`/root`), or nothing (`/dev/shm`).
enum Lower {
    Layered(PathBuf),
    Only(PathBuf),
    Nothing,
}

impl Lower {
    fn lookup(&self, rel: &Path) -> Option<(PathBuf, fs::Metadata)> {
        let candidates: Vec<PathBuf> = match self {
            Self::Layered(layer) => vec![layer.join(rel), Path::new("/").join(rel)],
            Self::Only(layer) => vec![layer.join(rel)],
            Self::Nothing => Vec::new(),
        };
        candidates
            .into_iter()
            .find_map(|p| fs::symlink_metadata(&p).ok().map(|m| (p, m)))
    }
}

/// Walks one upper directory. Returns whether anything below `upper` was recorded, so that a
/// directory copied up only as the parent of a change is not reported itself.
fn scan_upper(upper: &Path, at: &Path, lower: &Lower, out: &mut Vec<Change>) -> io::Result<bool> {
    scan_dir(upper, Path::new(""), at, lower, out)
}

fn scan_dir(
    upper: &Path,
    rel: &Path,
    at: &Path,
    lower: &Lower,
    out: &mut Vec<Change>,
) -> io::Result<bool> {
    let mut any = false;
    let mut entries: Vec<_> = fs::read_dir(upper.join(rel))?.collect::<io::Result<_>>()?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for e in entries {
        let rel = rel.join(e.file_name());
        let path = at.join(&rel).to_string_lossy().into_owned();
        let meta = fs::symlink_metadata(e.path())?;
        let before = lower.lookup(&rel);
        let ft = meta.file_type();
        let mut record = |kind| {
            out.push(Change {
                path: path.clone(),
                kind,
            });
        };
        if ft.is_char_device() && meta.rdev() == 0 {
            record(ChangeKind::Deleted);
            any = true;
        } else if ft.is_dir() {
            let below = scan_dir(upper, &rel, at, lower, out)?;
            let kind = match &before {
                None => Some(ChangeKind::DirCreated),
                Some((_, m)) if !m.is_dir() => Some(ChangeKind::Created),
                Some((_, m)) if !same_owner_mode(m, &meta) => Some(ChangeKind::Metadata),
                Some((_, m)) if !below && !same_mtime(m, &meta) => Some(ChangeKind::Transient),
                Some(_) => None,
            };
            if let Some(kind) = kind {
                out.push(Change {
                    path: path.clone(),
                    kind,
                });
            }
            any |= below || kind.is_some();
        } else {
            let kind = match &before {
                None => ChangeKind::Created,
                Some((p, m)) => compare_file(p, m, &e.path(), &meta)?,
            };
            record(kind);
            any = true;
        }
    }
    Ok(any)
}

fn same_owner_mode(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.mode() == b.mode() && a.uid() == b.uid() && a.gid() == b.gid()
}

fn same_mtime(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.mtime() == b.mtime() && a.mtime_nsec() == b.mtime_nsec()
}

fn compare_file(
    before: &Path,
    bm: &fs::Metadata,
    after: &Path,
    am: &fs::Metadata,
) -> io::Result<ChangeKind> {
    let (bt, at) = (bm.file_type(), am.file_type());
    let same_content = if bt.is_file() && at.is_file() {
        bm.len() == am.len() && same_bytes(before, after)?
    } else if bt.is_symlink() && at.is_symlink() {
        fs::read_link(before)? == fs::read_link(after)?
    } else {
        bm.mode() & 0o170_000 == am.mode() & 0o170_000 && bm.rdev() == am.rdev()
    };
    Ok(if !same_content {
        ChangeKind::Modified
    } else if !same_owner_mode(bm, am) || !same_mtime(bm, am) {
        ChangeKind::Metadata
    } else {
        ChangeKind::OpenedForWrite
    })
}

fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut fa, mut fb) = (fs::File::open(a)?, fs::File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let n = read_full(&mut fa, &mut ba)?;
        let m = read_full(&mut fb, &mut bb)?;
        if n != m || ba[..n] != bb[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

fn read_full(f: &mut fs::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Writes the canary layer (`fs/…` over the host root, `root/…` as the whole of `/root`) and
/// returns each canary's token, in [`CANARIES`] order.
fn build_layer(layer: &Path) -> io::Result<Vec<String>> {
    let place = |path: &str| -> PathBuf {
        match path.strip_prefix("/root") {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                layer.join("root").join(rest.trim_start_matches('/'))
            }
            _ => layer.join("fs").join(path.trim_start_matches('/')),
        }
    };
    fs::create_dir_all(layer.join("fs"))?;
    fs::create_dir_all(layer.join("root"))?;
    copy_owner_mode(Path::new("/root"), &layer.join("root"), 0o700)?;
    let ensure_parents = |path: &str| -> io::Result<()> {
        // Each directory the layer adds takes the real one's mode and owner, since the
        // overlay shows the top layer's directory attributes.
        let mut real = PathBuf::from("/");
        for part in Path::new(path)
            .parent()
            .into_iter()
            .flat_map(Path::iter)
            .skip(1)
        {
            real.push(part);
            let dir = place(&real.to_string_lossy());
            if !dir.exists() {
                fs::create_dir(&dir)?;
                let private = PRIVATE_DIRS.iter().any(|p| Path::new(p) == real);
                copy_owner_mode(&real, &dir, if private { 0o700 } else { 0o755 })?;
            }
        }
        Ok(())
    };
    let mut tokens = Vec::with_capacity(CANARIES.len());
    for (path, mode, template) in CANARIES {
        ensure_parents(path)?;
        let token = random_token()?;
        let file = place(path);
        fs::write(&file, template.replace("{T}", &token))?;
        copy_owner_mode(Path::new(path), &file, *mode)?;
        tokens.push(token);
    }
    for (path, mode, content) in PLAIN_FILES {
        ensure_parents(path)?;
        let file = place(path);
        fs::write(&file, content)?;
        fs::set_permissions(&file, fs::Permissions::from_mode(*mode))?;
    }
    Ok(tokens)
}

/// Gives `made` the mode and owner of `real` when it exists, else `default` mode.
fn copy_owner_mode(real: &Path, made: &Path, default: u32) -> io::Result<()> {
    match fs::metadata(real) {
        Ok(m) => {
            fs::set_permissions(made, fs::Permissions::from_mode(m.mode() & 0o7777))?;
            std::os::unix::fs::chown(made, Some(m.uid()), Some(m.gid()))?;
        }
        Err(_) => fs::set_permissions(made, fs::Permissions::from_mode(default))?,
    }
    Ok(())
}

/// 24 hex digits from the kernel's random source: unique per canary and per run, so a hit
/// cannot come from anything but the planted file.
fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 12];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn find_tool(search_path: &str, name: &str) -> Option<PathBuf> {
    search_path
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Removes the scratch trees of test processes that are gone (killed before their `Drop`).
fn remove_stale(scratch: &Path) {
    let Ok(entries) = fs::read_dir(scratch) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("nomos-sandbox-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = remove_tree(&e.path());
        }
    }
}

/// Removes a scratch tree, first making directories searchable (overlay work directories
/// are created mode 000).
fn remove_tree(dir: &Path) -> io::Result<()> {
    if fs::remove_dir_all(dir).is_ok() || !dir.exists() {
        return Ok(());
    }
    fn open_up(p: &Path) {
        if fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
            let _ = fs::set_permissions(p, fs::Permissions::from_mode(0o700));
            if let Ok(rd) = fs::read_dir(p) {
                for e in rd.flatten() {
                    open_up(&e.path());
                }
            }
        }
    }
    open_up(dir);
    fs::remove_dir_all(dir)
}
