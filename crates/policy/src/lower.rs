//! Parsing with brush-parser and lowering of its AST into the IR.
//!
//! Everything the IR does not model is rejected here with an [`Unsupported`] error,
//! which the classifier turns into a fail-closed (unknown, destructive) decision.

use brush_parser::ast;
use brush_parser::word::{self as bword, Parameter, ParameterExpr, TildeExpr, WordPiece};

use crate::decision::Span;
use crate::ir::{
    AndOr, AndOrOp, Assign, CaseArm, Cmd, List, Part, Parts, Pipeline, RedirOp, RedirTarget,
    Redirect, Simple, TestExpr, Word,
};

/// Longest command text the classifier accepts.
pub(crate) const MAX_INPUT: usize = 16 * 1024;
/// Deepest bracket/quote nesting accepted before handing text to the parser.
const MAX_NESTING: usize = 24;
/// Deepest nesting of re-parsed strings (substitutions, `sh -c`, `ssh host cmd`).
pub(crate) const MAX_PARSE_DEPTH: u32 = 8;

/// A construct the IR does not model.
#[derive(Debug, Clone)]
pub(crate) struct Unsupported {
    pub rule: &'static str,
    pub reason: String,
    pub span: Span,
}

impl Unsupported {
    pub(crate) fn new(rule: &'static str, reason: impl Into<String>, span: Span) -> Self {
        Self {
            rule,
            reason: reason.into(),
            span,
        }
    }
}

type Res<T> = Result<T, Unsupported>;

fn parser_options(sh_mode: bool) -> brush_parser::ParserOptions {
    brush_parser::ParserOptions {
        // Non-interactive bash has extglob off; `(` inside words is then a syntax error.
        enable_extended_globbing: false,
        posix_mode: sh_mode,
        sh_mode,
        tilde_expansion_at_word_start: true,
        tilde_expansion_after_colon: false,
        parser_impl: brush_parser::ParserImpl::Peg,
    }
}

/// Cheap checks that run before the parser sees the text: size, control characters
/// and a quote-aware nesting estimate (the parser recurses on nesting).
pub(crate) fn precheck(src: &str, span: Span) -> Res<()> {
    if src.len() > MAX_INPUT {
        return Err(Unsupported::new(
            "unknown.too_long",
            format!("command is longer than {MAX_INPUT} bytes"),
            span,
        ));
    }
    // One byte-level pass finds forbidden characters. Most bytes are ordinary and skipped
    // through a table; multi-byte sequences are decoded only at their lead byte.
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !PRECHECK_SPECIAL[usize::from(b)] {
            i += 1;
            continue;
        }
        if b >= 0x80 {
            let c = src[i..].chars().next().unwrap_or('\u{fffd}');
            let bad = match c {
                '\u{80}'..='\u{9f}' => true,
                // Bidirectional overrides and zero-width characters hide what is run.
                '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
                '\u{feff}' => true,
                _ => false,
            };
            if bad {
                return Err(control_char(c, span));
            }
            i += c.len_utf8();
            continue;
        }
        if b < 0x20 || b == 0x7f {
            return Err(control_char(char::from(b), span));
        }
        // `$\<newline>(…)` is still a substitution to bash, but only obfuscation writes it.
        if b == b'$' && bytes[i + 1..].starts_with(b"\\\n") {
            return Err(Unsupported::new(
                "unknown.obfuscation",
                "a line continuation splits a `$` expansion",
                span,
            ));
        }
        i += 1;
    }
    // The parser (and the lowering after it) recurses on nesting: refuse deep text before
    // it gets there. The estimate errs towards deeper (see `nesting`).
    if crate::nesting::cheap_bound(src) > MAX_NESTING
        && crate::nesting::max_depth(src, MAX_NESTING) > MAX_NESTING
    {
        return Err(Unsupported::new(
            "unknown.too_nested",
            format!("command nests deeper than {MAX_NESTING} levels"),
            span,
        ));
    }
    Ok(())
}

/// Bytes the precheck has to look at: control characters, non-ASCII lead and
/// continuation bytes, and `$`.
static PRECHECK_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            b'\n' | b'\t' => false,
            0..=0x1f | 0x7f..=0xff => true,
            b'$' => true,
            _ => false,
        };
        i += 1;
    }
    t
};

fn control_char(c: char, span: Span) -> Unsupported {
    Unsupported::new(
        "unknown.control_char",
        format!("command contains control character U+{:04X}", c as u32),
        span,
    )
}

/// Parses shell text into a brush AST (no lowering). Text the parser would panic on is an
/// error here (so the command asks), and a panic inside the parser is caught as one: the
/// classifier never takes the turn down with it.
pub(crate) fn parse_program(src: &str, sh_mode: bool) -> Result<ast::Program, String> {
    if let Some(fd) = oversized_fd_number(src) {
        return Err(format!(
            "the file-descriptor number `{fd}` before a redirection is out of range"
        ));
    }
    let opts = parser_options(sh_mode);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), &opts);
        parser.parse_program().map_err(|e| e.to_string())
    }))
    .unwrap_or_else(|_| Err("the shell parser failed on this text".to_owned()))
}

/// A run of digits right before `<` or `>` too large for a file descriptor (brush reads it
/// as an `i32` and panics past that). Over-approximates (a run inside a longer word counts
/// too): refusing to parse only makes the command ask.
fn oversized_fd_number(src: &str) -> Option<&str> {
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let run = &src[start..i];
        if matches!(b.get(i), Some(b'<' | b'>')) && run.parse::<i32>().is_err() {
            return Some(run);
        }
    }
    None
}

/// Maps brush's character positions to byte offsets of the original text.
struct PosMap {
    /// Byte offset of each char; empty for ASCII text (identity).
    offsets: Vec<usize>,
    len: usize,
    base: usize,
    /// For re-parsed strings every span is the span of the enclosing word.
    fixed: Option<Span>,
}

