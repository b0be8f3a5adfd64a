//! Families from the second outside attack (secrets): environment dumps, embedded
//! languages reading the environment, secret variable names, raw disks and images, tools
//! that echo a file in their errors, credential files by any name, and printing
//! subcommands. Each family is the class with variations; the last test keeps everyday
//! reads read-only.

use crate::families::{assert_all_ask, assert_all_read_only};

fn owned(cmds: &[&str]) -> Vec<String> {
    cmds.iter().map(|s| (*s).to_owned()).collect()
}

/// Every way to run `cmd` the classifier sees through: bare, wrapped, piped, in a list.
fn wrapped(cmd: &str) -> Vec<String> {
    [
        "{}",
        "sudo {}",
        "nice {}",
        "timeout 1 {}",
        "nohup {}",
        "{} | grep -i key",
        "{} | sort",
        "true && {}",
        "bash -c '{}'",
        "sudo -u postgres {}",
    ]
    .iter()
    // Single quotes cannot nest in `bash -c '…'`.
    .filter(|f| !(f.contains('\'') && cmd.contains('\'')))
    .map(|f| f.replace("{}", cmd))
    .collect()
}

#[test]
fn environment_dumps_ask_locally_and_wrapped() {
    let dumps = [
        "env",
        "env -0",
        "env --null",
        "env -u PATH",
        "env -i",
        "printenv",
        "printenv -0",
        "set",
        "export",
        "export -p",
        "/usr/bin/env",
        "/usr/bin/printenv",
    ];
    let cmds: Vec<String> = dumps.iter().flat_map(|d| wrapped(d)).collect();
    assert_all_ask(&cmds);
}

#[test]
fn embedded_languages_reading_the_environment_ask() {
    let mut cmds = owned(&[
        "awk 'BEGIN{print ENVIRON[\"AWS_SECRET_ACCESS_KEY\"]}'",
        "awk 'BEGIN{for (k in ENVIRON) print k\"=\"ENVIRON[k]}'",
        "gawk 'BEGIN{print ENVIRON[\"X\"]}'",
        "mawk 'BEGIN{print ENVIRON[\"PGPASSWORD\"]}'",
        "nawk 'BEGIN { e = ENVIRON; print e }'",
        "awk -e 'BEGIN{print ENVIRON[\"HOME\"]}'",
        "gawk --source 'BEGIN{print ENVIRON[\"T\"]}'",
        "awk -v t=\"$GITHUB_TOKEN\" 'BEGIN{print t}'",
        "awk -vt=$DB_PASSWORD 'BEGIN{print t}'",
        "awk --assign=t=\"$API_KEY\" 'BEGIN{print t}'",
        "awk '{print t}' t=\"$MYSQL_PWD\" /etc/hosts",
        "awk -v u=\"$REDIS_URL\" 'BEGIN{print u}'",
        "jq -n env",
        "jq -n '$ENV'",
        "jq -n 'env.AWS_SECRET_ACCESS_KEY'",
        "jq -n '$ENV.GITHUB_TOKEN'",
        "jq -rn 'env|to_entries[]|\"\\(.key)=\\(.value)\"'",
        "jq -r '.a, env' x.json",
        "jq --arg k v -n 'env[$k]'",
        "jq -n '[env[]]'",
        "jq -n 'import \"x\" as y; 1'",
        "jq -n 'include \"x\"; 1'",
        "gojq -n env",
        "gojq -n '$ENV'",
        "yq -n env",
        "yq -n 'env(HOME)'",
        "yq -n 'strenv(AWS_SECRET_ACCESS_KEY)'",
        "yq -n 'strenv(GITHUB_TOKEN)'",
        "yq '.a = envsubst' x.yml",
        "yq -n 'load(\"/etc/shadow\")'",
        "yq -n 'load_str(\"/root/.ssh/id_rsa\")'",
    ]);
    cmds.extend(
        owned(&[
            "jq -n env",
            "awk 'BEGIN{print ENVIRON[\"K\"]}'",
            "yq -n 'strenv(K)'",
        ])
        .iter()
        .flat_map(|c| wrapped(c)),
    );
    assert_all_ask(&cmds);
}

