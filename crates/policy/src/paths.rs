//! Target awareness: glob patterns over paths, protected write targets and secrets.
//!
//! Paths are compared as glob patterns: a literal path is a pattern without
//! metacharacters, a dynamic value is `**`. Two patterns "may overlap" when some
//! path matches both (an automaton product), which is how globs and loop variables
//! are checked against the lists below without expanding anything.

use std::borrow::Cow;

/// Writing here is destructive (persistence, privilege, lock-out, boot, disks).
const PROTECTED_WRITE: &[&str] = &[
    // Accounts, authentication and the boot-time mount table: a bad write locks the
    // operator out or stops the host from booting.
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/fstab",
    "/etc/crypttab",
    // Its existence stops every non-root login.
    "/etc/nologin",
    "/run/nologin",
    "/var/run/nologin",
    "/etc/pam.d/**",
    "/etc/security/**",
    "/etc/ld.so.preload",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d/**",
    "/etc/cron*",
    "/etc/cron*/**",
    "/etc/anacrontab",
    "/var/spool/cron/**",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/sudoers.d/**",
    "**/.ssh/**",
    "/etc/ssh/**",
    "**/.bashrc",
    "**/.bash_profile",
    "**/.bash_login",
    "**/.bash_logout",
    "**/.profile",
    "**/.zshrc",
    "**/.zprofile",
    "**/.zshenv",
    "**/.inputrc",
    "/etc/profile",
    "/etc/profile.d/**",
    "/etc/bash.bashrc",
    "/etc/environment",
    "/etc/zsh/**",
    "/etc/systemd/**",
    "/lib/systemd/**",
    "/usr/lib/systemd/**",
    "/run/systemd/**",
    "**/.config/systemd/**",
    "/boot",
    "/boot/**",
    "/dev/sd*",
    "/dev/hd*",
    "/dev/vd*",
    "/dev/xvd*",
    "/dev/nvme*",
    "/dev/mmcblk*",
    "/dev/md*",
    "/dev/dm-*",
    "/dev/zd*",
    "/dev/loop*",
    "/dev/mapper/**",
    "/dev/disk/**",
    "/dev/zvol/**",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/dev/tcp/**",
    "/dev/udp/**",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/pam.d/**",
    "/etc/security/**",
    "/etc/ld.so.preload",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d/**",
    "/etc/fstab",
    "/etc/crypttab",
    "/etc/network/interfaces",
    "/etc/network/interfaces.d/**",
    "/etc/netplan/**",
    "/etc/pve/priv/**",
    "/etc/pve/corosync.conf",
    "/etc/corosync/**",
    "/etc/init.d/**",
    "/etc/rc*.d/**",
    "/etc/rc.local",
    "/etc/udev/rules.d/**",
    "/etc/update-motd.d/**",
    "/etc/logrotate.d/**",
    "/etc/apt/apt.conf.d/**",
    "/etc/modprobe.d/**",
    "/etc/modules",
    "/etc/modules-load.d/**",
    "/var/lib/dpkg/**",
    "/bin/**",
    "/sbin/**",
    "/usr/bin/**",
    "/usr/sbin/**",
    "/usr/local/bin/**",
    "/usr/local/sbin/**",
    "/lib/**",
    "/lib64/**",
    "/usr/lib/**",
    "/usr/lib64/**",
    "/proc/sysrq-trigger",
    "/sys/**",
    "**/.gitconfig",
    "**/.git/config",
    "**/.git/hooks/**",
    "/etc/gitconfig",
    "/etc/resolv.conf",
    "/etc/hosts.allow",
    "/etc/hosts.deny",
    "/etc/nftables.conf",
    "/etc/iptables/**",
    "/etc/default/grub",
    "/etc/grub.d/**",
    "/etc/kernel/**",
    "/etc/initramfs-tools/**",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/etc/docker/daemon.json",
];

/// Fixed system locations of secrets, shared by both lists below.
const SECRET_SYSTEM: &[&str] = &[
    "/etc/shadow",
    "/run/secrets/**",
    "/var/run/secrets/**",
    "/var/lib/kubelet/pki/**",
    "/var/lib/rancher/k3s/server/**",
    "/etc/rancher/k3s/k3s.yaml",
    "/etc/rancher/k3s/registries.yaml",
    "/etc/NetworkManager/system-connections/**",
    "/etc/wpa_supplicant/*.conf",
    "/etc/postfix/sasl_passwd*",
    "/etc/grafana/grafana.ini",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_*key",
    "/etc/pve/priv/**",
    "/etc/ssl/private/**",
    "/etc/wireguard/**",
    "/etc/corosync/authkey",
    "/etc/mysql/debian.cnf",
    "/proc/[0-9]*/environ",
    "/proc/[0-9]*/mem",
    "/proc/[0-9]*/root/**",
    "/proc/[0-9]*/cwd/**",
    "/proc/[0-9]*/fd/**",
    "/proc/[0-9]*/map_files/**",
    "/proc/[0-9]*/task/*/environ",
    "/proc/self/environ",
    "/proc/self/mem",
    "/proc/self/root/**",
    "/proc/self/cwd/**",
    "/proc/self/fd/**",
    "/proc/self/map_files/**",
    "/proc/self/task/*/environ",
    "/proc/thread-self/environ",
    "/proc/thread-self/mem",
    "/proc/thread-self/root/**",
    "/proc/thread-self/cwd/**",
    "/proc/thread-self/fd/**",
    "/proc/thread-self/map_files/**",
    "/proc/thread-self/task/*/environ",
    "/proc/kcore",
    "/var/lib/pve-cluster/**",
    "/var/lib/samba/private/**",
    // Node keys of the tailnet.
    "/var/lib/tailscale/**",
    // Descriptors the shell may have open (a directory fd is another root).
    "/dev/fd/[3-9]*",
    "/dev/fd/[12][0-9]*",
    "/dev/fd/*/**",
    // Disk-unlock keys, SSSD's bind password and cache, Salt's PKI.
    "/etc/luks-keys/**",
    "/etc/keys/**",
    "/etc/sssd/sssd.conf",
    "/etc/sssd/conf.d/**",
    "/var/lib/sss/secrets/**",
    "/var/lib/sss/db/**",
    "/etc/salt/pki/**",
    "/etc/cryptsetup-keys.d/**",
    "/run/cryptsetup-keys.d/**",
    "/etc/tcb/**",
    "/var/backups/*shadow*",
    "/var/backups/group.bak",
];

