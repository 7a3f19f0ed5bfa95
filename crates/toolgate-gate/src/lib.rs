//! The I/O half of toolgate's decision path, above any store backend:
//! [`Gate`] decides a call with the pure core, then consumes or creates
//! approvals and records everything in one transaction, so a decision is
//! never reported before it is durable. Around it, the services people and
//! agents use: votes and quorums, acknowledgements, operators, emergency
//! bypasses, memories, the knowledge layer, waiting for an approval, and
//! reading and verifying the audit chain.
//!
//! Everything here speaks only the `toolgate_store` contract, so it behaves
//! the same on every backend; the conformance kit in this crate's `tests/`
//! runs on each one (`TOOLGATE_TEST_STORE=sqlite|postgres`).
//!
//! Everything written to the store is redacted first (see
//! `toolgate_core::redact`); approval binding hashes are computed on the
//! original call before redaction.
#![forbid(unsafe_code)]

mod audit_log;
mod bypass;
mod clock;
mod copy;
mod daemon_key;
mod escalation;
mod factors;
mod gate;
mod knowledge;
mod memory;
mod operator;
mod people;
pub mod posture;
mod resolution;
mod waiting;

pub use audit_log::{
    CHECKPOINT_EVERY, CHECKPOINT_SECS, DEFAULT_MAX_UNSIGNED, ExportedEntry, Signatures,
    SigningRule, check_anchor, export, verify, verify_signed, write_checkpoint,
};
pub use bypass::{MAX_BYPASS, bypass_approval, end_bypass, start_bypass};
pub use clock::{Clock, ManualClock, SystemClock, random_hex};
pub use copy::{Copied, PROGRESS_EVERY, copy_store};
pub use daemon_key::{DaemonKey, KEY_FILE, KeyError, PUBLIC_FILE, PublicKey};
pub use gate::{ACK_TOOLS, Gate, Judged, RELAY_TOOLS};
pub use knowledge::{
    AckError, KnowledgeBase, KnowledgeSnapshot, KnowledgeStats, LOOKUP_BUCKETS_US, Lookup,
    ack_scope, acknowledge_shown,
};
pub use memory::{add_memory, import_memories, remove_memory};
pub use operator::{
    ApprovalView, VoteInput, VoteOutcome, acknowledge, acknowledged, expire_due, list, show, vote,
};
pub use people::{
    ADMIN, IDENTITY_KINDS, TOKEN_PREFIX, add_operator, change_identities, check_identity,
    check_name, operator_for_identity, operator_for_token, remove_operator, rotate_token, use_once,
};
pub use waiting::{GiveUp, Look, Next, RECHECK_EVERY, Waiter, mark_waiting};
