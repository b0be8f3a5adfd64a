//! Families of fail-open classes: builtins that evaluate what names a variable, options
//! that run programs, options read as subcommands, and the environment as an allow-list.

use nomos_policy::{Class, Policy};

use crate::families::{assert_all_ask, assert_all_read_only};

/// Words bash evaluates as an array subscript when used as a variable name.
const SUBSCRIPTS: &[&str] = &[
    "'a[$(touch /tmp/M)]'",
    "\"a[\\$(touch /tmp/M)]\"",
    "a\\[\\$\\(touch\\ /tmp/M\\)\\]",
    "'a[`touch /tmp/M`]'",
    "'x[$(id>/tmp/M)]'",
    "$'a[$(touch /tmp/M)]'",
];

/// Every way a builtin takes a variable name (`P` is replaced).
const NAME_FORMS: &[&str] = &[
    "wait -p P $!",
    "wait -np P",
    "wait -n -p P",
    "read P",
    "read -r P",
    "read -r x P",
    "read -a P",
    "printf -v P %s x",
    "mapfile P",
    "mapfile -t P < /etc/hosts",
    "readarray P",
    "getopts ab P",
    "declare P",
    "declare -x P",
    "local P",
    "typeset P",
    "export P",
    "readonly P",
    "unset P",
    "unset -v P",
    "let P",
    "test -v P",
    "[ -v P ]",
    "[[ -v P ]]",
    "for P in a; do :; done",
    "select P in a; do :; done",
    "x=P; echo ${!x}",
    "x=P; echo ${!x:-y}",
    "coproc P { ls; }",
];

#[test]
fn builtins_never_evaluate_a_name_they_are_given() {
    let mut cmds = Vec::new();
    for form in NAME_FORMS {
        for sub in SUBSCRIPTS {
            cmds.push(form.replace('P', sub));
        }
    }
    assert_all_ask(&cmds);
    // `mapfile -C` runs its callback.
    assert_all_ask(&[
        "mapfile -C 'touch /tmp/M' arr".into(),
        "readarray -C f -c 1 a".into(),
    ]);
}

/// Variables that change what later commands do.
const RISKY_NAMES: &[&str] = &[
    "PATH",
    "TAR_OPTIONS",
    "RSYNC_RSH",
    "PGHOST",
    "RESTIC_PASSWORD_COMMAND",
    "LD_PRELOAD",
    "BASH_ENV",
    "ENV",
    "GIT_SSH_COMMAND",
    "http_proxy",
    "HTTPS_PROXY",
    "no_proxy",
    "npm_config_script_shell",
    "PROMPT_COMMAND",
    "MY_NEW_TOOL_OPTS",
    "ZSTD_CLEVEL",
    "IFS",
];

/// Every way a script assigns or exports a variable (`N` is replaced).
const ASSIGN_FORMS: &[&str] = &[
    "N=x ls",
    "N=x; ls",
    "N=x && ls",
    "export N=x",
    "export N",
    "export N; ls",
    "declare -x N=x",
    "local N=x",
    "readonly N=x",
    "typeset -x N=x",
    "read N",
    "read -r N < /etc/hostname",
    "printf -v N %s x",
    "mapfile N",
    "getopts ab N",
    "wait -p N",
    "for N in x; do ls; done",
    "set -a; N=x; ls",
    "set -o allexport; N=x; ls",
    "env N=x ls",
    "sudo N=x ls",
];

