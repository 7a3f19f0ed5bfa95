//! The decision path with state (DESIGN.md §1): decide with the pure core,
//! then consume a live approval or create a pending one, and audit every
//! verdict and the decision in the same transaction. The decision returned
//! carries the audit sequence number of its record, which is durable by the
//! time the caller sees it.

use crate::escalation::{Resolution, relay_decision};
use crate::operator::{VoteInput, VoteOutcome, vote_in};
use crate::{Clock, Store, StoreError, Tx, random_hex};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use toolgate_core::approval::{ApprovalId, BindingHash, VoteRefused, binding_hash, relay_identity};
use toolgate_core::approvers::Approver;
use toolgate_core::audit::{AuditEvent, AuditKind};
use toolgate_core::engine::{Assessment, Engine};
use toolgate_core::model::{Decision, ToolCall, Verdict};
use toolgate_core::paths::Env;
use toolgate_core::redact::{bound_size, redact_text, redact_value};
use toolgate_core::time::rfc3339_ms;

/// Tool names an agent calls to relay a person's approval (seed 000's
/// `ga_approve`), with params `{"id": "<approval id>", "reason": "…"}`.
/// Honoured only when the policy sets `[approvals] relay = true`, never for
/// R4, once per approval, from the session that made the call.
pub const RELAY_TOOLS: &[&str] = &["toolgate_approve", "ga_approve"];

/// A call the engine has judged, not yet recorded.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The call.
    pub call: ToolCall,
    assessment: Option<Assessment>,
    start: Instant,
    // Computed here, outside the write lock: for a big call these cost more
    // than the rest of recording.
    pub(crate) binding: BindingHash,
    pub(crate) shown: Value,
}

/// Decides calls with an engine and a store.
pub struct Gate {
    pub(crate) engine: Arc<Engine>,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    pub(crate) base: Env,
    pub(crate) llm: Option<Arc<dyn Approver>>,
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

    /// The engine deciding calls (its policy, for protocol text and state).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The store it records in (for reading approvals while a caller waits).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Records that a caller stopped waiting for approval `approval` of
    /// `call` after `waited_ms` (`outcome`: `timeout`, `expired`, …) and the
    /// `decision` answered instead, in one transaction; returns the decision
    /// with its audit sequence number.
    pub fn record_wait_end(
        &self,
        call: &ToolCall,
        approval: &ApprovalId,
        outcome: &str,
        waited_ms: i64,
        mut decision: Decision,
    ) -> Result<Decision, StoreError> {
        let now = self.clock.now_ms();
        let trace = random_hex()?;
        let binding = binding_hash(call, &self.engine.env_for(call, &self.base));
        let shown = shown_call(call);
        decision.reason = redact_text(&decision.reason).into_owned();
        decision.block_reason = decision.block_reason.map(|b| redact_text(&b).into_owned());
        let mut tx = self.store.begin()?;
        tx.append(&AuditEvent {
            ts_ms: now,
            trace: trace.clone(),
            kind: AuditKind::WaitEnded,
            data: json!({
                "approval": approval.to_string(),
                "outcome": outcome,
                "waited_ms": waited_ms,
            }),
        })?;
        let seq = tx.append(&decision_event(
            &shown,
            binding,
            &decision,
            Some(approval.to_string()),
            now,
            &trace,
        ))?;
        tx.commit()?;
        decision.audit_seq = Some(seq);
        Ok(decision)
    }

    /// Decides one call and records it. An escalation consumes a live
    /// approval of this exact call (→ allow), or joins the pending one, or
    /// creates one; its id is in the decision's protocol line.
    pub fn check(&self, call: &ToolCall) -> Result<Decision, StoreError> {
        // A batch of one always yields exactly one decision.
        self.check_batch(std::slice::from_ref(call))
            .map(|mut d| d.swap_remove(0))
    }

    /// Decides several calls, in order, recording them in one transaction.
    /// Returns only after it is committed; on an error nothing is recorded
    /// and no decision is returned.
    pub fn check_batch(&self, calls: &[ToolCall]) -> Result<Vec<Decision>, StoreError> {
        let judged: Vec<Judged> = calls.iter().map(|c| self.judge(c.clone())).collect();
        self.record_batch(&judged)
    }

    /// The CPU half of a check: the engine's judgement, with no lock held
    /// and nothing recorded. A daemon runs this on many threads and keeps
    /// its single writer for [`Gate::record_batch`].
    pub fn judge(&self, call: ToolCall) -> Judged {
        let start = Instant::now();
        let assessment = (!is_relay(&call)).then(|| self.engine.decide(&call, &self.base));
        let binding = binding_hash(&call, &self.engine.env_for(&call, &self.base));
        let shown = shown_call(&call);
        Judged {
            call,
            assessment,
            start,
            binding,
            shown,
        }
    }