impl PosMap {
    fn new(src: &str, base: usize, fixed: Option<Span>) -> Self {
        let offsets = if src.is_ascii() || fixed.is_some() {
            Vec::new()
        } else {
            src.char_indices().map(|(i, _)| i).collect()
        };
        Self {
            offsets,
            len: src.len(),
            base,
            fixed,
        }
    }

    fn byte(&self, char_index: usize) -> usize {
        if self.offsets.is_empty() {
            self.base + char_index.min(self.len)
        } else {
            self.base + self.offsets.get(char_index).copied().unwrap_or(self.len)
        }
    }

    fn span(&self, loc: Option<&brush_parser::SourceSpan>) -> Span {
        if let Some(f) = self.fixed {
            return f;
        }
        match loc {
            Some(l) => Span::new(self.byte(l.start.index), self.byte(l.end.index)),
            None => Span::new(self.base, self.base + self.len),
        }
    }
}

/// Lowers one command text into the IR.
pub(crate) struct Lowerer {
    map: PosMap,
    depth: u32,
    sh_mode: bool,
    whole: Span,
}

impl Lowerer {
    /// `fixed`: for text re-parsed out of another word (its span is used throughout).
    pub(crate) fn lower(src: &str, depth: u32, sh_mode: bool, fixed: Option<Span>) -> Res<List> {
        let whole = fixed.unwrap_or(Span::new(0, src.len()));
        if depth > MAX_PARSE_DEPTH {
            return Err(Unsupported::new(
                "unknown.budget",
                "commands nest too deeply to classify",
                whole,
            ));
        }
        precheck(src, whole)?;
        let mut program = parse_program(src, sh_mode).map_err(|e| {
            Unsupported::new("unknown.parse", format!("shell syntax error: {e}"), whole)
        })?;
        let lw = Self {
            map: PosMap::new(src, 0, fixed),
            depth,
            sh_mode,
            whole,
        };
        lw.program(&mut program)
    }

    fn program(&self, p: &mut ast::Program) -> Res<List> {
        let mut list = List::default();
        for cl in &mut p.complete_commands {
            self.compound_list_into(cl, &mut list)?;
        }
        Ok(list)
    }

    fn compound_list_into(&self, cl: &mut ast::CompoundList, out: &mut List) -> Res<()> {
        out.items.reserve(cl.0.len());
        for ast::CompoundListItem(ao, sep) in &mut cl.0 {
            if matches!(sep, ast::SeparatorOperator::Async) {
                return Err(Unsupported::new(
                    "unknown.background",
                    "background jobs (`&`) are not modelled",
                    self.whole,
                ));
            }
            out.items.push(self.and_or(ao)?);
        }
        Ok(())
    }

    fn compound_list(&self, cl: &mut ast::CompoundList) -> Res<List> {
        let mut l = List::default();
        self.compound_list_into(cl, &mut l)?;
        Ok(l)
    }

