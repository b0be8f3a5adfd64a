//! Gaps an outside attacker (round atk4) found where the fix belongs in the specs: tools that
//! print, send or run what an option or operand names, and setters hidden in read tools.
//! Commands are only classified here, never run.

use crate::families::{assert_all_ask, assert_all_read_only};

fn each(forms: &[&str], paths: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for f in forms {
        for p in paths {
            out.push(f.replace("{P}", p));
        }
    }
    out
}

const SECRETS: &[&str] = &[
    "/etc/shadow",
    "/root/.ssh/id_ed25519",
    "/etc/ssl/private/site.key",
];

#[test]
fn tools_that_print_or_send_a_file_they_are_given_read_it() {
    let forms = [
        "haproxy -c -f {P}",
        "haproxy -c -- {P}",
        "modprobe -n -C {P} loop",
        "modprobe --dry-run --config={P} loop",
        "depmod -n -C {P}",
        "shellcheck {P}",
        "yamllint {P}",
        "hadolint {P}",
        "rsync --password-file={P} /tmp/x rsync://backup/x",
        "ipmitool -H bmc -U admin -f {P} chassis status",
        "helm template web ./chart --set-file cfg={P}",
        "helm template web ./chart -f {P}",
        "helm lint ./chart --values {P}",
        "git blame --contents={P} README.md",
    ];
    assert_all_ask(&each(&forms, SECRETS));
}

#[test]
fn options_of_read_tools_that_change_state_or_run_programs_ask() {
    let cmds: Vec<String> = [
        "ethtool -t eth0",
        "ethtool --test eth0 offline",
        "ethtool -w eth0 data /tmp/dump",
        "smartctl -l scterc,70,70 /dev/sda",
        "smartctl -l scttempint,10 /dev/sda",
        "smartctl --log=scterc,70,70 /dev/sda",
        "smartctl -x -l SCTERC,0,0 /dev/sdb",
        "smartctl -l \"$L\" /dev/sda",
        "mokutil --export",
        "mokutil --trust-mok",
        "mokutil --ignore-db",
        "clamdscan --reload",
        "ssh-audit --dheat 10 host",
        "ssh-audit --conn-rate-test 4 host",
        "mysqldump -F appdb",
        "mysqldump --flush-logs appdb",
        "mysqldump --master-data appdb",
        "mysqldump --lock-all-tables appdb",
        "chkrootkit -p /tmp/bin",
        "chkrootkit -r /mnt",
        "git ls-remote --upload-pack=/tmp/x origin",
        "git ls-remote --upload-pack /tmp/x origin",
        "git ls-remote -u /tmp/x origin",
        "podman generate kube web",
        "podman kube generate web",
        "crictl info",
        "nomad job inspect web",
        "terragrunt render-json",
        "terragrunt validate",
        "ansible-inventory --list",
        "ansible-playbook site.yml --list-hosts",
        "ansible-playbook site.yml --syntax-check",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_all_ask(&cmds);
}

#[test]
fn their_everyday_reads_stay_read_only() {
    assert_all_read_only(&[
        "ethtool eth0",
        "ethtool -i eth0",
        "smartctl -a /dev/sda",
        "smartctl -l error /dev/sda",
        "mokutil --sb-state",
        "git ls-remote origin",
        "git blame README.md",
        "helm template web ./chart",
    ]);
}
