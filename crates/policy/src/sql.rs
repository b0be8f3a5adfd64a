//! What a database client's statements do: SQL (PostgreSQL, MySQL/MariaDB, SQLite), psql
//! meta-commands, sqlite3 dot-commands and Redis commands. Pure text analysis; anything
//! not understood is an error, which the caller classifies as unknown.

use crate::decision::Class;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Postgres,
    MySql,
    Sqlite,
}

/// The effect of one statement or client command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Changes at most what the class says.
    Class(Class, String),
    /// Writes the named client-side file.
    Write(String),
}

type Verdict = Result<Vec<Effect>, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// Unquoted word, lower-cased.
    Word(String),
    /// Quoted identifier (`"x"`, `` `x` ``).
    Ident,
    Str,
    Num,
    Punct(char),
}

/// Splits SQL text into statements of tokens. Comments vanish; `\G`/`\g` end a MySQL
/// statement; any other backslash outside quotes is a client command and an error.
fn tokenize(d: Dialect, text: &str) -> Result<Vec<Vec<Tok>>, String> {
    let b: Vec<char> = text.chars().collect();
    let n = b.len();
    let mut stmts = vec![Vec::new()];
    let mut i = 0;
    let push = |stmts: &mut Vec<Vec<Tok>>, t: Tok| {
        if let Some(s) = stmts.last_mut() {
            s.push(t);
        }
    };
    while i < n {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && b.get(i + 1) == Some(&'-') || c == '#' && d == Dialect::MySql {
            while i < n && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            if d == Dialect::MySql && b.get(i + 2) == Some(&'!') {
                return Err("MySQL executable comments (`/*! … */`) are not modelled".into());
            }
            let end = (i + 2..n.saturating_sub(1))
                .find(|&k| b[k] == '*' && b[k + 1] == '/')
                .ok_or("unterminated comment")?;
            i = end + 2;
        } else if c == '\'' || (c == '"' && d == Dialect::MySql) {
            i = skip_quoted(&b, i, c, d == Dialect::MySql)?;
            push(&mut stmts, Tok::Str);
        } else if c == '"' || c == '`' || (c == '[' && d == Dialect::Sqlite) {
            let close = if c == '[' { ']' } else { c };
            i = skip_quoted(&b, i, close, false)?;
            push(&mut stmts, Tok::Ident);
        } else if c == '$' && d == Dialect::Postgres {
            // Dollar quoting: `$tag$ … $tag$`; a bare `$1` is a parameter.
            let tag_end = (i + 1..n).find(|&k| !(b[k].is_alphanumeric() || b[k] == '_'));
            match tag_end {
                Some(k) if b[k] == '$' && !b[i + 1..k].iter().any(char::is_ascii_digit) => {
                    let tag: String = b[i..=k].iter().collect();
                    let body: String = b[k + 1..].iter().collect();
                    let close = body.find(&tag).ok_or("unterminated dollar quote")?;
                    i = k + 1 + body[..close].chars().count() + tag.chars().count();
                    push(&mut stmts, Tok::Str);
                }
                _ => return Err("`$` outside a string is not modelled".into()),
            }
        } else if c == ';' {
            stmts.push(Vec::new());
            i += 1;
        } else if c == '\\' {
            if d == Dialect::MySql && matches!(b.get(i + 1), Some('G' | 'g')) {
                stmts.push(Vec::new());
                i += 2;
            } else {
                return Err("a client backslash command inside SQL is not modelled".into());
            }
        } else if c.is_ascii_digit() {
            while i < n && (b[i].is_ascii_alphanumeric() || b[i] == '.') {
                i += 1;
            }
            push(&mut stmts, Tok::Num);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < n && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == '$') {
                i += 1;
            }
            let w: String = b[start..i].iter().collect::<String>().to_lowercase();
            push(&mut stmts, Tok::Word(w));
        } else if c.is_control() {
            return Err("control characters in SQL".into());
        } else {
            push(&mut stmts, Tok::Punct(c));
            i += 1;
        }
    }
    stmts.retain(|s| !s.is_empty());
    Ok(stmts)
}

fn skip_quoted(b: &[char], start: usize, close: char, backslash: bool) -> Result<usize, String> {
    let mut i = start + 1;
    while i < b.len() {
        if backslash && b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == close {
            // A doubled quote is an escaped quote.
            if b.get(i + 1) == Some(&close) && close != ']' {
                i += 2;
                continue;
            }
            return Ok(i + 1);
        }
        i += 1;
    }
    Err("unterminated quote".into())
}