    fn and_or(&self, ao: &mut ast::AndOrList) -> Res<AndOr> {
        let first = self.pipeline(&mut ao.first)?;
        let mut rest = Vec::with_capacity(ao.additional.len());
        for a in &mut ao.additional {
            match a {
                ast::AndOr::And(p) => rest.push((AndOrOp::And, self.pipeline(p)?)),
                ast::AndOr::Or(p) => rest.push((AndOrOp::Or, self.pipeline(p)?)),
            }
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&self, p: &mut ast::Pipeline) -> Res<Pipeline> {
        let mut cmds = Vec::with_capacity(p.seq.len());
        for c in &mut p.seq {
            cmds.push(self.command(c)?);
        }
        Ok(Pipeline {
            bang: p.bang,
            timed: p.timed.is_some(),
            cmds,
        })
    }

    fn redirect_list(&self, r: Option<&mut ast::RedirectList>) -> Res<Vec<Redirect>> {
        let mut out = Vec::new();
        if let Some(r) = r {
            for io in &mut r.0 {
                out.push(self.redirect(io)?);
            }
        }
        Ok(out)
    }

    fn command(&self, c: &mut ast::Command) -> Res<Cmd> {
        match c {
            ast::Command::Simple(s) => self.simple(s).map(Cmd::Simple),
            ast::Command::Compound(cc, redirs) => {
                let redirects = self.redirect_list(redirs.as_mut())?;
                self.compound(cc, redirects)
            }
            ast::Command::Function(f) => Err(Unsupported::new(
                "unknown.function",
                format!("function definition `{}` is not modelled", f.fname.value),
                self.map.span(f.fname.loc.as_ref()),
            )),
            ast::Command::ExtendedTest(t, redirs) => {
                let redirects = self.redirect_list(redirs.as_mut())?;
                let span = self.map.span(Some(&t.loc));
                if self.sh_mode {
                    return Err(Unsupported::new(
                        "unknown.bashism",
                        "`[[` is not available in sh",
                        span,
                    ));
                }
                Ok(Cmd::Test(self.test_expr(&t.expr, span)?, redirects, span))
            }
        }
    }

    fn compound(&self, cc: &mut ast::CompoundCommand, redirects: Vec<Redirect>) -> Res<Cmd> {
        use ast::CompoundCommand as C;
        let until = matches!(cc, C::UntilClause(_));
        match cc {
            C::BraceGroup(b) => Ok(Cmd::Group(self.compound_list(&mut b.list)?, redirects)),
            C::Subshell(s) => Ok(Cmd::Subshell(self.compound_list(&mut s.list)?, redirects)),
            C::ForClause(f) => {
                if !is_name(&f.variable_name) {
                    return Err(Unsupported::new(
                        "unknown.for",
                        "loop variable is not a plain name",
                        self.map.span(Some(&f.loc)),
                    ));
                }
                let words = match &f.values {
                    Some(ws) => {
                        let mut v = Vec::with_capacity(ws.len());
                        for w in ws {
                            v.push(self.word(w)?);
                        }
                        Some(v)
                    }
                    None => None,
                };
                Ok(Cmd::For {
                    var: f.variable_name.clone(),
                    words,
                    body: self.compound_list(&mut f.body.list)?,
                    redirects,
                })
            }
            C::CaseClause(c) => {
                let word = self.word(&c.value)?;
                let mut arms = Vec::with_capacity(c.cases.len());
                for item in &mut c.cases {
                    let mut patterns = Vec::with_capacity(item.patterns.len());
                    for p in &item.patterns {
                        patterns.push(self.word(p)?);
                    }
                    let body = match &mut item.cmd {
                        Some(l) => self.compound_list(l)?,
                        None => List::default(),
                    };
                    let terminator = match item.post_action {
                        ast::CaseItemPostAction::ExitCase => ";;",
                        ast::CaseItemPostAction::UnconditionallyExecuteNextCaseItem => ";&",
                        ast::CaseItemPostAction::ContinueEvaluatingCases => ";;&",
                    };
                    arms.push(CaseArm {
                        patterns,
                        body,
                        terminator,
                    });
                }
                Ok(Cmd::Case {
                    word,
                    arms,
                    redirects,
                })
            }
            C::IfClause(i) => {
                let mut branches = vec![(
                    self.compound_list(&mut i.condition)?,
                    self.compound_list(&mut i.then)?,
                )];
                let mut otherwise = None;
                if let Some(elses) = &mut i.elses {
                    for e in elses {
                        match &mut e.condition {
                            Some(c) => branches
                                .push((self.compound_list(c)?, self.compound_list(&mut e.body)?)),
                            None => otherwise = Some(self.compound_list(&mut e.body)?),
                        }
                    }
                }
                Ok(Cmd::If {
                    branches,
                    otherwise,
                    redirects,
                })
            }
            C::WhileClause(w) | C::UntilClause(w) => Ok(Cmd::While {
                until,
                cond: self.compound_list(&mut w.0)?,
                body: self.compound_list(&mut w.1.list)?,
                redirects,
            }),
            C::Arithmetic(a) => Err(Unsupported::new(
                "unknown.arithmetic",
                "arithmetic commands `(( ))` are not modelled",
                self.map.span(Some(&a.loc)),
            )),
            C::ArithmeticForClause(a) => Err(Unsupported::new(
                "unknown.arithmetic",
                "arithmetic for loops are not modelled",
                self.map.span(Some(&a.loc)),
            )),
            C::Coprocess(c) => Err(Unsupported::new(
                "unknown.coproc",
                "coprocesses are not modelled",
                self.map.span(Some(&c.loc)),
            )),
        }
    }

    fn test_expr(&self, e: &ast::ExtendedTestExpr, span: Span) -> Res<TestExpr> {
        use ast::ExtendedTestExpr as E;
        Ok(match e {
            E::And(a, b) => TestExpr::And(
                Box::new(self.test_expr(a, span)?),
                Box::new(self.test_expr(b, span)?),
            ),
            E::Or(a, b) => TestExpr::Or(
                Box::new(self.test_expr(a, span)?),
                Box::new(self.test_expr(b, span)?),
            ),
            E::Not(a) => TestExpr::Not(Box::new(self.test_expr(a, span)?)),
            E::Parenthesized(a) => TestExpr::Paren(Box::new(self.test_expr(a, span)?)),
            E::UnaryTest(op, w) => {
                let word = self.word(w)?;
                if matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) && !word.literal().is_some_and(is_name)
                {
                    // `-v 'a[$(cmd)]'` evaluates the subscript.
                    return Err(Unsupported::new(
                        "unknown.subscript",
                        "`-v` with anything but a plain variable name evaluates code",
                        word.span,
                    ));
                }
                TestExpr::Unary(op.to_string(), word)
            }
            E::BinaryTest(op, l, r) => {
                use ast::BinaryPredicate as B;
                let lw = self.word(l)?;
                let rw = self.word(r)?;
                match op {
                    B::StringMatchesRegex => {
                        return Err(Unsupported::new(
                            "unknown.regex_test",
                            "`=~` tests are not modelled",
                            span,
                        ));
                    }
                    B::ArithmeticEqualTo
                    | B::ArithmeticNotEqualTo
                    | B::ArithmeticLessThan
                    | B::ArithmeticLessThanOrEqualTo
                    | B::ArithmeticGreaterThan
                    | B::ArithmeticGreaterThanOrEqualTo => {
                        // Operands are evaluated as arithmetic: `'a[$(cmd)]' -eq 1` runs cmd.
                        for w in [&lw, &rw] {
                            if !w.literal().is_some_and(is_integer) {
                                return Err(Unsupported::new(
                                    "unknown.arithmetic",
                                    "arithmetic comparison operands must be integer literals",
                                    w.span,
                                ));
                            }
                        }
                    }
                    _ => {}
                }
                TestExpr::Binary(op.to_string(), lw, rw)
            }
        })
    }

