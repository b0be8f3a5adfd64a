//! The executor: spawn, capture, time out, cancel, and hand back a handle.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::ExecError;
use crate::output::{Capture, CapturedOutput, OutputCap};
use crate::shell::{BASH_FLAGS, FIXED_ENV, Graces, pct_remote_command, ssh_remote_command};
use crate::target::{SshTransport, Target, TargetSlug, Transport};

/// Longest canonical command accepted. Far above any real command, far below `ARG_MAX`.
pub const MAX_COMMAND_BYTES: usize = 128 * 1024;

/// `%C` expands to 40 hex digits; a Unix socket path holds 107 bytes on Linux, 103 on macOS.
const MAX_CONTROL_DIR_BYTES: usize = 103 - 1 - 40;

/// Where the executor finds its programs and keeps its ssh sockets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorConfig {
    /// The application data directory; ssh control sockets live in `<data_dir>/ssh/`.
    pub data_dir: PathBuf,
    /// The OpenSSH client (`ssh`, found on the application's `PATH`).
    pub ssh_program: PathBuf,
    /// `-F <file>` for every ssh call. `None` (the default) lets ssh read `~/.ssh/config`
    /// and the system config as it always does.
    pub ssh_config: Option<PathBuf>,
    /// How long an idle ssh master connection stays up (`ControlPersist`).
    pub control_persist: Duration,
    /// `ConnectTimeout` for new ssh connections.
    pub connect_timeout: Duration,
    /// `pct` on Proxmox hosts (absolute, so the login shell's `PATH` does not matter).
    pub pct_path: String,
    /// `bash` for local commands.
    pub bash_path: PathBuf,
    /// `HOME` (and working directory) for local commands: the operator's own home.
    pub local_home: Option<PathBuf>,
    /// A program (and its arguments) that local commands run under: `bash` and the command
    /// come after it. Empty (the default) runs `bash` directly. Live evals put a throwaway
    /// sandbox here (bubblewrap, read-only root, scratch home), so a model's commands never
    /// touch the bare workstation; if the wrapper cannot start, nothing runs.
    pub local_wrapper: Vec<std::ffi::OsString>,
}

impl ExecutorConfig {
    /// Defaults for the given data directory; `HOME` is taken from the process environment.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            ssh_program: PathBuf::from("ssh"),
            ssh_config: None,
            control_persist: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            pct_path: "/usr/sbin/pct".to_owned(),
            bash_path: PathBuf::from("/bin/bash"),
            local_home: std::env::var_os("HOME").map(PathBuf::from),
            local_wrapper: Vec::new(),
        }
    }
}

/// Per-execution limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget; past it the process group is killed and the status is
    /// [`ExecStatus::TimedOut`].
    pub timeout: Duration,
    /// Cap for stdout.
    pub stdout: OutputCap,
    /// Cap for stderr.
    pub stderr: OutputCap,
    /// Between SIGTERM and SIGKILL when the group is terminated.
    pub kill_grace: Duration,
    /// After the command exits, how long processes left in its group may run on; then
    /// they are terminated (the group never outlives the execution).
    pub drain_grace: Duration,
}

impl Default for Limits {
    /// 5 minutes, 64 KiB + 16 KiB per stream, 2 s kill grace, 0.5 s drain grace.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            stdout: OutputCap::default(),
            stderr: OutputCap::default(),
            kill_grace: Duration::from_secs(2),
            drain_grace: Duration::from_millis(500),
        }
    }
}

impl Limits {
    /// The defaults with another timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            timeout,
            ..Self::default()
        }
    }
}

/// The execution row's final state, as the store names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecState {
    /// The command ran to its end (whatever its exit code).
    Finished,
    /// The command could not run (transport error, lost result).
    Failed,
    /// Killed at the deadline.
    TimedOut,
    /// Killed on request.
    Cancelled,
}

impl ExecState {
    /// `finished`, `failed`, `timed_out`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Finished => "finished",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
        }
    }
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecStatus {
    /// The command exited with this code. Over ssh, a command killed by a signal shows as
    /// `128 + signal`, as in a shell.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A local command was killed by a signal nobody here sent.
    Signaled {
        /// The signal number.
        signal: i32,
    },
    /// The deadline passed; the process group was killed.
    TimedOut,
    /// Cancelled; the process group was killed.
    Cancelled,
    /// The command could not run (typically the ssh connection).
    Failed {
        /// Why.
        error: ExecError,
    },
}

