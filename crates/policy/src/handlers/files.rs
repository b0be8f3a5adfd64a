//! Files, archives and disks: tar, unzip, dd, find, debugfs, parted.

use super::common::{span0, spec_finding};
use crate::classify::{ArgvOut, Engine};
use crate::decision::Class;
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::opts::{Parsed, Val};
use crate::paths;
use crate::spec::CmdSpec;

/// Archive members printed to standard output (`tar -xO`, `unzip -p`). A member name is
/// a path in the root filesystem the archive was made from (a vzdump holds a guest's `/`),
/// so it is judged like that path, a directory member by what is under it. No member
/// means every member; a wildcard or run-time name may meet any: both ask.
pub(super) fn members_to_stdout(e: &mut Engine<'_>, members: &[usize], words: &[Word]) {
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

pub(super) fn tar(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

pub(super) fn dd(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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

/// `parted [DEVICE [COMMAND…]]`: read-only only when every command prints. parted accepts
/// unique prefixes of its commands, so anything outside the list changes the disk.
pub(super) fn parted(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
                || e.policy.listed(List::PartedUnits, l)
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

/// debugfs requests that only print metadata (never file contents, never writes).
pub(super) fn debugfs(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
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
            Some(r) if e.policy.listed(List::DebugfsReads, r) => {}
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

// ---- full handlers -------------------------------------------------------------

pub(super) fn find(
    e: &mut Engine<'_>,
    spec: &CmdSpec,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
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

/// `unzip -p`/`-c`: members to standard output; the first operand is the zip.
pub(super) fn unzip(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    if (p.has("-p") || p.has("-c")) && !p.operands.is_empty() {
        members_to_stdout(e, &p.operands[1..], words);
    }
}
