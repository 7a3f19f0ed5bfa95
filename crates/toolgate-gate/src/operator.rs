//! What operators do with approvals (list, show, approve, deny) and
//! acknowledgements, each in one audited transaction.

use crate::{Clock, random_hex};
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate_core::redact_text;
use toolgate_core::{
    Approval, ApprovalId, ApprovalState, ApproverKind, Tally, Vote, VoteRefused, approver_keys,
    check_vote, same_identity, tally,
};
use toolgate_core::{AuditEvent, AuditKind};
use toolgate_store::{Ack, Store, StoreError, Tx};

/// An approval with where its votes stand, for listing and showing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApprovalView {
    /// The approval.
    #[serde(flatten)]
    pub approval: Approval,
    /// Current approvals counted towards the quorum.
    pub have: u32,
    /// Approvals the quorum needs.
    pub need: u32,
    /// Every vote cast, stale ones included (`current` says which count).
    pub votes: Vec<VoteView>,
}

/// A vote as shown to operators.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VoteView {
    /// The vote.
    #[serde(flatten)]
    pub vote: Vote,
    /// Whether it still counts (cast on the approval's current generation).
    pub current: bool,
}

/// A person's (or relayed) vote, as an operator surface receives it.
#[derive(Debug, Clone)]
pub struct VoteInput {
    /// Who votes.
    pub identity: String,
    /// Approve or deny.
    pub approve: bool,
    /// Why, if they said.
    pub reason: Option<String>,
    /// The transport (`cli`, `http`, `relay`, …).
    pub channel: String,
    /// Whether the agent relayed it.
    pub relayed: bool,
}

/// What a vote achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VoteOutcome {
    /// Recorded; the quorum is not reached yet.
    Recorded {
        /// Current approvals.
        have: u32,
        /// Approvals needed.
        need: u32,
        /// Whether a person's approval is still missing.
        user_missing: bool,
    },
    /// The quorum is reached: the agent may retry until this time (Unix ms).
    Approved {
        /// End of the approval window.
        usable_until_ms: i64,
    },
    /// Denied.
    Denied,
}

fn event(trace: &str, now: i64, kind: AuditKind, data: serde_json::Value) -> AuditEvent {
    AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind,
        data,
    }
}

/// The audit event for an approval changing state (or being created).
pub(crate) fn approval_event(trace: &str, now: i64, kind: AuditKind, a: &Approval) -> AuditEvent {
    let mut data = json!({
        "approval": a.id.to_string(),
        "state": a.state.as_str(),
        "risk": a.risk.as_str(),
        "binding": a.binding.to_hex(),
        "summary": a.summary,
        "min_approvals": a.quorum.min_approvals,
        "require_user": a.quorum.require_user,
        "expires_ms": a.expires_ms,
        "generation": a.generation,
    });
    if let Some(r) = &a.resolution {
        data["resolution"] = json!(r);
    }
    if kind == AuditKind::ApprovalCreated {
        data["reason"] = json!(a.reason);
        data["requester"] = json!(a.requester);
        data["session"] = json!(a.session);
        data["cwd"] = json!(a.cwd);
    }
    event(trace, now, kind, data)
}

pub(crate) fn vote_event(trace: &str, now: i64, v: &Vote, refused: Option<&str>) -> AuditEvent {
    let mut data = json!({
        "approval": v.approval.to_string(),
        "approver": v.kind.as_str(),
        "identity": v.identity,
        "approve": v.approve,
        "relayed": v.relayed,
        "named": v.named,
        "channel": v.channel,
        "risk": v.risk.as_str(),
        "generation": v.generation,
    });
    if let Some(r) = &v.reason {
        data["reason"] = json!(r);
    }
    if let Some(why) = refused {
        data["refused"] = json!(why);
    }
    event(trace, now, AuditKind::ApprovalVote, data)
}

