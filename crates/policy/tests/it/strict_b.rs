//! Strict option parsing for the Proxmox, storage and package tools (issue 13, A3). These
//! specs used to ignore options they did not list, so an option's value could be read as
//! the subcommand (`kubectl --as get delete pod web`) and an unlisted option could write a
//! file or run a program. Now: an option a subcommand does not declare asks wherever it
//! stands and however it is spelled; the real dangerous options ask; a Proxmox boolean whose
//! next word turns a dry run off is no dry run; everyday read-only uses stay read-only.

use nomos_policy::{Class, classify};

use crate::families::{assert_all_ask, assert_all_read_only};

/// Every spelling of option `opt` (with its dashes) with value `val` around `head … tail`:
/// before and after the operands, attached with `=`, as the next word, and alone.
fn spellings(head: &str, tail: &str, opt: &str, val: &str) -> Vec<String> {
    let mut v = vec![
        format!("{head} {opt} {val} {tail}"),
        format!("{head} {tail} {opt} {val}"),
        format!("{head} {tail} {opt}"),
    ];
    if opt.starts_with("--") {
        v.push(format!("{head} {opt}={val} {tail}"));
        v.push(format!("{head} {tail} {opt}={val}"));
    } else {
        // Short options: attached value and bundled behind a declared flag.
        v.push(format!("{head} {opt}{val} {tail}"));
    }
    v
}

/// Read-only invocations of every converted tool: (command head through the subcommand,
/// operands, a declared harmless short flag to bundle with, if any).
const READ_ONLY_HEADS: &[(&str, &str, Option<&str>)] = &[
    ("pct list", "", None),
    ("pct config", "101", None),
    ("pct status", "101", None),
    ("qm list", "", None),
    ("qm config", "100", None),
    ("qm showcmd", "100", None),
    ("qm status", "100", None),
    ("qm guest cmd", "100 ping", None),
    ("pvesh get", "/nodes", None),
    ("pvesh ls", "/nodes/pve1", None),
    ("pveum user list", "", None),
    ("pveum acl list", "", None),
    ("pvesm status", "", None),
    ("pvesm list", "local", None),
    ("pveversion", "", Some("-v")),
    ("pvecm status", "", None),
    ("pveam available", "", None),
    ("pvenode task list", "", None),
    ("ha-manager status", "", None),
    ("pve-firewall status", "", None),
    ("pvesubscription get", "", None),
    ("pveceph pool ls", "", None),
    ("proxmox-boot-tool status", "", None),
    ("proxmox-boot-tool kernel list", "", None),
    ("proxmox-backup-client list", "--repository r@pbs@h:s", None),
    ("zfs list", "rpool", Some("-H")),
    ("zfs get", "all rpool", Some("-p")),
    ("zpool status", "rpool", Some("-x")),
    ("zpool list", "", Some("-v")),
    ("zpool iostat", "5 1", Some("-v")),
    ("zdb", "-C rpool", Some("-l")),
    ("lvs", "", Some("-a")),
    ("pvdisplay", "", Some("-m")),
    ("lsscsi", "", Some("-s")),
    ("smartctl", "-a /dev/sda", Some("-H")),
    ("nvme smart-log", "/dev/nvme0", Some("-H")),
    ("mdadm --detail", "/dev/md0", None),
    ("cryptsetup status", "cryptroot", Some("-v")),
    ("losetup", "", Some("-a")),
    ("badblocks", "/dev/sdb", Some("-s")),
    ("btrfs filesystem usage", "/mnt", Some("-T")),
    ("btrfs subvolume list", "/mnt", Some("-o")),
    ("restic -r /srv/restic snapshots", "", Some("-c")),
    ("restic -r /srv/restic ls", "latest", Some("-l")),
    ("dpkg-query", "-l", Some("-W")),
    ("dpkg -l", "nginx", None),
    ("apt-cache policy", "nginx", Some("-q")),
    ("apt-file search", "bin/dig", Some("-i")),
    ("apt-mark showhold", "", Some("-q")),
    ("snap list", "", None),
    ("pip list", "", Some("-o")),
    ("pipx list", "", None),
    ("npm ls", "", Some("-g")),
    ("apt-key list", "", None),
];

