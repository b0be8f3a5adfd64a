//! System tools: date, sysctl, services, units, ps, smartctl, ansible, midclt, getent.

use super::common::{environment_dump, span0};
use crate::classify::Engine;
use crate::decision::Class;
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::opts::Parsed;
use crate::paths::secret_variable_name;

pub(super) fn date(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for &i in &p.operands {
        let w = &words[i];
        let plus = matches!(w.parts.first(), Some(Part::Lit(s)) if s.starts_with('+'));
        if !plus {
            e.add(
                "spec.date",
                Class::ConfigMutation,
                w.span,
                "`date MMDDhhmm` sets the clock",
            );
        }
    }
}

pub(super) fn sysctl(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const DANGEROUS: &[&str] = &[
        "kernel.core_pattern",
        "kernel.modprobe",
        "kernel.poweroff_cmd",
        "fs.binfmt_misc",
        "kernel.sysrq",
    ];
    let writing = p.has("--write");
    for &i in &p.operands {
        let w = &words[i];
        let Some(l) = w.literal() else {
            e.fail(
                "unknown.sysctl",
                w.span,
                "sysctl argument only known at run time",
            );
            continue;
        };
        if l.contains('=') || writing {
            let key = l.split('=').next().unwrap_or(l).replace('/', ".");
            let class = if DANGEROUS.iter().any(|d| key.starts_with(d)) {
                Class::Destructive
            } else {
                Class::ConfigMutation
            };
            e.add(
                "spec.sysctl.write",
                class,
                w.span,
                format!("sets kernel parameter `{key}`"),
            );
        }
    }
}

/// Ad-hoc `ansible HOSTS -m MODULE`: fact and ping modules only read; `command`, `shell`,
/// `raw` and `script` run anything (the default module is `command`); others change hosts.
pub(super) fn ansible(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const RUNS: &[&str] = &["command", "shell", "raw", "script", "expect"];
    if e.policy
        .list(List::AnsibleNoopOptions)
        .iter()
        .any(|id| p.has(id))
    {
        return;
    }
    let span = span0(words);
    // Module arguments and extra variables are Jinja templates: `{{ lookup('pipe', …) }}`
    // runs a program and `lookup('file', …)` reads one on the controller; `-e @FILE` loads
    // a file whose parse errors quote it.
    for o in &p.occ {
        let id = o.opt.id.as_str();
        if id != "--args" && id != "--extra-vars" {
            continue;
        }
        let ospan = words[o.word].span;
        match o.value.literal() {
            Some(v) if v.contains("{{") || v.contains("{%") => e.fail(
                "unknown.ansible",
                ospan,
                "a Jinja template in the arguments can run lookups (pipe, file) on the controller",
            ),
            Some(v) if id == "--extra-vars" && v.starts_with('@') => e.read_literal(&v[1..], ospan),
            Some(_) => {}
            None => e.fail(
                "unknown.ansible",
                ospan,
                "the arguments are only known at run time",
            ),
        }
    }
    let module = match p.values("--module-name").next() {
        Some(o) => match o.value.literal() {
            Some(m) => m.rsplit('.').next().unwrap_or(m),
            None => {
                e.fail(
                    "unknown.ansible",
                    words[o.word].span,
                    "the module is only known at run time",
                );
                return;
            }
        },
        None => "command",
    };
    // `debug var=…` prints inventory and vault variables (`hostvars`, `ansible_password`).
    let prints_vars = module == "debug"
        && p.values("--args")
            .any(|o| o.value.literal().is_none_or(|v| v.contains("var=")));
    if prints_vars {
        e.add(
            "secret.ansible",
            Class::Destructive,
            span,
            "`debug var=…` prints inventory variables, which may hold vault secrets",
        );
    }
    if RUNS.contains(&module) {
        e.fail(
            "unknown.ansible",
            span,
            format!("the `{module}` module runs arbitrary commands"),
        );
    } else if !e.policy.listed(List::AnsibleReadModules, module) && !p.has("--check") {
        e.add(
            "spec.ansible.module",
            Class::ConfigMutation,
            span,
            format!("the `{module}` module may change the hosts"),
        );
    }
}

/// `midclt call METHOD …`: TrueNAS methods that only read end in a reading verb.
pub(super) fn midclt(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let method = p
        .operands
        .first()
        .map(|&i| (words[i].literal(), words[i].span));
    match method {
        Some((Some(m), _))
            if m.rsplit('.')
                .next()
                .is_some_and(|v| e.policy.listed(List::MidcltReadVerbs, v)) => {}
        Some((_, span)) => e.add(
            "spec.midclt.call",
            Class::Destructive,
            span,
            "calls a TrueNAS API method that may change state",
        ),
        None => e.fail(
            "unknown.midclt",
            span0(words),
            "`midclt call` without a method",
        ),
    }
}