impl ExecStatus {
    /// The row state this status maps to.
    pub fn state(&self) -> ExecState {
        match self {
            Self::Exited { .. } | Self::Signaled { .. } => ExecState::Finished,
            Self::TimedOut => ExecState::TimedOut,
            Self::Cancelled => ExecState::Cancelled,
            Self::Failed { .. } => ExecState::Failed,
        }
    }

    /// The exit code, when the command exited by itself.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Self::Exited { code } => Some(*code),
            _ => None,
        }
    }

    /// Exited with code 0.
    pub fn success(&self) -> bool {
        self.exit_code() == Some(0)
    }
}

/// The result of one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    /// Where it ran.
    pub target: TargetSlug,
    /// How it ended.
    pub status: ExecStatus,
    /// Captured stdout (capped).
    pub stdout: CapturedOutput,
    /// Captured stderr (capped). For an ssh failure, the ssh client's message.
    pub stderr: CapturedOutput,
    /// From spawn to the end of the process (including the kill, when there was one).
    pub duration: Duration,
}

/// Runs canonical commands on targets. Cheap to clone; one per application.
#[derive(Debug, Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: ExecutorConfig,
    control_dir: PathBuf,
    /// `ControlPath` as ssh reads it: quoted, `%` escaped, `%C` appended.
    control_path_option: String,
    local_cwd: PathBuf,
}

impl Executor {
    /// Prepares the executor: creates `<data_dir>/ssh` private to this user (anyone who can
    /// open a control socket can run commands over it).
    pub fn new(config: ExecutorConfig) -> Result<Self, ExecError> {
        let control_dir = config.data_dir.join("ssh");
        let dir_str = control_dir.to_str().ok_or_else(|| ExecError::Config {
            message: format!("data directory {} is not UTF-8", config.data_dir.display()),
        })?;
        if dir_str.contains('"') || dir_str.chars().any(char::is_control) {
            return Err(ExecError::Config {
                message: format!("data directory {dir_str} contains a quote or control character"),
            });
        }
        if dir_str.len() > MAX_CONTROL_DIR_BYTES {
            return Err(ExecError::Config {
                message: format!(
                    "ssh control directory {dir_str} is longer than {MAX_CONTROL_DIR_BYTES} bytes; socket paths would not fit"
                ),
            });
        }
        if config.pct_path.is_empty() || config.pct_path.chars().any(char::is_control) {
            return Err(ExecError::Config {
                message: "pct_path must be a non-empty path".into(),
            });
        }
        let config_err = |e: io::Error| ExecError::Config {
            message: format!("cannot prepare {dir_str}: {e}"),
        };
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&control_dir)
            .map_err(config_err)?;
        // An existing directory may have looser permissions.
        fs::set_permissions(&control_dir, fs::Permissions::from_mode(0o700)).map_err(config_err)?;
        let local_cwd = config
            .local_home
            .as_ref()
            .filter(|h| h.is_dir())
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let control_path_option = format!("ControlPath=\"{}/%C\"", dir_str.replace('%', "%%"));
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                control_dir,
                control_path_option,
                local_cwd,
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ExecutorConfig {
        &self.inner.config
    }

    /// Where the ssh control sockets live.
    pub fn control_dir(&self) -> &Path {
        &self.inner.control_dir
    }

    /// Starts `canonical` on `target` and returns at once with a handle.
    ///
    /// `canonical` is the policy crate's canonical form, run as `bash -c <canonical>` byte
    /// for byte under the fixed environment (see [`FIXED_ENV`](crate::FIXED_ENV)), with stdin
    /// from `/dev/null`, no TTY, in its own process group. Errors here mean nothing was
    /// started; failures after the start (an unreachable host) arrive as
    /// [`ExecStatus::Failed`].
    ///
    /// The execution is supervised by a spawned task, which keeps going when every handle is
    /// dropped.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime (like `tokio::spawn`).
    pub fn start(
        &self,
        target: &Target,
        canonical: &str,
        limits: &Limits,
    ) -> Result<ExecutionHandle, ExecError> {
        self.start_with_cancel(target, canonical, limits, &CancellationToken::new())
    }

