//! Tracing set-up shared by the desktop shell and the CLI.
//!
//! Logs go to stderr (for a terminal or a service manager) and to a daily-rolling file in
//! `<data dir>/logs/` (for an operator reviewing what happened after the fact). The filter comes
//! from `NOMOS_LOG` (same syntax as `RUST_LOG`), defaulting to `info`.
//!
//! The first rule that no token or key reaches a log is kept by the types that hold secrets
//! (their `Debug` is redacted). As a second line, every line written (file and stderr) passes
//! through `nomos_mask::mask`, so a secret that arrives inside an error message or a command
//! line is masked too.
//!
//! The log directory is created `0700` and every log file is kept `0600`: files are created by
//! the appender inside the already-private directory, and tightened when they appear (C1).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    create_private_dir(&dir).map_err(|source| LoggingError::CreateDir {
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
    let file = PrivateFiles::new(MaskingWriter(appender), dir.clone());
    let (file_writer, guard) = tracing_appender::non_blocking(file);

    let filter = EnvFilter::try_from_env("NOMOS_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(|| MaskingWriter(std::io::stderr())))
        .with(fmt::layer().with_ansi(false).with_writer(file_writer))
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialised)?;

    Ok(LogGuard { _file: guard, dir })
}

/// Creates `dir` with mode `0700` (tightening an existing one).
fn create_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mode = std::fs::metadata(dir)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & !0o077))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Masks secrets in each formatted line before it is written. The formatter hands over one
/// whole event per write, so a secret is never split across two calls.
#[derive(Debug)]
struct MaskingWriter<W>(W);

impl<W: Write> Write for MaskingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => match nomos_mask::mask(text) {
                std::borrow::Cow::Borrowed(_) => self.0.write_all(buf)?,
                std::borrow::Cow::Owned(masked) => self.0.write_all(masked.as_bytes())?,
            },
            Err(_) => self.0.write_all(&buf_masked_lossy(buf))?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

fn buf_masked_lossy(buf: &[u8]) -> Vec<u8> {
    nomos_mask::mask(&String::from_utf8_lossy(buf))
        .into_owned()
        .into_bytes()
}

/// Keeps the files of the log directory `0600`: the appender creates each day's file itself
/// (inside the `0700` directory, so no other user can reach it meanwhile); it is tightened on
/// the first write and after every roll, checked at most once a second.
#[derive(Debug)]
struct PrivateFiles<W> {
    inner: W,
    dir: PathBuf,
    checked: Option<Instant>,
}

impl<W> PrivateFiles<W> {
    fn new(inner: W, dir: PathBuf) -> Self {
        Self {
            inner,
            dir,
            checked: None,
        }
    }

    fn tighten(&mut self) {
        if self
            .checked
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        self.checked = Some(Instant::now());
        #[cfg(unix)]
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            use std::os::unix::fs::PermissionsExt;
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                let mode = meta.permissions().mode() & 0o7777;
                if meta.is_file() && mode & 0o077 != 0 {
                    let _ = std::fs::set_permissions(
                        entry.path(),
                        std::fs::Permissions::from_mode(mode & !0o077),
                    );
                }
            }
        }
    }
}

impl<W: Write> Write for PrivateFiles<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.tighten();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
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
        tracing::warn!("connect failed for postgres://app:Log-S3cret-9@db.lan/app");
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
        // A secret inside a message is masked on its way to the file.
        assert!(!text.contains("Log-S3cret-9"), "{text}");
        assert!(
            text.contains("[secret masked by Nomos: URL password]"),
            "{text}"
        );
        // The directory and the file are private to the user (C1).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir), 0o700);
            assert_eq!(mode(&files[0]), 0o600, "{}", files[0].display());
        }
        assert!(matches!(
            init(tmp.path(), "again"),
            Err(LoggingError::AlreadyInitialised)
        ));
    }
}
