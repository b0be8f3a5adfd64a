//! Shell builtins with their own argument grammar: printf, read, kill, cd, set, export,
//! unset, command, exec, test.

use super::common::{environment_dump, print_secrets, span0, spec_finding};
use crate::classify::{ArgvOut, Binding, Engine, env_allowed};
use crate::decision::Class;
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::lower::is_name;
use crate::opts::Parsed;
use crate::spec::CmdSpec;

pub(super) fn printf(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in p.values("-v") {
        crate::classify::assign_name(e, o.value.literal(), words[o.word].span, "printf -v");
    }
    print_secrets(e, &p.operands, words);
}

pub(super) fn read(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for &i in &p.operands {
        crate::classify::assign_name(e, words[i].literal(), words[i].span, "read");
    }
    if p.operands.is_empty() {
        e.bind_unknown("REPLY");
    }
}

pub(super) fn kill(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
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

pub(super) fn cd(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
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

pub(super) fn set(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    // Not `a` (allexport): every later assignment would reach the environment.
    const SAFE_LETTERS: &str = "euxvfCEhmnpPTBb";
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
                    Some(n) if e.policy.listed(List::SetSafeNames, n) => k += 2,
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

pub(super) fn export(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
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

pub(super) fn unset(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
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

pub(super) fn command(
    e: &mut Engine<'_>,
    spec: &CmdSpec,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

pub(super) fn exec(
    e: &mut Engine<'_>,
    spec: &CmdSpec,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

pub(super) fn test(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
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

pub(super) fn echo(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    print_secrets(e, &p.operands, words);
}

pub(super) fn wait(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in p.values("-p") {
        crate::classify::assign_name(e, o.value.literal(), words[o.word].span, "wait -p");
    }
}
