//! Emergency bypasses (docs/approvals.md): operator-only, time-boxed, with a
//! required reason, audited. A bypass lifts named layers for everyone
//! until it lapses or is ended ([`toolgate_core::bypass`] says which layers
//! may be lifted); a bypass of one approval approves it at once, whatever
//! its quorum.

use crate::operator::approval_event;
use crate::{Clock, random_hex};
use serde_json::json;
use std::time::Duration;
use toolgate_core::{
    Approval, ApprovalId, AuditEvent, AuditKind, Layer, check_layers, redact_text, rfc3339_ms,
    same_identity,
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

/// Approves pending approval `id` at once, whatever its quorum, on behalf
/// of `by`, with `reason`: the agent's retry of the exact call runs once,
/// within the approval window.
pub fn bypass_approval(
    store: &dyn Store,
    clock: &dyn Clock,
    id: &ApprovalId,
    reason: &str,
    by: &str,
) -> Result<Approval, StoreError> {
    let reason = check_reason(reason)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let mut a = tx.approval(id)?.ok_or(StoreError::NotFound(*id))?;
    // Separation of duties holds in an emergency too.
    if a.requester.as_deref().is_some_and(|r| same_identity(r, by)) {
        return Err(StoreError::Operators(format!(
            "{by} asked for this call and cannot approve it, not even by bypass; another operator must"
        )));
    }
    if !a.bypass(now, by, &reason) {
        return Err(StoreError::Operators(format!(
            "approval {id} is {}, not pending: only a pending approval can be bypassed",
            a.state.as_str()
        )));
    }
    tx.put_approval(&a)?;
    tx.append(&event(
        &trace,
        now,
        json!({"change": "approval", "approval": id.to_string(), "reason": reason, "by": by}),
    ))?;
    tx.append(&approval_event(
        &trace,
        now,
        AuditKind::ApprovalApproved,
        &a,
    ))?;
    tx.commit()?;
    Ok(a)
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
