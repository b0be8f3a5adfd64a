//! ssh and rsync: `-o` options, control sockets, known_hosts writes, the remote shell.

use super::common::{joined_literal, rewrite_script, span0};
use crate::classify::{ArgvOut, Engine};
use crate::decision::{Class, Span};
use crate::ir::Word;
use crate::lists::List;
use crate::opts::{Parsed, Val};

pub(super) const SSH_FORWARD_OPTIONS: &[&str] = &[
    "localforward",
    "remoteforward",
    "dynamicforward",
    "forwardagent",
];

pub(super) fn ssh_option(e: &mut Engine<'_>, v: &Val<'_>, span: Span) {
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
    if e.policy.listed(List::SshSafeOptions, &key) {
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
pub(super) fn ssh_tokens(f: &str) -> String {
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
pub(super) fn ssh_control(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

pub(super) fn ssh(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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
pub(super) fn ssh_known_hosts(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
pub(super) fn rsh_safe_option(val: &str, safe: &[String]) -> bool {
    let (key, value) = val.split_once('=').unwrap_or((val, ""));
    let key = key.to_ascii_lowercase();
    if key == "stricthostkeychecking" {
        return matches!(value.to_ascii_lowercase().as_str(), "yes" | "true" | "ask");
    }
    safe.contains(&key)
}

/// Checks the `-e`/`--rsh` value of rsync: plain ssh with safe options.
pub(super) fn rsh_value(e: &mut Engine<'_>, v: &Val<'_>, span: Span) {
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
                ok = rsh_safe_option(val, e.policy.list(List::SshSafeOptions));
                k += 2;
            }
            t if t.starts_with("-o") => {
                ok = rsh_safe_option(&t[2..], e.policy.list(List::SshSafeOptions));
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

pub(super) fn rsync(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

/// scp, sftp and other ssh clients: their `-o` options and control sockets.
pub(super) fn ssh_opts(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    ssh_control(e, p, words);
    for o in p.values("-o") {
        ssh_option(e, &o.value, words[o.word].span);
    }
}
