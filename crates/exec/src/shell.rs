//! Shell quoting, the fixed environment, and the remote command line.
//!
//! The canonical command is opaque here: it was parsed, classified and re-quoted by the
//! policy crate, and must reach `bash -c` byte for byte. The only shell that parses
//! anything we build is the remote login shell (sshd runs `$SHELL -c <string>`), and it
//! sees nothing but fixed words and single-quoted strings.

use std::time::Duration;

/// The `PATH` every command runs with, locally and remotely.
pub const FIXED_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment every command runs with, besides `HOME` (the target user's own). Nothing
/// else is inherited: no `BASH_ENV`/`ENV` (which bash would source), no `LD_PRELOAD`, no
/// pager that waits for a key.
pub const FIXED_ENV: &[(&str, &str)] = &[
    ("PATH", FIXED_PATH),
    ("PAGER", "cat"),
    ("SYSTEMD_PAGER", ""),
    ("GIT_PAGER", "cat"),
    ("LC_ALL", "C.UTF-8"),
    ("TERM", "dumb"),
];

/// `bash` flags: no profile or rc file, so only the canonical command runs.
pub const BASH_FLAGS: &[&str] = &["--noprofile", "--norc", "-c"];

/// Absolute, so the remote login shell's `PATH` plays no part in finding it.
const REMOTE_ENV: &str = "/usr/bin/env";

/// Quotes `s` as one word for a POSIX shell (sh, bash, dash, zsh).
///
/// Words made only of safe characters are left bare for readability; anything else is
/// wrapped in single quotes, inside which nothing is special except `'` itself, written as
/// `'\''` (close, escaped quote, reopen). Newlines, `$`, backslashes, backquotes and
/// non-ASCII text need nothing more. NUL cannot be in an argument at all; callers reject it.
pub fn quote(s: &str) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b);
    if !s.is_empty() && s.bytes().all(safe) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// How the remote side sets `HOME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RemoteHome {
    /// The ssh user's own, expanded by the remote login shell.
    LoginShell,
    /// `/root`: `pct exec` enters the container as root.
    Root,
}

/// How long the remote side waits before escalating; see [`Limits`](crate::Limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Graces {
    /// Between SIGTERM and SIGKILL.
    pub(crate) kill: Duration,
    /// For processes left in the group after the command exits.
    pub(crate) drain: Duration,
}

/// The bash program the remote side runs as `bash -c <WRAPPER> nomos <encoded canonical>`.
///
/// It restores the canonical command from its [`encode`]d form with bash's own `printf %b`
/// and runs it in its own process group (`set -m`) with stdin from `/dev/null`.
///
/// Without a TTY, sshd does not signal a command when the connection goes away, so a
/// timed-out or cancelled command would keep running remotely. A watcher reads the channel's
/// stdin, which the local side keeps open and never writes: EOF means the ssh client is gone,
/// and the watcher kills the group (TERM, then KILL after the grace).
///
/// When the command exits by itself the watcher is stopped, and processes left in its group
/// get the drain grace before they are terminated, as locally; otherwise one holding the
/// channel's stdout would keep the session, and the execution, open until the timeout.
///
/// The wrapper's own stderr goes to `/dev/null` so job-control notices never mix into the
/// command's stderr (fd 4 carries the real one). One line, no backslash: see [`encode`].
fn wrapper(graces: Graces) -> String {
    let ticks = |d: Duration| d.as_millis().div_ceil(50);
    let (kill, drain) = (ticks(graces.kill), ticks(graces.drain));
    [
        // z N: wait up to N × 50 ms while the group has members.
        "z() { i=0; while kill -0 -- -$c && [ $i -lt $1 ]; do sleep 0.05; i=$((i+1)); done; }",
        "printf -v n %b \"$1\"",
        "set -m",
        "exec 3<&0 4>&2 2>/dev/null",
        "bash --noprofile --norc -c \"$n\" </dev/null 2>&4 3<&- 4>&- & c=$!",
        &format!(
            "{{ while read -r _; do :; done; kill -TERM -- -$c && {{ z {kill}; kill -KILL -- -$c; }}; }} <&3 >/dev/null 4>&- & w=$!"
        ),
        "exec 3<&- 4>&-",
        "wait $c",
        "s=$?",
        "kill -- -$w",
        &format!("z {drain}"),
        &format!("kill -TERM -- -$c && {{ z {kill}; kill -KILL -- -$c; }}"),
        "exit $s",
    ]
    .join("; ")
}

