//! The classification walk. One pass over the IR both classifies and emits the
//! canonical text, so what is emitted is exactly what was classified.

use std::borrow::Cow;

use crate::decision::{Class, Decision, Finding, Span};
use crate::ir::{
    AndOrOp, Assign, Cmd, List, Part, Pipeline, RedirOp, RedirTarget, Redirect, Simple, TestExpr,
    Word,
};
use crate::lower::{Lowerer, Unsupported};
use crate::opts::{self, Parsed, Val};
use crate::paths;
use crate::spec::{CmdSpec, Policy, Role};

/// Work units (commands and words) one decision may spend.
const BUDGET: u32 = 20_000;
/// Nesting of wrappers and re-parsed strings.
const MAX_DEPTH: u32 = 16;

/// What a variable may hold, as path patterns.
#[derive(Debug, Clone)]
pub(crate) struct Binding {
    pub patterns: Vec<String>,
    pub may_be_option: bool,
}

/// A handler that runs after the generic option parse, with the parsed command.
pub(crate) type PostFn = fn(&mut Engine<'_>, &Parsed<'_>, &[Word], usize, &mut ArgvOut);
/// A handler that parses its own arguments.
pub(crate) type FullFn = fn(&mut Engine<'_>, &CmdSpec, &[Word], usize, &mut ArgvOut);

/// What running a handler means (`handlers/registry.rs` says which each is). Defined
/// here, beside the engine the functions take, so the classifier names no handler module.
#[derive(Clone, Copy)]
pub(crate) enum Run {
    Post(PostFn),
    Full(FullFn),
}

/// Canonical-form edits a command handler asks for, by absolute word index.
#[derive(Debug, Default)]
pub(crate) struct ArgvOut {
    /// Replace word i with this text; an empty string drops the word.
    pub rewrites: Vec<(usize, String)>,
    /// Insert these (already quoted) words before word i.
    pub inserts: Vec<(usize, String)>,
    /// Words that run as `./WORD`: a relative glob that could otherwise expand to an option.
    pub dot_prefix: Vec<usize>,
}

impl ArgvOut {
    fn is_empty(&self) -> bool {
        self.rewrites.is_empty() && self.inserts.is_empty() && self.dot_prefix.is_empty()
    }
}

pub(crate) struct Engine<'p> {
    pub policy: &'p Policy,
    pub findings: Vec<Finding>,
    pub class: Class,
    pub unknown: bool,
    budget: u32,
    /// The budget refused a spend: the decision is unknown whatever follows.
    exhausted: bool,
    pub depth: u32,
    vars: Vec<(String, Binding)>,
    /// Working directory: `Some("~")` at start; `None` when unknown.
    /// Borrowed while it is the starting `~` (most commands never `cd`): cloning it for
    /// every pipeline stage and subshell then costs nothing.
    pub cwd: Option<Cow<'static, str>>,
    /// Emitting for `sh -c`: no bash-only syntax.
    pub sh_mode: bool,
    /// Path pattern of what the previous pipeline stage prints (find → xargs).
    pub stdin_paths: Option<String>,
    /// Standard input carries data: a pipe from a producer or an input redirection
    /// (network clients send it to the peer).
    pub stdin_fed: bool,
    pub stdout_paths: Option<String>,
    /// The current command never prints what it reads (see `Effects::quiet`).
    quiet_reads: bool,
    /// How many container or remote-host boundaries the current command is behind.
    pub remote: u32,
}

/// Classifies `command` against `policy`.
pub(crate) fn classify(policy: &Policy, command: &str) -> Decision {
    classify_budgeted(policy, command, BUDGET).0
}

/// [`classify`] with an explicit work budget; also returns the units spent (tests place
/// the budget's edge exactly on every part of a command).
pub(crate) fn classify_budgeted(policy: &Policy, command: &str, budget: u32) -> (Decision, u32) {
    let mut e = Engine::new(policy);
    e.budget = budget;
    let d = classify_engine(&mut e, command);
    (d, budget - e.budget)
}

fn classify_engine(e: &mut Engine<'_>, command: &str) -> Decision {
    match Lowerer::lower(command, 0, false, None) {
        Err(u) => {
            e.fail_u(u);
            e.finish(None)
        }
        Ok(list) => {
            let mut out = String::with_capacity(command.len() + 16);
            e.list(&list, &mut out);
            e.finish(Some(out))
        }
    }
}

/// The default work budget (tests build commands around its edge).
pub(crate) const DEFAULT_BUDGET: u32 = BUDGET;

impl<'p> Engine<'p> {
    pub(crate) fn new(policy: &'p Policy) -> Self {
        Self {
            policy,
            // Most commands end with one to four findings.
            findings: Vec::with_capacity(4),
            class: Class::ReadOnly,
            unknown: false,
            budget: BUDGET,
            exhausted: false,
            depth: 0,
            vars: Vec::new(),
            cwd: Some(Cow::Borrowed("~")),
            sh_mode: false,
            stdin_paths: None,
            stdin_fed: false,
            stdout_paths: None,
            quiet_reads: false,
            remote: 0,
        }
    }

    fn finish(&mut self, canonical: Option<String>) -> Decision {
        Decision {
            class: self.class,
            unknown: self.unknown,
            findings: std::mem::take(&mut self.findings),
            canonical,
        }
    }

    // ---- findings -------------------------------------------------------

    pub(crate) fn add(
        &mut self,
        rule: impl Into<String>,
        class: Class,
        span: Span,
        reason: impl Into<String>,
    ) {
        self.class = self.class.max(class);
        self.findings.push(Finding {
            rule: rule.into(),
            class,
            unknown: false,
            span,
            reason: reason.into(),
        });
    }

    pub(crate) fn fail(&mut self, rule: impl Into<String>, span: Span, reason: impl Into<String>) {
        self.class = Class::Destructive;
        self.unknown = true;
        self.findings.push(Finding {
            rule: rule.into(),
            class: Class::Destructive,
            unknown: true,
            span,
            reason: reason.into(),
        });
    }

    pub(crate) fn fail_u(&mut self, u: Unsupported) {
        self.fail(u.rule, u.span, u.reason);
    }

    /// Spends work units; `false` (with a fail-closed finding) when the budget cannot
    /// pay for them. Every refusal records the finding, also when an earlier spend left
    /// the budget at exactly zero: a skipped command must never look classified.
    fn spend(&mut self, n: usize, span: Span) -> bool {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if self.budget < n || self.exhausted {
            self.budget = 0;
            if !self.exhausted {
                self.exhausted = true;
                self.fail(
                    "unknown.budget",
                    span,
                    "the command is too large to classify",
                );
            }
            // An earlier refusal's finding may have been rolled back (emit-only passes):
            // the decision stays fail-closed regardless.
            self.class = Class::Destructive;
            self.unknown = true;
            return false;
        }
        self.budget -= n;
        true
    }

    // ---- variables --------------------------------------------------------

