//! The decision path with state (DESIGN.md §1): decide with the pure core,
//! then consume a live approval or create a pending one, and audit every
//! verdict and the decision in the same transaction. The decision returned
//! carries the audit sequence number of its record, which is durable by the
//! time the caller sees it.

use crate::clock::random_bytes;
use crate::operator::{VoteInput, VoteOutcome, approval_event, expire, vote, vote_event};
use crate::{Clock, Store, StoreError, Tx, random_hex};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use toolgate_core::approval::{
    Approval, ApprovalId, ApprovalState, ApproverKind, BindingHash, Tally, Vote, VoteRefused,
    binding_hash, check_vote, relay_identity, requirement,
};
use toolgate_core::approvers::{Approver, FactorVote, RulesApprover};
use toolgate_core::audit::{AuditEvent, AuditKind};
use toolgate_core::engine::{Assessment, Engine};
use toolgate_core::model::{ApprovalRef, Decision, Layer, RiskClass, ToolCall, Verdict};
use toolgate_core::paths::Env;
use toolgate_core::redact::{redact_text, redact_value};
use toolgate_core::time::{duration_ms, rfc3339_ms};

/// Tool names an agent calls to relay a person's approval (seed 000's
/// `ga_approve`), with params `{"id": "<approval id>", "reason": "…"}`.
/// Honoured only when the policy sets `[approvals] relay = true`, never for
/// R4.
pub const RELAY_TOOLS: &[&str] = &["toolgate_approve", "ga_approve"];

/// Decides calls with an engine and a store.
pub struct Gate {
    engine: Arc<Engine>,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    base: Env,
    llm: Option<Arc<dyn Approver>>,
}

/// What one escalation turned into.
struct Resolution {
    decision: Decision,
    events: Vec<AuditEvent>,
}

impl Gate {
    /// A gate deciding with `engine`, recording in `store`, telling time by
    /// `clock`; calls without a `cwd` are judged in `base`.
    pub fn new(
        engine: Arc<Engine>,
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        base: Env,
    ) -> Gate {
        Gate {
            engine,
            store,
            clock,
            base,
            llm: None,
        }
    }

    /// Adds a model-backed `llm_evaluation` approver (counted only when the
    /// policy allows that approver).
    pub fn with_llm_approver(mut self, approver: Arc<dyn Approver>) -> Gate {
        self.llm = Some(approver);
        self
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The store.
    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// Decides one call and records it. An escalation consumes a live
    /// approval of this exact call (→ allow), or joins the pending one, or
    /// creates one; its id is in the decision's protocol line.
    pub fn check(&self, call: &ToolCall) -> Result<Decision, StoreError> {
        // A batch of one always yields exactly one decision.
        self.check_batch(std::slice::from_ref(call))
            .map(|mut d| d.swap_remove(0))
    }

    /// Decides several calls, in order, recording them in as few
    /// transactions as possible (one, unless relay calls split it). Returns
    /// only after everything is committed; on an error nothing of the failed
    /// transaction is recorded and no decision from it is returned.
    pub fn check_batch(&self, calls: &[ToolCall]) -> Result<Vec<Decision>, StoreError> {
        let mut out = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            if is_relay(&calls[i]) {
                out.push(self.relay(&calls[i], Instant::now())?);
                i += 1;
                continue;
            }
            let end = calls[i..]
                .iter()
                .position(is_relay)
                .map_or(calls.len(), |p| i + p);
            let judged: Vec<(Instant, Assessment)> = calls[i..end]
                .iter()
                .map(|c| (Instant::now(), self.engine.decide(c, &self.base)))
                .collect();
            let mut tx = self.store.begin()?;
            let mut batch = Vec::with_capacity(judged.len());
            for (call, (_, assessment)) in calls[i..end].iter().zip(&judged) {
                batch.push(self.record(&mut *tx, call, assessment)?);
            }
            tx.commit()?;
            for (mut d, (start, _)) in batch.into_iter().zip(&judged) {
                d.elapsed_us = start.elapsed().as_micros() as u64;
                out.push(d);
            }
            i = end;
        }
        Ok(out)
    }