#[test]
fn everyday_read_only_uses_stay_read_only() {
    assert_all_read_only(&[
        "pct list",
        "pct config 101 --current",
        "pct config 200 --current 1",
        "pct status 201 --verbose 1",
        "pct exec 105 -- df -h",
        "qm list --full",
        "qm config 100 --snapshot pre-upgrade",
        "qm showcmd 100 --pretty",
        "qm status 100 -verbose",
        "qm guest exec 101 -- uptime",
        "pvesh get /cluster/resources --type vm --output-format json",
        "pvesh get /nodes/pve1/tasks --typefilter vzdump --errors 1 --limit 10",
        "pvesh get /cluster/log --max 50",
        "pvesh get /access/permissions --path /vms/101 --userid automation@pve",
        "pvesh usage /nodes/{node}/qemu --verbose",
        "pveum user permissions alice@pve --path /vms",
        "pveum role list --output-format json",
        "pvesm list local --content backup --vmid 100",
        "pvesm status --storage nas-nfs",
        "pvesm prune-backups local --keep-last 3 --dry-run",
        "pvesm prune-backups local --keep-last 3 --dry-run 1",
        "pveam available --section system",
        "pvenode task list --errors 1 --limit 20",
        "ha-manager config --type vm",
        "pveversion -v",
        "proxmox-backup-client prune vm/101 --keep-last 7 --dry-run --repository r@pbs@h:s",
        "proxmox-backup-client prune vm/101 --dry-run true --repository r@pbs@h:s",
        "zfs list -t snapshot -o name,used -s creation",
        "zfs list -Hp -d 1 -o name rpool",
        "zfs get -Hp -o value used rpool",
        "zfs send -nvP -i @a tank/data@b",
        "zpool status -LP tank",
        "zpool iostat -vly 5 1",
        "zpool history -il rpool",
        "zpool import -d /dev/disk/by-id",
        "zdb -C rpool",
        "arc_summary -s arc",
        "lvs -o lv_name,data_percent --noheadings --units g",
        "pvs -o+pv_used",
        "vgdisplay -v pve",
        "lvremove --test -y pve/vm-100-disk-0",
        "dumpe2fs -h /dev/sda1",
        "smartctl -d sat -A /dev/sdd",
        "smartctl --all --json=c /dev/sda",
        "smartctl -l selftest /dev/sda",
        "nvme smart-log /dev/nvme0 -o json",
        "nvme error-log /dev/nvme0 -e 16",
        "mdadm --detail --scan --verbose",
        "cryptsetup luksDump /dev/sda3",
        "losetup -l -O NAME,BACK-FILE",
        "badblocks -b 4096 -sv /dev/sdb",
        "btrfs fi df -h /mnt",
        "btrfs check --readonly /dev/sdc1",
        "restic -r /srv/restic snapshots --latest 3 --compact",
        "restic -r /srv/restic stats --mode raw-data",
        "restic -r /srv/restic forget --keep-daily 7 --prune --dry-run",
        "restic -r /srv/restic find -i '*.conf' --host pve1",
        "dpkg -l 'linux-image-*'",
        "dpkg -S /usr/bin/ls",
        "dpkg --no-pager -L nginx",
        "dpkg-query -W -f='${Package} ${Version}\\n' nginx",
        "apt-cache --no-all-versions show docker-ce",
        "apt-cache rdepends --installed libssl3",
        "apt-config dump",
        "apt-mark showmanual",
        "snap list --all",
        "snap refresh --list",
        "pip list --outdated --format=json",
        "pip3 show -f requests",
        "pipx list --short",
        "npm ls -g --depth=0",
        "npm audit --omit=dev",
    ]);
}

/// An option a read-only subcommand does not declare asks in every spelling: a name no tool
/// has, and real options of other subcommands of the same tool (`--purge`, `--force`,
/// `--delete`) that could take the next word as their value.
#[test]
fn undeclared_options_after_the_subcommand_ask() {
    let mut cmds = Vec::new();
    for (head, tail, flag) in READ_ONLY_HEADS {
        for opt in [
            "--nomos-undeclared",
            "--purge",
            "--force",
            "--delete",
            "--exec",
        ] {
            cmds.extend(spellings(head, tail, opt, "x"));
        }
        // Single-dash spellings: a letter no tool here declares, alone and bundled.
        cmds.push(format!("{head} -% {tail}"));
        cmds.push(format!("{head} {tail} -%"));
        if let Some(f) = flag {
            cmds.push(format!("{head} {f}% {tail}"));
            cmds.push(format!("{head} {tail} {f}%"));
        }
    }
    assert_all_ask(&cmds);
}

