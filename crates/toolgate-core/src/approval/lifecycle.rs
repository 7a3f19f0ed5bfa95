//! The approval record, votes, and the rules a vote must pass.

use super::binding::{ApprovalId, BindingHash};
use super::identity::{RequesterKey, approver_keys, requester_keys, same_person};
use super::quorum::{ApproverKind, QuorumRule, Tally, tally};
use crate::model::{Layer, RiskClass, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// Where an approval is in its life.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ApprovalState {
    /// Waiting for its quorum, until `expires_ms`.
    Pending,
    /// Quorum reached; the exact call may run once, until `usable_until_ms`.
    Approved,
    /// Used by a retry; finished.
    Consumed,
    /// Someone denied it; finished.
    Denied,
    /// Its time ran out, pending or approved; finished.
    Expired,
}

impl ApprovalState {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<ApprovalState> {
        s.parse().ok()
    }

    /// Whether nothing can change it any more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ApprovalState::Consumed | ApprovalState::Denied | ApprovalState::Expired
        )
    }
}

impl fmt::Display for ApprovalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something a layer found that made the call need a person: what the
/// people asked to approve it see, every one of them, not only the worst.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalFinding {
    /// The layer that found it.
    pub layer: Layer,
    /// What that layer said.
    pub verdict: Verdict,
    /// The risk class it saw.
    pub risk: RiskClass,
    /// Why, in a sentence (redacted).
    pub reason: String,
    /// The policy rule or catalogue entry behind it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The sub-command it is about (program and arguments as read, redacted),
    /// so a person sees which part of a compound command triggered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// One approval: a request to run one exact call once.
///
/// `call`, `summary` and `reason` are what operators see and must already be
/// redacted by whoever builds the record; the binding hash was computed on
/// the original call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// The id the agent and operators use.
    pub id: ApprovalId,
    /// The exact call it unlocks.
    pub binding: BindingHash,
    /// Where it is in its life.
    pub state: ApprovalState,
    /// The risk class of the call when last judged.
    pub risk: RiskClass,
    /// Why the call needs approval.
    pub reason: String,
    /// One line describing the call (the command, or tool and target).
    pub summary: String,
    /// The call as the agent sent it, redacted.
    pub call: Value,
    /// Who asked for the call (redacted, for display); they can never
    /// approve it.
    #[serde(default)]
    pub requester: Option<String>,
    /// Every spelling of who asked, as digests ([`requester_keys`] of the
    /// call as it arrived): what separation of duties compares approvers
    /// with, whichever of their linked identities asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requester_keys: Vec<RequesterKey>,
    /// The session the call came from (redacted, for display).
    #[serde(default)]
    pub session: Option<String>,
    /// The identity a relayed vote must carry: [`relay_identity`] of the
    /// call's exact session; `None` when the call named no session.
    #[serde(default)]
    pub relay_from: Option<String>,
    /// The agent that made the call.
    #[serde(default)]
    pub agent: Option<String>,
    /// The working directory the call was judged (and bound) in.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the quorum needs.
    pub quorum: QuorumRule,
    /// Whether the agent may relay a person's approval (policy opt-in; never
    /// for R4).
    pub relay: bool,
    /// When it was created.
    pub created_ms: i64,
    /// When a pending approval expires.
    pub expires_ms: i64,
    /// How long it stays usable once approved (the policy's
    /// `approval_window` when it was created), in milliseconds.
    pub window_ms: i64,
    /// Bumped each time a retry re-judges it on different terms; votes
    /// cast on an earlier generation are stale.
    pub generation: u32,
    /// Once approved: until when the retry may consume it.
    #[serde(default)]
    pub usable_until_ms: Option<i64>,
    /// When it reached a final state or was approved.
    #[serde(default)]
    pub resolved_ms: Option<i64>,
    /// Who or what resolved it, in words (`approved by alice, bob`).
    #[serde(default)]
    pub resolution: Option<String>,
    /// What made the call need approval, when it was created: every
    /// escalating or blocking finding, strongest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<ApprovalFinding>,
    /// Until when an agent waits on it in a process of its own (a hook's
    /// `hold`), so the people asked see that someone is blocked now; cleared
    /// when that wait ends (a killed process's mark simply lapses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_until_ms: Option<i64>,
}