    fn binding(&self, name: &str) -> Option<&Binding> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
    }

    pub(crate) fn bind(&mut self, name: &str, b: Binding) {
        if let Some(slot) = self.vars.iter_mut().find(|(n, _)| n == name) {
            slot.1 = b;
        } else {
            self.vars.push((name.to_owned(), b));
        }
    }

    pub(crate) fn bind_unknown(&mut self, name: &str) {
        self.bind(
            name,
            Binding {
                patterns: vec!["**".to_owned()],
                may_be_option: true,
            },
        );
    }

    /// Path pattern for a word, and whether every part of it is known.
    pub(crate) fn pattern(&self, w: &Word) -> (Vec<String>, bool) {
        if let [Part::Lit(s)] = w.parts.as_slice()
            && !paths::has_meta(s)
        {
            return (vec![s.clone()], true);
        }
        let mut outs = vec![String::new()];
        let mut known = true;
        for (i, p) in w.parts.iter().enumerate() {
            let alts: Vec<String> = match p {
                Part::Lit(s) => {
                    let mut e = String::with_capacity(s.len());
                    paths::escape_into(s, &mut e);
                    vec![e]
                }
                Part::Glob(g) => vec![g.clone()],
                Part::Tilde(t) if i == 0 => {
                    if t == "~" {
                        vec!["~".to_owned()]
                    } else if t == "~root" {
                        vec!["/root".to_owned()]
                    } else {
                        vec![format!("/home/{}", &t[1..])]
                    }
                }
                Part::Tilde(_) => vec!["~".to_owned()],
                Part::Param { name, plain, .. } => match (name.as_str(), *plain) {
                    ("HOME", true) => vec!["~".to_owned()],
                    ("PWD", true) => vec![self.cwd.as_deref().unwrap_or("**").to_owned()],
                    ("?" | "#" | "$" | "!", _) => vec!["*".to_owned()],
                    (n, true) => match self.binding(n) {
                        Some(b) => b.patterns.clone(),
                        None => {
                            known = false;
                            vec!["**".to_owned()]
                        }
                    },
                    _ => {
                        known = false;
                        vec!["**".to_owned()]
                    }
                },
                Part::CmdSub { list, .. } if token_output(list) => vec!["*".to_owned()],
                Part::CmdSub { .. } => {
                    known = false;
                    vec!["**".to_owned()]
                }
                Part::Arith { .. } => vec!["*".to_owned()],
                Part::ProcSub { .. } => vec!["/dev/fd/*".to_owned()],
                Part::Synthetic { pattern, .. } => vec![pattern.clone()],
            };
            if alts.len() == 1 {
                for o in &mut outs {
                    o.push_str(&alts[0]);
                }
            } else {
                let mut next = Vec::with_capacity(outs.len() * alts.len());
                for o in &outs {
                    for a in &alts {
                        next.push(format!("{o}{a}"));
                    }
                }
                outs = next;
                if outs.len() > 16 {
                    return (vec!["**".to_owned()], false);
                }
            }
        }
        (outs, known)
    }

    pub(crate) fn may_be_option(&self, w: &Word) -> bool {
        match w.parts.first() {
            None => false,
            Some(Part::Lit(s)) => s.starts_with('-'),
            // `[s]shd` cannot expand to an option; `*` and `[!x]` can.
            Some(Part::Glob(g)) => match g.strip_prefix('[') {
                Some(class) => {
                    let body = class.split(']').next().unwrap_or("");
                    body.is_empty() || body.starts_with(['!', '^']) || body.contains('-')
                }
                None => true,
            },
            Some(Part::Tilde(_) | Part::ProcSub { .. }) => false,
            Some(Part::Param { name, plain, .. }) => match (name.as_str(), *plain) {
                ("HOME" | "PWD" | "?" | "#" | "$" | "!", _) => false,
                (n, true) => self.binding(n).is_none_or(|b| b.may_be_option),
                _ => true,
            },
            Some(Part::Synthetic { may_be_option, .. }) => *may_be_option,
            Some(Part::CmdSub { list, .. }) => !token_output(list),
            Some(Part::Arith { .. }) => true,
        }
    }

    // ---- targets ------------------------------------------------------------

    /// Strips `host:` from `host:/path` (scp, rsync) so the path part is checked.
    fn strip_host(p: &str) -> &str {
        if let Some(colon) = p.find(':') {
            let host = &p[..colon];
            if !host.is_empty()
                && !host.contains('/')
                && host.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'@' | b'\\')
                })
            {
                return &p[colon + 1..];
            }
        }
        p
    }

    /// A file the command reads; `recursive` for directory trees.
    pub(crate) fn read_target(&mut self, w: &Word, recursive: bool) {
        if w.parts.iter().any(|p| matches!(p, Part::ProcSub { .. })) {
            // Reads a pipe from a command that is classified on its own.
            return;
        }
        let (pats, _) = self.pattern(w);
        self.read_patterns(&pats, recursive, w.span);
    }

    pub(crate) fn read_patterns(&mut self, pats: &[String], recursive: bool, span: Span) {
        for p in pats {
            let p = Self::strip_host(p);
            // Through `..` the path may land anywhere: judge what it names there too.
            if let Some(tail) = paths::dotdot_tail(p)
                && self.read_one(&tail, recursive, span)
            {
                return;
            }
            if self.read_one(p, recursive, span) {
                return;
            }
        }
    }

    /// Judges one read; true when it asked.
    fn read_one(&mut self, p: &str, recursive: bool, span: Span) -> bool {
        let resolved = paths::resolve(p, self.cwd.as_deref());
        // A literal secret path always asks; a broad one only when contents are shown.
        if self.quiet_reads && paths::has_meta(&resolved) {
            return false;
        }
        let hit = if recursive && !self.quiet_reads {
            paths::secret_under(&resolved)
        } else {
            paths::secret_read(&resolved)
        };
        let Some(rule) = hit else {
            return false;
        };
        let what = if resolved.contains("**") {
            format!("reads a path that is only partly known and may hold secrets (`{rule}`)")
        } else {
            format!("reads `{resolved}`, which may hold secrets (matches `{rule}`)")
        };
        self.add("secret.read", Class::Destructive, span, what);
        true
    }

    /// A literal path the command reads (from a handler).
    pub(crate) fn read_literal(&mut self, path: &str, span: Span) {
        let mut e = String::with_capacity(path.len());
        paths::escape_into(path, &mut e);
        self.read_patterns(&[e], false, span);
    }

    /// A file the command writes.
    pub(crate) fn write_target(&mut self, w: &Word, what: &str) {
        if w.parts.iter().any(|p| matches!(p, Part::ProcSub { .. })) {
            return;
        }
        let (pats, known) = self.pattern(w);
        if !known {
            self.fail(
                "unknown.dynamic_target",
                w.span,
                format!("{what} a path that is only known at run time"),
            );
            return;
        }
        self.write_patterns(&pats, what, w.span);
    }

    pub(crate) fn write_literal(&mut self, path: &str, what: &str, span: Span) {
        let mut e = String::with_capacity(path.len());
        paths::escape_into(path, &mut e);
        self.write_patterns(&[e], what, span);
    }

    pub(crate) fn write_patterns(&mut self, pats: &[String], what: &str, span: Span) {
        let mut wrote = false;
        for p in pats {
            let p = Self::strip_host(p);
            let resolved = paths::resolve(p, self.cwd.as_deref());
            if paths::is_sink(&resolved) {
                continue;
            }
            // Through `..` the target may be the tail anywhere (`/var/run/../etc/cron.d/x`).
            let tail = paths::dotdot_tail(p);
            let hit = paths::protected_write_into(&resolved)
                .or_else(|| tail.as_deref().and_then(paths::protected_write_into));
            if let Some(rule) = hit {
                self.add(
                    "write.protected",
                    Class::Destructive,
                    span,
                    format!("{what} `{resolved}`, a protected path (matches `{rule}`)"),
                );
                return;
            }
            wrote = true;
        }
        if wrote {
            let shown = pats.first().map(String::as_str).unwrap_or("");
            self.add(
                "write.file",
                Class::ConfigMutation,
                span,
                format!("{what} `{shown}`"),
            );
        }
    }

    // ---- walk + emit ------------------------------------------------------------

    pub(crate) fn list(&mut self, l: &List, out: &mut String) {
        for (k, ao) in l.items.iter().enumerate() {
            if k > 0 {
                out.push_str("; ");
            }
            self.pipeline(&ao.first, out);
            for (op, p) in &ao.rest {
                out.push_str(match op {
                    AndOrOp::And => " && ",
                    AndOrOp::Or => " || ",
                });
                self.pipeline(p, out);
            }
        }
    }

    fn pipeline(&mut self, p: &Pipeline, out: &mut String) {
        if p.bang {
            out.push_str("! ");
        }
        if p.timed {
            out.push_str("time ");
        }
        let multi = p.cmds.len() > 1;
        let saved = if multi { Some(self.cwd.clone()) } else { None };
        let mut prev_out: Option<String> = None;
        let outer_fed = self.stdin_fed;
        for (k, c) in p.cmds.iter().enumerate() {
            if k > 0 {
                out.push_str(" | ");
            }
            self.stdin_fed = if k == 0 {
                outer_fed
            } else {
                !empty_producer(&p.cmds[k - 1])
            };
            self.stdin_paths = prev_out.take();
            self.stdout_paths = None;
            self.cmd(c, out);
            prev_out = self.stdout_paths.take();
            if let Some(s) = &saved {
                // Every stage runs in its own subshell.
                self.cwd.clone_from(s);
            }
        }
        self.stdin_fed = outer_fed;
        self.stdin_paths = None;
    }

    fn body(&mut self, l: &List, out: &mut String) {
        let before = self.cwd.clone();
        self.list(l, out);
        if self.cwd != before {
            // A conditional `cd`: the directory afterwards is not known.
            self.cwd = None;
        }
    }

    fn cmd(&mut self, c: &Cmd, out: &mut String) {
        let redirects = match c {
            Cmd::Simple(s) => &s.redirects,
            Cmd::Subshell(_, r) | Cmd::Group(_, r) | Cmd::Test(_, r, _) => r,
            Cmd::If { redirects, .. }
            | Cmd::For { redirects, .. }
            | Cmd::While { redirects, .. }
            | Cmd::Case { redirects, .. } => redirects,
        };
        let saved_fed = self.stdin_fed;
        self.stdin_fed |= redirects.iter().any(feeds_stdin);
        self.cmd_inner(c, out);
        self.stdin_fed = saved_fed;
    }

    fn cmd_inner(&mut self, c: &Cmd, out: &mut String) {
        match c {
            Cmd::Simple(s) => self.simple(s, out),
            Cmd::Subshell(l, r) => {
                let saved = (self.cwd.clone(), self.vars.len());
                out.push_str("( ");
                self.list(l, out);
                out.push_str(" )");
                self.cwd = saved.0;
                self.vars.truncate(saved.1);
                self.redirects(r, out);
            }
            Cmd::Group(l, r) => {
                out.push_str("{ ");
                self.list(l, out);
                out.push_str("; }");
                self.redirects(r, out);
            }
            Cmd::If {
                branches,
                otherwise,
                redirects,
            } => {
                for (k, (cond, then)) in branches.iter().enumerate() {
                    out.push_str(if k == 0 { "if " } else { "; elif " });
                    self.body(cond, out);
                    out.push_str("; then ");
                    self.body(then, out);
                }
                if let Some(e) = otherwise {
                    out.push_str("; else ");
                    self.body(e, out);
                }
                out.push_str("; fi");
                self.redirects(redirects, out);
            }
            Cmd::For {
                var,
                words,
                body,
                redirects,
            } => {
                if !(local_name(var) || env_allowed(var, None, true)) {
                    self.fail(
                        "unknown.env",
                        words
                            .as_ref()
                            .and_then(|ws| ws.first())
                            .map_or(Span::new(0, 0), |w| w.span),
                        format!(
                            "the loop assigns `{var}`, which can change how later commands run"
                        ),
                    );
                }
                out.push_str("for ");
                out.push_str(var);
                let mut binding = Binding {
                    patterns: Vec::new(),
                    may_be_option: false,
                };
                match words {
                    Some(ws) => {
                        out.push_str(" in");
                        for w in ws {
                            out.push(' ');
                            self.emit_word(w, out, false);
                            let (pats, _) = self.pattern(w);
                            binding.patterns.extend(pats);
                            binding.may_be_option |= self.may_be_option(w)
                                || w.parts.iter().any(|p| {
                                    matches!(
                                        p,
                                        Part::CmdSub { quoted: false, .. }
                                            | Part::Param { quoted: false, .. }
                                    )
                                });
                        }
                    }
                    None => {
                        binding.patterns.push("**".to_owned());
                        binding.may_be_option = true;
                    }
                }
                if binding.patterns.len() > 16 {
                    binding.patterns = vec!["**".to_owned()];
                }
                if binding.patterns.is_empty() {
                    binding.patterns.push(String::new());
                }
                self.bind(var, binding);
                out.push_str("; do ");
                self.body(body, out);
                out.push_str("; done");
                self.redirects(redirects, out);
            }
            Cmd::While {
                until,
                cond,
                body,
                redirects,
            } => {
                out.push_str(if *until { "until " } else { "while " });
                // Redirects on the loop feed `read` in the condition.
                self.redirect_effects_first(redirects);
                self.body(cond, out);
                out.push_str("; do ");
                self.body(body, out);
                out.push_str("; done");
                self.redirects_emit_only(redirects, out);
            }
            Cmd::Case {
                word,
                arms,
                redirects,
            } => {
                out.push_str("case ");
                self.emit_word(word, out, false);
                out.push_str(" in");
                for arm in arms {
                    out.push(' ');
                    for (k, p) in arm.patterns.iter().enumerate() {
                        if k > 0 {
                            out.push('|');
                        }
                        self.emit_word(p, out, false);
                    }
                    out.push_str(") ");
                    self.body(&arm.body, out);
                    out.push(' ');
                    out.push_str(arm.terminator);
                }
                out.push_str(" esac");
                self.redirects(redirects, out);
            }
            Cmd::Test(e, r, span) => {
                if self.sh_mode {
                    self.fail(
                        "unknown.bashism",
                        *span,
                        "`[[` inside `sh -c` is not modelled",
                    );
                }
                self.add(
                    "builtin.test",
                    Class::ReadOnly,
                    *span,
                    "`[[ … ]]` only tests",
                );
                out.push_str("[[ ");
                self.test_expr(e, out);
                out.push_str(" ]]");
                self.redirects(r, out);
            }
        }
    }

    fn test_expr(&mut self, e: &TestExpr, out: &mut String) {
        match e {
            TestExpr::And(a, b) => {
                self.test_expr(a, out);
                out.push_str(" && ");
                self.test_expr(b, out);
            }
            TestExpr::Or(a, b) => {
                self.test_expr(a, out);
                out.push_str(" || ");
                self.test_expr(b, out);
            }
            TestExpr::Not(a) => {
                out.push_str("! ");
                self.test_expr(a, out);
            }
            TestExpr::Paren(a) => {
                out.push_str("( ");
                self.test_expr(a, out);
                out.push_str(" )");
            }
            TestExpr::Unary(op, w) => {
                out.push_str(op);
                out.push(' ');
                self.emit_word(w, out, false);
            }
            TestExpr::Binary(op, l, r) => {
                self.emit_word(l, out, false);
                out.push(' ');
                out.push_str(op);
                out.push(' ');
                self.emit_word(r, out, false);
            }
        }
    }

    fn redirects(&mut self, rs: &[Redirect], out: &mut String) {
        for r in rs {
            self.redirect(r, out, true);
        }
    }

    fn redirect_effects_first(&mut self, rs: &[Redirect]) {
        let mut sink = String::new();
        for r in rs {
            self.redirect(r, &mut sink, true);
        }
    }

    fn redirects_emit_only(&mut self, rs: &[Redirect], out: &mut String) {
        // Effects were recorded already; emit without double-counting findings.
        let mark = self.findings.len();
        let (class, unknown, exhausted) = (self.class, self.unknown, self.exhausted);
        for r in rs {
            self.redirect(r, out, false);
        }
        if self.exhausted && !exhausted {
            // The second pass ran out of budget: what it emitted was not classified.
            let kept = self
                .findings
                .drain(mark..)
                .find(|f| f.rule == "unknown.budget");
            self.findings.extend(kept);
            return;
        }
        self.findings.truncate(mark);
        self.class = class;
        self.unknown = unknown;
    }

    fn redirect(&mut self, r: &Redirect, out: &mut String, effects: bool) {
        out.push(' ');
        if let Some(fd) = r.fd {
            out.push_str(&fd.to_string());
        }
        match (&r.op, &r.target) {
            (_, RedirTarget::HereDoc { body, .. })
            | (RedirOp::HereString, RedirTarget::Word(body)) => {
                if self.sh_mode {
                    self.fail(
                        "unknown.bashism",
                        r.span,
                        "here-documents inside `sh -c` are not modelled",
                    );
                }
                out.push_str("<<< ");
                if let RedirTarget::HereDoc { .. } = &r.target {
                    self.emit_heredoc(body, out);
                } else {
                    self.emit_word(body, out, false);
                }
            }
            (op, RedirTarget::Fd(n)) => {
                out.push_str(match op {
                    RedirOp::DupIn | RedirOp::Read => "<&",
                    _ => ">&",
                });
                out.push_str(&n.to_string());
            }
            (op, RedirTarget::Close) => {
                out.push_str(match op {
                    RedirOp::DupIn | RedirOp::Read => "<&-",
                    _ => ">&-",
                });
            }
            (op, RedirTarget::Word(w)) => {
                let both = matches!(op, RedirOp::OutErr | RedirOp::AppendOutErr);
                // `&>` is bash-only (in sh it backgrounds): spell it portably.
                out.push_str(match op {
                    RedirOp::OutErr => ">",
                    RedirOp::AppendOutErr => ">>",
                    _ => op.as_str(),
                });
                self.emit_word(w, out, false);
                if both {
                    out.push_str(" 2>&1");
                }
                if effects {
                    match op {
                        RedirOp::Read => self.read_target(w, false),
                        RedirOp::ReadWrite => {
                            self.read_target(w, false);
                            self.write_target(w, "redirects output to");
                        }
                        _ => self.write_target(w, "redirects output to"),
                    }
                }
            }
        }
    }

    /// Here-documents become here-strings: the body minus its final newline.
    fn emit_heredoc(&mut self, body: &Word, out: &mut String) {
        let mut parts = body.parts.clone();
        if let Some(Part::Lit(s)) = parts.last_mut()
            && s.ends_with('\n')
        {
            s.pop();
        }
        if parts.iter().all(|p| matches!(p, Part::Lit(_))) {
            let text: String = parts
                .iter()
                .map(|p| if let Part::Lit(s) = p { s.as_str() } else { "" })
                .collect();
            quote_into(&text, out);
            return;
        }
        out.push('"');
        for p in &parts {
            match p {
                Part::Lit(s) => {
                    for c in s.chars() {
                        if matches!(c, '\\' | '"' | '$' | '`') {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                }
                Part::Param { raw, .. } => out.push_str(raw),
                Part::CmdSub { list, .. } => {
                    out.push_str("$(");
                    self.nested_list(list, out);
                    out.push(')');
                }
                Part::Arith { expr, .. } => {
                    out.push_str("$((");
                    out.push_str(expr);
                    out.push_str("))");
                }
                _ => {}
            }
        }
        out.push('"');
    }

    fn nested_list(&mut self, l: &List, out: &mut String) {
        let saved_cwd = self.cwd.clone();
        let (si, so) = (self.stdin_paths.take(), self.stdout_paths.take());
        self.list(l, out);
        self.cwd = saved_cwd;
        self.stdin_paths = si;
        self.stdout_paths = so;
    }

    /// Emits a word in canonical quoting, classifying any substitution in it.
    pub(crate) fn emit_word(&mut self, w: &Word, out: &mut String, command_position: bool) {
        if let [Part::Lit(s)] = w.parts.as_slice() {
            quote_word(s, out, command_position);
            return;
        }
        if w.parts.is_empty() {
            out.push_str("''");
            return;
        }
        let mut after_tilde = false;
        // `$x` followed by a bare name character would extend the name.
        let mut after_bare_param = false;
        for p in &w.parts {
            match p {
                Part::Lit(s) => {
                    let s = if after_tilde && let Some(rest) = s.strip_prefix('/') {
                        out.push('/');
                        rest
                    } else {
                        s.as_str()
                    };
                    let merges = after_bare_param
                        && s.chars()
                            .next()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                    if !s.is_empty() {
                        if !merges && bare_safe(s, false) {
                            out.push_str(s);
                        } else {
                            quote_into(s, out);
                        }
                    }
                }
                Part::Glob(g) => out.push_str(g),
                Part::Tilde(t) => out.push_str(t),
                Part::Param { raw, quoted, .. } => {
                    if *quoted {
                        out.push('"');
                        out.push_str(raw);
                        out.push('"');
                    } else {
                        out.push_str(raw);
                    }
                }
                Part::CmdSub { list, quoted } => {
                    if *quoted {
                        out.push('"');
                    }
                    out.push_str("$(");
                    self.nested_list(list, out);
                    out.push(')');
                    if *quoted {
                        out.push('"');
                    }
                }
                Part::ProcSub { write, list } => {
                    if self.sh_mode {
                        self.fail(
                            "unknown.bashism",
                            w.span,
                            "process substitution inside `sh -c` is not modelled",
                        );
                    }
                    out.push_str(if *write { ">(" } else { "<(" });
                    self.nested_list(list, out);
                    out.push(')');
                }
                Part::Arith { expr, quoted } => {
                    if *quoted {
                        out.push('"');
                    }
                    out.push_str("$((");
                    out.push_str(expr);
                    out.push_str("))");
                    if *quoted {
                        out.push('"');
                    }
                }
                Part::Synthetic { .. } => {}
            }
            after_tilde = matches!(p, Part::Tilde(_));
            after_bare_param =
                matches!(p, Part::Param { quoted: false, raw, .. } if !raw.ends_with('}'));
        }
    }

    fn simple(&mut self, s: &Simple, out: &mut String) {
        if !self.spend(1 + s.words.len(), s.span) {
            return;
        }
        let bare = s.words.is_empty();
        for a in &s.assigns {
            out.push_str(&a.name);
            out.push_str(if a.append { "+=" } else { "=" });
            self.emit_word(&a.value, out, false);
            out.push(' ');
            if bare {
                self.bare_assign(a);
            } else {
                self.env_assign_word(&a.name, Some(&a.value), a.span);
            }
        }
        if bare {
            if !s.assigns.is_empty() {
                out.pop();
            }
            if s.redirects.is_empty() {
                self.add(
                    "builtin.assign",
                    Class::ReadOnly,
                    s.span,
                    "sets a shell variable",
                );
            }
            self.redirects_trimmed(&s.redirects, out, s.assigns.is_empty());
            return;
        }
        // Emit the words first (classifying substitutions), then let the command's
        // handler rewrite single words if it must.
        let start = out.len();
        let mut ranges: smallvec::SmallVec<[(usize, usize); 8]> = smallvec::SmallVec::new();
        for (i, w) in s.words.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let st = out.len() - start;
            self.emit_word(w, out, i == 0);
            ranges.push((st, out.len() - start));
        }
        let mut ao = ArgvOut::default();
        let saved_depth = self.depth;
        self.argv(&s.words, 0, &mut ao);
        self.depth = saved_depth;
        if !ao.is_empty() {
            let buf = out.split_off(start);
            let mut first = true;
            for (i, (a, b)) in ranges.iter().enumerate() {
                for (_, ins) in ao.inserts.iter().filter(|(j, _)| *j == i) {
                    if !first {
                        out.push(' ');
                    }
                    out.push_str(ins);
                    first = false;
                }
                let text = match ao.rewrites.iter().rev().find(|(j, _)| *j == i) {
                    Some((_, t)) => t.as_str(),
                    None => &buf[*a..*b],
                };
                if text.is_empty() {
                    continue;
                }
                if !first {
                    out.push(' ');
                }
                if ao.dot_prefix.contains(&i) {
                    out.push_str("./");
                }
                out.push_str(text);
                first = false;
            }
            for (_, ins) in ao.inserts.iter().filter(|(j, _)| *j >= ranges.len()) {
                out.push(' ');
                out.push_str(ins);
            }
        }
        self.redirects(&s.redirects, out);
    }

    fn redirects_trimmed(&mut self, rs: &[Redirect], out: &mut String, trim_first: bool) {
        let start = out.len();
        self.redirects(rs, out);
        if trim_first && out.len() > start && out.as_bytes()[start] == b' ' {
            out.remove(start);
        }
    }

    /// `NAME=value` with no command: a shell variable.
    fn bare_assign(&mut self, a: &Assign) {
        let lit = a.value.literal_owned();
        if !(env_allowed(&a.name, lit.as_deref(), true) || local_name(&a.name)) {
            self.fail(
                "unknown.env",
                a.span,
                format!(
                    "assigning `{}` can change how later commands run (it may be exported)",
                    a.name
                ),
            );
            return;
        }
        let (pats, known) = self.pattern(&a.value);
        let may = a.value.parts.first().is_some_and(|p| {
            !matches!(p, Part::Lit(s) if !s.starts_with('-')) && !matches!(p, Part::Tilde(_))
        });
        self.bind(
            &a.name,
            Binding {
                patterns: if known { pats } else { vec!["**".to_owned()] },
                may_be_option: may || !known,
            },
        );
    }

    /// An assignment exported to a command's environment.
    pub(crate) fn env_assign_word(&mut self, name: &str, value: Option<&Word>, span: Span) {
        let lit = value.and_then(Word::literal_owned);
        if env_allowed(name, lit.as_deref(), value.is_some()) {
            return;
        }
        self.fail(
            "unknown.env",
            span,
            format!(
                "environment variable `{name}` with this value can change what the command runs"
            ),
        );
    }

    // ---- commands -------------------------------------------------------------

    /// Classifies one argv (word 0 is the command name). `off`: absolute index of
    /// `words[0]` in the simple command, for canonical rewrites.
    pub(crate) fn argv(&mut self, words: &[Word], off: usize, ao: &mut ArgvOut) {
        let Some(w0) = words.first() else { return };
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.fail("unknown.budget", w0.span, "wrappers nest too deeply");
            return;
        }
        if !self.spend(words.len(), w0.span) {
            return;
        }
        let Some(raw_name) = w0.literal() else {
            self.fail(
                "unknown.command_name",
                w0.span,
                "the command name is not a literal word",
            );
            return;
        };
        let name = match command_basename(raw_name) {
            Ok(n) => n,
            Err(why) => {
                self.fail("unknown.command_path", w0.span, why);
                return;
            }
        };
        if let Some(why) = unmodelled_builtin(name) {
            self.fail(format!("unknown.{name}"), w0.span, why);
            return;
        }
        let policy = self.policy;
        match policy.lookup(name) {
            Some(spec) => self.run_spec(spec, words, off, ao),
            None => self.fail(
                "unknown.command",
                w0.span,
                format!("`{name}` is not a command the classifier knows"),
            ),
        }
    }

    fn run_spec(&mut self, spec: &'p CmdSpec, words: &[Word], off: usize, ao: &mut ArgvOut) {
        // `CMD --help` / `CMD --version` of a known program prints and exits (getopt_long
        // and cobra both handle it before doing anything).
        if let [_, path @ .., w] = words
            && matches!(w.literal(), Some("--help" | "--version"))
            && Self::is_sub_path(spec, path)
        {
            self.add(
                format!("spec.{}.help", spec.id),
                Class::ReadOnly,
                w.span,
                format!("prints the usage or version of `{}`", spec.id),
            );
            return;
        }
        let outer_quiet = std::mem::replace(&mut self.quiet_reads, false);
        self.run_spec_inner(spec, words, off, ao);
        self.quiet_reads = outer_quiet;
    }

    /// Do `words` name a chain of subcommands of `spec` (`docker compose up`)?
    fn is_sub_path(spec: &CmdSpec, words: &[Word]) -> bool {
        let mut leaf = spec;
        for w in words {
            match w.literal().and_then(|l| leaf.find_sub(l)) {
                Some(s) if s.names[0] != "*" => leaf = s,
                _ => return false,
            }
        }
        true
    }

    fn run_spec_inner(&mut self, spec: &'p CmdSpec, words: &[Word], off: usize, ao: &mut ArgvOut) {
        if let Some(h) = spec.handler
            && let Run::Full(run) = h.run()
        {
            run(self, spec, words, off, ao);
            return;
        }
        // A relative glob (`*.log`, `*`) could expand to a file named like an option
        // (`--files0-from=…`): it runs as `./*.log`, which never can, and is read as the
        // operand it is meant to be. Only before `--` and only for strict specs.
        // Options end at `--` (a dry-run or mode flag after it is an operand).
        let dashes = words
            .iter()
            .position(|w| w.literal() == Some("--"))
            .unwrap_or(usize::MAX);
        let dotted = |i: usize, w: &Word| {
            i > 0 && i < dashes && spec.style != crate::spec::Style::Lenient && relative_glob(w)
        };
        let parsed = {
            let me: &Self = self;
            opts::parse(spec, words, &|i, w| me.may_be_option(w) && !dotted(i, w))
        };
        // Only where it matters: a command with no dangerous option reads any expansion the
        // same way, and its canonical form stays as typed.
        if let Ok(p) = &parsed
            && p.path.iter().any(|s| s.options.any_dangerous)
        {
            for (i, w) in words.iter().enumerate() {
                if dotted(i, w) && self.may_be_option(w) {
                    ao.dot_prefix.push(off + i);
                }
            }
        }
        let parsed = match parsed {
            Ok(p) => p,
            Err(u) => {
                self.fail_u(u);
                return;
            }
        };
        // A dry run or a count/list-only mode shows no file contents.
        self.quiet_reads = dry_run_on(&parsed, words, dashes)
            || parsed
                .occ
                .iter()
                .any(|o| o.opt.effects.quiet && o.word < dashes);
        // A working directory set by an option holds for this command and what it wraps.
        let saved_cwd = parsed
            .occ
            .iter()
            .any(|o| o.opt.effects.chdir)
            .then(|| self.cwd.clone());
        for o in parsed.occ.iter().filter(|o| o.opt.effects.chdir) {
            self.cwd = o.value.literal().and_then(|v| {
                let mut esc = String::with_capacity(v.len());
                paths::escape_into(v, &mut esc);
                let r = paths::resolve(&esc, self.cwd.as_deref());
                (!r.starts_with("**") && !paths::has_meta(&r)).then(|| Cow::Owned(r.into_owned()))
            });
        }
        self.apply_parsed(&parsed, words);
        for s in &parsed.path {
            // The spec loader refuses full handlers below the top level, so each is a post.
            if let Some(h) = s.handler
                && let Run::Post(run) = h.run()
            {
                run(self, &parsed, words, off, ao);
            }
        }
        if let Some(c) = saved_cwd {
            self.cwd = c;
        }
    }

    /// Generic effects of a parsed command: base class, options, operands, protect rules.
    pub(crate) fn apply_parsed(&mut self, parsed: &Parsed<'_>, words: &[Word]) {
        let leaf = parsed.leaf();
        let span = words[0].span;
        // A dry-run or mode flag after `--` is an operand to the real command (lenient
        // specs keep parsing there): it downgrades nothing (`git clean -f -- -n`).
        let dashes = words
            .iter()
            .position(|w| w.literal() == Some("--"))
            .unwrap_or(usize::MAX);
        let dry = dry_run_on(parsed, words, dashes);
        let mode = parsed
            .occ
            .iter()
            .filter(|o| o.word < dashes || o.opt.effects.mode > Some(leaf.class))
            .filter_map(|o| o.opt.effects.mode)
            .max();
        let base = if dry {
            leaf.dry_run_class
        } else {
            mode.unwrap_or(leaf.class)
        };
        let reason = if dry {
            format!("{} (dry run)", leaf.reason)
        } else {
            leaf.reason.clone()
        };
        // Name the rule after what was typed (`spec.git.log`, `spec.podman.ps`).
        let mut rule = String::with_capacity(32);
        rule.push_str("spec.");
        let typed0 = words[0]
            .literal()
            .map(|n| n.rsplit('/').next().unwrap_or(n));
        rule.push_str(typed0.unwrap_or(&leaf.id));
        for &i in &parsed.sub_words {
            rule.push('.');
            rule.push_str(words[i].literal().unwrap_or("?"));
        }
        self.add(rule, base, span, reason);
        let shown = || crate::opts::shown(words, &parsed.sub_words, &parsed.path[0].id);

        let mut recursive = false;
        let mut pattern_given = false;
        for o in &parsed.occ {
            let fx = &o.opt.effects;
            recursive |= fx.recursive;
            // grep's `-d recurse` (`--directories=rec`: GNU takes an abbreviated action) is
            // `-r` spelled as a value; a value known only at run time may be it.
            if o.opt.id == "--directories" {
                recursive |= o
                    .value
                    .literal()
                    .is_none_or(|v| !v.is_empty() && "recurse".starts_with(v));
            }
            pattern_given |= fx.pattern;
            let ospan = words[o.word].span;
            if fx.unknown {
                self.fail(
                    "unknown.option",
                    ospan,
                    format!("option `{}` of `{}` is not modelled", o.opt.id, shown()),
                );
            }
            if let Some(c) = fx.raise
                && !dry
            {
                self.add(
                    format!("option.{}", leaf.id),
                    c,
                    ospan,
                    format!("option `{}` of `{}` changes state", o.opt.id, shown()),
                );
            }
            // A dry run still writes its log (`rsync -n --log-file=F`, marked `!always`).
            if fx.write && (!dry || fx.always) {
                self.write_value(&o.value, ospan, &format!("`{}` writes", o.opt.id));
            }
            if fx.read || fx.rread {
                self.read_value(&o.value, ospan, fx.rread);
            }
        }

        // Operand roles (a `pattern` role is filled by an option such as `grep -e`).
        let ops = &parsed.operands;
        let has_pat = leaf.operands.has_pattern();
        let skip = usize::from(has_pat && !pattern_given && !ops.is_empty());
        let total = ops.len() - skip + usize::from(has_pat);
        let mut read_given = false;
        let has_write = leaf.operands.has_write();
        for (j, &idx) in ops.iter().skip(skip).enumerate() {
            let role = leaf.operands.role(j + usize::from(has_pat), total);
            let w = &words[idx];
            read_given |= matches!(role, Role::Read | Role::RRead | Role::Tree);
            // `uniq *`: a glob or unquoted expansion may become several operands, and a
            // later one lands in the output position.
            if role != Role::Write && !dry && has_write && may_split(w) {
                self.write_target(w, &format!("`{}` writes", shown()));
            }
            match role {
                Role::Any | Role::Pattern | Role::Cmd => {}
                Role::Read => self.read_target(w, false),
                Role::RRead => self.read_target(w, recursive),
                Role::Tree => self.read_target(w, true),
                Role::Write => {
                    if !dry {
                        self.write_target(w, &format!("`{}` writes", shown()));
                    }
                }
                Role::Config => {
                    if !dry {
                        self.add(
                            format!("operand.{}", leaf.id),
                            Class::ConfigMutation,
                            w.span,
                            format!("`{}` with an operand changes state", shown()),
                        );
                    }
                }
                Role::Destructive => {
                    if !dry {
                        self.add(
                            format!("operand.{}", leaf.id),
                            Class::Destructive,
                            w.span,
                            format!("`{}` with an operand is destructive", shown()),
                        );
                    }
                }
                Role::Unknown => self.fail(
                    "unknown.operand",
                    w.span,
                    format!("`{}` runs or interprets this operand", shown()),
                ),
            }
        }

        // No path given: a recursive search reads the working directory, exactly as if
        // `.` had been typed (`grep -r password` is `grep -r password .`).
        if leaf.implicit_dot && !read_given {
            let role = leaf
                .operands
                .role(usize::from(has_pat), usize::from(has_pat) + 1);
            let rec = match role {
                Role::Tree => true,
                Role::RRead => recursive,
                _ => false,
            };
            if rec {
                self.read_patterns(&[".".to_owned()], true, span);
            }
        }

        if !dry {
            for p in &leaf.protect {
                if !p.with_options.is_empty() && !p.with_options.iter().any(|id| parsed.has(id)) {
                    continue;
                }
                for &idx in ops {
                    let w = &words[idx];
                    let hit = match w.literal() {
                        Some(v) if !paths::has_meta(v) => p.operands.iter().any(|g| g.matches(v)),
                        Some(v) => p.operands.iter().any(|g| g.overlaps(v)),
                        None => {
                            let (pats, _) = self.pattern(w);
                            pats.iter()
                                .any(|x| p.operands.iter().any(|g| g.overlaps(x)))
                        }
                    };
                    if hit {
                        self.add(
                            format!("protect.{}", leaf.id),
                            p.class,
                            w.span,
                            p.reason.clone(),
                        );
                        break;
                    }
                }
            }
        }
    }

    pub(crate) fn write_value(&mut self, v: &Val<'_>, span: Span, what: &str) {
        match v {
            Val::None => {}
            Val::Lit(s) => self.write_literal(s, what, span),
            Val::Word(w) => self.write_target(w, what),
            Val::Dyn => self.fail(
                "unknown.dynamic_target",
                span,
                format!("{what} a path that is only known at run time"),
            ),
        }
    }

    pub(crate) fn read_value(&mut self, v: &Val<'_>, span: Span, recursive: bool) {
        match v {
            Val::None => {}
            Val::Lit(s) => {
                let mut e = String::new();
                paths::escape_into(s, &mut e);
                self.read_patterns(&[e], recursive, span);
            }
            Val::Word(w) => self.read_target(w, recursive),
            Val::Dyn => self.read_patterns(&["**".to_owned()], recursive, span),
        }
    }

    /// Classifies `text` as a shell script (for `sh -c`, `ssh host cmd`, `watch`) and
    /// returns its canonical form.
    pub(crate) fn nested_script(
        &mut self,
        text: &str,
        span: Span,
        sh_mode: bool,
    ) -> Option<String> {
        // Always lowered with bash rules (the stricter superset); `sh_mode` only keeps
        // bash-only syntax out of the canonical text the other shell will re-read.
        match Lowerer::lower(text, self.depth + 1, false, Some(span)) {
            Ok(list) => {
                let saved = (self.sh_mode, self.cwd.clone(), self.vars.len());
                self.sh_mode = sh_mode;
                self.cwd = Some(Cow::Borrowed("~"));
                let mut out = String::with_capacity(text.len() + 8);
                self.depth += 1;
                self.list(&list, &mut out);
                self.depth -= 1;
                self.sh_mode = saved.0;
                self.cwd = saved.1;
                self.vars.truncate(saved.2);
                Some(out)
            }
            Err(u) => {
                self.fail_u(u);
                None
            }
        }
    }
}