/// Reading these discloses secrets: always asks (with `SECRET_SYSTEM`).
const SECRET_READ: &[&str] = &[
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "**/.ssh/id_*",
    "**/id_rsa",
    "**/id_dsa",
    "**/id_ecdsa",
    "**/id_ed25519",
    "**/id_ecdsa_sk",
    "**/id_ed25519_sk",
    "/etc/pve/priv",
    "/etc/pve/**.key",
    "**/*.key",
    "**/*_key",
    "**/privkey*.pem",
    "**/privkey",
    "**/*.privkey",
    "**/*key.pem",
    "**/node-token",
    "/etc/kubernetes/*.conf",
    "**/*.keyring",
    "**/*.p12",
    "**/*.pfx",
    "**/*.jks",
    "**/*.kdbx",
    "**/rclone.conf",
    "**/acme.json",
    "**/.acme.sh/account.conf",
    "**/.acme.sh/ca/**",
    "**/.acme.sh/**.conf",
    "/etc/gitlab-runner/config.toml",
    "**/.gitlab-runner/config.toml",
    "**/.vault-token",
    "**/.terraformrc",
    "**/terraform.tfstate",
    "**/terraform.tfstate.backup",
    "**/*.env",
    "**/.env.*",
    "**/.smbcredentials",
    "**/.*credentials",
    "**/*.credentials",
    "/etc/gitea/app.ini",
    "**/gitea/conf/app.ini",
    "**/vaultwarden/**config.json",
    "**/bitwarden/**config.json",
    "/data/config.json",
    "**/secrets.yaml",
    "**/secrets.yml",
    "**/secrets.json",
    "**/credentials.json",
    "**/credentials.yml",
    "**/credentials.yaml",
    "**/*.secret",
    "**/*.secrets",
    "**/.htpasswd",
    "**/htpasswd",
    "**/client_secret*.json",
    "**/service-account*.json",
    "**/.pypirc",
    "**/.s3cfg",
    "**/nextcloud/config/config.php",
    "**/html/config/config.php",
    "**/wp-config.php",
    "/config/config.xml",
    "**/sonarr/**config.xml",
    "**/radarr/**config.xml",
    "**/lidarr/**config.xml",
    "**/prowlarr/**config.xml",
    "**/readarr/**config.xml",
    "**/containers/auth.json",
    "/etc/hostapd/hostapd.conf",
    "/etc/ddclient.conf",
    "/etc/msmtprc",
    "**/.msmtprc",
    "/etc/exim4/passwd.client",
    "**/.fetchmailrc",
    "/etc/gitlab/gitlab-secrets.json",
    "/etc/gitlab/initial_root_password",
    "/etc/pihole/setupVars.conf",
    "**/.netrc",
    "**/.pgpass",
    "**/.my.cnf",
    "**/.git-credentials",
    "**/.docker/config.json",
    "**/.kube/config",
    "/etc/kubernetes/admin.conf",
    "/etc/kubernetes/pki/**",
    "**/.aws/credentials",
    "**/.config/gh/hosts.yml",
    "**/.vault-token",
    "**/.env",
    "**/.bash_history",
    "**/.*_history",
    "**/.lesshst",
    "**/.viminfo",
    "**/.npmrc",
    "**/.yarnrc.yml",
    "**/.erlang.cookie",
    "**/*.keytab",
    "**/*.ppk",
    "**/*.ovpn",
    "**/.composer/auth.json",
    "**/composer/auth.json",
    "**/secring.*",
    // Combined certificate and key bundles (HAProxy, Salt, PKCS#12, Java keystores).
    "**/haproxy/**.pem",
    "**/private/*.pem",
    "**/keys/*.pem",
    "**/.zsh_history",
    "**/.mysql_history",
    "**/.psql_history",
    "**/.gnupg/**",
    "/etc/letsencrypt/live/**",
    "/etc/letsencrypt/archive/**",
    "/etc/letsencrypt/keys/**",
    "/etc/letsencrypt/accounts/**",
    "/etc/samba/smbpasswd",
    "/etc/ipsec.secrets",
    "/etc/ppp/*-secrets",
    "/etc/openvpn/**.key",
    "/etc/rclone/**",
    "/etc/restic/**",
    "/etc/borgmatic/**",
    "/etc/borgmatic.d/**",
    "**/.config/borgmatic/**",
    // Self-hosted applications whose configuration or state embeds credentials.
    "**/authelia/**configuration.yml",
    "**/authelia/**users_database.yml",
    "**/authelia/**notification.txt",
    "**/keycloak/conf/keycloak.conf",
    "/etc/forgejo/app.ini",
    "**/forgejo/**app.ini",
    "**/custom/conf/app.ini",
    "/etc/gitlab/gitlab.rb",
    "**/.storage/auth",
    "**/.storage/auth_provider.*",
    "**/.storage/core.config_entries",
    "/etc/mosquitto/passwd",
    "/etc/mosquitto/**/passwd",
    "**/mosquitto/**passwd*",
    "**/zigbee2mqtt/**configuration.yaml",
    "**/zigbee2mqtt/**coordinator_backup.json",
    "**/.node-red/.config.runtime.json",
    "**/.node-red/.config.users.json",
    "/etc/prometheus/web*.yml",
    "/etc/prometheus/pve.yml",
    "/etc/alertmanager/alertmanager.yml",
    "**/usersfile",
    "**/letsencrypt/credentials/**",
    "/etc/letsencrypt/*.ini",
    "**/cloudflare.ini",
    "/etc/pihole/cli_pw",
    "**/AdGuardHome.yaml",
    "/etc/netbird/**",
    "**/netbird/management.json",
    "/etc/cloudflared/*.json",
    "**/.cloudflared/*.json",
    "/etc/frp/**",
    "**/Plex Media Server/Preferences.xml",
    "**/qBittorrent.conf",
    "/etc/transmission-daemon/settings.json",
    "**/transmission*/settings.json",
    "**/sabnzbd.ini",
    "**/seahub_settings.py",
    "/etc/default/minio",
    "**/pwenc_secret",
    "**/keyfile",
    "/etc/nut/upsd.users",
    "/etc/nut/upsmon.conf",
    "**/private.pem",
    "**/*-private.pem",
    "**/*_private.pem",
    "/etc/crowdsec/*credentials*",
    "**/*credentials*.yaml",
    "**/*credentials*.yml",
    // A file named for what it holds (`.restic-password`, `borg-passphrase`).
    "**/*password*",
    "**/*passphrase*",
    "/etc/proxmox-backup/**",
    "/root/.config/rclone/**",
    "/dev/sd*",
    "/dev/hd*",
    "/dev/vd*",
    "/dev/xvd*",
    "/dev/nvme*",
    "/dev/mmcblk*",
    "/dev/md*",
    "/dev/dm-*",
    "/dev/zd*",
    "/dev/mapper/**",
    "/dev/disk/**",
    "/dev/zvol/**",
    // Other block devices: loop-mounted images, Ceph RBD, NBD, DRBD, optical, RAM disks.
    "/dev/loop*",
    "/dev/rbd*",
    "/dev/rbd/**",
    "/dev/nbd*",
    "/dev/drbd*",
    "/dev/bcache*",
    "/dev/sr[0-9]*",
    "/dev/sg[0-9]*",
    "/dev/ram[0-9]*",
    "/dev/zram*",
    "/dev/mtd*",
    "/dev/block/**",
    // Guest disk images: a whole filesystem with its shadow file and keys.
    "/var/lib/vz/images/**",
    "**/images/*/vm-*-disk-*",
    "**/images/*/base-*-disk-*",
    "**/*.raw",
    "**/*.qcow2",
    "**/*.qcow",
    "**/*.vmdk",
    "**/*.vdi",
    "**/*.vhd",
    "**/*.vhdx",
    "**/*-flat.vmdk",
    "/var/lib/libvirt/images/**",
    // Cloud and tool credentials.
    "**/.config/proxmox-backup/**",
    "**/encryption-key.json",
    "/var/lib/ceph/**/keyring",
    "**/keyring",
    "**/.aws/**",
    "**/.config/gcloud/**",
    "**/.config/doctl/**",
    "**/.config/hcloud/**",
    "**/.config/hub",
    "**/.config/glab-cli/**",
    "**/.config/openai/**",
    "**/.codex/auth.json",
    "**/auth.json",
    "**/.boto",
    "**/.mc/config.json",
    "**/.mc/**.json",
    "**/.mylogin.cnf",
    "**/.azure/**",
    "**/.oci/**",
    "**/.config/rclone/**",
    "**/.config/containers/auth.json",
    // Core dumps and crash reports hold process memory; at jobs embed the environment.
    "/var/lib/systemd/coredump/**",
    "/var/crash/**",
    "/var/spool/cron/atjobs/**",
    "/var/spool/at/**",
    "/var/spool/atjobs/**",
    // Mail, build-tool and application credentials.
    "**/fetchmailrc",
    "/etc/ssmtp/**",
    "**/ssmtp.conf",
    "**/.m2/settings*.xml",
    "**/.gradle/gradle.properties",
    "**/NuGet.Config",
    "**/NuGet.config",
    "**/nuget.config",
    "**/database.yml",
    "**/config.php",
    "**/config.inc.php",
    "**/configuration.php",
    "**/LocalSettings.php",
    "**/settings.php",
    // Auto-loaded variable files hold the credentials; named `-var-file`s are tool input.
    "**/terraform.tfvars",
    "**/terraform.tfvars.json",
    "**/*.auto.tfvars",
    "**/*.auto.tfvars.json",
    "/etc/environment",
    "/etc/systemd/system/*.d/*.conf",
    "/run/systemd/system/*.d/*.conf",
    "**/.config/systemd/user/*.d/*.conf",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/dev/tcp/**",
    "/dev/udp/**",
    // Private keys by directory or extension (Puppet, tinc, DNSSEC and DKIM, borg).
    "**/ssl/private_keys/**",
    "**/*.priv",
    "**/*.private",
    "**/dkim/**.pem",
    "**/borg/keys/**",
    "**/sops/age/keys.txt",
    "**/age/key*.txt",
    "**/.age/**",
    // Raw database files of the account tables (password hashes).
    "/var/lib/mysql/mysql/**",
    "/var/lib/mysql/mysql.ibd",
    "/var/lib/postgresql/*/main/global/**",
    "/var/lib/pgsql/data/global/**",
    "/var/lib/pgsql/*/data/global/**",
    "**/atuin/key",
    "**/atuin/session",
    "**/*.psk",
    "**/master-key.aes",
    "/etc/libvirt/secrets/**",
    // Password files and hashes of services.
    "/etc/passwd-s3fs",
    "/etc/dovecot/users",
    "/etc/dovecot/passwd",
    "/etc/dovecot/dovecot-sql.conf.ext",
    "/etc/dovecot/dovecot-ldap.conf.ext",
    "**/users.acl",
    "/etc/mail/authinfo*",
    "**/userlist.txt",
    "/etc/mosquitto/pwfile",
    "/etc/snmp/snmpd.conf",
    "/var/lib/snmp/snmpd.conf",
    "/etc/openldap/slapd.conf",
    "/etc/ldap/slapd.conf",
    "/etc/nslcd.conf",
    "/etc/pam_ldap.conf",
    "/etc/libnss-ldap.conf",
    "/boot/**/user.cfg",
    "/etc/postfix/*sql*.cf",
    "/etc/postfix/ldap*.cf",
    "/etc/phpmyadmin/config-db.php",
    "/etc/zabbix/web/zabbix.conf.php",
    "/etc/zabbix/zabbix_server.conf",
    "/etc/zabbix/zabbix_proxy.conf",
    "/etc/icinga2/conf.d/api-users.conf",
    "/etc/rundeck/realm.properties",
    "/etc/matrix-synapse/**",
    "/etc/graylog/server/server.conf",
    "**/.htdigest",
    "**/pass.txt",
    "**/wp-config.php*",
    // Registry, cluster and cloud credentials by location.
    "/var/lib/kubelet/config.json",
    "**/.dockercfg",
    "/etc/docker/key.json",
    "/var/lib/docker/containers/*/config.v2.json",
    "/var/lib/cloud/**/user-data*",
    "/var/lib/cloud/seed/**",
    "/var/lib/etcd/**",
    "/etc/rancher/**.yaml",
    "/var/lib/rancher/rke2/server/**",
    "/etc/rancher/node/password",
    "**/k3s.yaml",
    "**/rke2.yaml",
    "**/admin.conf",
    "**/super-admin.conf",
    "**/.talos/config",
    "**/.talosconfig",
    "**/.influxdbv2/configs",
    "**/.runner",
    "**/github-copilot/*.json",
    "**/ngrok.yml",
    "**/.cloudflared/*.pem",
    "**/.cloudflared/*.json",
    "/etc/cloudflared/*.pem",
    "/etc/cloudflared/*.json",
    "**/*-key.json",
    "**/*_key.json",
    "**/key.json",
    "**/service-account*.json",
    "**/.linode-cli",
    "**/linode-cli",
    "**/.config/scw/**",
    "**/.vultr-cli.yaml",
    "**/.ovh.conf",
    "**/.ibmcloud/config.json",
    "**/wg0.conf",
    "**/wg1.conf",
    "**/wg2.conf",
];