    fn simple(&self, s: &mut ast::SimpleCommand) -> Res<Simple> {
        let mut assigns = Vec::new();
        let n = s.prefix.as_ref().map_or(0, |p| p.0.len())
            + s.suffix.as_ref().map_or(0, |p| p.0.len())
            + 1;
        let mut words = Vec::with_capacity(n);
        let mut redirects = Vec::new();
        let mut start = usize::MAX;
        let mut end = 0usize;
        let mut note = |sp: Span| {
            start = start.min(sp.start);
            end = end.max(sp.end);
        };
        if let Some(prefix) = &mut s.prefix {
            for item in &mut prefix.0 {
                match item {
                    ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                        let r = self.redirect(r)?;
                        note(r.span);
                        redirects.push(r);
                    }
                    ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                        let a = self.assignment(a, w)?;
                        note(a.span);
                        assigns.push(a);
                    }
                    ast::CommandPrefixOrSuffixItem::Word(w) => {
                        let w = self.word_take(w)?;
                        note(w.span);
                        words.push(w);
                    }
                    ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                        let w = self.proc_sub(kind, sub)?;
                        note(w.span);
                        words.push(w);
                    }
                }
            }
        }
        if let Some(w) = &mut s.word_or_name {
            let w = self.word_take(w)?;
            note(w.span);
            words.push(w);
        }
        if let Some(suffix) = &mut s.suffix {
            for item in &mut suffix.0 {
                match item {
                    ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                        let r = self.redirect(r)?;
                        note(r.span);
                        redirects.push(r);
                    }
                    // After the command name `a=b` is an ordinary argument.
                    ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)
                    | ast::CommandPrefixOrSuffixItem::Word(w) => {
                        // Brace expansion of plain arguments is modelled by doing it here:
                        // `cp f{,.bak}` is classified (and run) as `cp f f.bak`.
                        if let Some(list) = expand_braces(&w.value) {
                            let span = self.map.span(w.loc.as_ref());
                            note(span);
                            for raw in list {
                                words.push(self.decode(&raw, span, true)?);
                            }
                            continue;
                        }
                        let w = self.word_take(w)?;
                        note(w.span);
                        words.push(w);
                    }
                    ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                        let w = self.proc_sub(kind, sub)?;
                        note(w.span);
                        words.push(w);
                    }
                }
            }
        }
        let span = if start == usize::MAX {
            self.whole
        } else {
            Span::new(start, end)
        };
        Ok(Simple {
            assigns,
            words,
            redirects,
            span,
        })
    }

    fn proc_sub(
        &self,
        kind: &ast::ProcessSubstitutionKind,
        sub: &mut ast::SubshellCommand,
    ) -> Res<Word> {
        let span = self.map.span(Some(&sub.loc));
        if self.sh_mode {
            return Err(Unsupported::new(
                "unknown.bashism",
                "process substitution is not available in sh",
                span,
            ));
        }
        let list = self.compound_list(&mut sub.list)?;
        Ok(Word {
            parts: smallvec::smallvec![Part::ProcSub {
                write: matches!(kind, ast::ProcessSubstitutionKind::Write),
                list: Box::new(list),
            }],
            span,
        })
    }

    fn assignment(&self, a: &ast::Assignment, w: &ast::Word) -> Res<Assign> {
        let span = self.map.span(w.loc.as_ref());
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(..) => {
                return Err(Unsupported::new(
                    "unknown.subscript",
                    "array element assignments evaluate their subscript",
                    span,
                ));
            }
        };
        let value = match &a.value {
            ast::AssignmentValue::Scalar(v) => {
                let mut vw = self.decode(&v.value, span, false)?;
                vw.span = span;
                vw
            }
            ast::AssignmentValue::Array(_) => {
                return Err(Unsupported::new(
                    "unknown.array",
                    "array assignments are not modelled",
                    span,
                ));
            }
        };
        Ok(Assign {
            name,
            value,
            append: a.append,
            span,
        })
    }

    fn redirect(&self, r: &mut ast::IoRedirect) -> Res<Redirect> {
        use ast::IoFileRedirectKind as K;
        use ast::IoFileRedirectTarget as T;
        match r {
            ast::IoRedirect::File(fd, kind, target) => {
                let op = match kind {
                    K::Read => RedirOp::Read,
                    K::Write => RedirOp::Write,
                    K::Append => RedirOp::Append,
                    K::ReadAndWrite => RedirOp::ReadWrite,
                    K::Clobber => RedirOp::Clobber,
                    K::DuplicateInput => RedirOp::DupIn,
                    K::DuplicateOutput => RedirOp::DupOut,
                };
                let (target, span) = match target {
                    T::Filename(w) => {
                        let w = self.word(w)?;
                        let sp = w.span;
                        (RedirTarget::Word(w), sp)
                    }
                    T::Fd(n) => (RedirTarget::Fd(*n), self.whole),
                    T::Duplicate(w) => {
                        let sp = self.map.span(w.loc.as_ref());
                        match w.value.as_str() {
                            "-" => (RedirTarget::Close, sp),
                            v if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                                let n = v.parse::<i32>().map_err(|_| {
                                    Unsupported::new(
                                        "unknown.redirect",
                                        "file descriptor out of range",
                                        sp,
                                    )
                                })?;
                                (RedirTarget::Fd(n), sp)
                            }
                            _ if op == RedirOp::DupOut && fd.is_none() => {
                                // `>&file` is `&>file`.
                                let w = self.word(w)?;
                                return Ok(Redirect {
                                    fd: None,
                                    op: RedirOp::OutErr,
                                    target: RedirTarget::Word(w),
                                    span: sp,
                                });
                            }
                            _ => {
                                return Err(Unsupported::new(
                                    "unknown.redirect",
                                    "file descriptor duplication from a non-literal",
                                    sp,
                                ));
                            }
                        }
                    }
                    T::ProcessSubstitution(kind, sub) => {
                        let w = self.proc_sub(kind, sub)?;
                        let sp = w.span;
                        (RedirTarget::Word(w), sp)
                    }
                };
                Ok(Redirect {
                    fd: *fd,
                    op,
                    target,
                    span,
                })
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let w = self.word(w)?;
                let span = w.span;
                Ok(Redirect {
                    fd: None,
                    op: if *append {
                        RedirOp::AppendOutErr
                    } else {
                        RedirOp::OutErr
                    },
                    target: RedirTarget::Word(w),
                    span,
                })
            }
            ast::IoRedirect::HereString(fd, w) => {
                let w = self.word(w)?;
                let span = w.span;
                Ok(Redirect {
                    fd: *fd,
                    op: RedirOp::HereString,
                    target: RedirTarget::Word(w),
                    span,
                })
            }
            ast::IoRedirect::HereDocument(fd, h) => {
                let span = self.map.span(h.doc.loc.as_ref());
                let mut body = if h.requires_expansion {
                    self.decode_heredoc(&h.doc.value, span)?
                } else {
                    Word::lit(&h.doc.value, span)
                };
                if h.remove_tabs {
                    for p in &mut body.parts {
                        if let Part::Lit(s) = p {
                            *s = strip_leading_tabs(s);
                        }
                    }
                }
                body.span = span;
                Ok(Redirect {
                    fd: *fd,
                    op: RedirOp::HereDoc,
                    target: RedirTarget::HereDoc { body },
                    span,
                })
            }
        }
    }

    fn word(&self, w: &ast::Word) -> Res<Word> {
        let span = self.map.span(w.loc.as_ref());
        self.decode(&w.value, span, true)
    }

    /// [`Self::word`] for a word the AST no longer needs: a plain word's text is moved
    /// into the IR, not copied (most words of most commands).
    fn word_take(&self, w: &mut ast::Word) -> Res<Word> {
        let span = self.map.span(w.loc.as_ref());
        if is_plain(&w.value) {
            return Ok(Word {
                parts: smallvec::smallvec![Part::Lit(std::mem::take(&mut w.value))],
                span,
            });
        }
        self.decode(&w.value, span, true)
    }

    /// Decodes raw word text (quotes included) into IR parts.
    fn decode(&self, raw: &str, span: Span, tilde_ok: bool) -> Res<Word> {
        if is_plain(raw) {
            return Ok(Word {
                parts: smallvec::smallvec![Part::Lit(raw.to_owned())],
                span,
            });
        }
        let mut d = Decoder::new(span);
        if !expands(raw) {
            d.lex_plain(raw, tilde_ok)?;
        } else {
            let pieces = bword::parse(raw, &parser_options(self.sh_mode)).map_err(|e| {
                Unsupported::new("unknown.word", format!("cannot parse word: {e}"), span)
            })?;
            for p in &pieces {
                self.piece(&mut d, raw, p, false)?;
            }
        }
        d.finish()
    }

    fn decode_heredoc(&self, raw: &str, span: Span) -> Res<Word> {
        let mut d = Decoder::new(span);
        if !raw.contains(['$', '`', '\\']) {
            d.lit.push_str(raw);
            return d.finish();
        }
        let pieces = bword::parse_heredoc(raw, &parser_options(self.sh_mode)).map_err(|e| {
            Unsupported::new(
                "unknown.word",
                format!("cannot parse here-document: {e}"),
                span,
            )
        })?;
        for p in &pieces {
            self.piece(&mut d, raw, p, true)?;
        }
        d.finish()
    }

    fn piece(
        &self,
        d: &mut Decoder,
        raw: &str,
        p: &bword::WordPieceWithSource,
        quoted: bool,
    ) -> Res<()> {
        let span = d.span;
        let src = raw.get(p.start_index..p.end_index).unwrap_or("");
        match &p.piece {
            WordPiece::Text(s) => {
                if quoted {
                    d.lit.push_str(s);
                } else {
                    if s.contains(['\\', '\'', '"']) {
                        return Err(Unsupported::new(
                            "unknown.word",
                            "unexpected quoting in word",
                            span,
                        ));
                    }
                    d.lex_unquoted_text(s)?;
                }
            }
            WordPiece::SingleQuotedText(s) => d.lit.push_str(s),
            WordPiece::AnsiCQuotedText(s) => {
                if self.sh_mode {
                    return Err(Unsupported::new(
                        "unknown.bashism",
                        "`$'…'` is not available in sh",
                        span,
                    ));
                }
                decode_ansi_c(s, &mut d.lit, span)?;
            }
            WordPiece::DoubleQuotedSequence(inner) => {
                for ip in inner {
                    self.piece(d, raw, ip, true)?;
                }
            }
            WordPiece::GettextDoubleQuotedSequence(_) => {
                return Err(Unsupported::new(
                    "unknown.gettext",
                    "`$\"…\"` strings are translated at run time",
                    span,
                ));
            }
            WordPiece::TildeExpansion(t) => {
                let prefix = match t {
                    TildeExpr::Home => "~".to_owned(),
                    TildeExpr::UserHome(u) if !u.is_empty() && u.chars().all(is_user_char) => {
                        format!("~{u}")
                    }
                    _ => {
                        return Err(Unsupported::new(
                            "unknown.tilde",
                            "only `~` and `~user` tilde prefixes are modelled",
                            span,
                        ));
                    }
                };
                if !d.parts.is_empty() || !d.lit.is_empty() {
                    return Err(Unsupported::new(
                        "unknown.tilde",
                        "tilde after the word start",
                        span,
                    ));
                }
                d.parts.push(Part::Tilde(prefix));
            }
            WordPiece::ParameterExpansion(pe) => {
                let (name, plain) = check_param(pe, span)?;
                d.flush();
                d.parts.push(Part::Param {
                    name,
                    raw: src.to_owned(),
                    quoted,
                    plain,
                });
            }
            WordPiece::CommandSubstitution(s) => {
                let list = Self::lower(s, self.depth + 1, self.sh_mode, Some(span))?;
                d.flush();
                d.parts.push(Part::CmdSub {
                    list: Box::new(list),
                    quoted,
                });
            }
            WordPiece::BackquotedCommandSubstitution(s) => {
                let inner = unescape_backquoted(s);
                let list = Self::lower(&inner, self.depth + 1, self.sh_mode, Some(span))?;
                d.flush();
                d.parts.push(Part::CmdSub {
                    list: Box::new(list),
                    quoted,
                });
            }
            WordPiece::EscapeSequence(s) => {
                let mut cs = s.chars();
                let _backslash = cs.next();
                match cs.next() {
                    Some('\n') | None => {}
                    Some(c) if quoted && !matches!(c, '$' | '`' | '"' | '\\') => {
                        d.lit.push('\\');
                        d.lit.push(c);
                    }
                    Some(c) => d.lit.push(c),
                }
            }
            WordPiece::ArithmeticExpression(e) => {
                if !e.value.chars().all(|c| {
                    c.is_ascii_digit()
                        || c.is_ascii_whitespace()
                        || "+-*/%()<>=!&|^~?:,".contains(c)
                }) {
                    return Err(Unsupported::new(
                        "unknown.arithmetic",
                        "arithmetic expansion with names or subscripts can run code",
                        span,
                    ));
                }
                d.flush();
                d.parts.push(Part::Arith {
                    expr: e.value.clone(),
                    quoted,
                });
            }
        }
        Ok(())
    }
}