/// Can the word expand to more than one argument (a glob, an unquoted expansion)?
fn may_split(w: &Word) -> bool {
    w.parts.iter().any(|p| match p {
        Part::Glob(_) => true,
        Part::Param { quoted, .. } | Part::CmdSub { quoted, .. } => !quoted,
        _ => false,
    })
}

/// Names a script may use for its own variables without asking: they contain a lower
/// case letter (the environment's variables are upper case by convention) and are not
/// one of the lower case variables programs read (`http_proxy` and the like). Upper case
/// names must be on the harmless list of [`env_allowed`]: a variable inherited from the
/// environment stays exported, so assigning it changes what later commands see.
pub(crate) fn local_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.to_ascii_lowercase().ends_with("_proxy")
        && !name.to_ascii_lowercase().starts_with("npm_config_")
        && !matches!(name, "no_proxy" | "auto_resume" | "histchars")
}

/// A builtin assigns the shell variable `name` (`read`, `printf -v`, `wait -p`, a `for`
/// loop): it must be a plain name (bash evaluates the subscript of `a[…]`) and one that
/// cannot change what later commands do.
pub(crate) fn assign_name(e: &mut Engine<'_>, name: Option<&str>, span: Span, what: &str) {
    match name {
        Some(n) if crate::lower::is_name(n) => {
            if local_name(n) || env_allowed(n, None, true) || n == "REPLY" {
                e.bind_unknown(n);
            } else {
                e.fail(
                    "unknown.env",
                    span,
                    format!("`{what}` assigns `{n}`, which can change how later commands run"),
                );
            }
        }
        _ => e.fail(
            "unknown.subscript",
            span,
            format!("`{what}` into anything but a plain variable name evaluates code"),
        ),
    }
}