#[test]
fn secret_variable_names_ask() {
    let names = [
        "MYSQL_PWD",
        "REDIS_URL",
        "MONGO_URI",
        "MONGODB_URI",
        "AMQP_URL",
        "RABBITMQ_URL",
        "CELERY_BROKER_URL",
        "POSTGRES_URL",
        "PG_URI",
        "DB_URL",
        "SQLALCHEMY_DATABASE_URI",
        "ELASTICSEARCH_URL",
        "KAFKA_URL",
        "SENTRY_DSN",
        "SMTP_URL",
        "DOCKER_AUTH_CONFIG",
        "STRIPE_SK",
        "APP_PW",
        "NPM_AUTH",
        "GPG_PASSPHRASE",
        "REGISTRY_CREDS",
        "SESSION_COOKIE",
    ];
    let cmds: Vec<String> = names
        .iter()
        .flat_map(|n| {
            [
                format!("echo ${n}"),
                format!("echo \"${{{n}}}\""),
                format!("printf '%s\\n' \"${n}\""),
                format!("docker exec app printenv {n}"),
                format!("awk -v x=\"${n}\" 'BEGIN{{print x}}'"),
            ]
        })
        .collect();
    assert_all_ask(&cmds);
}

#[test]
fn raw_disks_and_guest_images_are_secret_reads() {
    let paths = [
        "/dev/pve/root",
        "/dev/pve/vm-100-disk-0",
        "/dev/pve/data",
        "/dev/vg0/lv_root",
        "/dev/ubuntu-vg/ubuntu-lv",
        "/dev/rbd0",
        "/dev/rbd/rbd/vm-100-disk-0",
        "/dev/loop0",
        "/dev/loop12",
        "/dev/nbd0",
        "/dev/drbd1",
        "/dev/dm-0",
        "/dev/md0",
        "/dev/zram0",
        "/var/lib/vz/images/100/vm-100-disk-0.raw",
        "/var/lib/vz/images/100/vm-100-disk-0.qcow2",
        "/var/lib/vz/images/100/vm-100-disk-1.vmdk",
        "/srv/images/disk.img.raw",
        "/mnt/pve/nfs/images/101/vm-101-disk-0.qcow2",
        "/var/lib/libvirt/images/web.qcow2",
        "/tmp/x.vdi",
        "/tmp/x.vhdx",
    ];
    let cmds: Vec<String> = paths
        .iter()
        .flat_map(|p| {
            [
                format!("cat {p}"),
                format!("xxd {p}"),
                format!("strings {p}"),
                format!("grep -a '\\$6\\$' {p}"),
                format!("head -c 4096 {p}"),
                format!("sudo od -c {p}"),
            ]
        })
        .collect();
    assert_all_ask(&cmds);
}

#[test]
fn tools_that_echo_a_file_in_errors_read_it() {
    let secrets = [
        "/etc/shadow",
        "/root/.ssh/id_rsa",
        "/etc/gshadow",
        "/root/.aws/credentials",
    ];
    let forms = [
        "du --files0-from={}",
        "du --files0-from {}",
        "du -sh --files0-from={}",
        "file -f {}",
        "file --files-from {}",
        "file --files-from={}",
        "file -m {} /etc/hostname",
        "jq -f {}",
        "jq --from-file {}",
        "jq --from-file {} -n",
        "jq -n -f {}",
        "gojq -f {}",
        "find /etc -name shadow -exec du --files0-from={} \\;",
    ];
    let mut cmds: Vec<String> = forms
        .iter()
        .flat_map(|f| secrets.iter().map(move |s| f.replace("{}", s)))
        .collect();
    // The file is what `find` found.
    cmds.extend(owned(&[
        "find /etc -name shadow -exec du --files0-from={} \\;",
        "find /etc -name shadow -exec du --files0-from={} +",
        "find /root/.ssh -name 'id_*' -exec file --files-from={} \\;",
        "find /etc -name gshadow -exec jq --from-file={} \\;",
    ]));
    assert_all_ask(&cmds);
}

#[test]
fn credential_files_by_any_name_are_secret_reads() {
    let paths = [
        "/root/.config/proxmox-backup/encryption-key.json",
        "/var/lib/ceph/mon/ceph-a/keyring",
        "/var/lib/ceph/osd/ceph-0/keyring",
        "/root/.aws/sso/cache/x.json",
        "/root/.aws/cli/cache/y.json",
        "/root/.config/gcloud/legacy_credentials/x/adc.json",
        "/root/.config/gcloud/access_tokens.db",
        "/root/.config/doctl/config.yaml",
        "/root/.config/hcloud/cli.toml",
        "/root/.boto",
        "/home/u/.boto",
        "/root/.mc/config.json",
        "/root/.config/hub",
        "/root/.config/glab-cli/config.yml",
        "/root/.mylogin.cnf",
        "/root/.codex/auth.json",
        "/root/.config/openai/auth.json",
        "/root/.ssh/identity",
        "/root/.ssh/mykey",
        "/root/.ssh/github",
        "/home/deploy/.ssh/deploy",
        "/root/.ssh/*",
        "/var/lib/systemd/coredump/core.sshd.0.x.zst",
        "/var/spool/cron/atjobs/a0001",
        "/var/spool/at/a0001",
        "/etc/fetchmailrc",
        "/etc/ssmtp/ssmtp.conf",
        "/root/.m2/settings.xml",
        "/root/.m2/settings-security.xml",
        "/root/.gradle/gradle.properties",
        "/root/.nuget/NuGet/NuGet.Config",
        "/var/www/app/config/database.yml",
        "/var/www/html/config.php",
        "/srv/app/terraform.tfvars",
        "/srv/app/prod.auto.tfvars",
        "/var/crash/x.crash",
        "/etc/environment",
        "/etc/systemd/system/x.service.d/override.conf",
        "/root/*.pem",
        "/root/*key*",
        "/home/*/*.key*",
        "/srv/*id_*",
    ];
    let cmds: Vec<String> = paths
        .iter()
        .flat_map(|p| {
            [
                format!("cat {p}"),
                format!("less {p}"),
                format!("grep -i pass {p}"),
            ]
        })
        .collect();
    assert_all_ask(&cmds);
}

