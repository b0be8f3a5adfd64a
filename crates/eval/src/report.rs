//! The report: per manifest and per assertion, pass/fail with a reason; a table for people
//! and JSON for machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::{EvalError, Manifest, Mode, RunOutcome};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub mode: &'static str,
    pub repeat: u32,
    pub passed: bool,
    pub manifests: Vec<ManifestReport>,
    /// Token use and cost: the agent does not expose per-run usage yet, so this is "n/a".
    pub usage: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ManifestReport {
    pub name: String,
    pub file: String,
    pub runs: u32,
    pub passed_runs: u32,
    pub passed: bool,
    /// Tool calls of the last completed run, by tool.
    pub tool_calls: BTreeMap<String, usize>,
    pub tool_calls_total: usize,
    /// Runs that could not start or finish (set-up failures), with their error code.
    pub errors: Vec<String>,
    pub assertions: Vec<AssertionReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AssertionReport {
    pub assertion: String,
    pub passed: bool,
    pub passes: u32,
    pub runs: u32,
    /// Why it failed (first failing run), or what was seen.
    pub reason: String,
}

impl Report {
    pub fn new(mode: Mode, repeat: u32) -> Self {
        Self {
            mode: mode.as_str(),
            repeat,
            passed: true,
            manifests: Vec::new(),
            usage: "n/a".into(),
        }
    }

    pub fn add(&mut self, m: &Manifest, runs: Vec<Result<RunOutcome, EvalError>>) {
        let total = u32::try_from(runs.len()).unwrap_or(u32::MAX);
        let mut assertions: Vec<AssertionReport> = Vec::new();
        let mut errors = Vec::new();
        let mut passed_runs = 0;
        let mut tool_calls = BTreeMap::new();
        for run in &runs {
            match run {
                Err(e) => errors.push(format!("[{}] {e}", e.code())),
                Ok(outcome) => {
                    if outcome.passed() {
                        passed_runs += 1;
                    }
                    tool_calls = outcome.tool_calls.clone();
                    // By position, not by label: two assertions that read alike (the same
                    // kind on the same turn with different texts) stay two rows.
                    for (i, (label, v)) in outcome.verdicts.iter().enumerate() {
                        if assertions.len() <= i {
                            let twins = outcome.verdicts[..i]
                                .iter()
                                .filter(|(l, _)| l == label)
                                .count();
                            assertions.push(AssertionReport {
                                assertion: if twins == 0 {
                                    label.clone()
                                } else {
                                    format!("{label} #{}", twins + 1)
                                },
                                passed: true,
                                passes: 0,
                                runs: 0,
                                reason: String::new(),
                            });
                        }
                        let a = &mut assertions[i];
                        a.runs += 1;
                        if v.passed {
                            a.passes += 1;
                            if a.passed {
                                a.reason = v.reason.clone();
                            }
                        } else if a.passed {
                            a.passed = false;
                            a.reason = v.reason.clone();
                        }
                    }
                }
            }
        }
        // A run that errored out counts against every assertion's rate.
        for a in &mut assertions {
            if a.runs < total {
                a.runs = total;
                a.passed = false;
            }
        }
        let passed = errors.is_empty() && passed_runs == total;
        self.passed &= passed;
        self.manifests.push(ManifestReport {
            name: m.name.clone(),
            file: m.path.display().to_string(),
            runs: total,
            passed_runs,
            passed,
            tool_calls_total: tool_calls.values().sum(),
            tool_calls,
            errors,
            assertions,
        });
    }

    /// The table printed by `nomos eval`.
    pub fn table(&self) -> String {
        let name_w = self
            .manifests
            .iter()
            .map(|m| m.name.chars().count())
            .max()
            .unwrap_or(8)
            .max(8);
        let assert_w = self
            .manifests
            .iter()
            .flat_map(|m| m.assertions.iter())
            .map(|a| a.assertion.chars().count())
            .max()
            .unwrap_or(9)
            .max(9);
        let rated = self.repeat > 1;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:name_w$}  {:assert_w$}  {:6}  TOOL CALLS",
            "MANIFEST", "ASSERTION", "RESULT"
        );
        for m in &self.manifests {
            let calls = format!(
                "{}{}",
                m.tool_calls_total,
                if m.tool_calls.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({})",
                        m.tool_calls
                            .iter()
                            .map(|(k, v)| format!("{k} {v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            );
            for e in &m.errors {
                let _ = writeln!(
                    out,
                    "{:name_w$}  {:assert_w$}  ERROR   {e}",
                    m.name, "(run)"
                );
            }
            for (i, a) in m.assertions.iter().enumerate() {
                let result = if rated {
                    format!("{}/{}", a.passes, a.runs)
                } else if a.passed {
                    "pass".into()
                } else {
                    "FAIL".into()
                };
                let name = if i == 0 { m.name.as_str() } else { "" };
                let tail = if i == 0 { calls.as_str() } else { "" };
                let _ = writeln!(
                    out,
                    "{name:name_w$}  {:assert_w$}  {result:6}  {tail}",
                    a.assertion
                );
                if !a.passed {
                    let _ = writeln!(out, "{:name_w$}    ↳ {}", "", a.reason);
                }
            }
        }
        let manifests_passed = self.manifests.iter().filter(|m| m.passed).count();
        let _ = writeln!(
            out,
            "\n{} mode: {manifests_passed}/{} manifests passed{}; tokens/cost: {}",
            self.mode,
            self.manifests.len(),
            if rated {
                format!(
                    " in all {} runs; pass rates: {}",
                    self.repeat,
                    self.manifests
                        .iter()
                        .map(|m| format!("{} {}/{}", m.name, m.passed_runs, m.runs))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            },
            self.usage
        );
        out
    }
}
