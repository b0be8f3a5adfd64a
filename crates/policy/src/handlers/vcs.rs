//! git (config keys, content reads, neutralisation) and etckeeper.

use super::common::span0;
use crate::classify::{ArgvOut, Engine};
use crate::decision::Class;
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::opts::Parsed;

pub(super) fn git(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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
        let safe = e.policy.list(List::GitSafeConfigPrefixes).iter().any(|p| key.starts_with(p.as_str()))
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
pub(super) fn git_repo_dir(e: &Engine<'_>, p: &Parsed<'_>) -> Option<Option<String>> {
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
pub(super) fn git_content_reads(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

pub(super) fn git_list(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let listing = e
        .policy
        .list(List::GitListingOptions)
        .iter()
        .any(|id| p.has(id));
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
pub(super) const GIT_EXEC_KEYS: &[&str] = &[
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

pub(super) fn git_config(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let reading = e
        .policy
        .list(List::GitConfigReadingOptions)
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

/// `etckeeper vcs log|diff` show /etc's history, where etckeeper commits `/etc/shadow`
/// and the host keys: patches ask unless paths after `--` limit them, and then each path
/// (relative to /etc, a directory recursively) is judged as a read.
pub(super) fn etckeeper_vcs(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