    /// Records one judged call inside `tx`, resolving an escalation.
    fn record(
        &self,
        tx: &mut dyn Tx,
        call: &ToolCall,
        assessment: &Assessment,
    ) -> Result<Decision, StoreError> {
        let now = self.clock.now_ms();
        let trace = random_hex()?;
        let binding = binding_hash(call);
        let mut events: Vec<AuditEvent> = assessment
            .verdicts
            .iter()
            .map(|v| AuditEvent {
                ts_ms: now,
                trace: trace.clone(),
                kind: AuditKind::Verdict,
                data: json!({
                    "layer": v.layer.as_str(),
                    "verdict": v.verdict.as_str(),
                    "risk": v.class.as_str(),
                    "reason": redact_text(&v.reason),
                    "rule": v.rule,
                }),
            })
            .collect();
        let mut decision = assessment.decision.clone();
        let mut approval_id = None;
        if decision.decision == Verdict::Escalate {
            let r = self.escalate(tx, call, assessment, binding, now, &trace)?;
            approval_id = r.decision.approval.as_ref().map(|a| a.id.clone());
            decision = r.decision;
            events.extend(r.events);
        }
        decision.reason = redact_text(&decision.reason).into_owned();
        decision.block_reason = decision.block_reason.map(|b| redact_text(&b).into_owned());
        for e in &events {
            tx.append(e)?;
        }
        let seq = tx.append(&decision_event(
            call,
            binding,
            &decision,
            approval_id,
            now,
            &trace,
        ))?;
        decision.audit_seq = Some(seq);
        Ok(decision)
    }

    /// An escalation: consume, join, or create the approval for this call.
    fn escalate(
        &self,
        tx: &mut dyn Tx,
        call: &ToolCall,
        assessment: &Assessment,
        binding: BindingHash,
        now: i64,
        trace: &str,
    ) -> Result<Resolution, StoreError> {
        let settings = self.engine.policy().approvals();
        let d = &assessment.decision;
        let class = d.risk;
        let ttl = duration_ms(settings.pending_ttl);
        let mut events = Vec::new();
        let quorum = match requirement(settings, class, self.llm.is_some()) {
            Ok(q) => q,
            Err(insufficient) => {
                let reason = format!("blocked: {insufficient} (the call: {})", d.reason);
                return Ok(Resolution {
                    decision: rewrite(d, Verdict::Block, Layer::Approval, reason, None),
                    events,
                });
            }
        };
        if let Some(mut a) = tx.latest_for_binding(&binding)? {
            expire(tx, &mut a, trace, now)?;
            if matches!(a.state, ApprovalState::Pending | ApprovalState::Approved) {
                if a.refresh(class, quorum.clone(), a.created_ms.saturating_add(ttl)) {
                    tx.put_approval(&a)?;
                    events.push(approval_event(trace, now, AuditKind::ApprovalRefreshed, &a));
                }
                if a.consume(now) {
                    tx.put_approval(&a)?;
                    events.push(approval_event(trace, now, AuditKind::ApprovalConsumed, &a));
                    let reason = format!(
                        "allowed: one-time approval {} ({}) for: {}",
                        a.id,
                        a.resolution.as_deref().unwrap_or("approved"),
                        d.reason
                    );
                    return Ok(Resolution {
                        decision: rewrite(d, Verdict::Allow, Layer::Approval, reason, None),
                        events,
                    });
                }
                if a.state == ApprovalState::Pending {
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
                    "blocked: this exact call was {} ({} ago); ask the operator before trying again",
                    a.resolution.as_deref().unwrap_or("denied"),
                    ago(now - a.resolved_ms.unwrap_or(now))
                );
                return Ok(Resolution {
                    decision: rewrite(d, Verdict::Block, Layer::Approval, reason, None),
                    events,
                });
            }
        }
        let redacted = redact_value(&serde_json::to_value(call).unwrap_or(Value::Null));
        let mut a = Approval {
            id: ApprovalId::from_random(random_bytes()?),
            binding,
            state: ApprovalState::Pending,
            risk: class,
            reason: redact_text(&d.reason).into_owned(),
            tool: call.tool.clone(),
            summary: redact_text(&summary(call, &assessment.call.command)).into_owned(),
            call: redacted,
            requester: call.requester.as_ref().and_then(|r| r.id.clone()),
            session: call.session.clone(),
            agent: call.agent.clone(),
            quorum,
            relay: settings.relay && class < RiskClass::R4,
            created_ms: now,
            expires_ms: now.saturating_add(ttl),
            window_ms: duration_ms(settings.approval_window),
            usable_until_ms: None,
            resolved_ms: None,
            resolution: None,
        };
        tx.put_approval(&a)?;
        events.push(approval_event(trace, now, AuditKind::ApprovalCreated, &a));
        let votes = self.automated_votes(tx, call, &a, now, trace, &mut events)?;
        let tally = a.settle(&votes, now);
        match tally {
            Tally::Pending { .. } => Ok(Resolution {
                decision: pending_decision(d, &a),
                events,
            }),
            Tally::Denied { .. } => {
                tx.put_approval(&a)?;
                events.push(approval_event(trace, now, AuditKind::ApprovalDenied, &a));
                let reason = format!(
                    "blocked: {} (the call: {})",
                    a.resolution.as_deref().unwrap_or("denied"),
                    d.reason
                );
                Ok(Resolution {
                    decision: rewrite(d, Verdict::Block, Layer::Approval, reason, None),
                    events,
                })
            }
            Tally::Approved { .. } => {
                events.push(approval_event(trace, now, AuditKind::ApprovalApproved, &a));
                a.consume(now);
                tx.put_approval(&a)?;
                events.push(approval_event(trace, now, AuditKind::ApprovalConsumed, &a));
                let reason = format!(
                    "allowed: {} for: {}",
                    a.resolution.as_deref().unwrap_or("approved"),
                    d.reason
                );
                Ok(Resolution {
                    decision: rewrite(d, Verdict::Allow, Layer::Approval, reason, None),
                    events,
                })
            }
        }
    }