/// Devices and kernel files whose open or read has an effect (a watchdog arms and reboots
/// the host, a tape rewinds, a serial line resets what hangs on it, a trace pipe or
/// `/proc/kmsg` is consumed, MMIO registers clear on read) or captures live input (key
/// presses, other terminals, screens, microphones, cameras).
const LIVE_DEVICES: &[&str] = &[
    "/dev/watchdog*",
    "/dev/input/**",
    "/dev/hidraw*",
    "/dev/uinput",
    "/dev/vcs*",
    "/dev/tty[0-9]*",
    "/dev/console",
    "/dev/pts/**",
    "/dev/ptmx",
    "/dev/ttyS*",
    "/dev/ttyUSB*",
    "/dev/ttyACM*",
    "/dev/ttyAMA*",
    "/dev/serial/**",
    "/dev/st[0-9]*",
    "/dev/nst*",
    "/dev/nvram",
    "/dev/snd/**",
    "/dev/video*",
    "/dev/fb[0-9]*",
    "/dev/ipmi*",
    "/dev/mei*",
    "/dev/tpm*",
    "/dev/rtc*",
    "/dev/hpet",
    "/dev/cpu/**",
    "/dev/sg[0-9]*",
    "/dev/bsg/**",
    "/dev/uio*",
    "/dev/i2c-*",
    "/dev/spidev*",
    "/dev/gpiochip*",
    "/dev/mcelog",
    "/dev/initctl",
    "/run/initctl",
    "/proc/kmsg",
    "/sys/kernel/tracing/**",
    "/sys/kernel/debug/**",
    "/sys/bus/pci/devices/*/resource*",
];

/// Secrets under these directories are reached by recursive reads (`grep -r`, `tar c`),
/// with `SECRET_SYSTEM`.
const SECRET_DIRS: &[&str] = &[
    "/etc/letsencrypt/**",
    "/etc/kubernetes/**",
    "/root/**",
    "/home/*/.ssh/**",
    "/home/*/.config/**",
    "/home/*/.gnupg/**",
    "/home/*/.aws/**",
    "/home/*/.kube/**",
    "/home/*/.docker/**",
    "/home/*/.netrc",
    "/home/*/.pgpass",
    "/home/*/.*_history",
    "~/.ssh/**",
    "~/.config/**",
    "~/.gnupg/**",
    "~/.aws/**",
    "~/.kube/**",
    "~/.docker/**",
    "~/.netrc",
    "~/.*_history",
    "/dev/**",
    // Other systems' root filesystems (containers, guests, machines).
    "/var/lib/lxc/**",
    "/var/lib/lxd/**",
    "/var/snap/lxd/**",
    "/var/lib/incus/**",
    "/var/lib/docker/overlay2/**",
    "/var/lib/containers/storage/**",
    "/var/lib/machines/**",
    "/etc/salt/pki/**",
    "/etc/luks-keys/**",
];

/// Suffixes that mark public halves of key pairs.
const PUBLIC_SUFFIXES: &[&str] = &[
    ".pub",
    ".crt",
    ".cert",
    "-cert.pem",
    "fullchain.pem",
    "chain.pem",
    "cert.pem",
    // PAM's password-change stack: configuration, no passwords.
    "/pam.d/common-password",
];

/// Write targets with no effect on state.
pub(crate) fn is_sink(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2" | "/dev/tty"
    )
}

/// Is writing `pat` (a resolved path pattern) destructive?
pub(crate) fn protected_write(pat: &str) -> Option<&'static str> {
    overlaps_any(pat, &PROTECTED)
}

/// Is writing to `pat` destructive when it may be a directory (`cp x /etc`, `mv key ~/.ssh/`)?
/// The file that lands inside is named by the source, so any protected entry directly in the
/// directory counts.
pub(crate) fn protected_write_into(pat: &str) -> Option<&'static str> {
    if let Some(rule) = protected_write(pat) {
        return Some(rule);
    }
    let dir = pat.trim_end_matches('/');
    if dir.is_empty() || dir.ends_with("/**") {
        return None;
    }
    // A key dropped into any `.ssh` directory can become `authorized_keys`.
    if dir.ends_with("/.ssh") || dir == "~/.ssh" {
        return Some("**/.ssh/**");
    }
    let mut inside = String::with_capacity(dir.len() + 2);
    inside.push_str(dir);
    // `**`, not `*`: the landing name comes from the source and may start with a dot.
    inside.push_str("/**");
    let literal = !has_meta(dir);
    let mut query = None;
    let inside_lit = &inside[..inside.find(['*', '?', '[']).unwrap_or(inside.len())];
    // Only anchored patterns: `**/.bashrc` would make every directory look protected. The
    // literal prefixes must agree before the (costlier) glob checks run.
    PROTECTED
        .pats
        .iter()
        .filter(|p| p.text.starts_with('/') && p.prefix_agrees(inside_lit))
        .find(|Pat { toks, .. }| {
            if literal {
                // A literal directory: run the automaton over `dir/` and ask whether one
                // more path component can reach acceptance (no glob intersection needed).
                run_small(toks, &inside[..inside.len() - 2])
                    .map(|set| set != 0 && accepts_component(toks, set))
                    .unwrap_or_else(|| {
                        overlaps_toks(toks, query.get_or_insert_with(|| compile(&inside)))
                    })
            } else {
                overlaps_toks(toks, query.get_or_insert_with(|| compile(&inside)))
            }
        })
        .map(|p| p.text)
}

/// From the automaton states `set`, can a run of characters without `/` reach acceptance?
fn accepts_component(toks: &[Tok], set: u128) -> bool {
    let n = toks.len();
    let mut reach = close_small(toks, set);
    loop {
        let mut next = reach;
        let mut bits = reach;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if i >= n {
                continue;
            }
            let steps = match &toks[i] {
                Tok::Char(c) => *c != '/',
                Tok::One | Tok::Star | Tok::DStar | Tok::Class(..) => true,
            };
            if steps {
                next |= 1 << (i + 1);
            }
        }
        let next = close_small(toks, next);
        if next == reach {
            return reach & (1 << n) != 0;
        }
        reach = next;
    }
}

/// `*` and `**` may match nothing; `**/` may match no directory.
fn close_small(toks: &[Tok], mut set: u128) -> u128 {
    for i in 0..toks.len() {
        if set & (1 << i) != 0 {
            if matches!(toks[i], Tok::Star | Tok::DStar) {
                set |= 1 << (i + 1);
            }
            if matches!(toks[i], Tok::DStar) && matches!(toks.get(i + 1), Some(Tok::Char('/'))) {
                set |= 1 << (i + 2);
            }
        }
    }
    set
}

/// Words in a file's name that say it holds a secret (a path list is never complete):
/// `api_token`, `db-credentials.txt`, `shadow.bak`, `tls.key.orig`, `deploy_rsa`,
/// `.erlang.cookie`, `.python_history`. Matched case-insensitively in the last component.
const SECRET_NAME_WORDS: &[&str] = &[
    "secret",
    "token",
    "credential",
    "passwd",
    "password",
    "passphrase",
    "shadow",
    ".key",
    "keyfile",
    "_rsa",
    "_dsa",
    "id_ecdsa",
    "id_ed25519",
    "vault",
    "cookie",
    "_history",
    "histfile",
    "kubeconfig",
    ".lesshst",
    ".viminfo",
    ".npmrc",
    ".netrc",
    ".pgpass",
    "authkey",
    ".priv",
    "private_key",
    "privatekey",
    "userlist",
    "authinfo",
    "user-data",
    "htdigest",
    "pwfile",
];

/// Names containing a word above that are public by convention.
fn public_name(name: &str) -> bool {
    // The account list and its backups hold no hashes (those are in `shadow`).
    // Only the account list's own spellings (`passwd`, `passwd-`, `passwd.bak`): not
    // `passwd-s3fs`, `passwd.txt` or Dovecot's `passwd` elsewhere (see the lists).
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "passwd"
            | "passwd-"
            | "passwd~"
            | "passwd.bak"
            | "passwd.old"
            | "passwd.orig"
            | "passwd.lock"
            | "passwd.dpkg-old"
            | "passwd.dpkg-dist"
            | "passwd.dpkg-new"
            | "passwd.5.gz"
            | "passwd.1.gz"
    ) || name.eq_ignore_ascii_case("shadow.5.gz")
        // Ansible's vault files are encrypted at rest.
        || name == "vault.yml"
        || name == "vault.yaml"
}

static SECRET_NAMES: std::sync::LazyLock<Option<aho_corasick::AhoCorasick>> =
    std::sync::LazyLock::new(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(SECRET_NAME_WORDS)
            .ok()
    });

/// Does the last component of `pat` name a secret (`SECRET_NAME_WORDS`)? Only its literal
/// text counts: `*token*` is a search, but `api_token*` names one.
fn secret_name(pat: &str) -> bool {
    let name = pat.rsplit('/').next().unwrap_or(pat);
    if name.is_empty() || public_name(name) {
        return false;
    }
    // `.env` variants: `.env.local`, `env.prod`, `prod.env`.
    let lower_starts = |p: &str| {
        name.len() >= p.len() && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    };
    if lower_starts(".env") || lower_starts("env.") {
        return true;
    }
    match &*SECRET_NAMES {
        Some(ac) => ac.is_match(name),
        // The automaton always builds from the fixed list; fail closed if it did not.
        None => true,
    }
}

