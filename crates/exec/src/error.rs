//! The crate's one error type.

use std::fmt;

/// Everything an execution, an inventory or an ssh-config import can fail with.
///
/// A command that ran and exited non-zero is not an error: it is an
/// [`ExecOutcome`](crate::ExecOutcome) with its exit code. These are the cases where the
/// command could not run, or a file describing targets could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The canonical command cannot be executed as given (empty, NUL byte, too long).
    #[error("invalid command: {reason}")]
    InvalidCommand {
        /// What is wrong with it.
        reason: String,
    },
    /// The target is malformed (bad slug, a transport its kind cannot use, a host name that
    /// would be read as an ssh option, …).
    #[error("invalid target `{slug}`: {reason}")]
    InvalidTarget {
        /// The target's slug as given.
        slug: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No target with this slug is in the inventory.
    #[error("unknown target `{slug}`")]
    UnknownTarget {
        /// The slug asked for.
        slug: String,
    },
    /// The executor itself is misconfigured (data directory unusable, socket path too long).
    #[error("executor configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The local process (`bash`, `ssh`) could not be started.
    #[error("could not start `{program}`: {message}")]
    Spawn {
        /// The program that failed to start.
        program: String,
        /// The operating system's reason.
        message: String,
    },
    /// The ssh client could not reach the host (refused, timed out, name not resolved,
    /// connection closed before authentication).
    #[error("cannot reach `{host}` over ssh: {message}")]
    Unreachable {
        /// The ssh destination.
        host: String,
        /// The ssh client's own words.
        message: String,
    },
    /// The host refused every key the client offered (BatchMode never asks for a password).
    #[error("ssh to `{host}` was not authorised: {message}")]
    AuthFailed {
        /// The ssh destination.
        host: String,
        /// The ssh client's own words.
        message: String,
    },
    /// The host key is unknown or changed; BatchMode will not ask, so the operator must
    /// connect once by hand (or configure `StrictHostKeyChecking accept-new`).
    #[error("host key of `{host}` could not be verified: {message}")]
    HostKey {
        /// The ssh destination.
        host: String,
        /// The ssh client's own words.
        message: String,
    },
    /// Any other failure of the ssh client itself (exit 255 with an ssh error message):
    /// a bad option, a connection lost mid-command, …
    #[error("ssh to `{host}` failed: {message}")]
    Ssh {
        /// The ssh destination.
        host: String,
        /// The ssh client's own words.
        message: String,
    },
    /// `pct` on the Proxmox host refused: the container does not exist or is not running.
    #[error("container {vmid} is not available: {message}")]
    Container {
        /// The container id.
        vmid: u32,
        /// pct's own words.
        message: String,
    },
    /// Waiting for the process or reading its pipes failed.
    #[error("i/o error while running the command: {message}")]
    Io {
        /// The operating system's reason.
        message: String,
    },
    /// The execution's task ended without reporting (the runtime shut down under it). The
    /// command may or may not have run.
    #[error("the execution was interrupted before it reported a result")]
    Interrupted,
    /// An inventory file is malformed.
    #[error("inventory {}: {message}", Location { source: source_name, line: *line, field: field.as_deref() })]
    Inventory {
        /// The file the inventory came from (or `<inline>`).
        source_name: String,
        /// 1-based line of the offending entry or value, when known.
        line: Option<usize>,
        /// The offending field (`port`, `target[2].vmid`, …), when known.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A file named by an inventory or ssh-config import could not be read.
    #[error("cannot read `{path}`: {message}")]
    ReadFile {
        /// The path.
        path: String,
        /// The operating system's reason.
        message: String,
    },
}

impl ExecError {
    /// A stable code the UI and logs can branch on. Never changes for a variant.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidCommand { .. } => "exec.invalid_command",
            Self::InvalidTarget { .. } => "exec.invalid_target",
            Self::UnknownTarget { .. } => "exec.unknown_target",
            Self::Config { .. } => "exec.config",
            Self::Spawn { .. } => "exec.spawn",
            Self::Unreachable { .. } => "exec.ssh_unreachable",
            Self::AuthFailed { .. } => "exec.ssh_auth",
            Self::HostKey { .. } => "exec.ssh_host_key",
            Self::Ssh { .. } => "exec.ssh",
            Self::Container { .. } => "exec.pct",
            Self::Io { .. } => "exec.io",
            Self::Interrupted => "exec.interrupted",
            Self::Inventory { .. } => "exec.inventory",
            Self::ReadFile { .. } => "exec.read_file",
        }
    }

    /// Whether running the same command again later can succeed without anyone changing
    /// anything. Only failures that happened before the command could start are retryable:
    /// a retry must never run a command twice.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Unreachable { .. } => true,
            Self::InvalidCommand { .. }
            | Self::InvalidTarget { .. }
            | Self::UnknownTarget { .. }
            | Self::Config { .. }
            | Self::Spawn { .. }
            | Self::AuthFailed { .. }
            | Self::HostKey { .. }
            // A lost connection may have left the command half-run remotely.
            | Self::Ssh { .. }
            | Self::Container { .. }
            | Self::Io { .. }
            | Self::Interrupted
            | Self::Inventory { .. }
            | Self::ReadFile { .. } => false,
        }
    }

    pub(crate) fn invalid_target(slug: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidTarget {
            slug: shown(slug.into(), MAX_SHOWN_SLUG_CHARS),
            // A reason may repeat part of the slug (its kind).
            reason: shown(reason.into(), MAX_SHOWN_REASON_CHARS),
        }
    }
}