    /// The I/O half: resolves escalations and records the judged calls, in
    /// order, in one transaction; answers only once it is committed. Calls
    /// should have been judged by this gate (same policy).
    pub fn record_batch(&self, judged: &[Judged]) -> Result<Vec<Decision>, StoreError> {
        let mut tx = self.store.begin()?;
        let mut out = Vec::with_capacity(judged.len());
        for j in judged {
            out.push(self.record(&mut *tx, j)?);
        }
        tx.commit()?;
        for (d, j) in out.iter_mut().zip(judged) {
            d.elapsed_us = j.start.elapsed().as_micros() as u64;
        }
        Ok(out)
    }

    /// Records one call inside `tx`: a relayed approval, or a judged call
    /// with its escalation resolved.
    fn record(&self, tx: &mut dyn Tx, judged: &Judged) -> Result<Decision, StoreError> {
        let (call, binding, shown) = (&judged.call, judged.binding, &judged.shown);
        let now = self.clock.now_ms();
        let trace = random_hex()?;
        let Some(assessment) = judged.assessment.as_ref() else {
            let mut decision = self.relay_in(tx, call, now, &trace)?;
            let seq = tx.append(&decision_event(
                shown, binding, &decision, None, now, &trace,
            ))?;
            decision.audit_seq = Some(seq);
            return Ok(decision);
        };
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
            let Resolution {
                decision: d,
                events: more,
            } = self.escalate(tx, judged, assessment, now, &trace)?;
            approval_id = d.approval.as_ref().map(|a| a.id.clone());
            decision = d;
            events.extend(more);
        }
        decision.reason = redact_text(&decision.reason).into_owned();
        decision.block_reason = decision.block_reason.map(|b| redact_text(&b).into_owned());
        for e in &events {
            tx.append(e)?;
        }
        let seq = tx.append(&decision_event(
            shown,
            binding,
            &decision,
            approval_id,
            now,
            &trace,
        ))?;
        decision.audit_seq = Some(seq);
        Ok(decision)
    }

    /// The agent relays a person's approval (seed 000's `ga_approve`): a
    /// vote recorded in the same transaction and trace as the decision
    /// answering it.
    fn relay_in(
        &self,
        tx: &mut dyn Tx,
        call: &ToolCall,
        now: i64,
        trace: &str,
    ) -> Result<Decision, StoreError> {
        let id_text = ["id", "approval_id", "nonce"]
            .iter()
            .find_map(|k| call.params.get(*k).and_then(Value::as_str));
        let Some(id_text) = id_text else {
            return Ok(relay_decision(
                Verdict::Block,
                format!(
                    "{} needs {{\"id\": \"<approval id>\"}} from the TOOLGATE_ESCALATE line",
                    call.tool
                ),
            ));
        };
        let id = match ApprovalId::parse(id_text) {
            Ok(id) => id,
            Err(e) => return Ok(relay_decision(Verdict::Block, e.to_string())),
        };
        let input = VoteInput {
            identity: relay_identity(call.session.as_deref()),
            approve: true,
            reason: call
                .params
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_string),
            channel: "relay".to_string(),
            relayed: true,
        };
        let (verdict, reason) = match vote_in(tx, &id, input, now, trace) {
            Ok(Ok(VoteOutcome::Approved { usable_until_ms })) => (
                Verdict::Allow,
                format!(
                    "approval {id} recorded as relayed by the agent; retry the exact call \
                     before {}",
                    rfc3339_ms(usable_until_ms)
                ),
            ),
            Ok(Ok(VoteOutcome::Recorded { have, need, .. })) => (
                Verdict::Allow,
                format!(
                    "relayed approval recorded for {id} ({have} of {need}); it still needs an \
                     operator's approval"
                ),
            ),
            Ok(Ok(VoteOutcome::Denied)) => (Verdict::Block, format!("approval {id} is denied")),
            // The quorum is already there: the retry will run.
            Ok(Err(r @ VoteRefused::AlreadyApproved(_))) => (Verdict::Allow, r.to_string()),
            Ok(Err(r)) => (Verdict::Block, r.to_string()),
            Err(StoreError::NotFound(id)) => (
                Verdict::Block,
                format!("no approval {id}: copy the id from the TOOLGATE_ESCALATE line"),
            ),
            Err(e) => return Err(e),
        };
        Ok(relay_decision(verdict, reason))
    }
}

/// The call as records keep it: redacted, then cut to a bounded size.
fn shown_call(call: &ToolCall) -> Value {
    bound_size(redact_value(
        &serde_json::to_value(call).unwrap_or(Value::Null),
    ))
}

fn is_relay(call: &ToolCall) -> bool {
    RELAY_TOOLS.contains(&call.tool.as_str())
}

/// The audit event recording a decision; `shown` is the call as stored
/// ([`shown_call`]).
fn decision_event(
    shown: &Value,
    binding: BindingHash,
    d: &Decision,
    approval: Option<String>,
    now: i64,
    trace: &str,
) -> AuditEvent {
    AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind: AuditKind::Decision,
        data: json!({
            "call": shown,
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