    /// Asks the automated approvers the quorum admits, recording their votes.
    fn automated_votes(
        &self,
        tx: &mut dyn Tx,
        call: &ToolCall,
        a: &Approval,
        now: i64,
        trace: &str,
        events: &mut Vec<AuditEvent>,
    ) -> Result<Vec<Vote>, StoreError> {
        let rules = RulesApprover;
        let mut approvers: Vec<&dyn Approver> = Vec::new();
        if a.quorum.admits(ApproverKind::RulesBased) {
            approvers.push(&rules);
        }
        if let Some(llm) = &self.llm
            && a.quorum.admits(ApproverKind::LlmEvaluation)
        {
            approvers.push(&**llm);
        }
        let mut votes = Vec::new();
        for approver in approvers {
            let (approve, reason) = match approver.evaluate(&self.engine, call, &self.base, a.risk)
            {
                FactorVote::Approve(r) => (true, r),
                FactorVote::Deny(r) => (false, r),
                FactorVote::Abstain => continue,
            };
            let v = Vote {
                approval: a.id,
                kind: approver.kind(),
                identity: approver.identity(),
                approve,
                reason: Some(redact_text(&reason).into_owned()),
                relayed: false,
                channel: "policy".to_string(),
                risk: a.risk,
                expires_ms: a.expires_ms,
                at_ms: now,
            };
            if check_vote(a, &votes, &v, now).is_ok() {
                tx.put_vote(&v)?;
                events.push(vote_event(trace, now, &v, None));
                votes.push(v);
            }
        }
        Ok(votes)
    }