pub(super) fn getent(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // The first operand is the database unless an option value the spec does not know
    // (`-s files shadow`) shifted it: then any later operand may be.
    let known_db = p
        .operands
        .first()
        .and_then(|&i| words[i].literal())
        .is_some_and(|d| e.policy.listed(List::GetentDatabases, d));
    for (n, &i) in p.operands.iter().enumerate() {
        match words[i].literal() {
            Some("shadow" | "gshadow" | "tcb") if n == 0 || !known_db => {
                e.add(
                    "secret.read",
                    Class::Destructive,
                    words[i].span,
                    "reads password hashes",
                );
            }
            Some(_) => {}
            None if n > 0 && known_db => {}
            None => e.fail(
                "unknown.getent",
                words[i].span,
                "database name only known at run time",
            ),
        }
    }
}

/// `systemd-analyze cat-config NAME` prints any file or directory under a configuration
/// root (`/etc/shadow`, `ssh/ssh_host_rsa_key`): each operand is judged as a read there.
pub(super) fn systemd_analyze(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    if p.sub_words.last().and_then(|&i| words[i].literal()) != Some("cat-config") {
        return;
    }
    for &i in &p.operands {
        let Some(l) = words[i].literal() else {
            e.read_patterns(&["**".to_owned()], true, words[i].span);
            continue;
        };
        let pats: Vec<String> = if l.starts_with('/') {
            vec![l.to_owned()]
        } else {
            ["/etc/", "/run/", "/usr/lib/", "/usr/local/lib/"]
                .iter()
                .map(|root| format!("{root}{l}"))
                .collect()
        };
        for pat in pats {
            let mut esc = String::with_capacity(pat.len());
            crate::paths::escape_into(&pat, &mut esc);
            e.read_patterns(&[esc], true, words[i].span);
        }
    }
}

/// `smartctl -l TYPE` reads a log, except the SCT settings that take values after a comma:
/// `scterc,70,70` sets the drive's error-recovery timeouts and `scttempint,N` its
/// temperature logging interval. A value known only at run time may be one of them.
pub(super) fn smartctl(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in p.values("--log") {
        let span = words[o.word].span;
        match o.value.literal() {
            None => e.fail(
                "unknown.smartctl_log",
                span,
                "`smartctl -l` value only known at run time may set an SCT setting",
            ),
            Some(v) if v.contains(',') => {
                let kind = v.split(',').next().unwrap_or(v).to_ascii_lowercase();
                if kind.starts_with("scterc") || kind.starts_with("scttempint") {
                    e.add(
                        "handler.smartctl_set",
                        Class::ConfigMutation,
                        span,
                        format!("`smartctl -l {v}` changes a drive setting"),
                    );
                }
            }
            Some(_) => {}
        }
    }
}

/// `systemctl show` prints every property, the unit's `Environment=` (service passwords)
/// included, unless `-p`/`-P` names only properties that hold none.
pub(super) fn unit_show(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let mut filtered = false;
    for o in p
        .occ
        .iter()
        .filter(|o| matches!(o.opt.id.as_str(), "--property" | "-P"))
    {
        filtered = true;
        let shows_env = o.value.literal().is_none_or(|v| {
            v.split(',').any(|prop| {
                let prop = prop.trim().to_ascii_lowercase();
                // `EnvironmentFiles` lists paths only.
                (prop.contains("environment") && prop != "environmentfiles")
                    || prop.starts_with("exec") && !prop.starts_with("execmain")
                    || prop.contains("credential")
                    || prop.contains("setcredential")
                    || prop.is_empty()
            })
        });
        if shows_env {
            e.add(
                "secret.environment",
                Class::Destructive,
                words[o.word].span,
                "prints a unit's environment or command lines (service credentials)",
            );
            return;
        }
    }
    if !filtered {
        e.add(
            "secret.environment",
            Class::Destructive,
            span0(words),
            "prints every property of the unit, its environment included (service credentials)",
        );
    }
}

