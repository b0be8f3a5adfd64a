//! Shared helpers.

use std::path::Path;
use std::time::{Duration, Instant};

use nomos_exec::{ExecOutcome, ExecStatus, Executor, ExecutorConfig, Limits};

/// An executor with a private data directory.
pub fn local_executor() -> (tempfile::TempDir, Executor) {
    let dir = tempfile::tempdir().unwrap();
    let exec = Executor::new(ExecutorConfig::new(dir.path())).unwrap();
    (dir, exec)
}

/// Whether `pid` is a live process (a zombie awaiting its reaper counts as dead).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Polls `cond` every 50 ms until it holds or `max` passes.
pub async fn eventually(max: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + max;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads a pid a test command wrote to `path`, waiting for it to appear.
pub async fn read_pid(path: &Path) -> u32 {
    let mut pid = None;
    assert!(
        eventually(Duration::from_secs(10), || {
            pid = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse().ok());
            pid.is_some()
        })
        .await,
        "no pid in {}",
        path.display()
    );
    pid.unwrap()
}

/// Limits with a short timeout and kill grace.
pub fn quick(timeout: Duration) -> Limits {
    Limits {
        timeout,
        kill_grace: Duration::from_millis(500),
        ..Limits::default()
    }
}

/// Asserts the command exited with `code`, showing the outcome otherwise.
pub fn assert_exit(outcome: &ExecOutcome, code: i32) {
    assert_eq!(
        outcome.status,
        ExecStatus::Exited { code },
        "stdout: {}\nstderr: {}",
        outcome.stdout.text,
        outcome.stderr.text
    );
}