/// Does the raw word contain `$` or a backquote outside single quotes (so that it needs
/// the full word parser)?
/// A word with no quoting, expansion or pattern syntax at all: its text is its value.
fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b',' | b':' | b'=' | b'+' | b'@' | b'%'
                )
        })
}

fn expands(raw: &str) -> bool {
    if !raw.contains(['$', '`']) {
        return false;
    }
    let mut single = false;
    let mut double = false;
    let mut escaped = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '$' | '`' if !single => return true,
            _ => {}
        }
    }
    false
}

fn strip_leading_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        out.push_str(line.trim_start_matches('\t'));
    }
    out
}

/// Inside backquotes `\\`, `` \` `` and `\$` lose their backslash before re-parsing.
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\'
            && let Some(&n) = it.peek()
            && matches!(n, '\\' | '`' | '$')
        {
            out.push(n);
            it.next();
            continue;
        }
        out.push(c);
    }
    out
}

fn decode_ansi_c(s: &str, out: &mut String, span: Span) -> Res<()> {
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let n = it.next();
        match n {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('?') => out.push('?'),
            Some('x') => {
                let h: String = it
                    .clone()
                    .take(2)
                    .take_while(char::is_ascii_hexdigit)
                    .collect();
                let v = u8::from_str_radix(&h, 16)
                    .ok()
                    .filter(|v| (0x20..0x7f).contains(v));
                match v {
                    Some(v) => {
                        for _ in 0..h.len() {
                            it.next();
                        }
                        out.push(char::from(v));
                    }
                    None => {
                        return Err(Unsupported::new(
                            "unknown.escape",
                            "`$'…'` escape produces a control character",
                            span,
                        ));
                    }
                }
            }
            _ => {
                return Err(Unsupported::new(
                    "unknown.escape",
                    "`$'…'` escape sequence is not modelled",
                    span,
                ));
            }
        }
    }
    Ok(())
}

