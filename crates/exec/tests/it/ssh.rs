//! The ssh transport against a real `sshd` on 127.0.0.1.

use std::collections::BTreeSet;
use std::time::Duration;

use nomos_exec::testing::{TestSshd, free_port};
use nomos_exec::{
    ExecError, ExecStatus, Executor, FIXED_PATH, Limits, OutputCap, SshTransport, Target,
    TargetSlug, Transport,
};

use crate::support::{alive, assert_exit, eventually, quick, read_pid};

fn ssh_target(name: &str, ssh: SshTransport) -> Target {
    Target::new(
        TargetSlug::parse(&format!("host:{name}")).unwrap(),
        Transport::Ssh(ssh),
    )
    .unwrap()
}

fn failed(status: &ExecStatus) -> &ExecError {
    match status {
        ExecStatus::Failed { error } => error,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn round_trip_exit_codes_and_stderr() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("test").unwrap();
    let out = exec
        .run(
            &target,
            "echo out; echo err >&2; exit 7",
            &Limits::default(),
        )
        .await
        .unwrap();
    assert_exit(&out, 7);
    assert_eq!(out.stdout.text, "out\n");
    assert_eq!(out.stderr.text, "err\n", "no ssh or job-control noise");

    let out = exec.run(&target, "true", &Limits::default()).await.unwrap();
    assert_exit(&out, 0);
    // A remote command that exits 255 by itself is an exit code, not an ssh failure.
    let out = exec
        .run(&target, "echo bye >&2; exit 255", &Limits::default())
        .await
        .unwrap();
    assert_exit(&out, 255);
    // Killed by a signal remotely: the shell convention, 128 + signal.
    let out = exec
        .run(&target, "kill -KILL $$", &Limits::default())
        .await
        .unwrap();
    assert_exit(&out, 137);
    assert_eq!(out.stderr.text, "");
    exec.close_all_masters().await;
}

#[tokio::test]
async fn the_remote_side_sees_only_the_fixed_environment() {
    // The client sends BASH_ENV and other variables and the server accepts them, so the
    // remote login shell has them; the command must not.
    let sshd = TestSshd::start_with(&["AcceptEnv BASH_ENV ENV NOMOS_*"]).unwrap();
    let rc = sshd.dir().join("evil_rc");
    std::fs::write(&rc, "export NOMOS_LEAK=1\n").unwrap();
    let config = sshd.dir().join("ssh_config_setenv");
    let mut text = std::fs::read_to_string(sshd.client_config()).unwrap();
    text.push_str(&format!(
        "  SetEnv BASH_ENV={rc} ENV={rc} NOMOS_CLIENT=1\n",
        rc = rc.display()
    ));
    std::fs::write(&config, text).unwrap();
    let mut cfg = sshd.executor_config();
    cfg.ssh_config = Some(config);
    let exec = Executor::new(cfg).unwrap();
    let target = sshd.target("test").unwrap();

    let out = exec.run(&target, "env", &Limits::default()).await.unwrap();
    assert_exit(&out, 0);
    let vars: Vec<(&str, &str)> = out
        .stdout
        .text
        .lines()
        .filter_map(|l| l.split_once('='))
        .collect();
    let names: BTreeSet<&str> = vars.iter().map(|(k, _)| *k).collect();
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
    assert_eq!(get("TERM"), Some("dumb"));
    assert_eq!(get("PAGER"), Some("cat"));
    assert_eq!(get("LC_ALL"), Some("C.UTF-8"));
    let home = sshd.session_home();
    assert_eq!(get("HOME"), Some(home.to_str().unwrap()));

    // The login shell itself did receive them: the executor is what strips them. (Debian's
    // bash, started by sshd, reads ~/.bashrc instead of BASH_ENV, so NOMOS_LEAK is only set
    // where a login shell honours BASH_ENV; either way the command must not see it.)
    let probe = std::process::Command::new("ssh")
        .arg("-F")
        .arg(sshd.dir().join("ssh_config_setenv"))
        .args([
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
            "-T",
            "nomos-test",
        ])
        .arg("echo \"[$BASH_ENV][$NOMOS_CLIENT]\"")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&probe.stdout),
        format!("[{}][1]\n", rc.display())
    );
    exec.close_all_masters().await;
}

