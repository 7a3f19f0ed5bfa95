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
    /// The policy file holds nothing but blanks and comments.
    #[error(
        "policy file {} is empty (nothing but blanks and comments), so it would silently mean the \
         built-in default: write the policy into it, or remove --policy to use the built-in \
         default on purpose",
        path.display()
    )]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The agent's user could change the policy (see
    /// [`crate::agent_writable`]).
    #[error(
        "policy {}: {} {why}, so the agent could rewrite the policy this gate obeys. Keep it where \
         the agent's user cannot change it (`sudo toolgate setup separated` puts it root-owned in \
         /etc/toolgate; otherwise chown it to root and remove group/other write), or accept the \
         risk with --allow-writable-policy (same-user mode)",
        policy.display(),
        path.display()
    )]
    AgentWritable {
        /// The policy file.
        policy: PathBuf,
        /// The file or directory that makes it writable.
        path: PathBuf,
        /// Why.
        why: String,
    },
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