/// Expires `a` if due, recording it; returns whether it expired.
pub(crate) fn expire(
    tx: &mut dyn Tx,
    a: &mut Approval,
    trace: &str,
    now: i64,
) -> Result<bool, StoreError> {
    match expire_quietly(tx, a, trace, now)? {
        Some(e) => {
            tx.append(&e)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Expires `a` if due and returns the audit event for the caller to append
/// in its own order.
pub(crate) fn expire_quietly(
    tx: &mut dyn Tx,
    a: &mut Approval,
    trace: &str,
    now: i64,
) -> Result<Option<AuditEvent>, StoreError> {
    if !a.expire_if_due(now) {
        return Ok(None);
    }
    tx.put_approval(a)?;
    Ok(Some(approval_event(
        trace,
        now,
        AuditKind::ApprovalExpired,
        a,
    )))
}

/// Records a vote on approval `id` at the clock's time. Refused votes are
/// audited too (a prompt-injected agent trying to approve its own call
/// should leave a trace), then reported as [`StoreError::Refused`].
pub fn vote(
    store: &dyn Store,
    clock: &dyn Clock,
    id: &ApprovalId,
    input: VoteInput,
) -> Result<VoteOutcome, StoreError> {
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let result = vote_in(&mut *tx, id, input, now, &trace)?;
    tx.commit()?;
    Ok(result?)
}

/// [`vote`] inside a transaction the caller commits: `Err` is a store
/// failure; `Ok(Err(_))` a refusal, already audited in `tx`.
pub(crate) fn vote_in(
    tx: &mut dyn Tx,
    id: &ApprovalId,
    input: VoteInput,
    now: i64,
    trace: &str,
) -> Result<Result<VoteOutcome, VoteRefused>, StoreError> {
    vote_as_in(tx, id, ApproverKind::UserRequest, input, now, trace)
}

/// [`vote_in`] for a vote of approver kind `kind` (automated approvers vote
/// through here, on the same checks as people).
///
/// A person's vote is a named operator's when its identity is the name of
/// an operator active now (the surface that took it authenticated that
/// person by a credential of their own); every identity linked to them
/// then counts as them for separation of duties. Any other identity (the
/// administrator's, [`crate::ADMIN`]) is nobody's in particular
/// ([`toolgate_core::Approval::admits_unnamed`] says where it counts).
pub(crate) fn vote_as_in(
    tx: &mut dyn Tx,
    id: &ApprovalId,
    kind: ApproverKind,
    input: VoteInput,
    now: i64,
    trace: &str,
) -> Result<Result<VoteOutcome, VoteRefused>, StoreError> {
    let mut a = tx.approval(id)?.ok_or(StoreError::NotFound(*id))?;
    expire(tx, &mut a, trace, now)?;
    let identity = input.identity.trim();
    let person = kind == ApproverKind::UserRequest && !input.relayed;
    let operator = if person {
        tx.operators()?
            .into_iter()
            .find(|o| o.active() && same_identity(&o.name, identity))
    } else {
        None
    };
    let linked = operator
        .as_ref()
        .map(|o| o.identities.clone())
        .unwrap_or_default();
    let keys = approver_keys(identity, &linked);
    let v = Vote {
        approval: a.id,
        kind,
        identity: redact_text(identity).into_owned(),
        approve: input.approve,
        reason: input.reason.map(|r| redact_text(&r).into_owned()),
        relayed: input.relayed,
        named: operator.is_some(),
        channel: redact_text(&input.channel).into_owned(),
        risk: a.risk,
        generation: a.generation,
        at_ms: now,
    };
    let mut votes = tx.votes(id)?;
    if let Err(refused) = check_vote(&a, &votes, &v, &keys, now) {
        tx.append(&vote_event(trace, now, &v, Some(&refused.to_string())))?;
        return Ok(Err(refused));
    }
    tx.put_vote(&v)?;
    tx.append(&vote_event(trace, now, &v, None))?;
    votes.retain(|old| old.identity != v.identity);
    votes.push(v);
    let before = a.state;
    let outcome = match a.settle(&votes, now) {
        Tally::Approved { .. } => VoteOutcome::Approved {
            usable_until_ms: a.usable_until_ms.unwrap_or(now),
        },
        Tally::Denied { .. } => VoteOutcome::Denied,
        Tally::Pending {
            have,
            need,
            user_missing,
        } => VoteOutcome::Recorded {
            have,
            need,
            user_missing,
        },
    };
    if a.state != before {
        tx.put_approval(&a)?;
        let kind = if a.state == ApprovalState::Denied {
            AuditKind::ApprovalDenied
        } else {
            AuditKind::ApprovalApproved
        };
        tx.append(&approval_event(trace, now, kind, &a))?;
    }
    Ok(Ok(outcome))
}

/// Expires every pending or approved approval whose time is up; returns how
/// many expired.
pub fn expire_due(store: &dyn Store, clock: &dyn Clock) -> Result<usize, StoreError> {
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let mut n = 0;
    for mut a in tx.due_approvals(now)? {
        if expire(&mut *tx, &mut a, &trace, now)? {
            n += 1;
        }
    }
    tx.commit()?;
    Ok(n)
}

fn view(tx: &mut dyn Tx, a: Approval) -> Result<ApprovalView, StoreError> {
    let votes = tx.votes(&a.id)?;
    let (have, need) = match tally(&a, &votes) {
        Tally::Pending { have, need, .. } => (have, need),
        Tally::Approved { by } => (by.len() as u32, a.quorum.min_approvals),
        Tally::Denied { .. } => (0, a.quorum.min_approvals),
    };
    let votes = votes
        .into_iter()
        .map(|v| VoteView {
            current: v.is_current(&a),
            vote: v,
        })
        .collect();
    Ok(ApprovalView {
        approval: a,
        have,
        need,
        votes,
    })
}

/// Approvals newest first, after expiring those whose time is up: the open
/// ones (pending or approved), or with `all`, every state; at most `limit`.
pub fn list(
    store: &dyn Store,
    clock: &dyn Clock,
    all: bool,
    limit: usize,
) -> Result<Vec<ApprovalView>, StoreError> {
    expire_due(store, clock)?;
    let mut tx = store.begin()?;
    let approvals = tx.approvals(!all, limit)?;
    approvals.into_iter().map(|a| view(&mut *tx, a)).collect()
}

/// One approval with its votes (expired first if its time is up).
pub fn show(
    store: &dyn Store,
    clock: &dyn Clock,
    id: &ApprovalId,
) -> Result<ApprovalView, StoreError> {
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let mut a = tx.approval(id)?.ok_or(StoreError::NotFound(*id))?;
    expire(&mut *tx, &mut a, &trace, now)?;
    let v = view(&mut *tx, a)?;
    tx.commit()?;
    Ok(v)
}

/// Records that `by` acknowledged `key` for `scope` for `ttl_ms`.
pub fn acknowledge(
    store: &dyn Store,
    clock: &dyn Clock,
    key: &str,
    scope: &str,
    by: &str,
    reason: Option<&str>,
    ttl_ms: i64,
) -> Result<Ack, StoreError> {
    let now = clock.now_ms();
    let ack = Ack {
        key: redact_text(key).into_owned(),
        scope: redact_text(scope).into_owned(),
        by: redact_text(by).into_owned(),
        reason: reason.map(|r| redact_text(r).into_owned()),
        created_ms: now,
        expires_ms: now.saturating_add(ttl_ms),
    };
    let mut tx = store.begin()?;
    tx.put_ack(&ack)?;
    let data = serde_json::to_value(&ack).unwrap_or_default();
    tx.append(&event(&random_hex()?, now, AuditKind::AckCreated, data))?;
    tx.commit()?;
    Ok(ack)
}

/// The live acknowledgement of `key` for `scope`, if one has not expired.
pub fn acknowledged(
    store: &dyn Store,
    clock: &dyn Clock,
    key: &str,
    scope: &str,
) -> Result<Option<Ack>, StoreError> {
    let now = clock.now_ms();
    let mut tx = store.begin()?;
    let ack = tx.ack(&redact_text(key), &redact_text(scope))?;
    drop(tx);
    Ok(ack.filter(|a| now < a.expires_ms))
}
