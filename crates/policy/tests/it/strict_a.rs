//! Issue 13 A3 for the container, git, wrapper, builtin, transfer and text specs: no spec
//! of a tool with subcommands or value-taking options ignores an option it does not
//! declare. Real options that were never declared (so an old lenient spec skipped them,
//! and read their value as an operand or subcommand) and dangerous ones (a file written,
//! a program run, credentials or another server) ask in every spelling; everyday uses
//! stay read-only.

use crate::families::{assert_all_ask, assert_all_read_only};

/// `(command head, option, value, operands)`: the option is real (or dangerous) for the
/// tool and undeclared or declared with an effect that asks.
const OPTIONS: &[(&str, &str, &str, &str)] = &[
    // docker / podman / compose: undeclared options of read-only subcommands.
    ("docker history", "--frobnicate", "rm", "nginx"),
    ("docker port", "--format", "x", "web"),
    ("docker image ls", "--context", "evil", "nginx"),
    ("docker image inspect", "--config", "/tmp/x", "nginx"),
    (
        "docker network inspect",
        "--host",
        "tcp://evil:2375",
        "bridge",
    ),
    ("docker volume ls", "--tlscacert", "/tmp/ca", "-q"),
    ("docker system df", "--output", "/tmp/x", "-v"),
    ("docker events", "--output", "/etc/cron.d/x", "--since 1h"),
    ("docker context inspect", "--output", "/tmp/x", "default"),
    ("docker buildx du", "--config", "/tmp/x", "--verbose"),
    ("docker compose ps", "--output", "/etc/cron.d/x", "web"),
    ("docker compose logs", "--kubeconfig", "/tmp/k", "web"),
    ("docker-compose logs", "--frobnicate", "down", "web"),
    ("podman history", "--frobnicate", "rm", "nginx"),
    ("podman image ls", "--root", "/tmp/x", "nginx"),
    ("podman volume ls", "--storage-driver", "vfs", "-q"),
    (
        "podman search",
        "--authfile",
        "/root/.docker/config.json",
        "nginx",
    ),
    ("podman search", "--creds", "user:pw", "nginx"),
    ("podman manifest inspect", "--authfile", "/tmp/a.json", "x"),
    // kubectl and helm: credentials, other servers, programs, secrets.
    (
        "kubectl rollout status",
        "--kubeconfig",
        "/tmp/k",
        "deploy/x",
    ),
    ("helm list", "--frobnicate", "uninstall", "x"),
    ("helm history", "--kube-token", "t", "x"),
    ("helm show values", "--password", "p", "x/y"),
    ("helm search hub", "--endpoint", "https://evil", "x"),
    ("helm template x", "--post-renderer", "./hook", "./chart"),
    ("helm template x", "--output-dir", "/etc/cron.d", "./chart"),
    ("helm template x", "--values", "/etc/shadow", "./chart"),
    ("helm diff upgrade", "--frobnicate", "x", "y ./chart"),
    // lxc / incus.
    ("lxc list", "--frobnicate", "delete", "web"),
    ("lxc query", "--request", "DELETE", "/1.0/instances/web"),
    ("lxc-ls", "--logfile", "/etc/cron.d/x", "-f"),
    ("lxc-info", "--rcfile", "/tmp/x", "-n 101"),
    // git: files written, programs run, values read as revisions.
    ("git log", "--output", "/etc/cron.d/x", "-1"),
    ("git log", "--frobnicate", "x", "-1"),
    ("git show", "--output", "/tmp/x", "HEAD"),
    ("git diff", "--frobnicate", "x", "HEAD"),
    ("git ls-remote", "--upload-pack", "sh -c id", "origin"),
    ("git archive", "--remote", "ssh://evil/x", "HEAD"),
    ("git archive", "--output", "/etc/cron.d/x", "HEAD"),
    ("git blame", "--contents", "/etc/shadow", "x"),
    ("git ls-files", "--exclude-from", "/etc/shadow", "-o"),
    ("git status", "--frobnicate", "x", "-s"),
    ("git describe", "--frobnicate", "x", "--tags"),
    ("git stash list", "--frobnicate", "drop", "x"),
    ("git reflog", "--frobnicate", "expire", "--all"),
    ("git worktree list", "--frobnicate", "remove", "x"),
    ("git submodule status", "--frobnicate", "foreach", "id"),
    // rclone and borg.
    ("rclone lsd", "--config", "/tmp/evil.conf", "remote:"),
    ("rclone ls", "--dump", "auth", "remote:"),
    ("rclone size", "--ca-cert", "/tmp/ca", "remote:"),
    ("rclone check", "--combined", "/etc/cron.d/x", "a remote:b"),
    ("rclone tree", "--output", "/etc/cron.d/x", "remote:"),
    ("rclone md5sum", "--output-file", "/etc/cron.d/x", "remote:"),
    ("rclone lsf", "--frobnicate", "purge", "remote:"),
    ("borg list", "--rsh", "sh -c id", "ssh://x/repo"),
    (
        "borg list",
        "--exclude-from",
        "/etc/shadow",
        "/srv/borg/repo::a",
    ),
    ("borg info", "--frobnicate", "delete", "/srv/borg/repo"),
    // text tools.
    ("less", "--log-file", "/tmp/log", "/var/log/syslog"),
    ("less", "--tag-file", "/etc/shadow", "/var/log/syslog"),
    ("less", "--lesskey-file", "/tmp/k", "/var/log/syslog"),
    ("diff", "--from-file", "/etc/shadow", "a"),
    ("diff", "--exclude-from", "/root/.ssh/id_rsa", "a b"),
    ("sdiff", "--output", "/etc/cron.d/x", "a b"),
    ("sdiff", "--diff-program", "./x", "a b"),
    ("jq", "--rawfile", "k", "/etc/shadow"),
    ("jq", "--slurpfile", "k", "/etc/shadow"),
    ("jq", "--library-path", "/tmp/mods", "-n 1"),
    ("jq", "--from-file", "/etc/shadow", "x.json"),
    ("yq", "--split-exp", "'.a'", "x.yml"),
    ("yq", "--from-file", "/etc/shadow", "x.yml"),
    ("tree", "--fromfile", "/etc/shadow", "."),
    ("tree", "--infofile", "/etc/shadow", "."),
    ("mysqldump", "--result-file", "/etc/cron.d/x", "db"),
    ("mysqldump", "--init-command", "select 1", "db"),
    ("locate", "--database", "/etc/shadow", "x"),
    ("xzcat", "--files", "/etc/shadow", ""),
];