fn check_param(pe: &ParameterExpr, span: Span) -> Res<(String, bool)> {
    fn param_name(p: &Parameter, span: Span) -> Res<(String, bool)> {
        match p {
            Parameter::Positional(n) => Ok((n.to_string(), true)),
            Parameter::Special(s) => Ok((s.to_string(), true)),
            Parameter::Named(n) => Ok((n.clone(), true)),
            Parameter::NamedWithIndex { name, index } => {
                if index == "@" || index == "*" || is_integer(index) {
                    Ok((name.clone(), false))
                } else {
                    Err(Unsupported::new(
                        "unknown.subscript",
                        "array subscripts are evaluated as arithmetic and can run code",
                        span,
                    ))
                }
            }
            Parameter::NamedWithAllIndices { name, .. } => Ok((name.clone(), false)),
        }
    }
    fn inert(s: Option<&String>) -> bool {
        s.is_none_or(|s| !s.contains(['$', '`', '\\']))
    }
    let bad = |what: &str| Err(Unsupported::new("unknown.parameter", what.to_owned(), span));
    match pe {
        ParameterExpr::Parameter {
            parameter,
            indirect,
        } => {
            if *indirect {
                return bad("indirect expansion `${!x}` is not modelled");
            }
            param_name(parameter, span)
        }
        ParameterExpr::ParameterLength {
            parameter,
            indirect,
        } if !indirect => Ok((param_name(parameter, span)?.0, false)),
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            default_value: v,
            ..
        }
        | ParameterExpr::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value: v,
            ..
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            error_message: v,
            ..
        } if !indirect && inert(v.as_ref()) => Ok((param_name(parameter, span)?.0, false)),
        ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        } if !indirect && inert(pattern.as_ref()) => Ok((param_name(parameter, span)?.0, false)),
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } if !indirect
            && is_signed_int(&offset.value)
            && length.as_ref().is_none_or(|l| is_signed_int(&l.value)) =>
        {
            Ok((param_name(parameter, span)?.0, false))
        }
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            ..
        } if !indirect && inert(Some(pattern)) && inert(replacement.as_ref()) => {
            Ok((param_name(parameter, span)?.0, false))
        }
        ParameterExpr::Transform { .. } => {
            bad("parameter transformations like `${x@P}` can run code")
        }
        ParameterExpr::AssignDefaultValues { .. } => bad("`${x:=v}` assigns a variable"),
        _ => bad("this parameter expansion is not modelled"),
    }
}

fn is_signed_int(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t).trim();
    is_integer(t)
}

pub(crate) fn is_integer(s: &str) -> bool {
    let t = s.strip_prefix('-').unwrap_or(s);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c == b'_' || c.is_ascii_alphabetic())
        && b.all(|c| c == b'_' || c.is_ascii_alphanumeric())
}

fn is_user_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// Accumulates parts of one word.
struct Decoder {
    parts: Parts,
    lit: String,
    span: Span,
    /// Unquoted `{` seen, and a `,`/`..` after it: brace expansion if a `}` follows.
    brace_open: bool,
    brace_sep: bool,
    last_unquoted_dot: bool,
}

impl Decoder {
    fn new(span: Span) -> Self {
        Self {
            parts: Parts::new(),
            lit: String::new(),
            span,
            brace_open: false,
            brace_sep: false,
            last_unquoted_dot: false,
        }
    }

    fn flush(&mut self) {
        if !self.lit.is_empty() {
            self.parts.push(Part::Lit(std::mem::take(&mut self.lit)));
        }
    }

    fn finish(mut self) -> Res<Word> {
        self.flush();
        Ok(Word {
            parts: self.parts,
            span: self.span,
        })
    }

