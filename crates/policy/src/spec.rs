//! Per-command specifications: loaded from TOML, compiled into lookup tables and
//! checked against their own `match` / `not_match` examples.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a: the keys are short command and option names from our own spec files, so a fast
/// non-keyed hash is enough (SipHash showed up in the classifier's profile).
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

use serde::Deserialize;

use crate::decision::Class;
use crate::handlers::registry::Handler;
use crate::lists::List;

/// Errors while loading a spec set. Each has a stable [`SpecError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The TOML text does not parse or does not fit the schema.
    #[error("spec file {file}: {message}")]
    Toml {
        /// Which embedded or supplied file.
        file: String,
        /// Parser message.
        message: String,
    },
    /// A command entry is inconsistent (bad option syntax, unknown handler, …).
    #[error("spec for `{command}`: {message}")]
    Invalid {
        /// Spec id, e.g. `systemctl.stop`.
        command: String,
        /// What is wrong.
        message: String,
    },
    /// Two entries claim the same command name.
    #[error("command `{name}` is specified twice")]
    Duplicate {
        /// The repeated name.
        name: String,
    },
    /// A `match` or `not_match` example does not classify as the spec says.
    #[error(
        "spec for `{command}`: example `{example}` should be {expected} but is {actual} ({rule})"
    )]
    Example {
        /// Spec id.
        command: String,
        /// The example command.
        example: String,
        /// What the spec promised (`read_only`, `not read_only`, …).
        expected: String,
        /// What the classifier said.
        actual: String,
        /// The rule that decided it.
        rule: String,
    },
}

impl SpecError {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Toml { .. } => "policy.spec.toml",
            Self::Invalid { .. } => "policy.spec.invalid",
            Self::Duplicate { .. } => "policy.spec.duplicate",
            Self::Example { .. } => "policy.spec.example",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    command: Vec<RawCmd>,
    #[serde(default)]
    list: Vec<RawList>,
}

/// `[[list]]`: an allow-list a handler consults, with examples on both sides of its edge.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawList {
    name: String,
    /// The class every `match` example has (and no `not_match` example has).
    class: String,
    reason: String,
    items: Vec<String>,
    #[serde(rename = "match")]
    matches: Vec<String>,
    not_match: Vec<String>,
}

/// A loaded allow-list (see `lists.rs`).
#[derive(Debug, Clone)]
pub(crate) struct ListSpec {
    pub id: List,
    pub class: Class,
    pub items: Vec<String>,
    pub matches: Vec<String>,
    pub not_match: Vec<String>,
}