/// Bundled short options, options after operands and other spellings of the same class.
const SPELLED: &[&str] = &[
    "docker compose logs -tf --frobnicate web",
    "docker image ls -aq --frobnicate",
    // The whole image configuration: its baked-in environment (`ENV API_KEY=…`).
    "docker image inspect nginx",
    "docker image inspect --format '{{json .Config.Env}}' app",
    "podman image inspect app",
    "kubectl apply -f x.yaml --edit --dry-run=client",
    "kubectl create -f x.yaml --dry-run=client --frobnicate",
    "kubectl set env deploy/api --list --resolve --dry-run=client",
    "helm diff upgrade x ./c --show-secrets",
    "helm diff upgrade x ./c --show-secrets-decoded",
    "helm install x ./c --dry-run --frobnicate",
    "helm install x ./c --dry-run --dependency-update",
    "helm upgrade --install x ./c --dry-run -f /root/.ssh/id_rsa",
    "helm template x ./chart --dependency-update",
    "helm list -A --kubeconfig=/tmp/k",
    "helm status x -o json",
    "lxc exec web --cwd /root -- rm -rf x",
    "lxc query /1.0/instances/web",
    "git cat-file --filters HEAD:x",
    "git help --web log",
    "git help -w log",
    "git grep -O id x",
    "git grep --open-files-in-pager=id x",
    "git log --ext-diff -p",
    "git diff --textconv",
    "git log -1 --frobnicate=x",
    "git log -1 -%",
    "git push --dry-run --receive-pack=id origin main",
    "git clean -n --frobnicate",
    "rclone ls remote: --no-check-certificate",
    "rclone ls remote: --dump-auth",
    "rclone lsd remote: --frobnicate x",
    "rclone sync --dry-run a remote:b --frobnicate",
    "borg create --dry-run --content-from-command r::a -- id",
    "borg create --dry-run --paths-from-command r::a -- id",
    "less -Ro/tmp/log x",
    "less -NT/etc/shadow x",
    "zless -o /tmp/x /var/log/syslog.2.gz",
    "diff -r /etc /srv/backup/etc",
    "diff -ru /root/.ssh /tmp/x",
    "diff -q --frobnicate a b",
    "jq -rL /tmp/mods -n 1",
    "jq -r --frobnicate . x.json",
    "yq -i '.a = 1' x.yml",
    "yq -s '.a' x.yml",
    "tree -o /etc/cron.d/x /",
    "tree -ao/etc/cron.d/x /",
    "gzip -c /etc/shadow",
    "gzip -9c /etc/shadow",
    "xz -dc /root/.ssh/id_rsa.xz",
    "zstd -c /etc/shadow",
    "zstd -o /etc/cron.d/x y",
    "unzip -c backup.zip etc/shadow",
    "unzip -p backup.zip '*id_rsa'",
    "mysqldump --print-defaults",
    "mysqldump --delete-master-logs db",
    "mysqldump -r/etc/cron.d/x db",
    "locate -d/etc/shadow x",
    "sftp -oProxyCommand=id",
    "sftp -o ProxyCommand=id",
    "lftp -c 'rm -r x'",
    "mosh --ssh=./x",
    "ulimit -Hn 1024",
    "ulimit -n -X",
    "perl -Mstrict -e 1",
    "node --eval x",
    "cargo -V --frobnicate",
];

