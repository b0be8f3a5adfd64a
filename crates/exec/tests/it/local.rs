//! The local transport: real child processes of this test binary.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use nomos_exec::{
    ExecState, ExecStatus, Executor, ExecutorConfig, FIXED_PATH, Limits, OutputCap, Target,
};

use crate::support::{alive, assert_exit, eventually, local_executor, quick, read_pid};

#[tokio::test]
async fn round_trip_with_exit_code_and_stderr() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(
            &Target::local(),
            "echo out; echo err >&2; exit 3",
            &Limits::default(),
        )
        .await
        .unwrap();
    assert_exit(&out, 3);
    assert_eq!(out.status.state(), ExecState::Finished);
    assert_eq!(out.stdout.text, "out\n");
    assert_eq!(out.stderr.text, "err\n");
    assert_eq!(out.target.to_string(), "host:local");
    assert!(!out.stdout.binary && !out.stdout.is_truncated());
}

#[tokio::test]
async fn environment_is_fixed() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(&Target::local(), "env", &Limits::default())
        .await
        .unwrap();
    assert_exit(&out, 0);
    let vars: Vec<(&str, &str)> = out
        .stdout
        .text
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    let names: BTreeSet<&str> = vars.iter().map(|(k, _)| *k).collect();
    // bash adds PWD, SHLVL and `_`; nothing from this process (CARGO_*, RUST_*, …) leaks.
    let allowed: BTreeSet<&str> = [
        "PATH",
        "PAGER",
        "SYSTEMD_PAGER",
        "GIT_PAGER",
        "LC_ALL",
        "TERM",
        "HOME",
        "PWD",
        "SHLVL",
        "_",
    ]
    .into();
    assert!(names.is_subset(&allowed), "{names:?}");
    let get = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(get("PATH"), Some(FIXED_PATH));
    assert_eq!(get("PAGER"), Some("cat"));
    assert_eq!(get("SYSTEMD_PAGER"), Some(""));
    assert_eq!(get("GIT_PAGER"), Some("cat"));
    assert_eq!(get("LC_ALL"), Some("C.UTF-8"));
    assert_eq!(get("TERM"), Some("dumb"));
    let home = std::env::var("HOME").unwrap();
    assert_eq!(get("HOME"), Some(home.as_str()));
    // Commands start in HOME, like an ssh session.
    assert_eq!(get("PWD"), Some(home.as_str()));
}

/// Run by `bash_env_of_the_app_does_not_reach_commands` in a child process whose
/// environment has BASH_ENV and ENV set (tests cannot set variables in their own process).
#[tokio::test]
#[ignore = "run by bash_env_of_the_app_does_not_reach_commands"]
async fn bash_env_probe() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(
            &Target::local(),
            "echo \"[${BASH_ENV-unset}][${ENV-unset}][${NOMOS_LEAK-unset}]\"",
            &Limits::default(),
        )
        .await
        .unwrap();
    println!(
        "APP-BASH_ENV={}",
        std::env::var("BASH_ENV").unwrap_or_default()
    );
    println!("PROBE-STDOUT={}", out.stdout.text.trim_end());
}