fn compile_list(raw: RawList) -> Result<ListSpec, SpecError> {
    let invalid = |m: String| SpecError::Invalid {
        command: format!("list {}", raw.name),
        message: m,
    };
    let id = List::from_name(&raw.name).ok_or_else(|| invalid("unknown list".into()))?;
    let class =
        parse_class(&raw.class).ok_or_else(|| invalid(format!("unknown class `{}`", raw.class)))?;
    if raw.reason.trim().is_empty() {
        return Err(invalid(
            "a list says why its items are safe (`reason`)".into(),
        ));
    }
    if raw.items.is_empty() || raw.items.iter().any(|i| i.is_empty()) {
        return Err(invalid("a list has items, none of them empty".into()));
    }
    if raw.matches.is_empty() || raw.not_match.is_empty() {
        return Err(invalid(
            "a list tests itself: at least one `match` and one `not_match` example".into(),
        ));
    }
    Ok(ListSpec {
        id,
        class,
        items: raw.items,
        matches: raw.matches,
        not_match: raw.not_match,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCmd {
    names: Vec<String>,
    class: Option<String>,
    style: Option<String>,
    abbrev: Option<bool>,
    complete: Option<bool>,
    posix: Option<bool>,
    numeric: Option<bool>,
    old_style: Option<bool>,
    prefix_options: Option<bool>,
    scoped_options: Option<bool>,
    dashdash_operand: Option<bool>,
    option_subs: Option<bool>,
    #[serde(default)]
    options: Vec<String>,
    operands: Option<Vec<String>>,
    #[serde(default)]
    sub: Vec<RawCmd>,
    sub_match: Option<String>,
    default_sub: Option<String>,
    handler: Option<String>,
    #[serde(default)]
    protect: Vec<RawProtect>,
    dry_run_class: Option<String>,
    implicit_dot: Option<bool>,
    reason: Option<String>,
    #[serde(default, rename = "match")]
    matches: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProtect {
    operands: Vec<String>,
    class: String,
    reason: String,
    /// The rule applies only when one of these options (by id) is given.
    #[serde(default)]
    with_options: Vec<String>,
}

/// How a command's options are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// getopt_long: bundled short options, `--long[=v]`, permutation.
    Gnu,
    /// Go pflag/cobra: like GNU but never abbreviated.
    Pflag,
    /// Options cannot change the class; unknown ones are accepted.
    Lenient,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    None,
    Required,
    Optional,
}

/// What an option does to the classification.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effects {
    pub raise: Option<Class>,
    pub unknown: bool,
    pub write: bool,
    pub read: bool,
    pub rread: bool,
    pub dryrun: bool,
    /// The output never shows file contents (`grep -l`, `wc`): a read of a path that is
    /// only partly known does not ask.
    pub quiet: bool,
    pub recursive: bool,
    pub pattern: bool,
    /// The value is the working directory for the rest of the command (`tar -C`,
    /// `make -C`, `env --chdir`, `sudo -D`): relative paths resolve against it.
    pub chdir: bool,
    /// The write happens in a dry run too (`rsync -n --log-file=F`).
    pub always: bool,
    pub mode: Option<Class>,
}

impl Effects {
    /// True when a dynamic word that might be this option cannot be waved through.
    pub(crate) fn dangerous(&self) -> bool {
        self.raise.is_some_and(|c| c > Class::ReadOnly)
            || self.unknown
            || self.write
            || self.read
            || self.rread
            || self.chdir
            || self.mode.is_some_and(|c| c > Class::ReadOnly)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct OptSpec {
    /// The first long name (or first name): how handlers refer to the option.
    pub id: String,
    pub arity: Arity,
    pub effects: Effects,
}

/// Compiled option lookup for one command level.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptTable {
    pub opts: Vec<OptSpec>,
    /// ASCII short options as a bit set (inline, so a miss costs no memory access) and
    /// their option indices in character order; other characters are in `short`.
    short_mask: u128,
    short_ascii: Vec<u16>,
    short: FastMap<char, usize>,
    /// Long names with their dashes (`--lines`, `-name`), in declaration order.
    long: Vec<(String, usize)>,
    long_index: FastMap<String, usize>,
    pub any_dangerous: bool,
    pub has_single_dash_long: bool,
}

impl OptTable {
    /// Whether any listed option takes a value (required or optional).
    pub(crate) fn any_takes_value(&self) -> bool {
        self.opts.iter().any(|o| o.arity != Arity::None)
    }

    pub(crate) fn short(&self, c: char) -> Option<&OptSpec> {
        let code = u32::from(c);
        if code < 128 {
            let bit = 1u128 << code;
            if self.short_mask & bit == 0 {
                return None;
            }
            let rank = (self.short_mask & (bit - 1)).count_ones() as usize;
            return self
                .short_ascii
                .get(rank)
                .map(|&i| &self.opts[usize::from(i)]);
        }
        self.short.get(&c).map(|&i| &self.opts[i])
    }

    pub(crate) fn long_exact(&self, name: &str) -> Option<&OptSpec> {
        self.long_index.get(name).map(|&i| &self.opts[i])
    }

    /// Options whose name starts with `prefix` (same dash count), in order.
    pub(crate) fn long_prefixed<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = &'a OptSpec> + 'a {
        self.long
            .iter()
            .filter(move |(n, _)| n.starts_with(prefix))
            .map(|&(_, i)| &self.opts[i])
    }

    fn compile(cmd: &str, specs: &[String]) -> Result<Self, SpecError> {
        let mut t = Self::default();
        let invalid = |m: String| SpecError::Invalid {
            command: cmd.to_owned(),
            message: m,
        };
        for s in specs {
            let mut names = Vec::new();
            let mut arity = Arity::None;
            let mut fx = Effects::default();
            for tok in s.split_whitespace() {
                if let Some(e) = tok.strip_prefix('!') {
                    match e {
                        "config" => fx.raise = Some(Class::ConfigMutation),
                        "destructive" => fx.raise = Some(Class::Destructive),
                        "unknown" => fx.unknown = true,
                        "write" => fx.write = true,
                        "read" => fx.read = true,
                        "rread" => fx.rread = true,
                        "dryrun" => fx.dryrun = true,
                        "quiet" => fx.quiet = true,
                        "recursive" => fx.recursive = true,
                        "pattern" => fx.pattern = true,
                        "chdir" => fx.chdir = true,
                        "always" => fx.always = true,
                        m if m.starts_with("mode=") => {
                            fx.mode = Some(
                                parse_class(&m[5..])
                                    .ok_or_else(|| invalid(format!("bad mode class in `{s}`")))?,
                            );
                        }
                        _ => return Err(invalid(format!("unknown effect `!{e}` in `{s}`"))),
                    }
                } else if tok.starts_with('-') {
                    let (name, a) = if let Some(n) = tok.strip_suffix("[=]") {
                        (n, Arity::Optional)
                    } else if let Some(n) = tok.strip_suffix('=') {
                        (n, Arity::Required)
                    } else {
                        (tok, Arity::None)
                    };
                    if a != Arity::None {
                        arity = a;
                    }
                    if name.len() < 2 {
                        return Err(invalid(format!("bad option name in `{s}`")));
                    }
                    names.push(name.to_owned());
                } else {
                    return Err(invalid(format!("bad token `{tok}` in option `{s}`")));
                }
            }
            if names.is_empty() {
                return Err(invalid(format!("option without a name: `{s}`")));
            }
            let id = names
                .iter()
                .find(|n| n.starts_with("--"))
                .unwrap_or(&names[0])
                .clone();
            let idx = t.opts.len();
            t.any_dangerous |= fx.dangerous();
            for n in &names {
                let body = &n[1..];
                if !n.starts_with("--") && body.chars().count() == 1 {
                    let c = body.chars().next().unwrap_or('-');
                    if t.short.insert(c, idx).is_some() {
                        return Err(invalid(format!("option `{n}` declared twice")));
                    }
                } else {
                    if t.long.iter().any(|(x, _)| x == n) {
                        return Err(invalid(format!("option `{n}` declared twice")));
                    }
                    if !n.starts_with("--") {
                        t.has_single_dash_long = true;
                    }
                    t.long.push((n.clone(), idx));
                    t.long_index.insert(n.clone(), idx);
                }
            }
            t.opts.push(OptSpec {
                id,
                arity,
                effects: fx,
            });
        }
        let mut ascii: Vec<(char, usize)> = t
            .short
            .iter()
            .filter(|(c, _)| c.is_ascii())
            .map(|(&c, &i)| (c, i))
            .collect();
        ascii.sort_unstable();
        for &(c, i) in &ascii {
            t.short_mask |= 1u128 << u32::from(c);
            let i = u16::try_from(i).map_err(|_| invalid("too many options".to_owned()))?;
            t.short_ascii.push(i);
        }
        t.short.retain(|c, _| !c.is_ascii());
        Ok(t)
    }
}

/// What an operand position means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Any,
    /// A file whose content is read (secret check).
    Read,
    /// A directory or file read recursively when `!recursive` options are present.
    RRead,
    /// A directory tree that is always read recursively (rg).
    Tree,
    /// A path that is written.
    Write,
    /// Skipped when an option supplied the pattern (`grep -e`).
    Pattern,
    /// Presence raises the class.
    Config,
    Destructive,
    Unknown,
    /// The rest of the words are a command (wrappers).
    Cmd,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Roles {
    pub before: Vec<Role>,
    pub repeat: Option<Role>,
    pub after: Vec<Role>,
}

impl Roles {
    fn compile(cmd: &str, v: &[String]) -> Result<Self, SpecError> {
        let mut r = Self::default();
        for s in v {
            let (name, rep) = match s.strip_suffix("...") {
                Some(n) => (n, true),
                None => (s.as_str(), false),
            };
            let role = match name {
                "any" => Role::Any,
                "read" => Role::Read,
                "rread" => Role::RRead,
                "tree" => Role::Tree,
                "write" => Role::Write,
                "pattern" => Role::Pattern,
                "config" => Role::Config,
                "destructive" => Role::Destructive,
                "unknown" => Role::Unknown,
                "cmd" => Role::Cmd,
                _ => {
                    return Err(SpecError::Invalid {
                        command: cmd.to_owned(),
                        message: format!("unknown operand role `{s}`"),
                    });
                }
            };
            if rep {
                if r.repeat.is_some() {
                    return Err(SpecError::Invalid {
                        command: cmd.to_owned(),
                        message: "two repeating operand roles".into(),
                    });
                }
                r.repeat = Some(role);
            } else if r.repeat.is_some() {
                r.after.push(role);
            } else {
                r.before.push(role);
            }
        }
        Ok(r)
    }

    /// Role of operand `i` of `n` (with pattern operands already removed).
    pub(crate) fn role(&self, i: usize, n: usize) -> Role {
        if i < self.before.len() {
            return self.before[i];
        }
        let from_end = n - 1 - i;
        if from_end < self.after.len() && n >= self.before.len() + self.after.len() {
            return self.after[self.after.len() - 1 - from_end];
        }
        self.repeat.unwrap_or(Role::Any)
    }

    /// Does any operand position write (`uniq IN OUT`, `cp … DEST`)?
    pub(crate) fn has_write(&self) -> bool {
        self.before
            .iter()
            .chain(&self.after)
            .chain(self.repeat.iter())
            .any(|r| *r == Role::Write)
    }

    pub(crate) fn has_pattern(&self) -> bool {
        self.before.first() == Some(&Role::Pattern)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Protect {
    pub operands: Vec<crate::paths::Glob>,
    pub class: Class,
    pub reason: String,
    pub with_options: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubMatch {
    Exact,
    /// First listed name that starts with the word (iproute2 style: `ip a` = `ip address`).
    PrefixFirst,
}

/// One command or subcommand.
#[derive(Debug, Clone)]
pub(crate) struct CmdSpec {
    pub id: String,
    pub names: Vec<String>,
    pub class: Class,
    pub style: Style,
    pub abbrev: bool,
    pub complete: bool,
    pub posix: bool,
    pub numeric: bool,
    pub old_style: bool,
    pub prefix_options: bool,
    /// `--` is an operand, not the end of options (Proxmox CLIs).
    pub dashdash_operand: bool,
    /// Subcommands may be spelled like options (`ipset -L`, `swanctl --list-sas`).
    pub option_subs: bool,
    /// Options of this level are not valid after a subcommand (git, docker).
    pub scoped_options: bool,
    pub options: OptTable,
    pub operands: Roles,
    pub subs: Vec<CmdSpec>,
    /// Exact subcommand names to their index in `subs` (the common lookup).
    pub sub_index: FastMap<String, usize>,
    pub sub_match: SubMatch,
    pub default_sub: Option<String>,
    pub handler: Option<Handler>,
    pub protect: Vec<Protect>,
    pub dry_run_class: Class,
    /// With no path operand the command reads the working directory (`grep -r x`,
    /// `rg x`): the implicit operand is `.`.
    pub implicit_dot: bool,
    pub reason: String,
    pub matches: Vec<String>,
    pub not_match: Vec<String>,
}

impl CmdSpec {
    pub(crate) fn find_sub(&self, word: &str) -> Option<&CmdSpec> {
        match self.sub_match {
            SubMatch::Exact => self.sub_index.get(word).map(|&i| &self.subs[i]),
            SubMatch::PrefixFirst => {
                if word.is_empty() {
                    return None;
                }
                self.subs
                    .iter()
                    .find(|s| s.names.iter().any(|n| n.starts_with(word)))
            }
        }
    }
}

fn parse_class(s: &str) -> Option<Class> {
    Class::parse(s)
}

struct Inherit<'a> {
    id: &'a str,
    reason: &'a str,
    class: Class,
    style: Style,
    abbrev: bool,
    complete: bool,
    posix: bool,
    numeric: bool,
    prefix_options: bool,
    dashdash_operand: bool,
    option_subs: bool,
}

fn compile_cmd(raw: RawCmd, parent: Option<&Inherit<'_>>) -> Result<CmdSpec, SpecError> {
    let first = raw
        .names
        .first()
        .cloned()
        .ok_or_else(|| SpecError::Invalid {
            command: parent.map_or("?", |p| p.id).to_owned(),
            message: "entry without names".into(),
        })?;
    let id = match parent {
        Some(p) => format!("{}.{first}", p.id),
        None => first,
    };
    let invalid = |m: String| SpecError::Invalid {
        command: id.clone(),
        message: m,
    };
    let class = match &raw.class {
        Some(c) => parse_class(c).ok_or_else(|| invalid(format!("unknown class `{c}`")))?,
        None => match parent {
            Some(p) => p.class,
            None => return Err(invalid("missing `class`".into())),
        },
    };
    let style = match raw.style.as_deref() {
        Some("gnu") => Style::Gnu,
        Some("pflag") => Style::Pflag,
        Some("lenient") => Style::Lenient,
        Some(s) => return Err(invalid(format!("unknown style `{s}`"))),
        None => parent.map_or(Style::Gnu, |p| p.style),
    };
    let abbrev = raw.abbrev.unwrap_or(parent.is_some_and(|p| p.abbrev));
    let complete = raw.complete.unwrap_or(parent.is_some_and(|p| p.complete));
    let posix = raw.posix.unwrap_or(parent.is_some_and(|p| p.posix));
    let numeric = raw.numeric.unwrap_or(parent.is_some_and(|p| p.numeric));
    let prefix_options = raw
        .prefix_options
        .unwrap_or(parent.is_some_and(|p| p.prefix_options));
    // Lenient specs always behaved this way; strict specs opt in.
    let dashdash_operand = raw
        .dashdash_operand
        .unwrap_or(style == Style::Lenient || parent.is_some_and(|p| p.dashdash_operand));
    let option_subs = raw
        .option_subs
        .unwrap_or(style == Style::Lenient || parent.is_some_and(|p| p.option_subs));
    if abbrev && style == Style::Pflag {
        return Err(invalid("pflag options are never abbreviated".into()));
    }
    let mut opt_specs = raw.options.clone();
    // Every GNU-style tool answers --help and --version without doing anything.
    if style != Style::Lenient && parent.is_none() {
        for implicit in ["--help", "--version"] {
            let declared = opt_specs.iter().any(|o| {
                o.split_whitespace()
                    .any(|t| t.trim_end_matches(['=', '[', ']']) == implicit)
            });
            if !declared {
                opt_specs.push(implicit.to_owned());
            }
        }
    }
    let options = OptTable::compile(&id, &opt_specs)?;
    // Issue 13 A3: a lenient spec ignores options it does not list, which is only sound for
    // a command with no subcommands and no option that takes a value (`echo`, `true`).
    if style == Style::Lenient && !raw.sub.is_empty() {
        return Err(invalid(
            "a command with subcommands cannot be lenient: list its options".into(),
        ));
    }
    if style == Style::Lenient && options.any_takes_value() {
        return Err(invalid(
            "a command with options that take values cannot be lenient: list its options".into(),
        ));
    }
    let operands = Roles::compile(
        &id,
        raw.operands.as_deref().unwrap_or(&["any...".to_owned()]),
    )?;
    let handler = match &raw.handler {
        Some(h) => {
            let h =
                Handler::from_name(h).ok_or_else(|| invalid(format!("unknown handler `{h}`")))?;
            // A full handler replaces the option parse, which only a top-level command skips.
            if h.is_full() && parent.is_some() {
                return Err(invalid(format!(
                    "handler `{}` parses its own arguments and only fits a top-level command",
                    raw.handler.as_deref().unwrap_or_default()
                )));
            }
            Some(h)
        }
        None => None,
    };
    let sub_match = match raw.sub_match.as_deref() {
        None | Some("exact") => SubMatch::Exact,
        Some("prefix_first") => SubMatch::PrefixFirst,
        Some(s) => return Err(invalid(format!("unknown sub_match `{s}`"))),
    };
    let dry_run_class = match &raw.dry_run_class {
        Some(c) => parse_class(c).ok_or_else(|| invalid(format!("unknown class `{c}`")))?,
        None => Class::ReadOnly,
    };
    let mut protect = Vec::new();
    for p in raw.protect {
        protect.push(Protect {
            operands: p
                .operands
                .iter()
                .map(|o| crate::paths::Glob::new(o))
                .collect(),
            class: parse_class(&p.class)
                .ok_or_else(|| invalid(format!("unknown class `{}`", p.class)))?,
            reason: p.reason,
            with_options: p.with_options,
        });
    }
    let reason = match (raw.reason, parent) {
        (Some(r), _) => r,
        (None, Some(p)) if !p.reason.is_empty() => p.reason.to_owned(),
        (None, _) => format!("`{}` is {class}", raw.names[0]),
    };
    let inherit = Inherit {
        id: &id,
        reason: &reason,
        class,
        style,
        abbrev,
        complete,
        posix,
        numeric,
        prefix_options,
        dashdash_operand,
        option_subs,
    };
    let mut subs = Vec::with_capacity(raw.sub.len());
    for s in raw.sub {
        subs.push(compile_cmd(s, Some(&inherit))?);
    }
    if let Some(d) = &raw.default_sub
        && !subs.iter().any(|s| s.names.contains(d))
    {
        return Err(invalid(format!("default_sub `{d}` is not a subcommand")));
    }
    let mut sub_index = FastMap::default();
    for (i, sub) in subs.iter().enumerate() {
        for n in &sub.names {
            // The first listed subcommand wins, as a linear search would.
            sub_index.entry(n.clone()).or_insert(i);
        }
    }
    Ok(CmdSpec {
        names: raw.names,
        sub_index,
        class,
        style,
        abbrev,
        complete,
        posix,
        numeric,
        old_style: raw.old_style.unwrap_or(false),
        prefix_options,
        dashdash_operand,
        option_subs,
        scoped_options: raw.scoped_options.unwrap_or(false),
        options,
        operands,
        subs,
        sub_match,
        default_sub: raw.default_sub,
        handler,
        protect,
        dry_run_class,
        implicit_dot: raw.implicit_dot.unwrap_or(false),
        reason,
        matches: raw.matches,
        not_match: raw.not_match,
        id,
    })
}

/// A validated set of command specifications.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub(crate) commands: Vec<CmdSpec>,
    by_name: FastMap<String, usize>,
    /// Indexed by `List as usize`; `None` when no file defines the list.
    lists: Vec<Option<ListSpec>>,
}

impl Policy {
    /// Loads one TOML spec file and checks every `match` / `not_match` example.
    pub fn load(toml_text: &str) -> Result<Self, SpecError> {
        Self::load_files(&[("spec", toml_text)])
    }

    /// Loads several named TOML files as one set, then checks the examples.
    pub fn load_files(files: &[(&str, &str)]) -> Result<Self, SpecError> {
        let p = Self::load_files_unchecked(files)?;
        p.check_examples()?;
        Ok(p)
    }

    /// Like [`Policy::load_files`] without running the examples (for tooling that
    /// wants to report every failing example, not just the first).
    #[doc(hidden)]
    pub fn load_files_unchecked(files: &[(&str, &str)]) -> Result<Self, SpecError> {
        let mut p = Self {
            lists: vec![None; List::ALL.len()],
            ..Self::default()
        };
        for (name, text) in files {
            let raw: RawFile = toml::from_str(text).map_err(|e| SpecError::Toml {
                file: (*name).to_owned(),
                message: e.to_string(),
            })?;
            for c in raw.command {
                let spec = compile_cmd(c, None)?;
                let idx = p.commands.len();
                for n in &spec.names {
                    if p.by_name.insert(n.clone(), idx).is_some() {
                        return Err(SpecError::Duplicate { name: n.clone() });
                    }
                }
                p.commands.push(spec);
            }
            for l in raw.list {
                let l = compile_list(l)?;
                let slot = &mut p.lists[l.id as usize];
                if slot.is_some() {
                    return Err(SpecError::Duplicate {
                        name: format!("list {}", l.id.name()),
                    });
                }
                *slot = Some(l);
            }
        }
        Ok(p)
    }

    /// Calls `visit` with every command path (`["docker", "image", "ls"]`) and its spec,
    /// through subcommands spelled as words (not `*`, not option-like ones).
    fn each_path(&self, mut visit: impl FnMut(&[String], &CmdSpec)) {
        fn walk(c: &CmdSpec, path: &mut Vec<String>, visit: &mut dyn FnMut(&[String], &CmdSpec)) {
            path.push(c.names[0].clone());
            visit(path, c);
            for s in &c.subs {
                if s.names[0] != "*" && !s.names[0].starts_with('-') {
                    walk(s, path, visit);
                }
            }
            path.pop();
        }
        for c in &self.commands {
            walk(c, &mut Vec::new(), &mut visit);
        }
    }

    /// Every command path with whether its spec is lenient and whether options end at the
    /// first operand (tests that an undeclared option is never read-only).
    #[doc(hidden)]
    pub fn command_paths(&self) -> Vec<(Vec<String>, bool, bool)> {
        let mut out = Vec::new();
        self.each_path(|path, c| out.push((path.to_vec(), c.style == Style::Lenient, c.posix)));
        out
    }

    /// Every command path (`["kubectl", "rollout"]`) whose spec has subcommands, with
    /// the name of its first subcommand (tests of how options before a subcommand are read).
    #[doc(hidden)]
    pub fn subcommand_paths(&self) -> Vec<(Vec<String>, String)> {
        let mut out = Vec::new();
        self.each_path(|path, c| {
            if let Some(first) = c.subs.iter().find(|s| s.names[0] != "*") {
                out.push((path.to_vec(), first.names[0].clone()));
            }
        });
        out
    }

    /// Every failing `match`/`not_match` example.
    #[doc(hidden)]
    pub fn example_failures(&self) -> Vec<SpecError> {
        let mut out = Vec::new();
        fn walk(p: &Policy, c: &CmdSpec, out: &mut Vec<SpecError>) {
            for ex in &c.matches {
                let d = crate::classify_with(p, ex);
                if d.class != c.class {
                    out.push(SpecError::Example {
                        command: c.id.clone(),
                        example: ex.clone(),
                        expected: c.class.to_string(),
                        actual: d.class.to_string(),
                        rule: format!("{}: {}", d.rule(), d.reason()),
                    });
                }
            }
            for ex in &c.not_match {
                let d = crate::classify_with(p, ex);
                if d.class == c.class {
                    out.push(SpecError::Example {
                        command: c.id.clone(),
                        example: ex.clone(),
                        expected: format!("not {}", c.class),
                        actual: d.class.to_string(),
                        rule: format!("{}: {}", d.rule(), d.reason()),
                    });
                }
            }
            for s in &c.subs {
                walk(p, s, out);
            }
        }
        for c in &self.commands {
            walk(self, c, &mut out);
        }
        for (id, class, matches, not_match) in self.list_examples() {
            for ex in matches {
                let d = crate::classify_with(self, ex);
                if d.class != class {
                    out.push(SpecError::Example {
                        command: id.clone(),
                        example: ex.clone(),
                        expected: class.to_string(),
                        actual: d.class.to_string(),
                        rule: format!("{}: {}", d.rule(), d.reason()),
                    });
                }
            }
            for ex in not_match {
                let d = crate::classify_with(self, ex);
                if d.class == class {
                    out.push(SpecError::Example {
                        command: id.clone(),
                        example: ex.clone(),
                        expected: format!("not {class}"),
                        actual: d.class.to_string(),
                        rule: format!("{}: {}", d.rule(), d.reason()),
                    });
                }
            }
        }
        out
    }

    /// The items of an allow-list; empty (nothing allowed) when the spec set lacks it.
    pub(crate) fn list(&self, l: List) -> &[String] {
        match self.lists.get(l as usize) {
            Some(Some(s)) => &s.items,
            _ => &[],
        }
    }

    /// This spec set without one allow-list (tests: a missing list only asks more).
    #[cfg(test)]
    pub(crate) fn without_list(&self, l: List) -> (Policy, Vec<String>) {
        let mut p = self.clone();
        let examples = match p.lists.get_mut(l as usize).and_then(Option::take) {
            Some(s) => s.matches.into_iter().chain(s.not_match).collect(),
            None => Vec::new(),
        };
        (p, examples)
    }

    /// Is `item` on the allow-list (exactly)?
    pub(crate) fn listed(&self, l: List, item: &str) -> bool {
        self.list(l).iter().any(|s| s == item)
    }

    /// Names of the allow-lists this spec set defines (for tests).
    #[doc(hidden)]
    pub fn list_names(&self) -> Vec<&'static str> {
        self.lists.iter().flatten().map(|l| l.id.name()).collect()
    }

    /// Every `match`/`not_match` example of the allow-lists, as (spec-like id, class,
    /// examples, counter-examples).
    fn list_examples(&self) -> impl Iterator<Item = (String, Class, &[String], &[String])> {
        self.lists.iter().flatten().map(|l| {
            (
                format!("list {}", l.id.name()),
                l.class,
                l.matches.as_slice(),
                l.not_match.as_slice(),
            )
        })
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<&CmdSpec> {
        self.by_name.get(name).map(|&i| &self.commands[i])
    }

    /// Names of every specified command (for docs and tests).
    pub fn command_names(&self) -> impl Iterator<Item = &str> {
        self.commands
            .iter()
            .flat_map(|c| c.names.iter().map(String::as_str))
    }

    fn check_examples(&self) -> Result<(), SpecError> {
        fn walk(p: &Policy, c: &CmdSpec) -> Result<(), SpecError> {
            for ex in &c.matches {
                let d = crate::classify_with(p, ex);
                if d.class != c.class {
                    return Err(SpecError::Example {
                        command: c.id.clone(),
                        example: ex.clone(),
                        expected: c.class.to_string(),
                        actual: d.class.to_string(),
                        rule: d.rule().to_owned(),
                    });
                }
            }
            for ex in &c.not_match {
                let d = crate::classify_with(p, ex);
                if d.class == c.class {
                    return Err(SpecError::Example {
                        command: c.id.clone(),
                        example: ex.clone(),
                        expected: format!("not {}", c.class),
                        actual: d.class.to_string(),
                        rule: d.rule().to_owned(),
                    });
                }
            }
            for s in &c.subs {
                walk(p, s)?;
            }
            Ok(())
        }
        for c in &self.commands {
            walk(self, c)?;
        }
        for (id, class, matches, not_match) in self.list_examples() {
            for ex in matches {
                let d = crate::classify_with(self, ex);
                if d.class != class {
                    return Err(SpecError::Example {
                        command: id,
                        example: ex.clone(),
                        expected: class.to_string(),
                        actual: d.class.to_string(),
                        rule: d.rule().to_owned(),
                    });
                }
            }
            for ex in not_match {
                let d = crate::classify_with(self, ex);
                if d.class == class {
                    return Err(SpecError::Example {
                        command: id,
                        example: ex.clone(),
                        expected: format!("not {class}"),
                        actual: d.class.to_string(),
                        rule: d.rule().to_owned(),
                    });
                }
            }
        }
        Ok(())
    }
}
