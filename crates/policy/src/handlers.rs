//! Command-specific logic the spec data cannot express: wrappers (recursion),
//! embedded programs (sed, awk, sh -c), request methods, modes and neutralisation.

use crate::classify::{ArgvOut, Binding, Engine, env_allowed, quoted};
use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lower::is_name;
use crate::opts::{Parsed, Val};
use crate::paths;
use crate::scripts::{self, Effect};
use crate::spec::CmdSpec;

/// Handlers a spec can name with `handler = "…"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handler {
    // Wrappers.
    Wrapper,
    Sudo,
    Env,
    Xargs,
    Watch,
    Shell,
    Ssh,
    ExecArgv,
    // Programs and modes.
    Sed,
    Awk,
    Git,
    GitList,
    GitConfig,
    Curl,
    Wget,
    Tar,
    Unzip,
    Dd,
    Date,
    Sysctl,
    Nft,
    Tmux,
    StdinPeer,
    Wait,
    Less,
    Man,
    Printf,
    Read,
    Getent,
    DockerRun,
    ContainerInspect,
    Ps,
    WritesLog,
    SecretSearch,
    Rsync,
    SshOpts,
    Service,
    Parted,
    Ansible,
    Printenv,
    Midclt,
    Echo,
    Debugfs,
    SubAsCommand,
    Python,
    Php,
    Psql,
    Mysql,
    EtckeeperVcs,
    SystemdAnalyze,
    Smartctl,
    // Full handlers (no generic option parsing).
    Find,
    Kill,
    Cd,
    Set,
    Export,
    Unset,
    Command,
    Exec,
    Test,
    Sqlite,
    Redis,
    UnitShow,
    ContainerTop,
}