    /// Unquoted characters: globs and brace-expansion detection.
    fn lex_unquoted_text(&mut self, s: &str) -> Res<()> {
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let dot = c == '.';
            match c {
                '*' | '?' => {
                    self.flush();
                    self.parts.push(Part::Glob(c.to_string()));
                }
                '[' => {
                    if let Some(len) = bracket_len(&s[i..]) {
                        let class = &s[i..i + len];
                        self.flush();
                        self.parts.push(Part::Glob(class.to_owned()));
                        for _ in 1..class.chars().count() {
                            chars.next();
                        }
                    } else {
                        self.lit.push('[');
                    }
                }
                '{' => {
                    self.brace_open = true;
                    self.lit.push(c);
                }
                ',' if self.brace_open => {
                    self.brace_sep = true;
                    self.lit.push(c);
                }
                '.' if self.brace_open && self.last_unquoted_dot => {
                    self.brace_sep = true;
                    self.lit.push(c);
                }
                '}' if self.brace_open && self.brace_sep => {
                    return Err(Unsupported::new(
                        "unknown.brace_expansion",
                        "brace expansion `{a,b}` rewrites the command line",
                        self.span,
                    ));
                }
                _ => self.lit.push(c),
            }
            self.last_unquoted_dot = dot;
        }
        Ok(())
    }

    /// Words without `$` or backquotes: a small exact lexer (faster than the word parser).
    fn lex_plain(&mut self, raw: &str, tilde_ok: bool) -> Res<()> {
        let bytes = raw.as_bytes();
        let mut i = 0;
        if tilde_ok && raw.starts_with('~') {
            let end = raw.find('/').unwrap_or(raw.len());
            let user = &raw[1..end];
            if user.chars().all(is_user_char) {
                self.parts.push(Part::Tilde(raw[..end].to_owned()));
                i = end;
            }
        }
        let mut unq_start = i;
        let flush_unq = |d: &mut Self, from: usize, to: usize| -> Res<()> {
            if from < to {
                d.lex_unquoted_text(&raw[from..to])?;
            }
            Ok(())
        };
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => {
                    flush_unq(self, unq_start, i)?;
                    self.last_unquoted_dot = false;
                    match raw[i + 1..].chars().next() {
                        Some('\n') => i += 2,
                        Some(c) => {
                            self.lit.push(c);
                            i += 1 + c.len_utf8();
                        }
                        None => {
                            self.lit.push('\\');
                            i += 1;
                        }
                    }
                    unq_start = i;
                }
                b'\'' => {
                    flush_unq(self, unq_start, i)?;
                    self.last_unquoted_dot = false;
                    let rest = &raw[i + 1..];
                    let end = rest.find('\'').ok_or_else(|| {
                        Unsupported::new("unknown.word", "unterminated single quote", self.span)
                    })?;
                    self.lit.push_str(&rest[..end]);
                    i += end + 2;
                    unq_start = i;
                }
                b'"' => {
                    flush_unq(self, unq_start, i)?;
                    self.last_unquoted_dot = false;
                    i += 1;
                    loop {
                        let Some(c) = raw[i..].chars().next() else {
                            return Err(Unsupported::new(
                                "unknown.word",
                                "unterminated double quote",
                                self.span,
                            ));
                        };
                        i += c.len_utf8();
                        match c {
                            '"' => break,
                            '\\' => match raw[i..].chars().next() {
                                Some(n @ ('"' | '\\' | '$' | '`')) => {
                                    self.lit.push(n);
                                    i += 1;
                                }
                                Some('\n') => i += 1,
                                _ => self.lit.push('\\'),
                            },
                            c => self.lit.push(c),
                        }
                    }
                    unq_start = i;
                }
                _ => i += 1,
            }
        }
        flush_unq(self, unq_start, bytes.len())
    }
}

/// Length in bytes of a glob bracket expression at the start of `s`, if it is one
/// made only of plain characters.
fn bracket_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    if matches!(b.get(i), Some(b'!' | b'^')) {
        i += 1;
    }
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    while i < b.len() {
        match b[i] {
            b']' => return Some(i + 1),
            b'[' if b.get(i + 1) == Some(&b':') => {
                let close = s[i + 2..].find(":]")?;
                i += close + 4;
            }
            c if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/' | b'+') => {
                i += 1;
            }
            _ => return None,
        }
    }
    None
}

/// Most words one argument may expand to; more is treated as unmodelled.
const MAX_BRACE_WORDS: usize = 64;

/// Bash brace expansion of an argument with no quoting or expansions: `a{b,c}d`,
/// `{1..5}`, `{a..e}`, nested groups. `None` when the word has no brace expression (or one
/// that is not plain), so that the lexer's fail-closed check still applies.
pub(crate) fn expand_braces(raw: &str) -> Option<Vec<String>> {
    if raw.contains(['$', '`', '\\', '\'', '"']) || !raw.contains('{') {
        return None;
    }
    let mut out = Vec::new();
    expand_into(raw, &mut out, 0)?;
    // Bash drops words that expand to nothing (`{a,}` is `a`).
    out.retain(|w| !w.is_empty());
    (!out.is_empty() && out.len() <= MAX_BRACE_WORDS && out != [raw]).then_some(out)
}

fn expand_into(raw: &str, out: &mut Vec<String>, depth: usize) -> Option<()> {
    if depth > 8 || out.len() > MAX_BRACE_WORDS {
        return None;
    }
    let b = raw.as_bytes();
    // The first `{` whose group has a top-level comma or is a sequence.
    let mut open = 0;
    while let Some(rel) = raw[open..].find('{') {
        let start = open + rel;
        let mut level = 0;
        let mut end = None;
        let mut commas = Vec::new();
        for (k, &c) in b.iter().enumerate().skip(start) {
            match c {
                b'{' => level += 1,
                b'}' => {
                    level -= 1;
                    if level == 0 {
                        end = Some(k);
                        break;
                    }
                }
                b',' if level == 1 => commas.push(k),
                _ => {}
            }
        }
        let end = end?;
        let (pre, body, post) = (&raw[..start], &raw[start + 1..end], &raw[end + 1..]);
        let alts: Vec<String> = if !commas.is_empty() {
            let mut alts = Vec::new();
            let mut from = start + 1;
            for &c in &commas {
                alts.push(raw[from..c].to_owned());
                from = c + 1;
            }
            alts.push(raw[from..end].to_owned());
            alts
        } else if let Some(seq) = sequence(body) {
            seq
        } else {
            open = start + 1;
            continue;
        };
        for a in alts {
            expand_into(&format!("{pre}{a}{post}"), out, depth + 1)?;
        }
        return Some(());
    }
    out.push(raw.to_owned());
    Some(())
}