impl Approval {
    /// Expires it if its time is up at `now_ms`; returns whether it did.
    pub fn expire_if_due(&mut self, now_ms: i64) -> bool {
        let due = match self.state {
            ApprovalState::Pending => now_ms >= self.expires_ms,
            ApprovalState::Approved => self.usable_until_ms.is_none_or(|u| now_ms >= u),
            _ => false,
        };
        if due {
            let was = self.state;
            self.state = ApprovalState::Expired;
            self.resolved_ms = Some(now_ms);
            self.resolution = Some(match was {
                ApprovalState::Approved => "approved but not used in time".to_string(),
                _ => "no quorum before it expired".to_string(),
            });
        }
        due
    }

    /// Closes an open approval (pending, or approved and not yet used) for
    /// good, as expired with `why` as its resolution: it may no longer be
    /// granted or used where it is kept (its store moved elsewhere, where it
    /// lives on). Returns whether it was open.
    pub fn retire(&mut self, now_ms: i64, why: &str) -> bool {
        if !matches!(self.state, ApprovalState::Pending | ApprovalState::Approved) {
            return false;
        }
        self.state = ApprovalState::Expired;
        self.usable_until_ms = None;
        self.resolved_ms = Some(now_ms);
        self.resolution = Some(why.to_string());
        true
    }

    /// Applies the tally of `votes` at `now_ms`: reaching quorum approves a
    /// pending approval for its window; a denial denies a pending or an
    /// approved-but-unused one (an operator can take an approval back until
    /// the retry uses it). Returns the tally. Final states never change.
    pub fn settle(&mut self, votes: &[Vote], now_ms: i64) -> Tally {
        let t = tally(self, votes);
        let denied = matches!(t, Tally::Denied { .. });
        if self.state != ApprovalState::Pending
            && !(self.state == ApprovalState::Approved && denied)
        {
            return t;
        }
        match &t {
            Tally::Approved { by } => {
                self.state = ApprovalState::Approved;
                self.usable_until_ms = Some(now_ms.saturating_add(self.window_ms));
                self.resolved_ms = Some(now_ms);
                self.resolution = Some(format!("approved by {}", by.join(", ")));
            }
            Tally::Denied { by, reason } => {
                self.state = ApprovalState::Denied;
                self.usable_until_ms = None;
                self.resolved_ms = Some(now_ms);
                self.resolution = Some(match reason {
                    Some(r) => format!("denied by {by}: {r}"),
                    None => format!("denied by {by}"),
                });
            }
            Tally::Pending { .. } => {}
        }
        t
    }

    /// Consumes an approved, unexpired approval; returns whether it did. The
    /// store makes this atomic: of two retries, one sees `approved`.
    pub fn consume(&mut self, now_ms: i64) -> bool {
        if self.state == ApprovalState::Approved && self.usable_until_ms.is_some_and(|u| now_ms < u)
        {
            self.state = ApprovalState::Consumed;
            self.resolved_ms = Some(now_ms);
            true
        } else {
            false
        }
    }

    /// The terms it is currently judged under.
    pub fn terms(&self) -> Terms {
        Terms {
            risk: self.risk,
            quorum: self.quorum.clone(),
            expires_ms: self.expires_ms,
            window_ms: self.window_ms,
            relay: self.relay,
        }
    }

    /// Whether `approver` (their [`approver_keys`]) asked for this call:
    /// compared with the keys recorded when it was created and with those
    /// of the requester and session it shows.
    pub fn requested_by(&self, approver: &[RequesterKey]) -> bool {
        same_person(&self.requester_keys, approver)
            || same_person(
                &requester_keys(self.requester.as_deref(), self.session.as_deref()),
                approver,
            )
    }

    /// Whether an approval by someone who is not a named operator (the
    /// administrator: the shared operator token, the command line without
    /// a token) can count here: only below R4, and only where one approval
    /// is enough. Everywhere else a quorum counts named people.
    pub fn admits_unnamed(&self) -> bool {
        self.risk < RiskClass::R4 && self.quorum.min_approvals <= 1
    }

    /// Re-judges a pending or approved approval with the terms a retry
    /// computed now. Any change starts a new generation, which makes every
    /// earlier vote stale, and puts an approved one back to pending.
    /// Returns whether anything changed.
    pub fn refresh(&mut self, terms: Terms) -> bool {
        if self.state.is_final() || self.terms() == terms {
            return false;
        }
        self.risk = terms.risk;
        self.quorum = terms.quorum;
        self.window_ms = terms.window_ms;
        self.relay = terms.relay;
        self.expires_ms = terms.expires_ms;
        // Even if the terms later change back, earlier votes stay stale.
        self.generation = self.generation.saturating_add(1);
        self.state = ApprovalState::Pending;
        self.usable_until_ms = None;
        self.resolved_ms = None;
        self.resolution = None;
        true
    }
}

