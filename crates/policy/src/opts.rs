//! Exact option parsing against a command spec (getopt_long, pflag, lenient).

use smallvec::SmallVec;

use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lower::Unsupported;
use crate::spec::{Arity, CmdSpec, Effects, OptSpec, Role, Style};

/// The value an option received.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Val<'a> {
    None,
    /// Attached to the option word (`-n5`, `--lines=5`).
    Lit(&'a str),
    /// The next word.
    Word(&'a Word),
    /// Attached but not literal (`--output=$f`).
    Dyn,
}

impl<'a> Val<'a> {
    pub(crate) fn literal(&self) -> Option<&'a str> {
        match self {
            Val::Lit(s) => Some(s),
            Val::Word(w) => w.literal(),
            _ => None,
        }
    }

    pub(crate) fn is_some(&self) -> bool {
        !matches!(self, Val::None)
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Occ<'a> {
    pub opt: &'a OptSpec,
    pub value: Val<'a>,
    /// Index of the option word.
    pub word: usize,
}

/// Short lists kept inline: a command has a few options, operands and subcommands, and
/// this runs for every command classified.
pub(crate) type Occs<'a> = SmallVec<[Occ<'a>; 4]>;
pub(crate) type Indices = SmallVec<[usize; 6]>;
pub(crate) type SpecPath<'a> = SmallVec<[&'a CmdSpec; 3]>;

#[derive(Debug)]
pub(crate) struct Parsed<'a> {
    pub occ: Occs<'a>,
    /// Indices of operand words (subcommand names excluded).
    pub operands: Indices,
    /// The command and the subcommands chosen, outermost first.
    pub path: SpecPath<'a>,
    /// First word of a wrapped command (operand role `cmd`).
    pub rest: Option<usize>,
    /// Indices of the words that named subcommands.
    pub sub_words: Indices,
}

impl<'a> Parsed<'a> {
    pub(crate) fn leaf(&self) -> &'a CmdSpec {
        self.path[self.path.len() - 1]
    }

    pub(crate) fn has(&self, id: &str) -> bool {
        self.occ.iter().any(|o| o.opt.id == id)
    }

    pub(crate) fn values<'s>(&'s self, id: &'s str) -> impl Iterator<Item = &'s Occ<'a>> + 's {
        self.occ.iter().filter(move |o| o.opt.id == id)
    }
}

static NUMERIC: std::sync::LazyLock<OptSpec> = std::sync::LazyLock::new(|| OptSpec {
    id: "-NUM".to_owned(),
    arity: Arity::None,
    effects: Effects::default(),
});

static IGNORED: std::sync::LazyLock<OptSpec> = std::sync::LazyLock::new(|| OptSpec {
    id: "?".to_owned(),
    arity: Arity::None,
    effects: Effects::default(),
});

/// The command for messages, as typed, with its subcommands (`ceph pg`, `docker compose`):
/// a spec's id is its first name, not the alias that ran (`chroot` in a group led by
/// `systemd-run`). `root_id` stands in when the name is not a literal.
pub(crate) fn shown(words: &[Word], sub_words: &[usize], root_id: &str) -> String {
    let typed = words[0]
        .literal()
        .map(|n| n.rsplit('/').next().unwrap_or(n));
    let mut n = typed.unwrap_or(root_id).to_owned();
    for &i in sub_words {
        n.push(' ');
        n.push_str(words[i].literal().unwrap_or("?"));
    }
    n
}

fn unknown(rule: &'static str, reason: String, span: Span) -> Unsupported {
    Unsupported::new(rule, reason, span)
}

struct P<'a, 'f> {
    words: &'a [Word],
    path: SpecPath<'a>,
    /// First level whose options are in scope (options of scoped levels end at a subcommand).
    scope: usize,
    occ: Occs<'a>,
    operands: Indices,
    /// The words that named subcommands, in order.
    sub_words: Indices,
    /// Whether word `i` (not a literal) may expand to an option.
    may_be_option: &'f dyn Fn(usize, &Word) -> bool,
}

