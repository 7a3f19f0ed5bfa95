//! Approvers and quorum (docs/approvals.md): which factors may approve a call, how many
//! must, and whether the current votes reach that.

use super::identity::approver_keys;
use super::lifecycle::{Approval, Vote};
use crate::model::RiskClass;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// A kind of approval factor.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ApproverKind {
    /// A person, through the CLI, the control UI, a chat channel, or (when
    /// the policy opts in) relayed by the agent.
    UserRequest,
    /// The policy's `[[approvals.rule]]` entries, judged deterministically.
    RulesBased,
    /// A model's evaluation; counts only when an evaluator is configured.
    LlmEvaluation,
}

impl ApproverKind {
    /// The policy-file name (`user_request`, `rules_based`, `llm_evaluation`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses a policy-file name.
    pub fn parse(s: &str) -> Option<ApproverKind> {
        s.trim().parse().ok()
    }
}

impl fmt::Display for ApproverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one approval needs, fixed when it is created (and refreshed, making
/// earlier votes stale, if a retry finds the policy changed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuorumRule {
    /// Distinct approvals needed.
    pub min_approvals: u32,
    /// Whether one of them must be a person (`user_request`).
    pub require_user: bool,
    /// The approver kinds that may vote.
    pub approvers: Vec<ApproverKind>,
    /// When not empty, the only people who may approve as `user_request`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<String>,
}

impl QuorumRule {
    /// Whether this kind of approver may vote.
    pub fn admits(&self, kind: ApproverKind) -> bool {
        self.approvers.contains(&kind)
    }
}

/// Why no quorum can ever be reached (`insufficient-factors`):
/// the call is blocked rather than left waiting for votes that cannot come.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("insufficient-factors: {detail}")]
pub struct InsufficientFactors {
    /// A sentence saying what is missing and how to fix the policy.
    pub detail: String,
}

/// Where an approval's votes stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tally {
    /// The quorum is reached; the identities that approved.
    Approved {
        /// Approving identities, in the order they voted.
        by: Vec<String>,
    },
    /// Someone denied: a single denial settles it.
    Denied {
        /// Who denied.
        by: String,
        /// Why, when they said.
        reason: Option<String>,
    },
    /// Still waiting.
    Pending {
        /// Current approvals counted.
        have: u32,
        /// Approvals needed.
        need: u32,
        /// Whether a person's approval is still missing.
        user_missing: bool,
    },
}

/// Counts the votes that still apply: cast on this approval's current
/// generation (a vote cast before its terms changed is stale). Any
/// current denial wins, whoever cast it (stopping a call is always safe).
/// Approvals count once per identity, from approver kinds the quorum
/// admits, never from the requester, and a person's only when a named
/// operator cast it, except below R4 where one approval is enough
/// ([`Approval::admits_unnamed`]).
pub fn tally(approval: &Approval, votes: &[Vote]) -> Tally {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut by = Vec::new();
    let mut user = false;
    let mut relayed = false;
    for v in votes.iter().filter(|v| v.is_current(approval)) {
        if !v.approve {
            return Tally::Denied {
                by: v.identity.clone(),
                reason: v.reason.clone(),
            };
        }
        let is_requester = approval.requested_by(&approver_keys(&v.identity, &[]));
        // At most one relayed vote counts, and none for R4.
        let relay_refused =
            v.relayed && (relayed || approval.risk == RiskClass::R4 || !approval.relay);
        let unnamed_refused = v.unnamed_person() && !approval.admits_unnamed();
        if is_requester || relay_refused || unnamed_refused || !approval.quorum.admits(v.kind) {
            continue;
        }
        if seen.insert(v.identity.trim().to_lowercase()) {
            by.push(v.identity.clone());
            user |= v.kind == ApproverKind::UserRequest;
            relayed |= v.relayed;
        }
    }
    let need = approval.quorum.min_approvals.max(1);
    let have = by.len() as u32;
    let user_missing = approval.quorum.require_user && !user;
    if have >= need && !user_missing {
        Tally::Approved { by }
    } else {
        Tally::Pending {
            have,
            need,
            user_missing,
        }
    }
}
