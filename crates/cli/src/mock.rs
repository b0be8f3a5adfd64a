//! `nomos mock-llm`: the scripted model server, for demos, evals and end-to-end tests.

use std::path::PathBuf;

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct MockArgs {
    /// The script: YAML (or JSON when the file ends in .json); format in crates/mock-llm/README.md.
    #[arg(long)]
    script: PathBuf,
    /// Port on 127.0.0.1; a free one when absent. The URL is printed on the first line.
    #[arg(long)]
    port: Option<u16>,
}

pub fn run(args: MockArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(nomos_mock_llm::run_cli(&args.script, args.port))
        .map_err(|e| CliError::MockLlm(e.to_string()))
}