    /// [`start`](Self::start), also cancelled when `parent` is (a session-wide stop).
    /// [`ExecutionHandle::cancel`] cancels only this execution.
    pub fn start_with_cancel(
        &self,
        target: &Target,
        canonical: &str,
        limits: &Limits,
        parent: &CancellationToken,
    ) -> Result<ExecutionHandle, ExecError> {
        check_command(canonical)?;
        target.validate()?;
        let prepared = self.prepare(target, canonical, limits);
        let program = prepared
            .command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut command = prepared.command;
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(false);
        let started = Instant::now();
        let mut child = command.spawn().map_err(|e| ExecError::Spawn {
            program: program.clone(),
            message: e.to_string(),
        })?;
        let pid = child.id();
        // Read at once, while the leader surely lives: a later start-up proves by it that a
        // group left running is still this command's.
        let group = pid.and_then(crate::orphans::ProcessGroup::of_leader);
        // Keeps the ssh channel's stdin open; its EOF tells the remote side to kill.
        let keepalive = child.stdin.take();
        info!(target = %target.slug, pid, program, "execution started");

        let cancel = parent.child_token();
        let (tx, rx) = watch::channel(None);
        let supervisor = Supervisor {
            slug: target.slug.clone(),
            ssh: prepared.ssh_failure,
            limits: *limits,
            cancel: cancel.clone(),
            started,
        };
        tokio::spawn(async move {
            let outcome = supervisor.run(child, keepalive).await;
            info!(
                target = %outcome.target,
                state = outcome.status.state().as_str(),
                code = outcome.status.exit_code(),
                ms = outcome.duration.as_millis() as u64,
                "execution ended"
            );
            tx.send_replace(Some(outcome));
        });
        Ok(ExecutionHandle {
            target: target.slug.clone(),
            pid,
            group,
            cancel,
            rx,
        })
    }

    /// Starts and waits for the end: [`start`](Self::start) + [`ExecutionHandle::wait`].
    pub async fn run(
        &self,
        target: &Target,
        canonical: &str,
        limits: &Limits,
    ) -> Result<ExecOutcome, ExecError> {
        Ok(self.start(target, canonical, limits)?.wait().await)
    }

    /// The process the executor would start, for logs and tests: program and arguments.
    pub fn command_line(
        &self,
        target: &Target,
        canonical: &str,
        limits: &Limits,
    ) -> Result<Vec<OsString>, ExecError> {
        check_command(canonical)?;
        target.validate()?;
        let prepared = self.prepare(target, canonical, limits);
        let std = prepared.command.as_std();
        Ok(std::iter::once(std.get_program().to_owned())
            .chain(std.get_args().map(ToOwned::to_owned))
            .collect())
    }

    /// Whether an ssh master connection to `ssh` is up (`ssh -O check`).
    pub async fn master_running(&self, ssh: &SshTransport) -> bool {
        self.control(ssh, "check").await
    }

    /// Closes the master connection to `ssh`, if any (`ssh -O exit`). Returns whether one
    /// was running. Commands running over it lose their connection.
    pub async fn close_master(&self, ssh: &SshTransport) -> bool {
        self.control(ssh, "exit").await
    }