/// Words that may stand before `(` without being a function call.
const SYNTAX: &[&str] = &[
    "in",
    "exists",
    "values",
    "over",
    "filter",
    "cast",
    "any",
    "all",
    "some",
    "extract",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "not",
    "and",
    "or",
    "as",
    "from",
    "join",
    "on",
    "using",
    "where",
    "select",
    "lateral",
    "array",
    "row",
    "interval",
    "within",
    "group",
    "by",
    "partition",
    "window",
    "distinct",
    "when",
    "then",
    "else",
    "is",
    "like",
    "ilike",
    "between",
    "limit",
    "offset",
    "union",
    "except",
    "intersect",
    "case",
    "having",
    "into",
    "table",
    "with",
    "analyze",
    "verbose",
    "explain",
    "format",
    "position",
    "substring",
    "trim",
    "overlay",
    "convert",
    "char",
    "varchar",
    "numeric",
    "decimal",
    "int",
    "integer",
    "float",
    "timestamp",
    "date",
    "time",
    "if",
    "ifnull",
    "iif",
    "count",
    "unnest",
    "rows",
    "range",
    "order",
    "asc",
    "desc",
    "nulls",
    "returning",
    "set",
    "default",
    "key",
    "primary",
    "references",
    "check",
    "unique",
    "index",
    "info",
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "foreign_key_list",
    "integrity_check",
    "quick_check",
];

/// Functions with effects, and what they do.
const EFFECTFUL: &[(&str, Class, &str)] = &[
    (
        "pg_terminate_backend",
        Class::Destructive,
        "terminates database sessions",
    ),
    (
        "pg_cancel_backend",
        Class::Destructive,
        "cancels running queries",
    ),
    (
        "pg_drop_replication_slot",
        Class::Destructive,
        "drops a replication slot",
    ),
    ("pg_promote", Class::Destructive, "promotes a standby"),
    (
        "pg_reload_conf",
        Class::ConfigMutation,
        "reloads the server configuration",
    ),
    (
        "pg_rotate_logfile",
        Class::ConfigMutation,
        "rotates the server log",
    ),
    (
        "pg_switch_wal",
        Class::ConfigMutation,
        "switches the WAL file",
    ),
    (
        "pg_create_restore_point",
        Class::ConfigMutation,
        "creates a restore point",
    ),
    ("pg_stat_reset", Class::ConfigMutation, "resets statistics"),
    (
        "pg_stat_statements_reset",
        Class::ConfigMutation,
        "resets statistics",
    ),
    (
        "pg_create_physical_replication_slot",
        Class::ConfigMutation,
        "creates a slot",
    ),
    (
        "pg_create_logical_replication_slot",
        Class::ConfigMutation,
        "creates a slot",
    ),
    (
        "pg_wal_replay_pause",
        Class::ConfigMutation,
        "pauses WAL replay",
    ),
    (
        "pg_wal_replay_resume",
        Class::ConfigMutation,
        "resumes WAL replay",
    ),
    ("nextval", Class::ConfigMutation, "advances a sequence"),
    ("setval", Class::ConfigMutation, "sets a sequence"),
    ("set_config", Class::ConfigMutation, "changes a setting"),
];

/// Catalogues that hold password hashes.
const SECRET_TABLES: &[&str] = &[
    "pg_shadow",
    "pg_authid",
    "pg_user_mapping",
    "pg_user_mappings",
    // Connection strings with passwords: logical replication subscriptions, MySQL's
    // replication source, MariaDB's accounts (hashes in JSON).
    "pg_subscription",
    "slave_master_info",
    "global_priv",
];

/// Application tables of accounts and credentials (Grafana `user`, `api_key`,
/// `data_source`; Vaultwarden `users`, `twofactor`; Django `auth_user`; sessions): `SELECT *`
/// from one prints password hashes, keys or tokens.
const ACCOUNT_TABLES: &[&str] = &[
    "user",
    "users",
    "auth_user",
    "account",
    "accounts",
    "credential",
    "credentials",
    "login",
    "logins",
    "member",
    "members",
    "api_key",
    "api_keys",
    "apikey",
    "apikeys",
    "token",
    "tokens",
    "access_tokens",
    "oauth_tokens",
    "oauth_access_tokens",
    "personal_access_tokens",
    "session",
    "sessions",
    "secret",
    "secrets",
    "data_source",
    "twofactor",
    "devices",
    "identities",
];