/// A dry-run option downgrades only the subcommands that have it, and never one whose
/// output is the secret: a global `--dry-run` (compose, rclone) still prints it, and a
/// `--dry-run` the subcommand does not know is not a dry run.
const DRY_RUNS: &[&str] = &[
    "docker compose --dry-run config",
    "docker compose config --dry-run",
    "podman compose --dry-run config",
    "docker-compose --dry-run convert",
    "rclone config show --dry-run",
    "rclone --dry-run config dump",
    "rclone mount remote: /mnt/x --dry-run",
    "rclone serve http remote: --dry-run",
    "rclone config create x s3 --dry-run",
    "kubectl config view --raw --dry-run=client",
    "kubectl get secret db -o yaml --dry-run=client",
    "kubectl --dry-run=client get secret db -o yaml",
    "kubectl exec pod --dry-run=client -- rm -rf /data",
    "helm env --dry-run",
    "helm get values x --dry-run",
    "helm --dry-run uninstall x",
    "helm diff upgrade x ./c --dry-run --show-secrets",
    "helm template x ./c --dry-run --dependency-update",
    "borg key export --dry-run /srv/borg/repo",
    "borg --dry-run delete /srv/borg/repo",
    "borg check --repair --dry-run /srv/borg/repo",
];

/// With git's options parsed exactly, an option that prints file contents is found in
/// any spelling (bundled, implied), not only as the literal word `-p`.
#[test]
fn git_options_that_print_contents_read_the_paths_in_any_spelling() {
    const FORMS: &[&str] = &[
        "git log -pw -- P",
        "git log -wp -- P",
        "git log -1 -pU5 -- P",
        "git log --binary -- P",
        "git log --dd -- P",
        "git log --cc -- P",
        "git log --remerge-diff -- P",
        "git log --color-words -- P",
        "git log --word-diff-regex=. -- P",
        "git log -wSx -- P",
        "git log -iGpass -- P",
        "git log --check -- P",
        "git log -W -- P",
        "git whatchanged -pw -- P",
        "git diff-tree -rp HEAD -- P",
        "git diff-tree --binary -r HEAD -- P",
        "git range-diff -pw a...b -- P",
    ];
    const PATHS: &[&str] = &[".env", "/etc/shadow", "id_rsa", "config/secrets.yml"];
    let mut cmds = Vec::new();
    for f in FORMS {
        for p in PATHS {
            cmds.push(f.replace('P', p));
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "git log -pw -- README.md",
        "git log --stat -- .env",
        "git log --oneline -- .env",
        "git diff-tree -r --name-only HEAD -- .env",
    ]);
}