    /// Closes every master connection in the control directory (at shutdown, or before a
    /// test's sshd goes away). Returns how many were closed.
    pub async fn close_all_masters(&self) -> usize {
        let Ok(entries) = fs::read_dir(&self.inner.control_dir) else {
            return 0;
        };
        let mut closed = 0;
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_socket()) {
                continue;
            }
            let Some(path) = entry.path().to_str().map(|p| p.replace('%', "%%")) else {
                continue;
            };
            let mut cmd = Command::new(&self.inner.config.ssh_program);
            // A literal ControlPath needs no host resolution; -F /dev/null keeps the
            // operator's config out of it.
            cmd.args(["-F", "/dev/null", "-o"])
                .arg(format!("ControlPath=\"{path}\""))
                .args(["-O", "exit", "nomos-master"]);
            if run_quietly(cmd).await {
                closed += 1;
            }
        }
        closed
    }

    async fn control(&self, ssh: &SshTransport, op: &str) -> bool {
        if ssh.validate().is_err() {
            return false;
        }
        let mut cmd = Command::new(&self.inner.config.ssh_program);
        cmd.args(self.ssh_args(ssh))
            .args(["-O", op, "--"])
            .arg(&ssh.host);
        run_quietly(cmd).await
    }

    fn prepare(&self, target: &Target, canonical: &str, limits: &Limits) -> Prepared {
        let grace = Graces {
            kill: limits.kill_grace,
            drain: limits.drain_grace,
        };
        match &target.transport {
            Transport::Local => {
                let cfg = &self.inner.config;
                let mut cmd = match cfg.local_wrapper.split_first() {
                    None => Command::new(&cfg.bash_path),
                    Some((program, args)) => {
                        let mut c = Command::new(program);
                        c.args(args).arg(&cfg.bash_path);
                        c
                    }
                };
                cmd.args(BASH_FLAGS)
                    .arg(canonical)
                    .env_clear()
                    .envs(FIXED_ENV.iter().copied())
                    .current_dir(&self.inner.local_cwd)
                    .stdin(Stdio::null());
                if let Some(home) = &cfg.local_home {
                    cmd.env("HOME", home);
                }
                Prepared {
                    command: cmd,
                    ssh_failure: None,
                }
            }
            Transport::Ssh(ssh) => {
                self.ssh_command(ssh, ssh_remote_command(canonical, grace), None)
            }
            Transport::Pct(pct) => self.ssh_command(
                &pct.proxmox_host,
                pct_remote_command(&self.inner.config.pct_path, pct.vmid, canonical, grace),
                Some(pct.vmid),
            ),
        }
    }

    fn ssh_command(&self, ssh: &SshTransport, remote: String, vmid: Option<u32>) -> Prepared {
        let mut cmd = Command::new(&self.inner.config.ssh_program);
        cmd.args(self.ssh_args(ssh))
            .arg("--")
            .arg(&ssh.host)
            .arg(remote)
            .stdin(Stdio::piped());
        Prepared {
            command: cmd,
            ssh_failure: Some(SshContext {
                host: ssh.host.clone(),
                vmid,
            }),
        }
    }

    /// Options for every ssh call to `ssh`. Ours come first because ssh keeps the first
    /// value of an option, so a target's extra options cannot turn off BatchMode or move
    /// the control socket; the operator's config files come after all of them.
    fn ssh_args(&self, ssh: &SshTransport) -> Vec<OsString> {
        let cfg = &self.inner.config;
        let mut args: Vec<OsString> = Vec::new();
        if let Some(file) = &cfg.ssh_config {
            args.push("-F".into());
            args.push(file.into());
        }
        let mut opt = |o: String| {
            args.push("-o".into());
            args.push(o.into());
        };
        opt("BatchMode=yes".into());
        opt("ControlMaster=auto".into());
        opt(self.inner.control_path_option.clone());
        // 0 would mean "forever".
        opt(format!(
            "ControlPersist={}s",
            cfg.control_persist.as_secs().max(1)
        ));
        // Only the client's errors reach stderr, never "Warning: Permanently added …".
        opt("LogLevel=ERROR".into());
        for (key, value) in &ssh.options {
            opt(format!("{key}={value}"));
        }
        opt(format!(
            "ConnectTimeout={}",
            cfg.connect_timeout.as_secs().max(1)
        ));
        // A master whose network went away (laptop asleep) is noticed in ~45 s.
        opt("ServerAliveInterval=15".into());
        opt("ServerAliveCountMax=3".into());
        args.push("-T".into());
        if let Some(port) = ssh.port {
            args.push("-p".into());
            args.push(port.to_string().into());
        }
        if let Some(user) = &ssh.user {
            args.push("-l".into());
            args.push(user.into());
        }
        if let Some(identity) = &ssh.identity_file {
            args.push("-i".into());
            args.push(identity.into());
        }
        args
    }
}

fn check_command(canonical: &str) -> Result<(), ExecError> {
    let reason = if canonical.trim().is_empty() {
        "the command is empty".to_owned()
    } else if canonical.contains('\0') {
        "the command contains a NUL byte".to_owned()
    } else if canonical.len() > MAX_COMMAND_BYTES {
        format!(
            "the command is {} bytes; the limit is {MAX_COMMAND_BYTES}",
            canonical.len()
        )
    } else {
        return Ok(());
    };
    Err(ExecError::InvalidCommand { reason })
}

/// Runs a short ssh control command; true when it exits 0.
async fn run_quietly(mut cmd: Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    match timeout(Duration::from_secs(10), cmd.status()).await {
        Ok(Ok(status)) => status.success(),
        Ok(Err(e)) => {
            debug!(error = %e, "ssh control command failed to start");
            false
        }
        Err(_) => false,
    }
}

struct Prepared {
    command: Command,
    /// Set for ssh transports: how to read an exit of 255.
    ssh_failure: Option<SshContext>,
}

#[derive(Debug, Clone)]
struct SshContext {
    host: String,
    vmid: Option<u32>,
}

/// A running (or finished) execution. Clone it to wait in several places (the `run` tool
/// waits briefly, the continuation worker waits for the end); dropping every clone does not
/// stop the execution.
#[derive(Debug, Clone)]
pub struct ExecutionHandle {
    target: TargetSlug,
    pid: Option<u32>,
    group: Option<crate::orphans::ProcessGroup>,
    cancel: CancellationToken,
    rx: watch::Receiver<Option<ExecOutcome>>,
}