/// Environment variables a command may receive.
pub(crate) fn env_allowed(name: &str, value: Option<&str>, has_value: bool) -> bool {
    const SAFE: &[&str] = &[
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "DEBIAN_FRONTEND",
        "SYSTEMD_COLORS",
        "SYSTEMD_URLIFY",
        "NEEDRESTART_MODE",
        "APT_LISTCHANGES_FRONTEND",
        "DEBCONF_NONINTERACTIVE_SEEN",
        "UCF_FORCE_CONFFOLD",
        "UCF_FORCE_CONFFNEW",
        "CLICOLOR",
        "FORCE_COLOR",
        "SYSTEMD_LESS",
        // Which backup repository, like `-r` (not its password or an rsh command).
        "RESTIC_REPOSITORY",
        "BORG_REPO",
    ];
    if SAFE.contains(&name) {
        return true;
    }
    // Zone, locale and terminal names are looked up as files: a value that is a path
    // (`TZ=/dev/watchdog`, `TZ=:/proc/…`, `LANG=../../x`) makes every later program open
    // that file, and opening some devices has effects (a watchdog arms and reboots).
    if matches!(name, "TZ" | "LANG" | "LANGUAGE" | "TERM") || name.starts_with("LC_") {
        return !has_value
            || value.is_some_and(|v| {
                let v = v.trim_start_matches(':');
                !v.starts_with('/') && !v.contains("..")
            });
    }
    // Pagers may only be switched off; less only made safer (the canonical form sets these).
    match name {
        "PAGER" | "SYSTEMD_PAGER" | "MANPAGER" | "GIT_PAGER" => {
            return has_value && matches!(value, Some("" | "cat"));
        }
        "GIT_TERMINAL_PROMPT" => return value == Some("0"),
        // Only the standard system directories: names still mean what the specs say.
        "PATH" => {
            return value.is_some_and(|v| {
                v.split(':').all(|d| {
                    matches!(
                        d,
                        "/usr/local/sbin"
                            | "/usr/local/bin"
                            | "/usr/sbin"
                            | "/usr/bin"
                            | "/sbin"
                            | "/bin"
                    )
                })
            });
        }
        "LESSSECURE" => return value == Some("1"),
        // A kubeconfig can name credential programs: only the operator-managed ones.
        "KUBECONFIG" => {
            return value.is_some_and(|v| {
                ["/etc/", "/root/.kube/", "~/.kube/"]
                    .iter()
                    .any(|d| v.starts_with(d))
                    && !v.contains("..")
            });
        }
        "LESSOPEN" | "LESSCLOSE" => return value == Some(""),
        _ => {}
    }
    false
}

