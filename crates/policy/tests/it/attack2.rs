//! Families from the second outside attack (part one): command separators inside tmux
//! arguments, GNU sed's real label and bracket grammar, dry runs that still run code or
//! are switched off again, options that load code or write files, stdin sent to peers.

use nomos_policy::{Class, classify};

use crate::families::{assert_all_ask, assert_all_read_only};

fn own(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn tmux_semicolon_words_start_another_command() {
    let readers = [
        "ls",
        "list-sessions",
        "has-session -t x",
        "info",
        "show-options -g",
        "list-windows -a",
        "display-message -p x",
    ];
    // The shell word that reaches tmux is `;` or ends with `;`.
    let seps = [" \\; ", " ';' ", " \";\" ", "\\; ", " x\\; ", " 'a;' "];
    let followers = [
        "kill-server",
        "send-keys -t 0 'rm -rf /tmp/x' Enter",
        "run-shell 'touch /tmp/p'",
        "new-session -d 'touch /tmp/p'",
        "source-file /tmp/evil",
        "new-window",
    ];
    let mut cmds = Vec::new();
    for r in readers {
        for s in seps {
            for f in followers {
                cmds.push(format!("tmux {r}{s}{f}"));
                cmds.push(format!("tmux -L sock {r}{s}{f}"));
            }
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "tmux ls",
        "tmux list-sessions -F '#{session_name}'",
        "tmux has-session -t backup",
        "tmux list-windows -a",
    ]);
}

#[test]
fn sed_labels_end_at_the_first_blank_and_the_rest_is_a_command() {
    let labels = [
        ":a ",
        ":loop ",
        ":a\t",
        "b end; :end ",
        "b x ",
        "t x ",
        "T x ",
        "v 4.2 ",
        "v;",
        "b;",
        ":a;",
        "/x/{:a ",
        "1,3{b x ",
    ];
    let effects = [
        "e touch /tmp/pwn",
        "w /tmp/pwn",
        "W /tmp/pwn",
        "s/x/y/w /tmp/pwn",
        "s/x/y/e",
        "r /etc/shadow",
        "R /etc/shadow",
        "1e id",
    ];
    let forms = [
        "sed 'S' /etc/hostname",
        "sed -e 'S' /etc/hostname",
        "sed -n 'S' /etc/hostname",
        "sed -E -e 'S' -e ':x' /etc/hostname",
    ];
    let mut cmds = Vec::new();
    for l in labels {
        for fx in effects {
            for f in forms {
                cmds.push(f.replace('S', &format!("{l}{fx}")));
            }
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "sed ':a;N;$!ba;s/\\n/ /g' /etc/hosts",
        "sed -e :a -e '$!N;s/\\n//;ta' /etc/hosts",
        "sed '/^#/b skip; s/a/b/; :skip' /etc/hosts",
        "sed -n '/start/,/end/{p;b}' /etc/hosts",
        "sed -n 'v 4.2' /etc/hosts",
    ]);
}

#[test]
fn sed_bracket_expressions_that_may_hide_the_delimiter_ask() {
    let regexes = [
        "[/]",
        "[[:alpha:]/]",
        "[^/]",
        "[]/]",
        "[a/b]",
        "[[:space:]/x]",
        "[[.-./.]]",
    ];
    let tails = [
        ";e touch /tmp/pwn",
        ";w /tmp/pwn",
        "w /tmp/pwn",
        "e",
        "\ne touch /tmp/pwn",
    ];
    let mut cmds = Vec::new();
    for r in regexes {
        for t in tails {
            cmds.push(format!("sed 's/{r}/x/{t}' /etc/hostname"));
            cmds.push(format!("sed -e 's/{r}/x/g{t}' /etc/hostname"));
            cmds.push(format!("sed '/{r}/{{s/a/b/}};{t}' /etc/hostname"));
            cmds.push(format!(
                "sed '\\%{}%d{t}' /etc/hostname",
                r.replace('/', "%")
            ));
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "sed 's/[^a-z]/x/g' /etc/hosts",
        "sed 's/[[:space:]]\\+/ /g' /etc/hosts",
        "sed 's|[/]|_|g' /etc/hosts",
        "sed 's/[\\/]/_/g' /etc/hosts",
        "sed -n '/^[[:space:]]*#/!p' /etc/hosts",
        "sed 's/[]]/x/' /etc/hosts",
    ]);
}

#[test]
fn make_is_an_interpreter_in_every_mode() {
    let modes = [
        "",
        "-n",
        "--dry-run",
        "--just-print",
        "--recon",
        "-q",
        "--question",
        "-t",
        "--touch",
        "-pn",
        "-C src -n",
        "-f /tmp/Makefile -n all",
        "--dry-run install",
    ];
    let mut cmds = Vec::new();
    for m in modes {
        for name in ["make", "gmake", "/usr/bin/make", "sudo make", "nice make"] {
            cmds.push(format!("{name} {m}").trim_end().to_owned());
        }
    }
    assert_all_ask(&cmds);
}

#[test]
fn dry_runs_that_still_run_code_ask() {
    let mut cmds = own(&[
        "pip install --dry-run x",
        "pip3 install --dry-run --no-deps ansible-core",
        "python3 -m pip install --dry-run x",
        "pipx install --dry-run x",
        "git push --dry-run",
        "git push -n origin main",
        "git push --dry-run origin main",
        "git -C /srv/repo push --dry-run",
        "ansible-playbook --check site.yml",
        "ansible-playbook -C -i hosts site.yml",
        "ansible-inventory --list",
        "ansible-inventory -i inv.py --graph",
        "terraform plan",
        "tofu plan -destroy",
        "terraform -chdir=envs/prod plan",
        "terragrunt plan",
        "terragrunt run-all plan",
        "borg benchmark crud /srv/b /tmp",
        "postfix check",
    ]);
    cmds.retain(|c| !c.is_empty());
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "terraform validate",
        "terraform -help",
        "ansible-inventory --help",
        "postfix status",
    ]);
}