/// Directory components after which a path may continue inside another system's root
/// filesystem (a guest subvolume, a container's rootfs, a mounted image or chroot).
const REROOT_AT: &[&str] = &["/etc/", "/root/", "/home/", "/var/", "/run/"];

/// The suffixes of `pat` that start at a system directory below its first component:
/// `/var/lib/lxc/web/rootfs/etc/shadow` may be a guest's `/etc/shadow`.
fn guest_suffixes(pat: &str) -> impl Iterator<Item = &str> {
    pat.match_indices('/')
        .filter(|&(i, _)| i > 0)
        .map(move |(i, _)| &pat[i..])
        .filter(|rest| {
            REROOT_AT
                .iter()
                .any(|r| rest.starts_with(r) || rest.len() + 1 == r.len() && r.starts_with(rest))
        })
}

/// Roots of other systems' filesystems: reading below them recursively reads their
/// `/etc/shadow` and `/root`.
const GUEST_ROOTS: &[&str] = &[
    "**/rootfs",
    "**/subvol-*-disk-*",
    "**/vm-*-disk-*",
    "/var/lib/docker/overlay2/*/merged",
    "/var/lib/docker/overlay2/*/diff",
    "/var/lib/containers/storage/overlay/*/merged",
    "/var/lib/containers/storage/overlay/*/diff",
    "/var/lib/machines/*",
    "/mnt/*",
    "/proc/[0-9]*/root",
    "/proc/self/root",
    "/proc/[0-9]*/cwd",
    "/proc/self/cwd",
];

/// Does reading `pat` (a resolved path pattern) possibly disclose a secret? Also checks
/// each suffix that may be the same file inside a guest's root filesystem.
pub(crate) fn secret_read(pat: &str) -> Option<&'static str> {
    if let Some(s) = secret_read_here(pat) {
        return Some(s);
    }
    guest_suffixes(pat).find_map(secret_read_here)
}

fn secret_read_here(pat: &str) -> Option<&'static str> {
    // cloudflared's `cert.pem` holds the tunnel token and a private key.
    if PUBLIC_SUFFIXES.iter().any(|s| pat.ends_with(s)) && !pat.contains("cloudflared/") {
        return None;
    }
    if let Some(s) = ssh_private(pat)
        .or_else(|| dev_volume(pat))
        .or_else(|| key_glob(pat))
    {
        return Some(s);
    }
    // The lists first (their rule names the file), then the name's own words.
    secret_listed(pat).or_else(|| secret_name(pat).then_some("a file named for a secret"))
}

/// Files in a `.ssh` directory other than the public ones are private keys by any name
/// (`~/.ssh/github`, `identity`). A wildcard name may meet one.
fn ssh_private(pat: &str) -> Option<&'static str> {
    const PUBLIC: &[&str] = &[
        "known_hosts",
        "known_hosts.old",
        "config",
        "authorized_keys",
        "authorized_keys2",
    ];
    let (dir, name) = pat.rsplit_once('/')?;
    if !dir.ends_with("/.ssh") && dir != ".ssh" {
        return None;
    }
    if name.is_empty() {
        return None;
    }
    if !has_meta(name) && (PUBLIC.contains(&name) || name.ends_with(".pub")) {
        return None;
    }
    Some("**/.ssh/* (a private key by any name)")
}

/// A wildcard file name whose literal part says it is after keys (`/root/*.pem`,
/// `*key*`, `id_*`): it can only be meant to meet a private key. Certificate directories
/// hold public PEM files.
fn key_glob(pat: &str) -> Option<&'static str> {
    const WORDS: &[&str] = &[
        "key", "pem", "id_", "cred", "pass", "secret", "token", "p12", "pfx", "rsa", "ed25519",
        "ecdsa", ".env", "kdbx", "keytab", "ppk",
    ];
    let (dir, name) = pat.rsplit_once('/').unwrap_or(("", pat));
    if !has_meta(name) || dir.contains("cert") || dir.contains("/ca") {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".pub") || lower.ends_with(".crt") {
        return None;
    }
    WORDS
        .iter()
        .any(|w| lower.contains(w))
        .then_some("a wildcard naming key files")
}

/// `/dev/<vg>/<lv>`: LVM logical volumes (`/dev/pve/root`, `/dev/pve/vm-100-disk-0`) and
/// any other device under a subdirectory of `/dev` that is not a known non-disk class.
fn dev_volume(pat: &str) -> Option<&'static str> {
    const NOT_DISKS: &[&str] = &[
        "pts",
        "shm",
        "fd",
        "net",
        "input",
        "snd",
        "dri",
        "bus",
        "char",
        "hugepages",
        "mqueue",
        "cpu",
        "usb",
        "v4l",
        "serial",
        "vfio",
        "hidraw",
        "tty",
        "console",
        "log",
        "null",
        "stdin",
        "stdout",
        "stderr",
        "tcp",
        "udp",
        "hwrng",
        "kvm",
        "fuse",
        "vhost-net",
    ];
    let rest = pat.strip_prefix("/dev/")?;
    let (first, below) = rest.split_once('/')?;
    if below.is_empty() {
        return None;
    }
    if !has_meta(first) && NOT_DISKS.contains(&first) {
        return None;
    }
    Some("/dev/<group>/<volume> (a logical volume)")
}

fn secret_listed(pat: &str) -> Option<&'static str> {
    if pat == "**" || pat == "**/*" {
        return Some("**");
    }
    // Anything inside a directory named `secrets` (Docker and Traefik secret files). Only
    // a literal component counts: `/proc/*/limits` is not a secrets directory.
    if pat.split('/').any(|c| c == "secrets" || c == "secret") {
        return Some("**/secrets/**");
    }
    // "Some file under DIR" (find output, xargs input): judge the directory.
    if let Some(dir) = pat.strip_suffix("/**")
        && !has_meta(dir)
    {
        return secret_under(dir);
    }
    // "A file named NAME somewhere under DIR": the directory, then the name.
    if let Some((dir, name)) = pat.split_once("/**/")
        && !has_meta(dir)
        && !name.contains('/')
    {
        if let Some(s) = secret_under(dir) {
            return Some(s);
        }
        // `find -name` (where this form comes from) also matches dot files; a wildcard
        // name meets only the secrets it names (see `names_may_meet`).
        let q = compile(name);
        return SECRETS
            .pats
            .iter()
            .filter(|p| p.text.strip_prefix("**/").is_some_and(|b| !b.contains('/')))
            .filter(|p| names_may_meet(p, name))
            .find(|p| overlaps_toks_with(&p.toks[2..], &q, false))
            .map(|p| p.text);
    }
    overlaps_any(pat, &SECRETS)
}

/// Does a recursive read under directory `dir` possibly disclose a secret? A guest's
/// root filesystem counts as `/`, and a system directory inside one as itself.
pub(crate) fn secret_under(dir: &str) -> Option<&'static str> {
    if let Some(s) = secret_under_here(dir) {
        return Some(s);
    }
    let trimmed = dir.trim_end_matches('/');
    if let Some(root) = overlaps_any(trimmed, &GUEST_ROOT_LIST) {
        return Some(root);
    }
    guest_suffixes(trimmed).find_map(secret_under_here)
}

fn secret_under_here(dir: &str) -> Option<&'static str> {
    // The operand itself may be a file (`grep -r x /opt/*/.env` reads those files).
    if let Some(s) = secret_read(dir) {
        return Some(s);
    }
    let trimmed = dir.trim_end_matches('/');
    if has_meta(trimmed) {
        let mut below = String::with_capacity(trimmed.len() + 3);
        below.push_str(trimmed);
        below.push_str("/**");
        return overlaps_any(&below, &SECRET_DIR_LIST);
    }
    // A secret is under DIR when its pattern can still match after reading "DIR/".
    let c = &*SECRET_DIR_LIST;
    c.pats
        .iter()
        // Cheap reject first: the literal prefixes must agree where both are defined.
        .filter(|p| p.prefix_agrees(trimmed))
        .find(|p| alive_after(&p.toks, trimmed) && alive_after_slash(&p.toks, trimmed))
        .map(|p| p.text)
}

fn alive_after(toks: &[Tok], text: &str) -> bool {
    run_small(toks, text).is_some_and(|s| s != 0)
}

fn alive_after_slash(toks: &[Tok], dir: &str) -> bool {
    let mut t = String::with_capacity(dir.len() + 1);
    t.push_str(dir);
    t.push('/');
    run_small(toks, &t).is_some_and(|s| s != 0)
}

/// A pattern list prepared for fast checks against literal paths.
struct Compiled {
    pats: Vec<Pat>,
    /// `pats[i].bits`, packed: the literal-path scan reads only this (2 KiB, not the
    /// whole pattern table) until a pattern can possibly match.
    bits: Vec<u64>,
}

/// One pattern with what the fast paths need, computed once.
struct Pat {
    text: &'static str,
    /// The literal characters before the first metacharacter.
    prefix: &'static str,
    /// The literal characters every match ends with (see [`literal_ends`]).
    suffix: String,
    /// The longest literal run, and its byte-pair set.
    needle: &'static str,
    bits: u64,
    toks: Vec<Tok>,
    /// The last path component, when it has no `**`: two patterns can only overlap if
    /// their last components do (a cheap test before the full one).
    last: Option<Vec<Tok>>,
    /// The pattern as a sequence of path components (see [`Pat::components_may_meet`]);
    /// `None` when its `/` are not all separators or it has too many components.
    comps: Option<Vec<Comp>>,
}