impl ExecutionHandle {
    /// Where it runs.
    pub fn target(&self) -> &TargetSlug {
        &self.target
    }

    /// The local process id (`bash`, or the `ssh` client), also its process group id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Its process group and the leader's start time, read when it started (I24).
    pub fn group(&self) -> Option<crate::orphans::ProcessGroup> {
        self.group
    }

    /// Asks for the execution to stop: the process group gets SIGTERM, then SIGKILL after
    /// the grace; the outcome is [`ExecStatus::Cancelled`]. No effect once it has ended.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The token [`cancel`](Self::cancel) fires.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The outcome, if it has ended.
    pub fn outcome(&self) -> Option<ExecOutcome> {
        self.rx.borrow().clone()
    }

    /// Whether it has ended.
    pub fn is_finished(&self) -> bool {
        self.rx.borrow().is_some()
    }

    /// Waits at most `max` for the end: `None` means it is still running (and keeps
    /// running).
    pub async fn wait_for(&self, max: Duration) -> Option<ExecOutcome> {
        timeout(max, self.wait()).await.ok()
    }

    /// Waits for the end.
    pub async fn wait(&self) -> ExecOutcome {
        let mut rx = self.rx.clone();
        if let Ok(value) = rx.wait_for(Option::is_some).await
            && let Some(outcome) = value.as_ref()
        {
            return outcome.clone();
        }
        // The supervising task was dropped with its runtime.
        ExecOutcome {
            target: self.target.clone(),
            status: ExecStatus::Failed {
                error: ExecError::Interrupted,
            },
            stdout: CapturedOutput::default(),
            stderr: CapturedOutput::default(),
            duration: Duration::ZERO,
        }
    }
}

/// Why the executor killed the process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    Timeout,
    Cancel,
}

struct Supervisor {
    slug: TargetSlug,
    ssh: Option<SshContext>,
    limits: Limits,
    cancel: CancellationToken,
    started: Instant,
}

type ReaderResult = (Capture, Option<io::Error>);

/// Both output readers, run as one task so that "all output closed" can be awaited any
/// number of times (`eof`) and the captures collected once at the end.
struct Readers {
    task: JoinHandle<(ReaderResult, ReaderResult)>,
    /// Cancelled when both pipes reached EOF (or failed).
    eof: CancellationToken,
    /// Makes the readers stop where they are (a pipe held open by someone we cannot kill).
    stop: CancellationToken,
}

impl Readers {
    fn spawn(child: &mut Child, limits: &Limits) -> Self {
        let stop = CancellationToken::new();
        let eof = CancellationToken::new();
        let out = spawn_reader(child.stdout.take(), limits.stdout, stop.clone());
        let err = spawn_reader(child.stderr.take(), limits.stderr, stop.clone());
        let guard = eof.clone().drop_guard();
        let task = tokio::spawn(async move {
            let _guard = guard;
            (join_reader(out).await, join_reader(err).await)
        });
        Self { task, eof, stop }
    }

    /// Waits at most `max` for EOF on both pipes.
    async fn closed_within(&self, max: Duration) -> bool {
        timeout(max, self.eof.cancelled()).await.is_ok()
    }

    /// Stops reading (if not done) and returns what was captured.
    async fn collect(self) -> (ReaderResult, ReaderResult) {
        self.stop.cancel();
        match self.task.await {
            Ok(outputs) => outputs,
            Err(e) => {
                let lost = || {
                    (
                        Capture::new(OutputCap { head: 0, tail: 0 }),
                        Some(io::Error::other(format!("output reader failed: {e}"))),
                    )
                };
                (lost(), lost())
            }
        }
    }
}

impl Supervisor {
    async fn run(self, mut child: Child, keepalive: Option<ChildStdin>) -> ExecOutcome {
        let group = child.id().and_then(|id| Pid::from_raw(id as i32));
        let readers = Readers::spawn(&mut child, &self.limits);
        let deadline = self.started + self.limits.timeout;

        let ended = tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(Kill::Cancel),
            () = sleep_until(deadline) => Err(Kill::Timeout),
            status = child.wait() => Ok(status),
        };
        // For ssh, EOF on the channel's stdin also tells the remote watcher to kill.
        drop(keepalive);

