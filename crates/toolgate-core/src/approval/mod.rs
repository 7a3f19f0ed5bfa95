//! One-time approvals (bound to the exact call, consumed once; ARCHITECTURE.md
//! lists their invariants), as pure data and
//! pure rules: the binding hash, the approval record and its lifecycle, votes
//! and quorum. Storing them and reading the clock is the caller's job; every
//! function here takes the time (`now_ms`, Unix milliseconds) as an argument.
//!
//! Lifecycle: `pending` → `approved` → `consumed`, or `denied`, or `expired`.
//! A pending approval waits `pending_ttl` for its quorum; once approved, the
//! agent has `approval_window` to retry the exact call, which consumes it.

mod binding;
mod identity;
mod lifecycle;
mod quorum;

pub(crate) use binding::exact_integers;
pub use binding::{ApprovalId, BindingHash, binding_hash, unbindable_number};
pub use identity::{RequesterKey, approver_keys, requester_keys, same_person};
pub use lifecycle::{
    Approval, ApprovalFinding, ApprovalState, Terms, Vote, VoteRefused, check_vote, relay_identity,
    same_identity,
};
pub use quorum::{ApproverKind, InsufficientFactors, QuorumRule, Tally, tally};

#[cfg(test)]
mod tests;