/// Rewrites `s` without newlines, backslashes or other control characters (tab aside), as
/// `printf %b` escapes (`\n`, `\0134`, `\0ooo`). The remote login shell is the operator's:
/// csh and tcsh (FreeBSD, TrueNAS) cannot hold a newline inside single quotes, and fish
/// turns `\\` into `\` inside them; an escaped payload reaches bash unchanged under any of
/// them. Every backslash of the original becomes `\0134`, so no `\c` can stop `%b`.
pub(crate) fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\0134"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii_control() && c != '\t' => {
                out.push_str(&format!("\\0{:03o}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// `/usr/bin/env -i PATH=… … HOME=… bash --noprofile --norc -c <wrapper> nomos <canonical>`,
/// as one string for a POSIX login shell.
fn env_and_wrapper(canonical: &str, home: RemoteHome, graces: Graces) -> String {
    let mut words: Vec<String> = vec![REMOTE_ENV.to_owned(), "-i".to_owned()];
    words.extend(FIXED_ENV.iter().map(|(k, v)| quote(&format!("{k}={v}"))));
    words.push(match home {
        // Double quotes: expanded by the login shell, never word-split or re-parsed.
        RemoteHome::LoginShell => "HOME=\"$HOME\"".to_owned(),
        RemoteHome::Root => "HOME=/root".to_owned(),
    });
    words.push("bash".to_owned());
    words.extend(BASH_FLAGS.iter().map(|s| (*s).to_owned()));
    words.push(quote(&wrapper(graces)));
    words.push("nomos".to_owned());
    words.push(quote(&encode(canonical)));
    words.join(" ")
}

/// The command string sent to an ssh host.
pub(crate) fn ssh_remote_command(canonical: &str, graces: Graces) -> String {
    format!(
        "exec {}",
        env_and_wrapper(canonical, RemoteHome::LoginShell, graces)
    )
}

/// The command string sent to a Proxmox host to run in container `vmid`.
pub(crate) fn pct_remote_command(
    pct_path: &str,
    vmid: u32,
    canonical: &str,
    graces: Graces,
) -> String {
    format!(
        "exec {} exec {vmid} -- {}",
        quote(pct_path),
        env_and_wrapper(canonical, RemoteHome::Root, graces)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::Read;
    use std::process::{Command, Stdio};

    use super::*;

    const G: Graces = Graces {
        kill: Duration::from_secs(2),
        drain: Duration::from_millis(500),
    };

    /// Runs `printf %s <quoted>` through a real shell and returns what it printed.
    fn through(shell: &str, s: &str) -> Vec<u8> {
        let out = Command::new(shell)
            .arg("-c")
            .arg(format!("printf %s {}", quote(s)))
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        out.stdout
    }

    const TRICKY: &[&str] = &[
        "",
        "plain",
        "two words",
        "it's",
        "''",
        "'\\''",
        "\"double\"",
        "$HOME $(id) `id` ${x:-y}",
        "back\\slash\\\\ and \\n",
        "line\nbreak\n",
        "tab\there",
        "ünïcødé ✓ 日本",
        "*?[a]{b,c}~",
        "; rm -rf / #",
        "!event",
        "-n",
        "a=b",
        "\\c stops printf %b; \\0134 \\x41 \\u263a %s %b %%",
        "ctl \u{1}\u{7f}\r\u{1b}[0m",
        "trailing backslash \\",
    ];

    #[test]
    fn quote_round_trips_through_bash_and_dash() {
        for s in TRICKY {
            assert_eq!(through("bash", s), s.as_bytes(), "bash: {s:?}");
            assert_eq!(through("sh", s), s.as_bytes(), "sh: {s:?}");
        }
    }

    #[test]
    fn safe_words_stay_bare() {
        assert_eq!(quote("PATH=/usr/bin:/bin"), "PATH=/usr/bin:/bin");
        assert_eq!(quote("SYSTEMD_PAGER="), "SYSTEMD_PAGER=");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn remote_command_is_fixed_words_and_quoted_strings() {
        let cmd = ssh_remote_command("echo 'hi'", G);
        assert!(cmd.starts_with(
            "exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PAGER=cat SYSTEMD_PAGER= GIT_PAGER=cat LC_ALL=C.UTF-8 TERM=dumb HOME=\"$HOME\" bash --noprofile --norc -c '"
        ), "{cmd}");
        assert!(cmd.ends_with(" nomos 'echo '\\''hi'\\'''"), "{cmd}");
        assert!(
            cmd.contains("; z 10; kill -TERM -- -$c && { z 40; kill -KILL -- -$c; }; exit $s'"),
            "{cmd}"
        );
        let pct = pct_remote_command("/usr/sbin/pct", 101, "uptime", G);
        assert!(
            pct.starts_with("exec /usr/sbin/pct exec 101 -- /usr/bin/env -i "),
            "{pct}"
        );
        assert!(pct.contains(" HOME=/root bash "), "{pct}");
        assert!(pct.ends_with(" nomos uptime"), "{pct}");
    }

    #[test]
    fn encoding_leaves_no_newline_or_backslash_and_printf_b_restores_it() {
        for s in TRICKY {
            let e = encode(s);
            assert!(!e.contains('\n'), "{e:?}");
            assert!(
                e.chars().all(|c| !c.is_ascii_control() || c == '\t'),
                "{e:?}"
            );
            let out = Command::new("bash")
                .args(["-c", "printf -v n %b \"$1\"; printf %s \"$n\"", "x", &e])
                .output()
                .unwrap();
            assert_eq!(out.stdout, s.as_bytes(), "{s:?} via {e:?}");
        }
    }

    /// What the login shell parses has no newline, and besides the `'\''` of quoting its
    /// backslashes all start a `\0ooo` or `\n` escape inside single quotes, which sh, csh
    /// and fish all leave alone (fish would rewrite `\\` and `\'` there).
    #[test]
    fn remote_string_is_one_line_that_any_login_shell_reads_alike() {
        for s in TRICKY {
            let remote = pct_remote_command("/usr/sbin/pct", 100, s, G);
            assert!(!remote.contains('\n'), "{remote}");
            let rest = remote.replace("'\\''", "");
            for (i, _) in rest.match_indices('\\') {
                let next = rest[i + 1..].chars().next();
                assert!(matches!(next, Some('0' | 'n')), "{s:?}: {remote}");
            }
        }
    }

    /// The whole remote string, parsed by a real login shell with stdin held open, runs the
    /// canonical command exactly.
    #[test]
    fn remote_command_runs_canonical_verbatim_under_sh_and_bash() {
        for (login_shell, s) in TRICKY
            .iter()
            .filter(|s| !s.is_empty())
            .flat_map(|s| [("sh", s), ("bash", s)])
        {
            let canonical = format!("printf %s {}", quote(s));
            let remote = ssh_remote_command(&canonical, G);
            let mut child = Command::new(login_shell)
                .arg("-c")
                .arg(&remote)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Held open like the ssh channel's stdin: EOF would mean "kill it".
            let stdin = child.stdin.take();
            let (mut stdout, mut stderr) = (Vec::new(), String::new());
            child
                .stdout
                .take()
                .unwrap()
                .read_to_end(&mut stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            let status = child.wait().unwrap();
            drop(stdin);
            assert!(status.success(), "{s:?}: {status:?} {stderr}");
            assert_eq!(stdout, s.as_bytes(), "{s:?}");
            assert_eq!(stderr, "", "{s:?}");
        }
    }
}
