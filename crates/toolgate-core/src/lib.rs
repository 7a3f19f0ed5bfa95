//! toolgate's decision core. Pure: no I/O, no clock, no globals. Everything it
//! needs (home directory, working directory, the policy) is handed in.
// One audited exception (`catalogue::automata::Automaton::dfa`: reading
// the automata the build embedded without re-validating them).
#![deny(unsafe_code)]

/// Path resolution, re-exported so callers name one `Env` type.
pub use toolgate_paths as paths;
/// The shell analyzer the engine judges commands with, re-exported.
pub use toolgate_shell as shell;

mod approval;
mod approvers;
mod audit;
mod branches;
mod bypass;
mod catalogue;
mod engine;
#[cfg(test)]
mod enum_strings;
mod exfil;
mod hex;
/// Hook protocols of Claude Code, Codex, Gemini CLI and Cursor ↔ [`model::ToolCall`] / [`model::Decision`].
pub mod hooks;
mod input;
pub mod knowledge;
mod meaning;
mod model;
mod normalize;
mod policy;
mod posture;
mod profile;
mod protected;
mod protocol;
mod redact;
mod shown;
mod time;
mod tool_effects;
mod tool_kind;
mod url;
mod wildcard;

// The public surface: what other crates use, and nothing else, so the
// compiler sees an item nobody uses. `hooks` and `knowledge` are namespaces
// of their own (each runtime's protocol; the knowledge layer's parts).
pub use approval::{
    Approval, ApprovalFinding, ApprovalId, ApprovalState, ApproverKind, BindingHash,
    InsufficientFactors, QuorumRule, RequesterKey, Tally, Terms, Vote, VoteRefused, approver_keys,
    binding_hash, check_vote, relay_identity, requester_keys, same_identity, same_person, tally,
    unbindable_number,
};
pub use approvers::{Approver, FactorVote, RulesApprover, is_unsure};
pub use audit::{
    AuditEvent, AuditKind, ChainBreak, ChainVerifier, Checkpoint, GENESIS, Verified, chain_hash,
    checkpoint_data, checkpoint_message,
};
pub use bypass::{BYPASS_RULE, BYPASSABLE, check_layers, lift, parse_layer};
pub use engine::{Assessment, Engine, LayerVerdict};
pub use hex::{hex, unhex};
pub use input::{MAX_JSON_DEPTH, parse_json, tool_call};
pub use model::{ApprovalRef, Decision, Layer, Requester, RiskClass, ToolCall, Verdict};
pub use normalize::{NormalizedCall, ToolKind, kind_of, normalize, split_mcp, unwrap_bridges};
pub use policy::{
    ApprovalRule, ApprovalSettings, ErrorKind, GitSettings, HookSettings, ModelStage, Organization,
    Policy, PolicyError, RouteTarget, Routing, RoutingMode, Rule, RuleList,
};
pub use posture::{Posture, Signals, detect};
pub use profile::{Profile, ProfileError};
pub use protected::{DEFAULT_PORT, Protected};
pub use protocol::protocol_text;
pub use redact::{bound_size, redact_in_place, redact_text, redact_value};
pub use shown::{visible, visible_line};
pub use time::{SpanStyle, duration_ms, parse_rfc3339_ms, rfc3339_ms, span};
