//! The store's error type. Every variant has a stable [`StoreError::code`] the UI branches on,
//! and a message written for an operator (never a debug string).

use std::path::PathBuf;

/// Everything that can go wrong in the store.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The database was written by a newer Nomos. The file was not touched.
    #[error(
        "This database was written by a newer Nomos (schema {found}, this build knows up to {known}). \
         Update Nomos; the file was not changed. ({path})"
    )]
    SchemaTooNew {
        /// Highest schema version recorded in the file.
        found: i64,
        /// Highest schema version this build knows.
        known: i64,
        /// The database file.
        path: PathBuf,
    },
    /// The database records a migration this build does not know (a different branch/build).
    #[error(
        "This database records schema {version}, which this build of Nomos does not know. \
         It was probably written by a different Nomos build; the file was not changed. ({path})"
    )]
    SchemaUnknown {
        /// The unknown migration version.
        version: i64,
        /// The database file.
        path: PathBuf,
    },
    /// The file is not a SQLite database, or it is damaged. It is never overwritten.
    #[error(
        "The database file {path} is damaged or is not a Nomos database ({detail}). \
         Nomos did not change it; move it aside (or restore a backup) and start Nomos again."
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the header check said.
        detail: String,
    },
    /// A file-system problem (permissions, disk full, missing directory).
    #[error("Cannot use the data directory or database file {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A row that was asked for does not exist.
    #[error("{what} {id} does not exist")]
    NotFound {
        /// Kind of thing ("session", "plan step", ...).
        what: &'static str,
        /// Its identifier, as text.
        id: String,
    },
    /// A write lost against a concurrent change, or the row is in a state that forbids it.
    #[error("{message}")]
    Conflict {
        /// Operator-facing message.
        message: String,
    },
    /// A store-level invariant (DESIGN.md §4) refused the operation. `directive` is a short
    /// imperative the agent can hand to the model as the tool result.
    #[error("{message}")]
    Invariant {
        /// Stable invariant code, e.g. `"I5"`.
        code: &'static str,
        /// What was refused and why.
        message: String,
        /// What the model should do instead.
        directive: String,
    },
    /// Input the store refuses (bad slug, empty title, a value that looks like a secret...).
    #[error("{message}")]
    InvalidInput {
        /// Operator-facing message.
        message: String,
    },
    /// The database stayed locked by another writer longer than the busy timeout.
    #[error("The database is busy (another Nomos process or writer holds it); try again")]
    Busy,
    /// Any other SQLite error.
    #[error("Database error: {0}")]
    Sqlite(#[source] rusqlite::Error),
    /// A JSON column could not be encoded or decoded.
    #[error("Cannot encode or decode stored JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A session file to import is not a valid Nomos session export. Nothing was written.
    #[error("This is not a valid Nomos session export: {detail}. Nothing was imported.")]
    ImportInvalid {
        /// What is wrong, and where.
        detail: String,
    },
    /// A session file was exported by a newer Nomos. Nothing was written.
    #[error(
        "This session export has format version {found}; this build of Nomos reads up to \
         version {supported}. Update Nomos to import it; nothing was imported."
    )]
    ImportVersion {
        /// The file's format version.
        found: u64,
        /// The newest version this build reads.
        supported: u64,
    },
}

impl StoreError {
    /// A stable code the UI and the agent branch on. Never parse the message.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::SchemaTooNew { .. } => "store.schema_too_new",
            StoreError::SchemaUnknown { .. } => "store.schema_unknown",
            StoreError::Corrupt { .. } => "store.corrupt",
            StoreError::Io { .. } => "store.io",
            StoreError::NotFound { .. } => "store.not_found",
            StoreError::Conflict { .. } => "store.conflict",
            StoreError::Invariant { .. } => "store.invariant",
            StoreError::InvalidInput { .. } => "store.invalid_input",
            StoreError::Busy => "store.busy",
            StoreError::Sqlite(_) => "store.sqlite",
            StoreError::Json(_) => "store.json",
            StoreError::ImportInvalid { .. } => "store.import_invalid",
            StoreError::ImportVersion { .. } => "store.import_version",
        }
    }

    /// Whether retrying the same call later can succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            StoreError::Busy => true,
            StoreError::SchemaTooNew { .. }
            | StoreError::SchemaUnknown { .. }
            | StoreError::Corrupt { .. }
            | StoreError::Io { .. }
            | StoreError::NotFound { .. }
            | StoreError::Conflict { .. }
            | StoreError::Invariant { .. }
            | StoreError::InvalidInput { .. }
            | StoreError::Sqlite(_)
            | StoreError::Json(_)
            | StoreError::ImportInvalid { .. }
            | StoreError::ImportVersion { .. } => false,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: impl ToString) -> Self {
        StoreError::NotFound {
            what,
            id: id.to_string(),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            message: message.into(),
        }
    }

    pub(crate) fn import(detail: impl Into<String>) -> Self {
        StoreError::ImportInvalid {
            detail: detail.into(),
        }
    }

    pub(crate) fn invariant(
        code: &'static str,
        message: impl Into<String>,
        directive: impl Into<String>,
    ) -> Self {
        StoreError::Invariant {
            code,
            message: message.into(),
            directive: directive.into(),
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        if let rusqlite::Error::SqliteFailure(f, msg) = &e {
            match f.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => return StoreError::Busy,
                ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
                    return StoreError::Corrupt {
                        path: PathBuf::new(),
                        detail: msg.clone().unwrap_or_else(|| f.to_string()),
                    };
                }
                _ => {}
            }
        }
        StoreError::Sqlite(e)
    }
}

/// Map a foreign-key failure of an INSERT to "the parent does not exist".
pub(crate) fn missing_parent(e: rusqlite::Error, what: &'static str, id: i64) -> StoreError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e
        && f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
    {
        return StoreError::not_found(what, id);
    }
    e.into()
}