#[test]
fn printing_subcommands_ask() {
    assert_all_ask(&owned(&[
        "helm env",
        "helm env HELM_KUBETOKEN",
        "helm -n x env",
        "helm status x -o json",
        "helm status x -o yaml",
        "helm status x --output yaml",
        "helm status x --output=json",
        "crictl inspect x",
        "crictl inspect -o json x",
        "crictl inspect --latest",
        "ctr c info x",
        "ctr containers info x",
        "ctr container info x",
        "ctr -n k8s.io c info x",
        "lxc config show x --expanded",
        "lxc config show x",
        "incus config show x",
        "incus config get x environment.DB_PASS",
        "lxc profile show default",
    ]));
}

#[test]
fn archive_members_printed_to_stdout_are_reads_of_those_paths() {
    let archives = [
        "tar -xOf /var/lib/vz/dump/vzdump-lxc-100-2024.tar.zst {}",
        "tar -xOf backup.tar {}",
        "tar xOf x.tar {}",
        "tar --extract --to-stdout -f x.tar.gz {}",
        "tar -x -O -f x.tar {}",
        "tar -xzOf x.tgz {}",
        "zstdcat /var/lib/vz/dump/vzdump-lxc-100.tar.zst | tar -xO {}",
        "zcat /var/lib/vz/dump/x.tar.gz | tar -xO {}",
        "git archive --format=tar HEAD | tar -xO {}",
        "unzip -p backup.zip {}",
        "unzip -c backup.zip {}",
    ];
    let members = [
        "./etc/shadow",
        "etc/shadow",
        "/etc/shadow",
        "./root/.ssh/id_rsa",
        "root/.ssh/id_ed25519",
        "home/u/.ssh/deploy",
        ".env",
        "app/.env",
        "etc/pve/priv/authkey.key",
        "'*shadow*'",
        "'*id_rsa'",
        "--wildcards '*.key'",
        "etc",
        "root/",
        "\"$M\"",
    ];
    let mut cmds: Vec<String> = archives
        .iter()
        .flat_map(|a| members.iter().map(move |m| a.replace("{}", m)))
        .collect();
    // No member: every member.
    cmds.extend(owned(&[
        "tar -xOf /var/lib/vz/dump/vzdump-lxc-100.tar.zst",
        "unzip -p backup.zip",
    ]));
    assert_all_ask(&cmds);
}

