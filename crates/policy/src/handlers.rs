//! Command-specific logic the spec data cannot express: wrappers (recursion),
//! embedded programs (sed, awk, sh -c), request methods, modes and neutralisation.

use crate::classify::{ArgvOut, Binding, Engine, env_allowed, quoted};
use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lower::is_name;
use crate::opts::{Parsed, Val};
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
    Dd,
    Date,
    Sysctl,
    Nft,
    Tmux,
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
            "dd" => Self::Dd,
            "date" => Self::Date,
            "sysctl" => Self::Sysctl,
            "nft" => Self::Nft,
            "tmux" => Self::Tmux,
            "wait" => Self::Wait,
            "less" => Self::Less,
            "man" => Self::Man,
            "printf" => Self::Printf,
            "read" => Self::Read,
            "getent" => Self::Getent,
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
            Self::Dd => dd(e, p, words),
            Self::Date => date(e, p, words),
            Self::Sysctl => sysctl(e, p, words),
            Self::Nft => nft(e, p, words),
            Self::Tmux => tmux(e, words),
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
                    guest_environment(e, words);
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
            Self::DockerRun => docker_run(e, p, words),
            Self::ContainerInspect => container_inspect(e, p, words),
            Self::Ps => ps(e, p, words),
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
    if r < words.len() {
        e.argv(&words[r..], off + r, ao);
    }
}

fn env(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    let Some(r) = p.rest else {
        guest_environment(e, words);
        return;
    };
    let r = leading_assignments(e, words, r);
    if r < words.len() {
        e.argv(&words[r..], off + r, ao);
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
    "userknownhostsfile",
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
    "controlmaster",
    "controlpath",
    "controlpersist",
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

fn ssh(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
    for o in p.values("-o") {
        ssh_option(e, &o.value, words[o.word].span);
    }
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
                let key = val.split('=').next().unwrap_or("").to_ascii_lowercase();
                ok = SSH_SAFE_OPTIONS.contains(&key.as_str());
                k += 2;
            }
            t if t.starts_with("-o") => {
                let key = t[2..].split('=').next().unwrap_or("").to_ascii_lowercase();
                ok = SSH_SAFE_OPTIONS.contains(&key.as_str());
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
    let mut ops: &[usize] = &p.operands;
    let mut from_option = false;
    for o in p.values("--source") {
        from_option = true;
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
                ("core.fsmonitor", "false") | ("log.showsignature", "false") | ("protocol.ext.allow", "never")
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
            let Some(l) = w.literal() else { continue };
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
        }
        return;
    };
    let scheme = prefix[..pos].to_ascii_lowercase();
    match scheme.as_str() {
        "http" | "https" | "ftp" | "ftps" | "sftp" | "scp" => {}
        "file" => {
            let rest = &prefix[pos + 3..];
            let path = rest.find('/').map_or("/", |i| &rest[i..]);
            if w.literal().is_some() {
                e.read_literal(path, w.span);
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

fn curl(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word], off: usize, ao: &mut ArgvOut) {
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
fn tmux(e: &mut Engine<'_>, words: &[Word]) {
    for w in &words[1..] {
        match w.literal() {
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

/// `env` or `printenv` inside a container or on a remote host prints where credentials of
/// services usually live; the executor's own environment is fixed and holds none.
pub(crate) fn guest_environment(e: &mut Engine<'_>, words: &[Word]) {
    if e.remote > 0 {
        e.add(
            "secret.environment",
            Class::Destructive,
            span0(words),
            "prints the environment of a container or remote host (service credentials)",
        );
    }
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
    ]
    .iter()
    .any(|k| n.contains(k))
        || n.ends_with("_KEY")
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
    if let Some(&i) = p.operands.first() {
        match words[i].literal() {
            Some("shadow" | "gshadow") => {
                e.add(
                    "secret.read",
                    Class::Destructive,
                    words[i].span,
                    "reads password hashes",
                );
            }
            Some(_) => {}
            None => e.fail(
                "unknown.getent",
                words[i].span,
                "database name only known at run time",
            ),
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

/// BSD-style `ps e` (`ps eww`, `ps auxe`) appends each process's environment to its
/// command line: the credentials services were started with. The spec is lenient, so
/// operands here include the values of options; those are skipped.
fn ps(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
fn secret_search(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
                        format!("./{}", "*")
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
                    e.argv(&inner, off + start, ao);
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
    let mut listing = false;
    let mut zero = false;
    let mut k = 1;
    while let Some(w) = words.get(k) {
        match w.literal() {
            Some("-l" | "-L" | "--list" | "--table") => listing = true,
            Some("-0" | "-s0") => zero = true,
            Some("-s" | "-n" | "--signal") => {
                if words.get(k + 1).and_then(Word::literal) == Some("0") {
                    zero = true;
                }
                k += 1;
            }
            _ => {}
        }
        k += 1;
    }
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
            if known && pats.len() == 1 && !crate::paths::has_meta(&pats[0]) && pats[0] != "-" {
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
