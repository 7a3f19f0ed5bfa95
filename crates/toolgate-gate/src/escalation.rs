//! Resolving an escalation against the approvals of its exact call:
//! consume a live one, join a pending one (re-judged on today's terms), or
//! create one. The automated approvers vote once that is committed
//! (`factors.rs`).

use crate::clock::random_bytes;
use crate::gate::{Gate, Judged};
use crate::operator::{approval_event, expire_quietly};
use crate::resolution::{Resolution, summary};
use serde_json::Value;
use toolgate_core::{
    Approval, ApprovalFinding, ApprovalId, ApprovalState, Terms, relay_identity, unbindable_number,
};
use toolgate_core::{ApprovalRef, Decision, Layer, Verdict, duration_ms, rfc3339_ms};
use toolgate_core::{Assessment, AuditKind, redact_text};
use toolgate_store::{StoreError, Tx};

fn redacted(s: Option<&str>) -> Option<String> {
    s.map(|s| redact_text(s).into_owned())
}

impl Gate {
    /// An escalation: consume, join, or create the approval for this call.
    pub(crate) fn escalate(
        &self,
        tx: &mut dyn Tx,
        judged: &Judged,
        assessment: &Assessment,
        now: i64,
        trace: &str,
    ) -> Result<Resolution, StoreError> {
        let (call, shown, binding) = (&judged.call, &judged.shown, judged.binding);
        let settings = self.engine.policy().approvals();
        let d = &assessment.decision;
        let class = d.risk;
        let ttl = duration_ms(settings.pending_ttl);
        let mut events = Vec::new();
        if let Some(n) = unbindable_number(&Value::Object(call.params.clone())) {
            let reason = format!(
                "an approval cannot be bound exactly to the number {n} in the params \
                 (many different numbers read as it); send large ids as strings (the call: {})",
                d.reason
            );
            return Ok(Resolution {
                decision: rewrite(d, Verdict::Block, &reason),
                events,
            });
        }
        let requester = redacted(call.requester.as_ref().and_then(|r| r.id.as_deref()));
        let quorum = match settings.requirement(class, self.llm.is_some(), requester.as_deref()) {
            Ok(q) => q,
            Err(insufficient) => {
                let reason = format!("{insufficient} (the call: {})", d.reason);
                return Ok(Resolution {
                    decision: rewrite(d, Verdict::Block, &reason),
                    events,
                });
            }
        };
        let terms = |expires_ms| {
            Terms::new(
                class,
                quorum.clone(),
                expires_ms,
                duration_ms(settings.approval_window),
                settings.relay,
            )
        };
        if let Some(mut a) = tx.latest_for_binding(&binding)? {
            events.extend(expire_quietly(tx, &mut a, trace, now)?);
            if matches!(a.state, ApprovalState::Pending | ApprovalState::Approved) {
                let changed = a.refresh(terms(a.created_ms.saturating_add(ttl)));
                if changed {
                    tx.put_approval(&a)?;
                    events.push(approval_event(trace, now, AuditKind::ApprovalRefreshed, &a));
                }
                if a.consume(now) {
                    tx.put_approval(&a)?;
                    events.push(approval_event(trace, now, AuditKind::ApprovalConsumed, &a));
                    let reason = format!(
                        "one-time approval {} ({}) for: {}",
                        a.id,
                        a.resolution.as_deref().unwrap_or("approved"),
                        d.reason
                    );
                    return Ok(Resolution {
                        decision: rewrite(d, Verdict::Allow, &reason),
                        events,
                    });
                }
                if a.state == ApprovalState::Pending {
                    // On new terms the automated approvers judge again,
                    // once this is committed (`Gate::run_factors`).
                    return Ok(Resolution {
                        decision: pending_decision(d, &a),
                        events,
                    });
                }
            }
            if a.state == ApprovalState::Denied
                && a.resolved_ms.is_some_and(|t| now < t.saturating_add(ttl))
            {
                let reason = format!(
                    "this exact call was {} ({} ago); ask the operator before trying again",
                    a.resolution.as_deref().unwrap_or("denied"),
                    ago(now - a.resolved_ms.unwrap_or(now))
                );
                return Ok(Resolution {
                    decision: rewrite(d, Verdict::Block, &reason),
                    events,
                });
            }
        }
        let open = tx.count_open()?;
        if open >= u64::from(settings.max_open) {
            let reason = format!(
                "{open} approvals are already open, the most this policy allows ([approvals] \
                 max_open = {}); an operator must resolve some first (`toolgate approvals \
                 list`, or the control UI). The call: {}",
                settings.max_open, d.reason
            );
            return Ok(Resolution {
                decision: rewrite(d, Verdict::Block, &reason),
                events,
            });
        }
        let t = terms(now.saturating_add(ttl));
        let a = Approval {
            id: ApprovalId::from_random(random_bytes()?),
            binding,
            state: ApprovalState::Pending,
            risk: class,
            reason: redact_text(&d.reason).into_owned(),
            summary: summary(call, &assessment.call),
            call: shown.clone(),
            requester,
            session: redacted(call.session.as_deref()),
            relay_from: call.session.as_deref().map(|s| relay_identity(Some(s))),
            agent: redacted(call.agent.as_deref()),
            cwd: Some(redact_text(&assessment.call.cwd).into_owned()),
            quorum: t.quorum,
            relay: t.relay,
            created_ms: now,
            expires_ms: t.expires_ms,
            window_ms: t.window_ms,
            generation: 0,
            usable_until_ms: None,
            resolved_ms: None,
            resolution: None,
            findings: findings(assessment),
            waiting_until_ms: None,
        };
        tx.put_approval(&a)?;
        events.push(approval_event(trace, now, AuditKind::ApprovalCreated, &a));
        // The automated approvers vote once this is committed, outside the
        // write lock (`Gate::run_factors`).
        Ok(Resolution {
            decision: pending_decision(d, &a),
            events,
        })
    }
}

