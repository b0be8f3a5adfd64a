//! `nomos eval [--live] [--repeat N] [--json] evals/*.yaml`: runs golden conversations
//! (nomos-eval) and prints a table, or the JSON report with `--json`. Exits non-zero when any
//! assertion fails.

use std::path::PathBuf;

use nomos_eval::{Mode, Options};

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// Manifest files, or directories of `*.yaml` manifests.
    #[arg(required = true)]
    manifests: Vec<PathBuf>,
    /// Run against the model configured in the environment (NOMOS_LLM_*), ignoring the
    /// scripted replies. Commands the model asks for run on this machine.
    #[arg(long)]
    live: bool,
    /// Runs per manifest; the table then shows pass rates.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Print the machine-readable report instead of the table.
    #[arg(long)]
    json: bool,
    /// Fail a run that leaves scripted replies unused (offline).
    #[arg(long)]
    all_replies_used: bool,
}

pub fn run(args: EvalArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let options = Options {
        mode: if args.live { Mode::Live } else { Mode::Offline },
        repeat: args.repeat,
        all_replies_used: args.all_replies_used,
    };
    let report = runtime
        .block_on(nomos_eval::run_paths(&args.manifests, options))
        .map_err(|e| CliError::Core(e.code(), e.to_string()))?;
    if args.json {
        let line = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::Core("cli.json_output", e.to_string()))?;
        println!("{}", crate::term::json(&line));
    } else {
        // The report quotes model text and command output.
        print!("{}", crate::term::block(&report.table()));
    }
    if report.passed {
        Ok(())
    } else {
        let failed = report.manifests.iter().filter(|m| !m.passed).count();
        Err(CliError::Core(
            "eval.failed",
            format!("{failed} of {} manifests failed", report.manifests.len()),
        ))
    }
}