/// `SELECT *` (a star not inside `count(*)`) from an account table.
fn star_from_account_table(s: &[Tok]) -> Option<String> {
    let star = (1..s.len()).any(|k| s[k] == Tok::Punct('*') && s[k - 1] != Tok::Punct('('));
    if !star {
        return None;
    }
    (1..s.len()).find_map(|k| {
        let Tok::Word(w) = &s[k] else { return None };
        let after_from = matches!(word(s.get(k - 1)), "from" | "join")
            || s[k - 1] == Tok::Punct(',')
            || (k >= 3
                && s[k - 1] == Tok::Punct('.')
                && matches!(word(s.get(k - 3)), "from" | "join"));
        (after_from && ACCOUNT_TABLES.contains(&w.as_str())).then(|| w.clone())
    })
}

/// SQL text (one or more statements).
/// `pure` lists the functions that only compute (the `sql.pure_functions` spec list).
pub(crate) fn sql(d: Dialect, text: &str, pure: &[String]) -> Verdict {
    let stmts = tokenize(d, text)?;
    let mut out = Vec::new();
    for s in &stmts {
        out.push(statement(d, s, pure)?);
    }
    Ok(out)
}

fn word(t: Option<&Tok>) -> &str {
    match t {
        Some(Tok::Word(w)) => w,
        _ => "",
    }
}

fn has_word(s: &[Tok], w: &str) -> bool {
    s.iter().any(|t| matches!(t, Tok::Word(x) if x == w))
}

fn class(c: Class, why: impl Into<String>) -> Result<Effect, String> {
    Ok(Effect::Class(c, why.into()))
}

fn statement(d: Dialect, s: &[Tok], pure: &[String]) -> Result<Effect, String> {
    let first = word(s.first());
    let second = word(s.get(1));
    match first {
        "select" | "show" | "table" | "values" | "describe" | "desc" => reads(d, s, pure),
        "with" => {
            // A data-modifying CTE makes the whole statement modifying.
            for w in ["insert", "update", "delete", "merge"] {
                if has_word(s, w) {
                    return class(Class::Destructive, format!("a `WITH` query runs `{w}`"));
                }
            }
            reads(d, s, pure)
        }
        "explain" => {
            let mut k = 1;
            let mut analyze = false;
            while k < s.len() {
                match &s[k] {
                    Tok::Word(w) if w == "analyze" || w == "analyse" => analyze = true,
                    Tok::Word(w)
                        if matches!(
                            w.as_str(),
                            "verbose"
                                | "extended"
                                | "query"
                                | "plan"
                                | "format"
                                | "json"
                                | "text"
                                | "yaml"
                                | "xml"
                                | "costs"
                                | "buffers"
                                | "timing"
                                | "summary"
                                | "settings"
                                | "wal"
                                | "true"
                                | "false"
                                | "on"
                                | "off"
                        ) => {}
                    Tok::Punct('(' | ')' | ',' | '=') => {}
                    _ => break,
                }
                k += 1;
            }
            if analyze {
                statement(d, &s[k..], pure)
            } else {
                class(Class::ReadOnly, "shows a query plan")
            }
        }
        "pragma" => {
            if s.contains(&Tok::Punct('=')) {
                class(Class::ConfigMutation, "sets a database pragma")
            } else {
                reads(d, s, pure)
            }
        }
        "begin" | "commit" | "end" | "rollback" | "start" | "savepoint" | "release" | "use"
        | "detach" => class(Class::ReadOnly, "transaction or session control"),
        "set" => match second {
            "password" => class(Class::Destructive, "changes a password"),
            "global" | "persist" | "persist_only" => {
                class(Class::ConfigMutation, "changes a server setting")
            }
            _ => class(Class::ReadOnly, "changes a setting of this session only"),
        },
        "reset" => match second {
            "master" | "slave" | "replica" | "binary" => {
                class(Class::Destructive, "resets replication state")
            }
            _ => class(Class::ReadOnly, "resets a setting of this session only"),
        },
        "insert" | "create" | "grant" | "vacuum" | "analyze" | "analyse" | "reindex"
        | "cluster" | "refresh" | "comment" | "checkpoint" | "flush" | "optimize" | "repair"
        | "lock" | "unlock" | "notify" | "listen" | "unlisten" | "discard" | "attach" => {
            if first == "vacuum" && has_word(s, "into") {
                return Err("`VACUUM INTO` writes a file on the server".into());
            }
            if first == "attach" && d != Dialect::Sqlite {
                return Err("`ATTACH` is not modelled".into());
            }
            class(
                Class::ConfigMutation,
                format!("`{}` changes the database", first.to_uppercase()),
            )
        }
        "alter" => {
            if has_word(s, "drop") || has_word(s, "rename") {
                class(Class::Destructive, "`ALTER … DROP` removes data or objects")
            } else {
                class(Class::ConfigMutation, "`ALTER` changes the database")
            }
        }
        "delete" | "update" | "drop" | "truncate" | "replace" | "merge" | "revoke" | "kill"
        | "shutdown" | "purge" | "rename" | "reassign" | "upsert" => class(
            Class::Destructive,
            format!("`{}` changes or removes data", first.to_uppercase()),
        ),
        "copy" => {
            // `COPY … TO STDOUT` prints; files and programs run on the server.
            if has_word(s, "program") {
                Err("`COPY … PROGRAM` runs a program on the server".into())
            } else if has_word(s, "to") && has_word(s, "stdout") {
                reads(d, s, pure)
            } else if has_word(s, "from") && has_word(s, "stdin") {
                class(Class::ConfigMutation, "`COPY … FROM STDIN` loads rows")
            } else {
                Err("`COPY` with a server-side file is not modelled".into())
            }
        }
        "" => Err("a statement that does not start with a keyword".into()),
        other => Err(format!(
            "`{}` statements are not modelled",
            other.to_uppercase()
        )),
    }
}

