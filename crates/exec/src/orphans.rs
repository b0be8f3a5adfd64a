//! Ending what a dead Nomos process left running (I24).
//!
//! Every execution runs in its own process group whose leader is the spawned child: `bash`
//! for this workstation, the `ssh` client (or `pct`'s ssh) for a remote target. Its pgid and
//! the leader's start time (clock ticks since boot, `/proc/<pid>/stat` field 22) are recorded
//! when it starts. When the process that ran it died, the next start-up ends the group, but
//! only after proving the group is still that command's: pids and pgids are reused, and a
//! group of someone else's must never be signalled. Ending the local `ssh` client closes the
//! channel, whose EOF makes the remote wrapper kill the remote command (see `shell.rs`).

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// A started execution's process group, as recorded on its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup {
    /// The group id (the leader's pid).
    pub pgid: i32,
    /// The leader's start time in clock ticks since boot; `None` where it cannot be read
    /// (no `/proc`), and then the group is never signalled later.
    pub start_ticks: Option<u64>,
    /// When it was started (Unix ms, the row's `started_at_ms`). Start ticks count from boot,
    /// so a command started before this boot is gone whatever the ticks say.
    pub started_at_unix_ms: Option<i64>,
}

impl ProcessGroup {
    /// The group led by `pid`, with the leader's start time read now.
    pub fn of_leader(pid: u32) -> Option<ProcessGroup> {
        let pgid = i32::try_from(pid).ok()?;
        Some(ProcessGroup {
            pgid,
            start_ticks: proc_stat(pgid).map(|s| s.start_ticks),
            started_at_unix_ms: None,
        })
    }
}

/// What [`end_orphaned_group`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrphanOutcome {
    /// The group was still running and has been killed.
    Killed,
    /// No process of the group is left.
    AlreadyGone,
    /// Processes with that pgid exist but cannot be proved to be the command's (the id was
    /// reused, or the start time is unknown): left alone.
    NotOurs(String),
}

/// Ends the process group an execution of a dead process left running: SIGTERM, then
/// SIGKILL after `grace`, waiting until no member is left (at most `grace` more).
pub fn end_orphaned_group(group: ProcessGroup, grace: Duration) -> OrphanOutcome {
    let own = i32::try_from(std::process::id()).unwrap_or(0);
    if group.pgid <= 1 || group.pgid == own {
        return OrphanOutcome::NotOurs(format!("process group {} is not a command's", group.pgid));
    }
    let Some(pid) = Pid::from_raw(group.pgid) else {
        return OrphanOutcome::AlreadyGone;
    };
    if !group_exists(pid) {
        return OrphanOutcome::AlreadyGone;
    }
    if let (Some(at), Some(boot)) = (group.started_at_unix_ms, boot_time_unix_ms())
        && at < boot
    {
        // Started before this boot: the ids now name other processes.
        return OrphanOutcome::AlreadyGone;
    }
    let Some(recorded) = group.start_ticks else {
        return OrphanOutcome::NotOurs("its start time was not recorded".into());
    };
    if let Err(why) = belongs(group.pgid, recorded) {
        return OrphanOutcome::NotOurs(why);
    }
    let _ = kill_process_group(pid, Signal::TERM);
    if wait_gone(pid, grace) {
        return OrphanOutcome::Killed;
    }
    let _ = kill_process_group(pid, Signal::KILL);
    wait_gone(pid, grace);
    OrphanOutcome::Killed
}

fn group_exists(pid: Pid) -> bool {
    // Only "no such process" means gone; EPERM means someone is there.
    if matches!(test_kill_process_group(pid), Err(rustix::io::Errno::SRCH)) {
        return false;
    }
    // Zombies answer signal 0 until their parent reaps them, which a dead Nomos never does
    // for the children it spawned: a group of zombies has ended.
    live_members(pid.as_raw_pid()) != Some(0)
}

/// Processes of group `pgid` that are not zombies; `None` when `/proc` cannot be read.
fn live_members(pgid: i32) -> Option<usize> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
            .filter(|pid| proc_stat(*pid).is_some_and(|s| s.pgrp == pgid))
            .count(),
    )
}

fn wait_gone(pid: Pid, max: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !group_exists(pid) {
            return true;
        }
        if start.elapsed() >= max {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The group is the command's when its leader is alive with the recorded start time, or,
/// once the leader has exited, when every member started no earlier than it (a group id is
/// not reused while any member is left).
fn belongs(pgid: i32, recorded: u64) -> Result<(), String> {
    if let Some(leader) = proc_stat(pgid) {
        if leader.start_ticks != recorded || leader.pgrp != pgid {
            return Err(format!(
                "process {pgid} is another program now (started at tick {}, recorded {recorded})",
                leader.start_ticks
            ));
        }
        return Ok(());
    }
    let entries = std::fs::read_dir("/proc").map_err(|e| format!("/proc unreadable: {e}"))?;
    let mut members = 0usize;
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(s) = proc_stat(pid)
            && s.pgrp == pgid
        {
            if s.start_ticks < recorded {
                return Err(format!(
                    "process {pid} of group {pgid} is older than the command"
                ));
            }
            members += 1;
        }
    }
    if members == 0 {
        return Err(format!("no member of group {pgid} could be inspected"));
    }
    Ok(())
}

/// This boot's time (`btime` of `/proc/stat`), Unix ms, with a second of slack for its
/// rounding.
fn boot_time_unix_ms() -> Option<i64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let secs: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(secs.saturating_sub(1).saturating_mul(1000))
}

struct Stat {
    pgrp: i32,
    start_ticks: u64,
}

/// Fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parens,
/// hence the last `)`): state is field 3, pgrp field 5, starttime field 22.
fn proc_stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = *fields.first()?;
    if state == "Z" || state == "X" {
        return None;
    }
    Some(Stat {
        pgrp: fields.get(2)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn stat_parses_this_process_and_rejects_a_missing_one() {
        let me = i32::try_from(std::process::id()).unwrap();
        let s = proc_stat(me).unwrap();
        assert!(s.start_ticks > 0);
        assert!(proc_stat(i32::MAX).is_none());
    }

    #[test]
    fn this_process_and_init_are_never_ends_of_an_orphan() {
        let me = std::process::id();
        for pgid in [0, 1, i32::try_from(me).unwrap(), -5] {
            let out = end_orphaned_group(
                ProcessGroup {
                    pgid,
                    start_ticks: Some(1),
                    started_at_unix_ms: None,
                },
                Duration::from_millis(10),
            );
            assert!(matches!(out, OrphanOutcome::NotOurs(_)), "{pgid}: {out:?}");
        }
    }

    /// A group recorded before this boot is never signalled, even when a process now has the
    /// same pid and start ticks; the same group recorded in this boot is ended.
    #[test]
    fn a_group_started_before_this_boot_is_gone_and_one_of_this_boot_is_killed() {
        use std::os::unix::process::CommandExt as _;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut group = ProcessGroup::of_leader(child.id()).unwrap();
        assert!(group.start_ticks.is_some());
        let now_ms = i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap();
        for before_boot in [0, 1_000_000, boot_time_unix_ms().unwrap() - 5_000] {
            group.started_at_unix_ms = Some(before_boot);
            assert_eq!(
                end_orphaned_group(group, Duration::from_millis(200)),
                OrphanOutcome::AlreadyGone
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "a pre-boot record killed it"
            );
        }
        group.started_at_unix_ms = Some(now_ms);
        assert_eq!(
            end_orphaned_group(group, Duration::from_secs(2)),
            OrphanOutcome::Killed
        );
        assert!(child.wait().unwrap().code().is_none(), "ended by a signal");
    }
}
