//! Why a policy did not load, said so a person knows what to fix.

use std::path::PathBuf;
use toolgate_core::{PolicyError, ProfileError};

/// Why a policy could not be loaded; the message names the file and what to
/// do about it.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The policy file could not be read.
    #[error("cannot read policy file {}: {source}: check the path and permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The policy is not a valid policy (the message has line and column).
    #[error("{0}")]
    Policy(#[from] PolicyError),
    /// `[approvals.model]` has settings the model client cannot use.
    #[error("{}: {message}", path.display())]
    ModelStage {
        /// The policy file.
        path: PathBuf,
        /// What is wrong, with the table's line.
        message: String,
    },
    /// The scope profile the policy names could not be read.
    #[error(
        "policy {} names the scope profile {}, which cannot be read ({source}): check the path \
         (relative to the policy file) and permissions",
        policy.display(),
        profile.display()
    )]
    ProfileRead {
        /// The policy file.
        policy: PathBuf,
        /// The profile's path, as resolved.
        profile: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The scope profile is not UTF-8 text.
    #[error("scope profile {} is not UTF-8 text", profile.display())]
    ProfileNotUtf8 {
        /// The profile's path.
        profile: PathBuf,
    },
    /// The scope profile does not parse.
    #[error("{0}")]
    Profile(#[from] ProfileError),
    /// A `[[test]]` case of the policy failed.
    #[error(
        "policy {origin}: [[test]] {case} expected {expected}, got {got} ({failing} failing; \
         run `toolgate policy test` for all)"
    )]
    TestFailed {
        /// Where the policy came from.
        origin: String,
        /// The first failing case (`name` or `line:col`).
        case: String,
        /// What it expected.
        expected: String,
        /// What the engine decided, and why.
        got: String,
        /// How many cases fail.
        failing: usize,
    },
}