/// How much of a refused slug an error repeats: the slug comes from a file or a model, and a
/// 2 MB name must not become a 2 MB error on the operator's terminal.
const MAX_SHOWN_SLUG_CHARS: usize = 80;
const MAX_SHOWN_REASON_CHARS: usize = 300;

fn shown(text: String, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text,
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod shown_tests {
    #[test]
    fn a_refused_slug_is_repeated_in_a_bounded_form() {
        for name in [
            "a".repeat(2 * 1024 * 1024),
            "é".repeat(100_000),
            format!("{}:x", "k".repeat(10_000)),
            "web 01 ".repeat(1000),
        ] {
            for slug in [name.clone(), format!("host:{name}")] {
                let err = crate::TargetSlug::parse(&slug).unwrap_err().to_string();
                assert!(err.len() < 600, "{} bytes", err.len());
                assert!(err.contains(&format!("({} bytes)", slug.len())), "{err}");
            }
        }
        // A short one is shown whole.
        let err = crate::TargetSlug::parse("host:web 01")
            .unwrap_err()
            .to_string();
        assert!(err.contains("host:web 01"), "{err}");
    }
}

/// `<source> line 3, field `port``, omitting what is unknown.
struct Location<'a> {
    source: &'a str,
    line: Option<usize>,
    field: Option<&'a str>,
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.source)?;
        if let Some(line) = self.line {
            write!(f, " line {line}")?;
        }
        if let Some(field) = self.field {
            write!(f, ", field `{field}`")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn inventory_error_names_line_and_field() {
        let e = ExecError::Inventory {
            source_name: "inventory.toml".into(),
            line: Some(7),
            field: Some("port".into()),
            message: "expected an integer".into(),
        };
        assert_eq!(
            e.to_string(),
            "inventory inventory.toml line 7, field `port`: expected an integer"
        );
        assert_eq!(e.code(), "exec.inventory");
        assert!(!e.is_retryable());
    }

    #[test]
    fn only_unreachable_is_retryable() {
        let e = ExecError::Unreachable {
            host: "nas".into(),
            message: "Connection refused".into(),
        };
        assert!(e.is_retryable());
        assert!(!ExecError::Interrupted.is_retryable());
    }
}