    /// The agent relays a person's approval (seed 000's `ga_approve`).
    fn relay(&self, call: &ToolCall, start: Instant) -> Result<Decision, StoreError> {
        let id_text = ["id", "approval_id", "nonce"]
            .iter()
            .find_map(|k| call.params.get(*k).and_then(Value::as_str));
        let reason_text = call.params.get("reason").and_then(Value::as_str);
        let (verdict, reason) = match id_text.map(ApprovalId::parse) {
            None => (
                Verdict::Block,
                format!(
                    "{} needs {{\"id\": \"<approval id>\"}} from the TOOLGATE_ESCALATE line",
                    call.tool
                ),
            ),
            Some(Err(e)) => (Verdict::Block, e.to_string()),
            Some(Ok(id)) => {
                let input = VoteInput {
                    identity: relay_identity(call.session.as_deref()),
                    approve: true,
                    reason: reason_text.map(str::to_string),
                    channel: "relay".to_string(),
                    relayed: true,
                };
                match vote(&*self.store, &*self.clock, &id, input) {
                    Ok(VoteOutcome::Approved { usable_until_ms }) => (
                        Verdict::Allow,
                        format!(
                            "approval {id} recorded as relayed by the agent; retry the exact call \
                             before {}",
                            rfc3339_ms(usable_until_ms)
                        ),
                    ),
                    Ok(VoteOutcome::Recorded { have, need, .. }) => (
                        Verdict::Allow,
                        format!(
                            "relayed approval recorded for {id} ({have} of {need}); it still needs \
                             an operator's approval"
                        ),
                    ),
                    Ok(VoteOutcome::Denied) => (Verdict::Block, format!("approval {id} is denied")),
                    // The quorum is already there: the retry will run.
                    Err(StoreError::Refused(r @ VoteRefused::AlreadyApproved(_))) => {
                        (Verdict::Allow, r.to_string())
                    }
                    Err(StoreError::Refused(r)) => (Verdict::Block, r.to_string()),
                    Err(StoreError::NotFound(id)) => (
                        Verdict::Block,
                        format!("no approval {id}: copy the id from the TOOLGATE_ESCALATE line"),
                    ),
                    Err(e) => return Err(e),
                }
            }
        };
        let now = self.clock.now_ms();
        let trace = random_hex()?;
        let reason = match verdict {
            Verdict::Allow => format!("allowed: {reason}"),
            _ => format!("blocked: {reason}"),
        };
        let mut decision = Decision {
            decision: verdict,
            risk: RiskClass::R0,
            score: 1,
            layer: Layer::Approval,
            block_reason: Decision::protocol_line(verdict, None, &reason),
            reason,
            approval: None,
            context: None,
            params: None,
            audit_seq: None,
            elapsed_us: 0,
        };
        let mut tx = self.store.begin()?;
        let seq = tx.append(&decision_event(
            call,
            binding_hash(call),
            &decision,
            None,
            now,
            &trace,
        ))?;
        tx.commit()?;
        decision.audit_seq = Some(seq);
        decision.elapsed_us = start.elapsed().as_micros() as u64;
        Ok(decision)
    }
}

fn is_relay(call: &ToolCall) -> bool {
    RELAY_TOOLS.contains(&call.tool.as_str())
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

/// `d` with a different verdict, layer and reason.
fn rewrite(
    d: &Decision,
    verdict: Verdict,
    layer: Layer,
    reason: String,
    approval: Option<ApprovalRef>,
) -> Decision {
    let mut out = d.clone();
    out.decision = verdict;
    out.layer = layer;
    out.block_reason = Decision::protocol_line(verdict, None, &reason);
    out.reason = reason;
    out.approval = approval;
    out
}

/// One line for operators: the command, or the tool and its params.
fn summary(call: &ToolCall, command: &Option<String>) -> String {
    let text = match command {
        Some(c) => c.clone(),
        None => format!("{} {}", call.tool, Value::Object(call.params.clone())),
    };
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 200 {
        let cut: String = one_line.chars().take(200).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

fn ago(ms: i64) -> String {
    let s = ms / 1000;
    if s < 120 {
        format!("{s}s")
    } else {
        format!("{}m", s / 60)
    }
}

/// The audit event recording a decision, with the call redacted.
fn decision_event(
    call: &ToolCall,
    binding: BindingHash,
    d: &Decision,
    approval: Option<String>,
    now: i64,
    trace: &str,
) -> AuditEvent {
    let call = redact_value(&serde_json::to_value(call).unwrap_or(Value::Null));
    AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind: AuditKind::Decision,
        data: json!({
            "call": call,
            "binding": binding.to_hex(),
            "decision": d.decision.as_str(),
            "risk": d.risk.as_str(),
            "score": d.score,
            "layer": d.layer.as_str(),
            "reason": d.reason,
            "approval": approval,
        }),
    }
}