#[test]
fn a_dry_run_downgrades_only_where_the_tool_has_one() {
    let cmds: Vec<String> = DRY_RUNS.iter().map(|s| (*s).to_owned()).collect();
    assert_all_ask(&cmds);
    // Where the subcommand has a real dry run, it stays read-only.
    assert_all_read_only(&[
        "docker compose --dry-run down -v",
        "docker compose rm -f --dry-run",
        "rclone sync --dry-run /srv/backups b2:srv",
        "rclone --dry-run purge remote:old",
        "kubectl delete pod x --dry-run=client",
        "kubectl drain n1 --ignore-daemonsets --dry-run=client",
        "kubectl rollout undo deploy/api --dry-run=server",
        "helm uninstall x --dry-run",
        "borg delete --dry-run /srv/borg/repo::a",
        "borg create --dry-run --list /srv/borg/repo::a /etc",
    ]);
}

#[test]
fn real_undeclared_and_dangerous_options_ask_in_every_spelling() {
    let mut cmds: Vec<String> = Vec::new();
    for (head, opt, val, rest) in OPTIONS {
        let rest = if rest.is_empty() {
            String::new()
        } else {
            format!(" {rest}")
        };
        cmds.push(format!("{head} {opt}={val}{rest}"));
        cmds.push(format!("{head} {opt} {val}{rest}"));
        if !rest.is_empty() {
            // After the operands (getopt and pflag permute; posix specs stop earlier).
            cmds.push(format!("{head}{rest} {opt} {val}"));
        }
    }
    cmds.extend(SPELLED.iter().map(|s| (*s).to_owned()));
    assert_all_ask(&cmds);
}