/// The terms an approval is judged under: what a retry recomputes from the
/// policy in force, and compares with what the approval was created with.
/// [`Terms::new`] keeps relayed approval off for R4 (and [`check_vote`]
/// refuses relayed R4 votes whatever the flag says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    /// The call's risk class.
    pub risk: RiskClass,
    /// What the quorum needs.
    pub quorum: QuorumRule,
    /// When the pending approval expires.
    pub expires_ms: i64,
    /// How long it stays usable once approved.
    pub window_ms: i64,
    /// Whether relayed approval is allowed.
    pub relay: bool,
}

impl Terms {
    /// The terms for a call of class `risk`: its quorum, pending deadline,
    /// approval window, and whether the policy allows relayed approval
    /// (never for R4, whatever `relay` says).
    pub fn new(
        risk: RiskClass,
        quorum: QuorumRule,
        expires_ms: i64,
        window_ms: i64,
        relay: bool,
    ) -> Terms {
        Terms {
            risk,
            quorum,
            expires_ms,
            window_ms,
            relay: relay && risk < RiskClass::R4,
        }
    }
}

/// One approver's vote on one approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// The approval voted on.
    pub approval: ApprovalId,
    /// Which kind of factor voted.
    pub kind: ApproverKind,
    /// Who: a person's name, `rules_based`, `relay:<session>`, …
    pub identity: String,
    /// Approve (`true`) or deny.
    pub approve: bool,
    /// Why, when given.
    #[serde(default)]
    pub reason: Option<String>,
    /// Whether the agent relayed a person's answer (`toolgate_approve`, or its
    /// older name `ga_approve`).
    #[serde(default)]
    pub relayed: bool,
    /// Whether a named operator cast it, authenticated by a credential of
    /// their own (their token, their linked chat account, their browser
    /// session, a link signed for them), as the gate found them in its
    /// operators when the vote was cast. Not for the administrator.
    #[serde(default)]
    pub named: bool,
    /// The transport it came through (`cli`, `http`, `relay`, `policy`).
    pub channel: String,
    /// The risk class the voter saw (for the record: staleness is judged by
    /// the generation, which any change of terms bumps).
    pub risk: RiskClass,
    /// The approval's generation the voter saw.
    pub generation: u32,
    /// When it was cast.
    pub at_ms: i64,
}

impl Vote {
    /// Whether the vote still applies: cast on this approval's current
    /// generation, that is, on the terms it is judged under now.
    pub fn is_current(&self, approval: &Approval) -> bool {
        self.approval == approval.id && self.generation == approval.generation
    }

    /// Whether it is a person's own vote that no named operator cast (the
    /// administrator's, or any other unnamed identity's).
    pub fn unnamed_person(&self) -> bool {
        self.kind == ApproverKind::UserRequest && !self.relayed && !self.named
    }
}

/// Why a vote was refused. Each message says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VoteRefused {
    /// The approval already reached a state votes cannot change.
    #[error(
        "approval {id} is {state}; nothing to vote on (the agent must retry the call to ask again)"
    )]
    Closed {
        /// The approval.
        id: ApprovalId,
        /// Its state.
        state: ApprovalState,
    },
    /// The approval already has its quorum.
    #[error("approval {0} is already approved; the agent can retry the call now")]
    AlreadyApproved(ApprovalId),
    /// The pending approval's time ran out.
    #[error("approval {0} has expired; the agent must retry the call to ask again")]
    Expired(ApprovalId),
    /// The requester tried to approve their own call.
    #[error(
        "{0} asked for this call and cannot approve it (separation of duties); another \
         approver must"
    )]
    SelfApproval(String),
    /// This identity already has a current vote.
    #[error("{0} has already voted on this approval; each approver counts once")]
    AlreadyVoted(String),
    /// The approver kind is not active for this approval.
    #[error("{0} approvers are not enabled for this approval ([approvals] allowed_approvers)")]
    KindInactive(ApproverKind),
    /// The policy names operators and this is not one of them.
    #[error("{0} is not one of the operators named in [approvals] operators")]
    NotAnOperator(String),
    /// An empty approver name.
    #[error("an approver needs a name (an operator token, or the administrator)")]
    NoIdentity,
    /// An approval from someone who is not a named operator where only
    /// named people count (R4, or a quorum of two or more).
    #[error(
        "{identity} is not a named operator, and this {risk} call needs {need} approval(s) from \
         named people: the shared operator token and the command line without --token vote as \
         the administrator, who counts only below R4 where one approval is enough. Give each \
         approver a credential of their own (`toolgate operators add NAME`) and vote with it \
         (--token, or the control UI signed in with it)"
    )]
    NotNamed {
        /// Who tried.
        identity: String,
        /// The call's class.
        risk: RiskClass,
        /// Approvals the quorum needs.
        need: u32,
    },
    /// Relayed approval is off for this approval.
    #[error(
        "agent-relayed approval is off for this call ({0}); an operator must approve it with \
         `toolgate approvals approve ID`"
    )]
    RelayRefused(String),
}