#[test]
fn dry_run_values_that_disable_the_dry_run_or_come_last_decide() {
    let mut cmds = Vec::new();
    for off in ["none", "false", "None", "FALSE", "0"] {
        for tool in [
            "kubectl apply -f x.yaml",
            "kubectl delete pod x",
            "kubectl create ns x",
            "helm install x y",
            "helm upgrade x y",
        ] {
            cmds.push(format!("{tool} --dry-run={off}"));
            cmds.push(format!("{tool} --dry-run=client --dry-run={off}"));
            cmds.push(format!("{tool} --dry-run --dry-run={off}"));
            cmds.push(format!("{tool} --dry-run=server --dry-run={off}"));
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "kubectl apply --dry-run=none --dry-run=client -f x.yaml",
        "kubectl delete pod x --dry-run=client",
        "kubectl apply -f x.yaml --dry-run=server",
    ]);
}

#[test]
fn options_that_load_native_code_or_programs_ask() {
    let mut cmds = Vec::new();
    for sub in [
        "x509 -in x.pem -noout",
        "s_client -connect x:443",
        "req -in r.csr -noout -text",
        "dgst -sha256 f",
        "version",
        "list -providers",
        "rand -hex 8",
    ] {
        for opt in [
            "-provider-path /tmp -provider evil",
            "-provider evil",
            "-provider-path /tmp",
            "-config /tmp/evil.cnf",
            "-provparam x=y",
        ] {
            cmds.push(format!("openssl {sub} {opt}"));
        }
    }
    for tool in [
        "iptables -L",
        "ip6tables -L -n",
        "iptables-save",
        "ip6tables-save",
        "iptables-legacy-save",
        "iptables-nft-save -t nat",
        "iptables -S",
        "iptables-restore -t rules.v4",
        "ip6tables-restore --test rules.v6",
    ] {
        for opt in [
            "-M /tmp/evil",
            "--modprobe=/tmp/evil",
            "--modprobe /tmp/evil",
            "-M/tmp/evil",
        ] {
            cmds.push(format!("{tool} {opt}"));
        }
    }
    for sub in ["status", "iostat -v", "status -v rpool", "iostat 5 1"] {
        for c in ["-c evil", "-c upath,smart", "-c smart"] {
            cmds.push(format!("zpool {sub} {c}"));
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "openssl x509 -in /etc/ssl/certs/ca.pem -noout -text",
        "iptables -L -n -v",
        "iptables-save",
        "zpool status -v",
    ]);
}

