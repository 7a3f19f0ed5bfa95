//! The store crate's one error type.

use toolgate_core::{ApprovalId, ChainBreak, VoteRefused};

/// What went wrong with durable state. Messages say what to do next.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The data directory could not be created or used.
    #[error(
        "cannot use data directory {path}: {source} (pass --data-dir DIR or set TOOLGATE_DATA_DIR to a writable directory)"
    )]
    DataDir {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The database reported an error (whichever engine: the trait's
    /// callers never depend on one).
    #[error("database error in {location}: {source}")]
    Backend {
        /// Where the database is (`sqlite:/path`, `postgres://host/db`).
        location: String,
        /// The engine's own error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The database was written by a newer toolgate.
    #[error(
        "{location} has schema version {found}, newer than this toolgate understands ({known}); upgrade toolgate"
    )]
    SchemaTooNew {
        /// Where the database is.
        location: String,
        /// The version found.
        found: i64,
        /// The newest version known.
        known: i64,
    },
    /// A stored record could not be read back.
    #[error("corrupt record in {location}: {detail}")]
    Corrupt {
        /// Where the database is.
        location: String,
        /// What could not be read.
        detail: String,
    },
    /// No approval has this id.
    #[error("no approval {0}: check the id with `toolgate approvals list --all`")]
    NotFound(ApprovalId),
    /// The vote was refused.
    #[error(transparent)]
    Refused(#[from] VoteRefused),
    /// The audit chain does not verify.
    #[error(transparent)]
    Chain(#[from] ChainBreak),
    /// An operator could not be added, changed or found as asked; the text
    /// says why and what to do.
    #[error("{0}")]
    Operators(String),
    /// The operating system could not provide random bytes for an id.
    #[error("cannot get random bytes for an id: {0}")]
    Random(String),
}