impl<'a> P<'a, '_> {
    fn leaf(&self) -> &'a CmdSpec {
        self.path[self.path.len() - 1]
    }

    fn style(&self) -> Style {
        self.leaf().style
    }

    fn shown(&self) -> String {
        shown(self.words, &self.sub_words, &self.path[0].id)
    }

    fn scoped(&self) -> &[&'a CmdSpec] {
        &self.path[self.scope..]
    }

    fn short(&self, c: char) -> Option<&'a OptSpec> {
        self.scoped().iter().rev().find_map(|s| s.options.short(c))
    }

    fn any_single_dash_long(&self) -> bool {
        self.scoped().iter().any(|s| s.options.has_single_dash_long)
    }

    fn any_dangerous(&self) -> bool {
        self.scoped().iter().any(|s| s.options.any_dangerous)
    }

    /// Resolves a long name (with dashes) exactly, by prefix or by GNU abbreviation.
    fn long(&self, name: &'a str, span: Span) -> Result<Option<&'a OptSpec>, Unsupported> {
        for s in self.scoped().iter().rev() {
            if let Some(o) = s.options.long_exact(name) {
                return Ok(Some(o));
            }
        }
        let leaf = self.leaf();
        if leaf.prefix_options {
            for s in self.scoped().iter().rev() {
                if let Some(o) = s.options.long_prefixed(name).next() {
                    return Ok(Some(o));
                }
            }
            return Ok(None);
        }
        if leaf.abbrev && name.starts_with("--") && name.len() > 2 {
            let mut found: Option<&'a OptSpec> = None;
            for s in self.scoped() {
                for o in s.options.long_prefixed(name) {
                    match found {
                        Some(f) if !std::ptr::eq(f, o) => {
                            return Err(unknown(
                                "unknown.option",
                                format!("`{name}` is an ambiguous abbreviation"),
                                span,
                            ));
                        }
                        _ => found = Some(o),
                    }
                }
            }
            if let Some(o) = found {
                if !leaf.complete && !o.effects.dangerous() {
                    // The real command may know a longer option this prefix selects.
                    return Err(unknown(
                        "unknown.option",
                        format!("abbreviated option `{name}` cannot be resolved safely"),
                        span,
                    ));
                }
                return Ok(Some(o));
            }
        }
        Ok(None)
    }

    /// Lenient specs ignore options they do not list, except before a subcommand: an
    /// unlisted option may take the next word as its value, and that word would then be
    /// read as the subcommand (`kubectl --as get delete pod web`).
    fn tolerates_unknown_options(&self) -> bool {
        self.style() == Style::Lenient && self.leaf().subs.is_empty()
    }

    fn unknown_option(&self, name: &str, span: Span) -> Result<(), Unsupported> {
        if self.tolerates_unknown_options()
            && !(self.leaf().class == Class::ReadOnly && names_a_program_or_peer(name))
        {
            return Ok(());
        }
        Err(unknown(
            "unknown.option",
            format!("`{name}` is not a known option of `{}`", self.shown()),
            span,
        ))
    }

    /// Handles a long option word; returns how many extra words it consumed.
    fn long_word(&mut self, i: usize, s: &'a str, dyn_tail: bool) -> Result<usize, Unsupported> {
        let span = self.words[i].span;
        let (name, val) = match s.find('=') {
            Some(eq) => (&s[..eq], Some(&s[eq + 1..])),
            None => (s, None),
        };
        if dyn_tail && val.is_none() {
            return self.dynamic_option(i);
        }
        let Some(opt) = self.long(name, span)? else {
            self.unknown_option(name, span)?;
            self.occ.push(Occ {
                opt: &IGNORED,
                value: Val::None,
                word: i,
            });
            return Ok(0);
        };
        let value = match (opt.arity, val) {
            (Arity::None, Some(_)) => {
                return Err(unknown(
                    "unknown.option",
                    format!("`{name}` takes no value"),
                    span,
                ));
            }
            (Arity::None, None) | (Arity::Optional, None) => Val::None,
            (_, Some(v)) => {
                if dyn_tail {
                    Val::Dyn
                } else {
                    Val::Lit(v)
                }
            }
            (Arity::Required, None) => match self.words.get(i + 1) {
                Some(w) => {
                    self.occ.push(Occ {
                        opt,
                        value: Val::Word(w),
                        word: i,
                    });
                    return Ok(1);
                }
                None => {
                    return Err(unknown(
                        "unknown.option",
                        format!("`{name}` is missing its value"),
                        span,
                    ));
                }
            },
        };
        self.occ.push(Occ {
            opt,
            value,
            word: i,
        });
        Ok(0)
    }

    /// Handles `-abc` clusters; returns how many extra words were consumed.
    fn short_word(&mut self, i: usize, s: &'a str, dyn_tail: bool) -> Result<usize, Unsupported> {
        let span = self.words[i].span;
        let body = &s[1..];
        for (pos, c) in body.char_indices() {
            let Some(opt) = self.short(c) else {
                if self.tolerates_unknown_options() {
                    // Keep scanning: a later letter may still be a declared option.
                    continue;
                }
                return Err(unknown(
                    "unknown.option",
                    format!("`-{c}` is not a known option of `{}`", self.shown()),
                    span,
                ));
            };
            let rest = &body[pos + c.len_utf8()..];
            match opt.arity {
                Arity::None => self.occ.push(Occ {
                    opt,
                    value: Val::None,
                    word: i,
                }),
                Arity::Optional => {
                    let value = if !rest.is_empty() {
                        Val::Lit(rest)
                    } else if dyn_tail {
                        Val::Dyn
                    } else {
                        Val::None
                    };
                    self.occ.push(Occ {
                        opt,
                        value,
                        word: i,
                    });
                    return Ok(0);
                }
                Arity::Required => {
                    if !rest.is_empty() || dyn_tail {
                        let value = if dyn_tail { Val::Dyn } else { Val::Lit(rest) };
                        self.occ.push(Occ {
                            opt,
                            value,
                            word: i,
                        });
                        return Ok(0);
                    }
                    return match self.words.get(i + 1) {
                        Some(w) => {
                            self.occ.push(Occ {
                                opt,
                                value: Val::Word(w),
                                word: i,
                            });
                            Ok(1)
                        }
                        None => Err(unknown(
                            "unknown.option",
                            format!("`-{c}` is missing its value"),
                            span,
                        )),
                    };
                }
            }
        }
        if dyn_tail {
            // `-la$X`: the expansion may spell more options.
            return self.dynamic_option(i);
        }
        Ok(0)
    }

    /// A word whose value is unknown and that may spell an option.
    fn may_be_dangerous_option(&self, i: usize) -> Result<(), Unsupported> {
        if self.style() != Style::Lenient && self.any_dangerous() {
            return Err(unknown(
                "unknown.dynamic_option",
                format!(
                    "an expanded argument could be a dangerous option of `{}`",
                    self.shown()
                ),
                self.words[i].span,
            ));
        }
        Ok(())
    }

    /// An option cluster with an expanded tail (`-la$X`).
    fn dynamic_option(&mut self, i: usize) -> Result<usize, Unsupported> {
        self.may_be_dangerous_option(i)?;
        self.operands.push(i);
        Ok(0)
    }
}

