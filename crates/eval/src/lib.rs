//! Golden conversations that catch agent regressions (DESIGN.md §12).
//!
//! A manifest (`evals/*.yaml`, format in `evals/README.md`) is one conversation: operator
//! turns, fixtures, a scripted model and assertions on the tool-call trace and the final
//! state. [`run_paths`] runs manifests against the real agent — a store on disk, the local
//! executor — with either the scripted model server (offline, what CI runs) or the model
//! configured in the environment (live, repeated for pass rates) and returns a [`Report`].
//!
//! The scripted models misbehave the way the seed audits describe (re-proposing on
//! "proceed", running before a plan, empty replies, completing twice …), so a manifest passes
//! only because the agent's gates refuse the bad action.

pub mod checks;
mod error;
pub mod manifest;
mod report;
pub mod run;
pub mod sandbox;

use std::path::{Path, PathBuf};

pub use error::EvalError;
pub use manifest::Manifest;
pub use report::{AssertionReport, ManifestReport, Report};
pub use run::{Mode, RunOutcome, run_once, run_once_in, run_once_with};

/// How to run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub mode: Mode,
    /// Runs per manifest (pass rates in live mode).
    pub repeat: u32,
    /// Offline: fail a run that leaves scripted replies unused.
    pub all_replies_used: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            mode: Mode::Offline,
            repeat: 1,
            all_replies_used: false,
        }
    }
}

/// Files to run: each path as given, a directory as its `*.yaml`/`*.yml` files (sorted).
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, EvalError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|source| EvalError::Read {
                    path: p.clone(),
                    source,
                })?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|f| is_manifest(f))
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(EvalError::NoManifests(p.display().to_string()));
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    if out.is_empty() {
        return Err(EvalError::NoManifests("(no paths given)".into()));
    }
    Ok(out)
}

fn is_manifest(p: &Path) -> bool {
    p.is_file()
        && p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Loads every manifest first (a typo fails before anything runs), then runs each
/// `options.repeat` times. A run that cannot even start counts as a failed run.
pub async fn run_paths(paths: &[PathBuf], options: Options) -> Result<Report, EvalError> {
    run_paths_in(paths, options, &nomos_llm::ProcessEnv).await
}

/// [`run_paths`], reading the live model's settings from `env`.
pub async fn run_paths_in(
    paths: &[PathBuf],
    options: Options,
    env: &dyn nomos_llm::Env,
) -> Result<Report, EvalError> {
    let manifests = expand_paths(paths)?
        .iter()
        .map(|p| Manifest::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut report = Report::new(options.mode, options.repeat.max(1));
    for m in &manifests {
        let mut runs = Vec::new();
        for _ in 0..options.repeat.max(1) {
            runs.push(run::run_once_in(m, options.mode, options.all_replies_used, env).await);
        }
        report.add(m, runs);
    }
    Ok(report)
}