/// Undeclared options before and between subcommands: the option's value would be read
/// as the subcommand (`kubectl --as get delete pod web`).
#[test]
fn an_undeclared_option_never_lets_its_value_be_read_as_the_subcommand() {
    const HEADS: &[&str] = &[
        "docker",
        "docker image",
        "docker network",
        "docker volume",
        "docker system",
        "docker context",
        "docker buildx",
        "docker compose",
        "docker-compose",
        "podman",
        "podman pod",
        "podman image",
        "podman system",
        "podman kube",
        "helm",
        "helm repo",
        "helm get",
        "lxc",
        "git",
        "git stash",
        "git remote",
        "git reflog",
        "git worktree",
        "git notes",
        "git submodule",
        "rclone",
        "rclone config",
        "borg",
    ];
    const WORDS: &[&str] = &["--as", "--frobnicate", "-Z", "--config", "--context"];
    let mut cmds = Vec::new();
    for head in HEADS {
        for w in WORDS {
            // `ls`/`list`/`show` are read-only subcommands; the word after them is a
            // destructive one that a value-taking reading would reach.
            for (ro, rm) in [("ls", "rm"), ("list", "delete"), ("show", "drop")] {
                cmds.push(format!("{head} {w} {ro} {rm} x"));
                cmds.push(format!("{head} {w}={ro} {rm} x"));
            }
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn everyday_read_only_uses_stay_read_only() {
    assert_all_read_only(&[
        "docker ps -a --format '{{.Names}}'",
        "docker history --no-trunc nginx:1.25",
        "docker port traefik 443/tcp",
        "docker top web -eo pid,cmd",
        "docker events --since 1h --until now --filter event=die",
        "docker image ls --filter dangling=true -q",
        "docker image history --no-trunc nginx",
        "docker image inspect --format '{{.Created}}' nginx",
        "docker network inspect proxy -f '{{range .Containers}}{{.Name}} {{end}}'",
        "docker volume ls -qf dangling=true",
        "docker system df -v",
        "docker context ls --format json",
        "docker buildx ls",
        "docker compose ps --format json",
        "docker compose logs -f --tail=50 web",
        "docker compose logs --no-color --since 10m -t web",
        "docker-compose -f /opt/stack/docker-compose.yml logs --tail=50 app",
        "docker container ls -a --size",
        "docker service logs --tail 20 -t web",
        "podman ps -a",
        "podman pod ps --format '{{.Name}}'",
        "podman image ls --sort created",
        "podman volume inspect data",
        "podman system df",
        "kubectl rollout status deploy/api --timeout=120s",
        "kubectl apply --dry-run=client -f deploy.yaml -o yaml",
        "kubectl create deployment web --image=nginx --replicas=2 --dry-run=client -o yaml",
        "helm list -A -o json",
        "helm -n monitoring history grafana --max 5",
        "helm search repo bitnami/postgresql --versions",
        "helm template x ./chart -f values.yaml --set image.tag=1.2",
        "helm diff upgrade grafana grafana/grafana -n monitoring -f grafana.yaml --suppress-secrets",
        "helm upgrade --install traefik traefik/traefik -n traefik -f values.yaml --dry-run",
        "lxc list -c ns4 -f csv",
        "lxc info web --resources",
        "lxc-ls -f --running",
        "lxc-info -n 101 -s",
        "git log --oneline --graph --decorate --all -20",
        "git log -5 --stat --since=2.weeks --author=bob",
        "git show --stat HEAD",
        "git diff --cached --stat",
        "git diff --word-diff=color HEAD~1",
        "git status -sb",
        "git status --porcelain=v1 -uno",
        "git rev-parse --abbrev-ref HEAD",
        "git describe --tags --always --dirty",
        "git ls-files -m",
        "git ls-tree -r --name-only HEAD",
        "git blame -L 10,20 main.rs",
        "git shortlog -sn --no-merges",
        "git for-each-ref --sort=-committerdate refs/heads --format='%(refname:short)'",
        "git rev-list --count HEAD",
        "git log --grep fix --oneline",
        "git stash list --oneline",
        "git stash show --stat",
        "git reflog -n 20",
        "git remote -v",
        "git remote get-url --push origin",
        "git worktree list --porcelain",
        "git submodule status --recursive",
        "git lfs ls-files -l",
        "rclone lsd b2:homelab-backups --max-depth 1",
        "rclone lsf -R --files-only wasabi:pve-dumps",
        "rclone size gdrive:Photos --fast-list --json",
        "rclone check /srv/photos b2:photos --one-way",
        "rclone sync --dry-run -v /srv/backups b2:srv --transfers 8",
        "borg list --short --bypass-lock /mnt/backup/borg",
        "borg info --json /srv/borg/repo",
        "borg prune --dry-run --list --keep-daily=7 /mnt/backup/borg",
        "less -RS -x4 /var/log/syslog",
        "more -10 /var/log/syslog",
        "zcat -f /var/log/syslog.2.gz",
        "diff -u --color=always a b",
        "diff -r /etc/nginx /srv/backup/nginx",
        "cmp -s a b",
        "jq -rc --arg n web '.[] | select(.name == $n)' x.json",
        "jq -S . /etc/docker/daemon.json",
        "yq -o json . x.yml",
        "tree -L 2 -a --dirsfirst /etc/nginx",
        "gzip -dc x.gz",
        "xz -l x.xz",
        "zstd -dc x.zst",
        "unzip -l x.zip",
        "mysqldump --single-transaction --routines --triggers -B app",
        "locate -i -l 5 sshd_config",
        "ulimit -a",
        "ulimit -Hn",
        "help -d cd",
        "echo -n ---",
    ]);
}