/// Every finding that escalated or blocked the call, strongest first,
/// redacted: what the people asked to approve it read.
fn findings(assessment: &Assessment) -> Vec<ApprovalFinding> {
    let mut out: Vec<ApprovalFinding> = assessment
        .verdicts
        .iter()
        .filter(|v| v.verdict != Verdict::Allow)
        .map(|v| ApprovalFinding {
            layer: v.layer,
            verdict: v.verdict,
            risk: v.class,
            reason: redact_text(&v.reason).into_owned(),
            rule: v.rule.clone(),
            command: v.command.as_deref().map(|c| redact_text(c).into_owned()),
        })
        .collect();
    out.sort_by_key(|f| std::cmp::Reverse((f.verdict == Verdict::Block, f.risk)));
    // The same finding reached twice (one command judged in two working
    // directories) is listed once.
    let mut once: Vec<ApprovalFinding> = Vec::with_capacity(out.len());
    for f in out {
        if !once.contains(&f) {
            once.push(f);
        }
    }
    once
}

/// The decision for a call waiting on approval `a`.
fn pending_decision(d: &Decision, a: &Approval) -> Decision {
    let id = a.id.to_string();
    let mut out = d.clone();
    out.block_reason = Decision::protocol_line(Verdict::Escalate, Some(&id), &d.reason);
    out.approval = Some(ApprovalRef {
        id,
        expires_at: rfc3339_ms(a.expires_ms),
        min_approvals: a.quorum.min_approvals,
        approve_url: None,
    });
    out
}

/// `d` answered by the approval layer instead: another verdict, saying
/// `why` (without the verb, which [`Decision::new`] adds).
fn rewrite(d: &Decision, verdict: Verdict, why: &str) -> Decision {
    Decision::new(verdict, d.risk, d.score, Layer::Approval, why)
}

/// How long ago, in `ms` milliseconds, approximately; a clock that stepped
/// back reads as `0s`.
fn ago(ms: i64) -> String {
    let secs = u64::try_from(ms / 1000).unwrap_or(0);
    toolgate_core::span(secs, toolgate_core::SpanStyle::About)
}