/// One component of a list pattern, for the component-level automaton.
enum Comp {
    /// A component without `**`: exactly one path component it must overlap.
    One(Vec<Tok>),
    /// `**` alone: any number of components, none included.
    Any,
    /// Any one component (the first of a component like `**config.json`, which spans one
    /// or more components; an `Any` follows it).
    Some,
}

/// Is every `/` of `p` a plain separator (none escaped, none inside a bracket expression)?
/// Only then do its components, split at `/`, stand for path components.
fn splits_cleanly(p: &str) -> bool {
    if p.contains('\\') {
        return false;
    }
    let mut rest = p;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        // `[]…]`, `[!]…]`: a `]` first in the set is a member, not the end.
        let skip = after.len() - after.trim_start_matches(['!', '^']).len();
        let skip = skip + usize::from(after[skip..].starts_with(']'));
        let close = after[skip..].find(']').map_or(after.len(), |c| c + skip);
        if after[..close].contains('/') {
            return false;
        }
        rest = &after[close.min(after.len())..];
    }
    true
}

/// `p` as components for [`Pat::components_may_meet`] (at most 62, so positions fit a
/// `u64`), if each of its `/` is a separator.
fn components(p: &str) -> Option<Vec<Comp>> {
    if !splits_cleanly(p) {
        return None;
    }
    let mut out = Vec::new();
    for c in p.split('/') {
        if c == "**" {
            out.push(Comp::Any);
        } else if c.contains("**") {
            out.extend([Comp::Some, Comp::Any]);
        } else {
            out.push(Comp::One(compile(c)));
        }
    }
    (out.len() < 63).then_some(out)
}

/// The tokens of the last component of `p`, if that component has no `**` and `p` has a `/`.
fn last_component(p: &str) -> Option<Vec<Tok>> {
    let (_, last) = p.rsplit_once('/')?;
    (!last.contains("**")).then(|| compile(last))
}

impl Pat {
    /// Can this pattern meet a query without `**` whose components (split at `/`, empty
    /// ones kept) are `q`? Every `/` of such a query is literal and its wildcards never
    /// match `/`, so a path matching it has exactly its components, position by position;
    /// this pattern's components must then walk them in order, a `**` taking any number.
    /// A necessary condition only, run on components (a few short automata) before the
    /// whole-path automaton: most of a list fails it on its literal components.
    fn components_may_meet(&self, q: &[Vec<Tok>]) -> bool {
        let Some(comps) = &self.comps else {
            return true;
        };
        let n = comps.len();
        // Positions in `comps` reached, as bits; `Any` may be passed over for free.
        let close = |mut set: u64| {
            for (i, c) in comps.iter().enumerate() {
                if set & (1 << i) != 0 && matches!(c, Comp::Any) {
                    set |= 1 << (i + 1);
                }
            }
            set
        };
        let mut cur = close(1);
        for qc in q {
            let mut next = 0u64;
            let mut bits = cur;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                match comps.get(i) {
                    Some(Comp::One(t)) if comp_overlaps(t, qc) => next |= 1 << (i + 1),
                    Some(Comp::Any) => next |= 1 << i,
                    Some(Comp::Some) => next |= 1 << (i + 1),
                    _ => {}
                }
            }
            cur = close(next);
            if cur == 0 {
                return false;
            }
        }
        cur & (1 << n) != 0
    }

    /// Can this pattern and a path starting with literal `lit` agree on their prefixes?
    fn prefix_agrees(&self, lit: &str) -> bool {
        let n = self.prefix.len().min(lit.len());
        self.prefix.as_bytes()[..n] == lit.as_bytes()[..n]
    }
}

impl Compiled {
    fn new(lists: &[&[&'static str]]) -> Self {
        Self {
            pats: lists
                .iter()
                .flat_map(|l| l.iter())
                .map(|p| {
                    let needle = needle(p);
                    let toks = compile(p);
                    Pat {
                        text: p,
                        prefix: &p[..p.find(['*', '?', '[']).unwrap_or(p.len())],
                        suffix: literal_ends(&toks).1,
                        needle,
                        bits: bigrams(needle),
                        toks,
                        last: last_component(p),
                        comps: components(p),
                    }
                })
                .collect::<Vec<Pat>>(),
            bits: Vec::new(),
        }
        .with_bits()
    }

    fn with_bits(mut self) -> Self {
        self.bits = self.pats.iter().map(|p| p.bits).collect();
        self
    }
}

/// A 64-bit set of the byte pairs in `s`: a needle can only occur in a path whose set
/// contains the needle's set.
fn bigrams(s: &str) -> u64 {
    let b = s.as_bytes();
    let mut bits = 0u64;
    for w in b.windows(2) {
        let h = (u32::from(w[0]).wrapping_mul(31) ^ u32::from(w[1])) % 64;
        bits |= 1 << h;
    }
    bits
}

static PROTECTED: std::sync::LazyLock<Compiled> =
    std::sync::LazyLock::new(|| Compiled::new(&[PROTECTED_WRITE]));
static SECRETS: std::sync::LazyLock<Compiled> =
    std::sync::LazyLock::new(|| Compiled::new(&[SECRET_SYSTEM, SECRET_READ, LIVE_DEVICES]));
static GUEST_ROOT_LIST: std::sync::LazyLock<Compiled> =
    std::sync::LazyLock::new(|| Compiled::new(&[GUEST_ROOTS]));
static SECRET_DIR_LIST: std::sync::LazyLock<Compiled> =
    std::sync::LazyLock::new(|| Compiled::new(&[SECRET_SYSTEM, SECRET_DIRS]));

fn overlaps_any(pat: &str, c: &Compiled) -> Option<&'static str> {
    if has_meta(pat) {
        // Two patterns can only overlap if their literal prefixes agree.
        let lit = &pat[..pat.find(['*', '?', '[', '\\']).unwrap_or(pat.len())];
        let last = pat.rsplit('/').next().unwrap_or(pat);
        let q_last = last_component(pat);
        // Empty components are kept: they hold positions (see `components_may_meet`).
        let q_comps: Option<Vec<Vec<Tok>>> = (!pat.contains("**") && splits_cleanly(pat))
            .then(|| pat.split('/').map(compile).collect());
        let mut q = None;
        return c
            .pats
            .iter()
            .filter(|p| p.prefix_agrees(lit))
            .filter(|p| names_may_meet(p, last))
            .filter(|p| match (&p.last, &q_last) {
                (Some(a), Some(b)) => comp_overlaps(a, b),
                _ => true,
            })
            .filter(|p| q_comps.as_ref().is_none_or(|qc| p.components_may_meet(qc)))
            .find(|p| overlaps_toks(&p.toks, q.get_or_insert_with(|| compile(pat))))
            .map(|p| p.text);
    }
    let bits = bigrams(pat);
    for (i, nbits) in c.bits.iter().enumerate() {
        if nbits & bits != *nbits {
            continue;
        }
        let p = &c.pats[i];
        // A literal path must carry the pattern's literal ends before the automaton runs.
        if pat.starts_with(p.prefix)
            && pat.ends_with(p.suffix.as_str())
            && pat.contains(p.needle)
            && match_toks(&p.toks, pat)
        {
            return Some(p.text);
        }
    }
    None
}

/// For a name-only list pattern (`**/rclone.conf`, `**/*.key`) and a query whose last name
/// has wildcards: does the query ask for that kind of file? `*.conf` is a file type and
/// `dpkg.log*` a log family, not `rclone.conf` or `dpkg.log.key`; `*.key`, `id_*` and
/// `.env*` do name them.
fn names_may_meet(p: &Pat, last: &str) -> bool {
    let Some(name) = p.text.strip_prefix("**/") else {
        return true;
    };
    if name.contains('/') || !has_meta(last) {
        return true;
    }
    let q_lit = &last[..last.find(['*', '?', '[', '\\']).unwrap_or(last.len())];
    let n_lit = &name[..name.find(['*', '?', '[']).unwrap_or(name.len())];
    last.split(['*', '?', '[', ']'])
        .any(|seg| seg.contains(p.needle))
        || (!q_lit.is_empty()
            && !n_lit.is_empty()
            && (q_lit.starts_with(n_lit) || n_lit.starts_with(q_lit)))
}

/// Is `toks[i]` the `/` of a `**/`? That `/` may match nothing, like the `**`.
fn after_dstar(toks: &[Tok], i: usize) -> bool {
    i > 0 && matches!(toks[i], Tok::Char('/')) && matches!(toks[i - 1], Tok::DStar)
}

/// The literal text every match of `toks` starts with, and the literal text every match
/// ends with (cheap rejects before an automaton runs).
fn literal_ends(toks: &[Tok]) -> (String, String) {
    let lit = |t: &Tok| match t {
        Tok::Char(c) => Some(*c),
        _ => None,
    };
    let prefix = toks.iter().map_while(lit).collect();
    let mut tail = toks.len() - toks.iter().rev().map_while(lit).count();
    if tail < toks.len() && after_dstar(toks, tail) {
        tail += 1;
    }
    (prefix, toks[tail..].iter().filter_map(lit).collect())
}

/// The longest run of literal characters in a pattern.
fn needle(p: &str) -> &str {
    p.split(['*', '?', '['])
        .max_by_key(|s| s.len())
        .unwrap_or("")
}

pub(crate) fn has_meta(s: &str) -> bool {
    s.contains(['*', '?', '[', '\\'])
}

/// Escapes glob metacharacters so a literal can be embedded in a pattern.
pub(crate) fn escape_into(s: &str, out: &mut String) {
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// What follows the last `..` of `pat`, as an absolute path. Any component before a `..`
/// may be a symlink (`/var/run` is `/run`, `/proc/self/cwd` is another tree), so the
/// lexical answer of [`resolve`] is only one of the places the path reaches; the tail is
/// the file it names wherever it lands, and is judged as if at the root (secret lists
/// also match inside guests' roots, see `guest_suffixes`).
pub(crate) fn dotdot_tail(pat: &str) -> Option<String> {
    let i = pat.rfind("..")?;
    let before_ok = i == 0 || pat.as_bytes()[i - 1] == b'/';
    let after = &pat[i + 2..];
    if !before_ok || !(after.is_empty() || after.starts_with('/')) {
        return None;
    }
    // A `..` at the start of a relative path under a known directory resolves lexically
    // only if nothing before it is a link; the tail covers the other case.
    let rest = after.trim_start_matches('/');
    let tail = normalize(Cow::Owned(format!("/{rest}")));
    Some(tail.into_owned())
}

/// Normalises `.`, `..` and repeated slashes; relative paths are resolved against
/// `cwd` (`None`: unknown directory, so the path may be anywhere).
pub(crate) fn resolve<'a>(pat: &'a str, cwd: Option<&str>) -> Cow<'a, str> {
    if pat.starts_with('/') || pat.starts_with('~') || pat.starts_with("**") {
        return normalize(Cow::Borrowed(pat));
    }
    let joined = match cwd {
        Some(c) => format!("{c}/{pat}"),
        None => format!("**/{pat}"),
    };
    normalize(Cow::Owned(joined))
}