/// `{1..5}`, `{05..10..5}`, `{a..e}`.
fn sequence(body: &str) -> Option<Vec<String>> {
    let mut it = body.split("..");
    let (a, z) = (it.next()?, it.next()?);
    let step: i64 = match it.next() {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    if it.next().is_some() || step == 0 {
        return None;
    }
    let step = step.unsigned_abs() as usize;
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), z.parse::<i64>()) {
        let width = if a.starts_with('0') || z.starts_with('0') {
            a.len().max(z.len())
        } else {
            0
        };
        let n = (x.abs_diff(y) as usize) / step + 1;
        if n > MAX_BRACE_WORDS {
            return None;
        }
        let dir = if y >= x { 1 } else { -1 };
        return Some(
            (0..n)
                .map(|k| format!("{:0width$}", x + dir * (k * step) as i64, width = width))
                .collect(),
        );
    }
    let (mut ca, mut cz) = (a.chars(), z.chars());
    match (ca.next(), ca.next(), cz.next(), cz.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (x, y) = (x as u8, y as u8);
            let range: Vec<u8> = if x <= y {
                (x..=y).step_by(step).collect()
            } else {
                (y..=x).rev().step_by(step).collect()
            };
            Some(range.into_iter().map(|c| (c as char).to_string()).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn one(src: &str) -> Simple {
        let l = Lowerer::lower(src, 0, false, None).unwrap();
        match &l.items[0].first.cmds[0] {
            Cmd::Simple(s) => s.clone(),
            other => panic!("not simple: {other:?}"),
        }
    }

    #[test]
    fn quoting_is_removed() {
        let s = one(r#"'l's "a b" c\ d"#);
        assert_eq!(s.words[0].literal(), Some("ls"));
        assert_eq!(s.words[1].literal(), Some("a b"));
        assert_eq!(s.words[2].literal(), Some("c d"));
    }

    #[test]
    fn precheck_counts_nesting_outside_single_quotes_only() {
        let sp = Span::new(0, 0);
        let deep = format!("echo {}x{}", "(".repeat(30), ")".repeat(30));
        assert_eq!(precheck(&deep, sp).unwrap_err().rule, "unknown.too_nested");
        // Inside single quotes brackets are text.
        assert!(precheck(&format!("echo '{}'", "(".repeat(30)), sp).is_ok());
        // `\'` does not open a quote, so the brackets after it count.
        let escaped = format!("echo \\'{}", "[".repeat(30));
        assert_eq!(
            precheck(&escaped, sp).unwrap_err().rule,
            "unknown.too_nested"
        );
        // Control characters and hidden Unicode are refused even inside quotes.
        for bad in ["echo 'a\u{7}b'", "echo 'x\u{202e}y'", "ls \u{200b}-la"] {
            assert_eq!(precheck(bad, sp).unwrap_err().rule, "unknown.control_char");
        }
        assert!(precheck("echo 'héllo — ✓' \"(ok)\"", sp).is_ok());
        assert_eq!(
            precheck("echo $\\\n(id)", sp).unwrap_err().rule,
            "unknown.obfuscation"
        );
    }

    #[test]
    fn line_continuation_inside_an_expansion_is_rejected() {
        let e = Lowerer::lower("echo \"$\\\n(id)\"", 0, false, None).unwrap_err();
        assert_eq!(e.rule, "unknown.obfuscation");
    }

    #[test]
    fn brace_expansion_is_rejected() {
        assert!(Lowerer::lower("{rm,-f,x}", 0, false, None).is_err());
        assert!(Lowerer::lower("find . -exec ls {} +", 0, false, None).is_ok());
        // Quoted or expanding braces stay unmodelled.
        assert!(Lowerer::lower("echo \"$x\"{a,b}", 0, false, None).is_err());
    }

    #[test]
    fn plain_brace_expansion_is_done_here() {
        let ex = |s: &str| expand_braces(s);
        assert_eq!(ex("f{,.bak}").unwrap(), ["f", "f.bak"]);
        assert_eq!(
            ex("/etc/{hosts,hostname}").unwrap(),
            ["/etc/hosts", "/etc/hostname"]
        );
        assert_eq!(ex("a{1..3}").unwrap(), ["a1", "a2", "a3"]);
        assert_eq!(ex("{05..1..2}").unwrap(), ["05", "03", "01"]);
        assert_eq!(ex("{c..a}").unwrap(), ["c", "b", "a"]);
        assert_eq!(ex("x{a,b{1,2}}").unwrap(), ["xa", "xb1", "xb2"]);
        assert_eq!(ex("{}"), None);
        assert_eq!(ex("{a,}").unwrap(), ["a"]);
        assert_eq!(ex("{a}"), None);
        assert_eq!(ex("{1..1000}"), None);
        assert_eq!(ex("'{a,b}'"), None);
    }

    #[test]
    fn param_transform_is_rejected() {
        let e = Lowerer::lower("echo ${x@P}", 0, false, None).unwrap_err();
        assert_eq!(e.rule, "unknown.parameter");
    }

    #[test]
    fn arithmetic_subscripts_are_rejected() {
        assert!(Lowerer::lower("[[ 'a[$(id)]' -eq 1 ]]", 0, false, None).is_err());
        assert!(Lowerer::lower("echo $((a[$(id)]))", 0, false, None).is_err());
        assert!(Lowerer::lower("echo $((1+2))", 0, false, None).is_ok());
    }

    #[test]
    fn globs_and_tilde() {
        let s = one("ls ~/x/*.log '*'");
        assert!(matches!(&s.words[1].parts[0], Part::Tilde(t) if t == "~"));
        assert!(s.words[1].parts.iter().any(|p| matches!(p, Part::Glob(_))));
        assert_eq!(s.words[2].literal(), Some("*"));
    }

    #[test]
    fn background_is_rejected() {
        assert!(Lowerer::lower("sleep 1 &", 0, false, None).is_err());
    }
}