#[test]
fn bash_env_of_the_app_does_not_reach_commands() {
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("evil_rc");
    std::fs::write(&rc, "echo SOURCED; export NOMOS_LEAK=1\n").unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "local::bash_env_probe",
            "--ignored",
            "--nocapture",
        ])
        .env("BASH_ENV", &rc)
        .env("ENV", &rc)
        .env("NOMOS_LEAK", "from-parent")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    // The app itself had BASH_ENV; the command saw none of it and nothing was sourced.
    assert!(
        stdout.contains(&format!("APP-BASH_ENV={}", rc.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("PROBE-STDOUT=[unset][unset][unset]"),
        "{stdout}"
    );
    assert!(!stdout.contains("SOURCED"), "{stdout}");
}

#[tokio::test]
async fn stdin_is_dev_null() {
    let (_dir, exec) = local_executor();
    // Would block for the whole timeout if stdin were an open pipe or a terminal.
    let out = exec
        .run(
            &Target::local(),
            "cat; read -r line; echo \"read=$?\"; test -t 0 || echo no-tty",
            &quick(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "read=1\nno-tty\n");
    assert!(out.duration < Duration::from_secs(10), "{:?}", out.duration);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let (dir, exec) = local_executor();
    let pidfile = dir.path().join("bg.pid");
    let leader = dir.path().join("leader.pid");
    let cmd = format!(
        "echo $$ > {}; sh -c 'sleep 100 & echo $! > {}; sleep 100'",
        leader.display(),
        pidfile.display()
    );
    let handle = exec
        .start(&Target::local(), &cmd, &quick(Duration::from_millis(800)))
        .unwrap();
    let bg = read_pid(&pidfile).await;
    let leader = read_pid(&leader).await;
    assert!(alive(bg));
    let out = handle.wait().await;
    assert_eq!(out.status, ExecStatus::TimedOut);
    assert_eq!(out.status.state().as_str(), "timed_out");
    assert!(out.duration >= Duration::from_millis(800));
    assert!(out.duration < Duration::from_secs(8), "{:?}", out.duration);
    assert!(
        eventually(Duration::from_secs(5), || !alive(bg) && !alive(leader)).await,
        "the grandchild survived the timeout"
    );
}

#[tokio::test]
async fn cancel_kills_the_group_and_reports_cancelled() {
    let (dir, exec) = local_executor();
    let pidfile = dir.path().join("bg.pid");
    let cmd = format!(
        "echo started; sleep 100 & echo $! > {}; wait",
        pidfile.display()
    );
    let handle = exec
        .start(&Target::local(), &cmd, &quick(Duration::from_secs(60)))
        .unwrap();
    let bg = read_pid(&pidfile).await;
    assert!(handle.wait_for(Duration::from_millis(100)).await.is_none());
    handle.cancel();
    let out = handle.wait().await;
    assert_eq!(out.status, ExecStatus::Cancelled);
    assert_eq!(out.status.state().as_str(), "cancelled");
    assert_eq!(out.stdout.text, "started\n", "partial output is kept");
    assert!(out.duration < Duration::from_secs(10));
    assert!(eventually(Duration::from_secs(5), || !alive(bg)).await);
}

#[tokio::test]
async fn parent_cancellation_reaches_the_execution() {
    let (_dir, exec) = local_executor();
    let session = tokio_util::sync::CancellationToken::new();
    let a = exec
        .start_with_cancel(
            &Target::local(),
            "sleep 100",
            &quick(Duration::from_secs(60)),
            &session,
        )
        .unwrap();
    let b = exec
        .start_with_cancel(
            &Target::local(),
            "sleep 100",
            &quick(Duration::from_secs(60)),
            &session,
        )
        .unwrap();
    // Cancelling one execution leaves its siblings and the session alone.
    a.cancel();
    assert_eq!(a.wait().await.status, ExecStatus::Cancelled);
    assert!(!session.is_cancelled());
    assert!(b.wait_for(Duration::from_millis(200)).await.is_none());
    session.cancel();
    assert_eq!(b.wait().await.status, ExecStatus::Cancelled);
}

#[tokio::test]
async fn a_process_ignoring_sigterm_is_killed_after_the_grace() {
    let (_dir, exec) = local_executor();
    let limits = Limits {
        timeout: Duration::from_millis(300),
        kill_grace: Duration::from_millis(300),
        ..Limits::default()
    };
    let out = exec
        .run(&Target::local(), "trap '' TERM; sleep 100", &limits)
        .await
        .unwrap();
    assert_eq!(out.status, ExecStatus::TimedOut);
    assert!(
        out.duration >= Duration::from_millis(600),
        "{:?}",
        out.duration
    );
    assert!(out.duration < Duration::from_secs(8), "{:?}", out.duration);
}

#[tokio::test]
async fn output_is_capped_with_a_marker_while_the_pipe_is_drained() {
    let (_dir, exec) = local_executor();
    let limits = Limits {
        stdout: OutputCap {
            head: 1000,
            tail: 100,
        },
        ..Limits::default()
    };
    let out = exec
        .run(
            &Target::local(),
            "head -c 3000000 /dev/zero | tr '\\0' a; echo END; head -c 200000 /dev/zero | tr '\\0' e >&2",
            &limits,
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.total_bytes, 3_000_004);
    assert_eq!(out.stdout.truncated_bytes, 3_000_004 - 1100);
    assert!(out.stdout.text.starts_with(&"a".repeat(1000)));
    assert!(
        out.stdout
            .text
            .contains("\n[… 2998904 bytes truncated …]\n")
    );
    assert!(out.stdout.text.ends_with("aaaaEND\n"));
    // Default cap on stderr: 64 KiB + 16 KiB.
    assert_eq!(out.stderr.total_bytes, 200_000);
    assert_eq!(out.stderr.truncated_bytes, 200_000 - 80 * 1024);
}

#[tokio::test]
async fn binary_and_invalid_utf8_output_is_flagged() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(
            &Target::local(),
            "printf 'ok\\000\\377\\376'; printf 'caf\\303\\251' >&2",
            &Limits::default(),
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert!(out.stdout.binary);
    assert_eq!(out.stdout.text, "ok\0\u{FFFD}\u{FFFD}");
    assert_eq!(out.stdout.total_bytes, 5);
    assert!(!out.stderr.binary);
    assert_eq!(out.stderr.text, "café");
}

#[tokio::test]
async fn wait_briefly_then_finish_in_the_background() {
    let (_dir, exec) = local_executor();
    let handle = exec
        .start(&Target::local(), "sleep 0.7; echo done", &Limits::default())
        .unwrap();
    assert!(handle.pid().is_some());
    // What `run` does: a short wait, then hand the rest to the continuation worker.
    assert!(handle.wait_for(Duration::from_millis(50)).await.is_none());
    assert!(!handle.is_finished());
    let worker = {
        let h = handle.clone();
        tokio::spawn(async move { h.wait().await })
    };
    drop(handle);
    let out = worker.await.unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "done\n");
    assert!(out.duration >= Duration::from_millis(700));
}

#[tokio::test]
async fn quick_commands_answer_within_the_short_wait() {
    let (_dir, exec) = local_executor();
    let handle = exec
        .start(&Target::local(), "true", &Limits::default())
        .unwrap();
    let out = handle.wait_for(Duration::from_secs(10)).await.unwrap();
    assert!(out.status.success());
    assert!(handle.is_finished());
    assert_eq!(handle.outcome(), Some(out));
}

#[tokio::test]
async fn a_signal_from_elsewhere_is_reported_as_such() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(&Target::local(), "kill -KILL $$", &Limits::default())
        .await
        .unwrap();
    assert_eq!(out.status, ExecStatus::Signaled { signal: 9 });
    assert_eq!(out.status.state(), ExecState::Finished);
}

