//! CLI errors with stable codes.

/// Everything the CLI can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading standard input or writing standard output failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// `--json` input was not a JSON array of strings.
    #[error("input is not a JSON array of strings: {0}")]
    JsonInput(serde_json::Error),
    /// A core crate refused or failed; its own code is kept.
    #[error("{1}")]
    Core(&'static str, String),
    /// `nomos ask` ended without completing the task (waiting for the operator, failed).
    #[error("session {0} ended {1}; continue it with --session {0}")]
    Unfinished(i64, String),
    /// The scripted model server failed (bad script, port taken, failed expectations).
    #[error("mock-llm: {0}")]
    MockLlm(String),
    /// The built-in policy specs failed to load.
    #[error("policy specs failed to load: {0}")]
    Policy(#[from] nomos_policy::SpecError),
}

impl CliError {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Io(_) => "cli.io",
            Self::JsonInput(_) => "cli.json_input",
            Self::MockLlm(_) => "cli.mock_llm",
            Self::Core(code, _) => code,
            Self::Unfinished(..) => "cli.unfinished",
            Self::Policy(e) => e.code(),
        }
    }

    /// Process exit status: 2 for bad input, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::JsonInput(_) => 2,
            Self::Io(_) | Self::Policy(_) | Self::MockLlm(_) | Self::Core(..) => 1,
            Self::Unfinished(..) => 3,
        }
    }
}