#[test]
fn dry_runs_and_dumps_that_print_secrets_ask() {
    let secrets = [
        "/etc/shadow",
        "/root/.ssh/id_rsa",
        "/root/.env",
        "/root/.aws/credentials",
    ];
    let mut cmds: Vec<String> = secrets
        .iter()
        .flat_map(|s| {
            [
                format!("kubectl create secret generic x --from-file={s} --dry-run=client -o yaml"),
                format!("kubectl create configmap x --from-file=k={s} --dry-run=client -o yaml"),
                format!("kubectl create secret generic x --from-file {s} --dry-run=client -o json"),
                format!(
                    "kubectl create secret generic x --from-env-file={s} --dry-run=client -o yaml"
                ),
                format!(
                    "kubectl -n x create configmap c --from-env-file {s} --dry-run=client -o yaml"
                ),
            ]
        })
        .collect();
    cmds.extend(owned(&[
        "mysqldump mysql user",
        "mysqldump mysql",
        "mysqldump --all-databases",
        "mysqldump -A",
        "mysqldump -u root --all-databases --single-transaction",
        "mariadb-dump --databases mysql",
        "mysqldump --system=users",
        "pvesh get /nodes/pve/storage/pbs/file-restore/download --volume x --filepath /etc/shadow",
        "pvesh get /nodes/pve/storage/pbs/file-restore/download --volume x --filepath=/root/.ssh/id_rsa --tar 0",
        "pvesh get /nodes/pve/qemu/100/cloudinit/dump --type user",
        "pvesh get /nodes/pve/qemu/100/cloudinit/dump --type=user",
        "pvesh get nodes/pve/qemu/100/cloudinit/dump --type user",
        "pvesh get /cluster/acme/plugins",
        "pvesh get /cluster/acme/plugins/x",
        "pvesh get cluster/acme/plugins/x/",
        "pvenode acme plugin config x",
        "pvenode acme plugin list",
        "vault token lookup",
        "vault token lookup hvs.x",
        "tcpdump -i any -A -s0 'port 6379'",
        "tcpdump -nA port 80",
        "tcpdump -XX -i eth0",
        "tcpdump -i eth0 -X",
        "tcpdump -nnxx port 21",
        "tcpdump -Avvn -i any port 25",
        "git config --get http.extraHeader",
        "git config --get-regexp extraheader",
        "git config --get-regexp .",
        "git config --list",
        "git config -l",
        "git config --global --list",
        "git config list",
        "git config get http.https://github.com/.extraheader",
        "git config --get credential.helper",
        "git var -l",
        "git log -L 1,5:.env",
        "git log -L1,5:.env",
        "git log -L :main:.env",
        "git stash show -p stash@{0} -- .env",
        "git stash show -p -- .env",
        "git format-patch -1 --stdout -- .env",
        "git format-patch --stdout HEAD~3 -- config/.env.production",
        "sqlite3 /var/lib/grafana/grafana.db 'select * from user'",
        "sqlite3 /var/lib/grafana/grafana.db 'SELECT * FROM api_key;'",
        "sqlite3 /var/lib/grafana/grafana.db 'select * from main.data_source'",
        "sqlite3 /var/lib/vaultwarden/db.sqlite3 'select * from users'",
        "sqlite3 -readonly /opt/vw/db.sqlite3 'SELECT u.* FROM users u'",
        "sqlite3 x.db 'select * from sessions limit 5'",
        "mysql -e 'select * from app.users'",
        "psql -c 'SELECT * FROM auth_user'",
    ]));
    assert_all_ask(&cmds);
}

#[test]
fn everyday_reads_stay_read_only() {
    let reads = [
        "printenv PATH",
        "printenv TZ HOME",
        "env LANG=C ls",
        "echo $HOME",
        "echo $BASE_URL",
        "echo $PWD",
        "echo $XDG_SESSION_TYPE",
        "set -euo pipefail",
        "export LANG=C",
        "awk '{print $1}' /var/log/nginx/access.log",
        "awk -v n=5 'NR<=n' /etc/hosts",
        "jq '.[] | .name' data.json",
        "jq -r '.environment' data.json",
        "jq '.env' package.json",
        "yq '.services.web.image' compose.yml",
        "du -sh /var/lib/docker",
        "file /usr/bin/ls",
        "cat /etc/hostname",
        "cat /root/.ssh/known_hosts",
        "cat /root/.ssh/config",
        "cat /root/.ssh/authorized_keys",
        "cat /root/.ssh/id_ed25519.pub",
        "cat /etc/ssl/certs/*.pem",
        "ls /dev/pve",
        "ls -l /dev/disk/by-id",
        "cat /dev/null",
        "helm status grafana -n monitoring",
        "helm list -A",
        "ctr containers ls",
        "crictl ps -a",
        "lxc list",
        "cat /var/log/syslog",
        // Guest configurations are everyday reads (`cipassword` is a hash, as in `qm config`).
        "cat /etc/pve/qemu-server/100.conf",
        "zgrep -h Accepted /var/log/auth.log.*.gz",
        "ps -ef | grep [s]shd",
        "grep -r include /etc/nginx",
        "grep env /etc/hosts",
        "sha256sum /var/lib/vz/template/iso/x.iso",
        "tar -tf /var/lib/vz/dump/vzdump-lxc-100.tar.zst",
        "tar -xOf x.tar etc/hosts",
        "unzip -p x.zip README.md",
        "kubectl create configmap x --from-file=app.conf --dry-run=client -o yaml",
        "mysqldump --single-transaction nextcloud",
        "vault token lookup -accessor 8f3a",
        "tcpdump -ni eth0 port 53 -c 20",
        "git config --get user.name",
        "git config user.email",
        "git config --get remote.origin.url",
        "git var GIT_AUTHOR_IDENT",
        "git log -L 10,20:src/main.rs",
        "git stash show",
        "git format-patch -1 --stdout",
        "pvesh get /nodes",
        "pvenode task list",
        "sqlite3 -readonly /opt/vw/db.sqlite3 'SELECT count(*) FROM users;'",
        "sqlite3 /var/lib/grafana/grafana.db 'select id, login from user'",
        "sqlite3 x.db 'select * from events'",
    ];
    assert_all_read_only(&reads);
}