/// Canonical commands with every kind of shell-significant character produce exactly the
/// same result over ssh as locally: the transport adds and loses nothing.
#[tokio::test]
async fn tricky_commands_survive_the_transport() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let remote = sshd.target("test").unwrap();
    let commands = [
        r#"printf '%s\n' "it's" 'a"b' 'back\slash' '$HOME' "\$(id -u)" '`id`'"#,
        "echo \"multi\nline\"; echo $'tab\\there\\001'",
        "printf %s 'ünïcødé ✓ 日本 🚀'",
        r#"x='a  b'; printf '[%s]' $x "$x"; echo"#,
        r#"echo '\'"'"'\'"#,
        "cat <<'EOF'\n$HOME `x` \\ 'q' \"d\"\nEOF",
        "cat <<EOF\n$((6*7)) \\$ \\\\\nEOF",
        r#"printf '%s' ';|&<>(){}*?[]~!#%^'"#,
        "echo a\\\nb",
        r#"set -- 'one arg' two; echo $#; printf '<%s>' "$@""#,
        "echo ${0+set} $- ; shopt -q login_shell && echo login || echo not-login",
        r#"a=$'\x27'; echo "${a}quoted${a}""#,
        "printf '%s' \"$(printf 'x\\ny')\" | od -c | head -1",
        "echo 'end with newline'\n",
        "false || { echo recovered >&2; exit 4; }",
    ];
    for cmd in commands {
        let local = exec
            .run(&Target::local(), cmd, &Limits::default())
            .await
            .unwrap();
        let over_ssh = exec.run(&remote, cmd, &Limits::default()).await.unwrap();
        assert_eq!(over_ssh.status, local.status, "{cmd}");
        assert_eq!(over_ssh.stdout.text, local.stdout.text, "{cmd}");
        assert_eq!(over_ssh.stderr.text, local.stderr.text, "{cmd}");
    }
    exec.close_all_masters().await;
}

#[tokio::test]
async fn output_cap_and_binary_output_over_ssh() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("test").unwrap();
    let limits = Limits {
        stdout: OutputCap {
            head: 2000,
            tail: 10,
        },
        ..Limits::default()
    };
    let out = exec
        .run(
            &target,
            "head -c 1000000 /dev/urandom | base64 -w 100; echo THE-END",
            &limits,
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert!(out.stdout.total_bytes > 1_000_000);
    assert!(out.stdout.is_truncated());
    assert!(out.stdout.text.contains(" bytes truncated …]\n"));
    assert!(
        out.stdout.text.ends_with("\nTHE-END\n"),
        "{}",
        &out.stdout.text[2000..]
    );

    let out = exec
        .run(&target, "head -c 4096 /dev/urandom", &Limits::default())
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.total_bytes, 4096);
    assert!(out.stdout.binary);
    exec.close_all_masters().await;
}

#[tokio::test]
async fn timeout_kills_the_remote_process_group_but_not_the_master() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("test").unwrap();
    let bg_file = sshd.dir().join("bg.pid");
    let leader_file = sshd.dir().join("leader.pid");
    // The remote side is this machine, so the pids can be checked here.
    let cmd = format!(
        "echo $$ > {}; sleep 3001 & echo $! > {}; exec sleep 3002",
        leader_file.display(),
        bg_file.display()
    );
    let out = exec
        .run(&target, &cmd, &quick(Duration::from_secs(2)))
        .await
        .unwrap();
    assert_eq!(out.status, ExecStatus::TimedOut);
    let (bg, leader) = (read_pid(&bg_file).await, read_pid(&leader_file).await);
    assert!(
        eventually(Duration::from_secs(5), || !alive(bg) && !alive(leader)).await,
        "remote processes survived the timeout: bg {bg} alive={}, leader {leader} alive={}",
        alive(bg),
        alive(leader)
    );
    assert!(exec.master_running(&sshd.transport()).await);
    let out = exec
        .run(&target, "echo still", &Limits::default())
        .await
        .unwrap();
    assert_eq!(out.stdout.text, "still\n");
    exec.close_all_masters().await;
}

#[tokio::test]
async fn cancel_kills_the_remote_command_and_keeps_the_master() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("test").unwrap();
    // A master first, so the cancelled command is a multiplexed session.
    assert_exit(
        &exec.run(&target, "true", &Limits::default()).await.unwrap(),
        0,
    );
    let pid_file = sshd.dir().join("cancel.pid");
    let cmd = format!(
        "echo begun; sh -c 'echo $$ > {}; trap \"\" TERM; sleep 3003'",
        pid_file.display()
    );
    let handle = exec
        .start(&target, &cmd, &quick(Duration::from_secs(60)))
        .unwrap();
    let pid = read_pid(&pid_file).await;
    assert!(handle.wait_for(Duration::from_millis(100)).await.is_none());
    handle.cancel();
    let out = handle.wait().await;
    assert_eq!(out.status, ExecStatus::Cancelled);
    assert_eq!(out.stdout.text, "begun\n");
    // It ignored SIGTERM; the remote watcher's SIGKILL after the grace got it.
    assert!(
        eventually(Duration::from_secs(8), || !alive(pid)).await,
        "remote process {pid} survived the cancel"
    );
    assert!(exec.master_running(&sshd.transport()).await);
    exec.close_all_masters().await;
}

