//! Command-specific logic the spec data cannot express: wrappers (recursion),
//! embedded programs (sed, awk, sh -c), request methods, modes and neutralisation.
//! One module per domain; `Handler` below is the registry specs name.

mod builtins;
mod common;
mod containers;
mod databases;
mod files;
mod network;
mod programs;
mod remote;
mod system;
mod vcs;
mod wrappers;

pub(crate) use self::common::names_credential;

use self::builtins::{cd, command, exec, export, kill, printf, read, set, test, unset};
use self::common::{environment_dump, print_secrets, secret_name, span0};
use self::containers::{container_inspect, container_top, docker_run};
use self::files::{dd, debugfs, find, members_to_stdout, parted, tar};
use self::network::{curl, nft, wget};
use self::programs::{awk, php, python, secret_search, sed};
use self::remote::{rsync, ssh, ssh_control, ssh_option};
use self::system::{
    ansible, date, getent, midclt, ps, service, smartctl, sysctl, systemd_analyze, unit_show,
};
use self::vcs::{etckeeper_vcs, git, git_config, git_list};
use self::wrappers::{env, exec_argv, less, shell, stdin_peer, sudo, tmux, watch, xargs};
use crate::classify::{ArgvOut, Engine};
use crate::decision::Class;
use crate::ir::Word;
use crate::opts::Parsed;
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
            Self::Sqlite => databases::sqlite(e, spec, words, off, ao),
            Self::Redis => databases::redis(e, spec, words),
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
            Self::Psql => databases::psql(e, p, words, off, ao),
            Self::Mysql => databases::mysql(e, p, words),
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