/// A statement that reads: every function it calls must be known, and `INTO` writes.
fn reads(d: Dialect, s: &[Tok], pure: &[String]) -> Result<Effect, String> {
    let mut worst = (Class::ReadOnly, String::from("reads the database"));
    // `SHOW CREATE USER` prints the password hash, `SHOW CREATE SERVER` a FEDERATED
    // password.
    if word(s.first()) == "show"
        && word(s.get(1)) == "create"
        && matches!(word(s.get(2)), "user" | "server")
    {
        worst = (
            Class::Destructive,
            "`SHOW CREATE USER|SERVER` prints a password or its hash".into(),
        );
    }
    if let Some(t) = star_from_account_table(s) {
        worst = (
            Class::Destructive,
            format!("prints every column of `{t}` (password hashes, keys, tokens)"),
        );
    }
    for (k, t) in s.iter().enumerate() {
        match t {
            // `SELECT login, password, salt FROM user`, `rolpassword FROM pg_authid`.
            Tok::Word(w)
                if crate::paths::names_credential(w)
                    || w == "subconninfo"
                    || w == "primary_conninfo"
                    || w == "pass"
                    || w == "salt"
                    || w.ends_with("_pass")
                    || w.ends_with("hash") =>
            {
                worst = worst.max((
                    Class::Destructive,
                    format!("reads `{w}`, which by its name holds a credential"),
                ));
            }
            Tok::Word(w) if w == "into" => {
                let next = word(s.get(k + 1));
                if matches!(next, "outfile" | "dumpfile") {
                    return Err("`SELECT … INTO OUTFILE` writes a file on the server".into());
                }
                worst = worst.max((
                    Class::ConfigMutation,
                    "`SELECT … INTO` creates a table".into(),
                ));
            }
            Tok::Word(w) if SECRET_TABLES.contains(&w.as_str()) => {
                worst = worst.max((
                    Class::Destructive,
                    format!("reads password hashes from `{w}`"),
                ));
            }
            // `mysql.user` holds hashes in `authentication_string` (and `password` before
            // 5.7); `SELECT user, host FROM mysql.user` shows none.
            Tok::Word(w)
                if d == Dialect::MySql
                    && w == "user"
                    && k >= 2
                    && s[k - 1] == Tok::Punct('.')
                    && word(s.get(k - 2)) == "mysql"
                    && (s.contains(&Tok::Punct('*'))
                        || has_word(s, "authentication_string")
                        || has_word(s, "password")) =>
            {
                worst = worst.max((
                    Class::Destructive,
                    "reads password hashes from `mysql.user`".into(),
                ));
            }
            Tok::Word(w) if s.get(k + 1) == Some(&Tok::Punct('(')) => {
                // A qualified name (`pg_catalog.f(`) is judged by its last part.
                if SYNTAX.contains(&w.as_str()) || pure.contains(w) {
                    continue;
                }
                if w.starts_with("pg_stat_") && !w.contains("reset") {
                    continue;
                }
                match EFFECTFUL.iter().find(|(n, ..)| n == w) {
                    Some((_, c, why)) => worst = worst.max((*c, format!("`{w}()` {why}"))),
                    None => {
                        return Err(format!(
                            "function `{w}()` is not known to be free of effects"
                        ));
                    }
                }
            }
            Tok::Ident if s.get(k + 1) == Some(&Tok::Punct('(')) => {
                return Err("a call through a quoted name is not modelled".into());
            }
            _ => {}
        }
    }
    class(worst.0, worst.1)
}