/// A tool whose options were ignored before its subcommand read an option's value as the
/// subcommand: `qm --timeout list stop 100` stopped a VM as `qm list`. Every option before
/// the subcommand that the tool does not take there asks, whatever follows.
#[test]
fn an_option_value_is_never_read_as_the_subcommand() {
    let cmds: Vec<String> = [
        "qm --timeout list stop 100",
        "qm --skiplock status destroy 100",
        "qm -timeout list stop 100",
        "pct --force list destroy 101",
        "pct --timeout status stop 101",
        "pvesh --output-format get delete /nodes/pve/qemu/100",
        "pvesh --noproxy ls create /nodes/pve1/stopall",
        "pveum --comment list user delete bob@pve",
        "pveum --path user list acl modify / --roles Administrator --users bob@pve",
        "pvesm --content list remove local:iso/x.iso",
        "pvecm --verbose status delnode pve3",
        "ha-manager --type status remove vm:100",
        "pve-firewall --verbose status stop",
        "pveceph --pool status purge",
        "pveam --section available remove local:vztmpl/x",
        "pvesubscription --force get delete",
        "proxmox-boot-tool --quiet status format /dev/sda2",
        "zfs -o list destroy tank/x",
        "zfs -t list destroy -r tank",
        "zfs --json list destroy tank/x",
        "zpool -o list destroy tank",
        "zpool -T status labelclear /dev/sdb",
        "nvme -o list format /dev/nvme0n1",
        "btrfs -t filesystem subvolume delete /mnt/x",
        "restic --host snapshots forget --prune",
        "restic --tag ls prune",
        "apt-file -o search update",
        "apt-mark -f showhold hold nginx",
        "snap --channel list remove lxd",
        "pip --format list uninstall -y requests",
        "pipx --short list uninstall-all",
        "npm --omit ls uninstall express",
        "apt-key --keyring list del 7EA0A9C3",
        "dpkg --admindir -l -P nginx",
    ]
    .iter()
    .map(|c| (*c).to_owned())
    .collect();
    assert_all_ask(&cmds);
}