#[test]
fn the_environment_is_an_allow_list() {
    let mut cmds = Vec::new();
    for form in ASSIGN_FORMS {
        for name in RISKY_NAMES {
            cmds.push(form.replace('N', name));
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn harmless_variables_stay_read_only() {
    assert_all_read_only(&[
        "LANG=C ls -la",
        "LC_ALL=C sort /etc/hosts",
        "TZ=UTC date",
        "export LANG=C",
        "export TZ",
        "read -r line < /etc/hostname",
        "x=$(hostname); echo \"$x\"",
        "printf -v out '%s' x",
        "for f in a b; do echo \"$f\"; done",
        "while read -r host; do echo \"$host\"; done < /etc/hosts",
        "wait -n -p pid",
        "set -euo pipefail; ls",
        "NO_COLOR=1 ls",
        "PAGER=cat git log -1",
    ]);
}

#[test]
fn shell_options_that_change_parsing_ask() {
    assert_all_ask(
        &[
            "set -a",
            "set -o allexport",
            "set -ao pipefail",
            "set -o keyword",
            "set -k",
            "shopt -s expand_aliases",
            "shopt -s extglob",
            "bash -o keyword -c ls",
            "bash -o allexport -c ls",
            "bash -a -c ls",
            "sh -a -c ls",
            "bash -O extglob -c ls",
            "bash -O expand_aliases -c ls",
            "bash --rcfile /tmp/x -c ls",
            "bash --init-file /tmp/x -c ls",
            "bash -i -c ls",
            "BASH_ENV=/tmp/x bash -c ls",
            "ENV=/tmp/x sh -c ls",
            "sh -o posix -c ls",
        ]
        .map(String::from),
    );
}

#[test]
fn options_and_arguments_that_run_programs_ask() {
    let cmds = [
        // perf runs what it measures.
        "perf stat -- touch /tmp/M",
        "perf stat touch /tmp/M",
        "perf stat -e cycles touch /tmp/M",
        "sudo perf stat -a -- rm -rf /srv",
        "perf trace -- touch /tmp/M",
        "perf trace touch /tmp/M",
        "perf record -- touch /tmp/M",
        "perf record -g touch /tmp/M",
        "perf ftrace -- touch /tmp/M",
        "perf script -s /tmp/x.py",
        "perf script --script=python:/tmp/x.py",
        "perf report --objdump=/tmp/x",
        "perf stat --pre=/tmp/x sleep 1",
        "perf stat --post /tmp/x sleep 1",
        "perf kvm stat -- touch /tmp/M",
        "perf sched record -- touch /tmp/M",
        "perf --exec-path=/tmp list",
        // tmux formats run commands.
        "tmux display -p '#(touch /tmp/M)'",
        "tmux display-message -p '#(touch /tmp/M)'",
        "tmux list-sessions -F '#(touch /tmp/M)'",
        "tmux ls -F '#{session_name}#(touch /tmp/M)'",
        "tmux list-windows -a -F'#(touch /tmp/M)'",
        "tmux list-panes -F \"#(touch /tmp/M)\"",
        "tmux -L x display -p '#(id)'",
        "tmux if-shell true 'run-shell touch'",
        "tmux run-shell 'touch /tmp/M'",
        "tmux set -g status-right '#(touch /tmp/M)'",
        "tmux display -p \"$FMT\"",
        // nft: several commands in one argument or a file.
        "nft 'list ruleset; flush ruleset'",
        "nft 'list ruleset ; delete table inet filter'",
        "nft list ruleset \\; flush ruleset",
        "nft 'list tables\nflush ruleset'",
        "nft \"list ruleset;flush ruleset\"",
        "nft -f /etc/nftables.conf",
        "nft -f /tmp/rules.nft",
        "nft -i",
        "nft --interactive",
        // helm post-renderers are programs.
        "helm template x ./chart --post-renderer ./hook",
        "helm template x ./chart --post-renderer=./hook",
        "helm diff upgrade x ./chart --post-renderer ./hook",
        "helm --post-renderer ./hook template x ./chart",
        // Options naming a program, hook, pager, editor or remote shell.
        "rsync -e 'sh -c id' a b:c",
        "rsync --rsh='sh -c id' a b:c",
        "tar --use-compress-program='sh -c id' -tf x.tar",
        "tar -I 'sh -c id' -tf x.tar",
        "tar --to-command='sh -c id' -xf x.tar",
        "tar --checkpoint=1 --checkpoint-action=exec=id -tf x.tar",
        "ssh -o ProxyCommand='touch /tmp/M' host ls",
        "ssh -o LocalCommand='touch /tmp/M' -o PermitLocalCommand=yes host ls",
        "git -c core.pager='touch /tmp/M' log",
        "git log --ext-diff",
        "bat --pager='touch /tmp/M' x",
        "find . -exec touch /tmp/M \\;",
        "xargs -I{} sh -c 'touch {}'",
        "watch 'touch /tmp/M'",
        "timeout 5 touch /tmp/M",
        "less '+!touch /tmp/M' /etc/hosts",
        "man -P 'touch /tmp/M' ls",
        "systemctl --pager='touch /tmp/M' status",
        "git --exec-path=/tmp status",
        "crontab -e",
        "visudo",
    ]
    .map(String::from);
    assert_all_ask(&cmds);
}

/// Lenient specs ignore options they do not list, but not options whose name says they
/// take a program or a peer to send credentials to.
#[test]
fn unlisted_options_that_name_programs_or_peers_ask() {
    let mut cmds = Vec::new();
    for head in [
        "zfs list",
        "pvesh get /nodes",
        "restic snapshots",
        "ceph status",
        "tailscale status",
    ] {
        for opt in [
            "--exec=/tmp/x",
            "--post-exec /tmp/x",
            "--pager=/tmp/x",
            "--editor vi",
            "--password-command=/tmp/x",
            "--ssh-command=x",
            "--rsh=x",
            "--server=https://203.0.113.9",
            "--api-url https://203.0.113.9",
            "--endpoint=https://203.0.113.9",
            "--token=x",
            "--insecure-skip-verify",
            "--kubeconfig=/tmp/k",
            "--socket=/tmp/s",
            "--proxy=http://203.0.113.9",
            "--plugin-dir=/tmp/p",
            "--hook=/tmp/h",
            "--tls-ca=/tmp/ca",
        ] {
            cmds.push(format!("{head} {opt}"));
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn everyday_uses_of_those_tools_stay_read_only() {
    assert_all_read_only(&[
        "sudo perf stat -a -- sleep 5",
        "perf stat -e cycles -p 1234 sleep 5",
        "perf top -g",
        "perf list",
        "perf report --stdio -i /tmp/perf.data",
        "tmux ls",
        "tmux list-sessions -F '#{session_name}'",
        "tmux has-session -t backup",
        "nft list ruleset",
        "nft 'list table inet filter'",
        "nft -c -f /etc/nftables.conf",
        "helm list -A",
        "helm template x ./chart",
        "kubectl get pods -A",
        "kubectl -n kube-system get pods -o wide",
        "kubectl --context prod get nodes",
        "kubectl --as admin get pods",
        "kubectl logs -n web deploy/api --tail=100 -f",
        "kubectl describe pod web -n prod",
        "kubectl rollout status deploy/api --timeout=120s",
        "docker ps",
        "docker --context prod ps",
    ]);
}

/// Global options of kubectl (and what their value may spell).
const KUBECTL_VALUE_OPTIONS: &[&str] = &[
    "--as",
    "--as-group",
    "--as-uid",
    "--cluster",
    "--context",
    "--user",
    "-n",
    "--namespace",
    "--request-timeout",
    "-v",
    "--kubeconfig",
    "-s",
    "--server",
    "--token",
    "--certificate-authority",
    "--client-key",
    "--cache-dir",
    "--frobnicate",
    "--tls-server-name",
];

#[test]
fn an_option_value_is_never_read_as_a_subcommand() {
    let mut cmds = Vec::new();
    for tool in ["kubectl", "oc", "k3s-kubectl", "k3s kubectl"] {
        for opt in KUBECTL_VALUE_OPTIONS {
            for (read, change) in [
                ("get", "delete pod web"),
                ("logs", "drain node1"),
                ("describe", "apply -f x.yaml"),
                ("top", "exec web -- rm -rf /data"),
            ] {
                cmds.push(format!("{tool} {opt} {read} {change}"));
            }
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn options_that_send_credentials_elsewhere_ask() {
    let mut cmds = Vec::new();
    for opt in [
        "--server=https://203.0.113.9:6443",
        "-s https://203.0.113.9:6443",
        "--insecure-skip-tls-verify",
        "--insecure-skip-tls-verify=true",
        "--token=abc",
        "--token abc",
        "--kubeconfig=/tmp/k",
        "--kubeconfig /tmp/k",
        "--certificate-authority=/tmp/ca",
        "--client-certificate=/tmp/c",
        "--username=u",
        "--password=p",
        "--tls-server-name=x",
    ] {
        for shape in [
            "kubectl OPT get pods",
            "kubectl get pods OPT",
            "kubectl -n web OPT logs web",
            "kubectl describe node OPT",
        ] {
            cmds.push(shape.replace("OPT", opt));
        }
    }
    for c in [
        "docker -H tcp://203.0.113.9:2375 ps",
        "docker --host=ssh://x ps",
        "docker --tlscacert /tmp/ca ps",
        "DOCKER_HOST=tcp://203.0.113.9:2375 docker ps",
        "podman --url tcp://x ps",
        "podman --identity /tmp/k --url ssh://x ps",
        "helm --kube-apiserver https://x list",
        "helm --kube-token t list",
        "helm --kube-insecure-skip-tls-verify list",
        "helm --kubeconfig /tmp/k list",
        "KUBECONFIG=/tmp/k kubectl get pods",
        "vault status -address=https://203.0.113.9:8200",
        "vault kv get -address=https://203.0.113.9 secret/x",
        "vault status -tls-skip-verify",
        "VAULT_ADDR=https://203.0.113.9 vault status",
        "consul members -http-addr=https://203.0.113.9:8500",
        "CONSUL_HTTP_ADDR=203.0.113.9 consul members",
        "nomad status -address=https://203.0.113.9",
        "nomad job status -address=https://203.0.113.9 web",
    ] {
        cmds.push(c.to_owned());
    }
    assert_all_ask(&cmds);
}

/// No spec with subcommands reads an option it does not know before its subcommand:
/// the option might take the subcommand's place as its value.
#[test]
fn no_spec_reads_an_unknown_option_before_its_subcommand() {
    let policy = Policy::default_policy().unwrap();
    let paths = policy.subcommand_paths();
    assert!(paths.len() > 100, "{}", paths.len());
    let mut open = Vec::new();
    for (path, sub) in &paths {
        let head = path.join(" ");
        for opt in ["--nomos-undeclared", "--nomos-undeclared=1", "-%"] {
            let cmd = format!("{head} {opt} {sub}");
            let d = policy.classify(&cmd);
            if !d.unknown {
                open.push(format!("{cmd}: {}", d.rule()));
            }
        }
    }
    assert!(open.is_empty(), "{} read: {open:#?}", open.len());
}

/// Issue 13 A3: a strict spec asks for any option it does not declare, wherever the option
/// stands (before, between or after subcommands and operands): an unlisted option may take
/// the next word as its value, write a file or run a program.
#[test]
fn no_strict_spec_reads_an_option_it_does_not_declare() {
    let policy = Policy::default_policy().unwrap();
    let paths = policy.command_paths();
    assert!(paths.len() > 500, "{}", paths.len());
    // Builtins whose every word is an operand (`test -e`, `cd -P` is declared).
    const OPERANDS_ONLY: &[&str] = &["test", "[", "[[", "set", "cd"];
    let mut open = Vec::new();
    for (path, lenient, posix) in &paths {
        if *lenient || OPERANDS_ONLY.contains(&path[0].as_str()) {
            continue;
        }
        let head = path.join(" ");
        let tails: &[&str] = if *posix {
            // Options end at the first operand: `terraform plan x --y` passes `--y` on.
            &[
                "--nomos-undeclared",
                "--nomos-undeclared=1",
                "--nomos-undeclared x",
                "-% x",
            ]
        } else {
            &[
                "--nomos-undeclared",
                "--nomos-undeclared=1",
                "--nomos-undeclared x",
                "-% x",
                "x --nomos-undeclared",
            ]
        };
        for tail in tails {
            let cmd = format!("{head} {tail}");
            let d = policy.classify(&cmd);
            // Destructive asks every time; anything else must be unknown.
            if !d.unknown && d.class != Class::Destructive {
                open.push(format!("{cmd}: {} {}", d.class, d.rule()));
            }
        }
    }
    assert!(open.is_empty(), "{} read: {open:#?}", open.len());
}

/// Issue 13 A3: no lenient spec for a tool with subcommands or options that take values.
/// The few left ignore or print every word; a new one must be argued for here.
#[test]
fn only_commands_without_options_are_lenient() {
    let policy = Policy::default_policy().unwrap();
    let lenient: Vec<String> = policy
        .command_paths()
        .into_iter()
        .filter(|(_, lenient, _)| *lenient)
        .map(|(path, _, _)| path.join(" "))
        .collect();
    // `echo` prints any word but -n/-e/-E; `true`, `false` and `:` ignore every word.
    assert_eq!(lenient, vec!["echo", "true"], "{lenient:?}");
    for spec in [
        "[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\nstyle = \"lenient\"\n[[command.sub]]\nnames = [\"y\"]",
        "[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\nstyle = \"lenient\"\noptions = [\"-o --output=\"]",
    ] {
        assert_eq!(
            Policy::load(spec).unwrap_err().code(),
            "policy.spec.invalid",
            "{spec}"
        );
    }
}

/// A relative glob could expand to a file named like a dangerous option (`--files0-from=…`),
/// so it used to ask on every tool that has one (`du -sh *`, `grep -i error *.log`). It now
/// runs as `./*`, which never expands to an option, and the everyday read stays read-only.
#[test]
fn relative_globs_run_dotted_and_never_as_options() {
    let policy = Policy::default_policy().unwrap();
    for (cmd, runs) in [
        ("du -sh *", "du -sh ./*"),
        ("grep -i error *.log", "grep -i error ./*.log"),
        ("wc -l *.conf", "wc -l ./*.conf"),
        ("file *", "file ./*"),
        ("du -sh ?*", "du -sh ./?*"),
        ("grep -c ERROR [!a]*.log", "grep -c ERROR ./[!a]*.log"),
        ("sudo du -sh *", "sudo du -sh ./*"),
        ("du -sh /var/log/* *", "du -sh /var/log/* ./*"),
    ] {
        let d = policy.classify(cmd);
        assert_eq!(d.class, Class::ReadOnly, "{cmd}: {}", d.summary());
        assert_eq!(d.canonical.as_deref(), Some(runs), "{cmd}");
    }
    // Tools with no dangerous option keep the text as typed.
    for cmd in ["ls -la *.log", "cat *.conf", "stat *"] {
        assert_eq!(policy.classify(cmd).canonical.as_deref(), Some(cmd));
    }
    // A parameter may hold an absolute path: it cannot be dotted, and still asks.
    for cmd in ["du -sh $X", "grep -i error $F", "wc -l $(cat list)"] {
        assert!(policy.classify(cmd).unknown, "{cmd}");
    }
}

/// Found by the fuzzing smoke: a file-descriptor number too large for the parser's `i32`
/// right before a redirection made the shell parser panic, and the classifier with it. Every
/// such number, before every redirection operator, inside or outside a substitution, now
/// asks; a number that fits still parses.
#[test]
fn an_oversized_file_descriptor_number_asks_and_never_panics() {
    let policy = Policy::default_policy().unwrap();
    let numbers = [
        "2147483648".to_owned(),
        "99999999999".to_owned(),
        "18446744073709551616".to_owned(),
        "2".repeat(300),
    ];
    let operators = ["<", ">", ">>", "<<", "<&", ">&", "<>", "<(", ">|"];
    let mut cases = Vec::new();
    for n in &numbers {
        for op in operators {
            cases.push(format!("cat {n}{op}x"));
            cases.push(format!("acme.sh {n}{op}(true)--lc=do"));
            cases.push(format!("echo $(ls {n}{op}y)"));
            cases.push(format!("bash -c 'ls {n}{op}z'"));
        }
    }
    for cmd in &cases {
        let d = policy.classify(cmd);
        assert_eq!(d.class, Class::Destructive, "{cmd}: {d:?}");
    }
    // The largest number that fits parses as before.
    let fits = policy.classify("ls 2147483647>/dev/null");
    assert!(!fits.reason().contains("out of range"), "{fits:?}");
}