/// Does an option's name say it takes a program, a hook, a script, a pager or editor, or
/// where to connect and with which credentials (`--exec`, `--post-renderer`, `--pager`,
/// `--server`, `--token`, `--kubeconfig`)? Lenient specs ignore options they do not list;
/// these they may not ignore.
fn names_a_program_or_peer(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "exec",
        "command",
        "cmd",
        "script",
        "hook",
        "pager",
        "editor",
        "shell",
        "rsh",
        "proxy",
        "program",
        "plugin",
        "renderer",
        "helper",
        "askpass",
        "server",
        "addr",
        "url",
        "endpoint",
        "socket",
        "token",
        "passw",
        "secret",
        "kubeconfig",
        "upload-pack",
        "receive-pack",
        "insecure",
        "tls",
    ];
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    // `--no-pager`, `--without-hooks` switch something off.
    !n.starts_with("no-") && !n.starts_with("without") && WORDS.iter().any(|w| n.contains(w))
}

/// Literal text at the start of a word.
fn lit_prefix(w: &Word) -> Option<&str> {
    match w.parts.first() {
        Some(Part::Lit(s)) => Some(s),
        _ => None,
    }
}

/// Parses `words` (word 0 is the command name) against `root`.
pub(crate) fn parse<'a>(
    root: &'a CmdSpec,
    words: &'a [Word],
    may_be_option: &dyn Fn(usize, &Word) -> bool,
) -> Result<Parsed<'a>, Unsupported> {
    let mut p = P {
        words,
        path: smallvec::smallvec![root],
        scope: 0,
        occ: Occs::new(),
        operands: Indices::new(),
        sub_words: Indices::new(),
        may_be_option,
    };
    let mut rest = None;
    let mut i = 1;
    let mut only_operands = false;

    // `tar xzf a.tgz`, `ps aux`: the first word is a bundle of short options.
    if root.old_style
        && let Some(first) = words.get(1).and_then(Word::literal)
        && !first.is_empty()
        && !first.starts_with('-')
    {
        let mut next = 2;
        for c in first.chars() {
            let Some(opt) = p.short(c) else {
                return Err(unknown(
                    "unknown.option",
                    format!("`{c}` is not a known option of `{}`", p.shown()),
                    words[1].span,
                ));
            };
            let value = if opt.arity == Arity::Required {
                let w = words.get(next).ok_or_else(|| {
                    unknown(
                        "unknown.option",
                        format!("`{c}` is missing its value"),
                        words[1].span,
                    )
                })?;
                next += 1;
                Val::Word(w)
            } else {
                Val::None
            };
            p.occ.push(Occ {
                opt,
                value,
                word: 1,
            });
        }
        i = next;
    }

    while i < words.len() {
        let w = &words[i];
        let leaf = p.leaf();
        let lit = w.literal();
        let is_operand;
        if only_operands {
            is_operand = true;
        } else if lit == Some("--") {
            if leaf.dashdash_operand {
                // Proxmox CLIs keep `--` as an operand.
                is_operand = true;
            } else {
                only_operands = true;
                i += 1;
                continue;
            }
        } else if let Some(s) = lit
            && s.len() > 1
            && s.starts_with('-')
            // Tools whose subcommands are spelled as options (`ipset -L`,
            // `swanctl --list-sas`).
            && !(leaf.option_subs && leaf.find_sub(s).is_some())
        {
            if leaf.numeric && s[1..].bytes().all(|b| b.is_ascii_digit()) {
                p.occ.push(Occ {
                    opt: &NUMERIC,
                    value: Val::None,
                    word: i,
                });
                i += 1;
                continue;
            }
            let consumed = if s.starts_with("--") {
                p.long_word(i, s, false)?
            } else if leaf.prefix_options {
                let mut cs = s[1..].chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) if p.short(c).is_some() => p.short_word(i, s, false)?,
                    _ => p.long_word(i, s, false)?,
                }
            } else if p.any_single_dash_long()
                && p.scoped().iter().any(|c| {
                    c.options
                        .long_exact(s.split('=').next().unwrap_or(s))
                        .is_some()
                })
            {
                p.long_word(i, s, false)?
            } else {
                p.short_word(i, s, false)?
            };
            i += 1 + consumed;
            continue;
        } else if lit.is_none() && (p.may_be_option)(i, w) {
            // Partly literal options with an expanded tail: `--output=$f`, `-n$N`.
            match lit_prefix(w) {
                Some(s) if s.starts_with("--") && s.len() > 2 => {
                    let consumed = p.long_word(i, s, true)?;
                    i += 1 + consumed;
                    continue;
                }
                Some(s) if s.starts_with('-') && s.len() > 1 => {
                    let consumed = p.short_word(i, s, true)?;
                    i += 1 + consumed;
                    continue;
                }
                _ => {
                    // Wholly expanded: it may be any option; if none is dangerous it
                    // is handled as an operand below (a subcommand must be literal).
                    p.may_be_dangerous_option(i)?;
                    is_operand = true;
                }
            }
        } else {
            is_operand = true;
        }
        debug_assert!(is_operand);

        // Operand: maybe a subcommand.
        if !leaf.subs.is_empty() && !only_operands {
            let Some(name) = lit else {
                return Err(unknown(
                    "unknown.dynamic_subcommand",
                    "the subcommand is not a literal".to_owned(),
                    w.span,
                ));
            };
            match leaf.find_sub(name) {
                Some(sub) => {
                    if leaf.scoped_options {
                        p.scope = p.path.len();
                    }
                    p.path.push(sub);
                    p.sub_words.push(i);
                    i += 1;
                    continue;
                }
                None => {
                    // A `*` subcommand takes every other word as its first operand.
                    if let Some(any) = leaf.subs.iter().find(|s| s.names[0] == "*") {
                        p.path.push(any);
                        continue;
                    }
                    return Err(unknown(
                        "unknown.subcommand",
                        format!("`{name}` is not a known subcommand of `{}`", p.shown()),
                        w.span,
                    ));
                }
            }
        }
        let k = p.operands.len();
        let roles = &leaf.operands;
        let is_cmd = roles.before.get(k) == Some(&Role::Cmd)
            || (k >= roles.before.len() && roles.repeat == Some(Role::Cmd));
        if is_cmd {
            rest = Some(i);
            break;
        }
        p.operands.push(i);
        if leaf.posix {
            only_operands = true;
        }
        i += 1;
    }

    // No subcommand given: use the declared default, if any.
    loop {
        let leaf = p.leaf();
        if leaf.subs.is_empty() {
            break;
        }
        match &leaf.default_sub {
            Some(d) => match leaf.find_sub(d) {
                Some(s) => p.path.push(s),
                None => break,
            },
            None => break,
        }
    }

    Ok(Parsed {
        occ: p.occ,
        operands: p.operands,
        path: p.path,
        rest,
        sub_words: p.sub_words,
    })
}
