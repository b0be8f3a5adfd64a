//! Families from the fourth outside attack: devices whose read has effects, zone and
//! locale names that are paths, awk programs that rewrite ARGV, grep's `-d recurse`,
//! `getent -s`, credential files by name and location, SQL catalogues with passwords and
//! etckeeper's history of /etc. Each family is the class with variations; the last test
//! keeps the everyday neighbours read-only.

use crate::families::{assert_all_ask, assert_all_read_only};

/// Every way a plain read of `path` is typed.
fn readers(path: &str) -> Vec<String> {
    [
        "cat {}",
        "head -c 16 {}",
        "tail -n1 {}",
        "dd if={} bs=1 count=1",
        "xxd -l 16 {}",
        "od -N 16 {}",
        "strings {}",
        "timeout 1 cat {}",
        "sudo cat {}",
        "grep -a x {}",
        "less {}",
    ]
    .iter()
    .map(|f| f.replace("{}", path))
    .collect()
}

#[test]
fn devices_whose_read_has_effects_or_captures_input_ask() {
    let devices = [
        "/dev/watchdog",
        "/dev/watchdog0",
        "/dev/watchdog1",
        "/dev/input/event0",
        "/dev/input/by-path/platform-i8042-serio-0-event-kbd",
        "/dev/input/mice",
        "/dev/hidraw0",
        "/dev/vcs",
        "/dev/vcs1",
        "/dev/vcsa2",
        "/dev/tty1",
        "/dev/console",
        "/dev/pts/0",
        "/dev/ttyS0",
        "/dev/ttyUSB0",
        "/dev/ttyACM0",
        "/dev/st0",
        "/dev/nst0",
        "/dev/nvram",
        "/dev/snd/pcmC0D0c",
        "/dev/video0",
        "/dev/fb0",
        "/dev/ipmi0",
        "/dev/tpm0",
        "/dev/rtc0",
        "/dev/cpu/0/msr",
        "/proc/kmsg",
        "/sys/kernel/tracing/trace_pipe",
        "/sys/kernel/debug/tracing/trace_pipe",
        "/sys/bus/pci/devices/0000:00:02.0/resource0",
        "/dev/watchdog*",
        "/dev/input/*",
        "/dev/tty[0-9]",
    ];
    let cmds: Vec<String> = devices.iter().flat_map(|d| readers(d)).collect();
    assert_all_ask(&cmds);
}

