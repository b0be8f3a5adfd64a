//! The project's own small shell IR. Only constructs listed here are modelled; the
//! lowering pass fails closed on everything else, and the canonical form is emitted
//! from this IR alone, so the executor can only run what the classifier saw.

use crate::decision::Span;

/// A sequence of and-or lists (`;` or newline separated).
#[derive(Debug, Clone, Default)]
pub(crate) struct List {
    pub items: Vec<AndOr>,
}

/// `a && b || c`.
#[derive(Debug, Clone)]
pub(crate) struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(AndOrOp, Pipeline)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AndOrOp {
    And,
    Or,
}

/// `[!] a | b | c`.
#[derive(Debug, Clone)]
pub(crate) struct Pipeline {
    pub bang: bool,
    pub timed: bool,
    pub cmds: Vec<Cmd>,
}

#[derive(Debug, Clone)]
pub(crate) enum Cmd {
    Simple(Simple),
    Subshell(List, Vec<Redirect>),
    Group(List, Vec<Redirect>),
    If {
        branches: Vec<(List, List)>,
        otherwise: Option<List>,
        redirects: Vec<Redirect>,
    },
    For {
        var: String,
        words: Option<Vec<Word>>,
        body: List,
        redirects: Vec<Redirect>,
    },
    While {
        until: bool,
        cond: List,
        body: List,
        redirects: Vec<Redirect>,
    },
    Case {
        word: Word,
        arms: Vec<CaseArm>,
        redirects: Vec<Redirect>,
    },
    Test(TestExpr, Vec<Redirect>, Span),
}

#[derive(Debug, Clone)]
pub(crate) struct CaseArm {
    pub patterns: Vec<Word>,
    pub body: List,
    /// `;;`, `;&` or `;;&`.
    pub terminator: &'static str,
}

/// `[[ … ]]` expressions. Arithmetic comparisons are only kept with integer literals.
#[derive(Debug, Clone)]
pub(crate) enum TestExpr {
    And(Box<TestExpr>, Box<TestExpr>),
    Or(Box<TestExpr>, Box<TestExpr>),
    Not(Box<TestExpr>),
    Paren(Box<TestExpr>),
    Unary(String, Word),
    Binary(String, Word, Word),
}

/// A simple command: `NAME=v … word … redirect …`.
#[derive(Debug, Clone)]
pub(crate) struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(crate) struct Assign {
    pub name: String,
    pub value: Word,
    pub append: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(crate) struct Redirect {
    pub fd: Option<i32>,
    pub op: RedirOp,
    pub target: RedirTarget,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `&>`
    OutErr,
    /// `&>>`
    AppendOutErr,
    /// `<<<`
    HereString,
    /// `<<` / `<<-`
    HereDoc,
}

impl RedirOp {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Read => "<",
            Self::Write => ">",
            Self::Append => ">>",
            Self::Clobber => ">|",
            Self::ReadWrite => "<>",
            Self::DupIn => "<&",
            Self::DupOut => ">&",
            Self::OutErr => "&>",
            Self::AppendOutErr => "&>>",
            Self::HereString => "<<<",
            Self::HereDoc => "<<",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum RedirTarget {
    Word(Word),
    /// `N>&M` / `N<&M`
    Fd(i32),
    /// `N>&-`
    Close,
    /// A here-document body (already decoded: expansions only when the delimiter was unquoted).
    HereDoc {
        body: Word,
    },
}

/// The parts of a word; most words are one literal, kept inline (no allocation).
pub(crate) type Parts = smallvec::SmallVec<[Part; 1]>;

/// A word after lowering: literal text and the expansions bash would perform.
#[derive(Debug, Clone, Default)]
pub(crate) struct Word {
    pub parts: Parts,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(crate) enum Part {
    /// Literal characters (quotes already removed).
    Lit(String),
    /// Unquoted glob syntax: `*`, `?` or a bracket expression.
    Glob(String),
    /// `~` or `~user` at the start of a word.
    Tilde(String),
    /// A parameter expansion; `raw` is its validated source text (`$x`, `${x%.log}`).
    Param {
        name: String,
        raw: String,
        quoted: bool,
        /// The value is the variable's value unchanged (`$x`, `${x}`).
        plain: bool,
    },
    /// `$(…)` or backquotes.
    CmdSub { list: Box<List>, quoted: bool },
    /// `<(…)` / `>(…)`.
    ProcSub { write: bool, list: Box<List> },
    /// `$((…))` with integer literals only.
    Arith { expr: String, quoted: bool },
    /// A value the classifier synthesised (xargs input, `find -exec {}`): never emitted.
    Synthetic {
        pattern: String,
        may_be_option: bool,
    },
}

impl Word {
    pub(crate) fn lit(s: &str, span: Span) -> Self {
        Self {
            parts: smallvec::smallvec![Part::Lit(s.to_owned())],
            span,
        }
    }

    /// The literal value when the word has no expansion at all.
    pub(crate) fn literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [Part::Lit(s)] => Some(s),
            _ => None,
        }
    }

    /// Literal value, joining several literal parts (rare; allocation).
    pub(crate) fn literal_owned(&self) -> Option<String> {
        if let Some(s) = self.literal() {
            return Some(s.to_owned());
        }
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                _ => return None,
            }
        }
        Some(out)
    }
}