fn normalize(p: Cow<'_, str>) -> Cow<'_, str> {
    if !(p.contains("/.") || p.contains("//") || (p.len() > 1 && p.ends_with('/'))) {
        return p;
    }
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for comp in p.split('/') {
        match comp {
            "" | "." => {}
            ".." => match parts.last() {
                Some(last) if !has_meta(last) && !last.starts_with('~') => {
                    parts.pop();
                }
                Some(_) => return Cow::Borrowed("**"),
                None => {}
            },
            c => parts.push(c),
        }
    }
    let mut out = String::with_capacity(p.len());
    if absolute {
        out.push('/');
    }
    out.push_str(&parts.join("/"));
    if out.is_empty() {
        out.push('.');
    }
    Cow::Owned(out)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Char(char),
    /// `?`: one character except `/`.
    One,
    /// `*`: any run without `/`.
    Star,
    /// `**`: any run.
    DStar,
    /// `[…]`: (negated, ranges).
    Class(bool, Vec<(char, char)>),
}

fn compile(p: &str) -> Vec<Tok> {
    let cs: Vec<char> = p.chars().collect();
    let mut out = Vec::with_capacity(cs.len());
    let mut i = 0;
    while i < cs.len() {
        match cs[i] {
            '\\' if i + 1 < cs.len() => {
                out.push(Tok::Char(cs[i + 1]));
                i += 2;
            }
            '*' => {
                if cs.get(i + 1) == Some(&'*') {
                    out.push(Tok::DStar);
                    i += 2;
                } else {
                    out.push(Tok::Star);
                    i += 1;
                }
            }
            '?' => {
                out.push(Tok::One);
                i += 1;
            }
            '[' => {
                let mut j = i + 1;
                let neg = matches!(cs.get(j), Some('!' | '^'));
                if neg {
                    j += 1;
                }
                let start = j;
                let mut ranges = Vec::new();
                let mut closed = false;
                while j < cs.len() {
                    if cs[j] == ']' && j > start {
                        closed = true;
                        break;
                    }
                    if cs[j] == '[' && cs.get(j + 1) == Some(&':') {
                        // Character classes: approximate as "any".
                        if let Some(end) = cs[j..].iter().collect::<String>().find(":]") {
                            ranges.push(('\u{1}', char::MAX));
                            j += end + 2;
                            continue;
                        }
                    }
                    if cs.get(j + 1) == Some(&'-') && cs.get(j + 2).is_some_and(|c| *c != ']') {
                        ranges.push((cs[j], cs[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((cs[j], cs[j]));
                        j += 1;
                    }
                }
                if closed {
                    out.push(Tok::Class(neg, ranges));
                    i = j + 1;
                } else {
                    out.push(Tok::Char('['));
                    i += 1;
                }
            }
            c => {
                out.push(Tok::Char(c));
                i += 1;
            }
        }
    }
    out
}

fn tok_accepts(t: &Tok, c: char) -> bool {
    match t {
        Tok::Char(x) => *x == c,
        Tok::One | Tok::Star => c != '/',
        Tok::DStar => true,
        Tok::Class(neg, ranges) => {
            c != '/' && (ranges.iter().any(|(a, b)| (*a..=*b).contains(&c)) != *neg)
        }
    }
}

fn closure(toks: &[Tok], set: &mut [bool]) {
    // `*` and `**` may match nothing: a state before them reaches the next one.
    for i in 0..toks.len() {
        if set[i] && matches!(toks[i], Tok::Star | Tok::DStar) {
            set[i + 1] = true;
        }
        // `**/` matches zero directories: skip the slash after `**`.
        if set[i]
            && matches!(toks[i], Tok::DStar)
            && matches!(toks.get(i + 1), Some(Tok::Char('/')))
        {
            set[i + 2] = true;
        }
    }
}

/// Does `text` (a literal path or name) match glob `pat`?
pub(crate) fn glob_match(pat: &str, text: &str) -> bool {
    match_toks(&compile(pat), text)
}

fn match_toks(toks: &[Tok], text: &str) -> bool {
    if toks.len() < 127 {
        return match_small(toks, text);
    }
    match_vec(toks, text)
}

/// The same automaton with a 128-bit state set (no allocation).
fn match_small(toks: &[Tok], text: &str) -> bool {
    run_small(toks, text).is_some_and(|s| s & (1 << toks.len()) != 0)
}

/// Runs the automaton over `text`; the final state set (`None` for long patterns).
fn run_small(toks: &[Tok], text: &str) -> Option<u128> {
    let n = toks.len();
    if n >= 127 {
        return None;
    }
    let close = |set: u128| close_small(toks, set);
    let mut cur = close(1);
    for c in text.chars() {
        let mut next = 0u128;
        let mut bits = cur;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if i >= n {
                continue;
            }
            let t = &toks[i];
            if tok_accepts(t, c) {
                next |= if matches!(t, Tok::Star | Tok::DStar) {
                    1 << i
                } else {
                    1 << (i + 1)
                };
            }
        }
        if next == 0 {
            return Some(0);
        }
        cur = close(next);
    }
    Some(cur)
}

fn match_vec(toks: &[Tok], text: &str) -> bool {
    let n = toks.len();
    let mut cur = vec![false; n + 1];
    cur[0] = true;
    closure(toks, &mut cur);
    let mut next = vec![false; n + 1];
    for c in text.chars() {
        next.iter_mut().for_each(|b| *b = false);
        let mut any = false;
        for i in 0..n {
            if !cur[i] {
                continue;
            }
            let t = &toks[i];
            if tok_accepts(t, c) {
                any = true;
                if matches!(t, Tok::Star | Tok::DStar) {
                    next[i] = true;
                } else {
                    next[i + 1] = true;
                }
            }
        }
        if !any {
            return false;
        }
        closure(toks, &mut next);
        std::mem::swap(&mut cur, &mut next);
    }
    cur[n]
}

/// A glob compiled once (spec protect rules).
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    toks: Vec<Tok>,
    /// The pattern itself when it has no metacharacters (most protect words: `sshd`).
    literal: Option<String>,
    /// Literal text every match starts and ends with, and the fewest characters a
    /// match has; `exact` when it has no `*`: cheap rejects before the automaton runs.
    prefix: String,
    suffix: String,
    min_chars: usize,
    exact: bool,
}

impl Glob {
    pub(crate) fn new(p: &str) -> Self {
        let toks = compile(p);
        let (prefix, suffix) = literal_ends(&toks);
        let min_chars = (0..toks.len())
            .filter(|&i| !matches!(toks[i], Tok::Star | Tok::DStar) && !after_dstar(&toks, i))
            .count();
        Self {
            literal: (!has_meta(p)).then(|| p.to_owned()),
            prefix,
            suffix,
            exact: min_chars == toks.len(),
            min_chars,
            toks,
        }
    }

    /// Matches a literal text.
    pub(crate) fn matches(&self, text: &str) -> bool {
        if let Some(l) = &self.literal {
            return l == text;
        }
        // A text has at least as many bytes as characters.
        if text.len() < self.min_chars
            || (self.exact && text.is_ascii() && text.len() != self.min_chars)
            || !text.starts_with(self.prefix.as_str())
            || !text.ends_with(self.suffix.as_str())
        {
            return false;
        }
        // A one-character token at either end must accept the character there (literal
        // ends were checked above).
        let edge = |t: Option<&Tok>, c: Option<char>| match t {
            Some(t @ (Tok::One | Tok::Class(..))) => c.is_some_and(|c| tok_accepts(t, c)),
            _ => true,
        };
        edge(self.toks.first(), text.chars().next())
            && edge(self.toks.last(), text.chars().next_back())
            && match_toks(&self.toks, text)
    }

    /// Could some text match both this glob and `other`?
    pub(crate) fn overlaps(&self, other: &str) -> bool {
        overlaps_toks(&self.toks, &compile(other))
    }
}

/// Could some path match both patterns?
#[cfg(test)]
fn overlaps(a: &str, b: &str) -> bool {
    overlaps_toks(&compile(a), &compile(b))
}

/// [`overlaps_toks`] for two single path components, with the cases the component filters
/// meet most answered without the automaton: two literal names are equal or not, and a
/// query's bare `*` meets any name that does not have to start with `.`.
fn comp_overlaps(ta: &[Tok], tb: &[Tok]) -> bool {
    let literal = |t: &[Tok]| t.iter().all(|t| matches!(t, Tok::Char(_)));
    if tb == [Tok::Star] {
        return ta.first() != Some(&Tok::Char('.'));
    }
    let text = |t: &[Tok]| -> String {
        t.iter()
            .filter_map(|t| match t {
                Tok::Char(c) => Some(*c),
                _ => None,
            })
            .collect()
    };
    match (literal(ta), literal(tb)) {
        (true, true) => ta == tb,
        // One side is a name: the other matches it. A dot name against a query starting
        // with a wildcard keeps the automaton, which owns the shell's leading-dot rule.
        (true, false) => {
            let name = text(ta);
            if name.starts_with('.')
                && matches!(tb.first(), Some(Tok::Star | Tok::One | Tok::Class(..)))
            {
                overlaps_toks(ta, tb)
            } else {
                match_toks(tb, &name)
            }
        }
        (false, true) => match_toks(ta, &text(tb)),
        (false, false) => overlaps_toks(ta, tb),
    }
}

/// Can some path match both `ta` (a list pattern) and `tb` (a query pattern)? The query
/// follows shell globbing: a wildcard at the start of a name never matches a leading `.`
/// (`/root/*` is not `/root/.bashrc`); list patterns and `**` have no such rule.
fn overlaps_toks(ta: &[Tok], tb: &[Tok]) -> bool {
    overlaps_toks_with(ta, tb, true)
}

/// [`overlaps_toks`], with the leading-dot rule for the query switched by `shell`.
fn overlaps_toks_with(ta: &[Tok], tb: &[Tok], shell: bool) -> bool {
    // One pair of buffers per thread: only the `seen` bits need clearing for each search
    // (the stack is written before it is read), and nothing is allocated after warm-up.
    thread_local! {
        static BUFFERS: std::cell::RefCell<(Vec<u64>, Vec<u32>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    let states = (ta.len() + 1) * (tb.len() + 1) * 2;
    BUFFERS.with(|b| match b.try_borrow_mut() {
        Ok(mut b) => {
            let (seen, stack) = &mut *b;
            let words = states.div_ceil(64);
            if seen.len() < words {
                seen.resize(words, 0);
            }
            seen[..words].fill(0);
            if stack.len() < states {
                stack.resize(states, 0);
            }
            product_search(ta, tb, shell, &mut seen[..words], &mut stack[..states])
        }
        // Not re-entered today; stay correct if it ever is.
        Err(_) => product_search(
            ta,
            tb,
            shell,
            &mut vec![0u64; states.div_ceil(64)],
            &mut vec![0u32; states],
        ),
    })
}

/// Depth-first search of the product automaton. A state is (position in `ta`, position in
/// `tb`, whether the next character starts a name), packed into one index; each state is
/// pushed at most once, so `stack` needs one slot per state.
fn product_search(
    ta: &[Tok],
    tb: &[Tok],
    shell: bool,
    seen: &mut [u64],
    stack: &mut [u32],
) -> bool {
    let (na, nb) = (ta.len(), tb.len());
    let idx = |i: usize, j: usize, at: bool| ((i * (nb + 1) + j) << 1) | usize::from(at);
    let mut top = 0usize;
    let push = |k: usize, seen: &mut [u64], stack: &mut [u32], top: &mut usize| {
        if seen[k / 64] & (1 << (k % 64)) == 0 {
            seen[k / 64] |= 1 << (k % 64);
            // Indices fit: the state count bounds them and is far below u32::MAX.
            stack[*top] = k as u32;
            *top += 1;
        }
    };
    push(idx(0, 0, true), seen, stack, &mut top);
    while top > 0 {
        top -= 1;
        let k = stack[top] as usize;
        let at = k & 1 == 1;
        let (i, j) = ((k >> 1) / (nb + 1), (k >> 1) % (nb + 1));
        if i == na && j == nb {
            return true;
        }
        // Epsilon moves.
        if i < na && matches!(ta[i], Tok::Star | Tok::DStar) {
            push(idx(i + 1, j, at), seen, stack, &mut top);
        }
        // `**/` may match no directory, but only where a name starts.
        if at && i < na && ta[i] == Tok::DStar && matches!(ta.get(i + 1), Some(Tok::Char('/'))) {
            push(idx(i + 2, j, at), seen, stack, &mut top);
        }
        if j < nb && matches!(tb[j], Tok::Star | Tok::DStar) {
            push(idx(i, j + 1, at), seen, stack, &mut top);
        }
        if at && j < nb && tb[j] == Tok::DStar && matches!(tb.get(j + 1), Some(Tok::Char('/'))) {
            push(idx(i, j + 2, at), seen, stack, &mut top);
        }
        if i < na && j < nb && toks_intersect(&ta[i], &tb[j]) {
            // Consume one common character; a shell wildcard never starts a name with `.`.
            let shell_wild = shell && matches!(tb[j], Tok::Star | Tok::One | Tok::Class(..));
            if !(at && shell_wild && ta[i] == Tok::Char('.')) {
                let ni = if matches!(ta[i], Tok::Star | Tok::DStar) {
                    i
                } else {
                    i + 1
                };
                let nj = if matches!(tb[j], Tok::Star | Tok::DStar) {
                    j
                } else {
                    j + 1
                };
                match (&ta[i], &tb[j]) {
                    (Tok::Char(c), _) | (_, Tok::Char(c)) => {
                        push(idx(ni, nj, *c == '/'), seen, stack, &mut top)
                    }
                    (Tok::DStar, Tok::DStar) => {
                        push(idx(ni, nj, true), seen, stack, &mut top);
                        push(idx(ni, nj, false), seen, stack, &mut top);
                    }
                    // Every other pair excludes `/`.
                    _ => push(idx(ni, nj, false), seen, stack, &mut top),
                }
            }
        }
    }
    false
}

fn toks_intersect(a: &Tok, b: &Tok) -> bool {
    match (a, b) {
        (Tok::Char(x), t) | (t, Tok::Char(x)) => tok_accepts(t, *x),
        (Tok::DStar, _) | (_, Tok::DStar) => true,
        (Tok::One | Tok::Star, Tok::One | Tok::Star) => true,
        // Classes against classes or wildcards: assume some common character.
        _ => true,
    }
}

// Names that say they hold a secret: environment variables, configuration keys (used by
// the handlers and the SQL analyser, next to the path lists they complement).

/// Environment variable names that by convention hold credentials (in containers and on
/// remote hosts; the executor's own environment has none).
pub(crate) fn secret_variable_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "PASSWORD",
        "PASSWD",
        "SECRET",
        "TOKEN",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "ACCESS_KEY",
        "CREDENTIAL",
        "_PASS",
        "AUTHKEY",
        "AUTH_KEY",
        "CLAIM",
        "DATABASE_URL",
        "_DSN",
        "WEBHOOK",
        "NOTIFICATION_URL",
        "AUTH_CONFIG",
        "_PWD",
        "PASSPHRASE",
        "CREDS",
        "COOKIE",
        "BEARER",
    ]
    .iter()
    .any(|k| n.contains(k))
        || ["_KEY", "_SK", "_PW", "_AUTH", "_KEYS"]
            .iter()
            .any(|k| n.ends_with(k))
        || connection_string_name(&n)
}

/// `REDIS_URL`, `MONGO_URI`, `AMQP_URL`, `CELERY_BROKER_URL`: a URL to a database, cache or
/// broker carries its user and password (`redis://:pw@host`). Plain `*_URL` names
/// (`BASE_URL`, `HOMEPAGE_URL`) stay readable.
pub(crate) fn connection_string_name(upper: &str) -> bool {
    const SERVICES: &[&str] = &[
        "REDIS",
        "MONGO",
        "AMQP",
        "RABBIT",
        "POSTGRES",
        "PG",
        "MYSQL",
        "MARIA",
        "DB",
        "DATABASE",
        "BROKER",
        "CACHE",
        "CONN",
        "ELASTIC",
        "OPENSEARCH",
        "KAFKA",
        "SQL",
        "SMTP",
        "MAIL",
        "NATS",
        "MQ",
        "MEMCACHE",
        "CLICKHOUSE",
        "INFLUX",
        "COUCH",
        "NEO4J",
        "CASSANDRA",
        "LDAP",
        "S3",
        "MINIO",
        "SENTRY",
        "PROXY",
        "REPO",
        "REGISTRY",
        "GIT",
        "STORAGE",
    ];
    let Some(stem) = [
        "_URL",
        "_URI",
        "_URLS",
        "_URIS",
        "_DSN",
        "_CONNECTION",
        "_CONNSTR",
    ]
    .iter()
    .find_map(|s| upper.strip_suffix(s)) else {
        return false;
    };
    stem.split('_')
        .any(|w| SERVICES.iter().any(|s| w.starts_with(s)))
}

/// Key names that hold credentials in configuration files, lower case. `passwd` is not one
/// (it names the account database), nor are the sshd and sudo settings below.
pub(crate) const CREDENTIAL_KEYS: &[&str] = &[
    "password",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "private_key",
    "privatekey",
    "private-key",
    "credential",
    "authkey",
    "auth_key",
    "network_key",
    "basic_auth",
    "basicauth",
];

pub(crate) const NOT_CREDENTIALS: &[&str] = &[
    "passwordauthentication",
    "permitemptypasswords",
    "nopasswd",
    "failed password",
    "accepted password",
    "password for",
    "password_expir",
    "password changed",
];

/// Does a search pattern or query name a credential key (`smtp_password`, `.oidc.client_secret`)?
pub(crate) fn names_credential(text: &str) -> bool {
    // This runs on every SQL word and search pattern: no allocation for short words.
    if text.len() < 5 {
        return false;
    }
    let lower = text.to_ascii_lowercase();
    if !CREDENTIAL_KEYS.iter().any(|k| lower.contains(k)) {
        return false;
    }
    let mut t = lower;
    for n in NOT_CREDENTIALS {
        if t.contains(n) {
            t = t.replace(n, "");
        }
    }
    CREDENTIAL_KEYS.iter().any(|k| t.contains(k))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The positional component filter is a necessary condition: wherever it says two
    /// patterns cannot meet, the automaton agrees. Queries are every list pattern with
    /// components turned into wildcards, shortened, lengthened and emptied.
    #[test]
    fn the_component_filter_never_hides_an_overlap() {
        let lists: [&Compiled; 4] = [&SECRETS, &PROTECTED, &GUEST_ROOT_LIST, &SECRET_DIR_LIST];
        let mut queries: Vec<String> = vec![
            "/sys/devices/system/cpu/vulnerabilities/*".into(),
            "/etc/*/shadow".into(),
            "/etc//shadow".into(),
            "/*/*".into(),
            "*".into(),
            "/root/*".into(),
            "~/.ssh/*".into(),
            ".ssh/id_*".into(),
            "/home/*/.ssh/authorized_keys".into(),
            "/proc/[0-9]*/environ".into(),
            "/var/lib/docker/volumes/*/_data/*".into(),
        ];
        for l in lists {
            for p in &l.pats {
                let comps: Vec<&str> = p.text.split('/').collect();
                let flat = p.text.replace("**", "*");
                queries.push(flat.clone());
                queries.push(format!("{flat}/*"));
                queries.push(format!("/x{flat}"));
                for i in 0..comps.len() {
                    for sub in ["*", "", ".*"] {
                        let mut c = comps.clone();
                        c[i] = sub;
                        queries.push(c.join("/").replace("**", "*"));
                    }
                    queries.push(comps[..i].join("/").replace("**", "*"));
                    queries.push(comps[i..].join("/").replace("**", "*"));
                }
            }
        }
        queries.sort();
        queries.dedup();
        let mut checked = 0;
        for q in &queries {
            if q.contains("**") || !splits_cleanly(q) {
                continue;
            }
            let qc: Vec<Vec<Tok>> = q.split('/').map(compile).collect();
            let qt = compile(q);
            for l in lists {
                for p in &l.pats {
                    if !p.components_may_meet(&qc) {
                        checked += 1;
                        assert!(
                            !overlaps_toks(&p.toks, &qt),
                            "the filter hid an overlap of {q:?} with {:?}",
                            p.text
                        );
                    }
                }
            }
        }
        assert!(checked > 10_000, "only {checked} pairs were filtered");
    }

    #[test]
    fn matching() {
        assert!(glob_match("/etc/cron*", "/etc/crontab"));
        assert!(glob_match("/etc/cron*/**", "/etc/cron.d/x"));
        assert!(!glob_match("/etc/cron*", "/etc/cron.d/x"));
        assert!(glob_match("**/.ssh/id_*", "/root/.ssh/id_rsa"));
        assert!(glob_match("**/.ssh/id_*", "~/.ssh/id_ed25519"));
        assert!(glob_match("**/.bashrc", ".bashrc"));
        // Resolved paths start with `/` or `~`.
        assert_eq!(protected_write("~/.bashrc"), Some("**/.bashrc"));
        assert_eq!(secret_read("/proc/1/environ"), Some("/proc/[0-9]*/environ"));
        assert_eq!(literal_ends(&compile("**/.ssh/id_*")).1, "");
        assert_eq!(literal_ends(&compile("/proc/[0-9]*/environ")).1, "/environ");
        assert_eq!(literal_ends(&compile("**/.bashrc")).1, ".bashrc");
        assert!(glob_match("**/*.key", "/etc/ssl/x.key"));
        assert!(!glob_match("**/*.key", "/etc/ssl/x.keys"));
        assert!(glob_match("/proc/[0-9]*/environ", "/proc/1/environ"));
        assert!(glob_match("/dev/sd*", "/dev/sda1"));
    }

    #[test]
    fn compiled_globs_agree_with_the_automaton() {
        // The cheap rejects in `Glob::matches` (length, literal ends, edge characters)
        // must never change an answer.
        let pats = [
            "[Ss][Ee][Cc][Rr][Ee][Tt]",
            "**,[Ss][Ee][Cc][Rr][Ee][Tt]*",
            "**/status/reset",
            "[0-9]*",
            "network.*",
            "a?c",
            "*",
            "**",
            "x\\*y",
            "é?",
            "**/",
            "a/**/b",
            "**/**/x",
            "?",
        ];
        let texts = [
            "",
            "secret",
            "Secret",
            "secrets",
            "pods,secrets",
            "a,SECRET",
            "/nodes/x/status/reset",
            "status/reset",
            "1",
            "12b",
            "sda",
            "network.service",
            "network",
            "abc",
            "a/c",
            "x*y",
            "xzy",
            "éa",
            "é",
            "ab",
            "a",
            "/",
        ];
        for p in pats {
            let g = Glob::new(p);
            for t in texts {
                assert_eq!(g.matches(t), glob_match(p, t), "{p} vs {t}");
            }
        }
    }

    #[test]
    fn overlapping() {
        assert!(overlaps("/etc/cron*/**", "/etc/cron.d/*"));
        assert!(!overlaps("**/*.key", "/var/log/*.log"));
        assert!(overlaps("**", "/etc/shadow"));
        assert!(overlaps("/etc/**", "/etc/shadow"));
        assert!(!overlaps("/var/log/**", "/etc/shadow"));
        assert!(overlaps("/home/*/.ssh/**", "/home/**"));
        assert!(!overlaps("/home/*/.ssh/**", "/var/log/**"));
        // Shell globs in the query never match a leading dot; list patterns and `**` do.
        assert!(!overlaps("**/.gnupg/**", "/sys/class/net/*/operstate"));
        assert!(!overlaps("/root/.bashrc", "/root/*"));
        assert!(!overlaps("/root/.bashrc", "/root/[.]bashrc"));
        assert!(overlaps("/root/.bashrc", "/root/.*"));
        assert!(overlaps("/root/.bashrc", "/root/**"));
        assert!(overlaps("**/*.key", "/etc/ssl/*"));
        assert!(overlaps("/etc/shadow", "/etc/*shadow"));
        assert!(overlaps("/home/*/.ssh/**", "/home/*/.ssh/*"));
    }

    #[test]
    fn wildcard_names_meet_secrets_they_name() {
        assert_eq!(secret_read("/etc/sysctl.d/*.conf"), None);
        assert_eq!(secret_read("/var/log/dpkg.log*"), None);
        assert_eq!(secret_read("/etc/pve/qemu-server/*.conf"), None);
        assert!(secret_read("/backup/*.key").is_some());
        assert!(secret_read("/root/backup/id_*").is_some());
        assert!(secret_read("/srv/app/.env*").is_some());
        assert!(secret_read("/srv/*/rclone.conf").is_some());
        assert!(secret_read("/root/.ssh/*").is_some());
        // "A file named NAME somewhere under DIR" (find -name): dot files count, types do not.
        assert!(secret_read("/srv/**/.env").is_some());
        assert!(secret_read("/srv/**/*.key").is_some());
        assert!(secret_read("/srv/**/id_*").is_some());
        assert_eq!(secret_read("/srv/**/*.yml"), None);
        assert_eq!(secret_read("/srv/**/*.conf"), None);
        assert!(secret_read("/opt/traefik/secrets/usersfile").is_some());
        assert_eq!(secret_read("/sys/class/net/*/operstate"), None);
    }

    #[test]
    fn secrets() {
        assert!(secret_read("/etc/shadow").is_some());
        assert!(secret_read("~/.ssh/id_rsa").is_some());
        assert!(secret_read("~/.ssh/id_rsa.pub").is_none());
        assert!(secret_read("/etc/os-release").is_none());
        assert!(secret_read("/var/log/*.log").is_none());
        assert!(secret_read("**").is_some());
        assert!(secret_under("/etc").is_some());
        assert!(secret_under("/var/log").is_none());
        assert!(secret_under("/etc/nginx").is_none());
    }

    #[test]
    fn resolving() {
        assert_eq!(resolve("cron.d/x", Some("/etc")), "/etc/cron.d/x");
        assert_eq!(resolve("/a//b/", None), "/a/b");
        assert_eq!(resolve("/etc/../etc/./shadow", None), "/etc/shadow");
        // `..` after a component that may be a symlink: the tail is judged too.
        assert_eq!(
            dotdot_tail("/var/run/../etc/shadow").as_deref(),
            Some("/etc/shadow")
        );
        assert_eq!(dotdot_tail("/a/../../b/./c").as_deref(), Some("/b/c"));
        assert_eq!(dotdot_tail("/a/b..c/d"), None);
        assert_eq!(dotdot_tail("/etc/shadow"), None);
        assert_eq!(resolve("x", None), "**/x");
        assert_eq!(resolve(".bashrc", Some("~")), "~/.bashrc");
    }
}