/// Real options that run a program, write a file, change state or print keys ask, in every
/// spelling, on subcommands that are otherwise read-only.
#[test]
fn dangerous_real_options_ask() {
    let mut cmds = Vec::new();
    for (head, tail, opt, val) in [
        ("zpool status", "tank", "-c", "smart"),
        ("zpool iostat", "-v 5 1", "-c", "upath"),
        ("smartctl", "/dev/sda", "-s", "on"),
        ("smartctl", "/dev/sda", "--smart", "off"),
        ("smartctl", "/dev/sda", "-t", "long"),
        ("smartctl", "/dev/sda", "-S", "on"),
        ("smartctl", "/dev/sda", "-o", "on"),
        ("smartctl", "/dev/sda", "--set", "standby,now"),
        (
            "restic -r /srv/r snapshots",
            "",
            "--password-command",
            "pass",
        ),
        ("restic -r /srv/r snapshots", "", "-o", "sftp.command=id"),
        (
            "restic -r /srv/r dump",
            "latest /etc/hosts",
            "-t",
            "/etc/cron.d/x",
        ),
        ("restic -r /srv/r generate", "", "--man", "/etc/cron.d"),
        ("zdb", "tank", "-x", "/tmp/dump"),
        ("arcstat", "1", "-o", "/etc/cron.d/x"),
        ("lvs", "", "--config", "devices{}"),
        ("badblocks", "/dev/sdb", "-o", "/etc/cron.d/x"),
        ("apt-cache policy", "nginx", "-p", "/etc/motd"),
        ("apt-cache show", "nginx", "--src-cache", "/etc/motd"),
        ("apt-cache policy", "nginx", "-o", "Dir::Cache=/tmp"),
        ("apt-cache policy", "nginx", "-c", "/tmp/apt.conf"),
        ("apt-mark showauto", "", "-f", "/tmp/state"),
        ("dpkg-query -l", "", "--admindir", "/tmp/db"),
        ("apt-config dump", "", "-c", "/tmp/apt.conf"),
        ("apt-listchanges", "x.deb", "--email-address", "root"),
        ("apt-listchanges", "x.deb", "-f", "mail"),
        ("pip list", "", "--python", "/tmp/py"),
        ("pip list", "", "--log", "/etc/cron.d/x"),
        (
            "cryptsetup luksDump",
            "/dev/sda3",
            "--external-tokens-path",
            "/tmp/t",
        ),
        ("npm ls", "", "--userconfig", "/tmp/npmrc"),
        ("pvesm scan cifs", "nas", "--password", "p"),
        (
            "pvesh get",
            "/nodes/pve/storage/pbs/file-restore/list",
            "--filepath",
            "/",
        ),
    ] {
        cmds.extend(spellings(head, tail, opt, val));
    }
    for c in [
        "restic -r /srv/r cache --cleanup",
        "restic -r /srv/r backup --stdin-from-command -- pg_dumpall",
        "zdb -R tank 0:400000:1000:r",
        "zdb -o zfs_flags=1 tank",
        "btrfs device stats -z /mnt",
        "btrfs device stats --reset /mnt",
        "btrfs check --repair /dev/sdc1",
        "btrfs check --readonly --init-csum-tree /dev/sdc1",
        "cryptsetup luksDump --dump-volume-key /dev/sda3",
        "cryptsetup luksDump --dump-master-key /dev/sda3",
        "losetup -fP /tmp/disk.raw",
        "losetup -d /dev/loop0",
        "losetup -D",
        "badblocks -wsv /dev/sdb",
        "badblocks -nsv /dev/sdb",
        "pvscan --cache -aay",
        "vgscan --mknodes",
        "mdadm --detail /dev/md0 --stop /dev/md1",
        "mdadm -D /dev/md0 --zero-superblock /dev/sdb1",
        "mdadm --examine /dev/sdb1 -f /dev/md0 /dev/sdb1",
        "dpkg -l --force-all",
        "dpkg -L nginx --log /etc/cron.d/x",
        "pct exec 101 --keep-env 0 -- df -h",
        "snap run lxd",
        "pipx run cowsay",
        "zpool reopen -n tank",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
}

/// Options that run a host program or raw QEMU arguments are destructive even on a
/// subcommand that is only a configuration change.
#[test]
fn program_options_of_mutating_subcommands_are_destructive() {
    let mut cmds = Vec::new();
    for (head, tail, opt, val) in [
        ("qm set", "100", "--hookscript", "local:snippets/x.pl"),
        ("qm set", "100", "--args", "-x"),
        ("qm create", "100", "-hookscript", "local:snippets/x.pl"),
        ("pct set", "101", "--hookscript", "local:snippets/x.pl"),
        ("vzdump", "100", "--script", "/tmp/hook.pl"),
    ] {
        cmds.extend(spellings(head, tail, opt, val));
    }
    let wrong: Vec<String> = cmds
        .iter()
        .filter(|c| classify(c).class != Class::Destructive)
        .cloned()
        .collect();
    assert!(wrong.is_empty(), "not destructive: {wrong:#?}");
}

/// Getopt::Long booleans (Proxmox) and proxmox-router take their value from the next word:
/// `--dry-run 0` turns the dry run off, so the prune runs.
#[test]
fn a_dry_run_turned_off_by_its_next_word_is_no_dry_run() {
    let mut cmds = Vec::new();
    for off in ["0", "false", "no", "off", "FALSE", "None"] {
        for (head, tail) in [
            ("pvesm prune-backups local", "--keep-last 3"),
            ("pvesm prune-backups nfs", "--keep-daily 7 --vmid 101"),
            (
                "proxmox-backup-client prune vm/101",
                "--keep-last 7 --repository r@pbs@h:s",
            ),
            (
                "proxmox-backup-client forget vm/101/2024-01-01T00:00:00Z",
                "",
            ),
        ] {
            cmds.push(format!("{head} {tail} --dry-run {off}"));
            cmds.push(format!("{head} --dry-run {off} {tail}"));
            cmds.push(format!("{head} --dry-run={off} {tail}"));
        }
    }
    let wrong: Vec<String> = cmds
        .iter()
        .filter(|c| classify(c).class != Class::Destructive)
        .cloned()
        .collect();
    assert!(wrong.is_empty(), "not destructive: {wrong:#?}");
    // The dry run still holds when the value turns it on, or there is none.
    assert_all_read_only(&[
        "pvesm prune-backups local --keep-last 3 --dry-run",
        "pvesm prune-backups local --dry-run 1 --keep-last 3",
        "pvesm prune-backups local --dry-run=1 --keep-last 3",
        "proxmox-backup-client prune vm/101 --dry-run true --keep-last 7",
        "proxmox-backup-client prune vm/101 --keep-last 7 --dry-run",
    ]);
}