/// A psql `-c` string that starts with a backslash: meta-commands only.
pub(crate) fn psql_meta(text: &str) -> Verdict {
    let mut out = Vec::new();
    let mut words = text.split_whitespace().peekable();
    while let Some(cmd) = words.next() {
        let Some(name) = cmd.strip_prefix('\\') else {
            return Err(format!("`{cmd}` after a meta-command is not modelled"));
        };
        let mut args = Vec::new();
        while let Some(a) = words.peek() {
            if a.starts_with('\\') {
                break;
            }
            args.push(*a);
            words.next();
        }
        let base = name.trim_end_matches(['+', 'S']);
        let ok = matches!(
            base,
            "l" | "list"
                | "conninfo"
                | "encoding"
                | "timing"
                | "q"
                | "?"
                | "h"
                | "help"
                | "copyright"
                | "z"
                | "sf"
                | "sv"
                | "dconfig"
                | "echo"
                | "qecho"
                | "warn"
                | "pset"
                | "a"
                | "t"
                | "C"
                | "f"
                | "H"
                | "T"
        ) || name == "x"
            // `\deu+` lists user mappings with their options, passwords included.
            || (base.starts_with('d')
                && base != "deu"
                && base.chars().all(|c| c.is_ascii_alphabetic()));
        if !ok || (base == "encoding" && !args.is_empty()) {
            return Err(match name {
                "!" => "`\\!` runs a shell command".to_owned(),
                _ => format!("psql meta-command `\\{name}` is not modelled"),
            });
        }
        out.push(Effect::Class(
            Class::ReadOnly,
            "describes the database".into(),
        ));
    }
    Ok(out)
}

/// One sqlite3 dot-command.
pub(crate) fn sqlite_dot(text: &str) -> Verdict {
    let mut parts = text.split_whitespace();
    let cmd = parts.next().unwrap_or("").trim_start_matches('.');
    let arg = parts.next();
    let read = |why: &str| Ok(vec![Effect::Class(Class::ReadOnly, why.to_owned())]);
    match cmd {
        "tables" | "table" | "schema" | "indexes" | "indices" | "databases" | "dbinfo"
        | "fullschema" | "show" | "stats" | "timer" | "width" | "nullvalue" | "separator"
        | "print" | "help" | "lint" | "eqp" | "bail" | "echo" | "changes" | "limit" | "quit"
        | "exit" | "version" | "headers" | "header" | "mode" | "dump" | "sha3sum" | "crnl"
        | "binary" | "dbconfig" | "expert" | "scanstats" | "parameter" | "explain" => {
            read("describes the database")
        }
        "output" | "once" if arg.is_none() => read("prints to standard output"),
        "backup" | "save" | "output" | "once" | "clone" => {
            // `.backup ?DB? FILE`: the file is the last argument.
            match text.split_whitespace().skip(1).last() {
                Some(f) if !f.starts_with('-') => Ok(vec![Effect::Write(f.to_owned())]),
                _ => Err(format!("`.{cmd}` with options is not modelled")),
            }
        }
        "import" => Ok(vec![Effect::Class(
            Class::ConfigMutation,
            "imports rows".into(),
        )]),
        "restore" => Ok(vec![Effect::Class(
            Class::Destructive,
            "replaces the database".into(),
        )]),
        "shell" | "system" => Err(format!("`.{cmd}` runs a shell command")),
        other => Err(format!("sqlite3 command `.{other}` is not modelled")),
    }
}