/// Checks `vote` against `approval` and the votes already cast, at `now_ms`;
/// `approver` is who cast it in every spelling ([`approver_keys`] of their
/// name and linked accounts). Denials are accepted from anyone with a name,
/// the requester included: stopping a call is always safe. Approvals must
/// pass every rule of separation of duties.
pub fn check_vote(
    approval: &Approval,
    existing: &[Vote],
    vote: &Vote,
    approver: &[RequesterKey],
    now_ms: i64,
) -> Result<(), VoteRefused> {
    let id = approval.id;
    match approval.state {
        ApprovalState::Pending if now_ms >= approval.expires_ms => {
            return Err(VoteRefused::Expired(id));
        }
        ApprovalState::Pending => {}
        ApprovalState::Approved if vote.approve => return Err(VoteRefused::AlreadyApproved(id)),
        ApprovalState::Approved => {}
        state => return Err(VoteRefused::Closed { id, state }),
    }
    if vote.identity.trim().is_empty() {
        return Err(VoteRefused::NoIdentity);
    }
    if !vote.approve {
        return Ok(());
    }
    if approval.requested_by(approver) || approval.requested_by(&approver_keys(&vote.identity, &[]))
    {
        return Err(VoteRefused::SelfApproval(vote.identity.clone()));
    }
    if !approval.quorum.admits(vote.kind) {
        return Err(VoteRefused::KindInactive(vote.kind));
    }
    if vote.unnamed_person() && !approval.admits_unnamed() {
        return Err(VoteRefused::NotNamed {
            identity: vote.identity.clone(),
            risk: approval.risk,
            need: approval.quorum.min_approvals,
        });
    }
    if vote.relayed {
        let refuse = |why: &str| Err(VoteRefused::RelayRefused(why.to_string()));
        if approval.risk == RiskClass::R4 {
            return refuse("R4 calls are never approved by relay");
        }
        if !approval.relay {
            return refuse("the policy does not set [approvals] relay = true");
        }
        if !approval.quorum.operators.is_empty() {
            return refuse("the policy names operators, and only they may approve");
        }
        let Some(expected) = approval.relay_from.as_deref() else {
            return refuse("the call named no session for the relay to come from");
        };
        // Sessions are compared exactly (by digest), as the binding does.
        if vote.identity != expected {
            return refuse("the relay came from another session");
        }
        if existing.iter().any(|v| v.relayed && v.is_current(approval)) {
            return refuse(
                "this approval already has its one relayed vote; the rest must come from operators",
            );
        }
    } else if vote.kind == ApproverKind::UserRequest
        && !approval.quorum.operators.is_empty()
        && !approval
            .quorum
            .operators
            .iter()
            .any(|o| same_identity(o, &vote.identity))
    {
        return Err(VoteRefused::NotAnOperator(vote.identity.clone()));
    }
    if existing
        .iter()
        .any(|v| same_identity(&v.identity, &vote.identity) && v.is_current(approval))
    {
        return Err(VoteRefused::AlreadyVoted(vote.identity.clone()));
    }
    Ok(())
}

/// Whether two approver identities name the same approver: compared without
/// surrounding space and without case (`Alice` is `alice`), so one person
/// cannot count twice by changing case.
pub fn same_identity(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    a == b || a.to_lowercase() == b.to_lowercase()
}

/// The identity a relayed vote carries: a digest of the exact session it
/// was relayed from (sessions are compared exactly, and may hold text that
/// redaction would blur).
pub fn relay_identity(session: Option<&str>) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(session.unwrap_or("").as_bytes());
    format!("relay:{}", crate::hex::hex(&digest[..16]))
}