/// Does this substitution print only names or numbers (no `/`, no leading `-`)? `$(pgrep
/// -o postgres)` is a PID, `$(docker ps -q)` container ids, `$(hostname)` a name.
fn token_output(list: &crate::ir::List) -> bool {
    let [item] = list.items.as_slice() else {
        return false;
    };
    let Some(crate::ir::Cmd::Simple(s)) = item.first.cmds.last().filter(|_| item.rest.is_empty())
    else {
        return false;
    };
    let mut words: Vec<&str> = Vec::with_capacity(s.words.len());
    for w in &s.words {
        match w.literal() {
            Some(l) => words.push(l),
            None => return false,
        }
    }
    if words.first() == Some(&"sudo") {
        words.remove(0);
    }
    match words.as_slice() {
        [
            "pgrep" | "pidof" | "nproc" | "whoami" | "hostname" | "id",
            ..,
        ] => true,
        ["docker" | "podman" | "crictl", "ps", rest @ ..] => rest
            .iter()
            .any(|w| matches!(*w, "-q" | "--quiet" | "-aq" | "-qa")),
        _ => false,
    }
}

/// Resolves `/usr/bin/ls` to `ls`; anything else with a slash is refused.
fn command_basename(raw: &str) -> Result<&str, String> {
    if raw.is_empty() {
        return Err("the command name is empty".to_owned());
    }
    if !raw.contains('/') {
        return Ok(raw);
    }
    for dir in ["/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"] {
        if let Some(rest) = raw.strip_prefix(dir)
            && !rest.is_empty()
            && !rest.contains('/')
        {
            return Ok(rest);
        }
    }
    // PostgreSQL's versioned, package-owned tools (`pg_controldata` is not on PATH).
    if let Some(rest) = raw.strip_prefix("/usr/lib/postgresql/")
        && let Some((version, tail)) = rest.split_once("/bin/")
        && !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_digit())
        && !tail.is_empty()
        && !tail.contains('/')
    {
        return Ok(tail);
    }
    Err(format!(
        "`{raw}` runs a program by path; only the standard system directories are resolved"
    ))
}