#[test]
fn git_signature_checks_run_pinned_programs() {
    for c in [
        "git verify-commit HEAD",
        "git verify-tag v1",
        "git tag -v v1",
        "git log --pretty=format:'%G?'",
        "git log --format='%GS %GK'",
        "git for-each-ref --format='%(signature)'",
        "git status",
    ] {
        let d = classify(c);
        assert_eq!(d.class, Class::ReadOnly, "{c}");
        let canon = d
            .canonical
            .expect("a read-only command has a canonical form");
        for pin in [
            "gpg.program=gpg",
            "gpg.ssh.program=ssh-keygen",
            "gpg.x509.program=gpgsm",
        ] {
            assert!(canon.contains(pin), "{c}: {canon} lacks {pin}");
        }
        // The canonical text is itself accepted as read-only.
        assert_eq!(classify(&canon).class, Class::ReadOnly, "{c} -> {canon}");
    }
    // Setting those programs by hand is still refused.
    assert_all_ask(&own(&[
        "git -c gpg.program=/tmp/x verify-commit HEAD",
        "git -c gpg.ssh.program=sh log --format=%G?",
    ]));
}

#[test]
fn percent_encoded_raw_api_paths_ask() {
    let mut cmds = Vec::new();
    for p in [
        "/api/v1/namespaces/default/%73ecrets",
        "/api/v1/%73ecrets",
        "/api/v1/namespaces/x/secret%73",
        "/api/v1/namespaces/x/%2573ecrets",
        "/api/v1/namespaces/x/SE%43RETS",
    ] {
        cmds.push(format!("kubectl get --raw {p}"));
        cmds.push(format!("kubectl get --raw '{p}'"));
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "kubectl get --raw /healthz",
        "kubectl get --raw '/readyz?verbose'",
        "kubectl get --raw /metrics",
    ]);
}

#[test]
fn options_that_write_files_ask() {
    let mut cmds = own(&[
        "apt-cache -p /etc/motd policy",
        "apt-cache --pkg-cache=/etc/motd policy",
        "apt-cache -o Dir::Cache::pkgcache=/etc/motd policy",
        "apt-cache -o Dir::Cache=/tmp/x show nginx",
        "apt-cache -s /etc/motd policy",
        "apt-cache --src-cache=/etc/motd show x",
        "apt-cache -c /tmp/apt.conf policy",
        "blkid -w /etc/motd",
        "blkid -c /etc/motd -p /dev/sda",
        "blkid --cache-file=/etc/motd",
        "blkid -g -c /tmp/x",
        "blkid -g",
        "ipset list -file /etc/motd",
        "ipset list x -file /tmp/x",
        "ipset save -file /etc/motd",
        "ipset -file /etc/motd save",
        "ipset list -output save -file /tmp/x",
        "ipset list -f /tmp/x",
        "ipset save blocklist -f /etc/motd",
    ]);
    for o in [
        "-keylogfile /etc/motd",
        "-sess_out /tmp/s",
        "-msgfile /tmp/x",
    ] {
        cmds.push(format!("openssl s_client -connect x:443 {o}"));
        cmds.push(format!("openssl s_client {o} -connect x:443 -servername x"));
    }
    for v in ["accept-new", "no", "off", "No", "ACCEPT-NEW", "false"] {
        cmds.push(format!("ssh -o StrictHostKeyChecking={v} host ls"));
        cmds.push(format!("ssh -oStrictHostKeyChecking={v} host uptime"));
        cmds.push(format!("ssh -o 'StrictHostKeyChecking {v}' host uptime"));
        cmds.push(format!(
            "ssh -o stricthostkeychecking={v} -p 2222 host uptime"
        ));
        cmds.push(format!(
            "rsync -n -a -e 'ssh -o StrictHostKeyChecking={v}' host:/etc/ /tmp/x"
        ));
        cmds.push(format!(
            "rsync --list-only -e 'ssh -oStrictHostKeyChecking={v}' host:/srv/"
        ));
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "apt-cache policy nginx",
        "dpkg-query -s nginx",
        "dpkg-query -p nginx",
        "blkid /dev/sda1",
        "ipset list -n",
        "ssh -o StrictHostKeyChecking=yes host uptime",
        "ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null host uptime",
        "openssl s_client -connect example.com:443 -servername example.com",
    ]);
}