        let (status, duration) = match ended {
            Ok(status) => {
                let duration = self.started.elapsed();
                // An execution's process group does not outlive it: what is left gets the
                // drain grace to finish by itself, then is terminated. (Something meant to
                // stay must leave the group: `setsid`, `systemd-run`.)
                if timeout(self.limits.drain_grace, group_gone(group))
                    .await
                    .is_err()
                {
                    debug!(target = %self.slug, "processes left in the group; terminating them");
                    self.terminate(group, &mut child, &readers).await;
                } else if !readers.closed_within(self.limits.drain_grace).await {
                    debug!(target = %self.slug, "output held open outside the group; not waiting");
                }
                (Ok(status), duration)
            }
            Err(kill) => {
                info!(target = %self.slug, ?kill, "killing the process group");
                self.terminate(group, &mut child, &readers).await;
                (Err(kill), self.started.elapsed())
            }
        };
        let outputs = readers.collect().await;
        let status = match status {
            Ok(Ok(exit)) => self.exit_status(exit, &outputs.1.0),
            Ok(Err(e)) => ExecStatus::Failed {
                error: ExecError::Io {
                    message: format!("waiting for the process: {e}"),
                },
            },
            Err(Kill::Timeout) => ExecStatus::TimedOut,
            Err(Kill::Cancel) => ExecStatus::Cancelled,
        };
        self.outcome(status, outputs, duration)
    }

    /// SIGTERM to the group; SIGKILL to whatever is left after the grace. Returns once the
    /// leader is reaped and the output closed, or after a further grace at most.
    async fn terminate(&self, group: Option<Pid>, child: &mut Child, readers: &Readers) {
        let grace = self.limits.kill_grace;
        signal_group(group, Signal::TERM);
        let gone = timeout(grace, async {
            let _ = child.wait().await;
            group_gone(group).await;
            readers.eof.cancelled().await;
        })
        .await
        .is_ok();
        if gone {
            return;
        }
        signal_group(group, Signal::KILL);
        let _ = timeout(grace, child.wait()).await;
        // Past this, a pipe is held outside the group (an ssh master's copy, a `setsid`
        // child): collect what was read.
        readers.closed_within(grace).await;
    }

    fn exit_status(&self, status: ExitStatus, stderr: &Capture) -> ExecStatus {
        if let Some(code) = status.code() {
            if code == 255
                && let Some(ctx) = &self.ssh
                && let Some(error) = classify_ssh_failure(ctx, &stderr.finish().text)
            {
                return ExecStatus::Failed { error };
            }
            return ExecStatus::Exited { code };
        }
        match status.signal() {
            Some(signal) => ExecStatus::Signaled { signal },
            None => ExecStatus::Failed {
                error: ExecError::Io {
                    message: format!("unexpected process status {status}"),
                },
            },
        }
    }

    fn outcome(
        &self,
        status: ExecStatus,
        (out, err): (ReaderResult, ReaderResult),
        duration: Duration,
    ) -> ExecOutcome {
        for (name, e) in [("stdout", out.1), ("stderr", err.1)] {
            if let Some(e) = e {
                warn!(target = %self.slug, stream = name, error = %e, "reading output failed");
            }
        }
        ExecOutcome {
            target: self.slug.clone(),
            status,
            stdout: out.0.finish(),
            stderr: err.0.finish(),
            duration,
        }
    }
}

fn signal_group(group: Option<Pid>, signal: Signal) {
    let Some(group) = group else { return };
    match kill_process_group(group, signal) {
        Ok(()) => {}
        // Already gone.
        Err(rustix::io::Errno::SRCH) => {}
        Err(e) => warn!(
            pgid = group.as_raw_pid(),
            ?signal,
            error = %e,
            "signalling the process group failed"
        ),
    }
}

/// Resolves when no process is left in the group (a signal 0 finds none).
async fn group_gone(group: Option<Pid>) {
    let Some(group) = group else { return };
    // Only "no such process" means gone; EPERM means someone is there.
    while !matches!(test_kill_process_group(group), Err(rustix::io::Errno::SRCH)) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn spawn_reader<R>(
    pipe: Option<R>,
    cap: OutputCap,
    stop: CancellationToken,
) -> JoinHandle<ReaderResult>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut capture = Capture::new(cap);
        let Some(mut pipe) = pipe else {
            return (capture, None);
        };
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let read = tokio::select! {
                biased;
                r = pipe.read(&mut buf) => r,
                () = stop.cancelled() => return (capture, None),
            };
            match read {
                Ok(0) => return (capture, None),
                Ok(n) => capture.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return (capture, Some(e)),
            }
        }
    })
}

async fn join_reader(handle: JoinHandle<ReaderResult>) -> ReaderResult {
    match handle.await {
        Ok(result) => result,
        Err(e) => (
            Capture::new(OutputCap { head: 0, tail: 0 }),
            Some(io::Error::other(format!("output reader failed: {e}"))),
        ),
    }
}