/// Builtins that rewrite the shell itself.
fn unmodelled_builtin(name: &str) -> Option<String> {
    let why = match name {
        "eval" => "`eval` runs a string as shell code",
        "source" | "." => "`source` runs a file as shell code",
        "alias" | "unalias" => "aliases change what names mean",
        "trap" => "traps run code on signals",
        "declare" | "typeset" | "local" | "readonly" => "attribute declarations are not modelled",
        "let" => "`let` evaluates arithmetic that can run code",
        "shopt" => "`shopt` changes how the shell parses",
        "enable" => "`enable` loads or hides builtins",
        "mapfile" | "readarray" => "`mapfile` callbacks can run code",
        "fc" | "history" => "history commands re-run commands",
        "bind" | "complete" | "compgen" | "compopt" => "interactive builtins are not modelled",
        "getopts" => "`getopts` is not modelled",
        "coproc" | "function" => "this construct is not modelled",
        "disown" | "fg" | "bg" | "jobs" | "suspend" | "logout" => "job control is not modelled",
        "hash" => "`hash` can redirect command names",
        _ => return None,
    };
    Some(why.to_owned())
}

/// Characters that never need quoting in a word.
fn bare_safe(s: &str, command_position: bool) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%' | b'-'
                )
                || (b == b'=' && !command_position)
        })
        && !(command_position && is_reserved(s))
}

