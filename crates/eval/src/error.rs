use std::path::PathBuf;

/// Why an eval could not be loaded or run. A failed assertion is not an error: it is a line
/// of the report.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{manifest}: {message}")]
    Invalid { manifest: String, message: String },
    #[error("no manifest found in {0}")]
    NoManifests(String),
    #[error("store: {0}")]
    Store(#[from] nomos_store::StoreError),
    #[error("agent: {0}")]
    Agent(#[from] nomos_agent::AgentError),
    #[error("live model: {0}")]
    Setup(#[from] nomos_agent::setup::SetupError),
    #[error("scripted model server: {0}")]
    MockServer(std::io::Error),
    #[error("executor: {0}")]
    Exec(#[from] nomos_exec::ExecError),
    #[error("model provider: {0}")]
    Llm(#[from] nomos_llm::LlmError),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("sandbox: {message}")]
    Sandbox { message: String },
    #[error("turn {turn} ({action}) did not settle within {secs}s")]
    Timeout {
        turn: usize,
        action: String,
        secs: u64,
    },
}

impl EvalError {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Read { .. } => "eval.read",
            Self::Parse { .. } => "eval.parse",
            Self::Invalid { .. } => "eval.invalid",
            Self::NoManifests(_) => "eval.no_manifests",
            Self::Store(e) => e.code(),
            Self::Agent(e) => e.code(),
            Self::Setup(e) => e.code(),
            Self::MockServer(_) => "eval.mock_server",
            Self::Exec(e) => e.code(),
            Self::Llm(e) => e.code(),
            Self::Io(_) => "eval.io",
            Self::Timeout { .. } => "eval.timeout",
            Self::Sandbox { .. } => "eval.sandbox",
        }
    }
}
