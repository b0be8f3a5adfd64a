//! Wrappers that run another command: sudo, env, xargs, watch, `sh -c`, `docker exec`,
//! tmux, pagers.

use super::common::{environment_dump, joined_literal, leading_assignments, rewrite_script, span0};
use crate::classify::{ArgvOut, Engine, env_allowed, quoted};
use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::lower::is_name;
use crate::opts::Parsed;

pub(super) fn sudo(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    let Some(r) = p.rest else {
        let listing = e
            .policy
            .list(List::SudoWithoutCommand)
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

pub(super) fn env(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

pub(super) fn xargs(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

pub(super) fn watch(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

pub(super) fn shell(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    let name = words[0].literal().unwrap_or("sh");
    let sh_mode = !name.ends_with("bash");
    // Shell options that change parsing or export every variable (`-o keyword`,
    // `-o allexport`, `-o posix`) make the script mean something else.
    for o in p.values("-o") {
        let safe = o
            .value
            .literal()
            .is_some_and(|v| e.policy.listed(List::ShellSafeOptions, v));
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

pub(super) fn exec_argv(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

/// tmux formats run shell commands: `#(cmd)` in `display -p`, `list-* -F`, options such
/// as `status-right`, and `if-shell`/`run-shell` arguments. A word that could hold one
/// (any `#(`, or text only known at run time) is a program the classifier did not see.
/// Network clients that send their standard input to the peer (nc, openssl s_client): with
/// data on stdin the command writes to a server (`echo FLUSHALL | nc redis 6379`).
pub(super) fn stdin_peer(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

pub(super) fn tmux(e: &mut Engine<'_>, words: &[Word]) {
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

pub(super) fn less(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

/// `pct exec`, `lxc-attach`, `qm guest exec` and other wrappers: the rest is a command,
/// which runs in a guest when the subcommand says so.
pub(super) fn guest(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    if let Some(r) = p.rest {
        let guest = p.leaf().id.contains("exec") || p.leaf().id.contains("attach");
        e.remote += u32::from(guest);
        e.argv(&words[r..], off + r, ao);
        e.remote -= u32::from(guest);
    }
}

/// A multi-call binary (`k3s kubectl …`): the subcommand is the program.
pub(super) fn sub_as_command(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    if let Some(&i) = p.sub_words.last() {
        e.argv(&words[i..], off + i, ao);
    }
}

pub(super) fn man(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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
