//! Database clients: psql, mysql/mariadb, sqlite3 and redis-cli are read-only exactly
//! when every statement or command they are given only reads (see `sql.rs`). A session
//! without a command on the command line is not modelled.

use super::common::{span0, spec_finding};
use crate::classify::{ArgvOut, Engine};
use crate::decision::{Class, Span};
use crate::ir::Word;
use crate::lists::List;
use crate::opts::Parsed;
use crate::spec::CmdSpec;
use crate::sql::{self, Dialect, Effect};

fn apply(e: &mut Engine<'_>, v: Result<Vec<Effect>, String>, span: Span, what: &str) {
    match v {
        Err(why) => e.fail("unknown.sql", span, why),
        Ok(fx) => {
            for f in fx {
                match f {
                    Effect::Class(c, why) => e.add("sql.statement", c, span, why),
                    Effect::Write(path) => {
                        e.write_literal(&path, &format!("{what} writes"), span);
                    }
                }
            }
        }
    }
}

/// Runs `check` on the literal value of each occurrence of option `id`; whether any was given.
fn each_value(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    id: &str,
    check: impl Fn(&str) -> Result<Vec<Effect>, String>,
    what: &str,
) -> bool {
    let mut any = false;
    for o in p.values(id) {
        any = true;
        let span = words[o.word].span;
        match o.value.literal() {
            Some(text) => apply(e, check(text), span, what),
            None => e.fail(
                "unknown.sql",
                span,
                "the statement is only known at run time",
            ),
        }
    }
    any
}

pub(crate) fn psql(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    // ~/.psqlrc may hold `\!` commands: the executor runs psql without it.
    ao.inserts.push((off + 1, "-X".to_owned()));
    let given = each_value(
        e,
        p,
        words,
        "--command",
        |t| {
            let t = t.trim_start();
            if t.starts_with('\\') {
                sql::psql_meta(t)
            } else {
                sql::sql(Dialect::Postgres, t, e.policy.list(List::SqlPureFunctions))
            }
        },
        "psql",
    );
    if !given && !p.has("--list") && !p.has("--version") && !p.has("--help") {
        e.fail(
            "unknown.sql",
            span0(words),
            "psql without `-c` reads commands from elsewhere",
        );
    }
}

pub(crate) fn mysql(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let given = each_value(
        e,
        p,
        words,
        "--execute",
        |t| sql::sql(Dialect::MySql, t, e.policy.list(List::SqlPureFunctions)),
        "mysql",
    );
    if !given && !p.has("--version") && !p.has("--help") {
        e.fail(
            "unknown.sql",
            span0(words),
            "mysql without `-e` reads commands from elsewhere",
        );
    }
}

/// `sqlite3 [OPTIONS] FILE [SQL | .COMMAND]…`; options may appear anywhere.
pub(crate) fn sqlite(
    e: &mut Engine<'_>,
    spec: &CmdSpec,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    const FLAGS: &[&str] = &[
        "readonly",
        "header",
        "headers",
        "noheader",
        "column",
        "csv",
        "json",
        "line",
        "list",
        "box",
        "table",
        "markdown",
        "html",
        "quote",
        "tabs",
        "ascii",
        "batch",
        "bail",
        "echo",
        "safe",
        "stats",
        "version",
        "help",
        "nofollow",
        "memtrace",
        "append",
        "deserialize",
        "interactive",
        "no-rowid-in-view",
        "unsafe-testing",
    ];
    const VALUED: &[&str] = &[
        "separator",
        "newline",
        "nullvalue",
        "mmap",
        "maxsize",
        "vfs",
        "escape",
        "pagecache",
        "heap",
    ];
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    // ~/.sqliterc may hold `.shell` commands: the executor runs sqlite3 without it.
    for ins in ["-init", "/dev/null"] {
        ao.inserts.push((off + 1, ins.to_owned()));
    }
    let mut file = None;
    let mut cmds: Vec<&Word> = Vec::new();
    let mut info_only = false;
    let mut k = 1;
    while let Some(w) = words.get(k) {
        k += 1;
        if let Some(l) = w.literal()
            && l.len() > 1
            && l.starts_with('-')
        {
            let name = l.trim_start_matches('-');
            if FLAGS.contains(&name) {
                info_only |= matches!(name, "version" | "help");
            } else if VALUED.contains(&name) {
                k += 1;
            } else if name == "init" && words.get(k).and_then(Word::literal) == Some("/dev/null") {
                // The executor's own `-init /dev/null` (no ~/.sqliterc).
                k += 1;
            } else if name == "cmd" {
                match words.get(k) {
                    Some(c) => cmds.push(c),
                    None => e.fail("unknown.sql", w.span, "`-cmd` without a command"),
                }
                k += 1;
            } else {
                e.fail(
                    "unknown.option",
                    w.span,
                    format!("sqlite3 option `{l}` is not modelled"),
                );
            }
            continue;
        }
        if e.may_be_option(w) && w.literal().is_none() {
            e.fail(
                "unknown.dynamic_option",
                w.span,
                "an expanded argument could be a sqlite3 option",
            );
            continue;
        }
        if file.is_none() {
            file = Some(w);
        } else {
            cmds.push(w);
        }
    }
    if let Some(f) = file {
        e.read_target(f, false);
    }
    if cmds.is_empty() && !info_only {
        e.fail(
            "unknown.sql",
            span0(words),
            "sqlite3 without a statement reads commands from elsewhere",
        );
    }
    for c in cmds {
        match c.literal() {
            Some(t) if t.trim_start().starts_with('.') => {
                apply(e, sql::sqlite_dot(t.trim()), c.span, "sqlite3")
            }
            Some(t) => apply(
                e,
                sql::sql(Dialect::Sqlite, t, e.policy.list(List::SqlPureFunctions)),
                c.span,
                "sqlite3",
            ),
            None => e.fail(
                "unknown.sql",
                c.span,
                "the statement is only known at run time",
            ),
        }
    }
}

