//! The classifier's output types.

use serde::{Deserialize, Serialize};

/// How much approval a command needs: the one command-class enum every crate shares
/// (`nomos_base::CommandClass`), called `Class` here where it is the classifier's verdict.
pub use nomos_base::CommandClass as Class;

/// A byte range in the classified command text (half-open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end`.
    pub const fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }
}

/// One reason that contributed to a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable rule identifier, e.g. `spec.systemctl.stop`, `redirect.protected`, `unknown.eval`.
    pub rule: String,
    /// The class this finding alone demands.
    pub class: Class,
    /// True when the classifier could not model the construct and failed closed.
    pub unknown: bool,
    /// Where in the command text this finding applies.
    pub span: Span,
    /// A sentence for the operator.
    pub reason: String,
}

/// The classifier's verdict on one command (which may be a whole script).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The maximum class over every finding.
    pub class: Class,
    /// True when any part could not be modelled; `class` is then `Destructive`.
    pub unknown: bool,
    /// Every finding, in source order of discovery.
    pub findings: Vec<Finding>,
    /// The re-quoted command the executor must run instead of the original text.
    /// `None` when the command could not be lowered into the IR at all.
    pub canonical: Option<String>,
}

impl Decision {
    /// The finding that decided the class: the first one at the maximum class,
    /// preferring fail-closed findings.
    pub fn primary(&self) -> Option<&Finding> {
        let at_max = |f: &&Finding| f.class == self.class;
        self.findings
            .iter()
            .filter(at_max)
            .find(|f| f.unknown)
            .or_else(|| self.findings.iter().find(at_max))
            .or_else(|| self.findings.first())
    }

    /// Rule id of [`Decision::primary`], or `read_only` when nothing was found.
    pub fn rule(&self) -> &str {
        self.primary().map_or("read_only", |f| f.rule.as_str())
    }

    /// Reason of [`Decision::primary`].
    pub fn reason(&self) -> &str {
        self.primary()
            .map_or("nothing to run", |f| f.reason.as_str())
    }

    /// `rule: reason` of [`Decision::primary`], the one line every face shows (approval
    /// card, CLI prompt, `nomos policy classify`), so they never disagree.
    pub fn summary(&self) -> String {
        match self.primary() {
            Some(f) => format!("{}: {}", f.rule, f.reason),
            None => "read_only: nothing to run".to_owned(),
        }
    }
}
