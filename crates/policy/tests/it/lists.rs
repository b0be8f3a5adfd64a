//! The allow-lists handlers consult (safe ssh options, safe git config keys, listing
//! options, read-only modules and verbs …) keep their exact meaning wherever they live: a
//! sample of commands per list, on both sides of each list's edge. Written before the
//! lists moved from code constants into the spec files; it passes before and after.

use nomos_policy::Class;

const R: Class = Class::ReadOnly;
const C: Class = Class::ConfigMutation;
const D: Class = Class::Destructive;

/// (list, command, class today).
const SAMPLES: &[(&str, &str, Class)] = &[
    // ssh.safe_options: safe keys pass, any other key is unknown.
    ("ssh.safe_options", "ssh -o BatchMode=yes web1 uptime", R),
    (
        "ssh.safe_options",
        "ssh -o ConnectTimeout=5 -o Port=2222 web1 uptime",
        R,
    ),
    (
        "ssh.safe_options",
        "ssh -oServerAliveInterval=30 web1 uptime",
        R,
    ),
    (
        "ssh.safe_options",
        "ssh -o 'IdentitiesOnly yes' web1 uptime",
        R,
    ),
    ("ssh.safe_options", "ssh -o ProxyCommand=nc web1 uptime", D),
    ("ssh.safe_options", "ssh -o LocalCommand=id web1 uptime", D),
    (
        "ssh.safe_options",
        "ssh -o PermitLocalCommand=yes web1 uptime",
        D,
    ),
    ("ssh.safe_options", "ssh -o BatchModeX=yes web1 uptime", D),
    (
        "ssh.safe_options",
        "rsync -n -e 'ssh -o BatchMode=yes' web1:/srv/a /srv/b",
        R,
    ),
    (
        "ssh.safe_options",
        "rsync -n -e 'ssh -o ProxyCommand=nc' web1:/srv/a /srv/b",
        D,
    ),
    // git.safe_config_prefixes: prefixes of keys `git -c` may set.
    (
        "git.safe_config_prefixes",
        "git -c color.ui=always log -1",
        R,
    ),
    ("git.safe_config_prefixes", "git -c user.name=x status", R),
    ("git.safe_config_prefixes", "git -c log.date=iso log -3", R),
    (
        "git.safe_config_prefixes",
        "git -c diff.external=x log -1",
        D,
    ),
    (
        "git.safe_config_prefixes",
        "git -c alias.st=status status",
        D,
    ),
    (
        "git.safe_config_prefixes",
        "git -c core.editor=vim status",
        D,
    ),
    ("git.safe_config_prefixes", "git -c colorx.ui=1 status", D),
    // git.listing_options: `git branch`/`git tag` with these list instead of creating.
    ("git.listing_options", "git branch --list", R),
    ("git.listing_options", "git branch --merged main", R),
    ("git.listing_options", "git tag -n5", R),
    ("git.listing_options", "git tag --contains HEAD", R),
    ("git.listing_options", "git branch feature-x", C),
    ("git.listing_options", "git tag v1.2", C),
    // git_config.reading_options: these read a key; without them two operands write.
    (
        "git_config.reading_options",
        "git config --get user.name",
        R,
    ),
    (
        "git_config.reading_options",
        "git config --get-all user.email",
        R,
    ),
    // Two operands are a key and a value pattern when reading, a new value otherwise.
    (
        "git_config.reading_options",
        "git config --get user.name bob",
        R,
    ),
    (
        "git_config.reading_options",
        "git config --get-all user.email x",
        R,
    ),
    (
        "git_config.reading_options",
        "git config --show-origin user.name",
        R,
    ),
    ("git_config.reading_options", "git config user.name bob", C),
    (
        "git_config.reading_options",
        "git config core.pager less",
        D,
    ),
    // shell.safe_options: `sh -o NAME` that changes neither parsing nor exports.
    ("shell.safe_options", "bash -o pipefail -c 'ls /tmp'", R),
    (
        "shell.safe_options",
        "sh -o errexit -o nounset -c 'ls /tmp'",
        R,
    ),
    ("shell.safe_options", "bash -o posix -c 'ls /tmp'", D),
    ("shell.safe_options", "bash -o allexport -c 'ls /tmp'", D),
    ("shell.safe_options", "bash -o keyword -c 'ls /tmp'", D),
    // sudo.without_command: options that make a bare `sudo` harmless.
    ("sudo.without_command", "sudo -l", R),
    ("sudo.without_command", "sudo --version", R),
    ("sudo.without_command", "sudo", D),
    ("sudo.without_command", "sudo -i", D),
    // writes_log.quiet_options: rkhunter without its log.
    (
        "writes_log.quiet_options",
        "rkhunter --check --nolog --sk",
        R,
    ),
    ("writes_log.quiet_options", "rkhunter --check --sk", C),
    ("writes_log.quiet_options", "rkhunter --list", R),
    // getent.databases: a known database lets a run-time key through.
    ("getent.databases", "getent passwd root", R),
    ("getent.databases", "getent hosts \"$H\"", R),
    ("getent.databases", "getent shadow", D),
    ("getent.databases", "getent \"$DB\" root", D),
    ("getent.databases", "getent nosuchdb \"$H\"", D),
    // set.safe_names: `set -o NAME` that leaves the environment alone.
    ("set.safe_names", "set -o pipefail", R),
    ("set.safe_names", "set -o errexit -o nounset", R),
    ("set.safe_names", "set -o allexport", D),
    ("set.safe_names", "set -o posix", D),
    // metadata.harmless_paths: instance metadata that is not a credential.
    (
        "metadata.harmless_paths",
        "curl -s http://169.254.169.254/latest/meta-data/instance-id",
        R,
    ),
    (
        "metadata.harmless_paths",
        "curl -s http://169.254.169.254/latest/meta-data/placement/region",
        R,
    ),
    (
        "metadata.harmless_paths",
        "curl -s http://169.254.169.254/latest/meta-data/iam/security-credentials/web",
        D,
    ),
    (
        "metadata.harmless_paths",
        "curl -s http://169.254.169.254/latest/user-data",
        D,
    ),
    // docker_api.listings: GET listings of the Docker API.
    (
        "docker_api.listings",
        "curl -s --unix-socket /var/run/docker.sock http://localhost/containers/json",
        R,
    ),
    (
        "docker_api.listings",
        "curl -s --unix-socket /var/run/docker.sock http://localhost/version",
        R,
    ),
    (
        "docker_api.listings",
        "curl -s --unix-socket /var/run/docker.sock http://localhost/containers/web/json",
        D,
    ),
    (
        "docker_api.listings",
        "curl -s --unix-socket /var/run/docker.sock http://localhost/secrets",
        D,
    ),
    // parted.units: `unit X` arguments of a printing parted session.
    ("parted.units", "parted /dev/sda unit MiB print", R),
    ("parted.units", "parted /dev/sda unit s print free", R),
    ("parted.units", "parted /dev/sda unit zz print", D),
    ("parted.units", "parted /dev/sda rm 1", D),
    // debugfs.reads: requests that print metadata only.
    ("debugfs.reads", "debugfs -R stats /dev/sda1", R),
    ("debugfs.reads", "debugfs -R 'ls -l /' /dev/sda1", R),
    ("debugfs.reads", "debugfs -R 'cat /etc/shadow' /dev/sda1", D),
    ("debugfs.reads", "debugfs -R 'rm /x' /dev/sda1", D),
    // ansible.read_modules: ad-hoc modules that only read.
    ("ansible.read_modules", "ansible all -m ping", R),
    ("ansible.read_modules", "ansible web -m setup", R),
    ("ansible.read_modules", "ansible all -m service_facts", R),
    ("ansible.read_modules", "ansible all -m shell -a id", D),
    (
        "ansible.read_modules",
        "ansible all -m copy -a 'src=a dest=/tmp/b'",
        C,
    ),
    // ansible.noop_options: nothing runs on the hosts.
    ("ansible.noop_options", "ansible all --list-hosts", R),
    (
        "ansible.noop_options",
        "ansible all -m shell -a id --list-hosts",
        R,
    ),
    (
        "ansible.noop_options",
        "ansible all -m shell -a id --one-line",
        D,
    ),
    // midclt.read_verbs: TrueNAS methods ending in a reading verb.
    ("midclt.read_verbs", "midclt call pool.query", R),
    ("midclt.read_verbs", "midclt call system.info", R),
    (
        "midclt.read_verbs",
        "midclt call pool.dataset.delete tank/x",
        D,
    ),
    ("midclt.read_verbs", "midclt call system.reboot", D),
    // php.info_options: php that prints its own configuration.
    ("php.info_options", "php --version", R),
    ("php.info_options", "php -i", R),
    ("php.info_options", "php -m", R),
    ("php.info_options", "php -r 'echo 1;'", D),
    ("php.info_options", "php script.php", D),
    // redis.read_commands: redis-cli commands that only read keys or server state.
    ("redis.read_commands", "redis-cli GET session:1", R),
    ("redis.read_commands", "redis-cli -n 2 HGETALL user:7", R),
    ("redis.read_commands", "redis-cli ttl k", R),
    ("redis.read_commands", "redis-cli DBSIZE", R),
    ("redis.read_commands", "redis-cli DEL session:1", D),
    ("redis.read_commands", "redis-cli SET session:1 x", C),
    ("redis.read_commands", "redis-cli FLUSHALL", D),
    ("redis.read_commands", "redis-cli GETX k", D),
    ("redis.read_commands", "redis-cli EVAL 'return 1' 0", D),
    // sql.pure_functions: SQL functions that only compute or read statistics.
    (
        "sql.pure_functions",
        "psql -c 'select round(avg(total), 2) from orders'",
        R,
    ),
    (
        "sql.pure_functions",
        "psql -c 'select pg_size_pretty(pg_relation_size(1))'",
        R,
    ),
    (
        "sql.pure_functions",
        "mysql -e 'select max(id), lower(name) from t'",
        R,
    ),
    (
        "sql.pure_functions",
        "sqlite3 app.db 'select upper(name), length(name) from t'",
        R,
    ),
    ("sql.pure_functions", "psql -c 'select my_func(1)'", D),
    ("sql.pure_functions", "psql -c 'select roundx(1)'", D),
    (
        "sql.pure_functions",
        "psql -c \"select pg_read_file('/etc/passwd')\"",
        D,
    ),
    (
        "sql.pure_functions",
        "sqlite3 app.db \"select load_extension('x')\"",
        D,
    ),
];

#[test]
fn allow_list_samples_keep_their_class() {
    let mut wrong = Vec::new();
    for (list, cmd, want) in SAMPLES {
        let d = nomos_policy::classify(cmd);
        if d.class != *want {
            wrong.push(format!(
                "[{list}] `{cmd}`: {} (want {want}) via {}: {}",
                d.class,
                d.rule(),
                d.reason()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