/// Reads an ssh exit of 255: the client's own failure, or a remote command that exited 255.
/// With `LogLevel=ERROR` the client writes only its errors, in stable English phrases.
fn classify_ssh_failure(ctx: &SshContext, stderr: &str) -> Option<ExecError> {
    let message = || {
        let joined: Vec<&str> = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let mut m = joined.join("; ");
        if m.len() > 500 {
            let cut = (0..=500)
                .rev()
                .find(|&i| m.is_char_boundary(i))
                .unwrap_or(0);
            m.truncate(cut);
            m.push('…');
        }
        m
    };
    let has = |needle: &str| stderr.contains(needle);
    let host = ctx.host.clone();
    if has("Permission denied (") || has("Too many authentication failures") {
        return Some(ExecError::AuthFailed {
            host,
            message: message(),
        });
    }
    if has("Host key verification failed")
        || has("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || has("host key for") && has("has changed")
    {
        return Some(ExecError::HostKey {
            host,
            message: message(),
        });
    }
    if has("ssh: connect to host")
        || has("Could not resolve hostname")
        || has("kex_exchange_identification")
        || has("Connection closed by ")
        || has("Connection reset by ")
        || has("Connection timed out during banner exchange")
        || has("open failed: connect failed")
        || has("stdio forwarding failed")
    {
        return Some(ExecError::Unreachable {
            host,
            message: message(),
        });
    }
    if has("Bad configuration option")
        || has("bad configuration option")
        || has("Bad owner or permissions")
        || has("client_loop:")
        || has("closed by remote host")
        || has("Broken pipe")
        || has("mux_client_")
        || has("ControlPath")
        || has("ssh: ")
    {
        return Some(ExecError::Ssh {
            host,
            message: message(),
        });
    }
    if let Some(vmid) = ctx.vmid {
        // pct is Perl: its own errors `die`, which exits 255.
        if has(&format!("CT {vmid} ")) || has(&format!("/{vmid}.conf' does not exist")) {
            return Some(ExecError::Container {
                vmid,
                message: message(),
            });
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::target::PctTransport;

    fn executor(dir: &Path) -> Executor {
        let mut cfg = ExecutorConfig::new(dir);
        cfg.ssh_config = Some(PathBuf::from("/etc/nomos/ssh_config"));
        Executor::new(cfg).unwrap()
    }

    fn strings(v: Vec<OsString>) -> Vec<String> {
        v.into_iter().map(|s| s.into_string().unwrap()).collect()
    }

    #[test]
    fn ssh_command_line_puts_our_options_first() {
        let dir = tempfile::tempdir().unwrap();
        let exec = executor(dir.path());
        let target = Target::new(
            TargetSlug::parse("host:nas").unwrap(),
            Transport::Ssh(SshTransport {
                user: Some("admin".into()),
                port: Some(2222),
                identity_file: Some("~/.ssh/nas".into()),
                options: [
                    ("BatchMode".to_owned(), "no".to_owned()),
                    ("ProxyJump".to_owned(), "bastion".to_owned()),
                ]
                .into(),
                ..SshTransport::new("nas.lan")
            }),
        )
        .unwrap();
        let argv = strings(
            exec.command_line(&target, "uptime", &Limits::default())
                .unwrap(),
        );
        let control = format!("ControlPath=\"{}/ssh/%C\"", dir.path().display());
        let expected_prefix = [
            "ssh",
            "-F",
            "/etc/nomos/ssh_config",
            "-o",
            "BatchMode=yes",
            "-o",
            "ControlMaster=auto",
            "-o",
            &control,
            "-o",
            "ControlPersist=600s",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "BatchMode=no",
            "-o",
            "ProxyJump=bastion",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=15",
            "-o",
            "ServerAliveCountMax=3",
            "-T",
            "-p",
            "2222",
            "-l",
            "admin",
            "-i",
            "~/.ssh/nas",
            "--",
            "nas.lan",
        ];
        assert_eq!(argv[..expected_prefix.len()], expected_prefix);
        assert_eq!(argv.len(), expected_prefix.len() + 1);
        assert!(
            argv.last()
                .unwrap()
                .starts_with("exec /usr/bin/env -i PATH=")
        );
        assert!(argv.last().unwrap().ends_with(" nomos uptime"));
    }

    #[test]
    fn pct_goes_through_the_proxmox_host() {
        let dir = tempfile::tempdir().unwrap();
        let exec = executor(dir.path());
        let target = Target::new(
            TargetSlug::parse("lxc:dns").unwrap(),
            Transport::Pct(PctTransport {
                proxmox_host: SshTransport::new("pve"),
                vmid: 105,
            }),
        )
        .unwrap();
        let argv = strings(
            exec.command_line(&target, "cat /etc/hostname", &Limits::default())
                .unwrap(),
        );
        let n = argv.len();
        assert_eq!(argv[n - 3..n - 1], ["--", "pve"]);
        assert!(
            argv[n - 1].starts_with("exec /usr/sbin/pct exec 105 -- /usr/bin/env -i PATH="),
            "{}",
            argv[n - 1]
        );
        assert!(argv[n - 1].ends_with(" nomos 'cat /etc/hostname'"));
    }

    #[test]
    fn local_runs_bash_without_startup_files() {
        let dir = tempfile::tempdir().unwrap();
        let exec = executor(dir.path());
        let argv = strings(
            exec.command_line(&Target::local(), "ls -l", &Limits::default())
                .unwrap(),
        );
        assert_eq!(argv, ["/bin/bash", "--noprofile", "--norc", "-c", "ls -l"]);
    }

    /// A local wrapper goes in front of bash, with the exact command after it; an empty one
    /// leaves the command line as it was.
    #[test]
    fn a_local_wrapper_runs_bash_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ExecutorConfig::new(dir.path());
        config.local_wrapper = vec!["/usr/bin/env".into(), "NOMOS_WRAPPED=1".into()];
        let exec = Executor::new(config).unwrap();
        let argv = strings(
            exec.command_line(&Target::local(), "ls -l", &Limits::default())
                .unwrap(),
        );
        assert_eq!(
            argv,
            [
                "/usr/bin/env",
                "NOMOS_WRAPPED=1",
                "/bin/bash",
                "--noprofile",
                "--norc",
                "-c",
                "ls -l"
            ]
        );
    }

    #[test]
    fn control_directory_is_private_and_path_is_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("my 100% data");
        fs::create_dir_all(data.join("ssh")).unwrap();
        fs::set_permissions(data.join("ssh"), fs::Permissions::from_mode(0o755)).unwrap();
        let exec = Executor::new(ExecutorConfig::new(&data)).unwrap();
        let mode = fs::metadata(exec.control_dir())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            exec.inner
                .control_path_option
                .contains("my 100%% data/ssh/%C\"")
        );
    }

    #[test]
    fn bad_commands_and_configs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let exec = executor(dir.path());
        let local = Target::local();
        for bad in ["", "   \n", "echo a\0b"] {
            let e = exec
                .command_line(&local, bad, &Limits::default())
                .unwrap_err();
            assert_eq!(e.code(), "exec.invalid_command", "{bad:?}");
        }
        let huge = "x".repeat(MAX_COMMAND_BYTES + 1);
        assert!(
            exec.command_line(&local, &huge, &Limits::default())
                .is_err()
        );

        let long = dir.path().join("a".repeat(80));
        let e = Executor::new(ExecutorConfig::new(long)).unwrap_err();
        assert_eq!(e.code(), "exec.config");
        let quoted = dir.path().join("a\"b");
        assert_eq!(
            Executor::new(ExecutorConfig::new(quoted))
                .unwrap_err()
                .code(),
            "exec.config"
        );
    }

    #[test]
    fn ssh_failures_are_classified_from_the_clients_words() {
        let ctx = SshContext {
            host: "nas".into(),
            vmid: None,
        };
        let code = |stderr: &str| classify_ssh_failure(&ctx, stderr).map(|e| e.code());
        assert_eq!(
            code("ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n"),
            Some("exec.ssh_unreachable")
        );
        assert_eq!(
            code("ssh: Could not resolve hostname nope: Name or service not known\n"),
            Some("exec.ssh_unreachable")
        );
        assert_eq!(
            code("root@127.0.0.1: Permission denied (publickey).\n"),
            Some("exec.ssh_auth")
        );
        assert_eq!(
            code("Host key verification failed.\n"),
            Some("exec.ssh_host_key")
        );
        assert_eq!(
            code("Connection to nas closed by remote host.\n"),
            Some("exec.ssh")
        );
        // A remote command that exits 255 on its own is just an exit code.
        assert_eq!(code("my-tool: fatal: bad input\n"), None);
        assert_eq!(code(""), None);

        let pct = SshContext {
            host: "pve".into(),
            vmid: Some(101),
        };
        let e = classify_ssh_failure(&pct, "CT 101 not running\n").unwrap();
        assert_eq!(e.code(), "exec.pct");
    }
}
