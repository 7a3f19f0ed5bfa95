//! Resolving an escalation against the approvals of its exact call:
//! consume a live one, join a pending one (re-judged on today's terms), or
//! create one, within a fair share of the open approvals (one session, one
//! agent, everyone). The automated approvers vote once that is committed
//! (`factors.rs`).
//!
//! Joining is what folds a flood of identical calls (the same binding:
//! tool, params and scope) into one approval: no new approval, so no new
//! `approval.created` entry and no new chat message.

use crate::clock::random_bytes;
use crate::gate::{Gate, Judged};
use crate::operator::{approval_event, expire_quietly};
use crate::resolution::{Resolution, summary};
use serde_json::Value;
use toolgate_core::{
    Approval, ApprovalFinding, ApprovalId, ApprovalSettings, ApprovalState, AuditEvent, Terms,
    approver_keys, relay_identity, requester_keys, same_identity, same_person, unbindable_number,
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
        let requester_id = call.requester.as_ref().and_then(|r| r.id.as_deref());
        let requester = redacted(requester_id);
        // Who asked, in every spelling, from the call as it arrived.
        let asker = requester_keys(requester_id, call.session.as_deref());
        // An operator the policy names asked for the call if any identity
        // linked to them did: they do not count among those who may approve.
        let operators = if settings.operators.is_empty() {
            Vec::new()
        } else {
            tx.operators()?
        };
        let asked = |name: &str| {
            let linked = operators
                .iter()
                .find(|o| o.active() && same_identity(&o.name, name))
                .map(|o| o.identities.clone())
                .unwrap_or_default();
            same_person(&asker, &approver_keys(name, &linked))
        };
        let quorum = match settings.requirement(class, self.llm.is_some(), &asked) {
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
        let session = redacted(call.session.as_deref());
        let agent = redacted(call.agent.as_deref());
        if let Some(why) = crowded(
            tx,
            settings,
            session.as_deref(),
            agent.as_deref(),
            now,
            trace,
            &mut events,
        )? {
            let reason = format!("{why}. The call: {}", d.reason);
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
            requester_keys: asker,
            session,
            relay_from: call.session.as_deref().map(|s| relay_identity(Some(s))),
            agent,
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

/// Why a new approval for a call of `session` and `agent` (as stored:
/// redacted; none is a bucket of its own) would take more than its fair
/// share of the open approvals, if it would: the session's
/// (`max_open_per_session`), the agent's (`max_open_per_agent`), or
/// everyone's (`max_open`). What is due to expire is expired on the way
/// (its events go to `events`), so a stale count never blocks.
#[allow(clippy::too_many_arguments)]
fn crowded(
    tx: &mut dyn Tx,
    settings: &ApprovalSettings,
    session: Option<&str>,
    agent: Option<&str>,
    now: i64,
    trace: &str,
    events: &mut Vec<AuditEvent>,
) -> Result<Option<String>, StoreError> {
    let open = tx.count_open()?;
    let smallest = settings
        .max_open
        .min(settings.max_open_per_session)
        .min(settings.max_open_per_agent);
    // Fewer open than the smallest cap: none can be reached, nothing to read.
    if open < u64::from(smallest) {
        return Ok(None);
    }
    let (mut total, mut of_session, mut of_agent) = (0u64, 0u64, 0u64);
    let limit = usize::try_from(open)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    for mut a in tx.approvals(true, limit)? {
        if let Some(e) = expire_quietly(tx, &mut a, trace, now)? {
            events.push(e);
            continue;
        }
        total += 1;
        of_session += u64::from(a.session.as_deref() == session);
        of_agent += u64::from(a.agent.as_deref() == agent);
    }
    let what_to_do = "a person must resolve some first (`toolgate approvals list`, or the \
                      control UI); retrying a waiting call exactly as it was joins its approval \
                      instead of asking again";
    if of_session >= u64::from(settings.max_open_per_session) {
        let whose = match session {
            Some(s) => format!("session {s:?} already has"),
            None => "calls naming no session already have".to_string(),
        };
        return Ok(Some(format!(
            "{whose} {of_session} approvals waiting, the most one session may have \
             ([approvals] max_open_per_session = {}); {what_to_do}",
            settings.max_open_per_session
        )));
    }
    if of_agent >= u64::from(settings.max_open_per_agent) {
        let whose = match agent {
            Some(s) => format!("agent {s:?} already has"),
            None => "calls naming no agent already have".to_string(),
        };
        return Ok(Some(format!(
            "{whose} {of_agent} approvals waiting, the most one agent may have \
             ([approvals] max_open_per_agent = {}); {what_to_do}",
            settings.max_open_per_agent
        )));
    }
    if total >= u64::from(settings.max_open) {
        return Ok(Some(format!(
            "{total} approvals are already open, the most this policy allows ([approvals] \
             max_open = {}); {what_to_do}",
            settings.max_open
        )));
    }
    Ok(None)
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