// Redis commands that only read: the `redis.read_commands` list in specs/text.toml.

const REDIS_WRITE: &[&str] = &[
    "set",
    "setex",
    "psetex",
    "setnx",
    "mset",
    "msetnx",
    "getset",
    "getex",
    "append",
    "incr",
    "incrby",
    "incrbyfloat",
    "decr",
    "decrby",
    "hset",
    "hsetnx",
    "hmset",
    "hincrby",
    "hincrbyfloat",
    "lpush",
    "rpush",
    "lpushx",
    "rpushx",
    "linsert",
    "lset",
    "sadd",
    "smove",
    "zadd",
    "zincrby",
    "expire",
    "pexpire",
    "expireat",
    "pexpireat",
    "persist",
    "rename",
    "renamenx",
    "copy",
    "publish",
    "spublish",
    "pfadd",
    "pfmerge",
    "geoadd",
    "setrange",
    "setbit",
    "bitop",
    "bitfield",
    "xadd",
    "save",
    "bgsave",
    "bgrewriteaof",
    "wait",
    "waitaof",
    "readwrite",
    "multi",
    "exec",
    "discard",
    "watch",
    "unwatch",
];

const REDIS_DESTROY: &[&str] = &[
    "del",
    "unlink",
    "flushdb",
    "flushall",
    "shutdown",
    "getdel",
    "lpop",
    "rpop",
    "lmpop",
    "lrem",
    "ltrim",
    "spop",
    "srem",
    "zrem",
    "zremrangebyscore",
    "zremrangebyrank",
    "zremrangebylex",
    "zpopmin",
    "zpopmax",
    "zmpop",
    "hdel",
    "xdel",
    "xtrim",
    "blpop",
    "brpop",
    "replicaof",
    "slaveof",
    "swapdb",
    "restore",
    "migrate",
    "move",
    "failover",
    "rpoplpush",
    "lmove",
    "blmove",
    "brpoplpush",
    "sinterstore",
    "sunionstore",
    "sdiffstore",
    "zunionstore",
    "zinterstore",
    "zdiffstore",
    "zrangestore",
];

/// Server settings whose values are credentials.
const REDIS_SECRET_CONFIG: &[&str] = &[
    "requirepass",
    "masterauth",
    "masteruser",
    "tls-key-file-pass",
    "tls-client-key-file-pass",
];

