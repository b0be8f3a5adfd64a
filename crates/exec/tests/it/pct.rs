//! The pct transport: ssh to the "Proxmox host" (the test sshd) and a stand-in `pct` that
//! checks its arguments and runs the rest, as `pct exec <vmid> -- cmd…` does.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use nomos_exec::testing::TestSshd;
use nomos_exec::{
    ExecStatus, Executor, FIXED_PATH, Limits, PctTransport, Target, TargetSlug, Transport,
};

use crate::support::{alive, assert_exit, eventually, quick, read_pid};

const STAND_IN_PCT: &str = r#"#!/bin/sh
# Stand-in for Proxmox's pct: only `pct exec <vmid> -- <argv…>` for container 101.
log="$(dirname "$0")/pct.argv"
if [ "$1" != exec ]; then echo "pct: unknown command '$1'" >&2; exit 2; fi
case "$2" in
  101) ;;
  *) echo "Configuration file 'nodes/pve/lxc/$2.conf' does not exist" >&2; exit 255 ;;
esac
if [ "$3" != "--" ]; then echo "pct: expected -- after the vmid" >&2; exit 2; fi
shift 3
printf '%s\n' "$#" "$1" "$2" > "$log"
exec "$@"
"#;

struct Fixture {
    sshd: TestSshd,
    exec: Executor,
}

fn fixture() -> Fixture {
    let sshd = TestSshd::start().unwrap();
    let pct = sshd.bin_dir().join("pct");
    std::fs::write(&pct, STAND_IN_PCT).unwrap();
    std::fs::set_permissions(&pct, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cfg = sshd.executor_config();
    cfg.pct_path = pct.to_str().unwrap().to_owned();
    let exec = Executor::new(cfg).unwrap();
    Fixture { sshd, exec }
}

impl Fixture {
    fn container(&self, vmid: u32) -> Target {
        Target::new(
            TargetSlug::parse(&format!("lxc:ct{vmid}")).unwrap(),
            Transport::Pct(PctTransport {
                proxmox_host: self.sshd.transport(),
                vmid,
            }),
        )
        .unwrap()
    }
}

#[tokio::test]
async fn runs_through_pct_exec_with_the_fixed_environment() {
    let f = fixture();
    let out = f
        .exec
        .run(
            &f.container(101),
            "echo \"in $HOME\"; echo \"$PATH\"; echo oops >&2; exit 5",
            &Limits::default(),
        )
        .await
        .unwrap();
    assert_exit(&out, 5);
    assert_eq!(out.stdout.text, format!("in /root\n{FIXED_PATH}\n"));
    assert_eq!(out.stderr.text, "oops\n");
    // pct received `exec 101 --` and then env -i … as separate arguments.
    let argv = std::fs::read_to_string(f.sshd.bin_dir().join("pct.argv")).unwrap();
    let lines: Vec<&str> = argv.lines().collect();
    assert_eq!(lines[1], "/usr/bin/env");
    assert_eq!(lines[2], "-i");
    f.exec.close_all_masters().await;
}

#[tokio::test]
async fn tricky_commands_survive_pct() {
    let f = fixture();
    let commands = [
        r#"printf '%s\n' "it's" 'a"b' 'back\slash' '$HOME' '`id`'"#,
        "echo \"multi\nline\" 'ünïcødé ✓'",
        r#"echo '\'"'"'\'"#,
        "cat <<'EOF'\n$HOME `x` \\ 'q'\nEOF",
    ];
    for cmd in commands {
        let local = f
            .exec
            .run(&Target::local(), cmd, &Limits::default())
            .await
            .unwrap();
        let ct = f
            .exec
            .run(&f.container(101), cmd, &Limits::default())
            .await
            .unwrap();
        assert_eq!(ct.status, local.status, "{cmd}");
        assert_eq!(ct.stdout.text, local.stdout.text, "{cmd}");
        assert_eq!(ct.stderr.text, local.stderr.text, "{cmd}");
    }
    f.exec.close_all_masters().await;
}

#[tokio::test]
async fn timeout_kills_the_command_inside_the_container() {
    let f = fixture();
    let pid_file = f.sshd.dir().join("ct.pid");
    let cmd = format!("sleep 3011 & echo $! > {}; wait", pid_file.display());
    let out = f
        .exec
        .run(&f.container(101), &cmd, &quick(Duration::from_secs(2)))
        .await
        .unwrap();
    assert_eq!(out.status, ExecStatus::TimedOut);
    let pid = read_pid(&pid_file).await;
    assert!(eventually(Duration::from_secs(5), || !alive(pid)).await);
    assert!(f.exec.master_running(&f.sshd.transport()).await);
    f.exec.close_all_masters().await;
}

#[tokio::test]
async fn a_missing_container_is_a_typed_error() {
    let f = fixture();
    let out = f
        .exec
        .run(&f.container(999), "true", &Limits::default())
        .await
        .unwrap();
    let ExecStatus::Failed { error } = &out.status else {
        panic!("{:?}", out.status)
    };
    assert_eq!(error.code(), "exec.pct", "{error}");
    assert!(error.to_string().contains("999.conf"), "{error}");
    f.exec.close_all_masters().await;
}