#[test]
fn kill_of_process_groups_is_not_the_signal_zero_probe() {
    let mut cmds = Vec::new();
    for pre in [
        "kill --",
        "kill -s TERM --",
        "kill -9",
        "kill -TERM",
        "kill -s 9",
        "kill -n 15 --",
        "kill -KILL --",
    ] {
        for pid in ["-0", "-1", "-0 1", "-1234", "0"] {
            cmds.push(format!("{pre} {pid}"));
        }
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "kill -0 1234",
        "kill -s 0 1234",
        "kill -l",
        "kill -0 -- 1234",
        "kill -n 0 -- -1",
    ]);
}

#[test]
fn network_clients_with_data_on_stdin_ask() {
    let producers = [
        "echo FLUSHALL | ",
        "printf 'FLUSHALL\\r\\n' | ",
        "cat /tmp/cmds | ",
        "echo x | timeout 5 ",
        "{ echo a; echo b; } | ",
        "echo x | sudo ",
    ];
    let clients = [
        "nc 127.0.0.1 6379",
        "nc -U /var/run/docker.sock",
        "ncat localhost 6379",
        "netcat -w 2 host 25",
        "openssl s_client -connect x:443 -ign_eof",
        "openssl s_client -quiet -connect redis:6380",
    ];
    let mut cmds = Vec::new();
    for c in clients {
        for p in producers {
            cmds.push(format!("{p}{c}"));
        }
        for r in ["< /tmp/cmds", "<<< FLUSHALL", "0< /tmp/x", "<&3"] {
            cmds.push(format!("{c} {r}"));
        }
        cmds.push(format!("{{ {c}; }} < /tmp/cmds"));
        cmds.push(format!("( {c} ) <<< FLUSHALL"));
        cmds.push(format!("while true; do {c}; done < /tmp/x"));
    }
    assert_all_ask(&cmds);
    assert_all_read_only(&[
        "nc -zv 10.0.0.5 22",
        "echo x | nc -z host 22",
        "echo | openssl s_client -connect h:443 -servername h 2>/dev/null | openssl x509 -noout -dates",
        "openssl s_client -connect h:587 -starttls smtp </dev/null",
        "openssl x509 -noout -text < /etc/ssl/certs/ca.pem",
        "echo x | openssl base64",
    ]);
}

#[test]
fn everyday_reads_from_the_fatigue_list_stay_read_only() {
    assert_all_read_only(&[
        "grep -rI TODO src/",
        "grep -I foo /etc/hosts",
        "grep -rnIi 'error' /var/log/nginx/",
        "at -l",
        "at -l -q a",
        "help",
        "help cd",
        "help -m read",
    ]);
    // Their neighbours that run or schedule something still ask.
    assert_all_ask(&own(&[
        "at now + 1 minute",
        "at -f /tmp/x now",
        "at -l now",
        "grep -rI TODO ~",
        "grep -I -f /etc/shadow x",
    ]));
}
