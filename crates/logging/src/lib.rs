//! Tracing set-up shared by the desktop shell and the CLI.
//!
//! Logs go to stderr (for a terminal or a service manager) and to a daily-rolling file in
//! `<data dir>/logs/` (for an operator reviewing what happened after the fact). The filter comes
//! from `NOMOS_LOG` (same syntax as `RUST_LOG`), defaulting to `info`.
//!
//! Nothing here redacts: the rule that no token or key reaches a log is kept by the types that
//! hold secrets (their `Debug` is redacted), not by scrubbing text after the fact.

use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{EnvFilter, fmt, layer::SubscriberExt, util::SubscriberInitExt};

/// How many daily log files are kept before the oldest is deleted.
const KEPT_LOG_FILES: usize = 14;

#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error("could not create the log directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not open the log file in {path}: {source}")]
    Appender {
        path: PathBuf,
        source: tracing_appender::rolling::InitError,
    },
    #[error("logging was already initialised in this process")]
    AlreadyInitialised,
}

impl LoggingError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::CreateDir { .. } => "logging.create_dir",
            Self::Appender { .. } => "logging.appender",
            Self::AlreadyInitialised => "logging.already_initialised",
        }
    }
}

/// Keeps the background file writer alive; logs written after it is dropped are lost, so the
/// caller holds it for the life of the process.
#[derive(Debug)]
pub struct LogGuard {
    _file: WorkerGuard,
    dir: PathBuf,
}

impl LogGuard {
    /// The directory the rolling files are written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Installs the global subscriber: stderr plus `<data_dir>/logs/<file_prefix>.YYYY-MM-DD.log`.
pub fn init(data_dir: &Path, file_prefix: &str) -> Result<LogGuard, LoggingError> {
    let dir = data_dir.join("logs");
    std::fs::create_dir_all(&dir).map_err(|source| LoggingError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix(file_prefix)
        .filename_suffix("log")
        .max_log_files(KEPT_LOG_FILES)
        .build(&dir)
        .map_err(|source| LoggingError::Appender {
            path: dir.clone(),
            source,
        })?;
    let (file_writer, guard) = tracing_appender::non_blocking(appender);

    let filter = EnvFilter::try_from_env("NOMOS_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(std::io::stderr))
        .with(fmt::layer().with_ansi(false).with_writer(file_writer))
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialised)?;

    Ok(LogGuard { _file: guard, dir })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn writes_to_a_rolling_file_in_the_data_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let guard = init(tmp.path(), "nomos-test").unwrap();
        tracing::info!(marker = "written-to-file", "hello from the test");
        let dir = guard.dir().to_path_buf();
        drop(guard); // flushes the background writer
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "one log file expected, got {files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with("nomos-test.") && name.ends_with(".log"),
            "{name}"
        );
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(text.contains("written-to-file"), "{text}");
        assert!(matches!(
            init(tmp.path(), "again"),
            Err(LoggingError::AlreadyInitialised)
        ));
    }
}