/// `redis-cli [OPTIONS] [COMMAND ARG…]`.
pub(crate) fn redis(e: &mut Engine<'_>, spec: &CmdSpec, words: &[Word]) {
    const FLAGS: &[&str] = &[
        "--raw",
        "--no-raw",
        "--csv",
        "--json",
        "--quoted-json",
        "--no-auth-warning",
        "--tls",
        "--insecure",
        "--verbose",
        "-c",
        "-e",
        "-2",
        "-3",
        "--askpass",
        "--show-pushes",
        "--quoted-input",
        "-x",
        "-X",
        "--help",
        "--version",
        "-v",
    ];
    const MODES: &[&str] = &[
        "--stat",
        "--latency",
        "--latency-history",
        "--latency-dist",
        "--bigkeys",
        "--memkeys",
        "--hotkeys",
        "--scan",
        "--keystats",
    ];
    const VALUED: &[&str] = &[
        "-h",
        "-p",
        "-s",
        "-a",
        "-u",
        "-r",
        "-i",
        "-n",
        "-d",
        "-D",
        "-t",
        "--user",
        "--pass",
        "--sni",
        "--cacert",
        "--cacertdir",
        "--cert",
        "--key",
        "--tls-ciphers",
        "--tls-ciphersuites",
        "--pattern",
        "--quoted-pattern",
        "--count",
        "--memkeys-samples",
        "--intrinsic-latency",
        "--pipe-timeout",
        "--cluster-yes",
    ];
    spec_finding(e, spec, Class::ReadOnly, span0(words));
    let mut k = 1;
    let mut mode = false;
    while let Some(w) = words.get(k) {
        let Some(l) = w.literal() else {
            if e.may_be_option(w) {
                e.fail(
                    "unknown.dynamic_option",
                    w.span,
                    "an expanded argument could be a redis-cli option",
                );
                return;
            }
            break;
        };
        if !l.starts_with('-') || l == "-" {
            break;
        }
        k += 1;
        if FLAGS.contains(&l) {
            mode |= matches!(l, "--help" | "--version" | "-v");
        } else if MODES.contains(&l) {
            mode = true;
        } else if VALUED.contains(&l) {
            k += 1;
        } else {
            e.fail(
                "unknown.option",
                w.span,
                format!("redis-cli option `{l}` is not modelled"),
            );
            return;
        }
    }
    let rest = &words[k.min(words.len())..];
    if rest.is_empty() {
        if !mode {
            e.fail(
                "unknown.sql",
                span0(words),
                "redis-cli without a command reads commands from elsewhere",
            );
        }
        return;
    }
    let span = Span::new(rest[0].span.start, rest[rest.len() - 1].span.end);
    let mut args = Vec::with_capacity(rest.len());
    for w in rest {
        match w.literal() {
            Some(l) => args.push(l),
            None if args.is_empty() => {
                e.fail(
                    "unknown.sql",
                    w.span,
                    "the redis command is only known at run time",
                );
                return;
            }
            // Key names and values may be expanded; they cannot change the command.
            None => args.push(""),
        }
    }
    if args.len() > 1 && args[0].eq_ignore_ascii_case("config") && args.contains(&"") {
        e.fail(
            "unknown.sql",
            span,
            "a `CONFIG` argument is only known at run time",
        );
        return;
    }
    apply(
        e,
        sql::redis(&args, e.policy.list(List::RedisReadCommands)),
        span,
        "redis-cli",
    );
}
