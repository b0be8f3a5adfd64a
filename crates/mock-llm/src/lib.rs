//! The scripted model server.
//!
//! A real HTTP server that speaks the OpenAI-compatible streaming chat API
//! (`POST …/chat/completions`) and Anthropic's Messages API (`POST …/messages`), answering
//! each request with the next step of a [`Script`]: text, tool calls, or a fault (empty
//! reply, HTTP errors, 429 with Retry-After, a stream cut mid tool call, malformed tool
//! arguments, an unknown tool, a 1 MB reply, a stream that never ends, raw recorded bytes).
//! Each step can check the request first ([`Expect`]); a failed check is recorded in
//! [`MockServer::failures`] and answered with HTTP 400 naming the reason. Every request is
//! recorded ([`MockServer::requests`]).
//!
//! Used by the agent tests, the evals, the demo mode, the end-to-end UI tests and the
//! `nomos mock-llm` CLI ([`run_cli`]). It does not depend on `nomos-llm`: the wire format
//! is plain JSON, so `nomos-llm` can test against it without a dependency cycle.
//!
//! The script file format is documented in the crate's `README.md`.

mod render;
mod request;
mod script;
mod server;

use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub use request::{Format, RecordedRequest, ViewMessage};
pub use script::{Expect, Reply, Script, ScriptedCall, Step};
pub use server::{Failure, MockServer, REQUESTS_PATH};

/// Errors of the CLI entry point.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The script file could not be read.
    #[error("cannot read script {}: {source}", path.display())]
    ScriptRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The script file is not a valid script.
    #[error("invalid script {}: {message}", path.display())]
    ScriptParse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The server could not listen.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Requests failed their checks or ran past the script.
    #[error("{} scripted expectation(s) failed: {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    ExpectationsFailed(Vec<Failure>),
}

impl MockError {
    /// Stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ScriptRead { .. } => "mock_llm.script_read",
            Self::ScriptParse { .. } => "mock_llm.script_parse",
            Self::Bind { .. } => "mock_llm.bind",
            Self::ExpectationsFailed(_) => "mock_llm.expectations_failed",
        }
    }

    /// Whether trying again can help.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Bind { .. } => true,
            Self::ScriptRead { .. } | Self::ScriptParse { .. } | Self::ExpectationsFailed(_) => {
                false
            }
        }
    }
}

/// Entry point of `nomos mock-llm --script FILE [--port N]`: serves the script on
/// `127.0.0.1:<port>` (ephemeral when `None`), prints `mock-llm listening on <base_url>` as
/// the first line on stdout, and runs until Ctrl-C. Fails if any request failed its checks.
pub async fn run_cli(script_path: &Path, port: Option<u16>) -> Result<(), MockError> {
    run_until(script_path, port, async {
        // If the signal handler cannot be installed, run until killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
    .await
}

/// [`run_cli`] with an explicit stop signal (tests, embedding).
pub async fn run_until(
    script_path: &Path,
    port: Option<u16>,
    stop: impl Future<Output = ()>,
) -> Result<(), MockError> {
    let script = Script::load(script_path)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port.unwrap_or(0)));
    let server = MockServer::start_on(script, addr)
        .await
        .map_err(|source| MockError::Bind { addr, source })?;
    {
        let mut out = std::io::stdout().lock();
        // Stdout closed is not a reason to stop serving.
        let _ = writeln!(out, "mock-llm listening on {}", server.base_url());
        let _ = out.flush();
    }
    stop.await;
    let failures = server.failures();
    server.shutdown().await;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(MockError::ExpectationsFailed(failures))
    }
}