#[test]
fn zone_locale_and_terminal_names_that_are_paths_ask() {
    let values = [
        "TZ=/dev/watchdog",
        "TZ=:/dev/watchdog",
        "TZ=../../../../dev/watchdog",
        "TZ=:../../../dev/input/event0",
        "TZ=/proc/self/fd/0",
        "LANG=/tmp/x",
        "LC_ALL=../../tmp/x",
        "LC_TIME=/tmp/x",
        "LANGUAGE=../../../tmp/x",
        "TERM=../../../tmp/x",
    ];
    let mut cmds = Vec::new();
    for v in values {
        for c in ["date", "ls -l", "journalctl -n 5", "git log"] {
            cmds.push(format!("{v} {c}"));
            cmds.push(format!("export {v}; {c}"));
            cmds.push(format!("env {v} {c}"));
        }
    }
    // A value only known at run time may be a path.
    for c in [
        "read TZ < /tmp/z; export TZ; date",
        "printf -v TZ %s /dev/watchdog; export TZ; date",
        "for TZ in /dev/watchdog; do export TZ; date; done",
        "read LANG; export LANG; ls",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
}

#[test]
fn awk_programs_that_rewrite_argv_ask() {
    let programs = [
        r#"BEGIN{ARGV[1]="/etc/shadow"; ARGC=2} {print}"#,
        r#"BEGIN{ARGV[ARGC++]="/etc/shadow"}{print}"#,
        r#"BEGIN{ARGV[1]="/etc/sh" "adow"}{print}"#,
        r#"BEGIN{f="/etc/shadow"; ARGV[1]=f}1"#,
        r#"BEGIN{split("/etc/shadow",a); ARGV[1]=a[1]}1"#,
        r#"BEGIN { ARGV [ 1 ] = "/etc/gshadow" } 1"#,
        r#"BEGIN{n=split("a /etc/shadow", ARGV)}1"#,
        r#"BEGIN{delete ARGV; ARGV[1]="/root/.ssh/id_rsa"; ARGC=2}1"#,
        r#"{ if (NR==1) ARGV[ARGC++] = "/etc/shadow" } 1"#,
        r#"BEGIN{ARGC=3; ARGV[2]=sprintf("%s","/etc/shadow")}1"#,
        r#"BEGIN{for(i=0;i<1;i++) ARGV[i+1]="/etc/shadow"}1"#,
    ];
    let mut cmds = Vec::new();
    for p in programs {
        for a in ["awk", "gawk", "mawk", "nawk", "awk -F:"] {
            cmds.push(format!("{a} '{p}' /etc/hostname"));
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn grep_recursion_spelled_as_a_directories_action_asks() {
    let mut cmds = Vec::new();
    for g in ["grep", "egrep", "fgrep"] {
        for d in [
            "-d recurse",
            "-drecurse",
            "-d rec",
            "--directories=recurse",
            "--directories recurse",
            "--directories=r",
            "-i -d recurse",
            "-d recurse -n",
            "--directories=$ACTION",
        ] {
            for pat in ["password", "-e token", "'BEGIN .*PRIVATE'"] {
                cmds.push(format!("{g} {d} {pat}"));
            }
            cmds.push(format!("{g} {d} password /etc"));
            cmds.push(format!("{g} {d} password /root"));
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn getent_with_a_service_still_finds_the_shadow_database() {
    let cmds: Vec<String> = [
        "getent -s files shadow",
        "getent -s files shadow root",
        "getent -sfiles shadow",
        "getent -s compat gshadow",
        "getent -s sss shadow root",
        "getent -i -s files shadow",
        "getent -s files -- shadow",
        "getent -s files:db shadow",
        "getent -s x shadow root admin",
        "getent -s files tcb",
        "getent --service files shadow",
        "getent -s files $DB",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_all_ask(&cmds);
}

#[test]
fn credential_files_by_name_and_location_ask() {
    let paths = [
        "/etc/puppetlabs/puppet/ssl/private_keys/h.example.pem",
        "/var/lib/puppet/ssl/private_keys/h.pem",
        "/etc/tinc/vpn/rsa_key.priv",
        "/etc/tinc/vpn/ed25519_key.priv",
        "/etc/bind/Kexample.com.+008+12345.private",
        "/etc/opendkim/keys/example.com/default.private",
        "/etc/exim4/dkim/example.com.pem",
        "/root/.config/borg/keys/srv_backup",
        "/etc/passwd-s3fs",
        "/srv/x/passwd.txt",
        "/etc/dovecot/users",
        "/etc/dovecot/passwd",
        "/etc/dovecot/dovecot-sql.conf.ext",
        "/etc/redis/users.acl",
        "/etc/mail/authinfo",
        "/etc/pgbouncer/userlist.txt",
        "/etc/mosquitto/pwfile",
        "/etc/snmp/snmpd.conf",
        "/etc/openldap/slapd.conf",
        "/etc/nslcd.conf",
        "/etc/pam_ldap.conf",
        "/boot/grub/user.cfg",
        "/boot/grub2/user.cfg",
        "/etc/zabbix/zabbix_agentd.psk",
        "/etc/zabbix/web/zabbix.conf.php",
        "/etc/phpmyadmin/config-db.php",
        "/etc/postfix/mysql-virtual-mailbox-maps.cf",
        "/etc/postfix/pgsql-aliases.cf",
        "/var/lib/libvirt/qemu/domain-1-vm/master-key.aes",
        "/etc/icinga2/conf.d/api-users.conf",
        "/etc/rundeck/realm.properties",
        "/etc/matrix-synapse/homeserver.yaml",
        "/srv/www/wp-config.php.bak",
        "/srv/x/.htdigest",
        "/var/lib/kubelet/config.json",
        "/srv/x/.dockercfg",
        "/etc/docker/key.json",
        "/var/lib/docker/containers/0123abcd/config.v2.json",
        "/var/lib/cloud/instance/user-data.txt",
        "/var/lib/cloud/instances/i-0abc/user-data.txt.i",
        "/var/lib/cloud/seed/nocloud/user-data",
        "/var/lib/etcd/member/snap/db",
        "/etc/rancher/rke2/rke2.yaml",
        "/srv/backup/k3s.yaml",
        "/srv/backup/admin.conf",
        "/root/.talos/config",
        "/root/.config/sops/age/keys.txt",
        "/root/.config/age/key.txt",
        "/root/.age/key.txt",
        "/var/lib/mysql/mysql/user.MYD",
        "/var/lib/mysql/mysql.ibd",
        "/var/lib/postgresql/15/main/global/1260",
        "/var/lib/pgsql/data/global/1260",
        "/root/.config/atuin/key",
        "/root/.config/github-copilot/hosts.json",
        "/root/.config/ngrok/ngrok.yml",
        "/root/.cloudflared/cert.pem",
        "/etc/cloudflared/tunnel.json",
        "/srv/x/gcp-key.json",
        "/srv/x/service-account.json",
        "/srv/vpn/wg0.conf",
        "/root/.influxdbv2/configs",
        "/data/.runner",
    ];
    let mut cmds = Vec::new();
    for p in paths {
        cmds.push(format!("cat {p}"));
        cmds.push(format!("grep -h '' {p}"));
        cmds.push(format!("base64 {p}"));
    }
    assert_all_ask(&cmds);
}

#[test]
fn sql_catalogues_that_hold_passwords_ask() {
    let queries = [
        "select subconninfo from pg_subscription",
        "select * from pg_subscription",
        "select s.subconninfo from pg_catalog.pg_subscription s",
        "table pg_subscription",
        "show primary_conninfo",
    ];
    let mut cmds: Vec<String> = queries.iter().map(|q| format!("psql -c \"{q}\"")).collect();
    for q in [
        "show create user root",
        "SHOW CREATE USER 'root'@'localhost'",
        "show create user current_user()",
        "show create server fed",
        "select priv from mysql.global_priv",
        "select * from mysql.global_priv",
        "select * from mysql.slave_master_info",
    ] {
        cmds.push(format!("mysql -e \"{q}\""));
        cmds.push(format!("mariadb -e \"{q}\""));
    }
    assert_all_ask(&cmds);
}

#[test]
fn etckeeper_patches_of_etc_ask_unless_paths_limit_them() {
    let cmds: Vec<String> = [
        "etckeeper vcs log -p",
        "etckeeper vcs log --patch",
        "etckeeper vcs log -u -3",
        "etckeeper vcs log -p -- shadow",
        "etckeeper vcs log -p -- ssh",
        "etckeeper vcs log -p -- ssh/",
        "etckeeper vcs log -p -- /etc/gshadow",
        "etckeeper vcs log -p -- $F",
        "etckeeper vcs diff",
        "etckeeper vcs diff HEAD~1",
        "etckeeper vcs diff --cached",
        "etckeeper vcs diff -- shadow",
        "etckeeper vcs diff -U5 -- ssh/ssh_host_ed25519_key",
        "sudo etckeeper vcs log -p",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_all_ask(&cmds);
}

#[test]
fn http_endpoints_that_answer_with_secrets_ask() {
    let urls = [
        "http://127.0.0.1:8001/api/v1/secrets",
        "localhost:8001/api/v1/namespaces/kube-system/secrets/bootstrap-token-abc",
        "http://127.0.0.1:8001/api/v1/secrets?limit=1",
        "https://127.0.0.1:6443/api/v1/namespaces/default/secrets",
        "https://k8s.example.org:6443/api/v1//namespaces/x/../../secrets",
        "https://k8s.example.org:6443/api/v1/namespaces/x/%73ecrets",
        "http://127.0.0.1:8200/v1/secret/data/app",
        "http://vault:8200/v1/kv/data/db",
        "http://127.0.0.1:8200/v1/sys/raw/core/keyring",
        "http://127.0.0.1:8200/v1/database/creds/readonly",
        "http://127.0.0.1:8200/v1/auth/token/lookup-self",
        "http://127.0.0.1:8200/v1/transit/export/encryption-key/k",
        "http://localhost:8500/v1/kv/app/config?raw",
        "http://localhost:8500/v1/kv/?recurse",
        "http://localhost:8500/v1/acl/tokens",
        "http://localhost:8500/v1/acl/token/self",
        "http://localhost:8500/v1/snapshot",
        "http://localhost:4646/v1/vars",
        "http://localhost:4646/v1/var/nomad/jobs/web",
        "http://localhost:4646/v1/client/fs/cat/abc?path=secrets/vault_token",
        "http://localhost:2379/v2/keys/?recursive=true",
        "http://localhost:15672/api/definitions",
        "http://localhost:9200/_security/api_key",
    ];
    let mut cmds = Vec::new();
    for u in urls {
        cmds.push(format!("curl '{u}'"));
        cmds.push(format!("curl -s -H 'X-Vault-Token: t' '{u}'"));
        cmds.push(format!("wget -qO- '{u}'"));
    }
    for u in [
        "http://x/1.0/instances/web/files?path=/etc/shadow",
        "lxd/1.0/instances/web/files?path=/root/.ssh/id_rsa",
        "http://x/1.0/containers/web/files?path=%2Fetc%2Fshadow",
    ] {
        cmds.push(format!(
            "curl --unix-socket /var/snap/lxd/common/lxd/unix.socket '{u}'"
        ));
        cmds.push(format!("curl --unix-socket /run/incus/unix.socket '{u}'"));
    }
    for u in [
        "scp://localhost/etc/shadow",
        "sftp://127.0.0.1/root/.ssh/id_rsa",
        "scp://root@db/etc/gshadow",
        "sftp://h/~/.ssh/id_ed25519",
        "sftp://h/%2Fetc%2Fshadow",
        "SCP://h/etc/shadow",
    ] {
        cmds.push(format!("curl '{u}'"));
        cmds.push(format!("curl -k --insecure '{u}'"));
    }
    assert_all_ask(&cmds);
}

#[test]
fn ansible_templates_and_variable_dumps_ask() {
    let mut cmds = Vec::new();
    for m in ["debug", "ping", "setup", "stat"] {
        for a in [
            "-a 'msg={{ lookup(\"pipe\", \"id\") }}'",
            "-a \"msg={{ lookup('file', '/etc/shadow') }}\"",
            "-a 'path={{ lookup(\"env\", \"HOME\") }}'",
            "--args='{% for x in [1] %}{{ lookup(\"pipe\",\"touch /tmp/p\") }}{% endfor %}'",
            "-e 'x={{ lookup(\"pipe\", \"id\") }}'",
            "--extra-vars='y={{ q(\"pipe\", \"id\") }}'",
            "-e @/etc/shadow",
            "--extra-vars=@/root/.ssh/id_rsa",
            "-a \"$ARGS\"",
        ] {
            cmds.push(format!("ansible all -m {m} {a}"));
        }
    }
    for a in [
        "var=hostvars",
        "var=ansible_password",
        "var=vault_db_password",
        "'var=hostvars[inventory_hostname]'",
    ] {
        cmds.push(format!("ansible localhost -m debug -a {a}"));
        cmds.push(format!("ansible all -m ansible.builtin.debug -a {a}"));
    }
    assert_all_ask(&cmds);
}

#[test]
fn systemd_analyze_cat_config_of_a_secret_asks() {
    let cmds: Vec<String> = [
        "systemd-analyze cat-config /etc/shadow",
        "systemd-analyze cat-config shadow",
        "systemd-analyze cat-config gshadow",
        "systemd-analyze cat-config ssh/ssh_host_rsa_key",
        "systemd-analyze cat-config ssh",
        "systemd-analyze cat-config /etc/ssh",
        "systemd-analyze cat-config wireguard/wg0.conf",
        "systemd-analyze cat-config systemd/logind.conf /etc/shadow",
        "systemd-analyze cat-config $F",
        "sudo systemd-analyze cat-config /root/.ssh/id_ed25519",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_all_ask(&cmds);
}

#[test]
fn everyday_neighbours_stay_read_only() {
    assert_all_read_only(&[
        "cat /dev/null",
        "head -c 16 /dev/urandom",
        "cat /proc/cpuinfo",
        "cat /sys/class/net/eth0/operstate",
        "TZ=UTC date",
        "TZ=Europe/Berlin date",
        "TZ=:Europe/Berlin date",
        "LANG=C ls",
        "LC_ALL=C.UTF-8 sort /etc/hostname",
        "TERM=dumb ls",
        "awk '{print $1}' /etc/hostname",
        "awk 'BEGIN{FS=\":\"} {print $1}' /etc/passwd",
        "grep -d skip x /etc/hostname",
        "grep -d read x /etc/hostname",
        "grep --directories=skip x /etc/hostname",
        "getent passwd root",
        "getent hosts example.com",
        "getent passwd $USER",
        "getent group sudo",
        "cat /etc/passwd",
        "cat /etc/passwd-",
        "cat /etc/redis/sentinel.log",
        "cat /etc/postfix/main.cf",
        "cat /etc/dovecot/dovecot.conf",
        "psql -c 'select * from pg_stat_subscription'",
        "psql -c 'select usename from pg_user'",
        "mysql -e 'show create table t'",
        "mysql -e 'show grants'",
        "etckeeper vcs log",
        "etckeeper vcs log --stat",
        "etckeeper vcs log -p -3 -- ssh/sshd_config",
        "etckeeper vcs diff --stat",
        "etckeeper vcs diff -- network/interfaces",
        "etckeeper vcs status",
        "curl -s http://localhost:8500/v1/status/leader",
        "curl -s http://127.0.0.1:8200/v1/sys/health",
        "curl -s 'http://localhost:9090/api/v1/query?query=up'",
        "curl -sk https://127.0.0.1:6443/api/v1/namespaces/default/pods",
        "curl -s https://api.github.com/repos/rust-lang/rust",
        "curl -s http://localhost:4646/v1/jobs",
        "ansible all -m ping",
        "systemd-analyze cat-config systemd/logind.conf",
        "systemd-analyze cat-config /etc/systemd/journald.conf",
        "systemd-analyze blame",
        "ansible all -m debug -a 'msg=hello'",
        "ansible all -m setup -a 'filter=ansible_distribution*'",
    ]);
}
