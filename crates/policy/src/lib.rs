//! Nomos policy classifier: decides for a shell command whether it is read-only, a
//! configuration change or destructive, and fails closed on everything it cannot model.
//!
//! Pipeline: [brush-parser](https://docs.rs/brush-parser) AST → a small IR (unmodelled
//! constructs are rejected) → per-command specs (TOML, embedded, self-tested at load) and
//! handlers → a [`Decision`] with findings and a canonical, re-quoted command. The
//! executor must run [`Decision::canonical`], never the original text.
//!
//! The crate is pure: no I/O, no clock, no environment.

mod classify;
mod decision;
mod handlers;
mod ir;
mod lists;
mod lower;
mod nesting;
mod opts;
mod paths;
mod scripts;
mod spec;
mod sql;

use std::sync::OnceLock;

pub use decision::{Class, Decision, Finding, Span};
pub use spec::{Policy, SpecError};

/// The embedded default spec files, in load order.
const DEFAULT_SPECS: &[(&str, &str)] = &[
    ("builtins.toml", include_str!("../specs/builtins.toml")),
    ("coreutils.toml", include_str!("../specs/coreutils.toml")),
    ("text.toml", include_str!("../specs/text.toml")),
    ("wrappers.toml", include_str!("../specs/wrappers.toml")),
    ("system.toml", include_str!("../specs/system.toml")),
    ("network.toml", include_str!("../specs/network.toml")),
    ("packages.toml", include_str!("../specs/packages.toml")),
    ("storage.toml", include_str!("../specs/storage.toml")),
    ("proxmox.toml", include_str!("../specs/proxmox.toml")),
    ("containers.toml", include_str!("../specs/containers.toml")),
    ("vcs.toml", include_str!("../specs/vcs.toml")),
    ("transfer.toml", include_str!("../specs/transfer.toml")),
    ("services.toml", include_str!("../specs/services.toml")),
    (
        "diagnostics.toml",
        include_str!("../specs/diagnostics.toml"),
    ),
    ("devops.toml", include_str!("../specs/devops.toml")),
    ("platform.toml", include_str!("../specs/platform.toml")),
];

impl Policy {
    /// The built-in spec set, loaded and validated once.
    pub fn default_policy() -> Result<&'static Policy, SpecError> {
        static DEFAULT: OnceLock<Result<Policy, SpecError>> = OnceLock::new();
        DEFAULT
            .get_or_init(|| Policy::load_files(DEFAULT_SPECS))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The built-in spec files without running their examples (tooling only).
    #[doc(hidden)]
    pub fn default_unchecked() -> Result<Policy, SpecError> {
        Policy::load_files_unchecked(DEFAULT_SPECS)
    }

    /// Classifies a command (or a whole script) with this spec set.
    pub fn classify(&self, command: &str) -> Decision {
        classify_with(self, command)
    }
}

/// Classifies `command` with the built-in spec set. Never panics; if the built-in specs
/// failed to load (a bug caught by the test suite) every command is unknown.
pub fn classify(command: &str) -> Decision {
    match Policy::default_policy() {
        Ok(p) => classify_with(p, command),
        Err(e) => Decision {
            class: Class::Destructive,
            unknown: true,
            findings: vec![Finding {
                rule: "unknown.spec_load".to_owned(),
                class: Class::Destructive,
                unknown: true,
                span: Span::new(0, command.len()),
                reason: format!("the built-in command specs failed to load: {e}"),
            }],
            canonical: None,
        },
    }
}

/// Classifies with an explicit spec set.
pub(crate) fn classify_with(policy: &Policy, command: &str) -> Decision {
    classify::classify(policy, command)
}

/// Classifies with an explicit work budget and returns the units spent (tests of the
/// budget's edge; the default budget is [`default_budget`]).
#[doc(hidden)]
pub fn classify_budgeted(command: &str, budget: u32) -> Result<(Decision, u32), SpecError> {
    let p = Policy::default_policy()?;
    Ok(classify::classify_budgeted(p, command, budget))
}

/// The work budget [`classify`] uses.
#[doc(hidden)]
pub fn default_budget() -> u32 {
    classify::DEFAULT_BUDGET
}

/// Parses `command` with the shell parser only (the benchmark's reference point).
/// Returns whether it parsed.
#[doc(hidden)]
pub fn parse_only(command: &str) -> bool {
    lower::parse_program(command, false).is_ok()
}

/// Parses and lowers `command` into the IR without classifying (benchmark breakdown).
#[doc(hidden)]
pub fn lower_only(command: &str) -> bool {
    lower::Lowerer::lower(command, 0, false, None).is_ok()
}