/// BSD-style `ps e` (`ps eww`, `ps auxe`) appends each process's environment to its
/// command line: the credentials services were started with. BSD options are operands to
/// the parser; words that are values of BSD options are skipped. When a UNIX option's
/// value does not resolve (`-u xe`, no such user), procps parses the whole line again as
/// BSD options without the dashes: `ps -auxe` is `ps auxe`.
pub(super) fn ps(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // UNIX options whose value may fail to resolve (a user, group or terminal that does not
    // exist) and send ps back to BSD parsing, where every word is read without its dash.
    const MAY_FAIL: &[&str] = &[
        "--user",
        "--User",
        "--group",
        "--Group",
        "--pid",
        "--ppid",
        "--quick-pid",
        "--sid",
        "--tty",
    ];
    let may_fail = p.occ.iter().any(|o| {
        MAY_FAIL.contains(&o.opt.id.as_str())
            && o.value
                .literal()
                .is_none_or(|v| v != "root" && !v.bytes().all(|c| c.is_ascii_digit() || c == b','))
    });
    if may_fail {
        // As BSD letters, `e` counts until a letter that takes the rest as its value.
        let bsd_env = |w: &Word| {
            w.literal().is_none_or(|l| {
                let body = l.strip_prefix('-').unwrap_or(l);
                !body.starts_with('-')
                    && body.bytes().all(|c| c.is_ascii_alphabetic())
                    && body
                        .bytes()
                        .take_while(|c| !b"oOpUtk".contains(c))
                        .any(|c| c == b'e')
            })
        };
        if let Some(w) = words[1..].iter().find(|w| bsd_env(w)) {
            e.add(
                "secret.environment",
                Class::Destructive,
                w.span,
                "a value ps cannot resolve makes it read the line again as BSD options, where `e` prints the environment of processes",
            );
        }
    }
    const SHORT_WITH_VALUE: &[u8] = b"CGgpqstUuoOk";
    // BSD letters that take the next word (`ps axo user`, `ps p 12`).
    const BSD_WITH_VALUE: &[u8] = b"oOpUtk";
    const LONG_WITH_VALUE: &[&str] = &[
        "--pid",
        "--ppid",
        "--sid",
        "--tty",
        "--user",
        "--User",
        "--group",
        "--Group",
        "--format",
        "--sort",
        "--cols",
        "--columns",
        "--rows",
        "--width",
        "--lines",
        "--quick-pid",
    ];
    for &i in &p.operands {
        let is_value = i > 0
            && words[i - 1].literal().is_some_and(|prev| {
                let last = prev.bytes().last();
                if prev.starts_with("--") {
                    LONG_WITH_VALUE.contains(&prev)
                } else if prev.starts_with('-') {
                    prev.len() > 1 && last.is_some_and(|c| SHORT_WITH_VALUE.contains(&c))
                } else {
                    // A value itself never takes one (`ps -o user e` still shows `e`).
                    i > 1
                        && !words[i - 2].literal().is_some_and(|w| w.starts_with('-'))
                        && prev.bytes().all(|c| c.is_ascii_alphabetic())
                        && last.is_some_and(|c| BSD_WITH_VALUE.contains(&c))
                }
            });
        if is_value {
            continue;
        }
        let shows_env = match words[i].literal() {
            Some(w) => w.bytes().all(|c| c.is_ascii_alphabetic()) && w.contains('e'),
            None => true,
        };
        if shows_env {
            e.add(
                "secret.environment",
                Class::Destructive,
                words[i].span,
                "`ps e` prints the environment of processes (service credentials)",
            );
        }
    }
}

/// Units whose stop locks the operator out (shared with the systemctl spec's intent).
pub(super) const LOCKOUT_UNITS: &[&str] = &[
    "ssh",
    "sshd",
    "networking",
    "network",
    "systemd-networkd",
    "NetworkManager",
    "pve-cluster",
    "corosync",
    "pveproxy",
    "pvedaemon",
    "ufw",
    "firewalld",
    "nftables",
    "iptables",
    "cron",
];

pub(super) fn service(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    if p.has("--status-all") {
        return;
    }
    let unit = p.operands.first().and_then(|&i| words[i].literal());
    let action = p
        .operands
        .get(1)
        .map(|&i| (words[i].literal(), words[i].span));
    let Some((action, span)) = action else { return };
    // Restarting the network stack can drop the operator's own session.
    let network = unit.is_some_and(|u| {
        matches!(
            u.trim_end_matches(".service"),
            "networking" | "network" | "systemd-networkd" | "NetworkManager" | "network-manager"
        )
    });
    let class =
        match action {
            Some("status") => return,
            Some(
                "restart" | "force-reload" | "try-restart" | "condrestart" | "reload-or-restart",
            ) if network || unit.is_none() => Class::Destructive,
            Some(
                "start" | "restart" | "reload" | "force-reload" | "try-restart" | "condrestart"
                | "reload-or-restart",
            ) => Class::ConfigMutation,
            Some("stop") => {
                if unit.is_none_or(|u| LOCKOUT_UNITS.contains(&u.trim_end_matches(".service"))) {
                    Class::Destructive
                } else {
                    Class::ConfigMutation
                }
            }
            _ => {
                e.fail(
                    "unknown.service",
                    span,
                    "this service action is not modelled",
                );
                return;
            }
        };
    e.add("spec.service.action", class, span, "changes service state");
}

pub(super) fn printenv(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    if p.operands.is_empty() {
        environment_dump(e, words);
    } else if e.remote > 0 {
        // `docker exec app printenv DB_PASSWORD`
        for &i in &p.operands {
            if words[i].literal().is_none_or(secret_variable_name) {
                e.add(
                    "secret.variable",
                    Class::Destructive,
                    words[i].span,
                    "prints a variable that by its name holds a secret",
                );
            }
        }
    }
}

/// `rkhunter --check` appends to its own log under /var/log unless told not to.
pub(super) fn writes_log(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let quiet = e.policy.list(List::WritesLogQuietOptions);
    if !quiet.iter().any(|id| p.has(id)) {
        e.add(
            "write.log",
            Class::ConfigMutation,
            span0(words),
            "writes its log under /var/log",
        );
    }
}
