//! The handler registry: every handler a spec can name with `handler = "…"`, in one table.
//!
//! A row is `Variant "name" kind |e, p_or_spec, words, off, ao| call;`. `post` handlers run
//! after the generic option parse with the parsed command; `full` handlers parse their own
//! arguments and may only sit on a top-level command. The table is tokens only: this file
//! defines the `Handler` enum from it (what `spec.rs` needs, so the spec loader imports
//! nothing that imports it back) and `handlers/mod.rs` builds the dispatch from the same
//! rows, where the calls resolve. Adding a handler is one row here plus its function and
//! test; a spec naming an unknown handler fails to load and a handler no spec names fails
//! `handlers::tests::every_handler_is_named_by_a_spec`.

macro_rules! handler_table {
    ($then:ident) => {
        $then! {
            // Wrappers: the command runs another command.
            Wrapper "wrapper" post |e, p, w, off, ao| wrappers::guest(e, p, w, off, ao);
            Sudo "sudo" post |e, p, w, off, ao| wrappers::sudo(e, p, w, off, ao);
            Env "env" post |e, p, w, off, ao| wrappers::env(e, p, w, off, ao);
            Xargs "xargs" post |e, p, w, off, ao| wrappers::xargs(e, p, w, off, ao);
            Watch "watch" post |e, p, w, off, ao| wrappers::watch(e, p, w, off, ao);
            Shell "shell" post |e, p, w, off, ao| wrappers::shell(e, p, w, off, ao);
            ExecArgv "exec_argv" post |e, p, w, off, ao| wrappers::exec_argv(e, p, w, off, ao);
            SubAsCommand "sub_as_command" post |e, p, w, off, ao| wrappers::sub_as_command(e, p, w, off, ao);
            Tmux "tmux" post |e, _p, w, _off, _ao| wrappers::tmux(e, w);
            StdinPeer "stdin_peer" post |e, p, w, _off, _ao| wrappers::stdin_peer(e, p, w);
            Less "less" post |e, p, w, off, ao| wrappers::less(e, p, w, off, ao);
            Man "man" post |e, p, w, off, ao| wrappers::man(e, p, w, off, ao);
            // Remote access.
            Ssh "ssh" post |e, p, w, off, ao| remote::ssh(e, p, w, off, ao);
            SshOpts "ssh_opts" post |e, p, w, _off, _ao| remote::ssh_opts(e, p, w);
            Rsync "rsync" post |e, p, w, _off, _ao| remote::rsync(e, p, w);
            // Network clients and the firewall.
            Curl "curl" post |e, p, w, off, ao| network::curl(e, p, w, off, ao);
            Wget "wget" post |e, p, w, off, ao| network::wget(e, p, w, off, ao);
            Nft "nft" post |e, p, w, _off, _ao| network::nft(e, p, w);
            // Version control.
            Git "git" post |e, p, w, off, ao| vcs::git(e, p, w, off, ao);
            GitList "git_list" post |e, p, w, _off, _ao| vcs::git_list(e, p, w);
            GitConfig "git_config" post |e, p, w, _off, _ao| vcs::git_config(e, p, w);
            EtckeeperVcs "etckeeper_vcs" post |e, p, w, _off, _ao| vcs::etckeeper_vcs(e, p, w);
            // Embedded programs.
            Sed "sed" post |e, p, w, _off, _ao| programs::sed(e, p, w);
            Awk "awk" post |e, p, w, _off, _ao| programs::awk(e, p, w);
            Python "python" post |e, p, w, _off, _ao| programs::python(e, p, w);
            Php "php" post |e, p, w, off, ao| programs::php(e, p, w, off, ao);
            SecretSearch "secret_search" post |e, p, w, _off, _ao| programs::secret_search(e, p, w);
            // Files, archives and disks.
            Tar "tar" post |e, p, w, _off, _ao| files::tar(e, p, w);
            Unzip "unzip" post |e, p, w, _off, _ao| files::unzip(e, p, w);
            Dd "dd" post |e, p, w, _off, _ao| files::dd(e, p, w);
            Debugfs "debugfs" post |e, p, w, _off, _ao| files::debugfs(e, p, w);
            Parted "parted" post |e, p, w, _off, _ao| files::parted(e, p, w);
            Find "find" full |e, spec, w, off, ao| files::find(e, spec, w, off, ao);
            // System tools.
            Date "date" post |e, p, w, _off, _ao| system::date(e, p, w);
            Sysctl "sysctl" post |e, p, w, _off, _ao| system::sysctl(e, p, w);
            Service "service" post |e, p, w, _off, _ao| system::service(e, p, w);
            UnitShow "unit_show" post |e, p, w, _off, _ao| system::unit_show(e, p, w);
            SystemdAnalyze "systemd_analyze" post |e, p, w, _off, _ao| system::systemd_analyze(e, p, w);
            Ps "ps" post |e, p, w, _off, _ao| system::ps(e, p, w);
            Smartctl "smartctl" post |e, p, w, _off, _ao| system::smartctl(e, p, w);
            Ansible "ansible" post |e, p, w, _off, _ao| system::ansible(e, p, w);
            Midclt "midclt" post |e, p, w, _off, _ao| system::midclt(e, p, w);
            Getent "getent" post |e, p, w, _off, _ao| system::getent(e, p, w);
            Printenv "printenv" post |e, p, w, _off, _ao| system::printenv(e, p, w);
            WritesLog "writes_log" post |e, p, w, _off, _ao| system::writes_log(e, p, w);
            // Containers.
            DockerRun "docker_run" post |e, p, w, _off, _ao| containers::docker_run(e, p, w);
            ContainerInspect "container_inspect" post |e, p, w, _off, _ao| containers::container_inspect(e, p, w);
            ContainerTop "container_top" post |e, p, w, _off, _ao| containers::container_top(e, p, w);
            // Database clients.
            Psql "psql" post |e, p, w, off, ao| databases::psql(e, p, w, off, ao);
            Mysql "mysql" post |e, p, w, _off, _ao| databases::mysql(e, p, w);
            Sqlite "sqlite" full |e, spec, w, off, ao| databases::sqlite(e, spec, w, off, ao);
            Redis "redis" full |e, spec, w, _off, _ao| databases::redis(e, spec, w);
            // Shell builtins.
            Printf "printf" post |e, p, w, _off, _ao| builtins::printf(e, p, w);
            Echo "echo" post |e, p, w, _off, _ao| builtins::echo(e, p, w);
            Read "read" post |e, p, w, _off, _ao| builtins::read(e, p, w);
            Wait "wait" post |e, p, w, _off, _ao| builtins::wait(e, p, w);
            Kill "kill" full |e, spec, w, _off, _ao| builtins::kill(e, spec, w);
            Cd "cd" full |e, spec, w, _off, _ao| builtins::cd(e, spec, w);
            Set "set" full |e, spec, w, _off, _ao| builtins::set(e, spec, w);
            Export "export" full |e, spec, w, _off, _ao| builtins::export(e, spec, w);
            Unset "unset" full |e, spec, w, _off, _ao| builtins::unset(e, spec, w);
            Command "command" full |e, spec, w, off, ao| builtins::command(e, spec, w, off, ao);
            Exec "exec" full |e, spec, w, off, ao| builtins::exec(e, spec, w, off, ao);
            Test "test" full |e, spec, w, _off, _ao| builtins::test(e, spec, w);
        }
    };
}
pub(crate) use handler_table;

macro_rules! define_handlers {
    ($($variant:ident $name:literal $kind:ident $run:expr;)*) => {
        /// Handlers a spec can name with `handler = "…"` (rows of `handler_table!`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Handler {
            $($variant,)*
        }

        impl Handler {
            /// Every handler, in table order.
            #[cfg(test)]
            pub(crate) const ALL: &'static [Handler] = &[$(Self::$variant,)*];

            /// The name specs use.
            #[cfg(test)]
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            pub(crate) fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($name => Some(Self::$variant),)*
                    _ => None,
                }
            }

            /// Full handlers parse their own arguments (top-level commands only).
            pub(crate) fn is_full(self) -> bool {
                match self {
                    $(Self::$variant => stringify!($kind) == "full",)*
                }
            }
        }
    };
}

handler_table!(define_handlers);