/// One redis-cli command line (`words[0]` is the command).
pub(crate) fn redis(words: &[&str], read: &[String]) -> Verdict {
    let Some(cmd) = words.first().map(|c| c.to_lowercase()) else {
        return Err("an interactive redis-cli session is not modelled".into());
    };
    let sub = words.get(1).map(|s| s.to_lowercase()).unwrap_or_default();
    let c = |class: Class, why: String| Ok(vec![Effect::Class(class, why)]);
    match cmd.as_str() {
        "config" => match sub.as_str() {
            "get" => {
                for pat in &words[2..] {
                    let p = pat.to_lowercase();
                    if let Some(s) = REDIS_SECRET_CONFIG
                        .iter()
                        .find(|s| crate::paths::glob_match(&p, s))
                    {
                        return c(
                            Class::Destructive,
                            format!("prints the server credential `{s}`"),
                        );
                    }
                }
                c(Class::ReadOnly, "reads server settings".into())
            }
            "set" | "rewrite" | "resetstat" => c(
                Class::ConfigMutation,
                format!("`CONFIG {}` changes the server", sub.to_uppercase()),
            ),
            "help" => c(Class::ReadOnly, "help".into()),
            _ => Err(format!("`CONFIG {sub}` is not modelled")),
        },
        "client" => match sub.as_str() {
            "list" | "info" | "getname" | "id" | "trackinginfo" | "getredir" | "help" => {
                c(Class::ReadOnly, "lists client connections".into())
            }
            "setname" | "setinfo" | "pause" | "unpause" | "no-evict" | "no-touch" | "reply" => {
                c(Class::ConfigMutation, "changes client state".into())
            }
            "kill" => c(Class::Destructive, "disconnects clients".into()),
            _ => Err(format!("`CLIENT {sub}` is not modelled")),
        },
        "slowlog" | "latency" => match sub.as_str() {
            "reset" => c(Class::ConfigMutation, "clears a server log".into()),
            _ => c(Class::ReadOnly, "reads server diagnostics".into()),
        },
        "memory" => match sub.as_str() {
            "purge" => c(Class::ConfigMutation, "releases memory".into()),
            _ => c(Class::ReadOnly, "reads memory statistics".into()),
        },
        "command" | "pubsub" => c(Class::ReadOnly, "describes the server".into()),
        "cluster" => match sub.as_str() {
            "info" | "nodes" | "slots" | "shards" | "myid" | "myshardid" | "keyslot"
            | "countkeysinslot" | "getkeysinslot" | "links" | "help" => {
                c(Class::ReadOnly, "describes the cluster".into())
            }
            _ => c(
                Class::Destructive,
                format!("`CLUSTER {sub}` changes the cluster"),
            ),
        },
        "module" if sub == "list" => c(Class::ReadOnly, "lists modules".into()),
        "sentinel" => match sub.as_str() {
            "masters"
            | "master"
            | "replicas"
            | "slaves"
            | "sentinels"
            | "get-master-addr-by-name"
            | "ckquorum"
            | "info-cache"
            | "myid"
            | "is-master-down-by-addr"
            | "pending-scripts"
            | "config"
                if sub != "config"
                    || words.get(2).is_some_and(|w| w.eq_ignore_ascii_case("get")) =>
            {
                c(Class::ReadOnly, "reads Sentinel state".into())
            }
            "failover" | "reset" | "flushconfig" => c(
                Class::Destructive,
                format!("`SENTINEL {}` changes the topology", sub.to_uppercase()),
            ),
            "monitor" | "remove" | "set" | "config" => c(
                Class::ConfigMutation,
                format!("`SENTINEL {}` changes Sentinel", sub.to_uppercase()),
            ),
            _ => Err(format!("`SENTINEL {sub}` is not modelled")),
        },
        "acl" if matches!(sub.as_str(), "whoami" | "cat" | "help" | "users") => {
            c(Class::ReadOnly, "describes access control".into())
        }
        "sort" => {
            if words.iter().any(|w| w.eq_ignore_ascii_case("store")) {
                c(Class::ConfigMutation, "`SORT … STORE` writes a key".into())
            } else {
                c(Class::ReadOnly, "sorts a key".into())
            }
        }
        "monitor" => c(
            Class::Destructive,
            "shows every command, credentials included".into(),
        ),
        r if read.iter().any(|x| x == r) => c(Class::ReadOnly, "reads keys or server state".into()),
        w if REDIS_WRITE.contains(&w) => c(
            Class::ConfigMutation,
            format!("`{}` writes data", w.to_uppercase()),
        ),
        d if REDIS_DESTROY.contains(&d) => c(
            Class::Destructive,
            format!("`{}` removes data", d.to_uppercase()),
        ),
        other => Err(format!(
            "redis command `{}` is not modelled",
            other.to_uppercase()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// The pure SQL functions of the built-in specs.
    fn pure() -> &'static [String] {
        let p = crate::Policy::default_policy().unwrap_or_else(|e| panic!("default specs: {e}"));
        p.list(crate::lists::List::SqlPureFunctions)
    }

    /// `redis` with the read-only commands of the built-in specs.
    fn redis_default(words: &[&str]) -> Verdict {
        let p = crate::Policy::default_policy().unwrap_or_else(|e| panic!("default specs: {e}"));
        redis(words, p.list(crate::lists::List::RedisReadCommands))
    }

    fn top(v: Verdict) -> Option<Class> {
        v.ok().map(|fx| {
            fx.iter()
                .map(|f| match f {
                    Effect::Class(c, _) => *c,
                    Effect::Write(_) => Class::ConfigMutation,
                })
                .max()
                .unwrap_or(Class::ReadOnly)
        })
    }

    #[test]
    fn sql_statements() {
        use Class::*;
        let pg = |s| top(sql(Dialect::Postgres, s, pure()));
        let my = |s| top(sql(Dialect::MySql, s, pure()));
        let lite = |s| top(sql(Dialect::Sqlite, s, pure()));
        assert_eq!(pg("SELECT datname FROM pg_database;"), Some(ReadOnly));
        assert_eq!(
            pg("select pg_size_pretty(pg_database_size(current_database()))"),
            Some(ReadOnly)
        );
        assert_eq!(
            pg("SELECT pid, state FROM pg_stat_activity"),
            Some(ReadOnly)
        );
        assert_eq!(pg("select pg_terminate_backend(123)"), Some(Destructive));
        assert_eq!(pg("SELECT pg_reload_conf();"), Some(ConfigMutation));
        assert_eq!(pg("select lo_export(1, '/tmp/x')"), None);
        assert_eq!(pg("select 1; drop table x"), Some(Destructive));
        assert_eq!(pg("VACUUM ANALYZE;"), Some(ConfigMutation));
        assert_eq!(pg("explain select * from t"), Some(ReadOnly));
        assert_eq!(pg("explain analyze delete from t"), Some(Destructive));
        assert_eq!(
            pg("with x as (delete from t returning *) select * from x"),
            Some(Destructive)
        );
        assert_eq!(
            pg("select usename, passwd from pg_shadow"),
            Some(Destructive)
        );
        assert_eq!(pg("copy t to stdout"), Some(ReadOnly));
        assert_eq!(pg("copy t to program 'sh'"), None);
        assert_eq!(pg("do $$ begin perform 1; end $$"), None);
        assert_eq!(pg("select 1 \\g /tmp/x"), None);
        assert_eq!(pg("select 'a;b' -- ; drop\n"), Some(ReadOnly));
        assert_eq!(my("SHOW REPLICA STATUS\\G"), Some(ReadOnly));
        assert_eq!(my("select * from t into outfile '/tmp/x'"), None);
        assert_eq!(
            my("select user, authentication_string from mysql.user"),
            Some(Destructive)
        );
        assert_eq!(my("UPDATE users SET admin=1"), Some(Destructive));
        assert_eq!(my("system rm -rf /"), None);
        assert_eq!(my("/*!50000 drop table x */ select 1"), None);
        assert_eq!(lite("PRAGMA integrity_check;"), Some(ReadOnly));
        assert_eq!(lite("PRAGMA journal_mode=WAL"), Some(ConfigMutation));
        assert_eq!(lite("select load_extension('x')"), None);
        assert_eq!(
            lite(
                "SELECT domain, count(*) c FROM queries GROUP BY domain ORDER BY c DESC LIMIT 10;"
            ),
            Some(ReadOnly)
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,120}") {
            for d in [Dialect::Postgres, Dialect::MySql, Dialect::Sqlite] {
                let _ = sql(d, &s, pure());
            }
            let _ = psql_meta(&s);
            let _ = sqlite_dot(&s);
            let words: Vec<&str> = s.split(' ').collect();
            let _ = redis_default(&words);
        }
    }

    #[test]
    fn client_commands() {
        use Class::*;
        assert_eq!(top(psql_meta("\\l")), Some(ReadOnly));
        assert_eq!(top(psql_meta("\\dt+ public.*")), Some(ReadOnly));
        assert_eq!(top(psql_meta("\\! rm -rf /")), None);
        assert_eq!(top(psql_meta("\\o /tmp/x")), None);
        assert_eq!(top(psql_meta("\\deu+")), None);
        assert_eq!(top(sqlite_dot(".tables")), Some(ReadOnly));
        assert_eq!(
            sqlite_dot(".backup /srv/b.db"),
            Ok(vec![Effect::Write("/srv/b.db".into())])
        );
        assert_eq!(top(sqlite_dot(".shell rm x")), None);
        assert_eq!(top(redis_default(&["INFO", "keyspace"])), Some(ReadOnly));
        assert_eq!(
            top(redis_default(&["CONFIG", "GET", "maxmemory*"])),
            Some(ReadOnly)
        );
        assert_eq!(
            top(redis_default(&["config", "get", "*"])),
            Some(Destructive)
        );
        assert_eq!(
            top(redis_default(&["CONFIG", "SET", "maxmemory", "512mb"])),
            Some(ConfigMutation)
        );
        assert_eq!(top(redis_default(&["FLUSHALL"])), Some(Destructive));
        assert_eq!(top(redis_default(&["sentinel", "masters"])), Some(ReadOnly));
        assert_eq!(
            top(redis_default(&["SENTINEL", "failover", "mymaster"])),
            Some(Destructive)
        );
        assert_eq!(
            top(redis_default(&["sentinel", "config", "set", "x", "y"])),
            Some(ConfigMutation)
        );
        assert_eq!(top(redis_default(&["EVAL", "x", "0"])), None);
    }
}