impl Handler {
    pub(crate) fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "wrapper" => Self::Wrapper,
            "sudo" => Self::Sudo,
            "env" => Self::Env,
            "xargs" => Self::Xargs,
            "watch" => Self::Watch,
            "shell" => Self::Shell,
            "ssh" => Self::Ssh,
            "exec_argv" => Self::ExecArgv,
            "sed" => Self::Sed,
            "awk" => Self::Awk,
            "git" => Self::Git,
            "git_list" => Self::GitList,
            "git_config" => Self::GitConfig,
            "curl" => Self::Curl,
            "wget" => Self::Wget,
            "tar" => Self::Tar,
            "unzip" => Self::Unzip,
            "dd" => Self::Dd,
            "date" => Self::Date,
            "sysctl" => Self::Sysctl,
            "nft" => Self::Nft,
            "tmux" => Self::Tmux,
            "stdin_peer" => Self::StdinPeer,
            "wait" => Self::Wait,
            "less" => Self::Less,
            "man" => Self::Man,
            "printf" => Self::Printf,
            "read" => Self::Read,
            "getent" => Self::Getent,
            "etckeeper_vcs" => Self::EtckeeperVcs,
            "systemd_analyze" => Self::SystemdAnalyze,
            "smartctl" => Self::Smartctl,
            "docker_run" => Self::DockerRun,
            "container_inspect" => Self::ContainerInspect,
            "ps" => Self::Ps,
            "writes_log" => Self::WritesLog,
            "secret_search" => Self::SecretSearch,
            "rsync" => Self::Rsync,
            "ssh_opts" => Self::SshOpts,
            "service" => Self::Service,
            "parted" => Self::Parted,
            "sub_as_command" => Self::SubAsCommand,
            "debugfs" => Self::Debugfs,
            "echo" => Self::Echo,
            "midclt" => Self::Midclt,
            "printenv" => Self::Printenv,
            "ansible" => Self::Ansible,
            "python" => Self::Python,
            "php" => Self::Php,
            "psql" => Self::Psql,
            "mysql" => Self::Mysql,
            "sqlite" => Self::Sqlite,
            "redis" => Self::Redis,
            "find" => Self::Find,
            "kill" => Self::Kill,
            "cd" => Self::Cd,
            "set" => Self::Set,
            "export" => Self::Export,
            "unset" => Self::Unset,
            "command" => Self::Command,
            "exec" => Self::Exec,
            "test" => Self::Test,
            "unit_show" => Self::UnitShow,
            "container_top" => Self::ContainerTop,
            _ => return None,
        })
    }

    /// Full handlers parse their own arguments.
    pub(crate) fn is_full(self) -> bool {
        matches!(
            self,
            Self::Find
                | Self::Kill
                | Self::Cd
                | Self::Set
                | Self::Export
                | Self::Unset
                | Self::Command
                | Self::Exec
                | Self::Test
                | Self::Sqlite
                | Self::Redis
        )
    }

    pub(crate) fn run_full(
        self,
        e: &mut Engine<'_>,
        spec: &CmdSpec,
        words: &[Word],
        off: usize,
        ao: &mut ArgvOut,
    ) {
        match self {
            Self::Find => find(e, spec, words, off, ao),
            Self::Kill => kill(e, spec, words),
            Self::Cd => cd(e, spec, words),
            Self::Set => set(e, spec, words),
            Self::Export => export(e, spec, words),
            Self::Unset => unset(e, spec, words),
            Self::Command => command(e, spec, words, off, ao),
            Self::Exec => exec(e, spec, words, off, ao),
            Self::Test => test(e, spec, words),
            Self::Sqlite => crate::dbclients::sqlite(e, spec, words, off, ao),
            Self::Redis => crate::dbclients::redis(e, spec, words),
            _ => {}
        }
    }

    pub(crate) fn run_post(
        self,
        e: &mut Engine<'_>,
        p: &Parsed<'_>,
        words: &[Word],
        off: usize,
        ao: &mut ArgvOut,
    ) {
        match self {
            Self::Wrapper => {
                if let Some(r) = p.rest {
                    // `pct exec`, `lxc-attach`, `qm guest exec`: the command runs in a guest.
                    let guest = p.leaf().id.contains("exec") || p.leaf().id.contains("attach");
                    e.remote += u32::from(guest);
                    e.argv(&words[r..], off + r, ao);
                    e.remote -= u32::from(guest);
                }
            }
            Self::Sudo => sudo(e, p, words, off, ao),
            Self::Env => env(e, p, words, off, ao),
            Self::Xargs => xargs(e, p, words, off, ao),
            Self::Watch => watch(e, p, words, off, ao),
            Self::Shell => shell(e, p, words, off, ao),
            Self::Ssh => ssh(e, p, words, off, ao),
            Self::ExecArgv => exec_argv(e, p, words, off, ao),
            Self::Sed => sed(e, p, words),
            Self::Awk => awk(e, p, words),
            Self::Git => git(e, p, words, off, ao),
            Self::GitList => git_list(e, p, words),
            Self::GitConfig => git_config(e, p, words),
            Self::Curl => curl(e, p, words, off, ao),
            Self::Wget => wget(e, p, words, off, ao),
            Self::Tar => tar(e, p, words),
            // `unzip -p`/`-c`: members to standard output; the first operand is the zip.
            Self::Unzip if (p.has("-p") || p.has("-c")) && !p.operands.is_empty() => {
                members_to_stdout(e, &p.operands[1..], words);
            }
            Self::Unzip => {}
            Self::Dd => dd(e, p, words),
            Self::Date => date(e, p, words),
            Self::Sysctl => sysctl(e, p, words),
            Self::Nft => nft(e, p, words),
            Self::Tmux => tmux(e, words),
            Self::StdinPeer => stdin_peer(e, p, words),
            Self::Wait => {
                for o in p.values("-p") {
                    crate::classify::assign_name(
                        e,
                        o.value.literal(),
                        words[o.word].span,
                        "wait -p",
                    );
                }
            }
            Self::Less => less(e, p, words, off, ao),
            Self::Man => {
                // `man -l FILE` formats any file: its text is printed.
                if p.has("--local-file") {
                    for &i in &p.operands {
                        e.read_target(&words[i], false);
                    }
                }
                // The pager is `cat`: no shell escapes from a pager.
                for w in ["env", "MANPAGER=cat", "PAGER=cat"] {
                    ao.inserts.push((off, w.to_owned()));
                }
            }
            Self::Printf => {
                printf(e, p, words);
                print_secrets(e, &p.operands, words);
            }
            Self::Service => service(e, p, words),
            Self::Parted => parted(e, p, words),
            Self::Python => python(e, p, words),
            Self::Debugfs => debugfs(e, p, words),
            Self::Echo => print_secrets(e, &p.operands, words),
            Self::Midclt => midclt(e, p, words),
            Self::Ansible => ansible(e, p, words),
            Self::Printenv => {
                if p.operands.is_empty() {
                    environment_dump(e, words);
                } else if e.remote > 0 {
                    // `docker exec app printenv DB_PASSWORD`
                    for &i in &p.operands {
                        if words[i].literal().is_none_or(secret_name) {
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
            Self::Php => php(e, p, words, off, ao),
            // A multi-call binary (`k3s kubectl …`): the subcommand is the program.
            Self::SubAsCommand => {
                if let Some(&i) = p.sub_words.last() {
                    e.argv(&words[i..], off + i, ao);
                }
            }
            Self::Psql => crate::dbclients::psql(e, p, words, off, ao),
            Self::Mysql => crate::dbclients::mysql(e, p, words),
            Self::Read => read(e, p, words),
            Self::Getent => getent(e, p, words),
            Self::EtckeeperVcs => etckeeper_vcs(e, p, words),
            Self::SystemdAnalyze => systemd_analyze(e, p, words),
            Self::Smartctl => smartctl(e, p, words),
            Self::DockerRun => docker_run(e, p, words),
            Self::ContainerInspect => container_inspect(e, p, words),
            Self::Ps => ps(e, p, words),
            Self::UnitShow => unit_show(e, p, words),
            Self::ContainerTop => container_top(e, p, words),
            Self::SecretSearch => secret_search(e, p, words),
            // `rkhunter --check` appends to its own log under /var/log unless told not to.
            Self::WritesLog => {
                let quiet = ["--nolog", "--no-log", "--version", "--help", "--list"];
                if !quiet.iter().any(|id| p.has(id)) {
                    e.add(
                        "write.log",
                        Class::ConfigMutation,
                        span0(words),
                        "writes its log under /var/log",
                    );
                }
            }
            Self::Rsync => rsync(e, p, words),
            Self::SshOpts => {
                ssh_control(e, p, words);
                for o in p.values("-o") {
                    ssh_option(e, &o.value, words[o.word].span);
                }
            }
            _ => {}
        }
    }
}

pub(crate) fn span0(words: &[Word]) -> Span {
    words.first().map(|w| w.span).unwrap_or_default()
}

pub(crate) fn spec_finding(e: &mut Engine<'_>, spec: &CmdSpec, class: Class, span: Span) {
    e.add(
        format!("spec.{}", spec.id),
        class,
        span,
        spec.reason.clone(),
    );
}

/// `NAME=value` words before a wrapped command (sudo, env).
fn leading_assignments(e: &mut Engine<'_>, words: &[Word], mut r: usize) -> usize {
    while let Some(w) = words.get(r) {
        let Some(Part::Lit(first)) = w.parts.first() else {
            break;
        };
        let Some(eq) = first.find('=') else { break };
        let name = &first[..eq];
        if !is_name(name) {
            break;
        }
        let value = w.literal().map(|l| l[eq + 1..].to_owned());
        if !env_allowed(name, value.as_deref(), true) {
            e.fail(
                "unknown.env",
                w.span,
                format!(
                    "environment variable `{name}` with this value can change what the command runs"
                ),
            );
        }
        r += 1;
    }
    r
}

fn sudo(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let Some(r) = p.rest else {
        let listing = [
            "--list",
            "--validate",
            "--reset-timestamp",
            "--remove-timestamp",
            "--version",
            "--help",
        ]
        .iter()
        .any(|id| p.has(id));
        if !listing {
            e.fail(
                "unknown.sudo",
                span0(words),
                "`sudo` without a command opens a shell",
            );
        }
        return;
    };
    let r = leading_assignments(e, words, r);
    // `env LANG=C`: assignments and no command print the environment.
    let assignment = |w: &Word| {
        w.literal()
            .and_then(|l| l.split_once('='))
            .is_some_and(|(n, _)| is_name(n))
    };
    if words[r..].iter().all(assignment) {
        environment_dump(e, words);
    }
    if r < words.len() {
        e.argv(&words[r..], off + r, ao);
    }
}

fn env(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let Some(r) = p.rest else {
        environment_dump(e, words);
        return;
    };
    let r = leading_assignments(e, words, r);
    if r < words.len() {
        e.argv(&words[r..], off + r, ao);
    } else if !p.occ.iter().any(|o| o.opt.id == "--ignore-environment") {
        // `env LANG=C` runs nothing: it prints the whole environment, with the assignments.
        environment_dump(e, words);
    }
}

fn xargs(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let pattern = e.stdin_paths.clone().unwrap_or_else(|| "**".to_owned());
    let may_be_option = e.stdin_paths.is_none();
    let synthetic = |span: Span| Word {
        parts: smallvec::smallvec![Part::Synthetic {
            pattern: pattern.clone(),
            may_be_option,
        }],
        span,
    };
    let replace = p
        .occ
        .iter()
        .filter(|o| matches!(o.opt.id.as_str(), "--replace" | "-I" | "-i"))
        .map(|o| o.value.literal().unwrap_or("{}").to_owned())
        .next_back();
    let Some(r) = p.rest else { return };
    let mut inner: Vec<Word> = words[r..].to_vec();
    match replace {
        Some(rep) => {
            for w in inner.iter_mut().skip(1) {
                let hit = w
                    .parts
                    .iter()
                    .any(|pt| matches!(pt, Part::Lit(s) if s.contains(rep.as_str())));
                if hit {
                    if w.literal() == Some(rep.as_str()) {
                        *w = synthetic(w.span);
                    } else {
                        let first_dash =
                            matches!(w.parts.first(), Some(Part::Lit(s)) if s.starts_with('-'));
                        *w = Word {
                            parts: smallvec::smallvec![Part::Synthetic {
                                pattern: "**".to_owned(),
                                may_be_option: first_dash || may_be_option,
                            }],
                            span: w.span,
                        };
                    }
                }
            }
        }
        None => inner.push(synthetic(words[words.len() - 1].span)),
    }
    e.argv(&inner, off + r, ao);
}

/// Joins literal words the way ssh and watch do before a shell re-parses them.
fn joined_literal(e: &mut Engine<'_>, words: &[Word], what: &str) -> Option<String> {
    let mut s = String::new();
    for (k, w) in words.iter().enumerate() {
        let Some(l) = w.literal() else {
            e.fail(
                "unknown.dynamic_command",
                w.span,
                format!("the command {what} runs is only known at run time"),
            );
            return None;
        };
        if k > 0 {
            s.push(' ');
        }
        s.push_str(l);
    }
    Some(s)
}

/// Replaces words `r..` with one quoted canonical script.
fn rewrite_script(ao: &mut ArgvOut, off: usize, r: usize, n: usize, canonical: &str) {
    ao.rewrites.push((off + r, quoted(canonical)));
    for k in r + 1..n {
        ao.rewrites.push((off + k, String::new()));
    }
}

fn watch(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let Some(r) = p.rest else { return };
    if p.has("--exec") {
        e.argv(&words[r..], off + r, ao);
        return;
    }
    let span = words[r].span;
    if let Some(text) = joined_literal(e, &words[r..], "watch")
        && let Some(c) = e.nested_script(&text, span, true)
    {
        rewrite_script(ao, off, r, words.len(), &c);
    }
}

fn shell(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let name = words[0].literal().unwrap_or("sh");
    let sh_mode = !name.ends_with("bash");
    // Shell options that change parsing or export every variable (`-o keyword`,
    // `-o allexport`, `-o posix`) make the script mean something else.
    for o in p.values("-o") {
        let safe = matches!(
            o.value.literal(),
            Some(
                "errexit" | "nounset" | "pipefail" | "xtrace" | "noclobber" | "verbose" | "noglob"
            )
        );
        if !safe {
            e.fail(
                "unknown.shell_option",
                words[o.word].span,
                "this shell option changes how the script is parsed or run",
            );
        }
    }
    if !p.has("-c") {
        if p.has("--version") || p.has("--help") {
            return;
        }
        // `bash -n script.sh`: a syntax check. Nothing runs, not even `set +n` (a login
        // shell would still read its profile first).
        if p.has("-n") && !p.has("--login") {
            if let Some(&i) = p.operands.first() {
                e.read_target(&words[i], false);
            }
            return;
        }
        let why = if p.operands.is_empty() {
            "a shell without `-c` reads commands interactively"
        } else {
            "runs a script file the classifier cannot see"
        };
        e.fail("unknown.shell", span0(words), why);
        return;
    }
    let Some(&idx) = p.operands.first() else {
        e.fail(
            "unknown.shell",
            span0(words),
            "`-c` without a command string",
        );
        return;
    };
    let w = &words[idx];
    let Some(text) = w.literal() else {
        e.fail(
            "unknown.dynamic_command",
            w.span,
            "the shell script is only known at run time",
        );
        return;
    };
    if let Some(c) = e.nested_script(text, w.span, sh_mode) {
        ao.rewrites.push((off + idx, quoted(&c)));
    }
}

const SSH_SAFE_OPTIONS: &[&str] = &[
    "batchmode",
    "connecttimeout",
    "connectionattempts",
    "stricthostkeychecking",
    "globalknownhostsfile",
    "port",
    "user",
    "identityfile",
    "identitiesonly",
    "loglevel",
    "serveraliveinterval",
    "serveralivecountmax",
    "compression",
    "hostkeyalgorithms",
    "pubkeyacceptedkeytypes",
    "pubkeyacceptedalgorithms",
    "preferredauthentications",
    "passwordauthentication",
    "kbdinteractiveauthentication",
    "addressfamily",
    "checkhostip",
    "numberofpasswordprompts",
    "requesttty",
    "ciphers",
    "macs",
    "kexalgorithms",
    "tcpkeepalive",
    "verifyhostkeydns",
    "hashknownhosts",
    "proxyjump",
    "updatehostkeys",
    "exitonforwardfailure",
    "hostkeyalias",
    "hostname",
    "certificatefile",
    "addkeystoagent",
    "forwardx11",
    "gssapiauthentication",
    "escapechar",
    "visualhostkey",
    "fingerprinthash",
    "ipqos",
    "rekeylimit",
    "bindaddress",
    "clearallforwardings",
];
const SSH_FORWARD_OPTIONS: &[&str] = &[
    "localforward",
    "remoteforward",
    "dynamicforward",
    "forwardagent",
];

fn ssh_option(e: &mut Engine<'_>, v: &Val<'_>, span: Span) {
    let Some(text) = v.literal() else {
        e.fail(
            "unknown.ssh_option",
            span,
            "an ssh `-o` option is only known at run time",
        );
        return;
    };
    let key: String = text
        .split(['=', ' ', '\t'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if SSH_SAFE_OPTIONS.contains(&key.as_str()) {
        return;
    }
    let value = text[key.len()..]
        .trim_start_matches([' ', '\t'])
        .trim_start_matches('=')
        .trim();
    match key.as_str() {
        // New host keys are appended to the first file (`/dev/null` is the usual value).
        "userknownhostsfile" => {
            for f in value.split_whitespace().take(1) {
                e.write_literal(&ssh_tokens(f), "ssh `UserKnownHostsFile` writes", span);
            }
            return;
        }
        // A master creates its socket at `ControlPath` (judged in `ssh_control`) and
        // `ControlPersist` leaves it running after the command.
        "controlpath" | "controlmaster" => return,
        "controlpersist" => {
            if !matches!(value.to_ascii_lowercase().as_str(), "no" | "false") {
                e.add(
                    "option.ssh",
                    Class::ConfigMutation,
                    span,
                    "ssh `ControlPersist` leaves a master connection running",
                );
            }
            return;
        }
        _ => {}
    }
    if SSH_FORWARD_OPTIONS.contains(&key.as_str()) {
        e.add(
            "option.ssh",
            Class::ConfigMutation,
            span,
            format!("ssh option `{key}` forwards connections"),
        );
        return;
    }
    e.fail(
        "unknown.ssh_option",
        span,
        format!("ssh option `{key}` can run local commands or is not modelled"),
    );
}

/// `%h`, `%C` and the other ssh path tokens expand at run time: any name characters.
fn ssh_tokens(f: &str) -> String {
    let mut out = String::with_capacity(f.len());
    let mut cs = f.chars();
    while let Some(c) = cs.next() {
        if c == '%' {
            cs.next();
            out.push('*');
        } else {
            out.push(c);
        }
    }
    out
}

/// `-o ControlMaster=yes|auto… -o ControlPath=P` (or `-M -S P`) creates a socket at P.
fn ssh_control(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let opts: Vec<(String, String, Span)> = p
        .values("-o")
        .filter_map(|o| {
            let t = o.value.literal()?;
            let (k, v) = t.split_once(['=', ' ', '\t'])?;
            Some((
                k.to_ascii_lowercase(),
                v.trim_start_matches(['=', ' ']).trim().to_owned(),
                words[o.word].span,
            ))
        })
        .collect();
    let master = p.has("-M")
        || opts
            .iter()
            .any(|(k, v, _)| k == "controlmaster" && !v.eq_ignore_ascii_case("no"));
    if !master {
        return;
    }
    let mut paths: Vec<(String, Span)> = opts
        .iter()
        .filter(|(k, v, _)| k == "controlpath" && !v.eq_ignore_ascii_case("none"))
        .map(|(_, v, s)| (ssh_tokens(v), *s))
        .collect();
    for o in p.values("-S") {
        match o.value.literal() {
            Some(v) if !v.eq_ignore_ascii_case("none") => {
                paths.push((ssh_tokens(v), words[o.word].span));
            }
            Some(_) => {}
            None => e.fail(
                "unknown.ssh_option",
                words[o.word].span,
                "the ssh control socket path is only known at run time",
            ),
        }
    }
    for (path, span) in paths {
        let mut pat = String::with_capacity(path.len());
        for c in path.chars() {
            if matches!(c, '?' | '[' | ']' | '\\') {
                pat.push('\\');
            }
            pat.push(c);
        }
        e.write_patterns(&[pat], "ssh `ControlMaster` creates its socket at", span);
    }
}

fn ssh(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    ssh_control(e, p, words);
    for o in p.values("-o") {
        ssh_option(e, &o.value, words[o.word].span);
    }
    ssh_known_hosts(e, p, words);
    let Some(r) = p.rest else {
        let harmless = p.has("-N") || p.has("-G") || p.has("-V") || p.has("-Q");
        if !harmless {
            e.fail(
                "unknown.ssh",
                span0(words),
                "`ssh` without a command opens an interactive login",
            );
        }
        return;
    };
    let span = words[r].span;
    if let Some(text) = joined_literal(e, &words[r..], "ssh") {
        e.remote += 1;
        let c = e.nested_script(&text, span, false);
        e.remote -= 1;
        if let Some(c) = c {
            rewrite_script(ao, off, r, words.len(), &c);
        }
    }
}

/// `StrictHostKeyChecking=no|off|accept-new` appends unknown host keys to the user's
/// known_hosts (a write that also trusts a new key) unless `UserKnownHostsFile` names
/// another file (judged in `ssh_option`).
fn ssh_known_hosts(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let mut other_file = false;
    let mut adds: Option<Span> = None;
    for o in p.values("-o") {
        let Some(text) = o.value.literal() else {
            continue;
        };
        let (key, value) = text
            .split_once(['=', ' ', '\t'])
            .map_or((text, ""), |(k, v)| (k, v));
        let value = value.trim_start_matches([' ', '\t', '=']).trim();
        match key.to_ascii_lowercase().as_str() {
            "userknownhostsfile" => other_file = true,
            "stricthostkeychecking"
                if !matches!(value.to_ascii_lowercase().as_str(), "yes" | "true" | "ask") =>
            {
                adds = Some(words[o.word].span);
            }
            _ => {}
        }
    }
    if let (Some(span), false) = (adds, other_file) {
        e.add(
            "option.ssh",
            Class::ConfigMutation,
            span,
            "ssh adds unknown host keys to ~/.ssh/known_hosts with this StrictHostKeyChecking",
        );
    }
}

/// An ssh `-o` option in an rsync remote shell: a safe key, and host key checking that
/// does not add keys to known_hosts (`no`/`accept-new` write it, see `ssh_known_hosts`).
fn rsh_safe_option(val: &str) -> bool {
    let (key, value) = val.split_once('=').unwrap_or((val, ""));
    let key = key.to_ascii_lowercase();
    if key == "stricthostkeychecking" {
        return matches!(value.to_ascii_lowercase().as_str(), "yes" | "true" | "ask");
    }
    SSH_SAFE_OPTIONS.contains(&key.as_str())
}

/// Checks the `-e`/`--rsh` value of rsync: plain ssh with safe options.
fn rsh_value(e: &mut Engine<'_>, v: &Val<'_>, span: Span) {
    let Some(text) = v.literal() else {
        e.fail(
            "unknown.rsh",
            span,
            "the remote shell command is only known at run time",
        );
        return;
    };
    let toks: Vec<&str> = text.split_whitespace().collect();
    let ok_prog = matches!(toks.first(), Some(&("ssh" | "/usr/bin/ssh")));
    let mut k = 1;
    let mut ok = ok_prog;
    while ok && k < toks.len() {
        match toks[k] {
            "-p" | "-i" | "-l" | "-J" => k += 2,
            "-o" => {
                let val = toks.get(k + 1).copied().unwrap_or("");
                ok = rsh_safe_option(val);
                k += 2;
            }
            t if t.starts_with("-o") => {
                ok = rsh_safe_option(&t[2..]);
                k += 1;
            }
            t if t.starts_with("-p") || t.starts_with("-i") || t.starts_with("-l") => k += 1,
            "-q" | "-T" | "-x" | "-C" | "-4" | "-6" | "-v" | "-a" | "-k" => k += 1,
            _ => ok = false,
        }
    }
    if !ok {
        e.fail(
            "unknown.rsh",
            span,
            "the remote shell is not plain `ssh` with safe options",
        );
    }
}

fn exec_argv(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    for o in p
        .occ
        .iter()
        .filter(|o| matches!(o.opt.id.as_str(), "--env" | "-e"))
    {
        let span = words[o.word].span;
        match o.value.literal() {
            Some(v) => {
                let (name, val) = v.split_once('=').unwrap_or((v, ""));
                if !env_allowed(name, Some(val), true) {
                    e.fail(
                        "unknown.env",
                        span,
                        format!("environment variable `{name}` with this value can change what the command runs"),
                    );
                }
            }
            None => e.fail(
                "unknown.env",
                span,
                "environment assignment only known at run time",
            ),
        }
    }
    let Some(mut r) = p.rest else {
        e.fail(
            "unknown.exec",
            span0(words),
            format!(
                "`{}` without a command opens an interactive shell",
                p.leaf().id
            ),
        );
        return;
    };
    if words.get(r).and_then(Word::literal) == Some("--") {
        r += 1;
    }
    if r >= words.len() {
        e.fail(
            "unknown.exec",
            span0(words),
            format!(
                "`{}` without a command opens an interactive shell",
                p.leaf().id
            ),
        );
        return;
    }
    e.remote += 1;
    e.argv(&words[r..], off + r, ao);
    e.remote -= 1;
}

fn script_effects(e: &mut Engine<'_>, fx: Result<Vec<Effect>, String>, span: Span, prog: &str) {
    match fx {
        Err(why) => e.fail(
            format!("unknown.{prog}"),
            span,
            format!("the {prog} program could not be analysed: {why}"),
        ),
        Ok(list) => {
            for f in list {
                match f {
                    Effect::Exec => e.fail(
                        format!("unknown.{prog}_exec"),
                        span,
                        format!("the {prog} program runs shell commands"),
                    ),
                    Effect::Write(path) => {
                        if path.is_empty() {
                            e.fail(format!("unknown.{prog}"), span, "write without a file name");
                        } else {
                            e.write_literal(&path, &format!("the {prog} program writes"), span);
                        }
                    }
                    Effect::Read(path) => e.read_literal(&path, span),
                    Effect::Opaque(why) => e.fail(format!("unknown.{prog}"), span, why),
                }
            }
        }
    }
}

fn sed(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let mut scripts: Vec<(String, Span)> = Vec::new();
    let mut from_option = false;
    for o in p.values("--expression") {
        from_option = true;
        let span = words[o.word].span;
        match o.value.literal() {
            Some(s) => scripts.push((s.to_owned(), span)),
            None => e.fail(
                "unknown.sed",
                span,
                "the sed script is only known at run time",
            ),
        }
    }
    from_option |= p.has("--file");
    let mut files: &[usize] = &p.operands;
    if !from_option && let Some((&first, rest)) = p.operands.split_first() {
        let w = &words[first];
        match w.literal() {
            Some(s) => scripts.push((s.to_owned(), w.span)),
            None => e.fail(
                "unknown.sed",
                w.span,
                "the sed script is only known at run time",
            ),
        }
        files = rest;
    }
    for (s, span) in &scripts {
        script_effects(e, scripts::sed(s), *span, "sed");
    }
    if p.has("--in-place") {
        for &i in files {
            e.write_target(&words[i], "`sed -i` rewrites");
        }
        if files.is_empty() {
            e.add(
                "spec.sed",
                Class::ConfigMutation,
                span0(words),
                "`sed -i` edits files in place",
            );
        }
    }
}

fn awk(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // `awk -v t="$GITHUB_TOKEN" …`, `awk '…' t=$DB_PASSWORD`: the program can print it.
    print_secrets(e, &(1..words.len()).collect::<Vec<_>>(), words);
    let mut ops: &[usize] = &p.operands;
    let mut from_option = false;
    for o in p.values("--source") {
        from_option = true;
        if let Some(s) = o.value.literal() {
            embedded_environment(e, s, &["ENVIRON"], words[o.word].span);
        }
        match o.value.literal() {
            Some(s) => script_effects(e, scripts::awk(s), words[o.word].span, "awk"),
            None => e.fail(
                "unknown.awk",
                words[o.word].span,
                "the awk program is only known at run time",
            ),
        }
    }
    if p.has("--file") {
        from_option = true;
    }
    if !from_option && let Some((&first, rest)) = ops.split_first() {
        let w = &words[first];
        if let Some(s) = w.literal() {
            embedded_environment(e, s, &["ENVIRON"], w.span);
        }
        match w.literal() {
            Some(s) => script_effects(e, scripts::awk(s), w.span, "awk"),
            None => e.fail(
                "unknown.awk",
                w.span,
                "the awk program is only known at run time",
            ),
        }
        ops = rest;
    }
    for &i in ops {
        let w = &words[i];
        // `var=value` operands are assignments, not files.
        if let Some(Part::Lit(s)) = w.parts.first()
            && let Some(eq) = s.find('=')
            && is_name(&s[..eq])
        {
            continue;
        }
        e.read_target(w, false);
    }
}

const GIT_SAFE_CONFIG_PREFIXES: &[&str] = &[
    "color.",
    "advice.",
    "column.",
    "i18n.",
    "log.decorate",
    "log.date",
    "log.abbrevcommit",
    "core.quotepath",
    "core.abbrev",
    "user.name",
    "user.email",
    "diff.noprefix",
    "diff.renames",
    "diff.mnemonicprefix",
    "safe.directory",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "format.pretty",
];

fn git(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    for o in p.values("-c") {
        let span = words[o.word].span;
        let Some(v) = o.value.literal() else {
            e.fail(
                "unknown.git_config",
                span,
                "`git -c` value only known at run time",
            );
            continue;
        };
        let (key, val) = v.split_once('=').unwrap_or((v, "true"));
        let key = key.to_ascii_lowercase();
        let safe = GIT_SAFE_CONFIG_PREFIXES.iter().any(|p| key.starts_with(p))
            || ((key == "core.pager" || key.starts_with("pager.")) && matches!(val, "cat" | "false" | ""))
            // The values the canonical form itself sets.
            || matches!(
                (key.as_str(), val),
                ("core.fsmonitor", "false")
                    | ("log.showsignature", "false")
                    | ("protocol.ext.allow", "never")
                    | ("gpg.program", "gpg")
                    | ("gpg.ssh.program", "ssh-keygen")
                    | ("gpg.x509.program", "gpgsm")
            );
        if !safe {
            e.fail(
                "unknown.git_config",
                span,
                format!("`git -c {key}` can make git run programs"),
            );
        }
    }
    for o in p.values("--exec-path") {
        if o.value.is_some() {
            e.fail(
                "unknown.git_exec_path",
                words[o.word].span,
                "`--exec-path=` changes which programs git runs",
            );
        }
    }
    // Options of the lenient read-only subcommands that write files or run programs.
    if let Some(&sw) = p.sub_words.first() {
        for w in &words[sw + 1..] {
            let Some(l) = w.literal() else {
                // `git log $O`: the expansion may be `--output=FILE` or `--ext-diff`.
                if e.may_be_option(w) {
                    e.fail(
                        "unknown.git_option",
                        w.span,
                        "a word only known at run time may be an option that writes or runs programs",
                    );
                    break;
                }
                continue;
            };
            if l == "--" {
                break;
            }
            let name = l.split('=').next().unwrap_or(l);
            match name {
                "--output" => match l.split_once('=') {
                    Some((_, f)) => e.write_literal(f, "`--output` writes", w.span),
                    None => e.fail(
                        "unknown.git_option",
                        w.span,
                        "`--output` target is the next word",
                    ),
                },
                // Comparing two paths outside a repository: external diff and textconv
                // are already off; the paths are reads.
                "--no-index" if words[sw].literal() == Some("diff") => {
                    for x in &words[sw + 1..] {
                        if !matches!(x.parts.first(), Some(Part::Lit(s)) if s.starts_with('-')) {
                            e.read_target(x, false);
                        }
                    }
                }
                "--ext-diff"
                | "--textconv"
                | "--no-index"
                | "--open-files-in-pager"
                | "-O"
                | "--show-signature"
                | "--upload-pack"
                | "--receive-pack"
                | "--exec"
                | "--run" => {
                    e.fail(
                        "unknown.git_option",
                        w.span,
                        format!("`{name}` makes git run programs or read outside the repository"),
                    );
                }
                _ if l.starts_with("--open-files-in-pager")
                    || (l.starts_with("-O") && words[sw].literal() == Some("grep")) =>
                {
                    e.fail("unknown.git_option", w.span, "runs a pager program");
                }
                _ => {}
            }
        }
    }
    git_content_reads(e, p, words);
    // Neutralise config-driven program execution in what the executor runs.
    for ins in [
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.pager=cat",
        "-c",
        "log.showSignature=false",
        "-c",
        "protocol.ext.allow=never",
        // Signature checks (verify-commit, verify-tag, tag -v, `%G?`, `%(signature)`) run
        // these programs, which a repository's own config may point anywhere.
        "-c",
        "gpg.program=gpg",
        "-c",
        "gpg.ssh.program=ssh-keygen",
        "-c",
        "gpg.x509.program=gpgsm",
        "--no-pager",
    ] {
        ao.inserts.push((off + 1, ins.to_owned()));
    }
    let sub = p.sub_words.first().and_then(|&i| words[i].literal());
    let diffish = matches!(sub, Some("log" | "show" | "diff" | "whatchanged"));
    if diffish && let Some(&sw) = p.sub_words.first() {
        ao.inserts.push((off + sw + 1, "--no-ext-diff".to_owned()));
        ao.inserts.push((off + sw + 1, "--no-textconv".to_owned()));
    }
}

/// The repository directory named by `-C`, `--git-dir` or `--work-tree`, resolved against
/// the working directory; `None` when none is given (`Some(None)`: only known at run time).
fn git_repo_dir(e: &Engine<'_>, p: &Parsed<'_>) -> Option<Option<String>> {
    let mut dir: Option<Option<String>> = None;
    for o in &p.occ {
        let id = o.opt.id.as_str();
        if !matches!(id, "-C" | "--git-dir" | "--work-tree") {
            continue;
        }
        let Some(v) = o.value.literal() else {
            dir = Some(None);
            continue;
        };
        let v = if id == "--git-dir" {
            v.trim_end_matches('/').trim_end_matches("/.git")
        } else {
            v
        };
        let mut esc = String::with_capacity(v.len());
        crate::paths::escape_into(v, &mut esc);
        // `-C` is relative to the previous `-C`, which is relative to the working directory.
        let base = match &dir {
            Some(Some(d)) if id == "-C" => Some(d.as_str()),
            _ => e.cwd.as_deref(),
        };
        let r = crate::paths::resolve(&esc, base).into_owned();
        dir = Some((!r.starts_with("**")).then_some(r));
    }
    dir
}

/// Subcommands that print the contents of committed files (`git show HEAD:.env`,
/// `git log -p -- .env`, `git cat-file -p REV:path`): each path they name is a read of
/// that file in the repository, and a whole-history dump of a repository that keeps
/// secrets (etckeeper's `/etc`) asks.
fn git_content_reads(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // Parsed options (specs/vcs.toml ids) that print file contents, however spelled:
    // bundled (`-pw`), abbreviated or implied (`--binary`, `--dd`, `--color-words`).
    const PATCH_IDS: &[&str] = &[
        "--patch",
        "--unified",
        "--word-diff",
        "--word-diff-regex",
        "--color-words",
        "-S",
        "-G",
        "-L",
        "--patch-with-stat",
        "--patch-with-raw",
        "--binary",
        "--dd",
        "--cc",
        "--remerge-diff",
        "--check",
        "--function-context",
    ];
    let Some(&sw) = p.sub_words.first() else {
        return;
    };
    let Some(sub) = words[sw].literal() else {
        return;
    };
    let args = &words[sw + 1..];
    let flag = |f: &str| args.iter().any(|w| w.literal() == Some(f));
    let patch = args.iter().any(|w| {
        w.literal().is_some_and(|l| {
            matches!(
                l,
                "-p" | "-u" | "--patch" | "--patch-with-stat" | "--patch-with-raw"
            ) || l.starts_with("-U")
                || l.starts_with("--unified")
                || l.starts_with("--word-diff")
                || l.starts_with("-G")
                || l.starts_with("-S")
                // `git log -L 1,5:file` prints the lines' history.
                || l.starts_with("-L")
        })
    }) || PATCH_IDS.iter().any(|id| p.has(id));
    let no_content = !patch
        && [
            "-s",
            "--no-patch",
            "--stat",
            "--name-only",
            "--name-status",
            "--shortstat",
            "--numstat",
            "--summary",
            "--raw",
            "--quiet",
        ]
        .iter()
        .any(|f| flag(f));
    let content = match sub {
        "show" | "cat-file" | "grep" | "blame" | "annotate" | "archive" => true,
        "diff" | "diff-tree" | "diff-index" | "diff-files" | "range-diff" => {
            !no_content && (sub == "diff" || patch)
        }
        "log" | "whatchanged" => patch,
        // `git stash show -p`, `git format-patch --stdout`: patches to standard output.
        "stash" => patch && flag("show"),
        "format-patch" => flag("--stdout"),
        _ => false,
    } && !(sub == "show" && no_content);
    if !content {
        return;
    }
    let repo = git_repo_dir(e, p);
    // Where committed paths live: the named repository, the working directory when the
    // command changed it, or anywhere.
    let root: Option<String> = match &repo {
        Some(Some(d)) => Some(d.clone()),
        Some(None) => None,
        None => match e.cwd.as_deref() {
            Some("~") | None => None,
            Some(c) => Some(c.to_owned()),
        },
    };
    let join = |path: &str| -> String {
        let path = path.trim_start_matches(":(top)").trim_start_matches(":/");
        let mut esc = String::with_capacity(path.len() + 8);
        match &root {
            Some(r) if !path.starts_with('/') => {
                esc.push_str(r);
                esc.push('/');
            }
            // Unknown root: judge the path as committed (`**/` would meet every anchored
            // secret directory); list patterns such as `**/.env` still match it.
            Some(_) | None => {}
        }
        crate::paths::escape_into(path, &mut esc);
        esc
    };
    let mut named = false;
    let mut after_dashes = false;
    for w in args {
        let Some(l) = w.literal() else {
            // A dynamic revision or path may name any file.
            e.read_patterns(&["**".to_owned()], false, w.span);
            named = true;
            continue;
        };
        if !after_dashes {
            if l == "--" {
                after_dashes = true;
                continue;
            }
            // `-L1,5:file`, `-L:func:file`: the file after the last colon.
            if let Some(range) = l.strip_prefix("-L")
                && let Some((_, path)) = range.rsplit_once(':')
                && !path.is_empty()
            {
                named = true;
                let pat = join(path);
                e.read_patterns(&[pat], false, w.span);
                continue;
            }
            if l.starts_with('-') {
                continue;
            }
        }
        // `REV:path` (or `:path`, `:0:path` from the index) names a blob.
        let path = if after_dashes {
            Some(l)
        } else if let Some((rev, path)) = l.split_once(':')
            && !rev.contains('/')
            && !path.starts_with("//")
        {
            Some(
                path.rsplit_once(':')
                    .filter(|(n, _)| n.len() == 1)
                    .map_or(path, |(_, p)| p),
            )
        } else if matches!(
            sub,
            "blame" | "annotate" | "diff" | "log" | "whatchanged" | "show" | "archive"
        ) {
            // Without `--` a word that is not a revision is a path.
            Some(l)
        } else {
            None
        };
        if let Some(path) = path.filter(|p| !p.is_empty()) {
            named |= after_dashes || l.contains(':');
            let pat = join(path);
            e.read_patterns(&[pat], false, w.span);
        }
    }
    // `git grep` with no path searches the whole work tree, like `grep -r x .`.
    if sub == "grep" && !named {
        let at = root.clone().unwrap_or_else(|| ".".to_owned());
        e.read_patterns(&[at], true, span0(words));
        return;
    }
    // A dump not limited to named files, of a repository that may keep secrets.
    if !named
        && let Some(r) = &root
        && let Some(rule) = crate::paths::secret_under(r)
    {
        e.add(
            "secret.read",
            Class::Destructive,
            span0(words),
            format!(
                "`git {sub}` prints committed files of `{r}`, which may hold secrets (matches `{rule}`)"
            ),
        );
    }
}

fn git_list(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const LISTING: &[&str] = &[
        "--list",
        "--all",
        "--remotes",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--show-current",
        "--verify",
        "-n",
    ];
    let listing = LISTING.iter().any(|id| p.has(id));
    let mode = p.occ.iter().any(|o| o.opt.effects.mode.is_some());
    if !listing && !mode && !p.operands.is_empty() {
        e.add(
            format!("spec.{}", p.leaf().id),
            Class::ConfigMutation,
            words[p.operands[0]].span,
            format!("`{}` with a name creates it", p.leaf().id.replace('.', " ")),
        );
    }
}

/// git settings whose value is a program git runs.
const GIT_EXEC_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.fsmonitor",
    "core.sshcommand",
    "core.hookspath",
    "core.askpass",
    "core.gitproxy",
    "credential.helper",
    "gpg.program",
    "gpg.ssh.program",
    "gpg.x509.program",
    "sequence.editor",
    "pager.",
    "alias.",
    "credential.",
    "include.",
    "includeif.",
    "uploadpack.packobjectshook",
    "diff.external",
    "interactive.difffilter",
    "web.browser",
    "man.",
    "difftool.",
    "mergetool.",
    "remote.",
    "url.",
    "protocol.",
    "http.proxy",
    "ssh.variant",
    "receive.procreceiverefs",
    "uploadpack.",
    "submodule.",
];

fn git_config(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let reading = [
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "--show-origin",
    ]
    .iter()
    .any(|id| p.has(id));
    let writing = p.occ.iter().any(|o| o.opt.effects.mode.is_some());
    let first = p.operands.first().and_then(|&i| words[i].literal());
    // Listing prints every setting: `http.extraHeader` (CI tokens), credential helpers'
    // stores, remote URLs with passwords. A named key asks when its name says secret.
    let lists = ["--list", "--get-regexp", "--get-urlmatch"]
        .iter()
        .any(|id| p.has(id))
        || matches!(first, Some("list"))
        || matches!(first, Some("get")) && (p.has("--all") || p.has("--regexp") || p.has("--url"));
    let key = match first {
        Some("get") => p.operands.get(1).map(|&i| words[i].literal()),
        _ if reading => p.operands.first().map(|&i| words[i].literal()),
        _ => None,
    };
    let secret_key = key.is_some_and(|k| {
        k.is_none_or(|k| {
            let k = k.to_ascii_lowercase();
            [
                "extraheader",
                "token",
                "pass",
                "secret",
                "credential",
                "auth",
                "cookie",
            ]
            .iter()
            .any(|w| k.contains(w))
        })
    });
    if lists || secret_key {
        e.add(
            "secret.git_config",
            Class::Destructive,
            span0(words),
            "prints git settings that hold credentials (http.extraHeader, credential URLs)",
        );
    }
    match first {
        Some("get" | "list") => return,
        Some("set" | "unset" | "rename-section" | "remove-section") => {
            e.add(
                "spec.git.config",
                Class::ConfigMutation,
                span0(words),
                "`git config` changes settings",
            );
            return;
        }
        Some("edit") => {
            e.fail(
                "unknown.git_config",
                span0(words),
                "`git config edit` opens an editor",
            );
            return;
        }
        _ => {}
    }
    if (writing || p.operands.len() >= 2) && !reading {
        let key = first.unwrap_or("").to_ascii_lowercase();
        let runs = GIT_EXEC_KEYS
            .iter()
            .any(|k| key == *k || (k.ends_with('.') && key.starts_with(k)))
            || key.ends_with(".textconv")
            || key.ends_with(".command")
            || key.starts_with("filter.")
            || key.starts_with("diff.")
            || key.starts_with("merge.");
        if runs || first.is_none() {
            e.add(
                "spec.git.config",
                Class::Destructive,
                span0(words),
                format!("git setting `{key}` makes git run programs"),
            );
        } else {
            e.add(
                "spec.git.config",
                Class::ConfigMutation,
                span0(words),
                "`git config NAME VALUE` changes settings",
            );
        }
    }
}

const CURL_DATA: &[&str] = &[
    "--data",
    "--data-ascii",
    "--data-binary",
    "--data-raw",
    "--data-urlencode",
    "--json",
    "--form",
    "--form-string",
    "--upload-file",
    "--mail-rcpt",
    "--mail-from",
];

fn url_scheme(e: &mut Engine<'_>, w: &Word) {
    let prefix = match w.parts.first() {
        Some(Part::Lit(s)) => s.as_str(),
        _ => "",
    };
    // An unquoted `?` in a query string is a glob to the shell, but a URL-looking word
    // (host and path, no expansion) cannot name a file: it reaches the tool as typed.
    let plain = w
        .parts
        .iter()
        .all(|p| matches!(p, Part::Lit(_) | Part::Glob(_)));
    let Some(pos) = prefix.find("://") else {
        if !plain {
            e.fail("unknown.url", w.span, "the URL is only known at run time");
        } else if prefix.len() > 5 && prefix[..5].eq_ignore_ascii_case("file:") {
            // `file:/etc/shadow` (one slash) is a file URL too.
            file_url_read(e, &prefix[5..], w.span);
        } else {
            // No scheme: curl and wget assume http.
            metadata_url(e, prefix, w.span);
            secret_api(e, prefix, w.span);
        }
        return;
    };
    let scheme = prefix[..pos].to_ascii_lowercase();
    match scheme.as_str() {
        "http" | "https" | "ftp" | "ftps" => {
            metadata_url(e, &prefix[pos + 3..], w.span);
            secret_api(e, &prefix[pos + 3..], w.span);
        }
        // A file read over SSH with this host's keys (the host may be this one, or a peer
        // laid out the same): its path is judged as a local read.
        "sftp" | "scp" => {
            metadata_url(e, &prefix[pos + 3..], w.span);
            let rest = &prefix[pos + 3..];
            let path = rest.find('/').map_or("/", |i| &rest[i..]);
            let path = path
                .strip_prefix("/~")
                .map_or_else(|| path.to_owned(), |p| format!("~{p}"));
            file_url_read(e, &path, w.span);
        }
        "file" => {
            let rest = &prefix[pos + 3..];
            let path = rest.find('/').map_or("/", |i| &rest[i..]);
            if w.literal().is_some() {
                file_url_read(e, path, w.span);
            } else {
                e.read_patterns(&["**".to_owned()], false, w.span);
            }
        }
        _ => e.fail(
            "unknown.url",
            w.span,
            format!("`{scheme}://` URLs are not modelled"),
        ),
    }
}

/// HTTP endpoints that answer with secrets whatever host serves them: Kubernetes secrets
/// (API server, `kubectl proxy`), Vault secret engines, Consul KV and ACL tokens, Nomad
/// variables and allocation files, etcd v2 keys, RabbitMQ definitions (password hashes),
/// Elasticsearch API keys; LXD/Incus file reads are judged by the guest path they name.
fn secret_api(e: &mut Engine<'_>, rest: &str, span: Span) {
    let Some(i) = rest.find('/') else {
        return;
    };
    let (path, query) = rest[i..].split_once('?').unwrap_or((&rest[i..], ""));
    let path = percent_decode(path).to_ascii_lowercase();
    let mut segs: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segs.pop();
            }
            _ => segs.push(s),
        }
    }
    let at = |k: usize, w: &str| segs.get(k).is_some_and(|s| *s == w);
    let v1 = at(0, "v1");
    let hit = (matches!(segs.first(), Some(&"api" | &"apis")) && segs.contains(&"secrets"))
        || (v1
            && matches!(
                segs.get(1),
                Some(&"secret" | &"kv" | &"cubbyhole" | &"var" | &"vars" | &"snapshot")
            ))
        || (v1 && at(1, "sys") && at(2, "raw"))
        || (v1 && at(1, "acl") && segs.get(2).is_some_and(|s| s.starts_with("token")))
        || (v1 && at(1, "client") && at(2, "fs"))
        || (v1 && at(1, "transit") && at(2, "export"))
        || (v1
            && at(1, "auth")
            && at(2, "token")
            && segs.get(3).is_some_and(|s| s.starts_with("lookup")))
        || (v1 && segs.contains(&"creds"))
        || (at(0, "v2") && at(1, "keys"))
        || (at(0, "api") && at(1, "definitions"))
        || (at(0, "_security") && at(1, "api_key"));
    if hit {
        e.add(
            "secret.api",
            Class::Destructive,
            span,
            "reads an API endpoint that answers with secrets",
        );
    }
    // LXD and Incus: `/1.0/instances/NAME/files?path=/etc/shadow` reads a guest's file.
    if at(0, "1.0") && segs.contains(&"files") {
        match query.split('&').find_map(|kv| kv.strip_prefix("path=")) {
            Some(p) => file_url_read(e, p, span),
            None => e.read_patterns(&["**".to_owned()], false, span),
        }
    }
}

/// The path of a `file://` URL as curl opens it: percent-escapes decoded, and curl's own
/// globbing (`{a,b}`, `[a-z]`) read as a wildcard.
fn file_url_read(e: &mut Engine<'_>, path: &str, span: Span) {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let decoded = percent_decode(path);
    let mut pat = String::with_capacity(decoded.len());
    let mut depth = 0usize;
    for c in decoded.chars() {
        match c {
            '{' | '[' => {
                if depth == 0 {
                    pat.push('*');
                }
                depth += 1;
            }
            '}' | ']' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            '*' | '?' | '\\' => {
                pat.push('\\');
                pat.push(c);
            }
            _ => pat.push(c),
        }
    }
    e.read_patterns(&[pat], false, span);
}

/// `%XX` escapes decoded (invalid ones kept as typed).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (
                (b[i + 1] as char).to_digit(16),
                (b[i + 2] as char).to_digit(16),
            )
        {
            // Two hex digits always fit a byte.
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The host of `rest` (what follows `scheme://`): userinfo, port and brackets removed.
fn url_host(rest: &str) -> &str {
    let auth = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    if let Some(h) = host.strip_prefix('[') {
        return h.split(']').next().unwrap_or(h);
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(h, _)| h)
}

/// An IPv4 address in any spelling `inet_aton` accepts (`2852039166`, `0xa9fea9fe`,
/// `0251.0376.0251.0376`, `169.254.43518`), or IPv6-mapped (`::ffff:169.254.169.254`,
/// `::ffff:a9fe:a9fe`).
fn ipv4_any(host: &str) -> Option<u32> {
    let h = host.to_ascii_lowercase();
    if let Some(m) = h
        .strip_prefix("::ffff:")
        .or_else(|| h.strip_prefix("0:0:0:0:0:ffff:"))
    {
        if let Some(v) = ipv4_any(m) {
            return Some(v);
        }
        let (a, b) = m.split_once(':')?;
        let a = u32::from_str_radix(a, 16).ok()?;
        let b = u32::from_str_radix(b, 16).ok()?;
        return (a <= 0xffff && b <= 0xffff).then_some((a << 16) | b);
    }
    let parts: Vec<&str> = h.trim_end_matches('.').split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let num = |p: &str| -> Option<u64> {
        if let Some(x) = p.strip_prefix("0x") {
            u64::from_str_radix(x, 16).ok()
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(&p[1..], 8).ok()
        } else {
            p.parse::<u64>().ok()
        }
    };
    let vals: Vec<u64> = parts.iter().map(|p| num(p)).collect::<Option<_>>()?;
    let (last, head) = vals.split_last()?;
    if head.iter().any(|v| *v > 255) {
        return None;
    }
    let shift = 8 * (4 - head.len() as u32);
    if shift < 64 && *last >= 1u64 << shift {
        return None;
    }
    let mut v: u64 = 0;
    for (i, x) in head.iter().enumerate() {
        v |= x << (24 - 8 * i as u64);
    }
    u32::try_from(v | last).ok()
}

/// Cloud instance-metadata services: they hand out the instance's credentials.
fn metadata_host(host: &str) -> bool {
    const ADDRS: &[u32] = &[
        0xA9FE_A9FE, // 169.254.169.254 (AWS, Azure, GCP, OpenStack, DigitalOcean …)
        0xA9FE_AA02, // 169.254.170.2 (ECS task credentials)
        0x6464_64C8, // 100.100.100.200 (Alibaba)
        0xA9FE_A9FD, // 169.254.169.253
    ];
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    if ipv4_any(&h).is_some_and(|v| ADDRS.contains(&v)) {
        return true;
    }
    matches!(
        h.as_str(),
        "metadata.google.internal"
            | "metadata"
            | "metadata.goog"
            | "instance-data"
            | "instance-data.ec2.internal"
    ) || h.starts_with("fd00:ec2:")
        || h.contains("169.254.169.254")
        || h.contains("169-254-169-254")
        || h.contains("a9fea9fe")
}

/// A request to a metadata service asks unless its path is a harmless instance fact.
fn metadata_url(e: &mut Engine<'_>, rest: &str, span: Span) {
    let host = url_host(rest);
    if !metadata_host(host) {
        return;
    }
    let path = rest[rest.find('/').unwrap_or(rest.len())..].to_ascii_lowercase();
    let path = percent_decode(&path);
    const HARMLESS: &[&str] = &[
        "instance-id",
        "instance-type",
        "hostname",
        "local-hostname",
        "local-ipv4",
        "public-ipv4",
        "placement",
        "availability-zone",
        "region",
        "ami-id",
        "/zone",
        "machine-type",
        "/name",
        "/id",
        "network/interfaces",
        "mac",
        "/compute/location",
        "/compute/vmsize",
    ];
    let credential = [
        "credential",
        "token",
        "identity",
        "service-account",
        "iam",
        "user-data",
        "userdata",
        "attributes",
        "secret",
        "key",
        "password",
        "recursive",
        "auth",
        "oauth",
    ]
    .iter()
    .any(|w| path.contains(w));
    if credential || !HARMLESS.iter().any(|h| path.contains(h)) {
        e.add(
            "secret.metadata",
            Class::Destructive,
            span,
            "reads the cloud instance-metadata service, which hands out the instance's credentials",
        );
    }
}

/// Is this a Docker-compatible API endpoint (a docker/podman socket, or the daemon's TCP
/// ports)? Its API runs containers as root and returns their environment.
fn docker_api(socket: Option<&str>, url_rest: &str) -> bool {
    if let Some(s) = socket {
        let base = s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase();
        return base.contains("docker") || base.contains("podman") || base.contains("containerd");
    }
    let auth = url_rest.split(['/', '?', '#']).next().unwrap_or(url_rest);
    auth.rsplit_once(':')
        .is_some_and(|(_, port)| matches!(port, "2375" | "2376"))
}

/// Docker API requests: only GETs of listings and daemon facts are reads; every other
/// request changes containers (as root) or returns environments, secrets and files.
fn docker_request(e: &mut Engine<'_>, get: bool, rest: &str, span: Span) {
    let path = rest[rest.find('/').unwrap_or(rest.len())..].to_ascii_lowercase();
    let path = path.split(['?', '#']).next().unwrap_or(&path);
    // `/v1.43/containers/json` → `/containers/json`.
    let path = match path.strip_prefix("/v") {
        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => {
            &r[r.find('/').unwrap_or(r.len())..]
        }
        _ => path,
    };
    const LISTINGS: &[&str] = &[
        "/_ping",
        "/version",
        "/info",
        "/containers/json",
        "/images/json",
        "/networks",
        "/volumes",
        "/system/df",
        "/nodes",
        "/plugins",
    ];
    let listing = LISTINGS.contains(&path.trim_end_matches('/'))
        || (path.starts_with("/containers/") && path.ends_with("/stats"));
    if !(get && listing) {
        e.add(
            "secret.docker_api",
            Class::Destructive,
            span,
            "talks to the Docker API: anything but a listing runs containers as root or returns their environment, secrets or files",
        );
    }
}

fn curl(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    // The Docker API (over its socket or TCP port) and file reads hidden in `@FILE` values.
    let method = p
        .values("--request")
        .last()
        .map(|o| o.value.literal().map(str::to_ascii_uppercase));
    let sends = p.occ.iter().any(|o| CURL_DATA.contains(&o.opt.id.as_str())) && !p.has("--get");
    let get = match &method {
        Some(Some(m)) => m == "GET" || m == "HEAD",
        Some(None) => false,
        None => !sends,
    };
    let socket = p
        .occ
        .iter()
        .filter(|o| {
            matches!(
                o.opt.id.as_str(),
                "--unix-socket" | "--abstract-unix-socket"
            )
        })
        .map(|o| o.value.literal())
        .next_back();
    let urls: Vec<(String, Span)> = p
        .operands
        .iter()
        .map(|&i| &words[i])
        .chain(p.values("--url").filter_map(|o| match o.value {
            Val::Word(w) => Some(w),
            _ => None,
        }))
        .map(|w| {
            let lit = match w.parts.first() {
                Some(Part::Lit(s)) => s.as_str(),
                _ => "",
            };
            (
                lit.split_once("://").map_or(lit, |(_, r)| r).to_owned(),
                w.span,
            )
        })
        .collect();
    match socket {
        Some(None) => e.fail(
            "unknown.curl",
            span0(words),
            "the socket is only known at run time",
        ),
        Some(Some(sock)) if docker_api(Some(sock), "") => {
            for (rest, span) in &urls {
                docker_request(e, get, rest, *span);
            }
        }
        _ => {
            for (rest, span) in &urls {
                if docker_api(None, rest) {
                    docker_request(e, get, rest, *span);
                }
            }
        }
    }
    // `--resolve`/`--connect-to` can send any host name to a metadata address.
    for o in p
        .occ
        .iter()
        .filter(|o| matches!(o.opt.id.as_str(), "--resolve" | "--connect-to" | "--proxy"))
    {
        let v = o.value.literal().unwrap_or("");
        if v.split([':', ',', '[', ']', '/', '@']).any(metadata_host) {
            e.add(
                "secret.metadata",
                Class::Destructive,
                words[o.word].span,
                "routes the request to the cloud instance-metadata service",
            );
        }
    }
    for o in &p.occ {
        let id = o.opt.id.as_str();
        let span = words[o.word].span;
        let file = match (id, o.value.literal()) {
            // `-w @FILE` reads the format (and so prints the file).
            ("--write-out", Some(v)) => v.strip_prefix('@'),
            // `name@FILE` or `@FILE` (a `=` first makes it content).
            ("--url-query" | "--data-urlencode", Some(v)) => v
                .trim_start_matches('+')
                .split_once('@')
                .filter(|(name, _)| !name.contains('='))
                .map(|(_, f)| f),
            ("--proto-default", Some(v))
                if !v.eq_ignore_ascii_case("http") && !v.eq_ignore_ascii_case("https") =>
            {
                // Scheme-less URLs would use this protocol (`file`).
                for &i in &p.operands {
                    e.read_target(&words[i], false);
                }
                None
            }
            _ => None,
        };
        if let Some(f) = file
            && f != "-"
        {
            e.read_literal(f, span);
        } else if matches!(id, "--url-query") && o.value.literal().is_none() && o.value.is_some() {
            e.read_patterns(&["**".to_owned()], false, span);
        }
    }
    curl_core(e, p, words, off, ao);
}

fn curl_core(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let get = p.has("--get") || p.has("--head");
    for o in &p.occ {
        let id = o.opt.id.as_str();
        let span = words[o.word].span;
        if CURL_DATA.contains(&id) {
            if !get || id == "--upload-file" {
                e.add(
                    "option.curl",
                    Class::ConfigMutation,
                    span,
                    format!("`curl {id}` sends data to the server"),
                );
            }
            if let Some(v) = o.value.literal() {
                let file = match id {
                    "--upload-file" => Some(v),
                    "--form" => v
                        .split_once('=')
                        .and_then(|(_, x)| x.strip_prefix('@').or_else(|| x.strip_prefix('<'))),
                    _ => v.strip_prefix('@'),
                };
                if let Some(f) = file
                    && f != "-"
                {
                    let f = f.split(';').next().unwrap_or(f);
                    e.read_literal(f, span);
                }
            } else if o.value.is_some() {
                e.read_patterns(&["**".to_owned()], false, span);
            }
        }
        match id {
            "--request" => match o.value.literal().map(str::to_ascii_uppercase).as_deref() {
                Some("GET" | "HEAD" | "OPTIONS") => {}
                Some("DELETE") => e.add(
                    "option.curl",
                    Class::Destructive,
                    span,
                    "`curl -X DELETE` deletes a resource",
                ),
                Some(m) => e.add(
                    "option.curl",
                    Class::ConfigMutation,
                    span,
                    format!("`curl -X {m}` changes state on the server"),
                ),
                None => e.fail(
                    "unknown.curl",
                    span,
                    "the request method is only known at run time",
                ),
            },
            "--header" | "--cookie" => {
                if let Some(v) = o.value.literal() {
                    let f = if id == "--header" {
                        v.strip_prefix('@')
                    } else if !v.contains('=') {
                        Some(v)
                    } else {
                        None
                    };
                    if let Some(f) = f {
                        e.read_literal(f, span);
                    }
                }
            }
            "--write-out" if o.value.literal().is_none_or(|v| v.contains("%output{")) => {
                e.fail("unknown.curl", span, "`--write-out` can write files");
            }
            "--url" => {
                if let Val::Word(w) = o.value {
                    url_scheme(e, w);
                } else if let Some(v) = o.value.literal() {
                    url_scheme(e, &Word::lit(v, span));
                }
            }
            _ => {}
        }
    }
    for &i in &p.operands {
        url_scheme(e, &words[i]);
    }
    // `-q` first: ignore ~/.curlrc, which could add any option.
    ao.inserts.push((off + 1, "-q".to_owned()));
}

fn wget(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    for &i in &p.operands {
        url_scheme(e, &words[i]);
    }
    if p.has("--spider") {
        ao.inserts.push((off + 1, "--no-config".to_owned()));
        return;
    }
    let mut outputs = 0;
    for o in p.values("--output-document") {
        outputs += 1;
        if o.value.literal() != Some("-") {
            e.write_value(&o.value, words[o.word].span, "`wget -O` writes");
        }
    }
    if outputs == 0 && (!p.operands.is_empty() || p.has("--input-file")) {
        e.add(
            "spec.wget",
            Class::ConfigMutation,
            span0(words),
            "`wget` saves downloads as files",
        );
    }
    if [
        "--post-data",
        "--post-file",
        "--method",
        "--body-data",
        "--body-file",
    ]
    .iter()
    .any(|id| p.has(id))
    {
        let method = p
            .values("--method")
            .next()
            .and_then(|o| o.value.literal())
            .map(str::to_ascii_uppercase);
        let class = if method.as_deref() == Some("DELETE") {
            Class::Destructive
        } else {
            Class::ConfigMutation
        };
        if !matches!(method.as_deref(), Some("GET" | "HEAD")) {
            e.add(
                "option.wget",
                class,
                span0(words),
                "`wget` sends a request that changes state",
            );
        }
    }
    ao.inserts.push((off + 1, "--no-config".to_owned()));
}

/// Archive members printed to standard output (`tar -xO`, `unzip -p`). A member name is
/// a path in the root filesystem the archive was made from (a vzdump holds a guest's `/`),
/// so it is judged like that path, a directory member by what is under it. No member
/// means every member; a wildcard or run-time name may meet any: both ask.
fn members_to_stdout(e: &mut Engine<'_>, members: &[usize], words: &[Word]) {
    if members.is_empty() {
        e.add(
            "secret.read",
            Class::Destructive,
            span0(words),
            "prints every member of the archive (a backup holds keys and password hashes)",
        );
        return;
    }
    for &i in members {
        let w = &words[i];
        let Some(name) = w.literal().filter(|l| !paths::has_meta(l)) else {
            e.add(
                "secret.read",
                Class::Destructive,
                w.span,
                "prints the archive members a pattern selects, which may hold secrets",
            );
            continue;
        };
        let mut rel = name;
        while let Some(r) = rel.strip_prefix("./").or_else(|| rel.strip_prefix('/')) {
            rel = r;
        }
        let path = format!("/{}", rel.trim_end_matches('/'));
        if let Some(hit) = paths::secret_under(&path) {
            e.add(
                "secret.read",
                Class::Destructive,
                w.span,
                format!(
                    "prints the archive member `{name}`, which may hold secrets (matches `{hit}`)"
                ),
            );
        }
    }
}

fn tar(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let has = |ids: &[&str]| ids.iter().any(|id| p.has(id));
    let create = has(&["--create"]);
    let extract = has(&["--extract"]);
    let append = has(&["--append", "--update", "--catenate", "--delete"]);
    let archive = p
        .values("--file")
        .last()
        .map(|o| (o.value, words[o.word].span));
    if let Some((v, span)) = &archive
        && let Some(f) = v.literal()
        && !p.has("--force-local")
        && let Some(colon) = f.find(':')
        && !f[..colon].contains('/')
    {
        e.fail(
            "unknown.tar",
            *span,
            "`host:file` archives run a remote shell",
        );
    }
    for o in p.values("--use-compress-program") {
        let ok = matches!(
            o.value.literal(),
            Some(
                "gzip"
                    | "pigz"
                    | "xz"
                    | "zstd"
                    | "bzip2"
                    | "pbzip2"
                    | "lz4"
                    | "lzip"
                    | "unzstd"
                    | "gunzip"
            )
        );
        if !ok {
            e.fail(
                "unknown.tar",
                words[o.word].span,
                "tar runs this compression program",
            );
        }
    }
    let to_stdout = |v: &Val<'_>| matches!(v.literal(), Some("-"));
    if create {
        if let Some((v, span)) = &archive
            && !to_stdout(v)
        {
            e.write_value(v, *span, "`tar -c` writes");
        }
        for &i in &p.operands {
            e.read_target(&words[i], true);
        }
    } else if extract {
        if let Some((v, span)) = &archive {
            e.read_value(v, *span, false);
        }
        if p.has("--to-stdout") {
            members_to_stdout(e, &p.operands, words);
            return;
        }
        let dir = p
            .values("--directory")
            .last()
            .map(|o| (o.value, words[o.word].span));
        if p.has("--absolute-names") {
            e.add(
                "spec.tar",
                Class::Destructive,
                span0(words),
                "extracting absolute names can overwrite any file",
            );
            return;
        }
        match dir {
            Some((v, span)) => match v.literal() {
                Some(d) => {
                    let d = d.trim_end_matches('/');
                    if d.is_empty()
                        || matches!(
                            d,
                            "/etc"
                                | "/usr"
                                | "/boot"
                                | "/bin"
                                | "/sbin"
                                | "/lib"
                                | "/root"
                                | "/var"
                        )
                    {
                        e.add(
                            "write.protected",
                            Class::Destructive,
                            span,
                            format!("extracts into `{}/`", d),
                        );
                    } else {
                        e.write_literal(&format!("{d}/x"), "`tar -x` writes into", span);
                    }
                }
                None => e.fail(
                    "unknown.dynamic_target",
                    span,
                    "extracts into a directory only known at run time",
                ),
            },
            None => e.add(
                "spec.tar",
                Class::ConfigMutation,
                span0(words),
                "`tar -x` writes files",
            ),
        }
    } else if append {
        match &archive {
            Some((v, span)) => e.write_value(v, *span, "`tar` updates"),
            None => e.add(
                "spec.tar",
                Class::ConfigMutation,
                span0(words),
                "`tar` updates an archive",
            ),
        }
    } else if let Some((v, span)) = &archive {
        e.read_value(v, *span, false);
    }
}

fn dd(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for &i in &p.operands {
        let w = &words[i];
        let prefix = match w.parts.first() {
            Some(Part::Lit(s)) => s.as_str(),
            _ => "",
        };
        let (key, _) = prefix.split_once('=').unwrap_or((prefix, ""));
        let value_word = |w: &Word| -> Word {
            let mut parts = w.parts.clone();
            if let Some(Part::Lit(s)) = parts.first_mut() {
                *s = s
                    .split_once('=')
                    .map(|(_, v)| v.to_owned())
                    .unwrap_or_default();
            }
            Word {
                parts,
                span: w.span,
            }
        };
        match key {
            "if" => e.read_target(&value_word(w), false),
            "of" => e.write_target(&value_word(w), "`dd` writes"),
            _ if !prefix.contains('=') => {
                e.fail("unknown.dd", w.span, "`dd` operand is not `key=value`");
            }
            _ => {}
        }
    }
}

fn date(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

fn sysctl(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

fn nft(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let mut text = String::new();
    for &i in &p.operands {
        match words[i].literal() {
            Some(l) => {
                text.push_str(l);
                text.push(' ');
            }
            None => {
                e.fail(
                    "unknown.nft",
                    words[i].span,
                    "nft command only known at run time",
                );
                return;
            }
        }
    }
    let check = p.has("--check");
    let span = span0(words);
    // One argument may hold several commands: `nft 'list ruleset; flush ruleset'`, also
    // separated by newlines. Separators inside `{ … }` blocks belong to the block.
    let mut commands = Vec::new();
    let (mut depth, mut from) = (0usize, 0usize);
    for (k, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ';' | '\n' if depth == 0 => {
                commands.push(&text[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    commands.push(&text[from..]);
    for command in commands {
        let verb = command.split_whitespace().next().unwrap_or("");
        let class = match verb {
            "" => continue,
            "list" | "describe" | "monitor" => Class::ReadOnly,
            "add" | "insert" | "create" | "replace" | "rename" | "reset" | "delete" | "destroy" => {
                Class::ConfigMutation
            }
            "flush" => Class::Destructive,
            other => {
                e.fail(
                    "unknown.nft",
                    span,
                    format!("nft command `{other}` is not modelled"),
                );
                return;
            }
        };
        if !check {
            e.add(
                format!("spec.nft.{verb}"),
                class,
                span,
                format!("`nft {verb}`"),
            );
        }
    }
}

/// tmux formats run shell commands: `#(cmd)` in `display -p`, `list-* -F`, options such
/// as `status-right`, and `if-shell`/`run-shell` arguments. A word that could hold one
/// (any `#(`, or text only known at run time) is a program the classifier did not see.
/// Network clients that send their standard input to the peer (nc, openssl s_client): with
/// data on stdin the command writes to a server (`echo FLUSHALL | nc redis 6379`).
fn stdin_peer(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let sub = p.sub_words.first().and_then(|&i| words[i].literal());
    if words[0].literal().is_some_and(|n| n.ends_with("openssl")) && sub != Some("s_client") {
        return;
    }
    // Port scans and receive-only modes send nothing.
    let silent = ["-z", "--zero", "-d", "--recv-only"]
        .iter()
        .any(|id| p.has(id));
    if e.stdin_fed && !silent {
        e.add(
            "option.stdin_peer",
            Class::ConfigMutation,
            span0(words),
            "sends its standard input to the network peer",
        );
    }
}

fn tmux(e: &mut Engine<'_>, words: &[Word]) {
    for w in &words[1..] {
        match w.literal() {
            // tmux splits its arguments into several commands at a word that is or ends with
            // `;` (cmd_parse_from_arguments): the later ones are not the classified one.
            Some(l) if l.ends_with(';') => e.fail(
                "unknown.tmux_sequence",
                w.span,
                "a `;` argument starts another tmux command",
            ),
            Some(l) if !l.contains("#(") => {}
            Some(_) => e.fail(
                "unknown.tmux_format",
                w.span,
                "a tmux format `#(…)` runs a shell command",
            ),
            None => e.fail(
                "unknown.tmux_format",
                w.span,
                "a tmux argument only known at run time may hold a format that runs a command",
            ),
        }
    }
}

fn less(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    for w in &words[1..] {
        if let Some(l) = w.literal() {
            let bad = l.starts_with("-o")
                || l.starts_with("-O")
                || l.starts_with("-k")
                || l.starts_with("--log-file")
                || l.starts_with("--LOG-FILE")
                || l.starts_with("--lesskey");
            if bad {
                e.fail(
                    "unknown.less",
                    w.span,
                    "less log and key files are not modelled",
                );
            }
        }
    }
    for &i in &p.operands {
        let w = &words[i];
        match w.parts.first() {
            Some(Part::Lit(s)) if s.starts_with('+') => {
                // Start-up commands: only movement and search. Secure mode already disables
                // `!`, `|` and `v`, but nothing else needs to be trusted to it.
                let cmd = s.trim_start_matches('+');
                let safe = w.literal().is_some()
                    && (matches!(cmd, "" | "G" | "g" | "F" | "R")
                        || cmd.bytes().all(|b| b.is_ascii_digit())
                        || cmd.starts_with(['/', '?']));
                if !safe {
                    e.fail(
                        "unknown.less",
                        w.span,
                        "less start-up commands other than movement and search are not modelled",
                    );
                }
            }
            _ => e.read_target(w, false),
        }
    }
    // Secure mode: no shell escapes, editors, log files or input preprocessors.
    for ins in ["env", "LESSSECURE=1", "LESSOPEN=", "LESSCLOSE="] {
        ao.inserts.push((off, ins.to_owned()));
    }
}

/// `parted [DEVICE [COMMAND…]]`: read-only only when every command prints. parted accepts
/// unique prefixes of its commands, so anything outside the list changes the disk.
fn parted(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const UNITS: &[&str] = &[
        "s", "B", "kB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "%", "cyl", "chs", "compact",
    ];
    let is_prefix = |w: &str, full: &str, min: usize| w.len() >= min && full.starts_with(w);
    for &i in p.operands.iter().skip(1) {
        let w = &words[i];
        let ok = w.literal().is_some_and(|l| {
            is_prefix(l, "print", 1)
                || is_prefix(l, "unit", 1)
                || is_prefix(l, "help", 1)
                || is_prefix(l, "version", 1)
                || is_prefix(l, "quit", 1)
                || matches!(l, "free" | "all" | "list" | "devices")
                || UNITS.contains(&l)
        });
        if !ok {
            e.add(
                "spec.parted.edit",
                Class::Destructive,
                w.span,
                "parted commands other than `print` edit the partition table",
            );
            return;
        }
    }
}

/// Ad-hoc `ansible HOSTS -m MODULE`: fact and ping modules only read; `command`, `shell`,
/// `raw` and `script` run anything (the default module is `command`); others change hosts.
fn ansible(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const READS: &[&str] = &[
        "ping",
        "setup",
        "gather_facts",
        "debug",
        "stat",
        "package_facts",
        "service_facts",
        "mount_facts",
        "getent",
        "find",
        "listen_ports_facts",
        "systemd_info",
    ];
    const RUNS: &[&str] = &["command", "shell", "raw", "script", "expect"];
    if ["--version", "--help", "--list-hosts", "--syntax-check"]
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
    } else if !READS.contains(&module) && !p.has("--check") {
        e.add(
            "spec.ansible.module",
            Class::ConfigMutation,
            span,
            format!("the `{module}` module may change the hosts"),
        );
    }
}

/// `midclt call METHOD …`: TrueNAS methods that only read end in a reading verb.
fn midclt(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const READS: &[&str] = &[
        "query",
        "config",
        "info",
        "get_instance",
        "started",
        "status",
        "choices",
        "summary",
        "version",
        "get_state",
        "ready",
        "host_id",
        "boot_id",
    ];
    let method = p
        .operands
        .first()
        .map(|&i| (words[i].literal(), words[i].span));
    match method {
        Some((Some(m), _)) if m.rsplit('.').next().is_some_and(|v| READS.contains(&v)) => {}
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

/// `env`, `printenv`, bare `set`, `export -p`: every variable of the shell that runs the
/// command. The executor starts from a fixed environment, but a wrapper (`sudo` keeps some
/// variables, `ssh` and `docker exec` print another's) or an earlier assignment can put a
/// credential there, and the class of a dump must not depend on where it runs.
pub(crate) fn environment_dump(e: &mut Engine<'_>, words: &[Word]) {
    e.add(
        "secret.environment",
        Class::Destructive,
        span0(words),
        "prints every environment variable (credentials are often passed this way)",
    );
}

/// Environment variable names that by convention hold credentials (in containers and on
/// remote hosts; the executor's own environment has none).
fn secret_name(name: &str) -> bool {
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
fn connection_string_name(upper: &str) -> bool {
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

/// `echo "$DB_PASSWORD"` in a container or on a remote host prints a credential.
fn print_secrets(e: &mut Engine<'_>, operands: &[usize], words: &[Word]) {
    for &i in operands {
        for part in &words[i].parts {
            if let Part::Param { name, .. } = part
                && secret_name(name)
            {
                e.add(
                    "secret.variable",
                    Class::Destructive,
                    words[i].span,
                    format!("prints `${name}`, which by its name holds a secret"),
                );
            }
        }
    }
}

/// debugfs requests that only print metadata (never file contents, never writes).
fn debugfs(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const READS: &[&str] = &[
        "stats",
        "show_super_stats",
        "stat",
        "show_inode_info",
        "ls",
        "list_directory",
        "ffb",
        "find_free_block",
        "ffi",
        "find_free_inode",
        "icheck",
        "ncheck",
        "blocks",
        "bmap",
        "imap",
        "testb",
        "testi",
        "htree",
        "htree_dump",
        "dx_hash",
        "hash",
        "dirsearch",
        "lsdel",
        "list_deleted_inodes",
        "supported_features",
        "dump_extents",
        "extents",
        "ex",
        "filefrag",
        "id",
        "inode_dump",
        "idump",
        "logdump",
        "print_working_directory",
        "pwd",
        "list_quota",
        "lq",
        "get_quota",
        "gq",
        "freefrag",
        "e2freefrag",
        "check_desc",
    ];
    let requests: Vec<&crate::opts::Occ<'_>> = p.values("-R").collect();
    if requests.is_empty() {
        e.fail(
            "unknown.debugfs",
            span0(words),
            "debugfs without `-R` reads requests from elsewhere",
        );
    }
    for o in requests {
        let span = words[o.word].span;
        match o.value.literal().and_then(|r| r.split_whitespace().next()) {
            Some(r) if READS.contains(&r) => {}
            Some(r) => e.add(
                "spec.debugfs.request",
                Class::Destructive,
                span,
                format!("debugfs request `{r}` can show file contents or change the file system"),
            ),
            None => e.fail(
                "unknown.debugfs",
                span,
                "the debugfs request is only known at run time",
            ),
        }
    }
}

/// `python3 --version` and `python3 -m json.tool [IN [OUT]]`; any other program is code.
fn python(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    if p.has("--version") || p.has("--help") {
        return;
    }
    let module = p.values("-m").next().map(|o| o.value.literal());
    match module {
        Some(Some("json.tool" | "json")) => {
            if let Some(&i) = p.operands.first() {
                e.read_target(&words[i], false);
            }
            if let Some(&o) = p.operands.get(1) {
                e.write_target(&words[o], "`json.tool` writes");
            }
        }
        _ => e.fail(
            "unknown.interpreter",
            span0(words),
            "a Python program can do anything",
        ),
    }
}

/// PHP information and lint modes; running a script or code is unknown, except Nextcloud's
/// `occ`, which has a spec of its own.
fn php(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    if let Some(&i) = p.operands.first()
        && p.occ.is_empty()
        && words[i]
            .literal()
            .is_some_and(|l| l == "occ" || l.ends_with("/occ"))
    {
        // `php /var/www/nextcloud/occ status` is `occ status`.
        let mut inner: Vec<Word> = words[i..].to_vec();
        inner[0] = Word::lit("occ", words[i].span);
        e.argv(&inner, off + i, ao);
        return;
    }
    const INFO: &[&str] = &[
        "--version",
        "--info",
        "--modules",
        "--ini",
        "--help",
        "--rf",
        "--rc",
        "--re",
        "--rz",
        "--ri",
    ];
    if INFO.iter().any(|id| p.has(id)) && p.operands.is_empty() {
        return;
    }
    if p.has("--syntax-check") || p.has("--syntax-highlight") || p.has("--strip") {
        for &i in &p.operands {
            e.read_target(&words[i], false);
        }
        return;
    }
    e.fail(
        "unknown.interpreter",
        span0(words),
        "a PHP script can do anything",
    );
}

fn printf(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in p.values("-v") {
        crate::classify::assign_name(e, o.value.literal(), words[o.word].span, "printf -v");
    }
}

fn read(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for &i in &p.operands {
        crate::classify::assign_name(e, words[i].literal(), words[i].span, "read");
    }
    if p.operands.is_empty() {
        e.bind_unknown("REPLY");
    }
}

fn getent(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    const DATABASES: &[&str] = &[
        "ahosts",
        "ahostsv4",
        "ahostsv6",
        "aliases",
        "ethers",
        "group",
        "hosts",
        "initgroups",
        "netgroup",
        "networks",
        "passwd",
        "protocols",
        "rpc",
        "services",
    ];
    // The first operand is the database unless an option value the spec does not know
    // (`-s files shadow`) shifted it: then any later operand may be.
    let known_db = p
        .operands
        .first()
        .and_then(|&i| words[i].literal())
        .is_some_and(|d| DATABASES.contains(&d));
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

/// `etckeeper vcs log|diff` show /etc's history, where etckeeper commits `/etc/shadow`
/// and the host keys: patches ask unless paths after `--` limit them, and then each path
/// (relative to /etc, a directory recursively) is judged as a read.
fn etckeeper_vcs(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let sub = p.sub_words.last().and_then(|&i| words[i].literal());
    let patch = match sub.unwrap_or("") {
        "log" => p.has("--patch") || p.has("-u"),
        _ => !["--stat", "--shortstat", "--name-only", "--name-status"]
            .iter()
            .any(|id| p.has(id)),
    };
    if !patch {
        return;
    }
    let dd = words.iter().position(|w| w.literal() == Some("--"));
    let paths: Vec<usize> = p
        .operands
        .iter()
        .copied()
        .filter(|&i| dd.is_some_and(|d| i > d))
        .collect();
    let span = words.first().map(|w| w.span).unwrap_or_default();
    if paths.is_empty() {
        e.add(
            "secret.read",
            Class::Destructive,
            span,
            "shows changes to every file in /etc, `/etc/shadow` and host keys among them",
        );
        return;
    }
    for i in paths {
        let pat = match words[i].literal() {
            Some(l) if l.starts_with('/') => l.to_owned(),
            Some(l) => format!("/etc/{l}"),
            None => "/etc/**".to_owned(),
        };
        let mut esc = String::with_capacity(pat.len());
        if pat == "/etc/**" {
            esc.push_str(&pat);
        } else {
            crate::paths::escape_into(&pat, &mut esc);
        }
        e.read_patterns(&[esc], true, words[i].span);
    }
}

/// `systemd-analyze cat-config NAME` prints any file or directory under a configuration
/// root (`/etc/shadow`, `ssh/ssh_host_rsa_key`): each operand is judged as a read there.
fn systemd_analyze(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
fn smartctl(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

fn docker_run(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in &p.occ {
        let id = o.opt.id.as_str();
        let span = words[o.word].span;
        let v = o.value.literal();
        let host_path: Option<String> = match id {
            "--volume" => match v {
                Some(v) => v.split(':').next().map(str::to_owned),
                None => Some("**".to_owned()),
            },
            "--mount" => match v {
                Some(v) => v
                    .split(',')
                    .find_map(|kv| {
                        kv.strip_prefix("source=")
                            .or_else(|| kv.strip_prefix("src="))
                    })
                    .map(str::to_owned),
                None => Some("**".to_owned()),
            },
            "--pid" | "--ipc" | "--uts" | "--userns" | "--network" | "--net" | "--cgroupns" => {
                if v == Some("host") && id != "--network" && id != "--net" {
                    e.add(
                        "option.docker",
                        Class::Destructive,
                        span,
                        format!("`{id}=host` shares the host namespace"),
                    );
                }
                None
            }
            _ => None,
        };
        if let Some(hp) = host_path
            && (hp.starts_with('/') || hp.starts_with('~') || hp.starts_with('.') || hp == "**")
        {
            let h = hp.trim_end_matches('/');
            let system = h.is_empty()
                || hp == "**"
                || matches!(
                    h,
                    "/etc"
                        | "/usr"
                        | "/boot"
                        | "/bin"
                        | "/sbin"
                        | "/lib"
                        | "/root"
                        | "/var"
                        | "/proc"
                        | "/sys"
                        | "/dev"
                        | "/home"
                        | "/run"
                        | "/var/run"
                )
                || crate::paths::protected_write(h).is_some()
                || crate::paths::protected_write(&format!("{h}/x")).is_some();
            if system {
                e.add(
                    "option.docker",
                    Class::Destructive,
                    span,
                    format!("mounts host path `{hp}` into a container"),
                );
            }
        }
    }
}

/// A container's inspect document holds its environment (`Config.Env`), where service
/// credentials live: it asks unless a template picks fields that are not the environment
/// (`--format '{{.State.Health.Status}}'`) or the object is not a container.
fn container_inspect(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let not_container = p
        .values("--type")
        .any(|o| matches!(o.value.literal(), Some("image" | "network" | "volume")));
    if not_container {
        return;
    }
    let mut templates = p.values("--format").peekable();
    if templates.peek().is_none() {
        e.add(
            "secret.environment",
            Class::Destructive,
            span0(words),
            "prints the whole container configuration, its environment included (service credentials)",
        );
        return;
    }
    for o in templates {
        if o.value.literal().is_none_or(template_shows_env) {
            e.add(
                "secret.environment",
                Class::Destructive,
                words[o.word].span,
                "prints the environment of a container (service credentials)",
            );
        }
    }
}

/// `docker top C [ps options]`: BSD `e` (`e`, `aux e`, `auxeww`) appends each process's
/// environment (the container's credentials).
fn container_top(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for &i in p.operands.iter().skip(1) {
        let shows_env = match words[i].literal() {
            Some(w) => {
                !w.starts_with('-') && w.bytes().all(|c| c.is_ascii_alphabetic()) && w.contains('e')
            }
            None => true,
        };
        if shows_env {
            e.add(
                "secret.environment",
                Class::Destructive,
                words[i].span,
                "prints the environment of a container's processes (service credentials)",
            );
            return;
        }
    }
}

/// `systemctl show` prints every property, the unit's `Environment=` (service passwords)
/// included, unless `-p`/`-P` names only properties that hold none.
fn unit_show(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
fn ps(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

/// Key names that hold credentials in configuration files, lower case. `passwd` is not one
/// (it names the account database), nor are the sshd and sudo settings below.
const CREDENTIAL_KEYS: &[&str] = &[
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
const NOT_CREDENTIALS: &[&str] = &[
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

/// `grep smtp_password /etc/gitlab/gitlab.rb`, `yq .oidc.client_secret config.yaml`: a
/// search for a credential key in configuration prints the credential, whatever the file
/// is called. Searching logs (failed logins) or a pipe (classified at its source) does not.
/// Does an embedded program (awk, jq, yq) name one of `idents` as a word of its own that
/// is not a field access (`.env` is a JSON key, `env` and `$ENV` are jq's environment)?
/// A match inside a string literal also counts: failing closed costs a question only.
fn embedded_environment(e: &mut Engine<'_>, text: &str, idents: &[&str], span: Span) {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if !ident(b[i]) || (i > 0 && ident(b[i - 1])) {
            i += 1;
            continue;
        }
        let end = (i..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
        let word = &text[i..end];
        let field = i > 0 && b[i - 1] == b'.';
        if !field && idents.contains(&word) {
            e.add(
                "secret.environment",
                Class::Destructive,
                span,
                format!("the program reads the environment or a file through `{word}`"),
            );
            return;
        }
        i = end;
    }
}

/// The program text of jq/yq. Options the lenient spec does not list (`--arg k v`) may
/// shift which operand is the program, so every literal operand is scanned.
fn query_program(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], idents: &[&str]) {
    // grep shares the handler; only jq (gojq, jless) and yq run a query language.
    if !p.path.first().is_some_and(|s| s.id == "jq" || s.id == "yq") {
        return;
    }
    for &i in &p.operands {
        let w = &words[i];
        if let Some(s) = w.literal() {
            embedded_environment(e, s, idents, w.span);
        }
    }
}

fn secret_search(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    // jq and gojq: `env`, `$ENV`; yq: `env()`, `strenv()`, `envsubst`, and `load*()` reads
    // any file; jq modules (`import`, `include`) are files too.
    const IDENTS: &[&str] = &[
        "env",
        "ENV",
        "strenv",
        "envsubst",
        "load",
        "load_str",
        "load_xml",
        "load_props",
        "load_base64",
        "load_yaml",
        "load_json",
        "import",
        "include",
    ];
    query_program(e, p, words, IDENTS);
    let mut patterns: Vec<(Option<&str>, Span)> = p
        .values("--regexp")
        .map(|o| (o.value.literal(), words[o.word].span))
        .collect();
    let files = if patterns.is_empty() {
        let Some((&first, rest)) = p.operands.split_first() else {
            return;
        };
        patterns.push((words[first].literal(), words[first].span));
        rest
    } else {
        &p.operands[..]
    };
    // Stdin comes from a command classified on its own; `-l`, `-c`, `-q` print no lines.
    if files.is_empty() || p.occ.iter().any(|o| o.opt.effects.quiet) {
        return;
    }
    let is_log = |w: &Word| {
        w.literal().is_some_and(|f| {
            f.starts_with("/var/log/") || f.ends_with(".log") || f.contains(".log.")
        })
    };
    if files.iter().all(|&i| is_log(&words[i])) {
        return;
    }
    if let Some((_, span)) = patterns
        .iter()
        .find(|(text, _)| text.is_some_and(names_credential))
    {
        e.add(
            "secret.search",
            Class::Destructive,
            *span,
            "searches configuration for a credential key, which prints the credential",
        );
    }
}

/// Does a Go template over an inspect document print the environment: a field named
/// `Env`, all of `.Config`, or the whole document (`{{json .}}`)?
fn template_shows_env(t: &str) -> bool {
    if t.contains("Env") {
        return true;
    }
    let b = t.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len()).filter(|&i| b[i] == b'.').any(|i| {
        // Only a field reference starts a path: `{{.X}}`, `{{json .X}}`, `(index .X 0)`.
        let starts = i == 0 || !ident(b[i - 1]) && b[i - 1] != b'.';
        let end = (i + 1..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
        let field = &t[i + 1..end];
        let whole = field.is_empty() || (field == "Config" && b.get(end) != Some(&b'.'));
        starts && whole
    })
}

fn rsync(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in p.values("--rsh") {
        rsh_value(e, &o.value, words[o.word].span);
    }
    let dry = p.has("--dry-run");
    let ops = &p.operands;
    if ops.len() < 2 {
        return;
    }
    let recursive = p.has("--recursive") || p.has("--archive");
    // A dry run compares metadata; it copies nothing anywhere.
    if !dry {
        for &i in &ops[..ops.len() - 1] {
            e.read_target(&words[i], recursive);
        }
    }
    if !dry {
        e.write_target(&words[ops[ops.len() - 1]], "`rsync` writes into");
    }
}

/// Units whose stop locks the operator out (shared with the systemctl spec's intent).
const LOCKOUT_UNITS: &[&str] = &[
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

fn service(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

// ---- full handlers -------------------------------------------------------------

fn find(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let span = span0(words);
    spec_finding(e, spec, Class::ReadOnly, span);
    let mut i = 1;
    // Leading options.
    while let Some(l) = words.get(i).and_then(Word::literal) {
        match l {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if l.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    // Starting points.
    let mut roots: Vec<String> = Vec::new();
    while let Some(w) = words.get(i) {
        let expr_start = match w.parts.first() {
            Some(Part::Lit(s)) => {
                (s.starts_with('-') && s.len() > 1) || matches!(s.as_str(), "(" | ")" | "!" | ",")
            }
            _ => false,
        };
        if expr_start {
            break;
        }
        if e.may_be_option(w) && w.literal().is_none() {
            e.fail(
                "unknown.dynamic_option",
                w.span,
                "a starting point of `find` could be an expression",
            );
            return;
        }
        let (pats, _) = e.pattern(w);
        roots.extend(pats);
        i += 1;
    }
    if roots.is_empty() {
        roots.push(".".to_owned());
    }
    let resolved: Vec<String> = roots
        .iter()
        .map(|r| crate::paths::resolve(r, e.cwd.as_deref()).into_owned())
        .collect();
    // `-name GLOB` in a plain conjunction narrows what `{}` and the output can be.
    let expr = &words[i.min(words.len())..];
    let simple = !expr.iter().any(|w| {
        matches!(
            w.literal(),
            Some("-o" | "-or" | "," | "!" | "-not" | "(" | ")")
        )
    });
    let names: Vec<&str> = expr
        .windows(2)
        .filter(|p| p[0].literal() == Some("-name"))
        .filter_map(|p| p[1].literal())
        .collect();
    let found = if resolved.len() == 1 {
        let root = resolved[0].trim_end_matches('/');
        match names.as_slice() {
            [n] if simple && !n.contains('/') => format!("{root}/**/{n}"),
            _ => format!("{root}/**"),
        }
    } else {
        "**".to_owned()
    };
    let mut prints_paths = true;
    const TESTS1: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-links",
        "-inum",
        "-samefile",
        "-lname",
        "-ilname",
        "-used",
        "-fstype",
        "-context",
        "-maxdepth",
        "-mindepth",
        "-regextype",
        "-printf",
        "-newermt",
        "-newerct",
        "-newerat",
        "-newermm",
        "-neweraa",
        "-newercc",
        "-newerBt",
    ];
    const TESTS0: &[&str] = &[
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-nouser",
        "-nogroup",
        "-true",
        "-false",
        "-depth",
        "-mount",
        "-xdev",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-daystart",
        "-follow",
        "-warn",
        "-nowarn",
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
        "-not",
        "-a",
        "-and",
        "-o",
        "-or",
        "(",
        ")",
        "!",
        ",",
        "-help",
        "--help",
        "-version",
        "--version",
    ];
    while i < words.len() {
        let w = &words[i];
        let Some(l) = w.literal() else {
            e.fail(
                "unknown.find",
                w.span,
                "a `find` expression word is only known at run time",
            );
            return;
        };
        if TESTS0.contains(&l) {
            i += 1;
        } else if TESTS1.contains(&l) {
            if words.get(i + 1).is_none() {
                e.fail(
                    "unknown.find",
                    w.span,
                    format!("`{l}` is missing its argument"),
                );
                return;
            }
            i += 2;
        } else {
            match l {
                "-files0-from" => {
                    if let Some(a) = words.get(i + 1) {
                        e.read_target(a, false);
                    }
                    i += 2;
                }
                "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                    if let Some(a) = words.get(i + 1) {
                        e.write_target(a, &format!("`find {l}` writes"));
                    }
                    prints_paths = false;
                    i += if l == "-fprintf" { 3 } else { 2 };
                }
                "-delete" => {
                    e.add(
                        "spec.find.delete",
                        Class::Destructive,
                        w.span,
                        "`find -delete` deletes files",
                    );
                    prints_paths = false;
                    i += 1;
                }
                "-exec" | "-execdir" => {
                    prints_paths = false;
                    let start = i + 1;
                    let Some(end_rel) = words[start..]
                        .iter()
                        .position(|x| matches!(x.literal(), Some(";" | "+")))
                    else {
                        e.fail("unknown.find", w.span, "`-exec` without `;` or `+`");
                        return;
                    };
                    let end = start + end_rel;
                    if end == start {
                        e.fail("unknown.find", w.span, "`-exec` without a command");
                        return;
                    }
                    let found_pat = if l == "-execdir" {
                        // `./NAME` in the file's own directory: the name part of what is found.
                        let name = found.rsplit('/').next().filter(|n| !n.contains("**"));
                        format!("./{}", name.unwrap_or("*"))
                    } else {
                        found.clone()
                    };
                    let inner: Vec<Word> = words[start..end]
                        .iter()
                        .map(|x| {
                            if x.literal() == Some("{}") {
                                Word {
                                    parts: smallvec::smallvec![Part::Synthetic {
                                        pattern: found_pat.clone(),
                                        may_be_option: false,
                                    }],
                                    span: x.span,
                                }
                            } else if let Some(l) = x.literal()
                                && l.starts_with('-')
                                && let Some(at) = l.find("{}")
                            {
                                // `--files0-from={}`: the option keeps its name, and its
                                // value is a found file (a read of it, when it reads one).
                                Word {
                                    parts: smallvec::smallvec![
                                        Part::Lit(l[..at].to_owned()),
                                        Part::Synthetic {
                                            pattern: found_pat.clone(),
                                            may_be_option: false,
                                        }
                                    ],
                                    span: x.span,
                                }
                            } else if x.parts.iter().any(|p| matches!(p, Part::Lit(s) if s.contains("{}"))) {
                                Word {
                                    parts: smallvec::smallvec![Part::Synthetic {
                                        pattern: "**".to_owned(),
                                        may_be_option: matches!(x.parts.first(), Some(Part::Lit(s)) if s.starts_with('-')),
                                    }],
                                    span: x.span,
                                }
                            } else {
                                x.clone()
                            }
                        })
                        .collect();
                    let saved = e.depth;
                    // `-execdir` runs in the directory of each file found: somewhere under
                    // the starting point (relative paths in the command resolve there).
                    let saved_cwd = (l == "-execdir").then(|| e.cwd.clone());
                    if l == "-execdir" {
                        e.cwd = match resolved.as_slice() {
                            [r] if !r.starts_with("**") => {
                                let mut d = r.trim_end_matches('/').to_owned();
                                d.push_str("/**");
                                Some(d.into())
                            }
                            _ => None,
                        };
                    }
                    e.argv(&inner, off + start, ao);
                    if let Some(c) = saved_cwd {
                        e.cwd = c;
                    }
                    e.depth = saved;
                    i = end + 1;
                }
                "-ok" | "-okdir" => {
                    e.fail("unknown.find", w.span, "`-ok` asks on the terminal");
                    return;
                }
                _ => {
                    e.fail(
                        "unknown.find",
                        w.span,
                        format!("`find {l}` is not modelled"),
                    );
                    return;
                }
            }
        }
    }
    if prints_paths {
        e.stdout_paths = Some(found);
    }
}

fn kill(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    let span = span0(words);
    // Options end at `--` and at the first operand, and only the first signal counts:
    // after it (`kill -9 -0`, `kill -- -0`) a `-N` word is a process group to signal.
    let mut listing = false;
    let mut signal: Option<&str> = None;
    let mut k = 1;
    while let Some(w) = words.get(k) {
        match w.literal() {
            Some("-l" | "-L" | "--list" | "--table") => listing = true,
            Some("--") => break,
            Some("-s" | "-n" | "--signal") if signal.is_none() => {
                signal = Some(words.get(k + 1).and_then(Word::literal).unwrap_or("?"));
                k += 1;
            }
            Some("-s0") if signal.is_none() => signal = Some("0"),
            Some(l) if l.starts_with('-') && l.len() > 1 && signal.is_none() => {
                signal = Some(&l[1..]);
            }
            _ => break,
        }
        k += 1;
    }
    let zero = signal.is_some_and(|s| matches!(s, "0" | "SIG0"));
    if listing || zero {
        e.add(
            "spec.kill.query",
            Class::ReadOnly,
            span,
            "lists signals or checks a process exists",
        );
    } else {
        spec_finding(e, spec, spec.class, span);
    }
}

fn cd(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    let args: Vec<&Word> = words[1..]
        .iter()
        .filter(|w| !matches!(w.literal(), Some("-L" | "-P" | "-e" | "-@" | "--")))
        .collect();
    match args.as_slice() {
        [] => e.cwd = Some("~".into()),
        [w] => {
            let (pats, known) = e.pattern(w);
            // Through `..` the directory may be anywhere (a symlink before it).
            let through_link = crate::paths::dotdot_tail(&pats[0]).is_some()
                && pats[0].trim_start_matches("./").contains("/..");
            if known
                && pats.len() == 1
                && !crate::paths::has_meta(&pats[0])
                && pats[0] != "-"
                && !through_link
            {
                let r = crate::paths::resolve(&pats[0], e.cwd.as_deref());
                e.cwd = if r.starts_with("**") {
                    None
                } else {
                    Some(r.into_owned().into())
                };
            } else {
                e.cwd = None;
            }
        }
        _ => e.cwd = None,
    }
}

fn set(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    // Not `a` (allexport): every later assignment would reach the environment.
    const SAFE_LETTERS: &str = "euxvfCEhmnpPTBb";
    const SAFE_NAMES: &[&str] = &[
        "errexit",
        "nounset",
        "xtrace",
        "pipefail",
        "noclobber",
        "noglob",
        "verbose",
        "errtrace",
        "functrace",
        "physical",
        "hashall",
        "braceexpand",
        "notify",
        "noexec",
        "monitor",
        "nolog",
    ];
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    // Bare `set` prints every shell variable, the exported ones included.
    if words.len() == 1 {
        environment_dump(e, words);
    }
    let mut k = 1;
    while let Some(w) = words.get(k) {
        let Some(l) = w.literal() else {
            e.fail(
                "unknown.set",
                w.span,
                "`set` argument only known at run time",
            );
            return;
        };
        if l == "--" || l == "-" {
            return;
        }
        if let Some(flags) = l.strip_prefix('-').or_else(|| l.strip_prefix('+')) {
            // `-o NAME` may end a cluster: `set -euo pipefail`.
            let (letters, takes_name) = match flags.strip_suffix('o') {
                Some(rest) => (rest, true),
                None => (flags, false),
            };
            if !letters.chars().all(|c| SAFE_LETTERS.contains(c)) {
                e.fail(
                    "unknown.set",
                    w.span,
                    "this shell option changes how commands are parsed",
                );
                return;
            }
            if takes_name {
                match words.get(k + 1).and_then(Word::literal) {
                    Some(n) if SAFE_NAMES.contains(&n) => k += 2,
                    None if k + 1 == words.len() => return,
                    _ => {
                        e.fail(
                            "unknown.set",
                            w.span,
                            "this shell option changes how commands are parsed",
                        );
                        return;
                    }
                }
                continue;
            }
            k += 1;
        } else {
            // Positional parameters.
            return;
        }
    }
}

fn export(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    // `export` and `export -p` (any number of `-p`, `--`) print the whole environment.
    if words[1..]
        .iter()
        .all(|w| matches!(w.literal(), Some("-p" | "--" | "-pp")))
    {
        environment_dump(e, words);
    }
    for w in &words[1..] {
        let Some(Part::Lit(first)) = w.parts.first() else {
            e.fail(
                "unknown.export",
                w.span,
                "`export` argument only known at run time",
            );
            continue;
        };
        match first.as_str() {
            "-p" => continue,
            s if s.starts_with('-') => {
                e.fail("unknown.export", w.span, "`export -f`/`-n` is not modelled");
                continue;
            }
            _ => {}
        }
        match first.split_once('=') {
            Some((name, _)) => {
                let value = w.literal().map(|l| l[name.len() + 1..].to_owned());
                if !env_allowed(name, value.as_deref(), true) {
                    e.fail(
                        "unknown.env",
                        w.span,
                        format!("exporting `{name}` can change what later commands run"),
                    );
                }
                let b = Binding {
                    patterns: vec!["**".to_owned()],
                    may_be_option: true,
                };
                e.bind(name, b);
            }
            None => {
                if !is_name(first) {
                    e.fail(
                        "unknown.export",
                        w.span,
                        "`export` of something that is not a name",
                    );
                } else if w.literal().is_none() || !env_allowed(first, None, false) {
                    // Its current value (set earlier, or inherited) reaches every later
                    // command: only harmless names.
                    e.fail(
                        "unknown.env",
                        w.span,
                        format!("exporting `{first}` can change what later commands run"),
                    );
                }
            }
        }
    }
}

fn unset(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    for w in &words[1..] {
        match w.literal() {
            Some("-v" | "-f" | "-n") => {}
            Some("PATH" | "IFS" | "HOME" | "PAGER") => {
                e.fail(
                    "unknown.unset",
                    w.span,
                    "unsetting this variable changes how commands run",
                );
            }
            Some(n) if is_name(n) => {}
            _ => e.fail(
                "unknown.subscript",
                w.span,
                "`unset` of anything but a plain name evaluates code",
            ),
        }
    }
}

fn command(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let mut k = 1;
    let mut query = false;
    while let Some(l) = words.get(k).and_then(Word::literal) {
        match l {
            "-v" | "-V" => query = true,
            "-p" => {}
            "--" => {
                k += 1;
                break;
            }
            _ => break,
        }
        k += 1;
    }
    if query || k >= words.len() {
        spec_finding(e, spec, Class::ReadOnly, span0(words));
        return;
    }
    e.argv(&words[k..], off + k, ao);
}

fn exec(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let mut k = 1;
    while let Some(l) = words.get(k).and_then(Word::literal) {
        match l {
            "-c" | "-l" => k += 1,
            "-a" => k += 2,
            "--" => {
                k += 1;
                break;
            }
            _ => break,
        }
    }
    if k >= words.len() {
        spec_finding(e, spec, Class::ReadOnly, span0(words));
        return;
    }
    e.argv(&words[k..], off + k, ao);
}

fn test(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    let mut k = 1;
    while k < words.len() {
        if matches!(words[k].literal(), Some("-v" | "-R"))
            && let Some(n) = words.get(k + 1)
            && !n.literal().is_some_and(|l| is_name(l) || l == "]")
        {
            e.fail(
                "unknown.subscript",
                n.span,
                "`test -v` with anything but a plain name evaluates code",
            );
        }
        k += 1;
    }
}
