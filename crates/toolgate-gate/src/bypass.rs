//! Emergency bypasses (docs/approvals.md): operator-only, time-boxed, with a
//! required reason, audited. A bypass lifts named layers for everyone
//! until it lapses or is ended ([`toolgate_core::bypass`] says which layers
//! may be lifted). A bypass of one approval is one person's approving vote,
//! with its reason on the record: it honours `[approvals] operators` and
//! separation of duties, and counts once towards the quorum, so it never
//! alone meets a quorum of two.

use crate::operator::{VoteInput, VoteOutcome, vote_in};
use crate::{Clock, random_hex};
use serde_json::json;
use std::time::Duration;
use toolgate_core::{
    Approval, ApprovalId, AuditEvent, AuditKind, Layer, check_layers, redact_text, rfc3339_ms,
};
use toolgate_store::{Bypass, Store, StoreError};

/// The longest a bypass may run: an emergency, not a new policy.
pub const MAX_BYPASS: Duration = Duration::from_secs(24 * 3600);

/// Fewest characters a bypass's reason may have: "x" explains nothing.
const MIN_REASON: usize = 8;

fn check_reason(reason: &str) -> Result<String, StoreError> {
    let r = reason.trim();
    if r.chars().count() < MIN_REASON {
        return Err(StoreError::Operators(format!(
            "a bypass needs a reason of at least {MIN_REASON} characters (what the emergency is): it goes into the audit log"
        )));
    }
    Ok(redact_text(r).into_owned())
}

fn event(trace: &str, now: i64, data: serde_json::Value) -> AuditEvent {
    AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind: AuditKind::Bypass,
        data,
    }
}

/// Starts a bypass of `layers` for `duration` (at most [`MAX_BYPASS`]) on
/// behalf of `by`, with `reason`.
pub fn start_bypass(
    store: &dyn Store,
    clock: &dyn Clock,
    layers: &[Layer],
    duration: Duration,
    reason: &str,
    by: &str,
) -> Result<Bypass, StoreError> {
    check_layers(layers).map_err(StoreError::Operators)?;
    if duration.is_zero() || duration > MAX_BYPASS {
        return Err(StoreError::Operators(format!(
            "a bypass lasts more than 0 and at most {}h; change the policy for anything longer",
            MAX_BYPASS.as_secs() / 3600
        )));
    }
    let reason = check_reason(reason)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut layers = layers.to_vec();
    layers.dedup();
    let b = Bypass {
        id: random_hex()?,
        layers,
        reason,
        by: by.to_string(),
        started_ms: now,
        until_ms: now.saturating_add(duration.as_millis() as i64),
        ended: None,
    };
    let mut tx = store.begin()?;
    tx.put_bypass(&b)?;
    tx.append(&event(
        &trace,
        now,
        json!({"change": "started", "bypass": b.id, "layers": b.layers, "until": rfc3339_ms(b.until_ms), "reason": b.reason, "by": by}),
    ))?;
    tx.commit()?;
    Ok(b)
}

/// Ends bypass `id` now, on behalf of `by`.
pub fn end_bypass(
    store: &dyn Store,
    clock: &dyn Clock,
    id: &str,
    by: &str,
) -> Result<Bypass, StoreError> {
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let mut b = tx
        .bypasses()?
        .into_iter()
        .find(|b| b.id == id.trim())
        .ok_or_else(|| {
            StoreError::Operators(format!("no bypass {id}: `toolgate bypass list` shows them"))
        })?;
    if !b.active(now) {
        return Err(StoreError::Operators(format!(
            "bypass {} is over already",
            b.id
        )));
    }
    b.ended = Some((now, by.to_string()));
    tx.put_bypass(&b)?;
    tx.append(&event(
        &trace,
        now,
        json!({"change": "ended", "bypass": b.id, "layers": b.layers, "by": by}),
    ))?;
    tx.commit()?;
    Ok(b)
}

/// Bypasses approval `id` on behalf of `by`, with `reason`: `by`'s approving
/// vote, counted like any other (channel `bypass`): alone it approves where
/// one approval is enough; where the quorum needs more (R4 needs two named
/// operators) it is one of them, and the rest must vote or bypass too.
/// Refused ([`StoreError::Refused`], audited) where that vote would be:
/// `by` asked for the call, is not among `[approvals] operators`, already
/// voted, or is the administrator where only named people count. Returns
/// the approval as it now stands and what the vote achieved.
pub fn bypass_approval(
    store: &dyn Store,
    clock: &dyn Clock,
    id: &ApprovalId,
    reason: &str,
    by: &str,
) -> Result<(Approval, VoteOutcome), StoreError> {
    let reason = check_reason(reason)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let input = VoteInput {
        identity: by.to_string(),
        approve: true,
        reason: Some(reason.clone()),
        channel: "bypass".to_string(),
        relayed: false,
    };
    let outcome = vote_in(&mut *tx, id, input, now, &trace)?;
    let counted = match &outcome {
        Ok(VoteOutcome::Approved { .. }) => json!("approved"),
        Ok(VoteOutcome::Recorded { have, need, .. }) => json!(format!("{have} of {need}")),
        Ok(VoteOutcome::Denied) => json!("denied"),
        Err(refused) => json!(format!("refused: {refused}")),
    };
    tx.append(&event(
        &trace,
        now,
        json!({"change": "approval", "approval": id.to_string(), "reason": reason, "by": by, "counted": counted}),
    ))?;
    let approval = tx.approval(id)?.ok_or(StoreError::NotFound(*id))?;
    tx.commit()?;
    Ok((approval, outcome?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bypass_is_active_until_it_lapses_or_ends() {
        let mut b = Bypass {
            id: "b".into(),
            layers: vec![Layer::Knowledge],
            reason: "outage".into(),
            by: "alice".into(),
            started_ms: 0,
            until_ms: 1000,
            ended: None,
        };
        assert!(b.active(999) && !b.active(1000));
        b.ended = Some((10, "bob".into()));
        assert!(!b.active(20));
        assert!(b.note().contains("by alice"));
    }
}