#[tokio::test]
async fn a_remote_background_process_does_not_hold_the_session_open() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("test").unwrap();
    // Plain ssh would wait for the background sleep, which keeps the channel's stdout.
    let out = exec
        .run(
            &target,
            "sleep 3021 & echo $!",
            &quick(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    assert_exit(&out, 0);
    let bg: u32 = out.stdout.text.trim().parse().unwrap();
    assert!(out.duration < Duration::from_secs(10), "{:?}", out.duration);
    assert!(eventually(Duration::from_secs(5), || !alive(bg)).await);
    exec.close_all_masters().await;
}

#[tokio::test]
async fn the_second_command_reuses_the_connection() {
    let sshd = TestSshd::start().unwrap();
    // A data directory with a space and a percent sign: the ControlPath must be quoted
    // and escaped for ssh.
    let data = sshd.dir().join("my data 100%");
    let mut cfg = sshd.executor_config();
    cfg.data_dir = data;
    let exec = Executor::new(cfg).unwrap();
    let target = sshd.target("test").unwrap();
    assert!(!exec.master_running(&sshd.transport()).await);

    let first = exec
        .run(&target, "echo 1", &Limits::default())
        .await
        .unwrap();
    assert_exit(&first, 0);
    assert!(exec.master_running(&sshd.transport()).await);
    let second = exec
        .run(&target, "echo 2", &Limits::default())
        .await
        .unwrap();
    assert_exit(&second, 0);
    let third = exec
        .run(&target, "echo 3", &Limits::default())
        .await
        .unwrap();
    assert_exit(&third, 0);
    println!(
        "first {:?}, second {:?}, third {:?}",
        first.duration, second.duration, third.duration
    );
    // Three commands, one authentication: the server saw one connection.
    let log = sshd.log();
    assert_eq!(log.matches("Accepted publickey").count(), 1, "{log}");

    assert!(exec.close_master(&sshd.transport()).await);
    assert!(!exec.master_running(&sshd.transport()).await);
    assert_exit(
        &exec.run(&target, "true", &Limits::default()).await.unwrap(),
        0,
    );
    assert_eq!(sshd.log().matches("Accepted publickey").count(), 2);
    assert_eq!(exec.close_all_masters().await, 1);
}

#[tokio::test]
async fn concurrent_first_commands_all_succeed() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = sshd.target("test").unwrap();
    // Several race to become the master; the losers fall back to their own connection.
    let handles: Vec<_> = (0..5)
        .map(|i| {
            exec.start(&target, &format!("echo {i}"), &Limits::default())
                .unwrap()
        })
        .collect();
    for (i, h) in handles.iter().enumerate() {
        let out = h.wait().await;
        assert_exit(&out, 0);
        assert_eq!(out.stdout.text, format!("{i}\n"));
    }
    exec.close_all_masters().await;
}

#[tokio::test]
async fn unreachable_host_is_a_clear_typed_error() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let port = free_port().unwrap();
    let target = ssh_target(
        "gone",
        SshTransport {
            port: Some(port),
            ..SshTransport::new("127.0.0.1")
        },
    );
    let out = exec.run(&target, "true", &Limits::default()).await.unwrap();
    let error = failed(&out.status);
    assert_eq!(error.code(), "exec.ssh_unreachable", "{error}");
    assert!(error.is_retryable());
    assert!(error.to_string().contains("Connection refused"), "{error}");
    assert_eq!(out.status.state().as_str(), "failed");

    let target = ssh_target("nowhere", SshTransport::new("nomos-no-such-host.invalid"));
    let out = exec
        .run(&target, "true", &quick(Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(
        failed(&out.status).code(),
        "exec.ssh_unreachable",
        "{:?}",
        out.status
    );
}

#[tokio::test]
async fn refused_key_is_an_auth_error() {
    let sshd = TestSshd::start().unwrap();
    let exec = sshd.executor().unwrap();
    let target = ssh_target(
        "wrong-user",
        SshTransport {
            user: Some("nomos-no-such-user".into()),
            ..sshd.transport()
        },
    );
    let out = exec.run(&target, "true", &Limits::default()).await.unwrap();
    let error = failed(&out.status);
    assert_eq!(error.code(), "exec.ssh_auth", "{error}");
    assert!(!error.is_retryable());
}

#[tokio::test]
async fn unknown_host_key_is_a_host_key_error() {
    let sshd = TestSshd::start().unwrap();
    let known_hosts = sshd.dir().join("empty_known_hosts");
    std::fs::write(&known_hosts, "").unwrap();
    let config = sshd.dir().join("strict_config");
    std::fs::write(
        &config,
        format!(
            "Host strict\n  HostName 127.0.0.1\n  Port {}\n  IdentityFile {}\n  StrictHostKeyChecking yes\n  UserKnownHostsFile {}\n",
            sshd.port(),
            sshd.user_key().display(),
            known_hosts.display()
        ),
    )
    .unwrap();
    let mut cfg = sshd.executor_config();
    cfg.ssh_config = Some(config);
    let exec = Executor::new(cfg).unwrap();
    let out = exec
        .run(
            &ssh_target("strict", SshTransport::new("strict")),
            "true",
            &Limits::default(),
        )
        .await
        .unwrap();
    let error = failed(&out.status);
    assert_eq!(error.code(), "exec.ssh_host_key", "{error}");
}