fn is_reserved(s: &str) -> bool {
    matches!(
        s,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "while"
            | "until"
            | "for"
            | "in"
            | "function"
            | "select"
            | "time"
            | "coproc"
    )
}

pub(crate) fn quote_word(s: &str, out: &mut String, command_position: bool) {
    if bare_safe(s, command_position) {
        out.push_str(s);
    } else {
        quote_into(s, out);
    }
}

/// Single-quotes `s` (always).
pub(crate) fn quote_into(s: &str, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('\'');
    let mut parts = s.split('\'');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for p in parts {
        out.push_str("'\\''");
        out.push_str(p);
    }
    out.push('\'');
}

/// Quotes `s` as one shell word (bare when safe).
pub(crate) fn quoted(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    quote_word(s, &mut o, false);
    o
}

/// A word that starts with a glob (`*`, `?*.log`, `[!a]*`): relative, and expanded by the
/// shell into names that may start with `-`.
fn relative_glob(w: &Word) -> bool {
    matches!(w.parts.first(), Some(Part::Glob(_)))
}

/// Whether a dry-run flag is in effect: the LAST dry-run option before `--` decides
/// (kubectl and helm: last flag wins), and a value that turns it off (`--dry-run=none`,
/// `=false`) or is only known at run time is no dry run. Getopt::Long booleans (Proxmox
/// CLIs) and proxmox-router take their value from the next word (`--dry-run 0`): an
/// operand right after the flag that turns it off is no dry run either.
fn dry_run_on(parsed: &crate::opts::Parsed<'_>, words: &[Word], dashes: usize) -> bool {
    let last = parsed
        .occ
        .iter()
        .filter(|o| o.opt.effects.dryrun && o.word < dashes)
        .max_by_key(|o| o.word);
    let on = |v: &str| {
        !matches!(
            v.to_ascii_lowercase().as_str(),
            "none" | "false" | "0" | "no" | "off" | ""
        )
    };
    match last {
        None => false,
        Some(o) if !o.value.is_some() => {
            let next = o.word + 1;
            // A value known only at run time may be `0`: no dry run (fail closed).
            !parsed.operands.contains(&next) || words[next].literal().is_some_and(on)
        }
        Some(o) => o.value.literal().is_some_and(on),
    }
}

/// An input redirection that gives the command data (`< /dev/null` gives none).
fn feeds_stdin(r: &crate::ir::Redirect) -> bool {
    use crate::ir::{RedirOp, RedirTarget};
    let input = matches!(r.fd, None | Some(0))
        && matches!(
            r.op,
            RedirOp::Read
                | RedirOp::ReadWrite
                | RedirOp::DupIn
                | RedirOp::HereString
                | RedirOp::HereDoc
        );
    let null = matches!(&r.target, RedirTarget::Word(w) if w.literal() == Some("/dev/null"))
        && matches!(r.op, RedirOp::Read);
    input && !null
}

/// A pipeline stage that prints nothing but a newline (`echo | openssl s_client`).
fn empty_producer(c: &Cmd) -> bool {
    let Cmd::Simple(s) = c else {
        return false;
    };
    let words: Vec<Option<&str>> = s.words.iter().map(crate::ir::Word::literal).collect();
    s.assigns.is_empty()
        && s.redirects.is_empty()
        && matches!(
            words.as_slice(),
            [Some("echo" | "true" | ":")] | [Some("echo"), Some("-n")] | [Some("printf"), Some("")]
        )
}