#[tokio::test]
async fn background_process_holding_the_output_does_not_hang_the_execution() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(
            &Target::local(),
            "sleep 100 & echo $!",
            &quick(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    let bg: u32 = out.stdout.text.trim().parse().unwrap();
    // It outlived the drain grace in the command's group, so it was terminated.
    assert!(eventually(Duration::from_secs(5), || !alive(bg)).await);
}

#[tokio::test]
async fn leftovers_in_the_group_are_stopped_after_the_drain_grace() {
    let (_dir, exec) = local_executor();
    let started = tokio::time::Instant::now();
    let out = exec
        .run(
            &Target::local(),
            "sleep 30 >/dev/null 2>&1 & echo $!; (sleep 0.1; echo late) &",
            &Limits::default(),
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    let mut lines = out.stdout.text.lines();
    let bg: u32 = lines.next().unwrap().parse().unwrap();
    // A leftover that finishes within the grace is waited for, and its output kept.
    assert_eq!(lines.next(), Some("late"));
    assert!(eventually(Duration::from_secs(5), || !alive(bg)).await);
    // The command's own duration ends when it exits, not after the drain.
    assert!(out.duration < started.elapsed());
}

#[tokio::test]
async fn a_process_detached_with_setsid_is_left_alone() {
    let (_dir, exec) = local_executor();
    let out = exec
        .run(
            &Target::local(),
            "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!",
            &Limits::default(),
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    let bg: u32 = out.stdout.text.trim().parse().unwrap();
    assert!(
        alive(bg),
        "setsid left the group, so the execution does not own it"
    );
    let _ = Command::new("kill").arg(bg.to_string()).status();
}

#[tokio::test]
async fn many_executions_at_once() {
    let (_dir, exec) = local_executor();
    let handles: Vec<_> = (0..20)
        .map(|i| {
            exec.start(&Target::local(), &format!("echo {i}"), &Limits::default())
                .unwrap()
        })
        .collect();
    for (i, h) in handles.iter().enumerate() {
        let out = h.wait().await;
        assert_exit(&out, 0);
        assert_eq!(out.stdout.text, format!("{i}\n"));
    }
}

#[tokio::test]
async fn invalid_input_is_refused_before_anything_runs() {
    let (_dir, exec) = local_executor();
    for bad in [
        "",
        "echo \0",
        &"x".repeat(nomos_exec::MAX_COMMAND_BYTES + 1),
    ] {
        let e = exec
            .start(&Target::local(), bad, &Limits::default())
            .unwrap_err();
        assert_eq!(e.code(), "exec.invalid_command");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ExecutorConfig::new(dir.path());
    cfg.bash_path = "/nonexistent/bash".into();
    let e = Executor::new(cfg)
        .unwrap()
        .start(&Target::local(), "true", &Limits::default())
        .unwrap_err();
    assert_eq!(e.code(), "exec.spawn");
    assert!(e.to_string().contains("/nonexistent/bash"), "{e}");
}
