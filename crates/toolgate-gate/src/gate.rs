//! The decision path with state (ARCHITECTURE.md, "Bird's-eye view"): decide with the pure core,
//! then consume a live approval or create a pending one, and audit every
//! verdict and the decision in the same transaction. The decision returned
//! carries the audit sequence number of its record, which is durable by the
//! time the caller sees it.

use crate::knowledge::{
    AckError, KnowledgeBase, KnowledgeStats, Lookup, ack_scope, acknowledge_in, put_acks,
};
use crate::operator::{VoteInput, VoteOutcome, vote_in};
use crate::resolution::{Resolution, relay_decision};
use crate::{Clock, random_hex};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use toolgate_core::Approver;
use toolgate_core::knowledge::enforce::{AckHint, Audience, Outcome, outcome, render, summary};
use toolgate_core::normalize;
use toolgate_core::paths::Env;
use toolgate_core::{
    ApprovalId, Assessment, AuditEvent, AuditKind, BindingHash, Decision, Engine, Layer, ToolCall,
    Verdict, VoteRefused, binding_hash, bound_size, redact_text, redact_value, relay_identity,
    rfc3339_ms,
};
use toolgate_store::{Bypass, Shown, Store, StoreError, Tx};

/// Tool names an agent calls to relay a person's approval
/// (`toolgate_approve`, and the older name `ga_approve`), with params
/// `{"id": "<approval id>", "reason": "…"}`.
/// Honoured only when the policy sets `[approvals] relay = true`, never for
/// R4, once per approval, from the session that made the call.
pub const RELAY_TOOLS: &[&str] = &["toolgate_approve", "ga_approve"];

/// Tool names an agent calls to acknowledge knowledge shown to it, with
/// params `{"id": "<id from the TOOLGATE_ACK line>"}`. Only the session
/// (or agent) the knowledge was shown to can acknowledge it this way.
pub const ACK_TOOLS: &[&str] = &["toolgate_ack"];

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
    /// What the call does, in one redacted line (the dashboard's summary).
    pub(crate) summary: String,
    knowledge: Option<Lookup>,
}

impl Judged {
    /// The shell analyses the engine made of the call (none for a relayed
    /// approval or an acknowledgement, which the engine does not judge).
    pub(crate) fn analyses(&self) -> Option<&toolgate_core::shell::Analyses> {
        self.assessment.as_ref().map(|a| &a.call.analyses)
    }
}

/// Decides calls with an engine and a store.
pub struct Gate {
    pub(crate) engine: Arc<Engine>,
    store: Arc<dyn Store>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) base: Env,
    pub(crate) llm: Option<Arc<dyn Approver>>,
    knowledge: Arc<KnowledgeBase>,
    /// The bypasses as last read or fed.
    bypasses: Mutex<BypassCache>,
}

/// The bypasses a gate applies, and where they came from.
#[derive(Default)]
struct BypassCache {
    /// When the gate last read them itself (Unix ms).
    read_at: Option<i64>,
    /// Whether its owner feeds them ([`Gate::feed_bypasses`]).
    fed: bool,
    list: Arc<Vec<Bypass>>,
}

/// How long bypasses read from the store are trusted, in milliseconds.
pub(crate) const BYPASS_FRESH_MS: i64 = 1_000;

/// Bypasses that cannot be read are logged to stderr once per read; none
/// is applied (stricter).
fn tracing_warn(e: &StoreError) {
    eprintln!("toolgate: cannot read the emergency bypasses ({e}); deciding without any");
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
        let knowledge = Arc::new(KnowledgeBase::new(
            engine.policy().knowledge().clone(),
            &base,
            Arc::new(KnowledgeStats::default()),
        ));
        Gate {
            engine,
            store,
            clock,
            base,
            llm: None,
            knowledge,
            bypasses: Mutex::new(BypassCache::default()),
        }
    }

    /// Counts knowledge in `stats` (a daemon keeps one across policy
    /// reloads) instead of counters of its own.
    pub fn with_knowledge_stats(mut self, stats: Arc<KnowledgeStats>) -> Gate {
        let kb = KnowledgeBase::new(self.engine.policy().knowledge().clone(), &self.base, stats);
        self.knowledge = Arc::new(kb);
        self
    }

    /// Replaces the knowledge base (tests use one that re-reads SOP files
    /// on every lookup).
    pub fn with_knowledge(mut self, kb: KnowledgeBase) -> Gate {
        self.knowledge = Arc::new(kb);
        self
    }

    /// The knowledge base: its settings and counters.
    pub fn knowledge(&self) -> &KnowledgeBase {
        &self.knowledge
    }

    /// Acknowledges the knowledge shown under `id` on behalf of `by`
    /// (`toolgate knowledge ack`, `POST /v1/knowledge/ack`), for the
    /// policy's cooldown; with `scope`, only knowledge shown there.
    pub fn acknowledge(&self, id: &str, by: &str, scope: Option<&str>) -> Result<Shown, AckError> {
        let ttl = self.knowledge.settings().cooldown.as_millis() as i64;
        let shown =
            crate::knowledge::acknowledge_shown(&*self.store, &*self.clock, id, by, scope, ttl)?;
        self.knowledge.stats().acked(false);
        Ok(shown)
    }

    /// Adds a model-backed `llm_evaluation` approver (counted only when the
    /// policy allows that approver).
    pub fn with_llm_approver(mut self, approver: Arc<dyn Approver>) -> Gate {
        self.llm = Some(approver);
        self
    }

    /// The layers lifted by the bypasses active now, with a note naming
    /// them (who, until when, why); `None` when none is. Read from the
    /// store at most once a second ([`BYPASS_FRESH_MS`]), so a daemon does
    /// not read it per call and a short-lived process reads it once. A
    /// store that cannot be read lifts nothing.
    pub fn active_bypass(&self) -> Option<(Vec<Layer>, String)> {
        let now = self.clock.now_ms();
        let mut cache = self.bypasses.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = cache.fed
            || cache
                .read_at
                .is_some_and(|at| now.saturating_sub(at) < BYPASS_FRESH_MS && now >= at);
        if !fresh {
            let read = self.store.read_bypasses().unwrap_or_else(|e| {
                tracing_warn(&e);
                Vec::new()
            });
            cache.read_at = Some(now);
            cache.list = Arc::new(read);
        }
        let all = cache.list.clone();
        drop(cache);
        let active: Vec<&Bypass> = all.iter().filter(|b| b.active(now)).collect();
        if active.is_empty() {
            return None;
        }
        let mut layers: Vec<Layer> = active.iter().flat_map(|b| b.layers.clone()).collect();
        layers.dedup();
        let note = active
            .iter()
            .map(|b| b.note())
            .collect::<Vec<_>>()
            .join("; ");
        Some((layers, note))
    }

    /// The note of an active bypass of the knowledge layer, if one is in
    /// force: from the bypasses fed to this gate, else read in `tx`.
    fn knowledge_bypass(&self, tx: &mut dyn Tx, now: i64) -> Result<Option<String>, StoreError> {
        let fed = {
            let cache = self.bypasses.lock().unwrap_or_else(|p| p.into_inner());
            cache.fed.then(|| cache.list.clone())
        };
        let list = match fed {
            Some(list) => list,
            None => Arc::new(tx.bypasses()?),
        };
        Ok(list
            .iter()
            .find(|b| b.active(now) && b.layers.contains(&Layer::Knowledge))
            .map(Bypass::note))
    }

    /// Hands the gate the bypasses to apply, read by its owner (a daemon
    /// reads them off the request path, every second and after changing
    /// one); from then on the gate never reads them itself.
    pub fn feed_bypasses(&self, list: Vec<Bypass>) {
        let mut cache = self.bypasses.lock().unwrap_or_else(|p| p.into_inner());
        cache.fed = true;
        cache.list = Arc::new(list);
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
        let env = self.engine.env_for(call, &self.base);
        let binding = binding_hash(call, &env);
        let shown = shown_call(call);
        let summary = crate::resolution::summary(call, &normalize(call, &env));
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
            &summary,
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

    /// Decides several calls, in order, recording them in one transaction,
    /// then lets the automated approvers vote on any approval they created
    /// ([`Gate::run_factors`]). Returns only after everything is
    /// committed; if recording fails nothing is recorded and no decision is
    /// returned.
    pub fn check_batch(&self, calls: &[ToolCall]) -> Result<Vec<Decision>, StoreError> {
        let judged: Vec<Judged> = calls.iter().map(|c| self.judge(c.clone())).collect();
        let decisions = self.record_batch(&judged)?;
        judged
            .iter()
            .zip(decisions)
            .map(|(j, d)| self.factors_for(j, d))
            .collect()
    }

    /// What [`Gate::check`] would answer now, with every layer consulted
    /// (approvals, knowledge holds, bypasses), and nothing kept: the
    /// recording transaction is rolled back, and no automated approver is
    /// asked. An escalation that would create an approval says so in its
    /// reason and names none (the id would not exist); one that joins an
    /// existing pending approval names it.
    pub fn dry_run(&self, call: &ToolCall) -> Result<Decision, StoreError> {
        let judged = self.judge(call.clone());
        let mut decision = {
            let mut tx = self.store.begin()?;
            let d = self.record(&mut *tx, &judged)?;
            drop(tx);
            d
        };
        decision.audit_seq = None;
        if let Some(a) = &decision.approval {
            let exists = match ApprovalId::parse(&a.id) {
                Ok(id) => self.store.read_approval(&id)?.is_some(),
                Err(_) => false,
            };
            if !exists {
                decision.approval = None;
                decision.reason = format!(
                    "{} (dry run: an approval would be created)",
                    decision.reason
                );
                decision.block_reason =
                    Decision::protocol_line(Verdict::Escalate, None, &decision.reason);
            }
        }
        decision.elapsed_us = judged.start.elapsed().as_micros() as u64;
        Ok(decision)
    }

    /// The CPU half of a check: the engine's judgement, with no lock held
    /// and nothing recorded. A daemon runs this on many threads and keeps
    /// its single writer for [`Gate::record_batch`].
    pub fn judge(&self, call: ToolCall) -> Judged {
        let start = Instant::now();
        let special = is_relay(&call) || is_ack(&call);
        let assessment = (!special).then(|| {
            let a = self.engine.decide(&call, &self.base);
            // A bypass only ever turns a stop into less of one: an allowed
            // call (most of them) does not need the bypasses read.
            if a.decision.decision == Verdict::Allow {
                return a;
            }
            match self.active_bypass() {
                Some((layers, note)) => {
                    toolgate_core::lift(&self.engine, &call, &self.base, a, &layers, &note)
                }
                None => a,
            }
        });
        let env = self.engine.env_for(&call, &self.base);
        let binding = binding_hash(&call, &env);
        let shown = shown_call(&call);
        let summary = match &assessment {
            Some(a) => crate::resolution::summary(&call, &a.call),
            None => crate::resolution::summary(&call, &normalize(&call, &env)),
        };
        let knowledge = assessment.as_ref().and_then(|a| {
            let wanted =
                self.knowledge.settings().enabled() && a.decision.decision != Verdict::Block;
            wanted.then(|| {
                self.knowledge
                    .lookup(&*self.store, &a.call, &env, a.decision.risk)
            })
        });
        Judged {
            call,
            assessment,
            start,
            binding,
            shown,
            summary,
            knowledge,
        }
    }

    /// The I/O half: resolves escalations and records the judged calls, in
    /// order, in one transaction; answers only once it is committed. Calls
    /// should have been judged by this gate (same policy). The automated
    /// approvers are not asked here: call [`Gate::run_factors`] on each
    /// escalation afterwards, outside any lock that holds up other calls.
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
        let summary = judged.summary.as_str();
        let now = self.clock.now_ms();
        let trace = random_hex()?;
        let Some(assessment) = judged.assessment.as_ref() else {
            let mut decision = if is_ack(call) {
                self.ack_in(tx, call, now, &trace)?
            } else {
                self.relay_in(tx, call, now, &trace)?
            };
            let seq = tx.append(&decision_event(
                shown, summary, binding, &decision, None, now, &trace,
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
        let mut context = None;
        if let Some(lookup) = &judged.knowledge {
            match self.knowledge_step(tx, judged, lookup, &decision, now, &trace, &mut events)? {
                // A bypass of the knowledge layer lets a held call through,
                // knowledge shown; read only now, since holds are rare.
                Step::Hold(d) => match self.knowledge_bypass(tx, now)? {
                    Some(note) => {
                        context = d.context.clone();
                        events.push(AuditEvent {
                            ts_ms: now,
                            trace: trace.clone(),
                            kind: AuditKind::Verdict,
                            data: json!({
                                "layer": Layer::Knowledge.as_str(),
                                "verdict": Verdict::Allow.as_str(),
                                "risk": d.risk.as_str(),
                                "reason": format!("bypassed ({note}): {}", d.reason),
                                "rule": toolgate_core::BYPASS_RULE,
                            }),
                        });
                    }
                    None => decision = *d,
                },
                Step::Show(text) => context = Some(text),
                Step::Pass => {}
            }
        }
        if decision.decision == Verdict::Escalate {
            let Resolution {
                decision: d,
                events: more,
            } = self.escalate(tx, judged, assessment, now, &trace)?;
            approval_id = d.approval.as_ref().map(|a| a.id.clone());
            decision = d;
            events.extend(more);
        }
        if context.is_some() {
            decision.context = context;
        }
        decision.reason = redact_text(&decision.reason).into_owned();
        decision.block_reason = decision.block_reason.map(|b| redact_text(&b).into_owned());
        for e in &events {
            tx.append(e)?;
        }
        let seq = tx.append(&decision_event(
            shown,
            summary,
            binding,
            &decision,
            approval_id,
            now,
            &trace,
        ))?;
        decision.audit_seq = Some(seq);
        Ok(decision)
    }

    /// The agent relays a person's approval (`toolgate_approve`): a
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

/// What the knowledge layer does to one call.
enum Step {
    /// Held until acknowledged (or blocked: a source failed, fail closed).
    Hold(Box<Decision>),
    /// Runs as decided, with this knowledge shown to the agent.
    Show(String),
    /// Nothing to show.
    Pass,
}

impl Gate {
    /// The knowledge layer, inside the call's transaction: fail open or
    /// closed on source errors, look up acknowledgements in the call's
    /// scope, treat a retry of a held call within the cooldown as
    /// acknowledging what it was shown, and hold the call when enforced
    /// knowledge is still unacknowledged.
    #[allow(clippy::too_many_arguments)]
    fn knowledge_step(
        &self,
        tx: &mut dyn Tx,
        judged: &Judged,
        lookup: &Lookup,
        base: &Decision,
        now: i64,
        trace: &str,
        events: &mut Vec<AuditEvent>,
    ) -> Result<Step, StoreError> {
        let settings = self.knowledge.settings();
        let stats = self.knowledge.stats();
        let verdict = |verdict: Verdict, reason: &str| AuditEvent {
            ts_ms: now,
            trace: trace.to_string(),
            kind: AuditKind::Verdict,
            data: json!({
                "layer": Layer::Knowledge.as_str(),
                "verdict": verdict.as_str(),
                "risk": base.risk.as_str(),
                "reason": redact_text(reason),
                "rule": Value::Null,
                "lookup_us": lookup.elapsed_us,
            }),
        };
        if !lookup.errors.is_empty() {
            let what = redact_text(&lookup.errors.join("; ")).into_owned();
            stats.failed(now, &what, !settings.fail_open);
            events.push(AuditEvent {
                ts_ms: now,
                trace: trace.to_string(),
                kind: AuditKind::KnowledgeError,
                data: json!({"errors": what, "fail_open": settings.fail_open}),
            });
            if !settings.fail_open {
                let why =
                    format!("a knowledge source failed and [knowledge] fail_open is false: {what}");
                events.push(verdict(Verdict::Block, &why));
                return Ok(Step::Hold(Box::new(Decision::new(
                    Verdict::Block,
                    base.risk,
                    base.score,
                    Layer::Knowledge,
                    &why,
                ))));
            }
        }
        let found = &lookup.found;
        if found.is_empty() {
            return Ok(Step::Pass);
        }
        let scope = ack_scope(&judged.call);
        let mut acked: Vec<String> = Vec::new();
        for key in found.keys() {
            if tx.ack(&key, &scope)?.is_some_and(|a| now < a.expires_ms) {
                acked.push(key);
            }
        }
        let cooldown_ms = settings.cooldown.as_millis() as i64;
        let mut result = outcome(settings, found, &|k: &str| acked.iter().any(|a| a == k));
        if let Outcome::Require(pending) = &result {
            // A retry acknowledges: any call in this scope, within the
            // cooldown, that needs knowledge already shown here (not only
            // the byte-identical call: runtimes add cosmetic params such as
            // a description that changes between attempts). Shown in the
            // same millisecond is not "shown before": parallel calls of one
            // turn do not acknowledge each other.
            let since = now.saturating_sub(cooldown_ms);
            let earlier: Vec<Shown> = tx
                .shown_in_scope(&scope, since, 32)?
                .into_iter()
                .filter(|s| s.expires_ms > now && s.shown_ms < now)
                .filter(|s| s.keys.iter().any(|k| pending.contains(k)))
                .collect();
            for prev in &earlier {
                put_acks(tx, prev, "retry", "retry", now, cooldown_ms, trace)?;
                stats.acked(true);
                acked.extend(prev.keys.iter().cloned());
            }
            if !earlier.is_empty() {
                result = outcome(settings, found, &|k: &str| acked.iter().any(|a| a == k));
                if result == Outcome::Nothing {
                    // Acknowledged just now: the retry still carries what it acknowledged.
                    result = Outcome::Advise;
                }
            }
        }
        let agent = Audience::Agent {
            show_credentials: settings.show_credentials,
        };
        match result {
            Outcome::Nothing => Ok(Step::Pass),
            Outcome::Advise => {
                stats.advised();
                events.push(verdict(
                    Verdict::Allow,
                    &format!("knowledge shown: {}", summary(found)),
                ));
                Ok(Step::Show(render(found, agent, None)))
            }
            Outcome::Require(keys) => {
                let id = random_hex()?;
                let record = Shown {
                    id: id.clone(),
                    binding: judged.binding.to_hex(),
                    scope: scope.clone(),
                    shown_ms: now,
                    expires_ms: now.saturating_add(cooldown_ms),
                    keys,
                };
                tx.prune_shown(now)?;
                tx.put_shown(&record)?;
                stats.held();
                let why = format!(
                    "knowledge must be acknowledged before this call runs: {}",
                    summary(found)
                );
                events.push(verdict(Verdict::Block, &why));
                events.push(AuditEvent {
                    ts_ms: now,
                    trace: trace.to_string(),
                    kind: AuditKind::KnowledgeShown,
                    data: json!({
                        "id": id,
                        "scope": redact_text(&scope),
                        "keys": record.keys,
                        "enforcement": settings.enforcement.as_str(),
                        "sops": found.sops.iter().map(|s| json!({
                            "name": s.sop.name,
                            "origin": redact_text(&s.sop.origin),
                            "reason": redact_text(&s.reason.to_string()),
                        })).collect::<Vec<_>>(),
                        "memories": found.memories.iter().map(|m| json!({
                            "id": m.id,
                            "confidence": m.confidence,
                        })).collect::<Vec<_>>(),
                    }),
                });
                let hint = AckHint {
                    id: id.clone(),
                    cooldown: humanize_ms(cooldown_ms),
                };
                let mut d = Decision::new(
                    Verdict::Block,
                    base.risk,
                    base.score,
                    Layer::Knowledge,
                    &why,
                );
                d.block_reason = Some(Decision::ack_line(&id, &d.reason));
                d.context = Some(render(found, agent, Some(&hint)));
                Ok(Step::Hold(Box::new(d)))
            }
        }
    }

    /// The agent acknowledges knowledge shown to it (`toolgate_ack`): only
    /// for its own session or agent.
    fn ack_in(
        &self,
        tx: &mut dyn Tx,
        call: &ToolCall,
        now: i64,
        trace: &str,
    ) -> Result<Decision, StoreError> {
        let id = ["id", "ack_id"]
            .iter()
            .find_map(|k| call.params.get(*k).and_then(Value::as_str))
            .unwrap_or("")
            .trim();
        let answer = |v: Verdict, why: String| {
            let mut d = relay_decision(v, why);
            d.layer = Layer::Knowledge;
            d
        };
        let ttl = self.knowledge.settings().cooldown.as_millis() as i64;
        let scope = ack_scope(call);
        match acknowledge_in(tx, id, &scope, "tool", Some(&scope), now, ttl, trace) {
            Ok(_) => {
                self.knowledge.stats().acked(false);
                Ok(answer(
                    Verdict::Allow,
                    format!(
                        "knowledge {id} acknowledged for {}; retry the call",
                        humanize_ms(ttl)
                    ),
                ))
            }
            Err(AckError::Store(e)) => Err(e),
            Err(e) => Ok(answer(Verdict::Block, e.to_string())),
        }
    }
}

/// `300000` → `5m`; `90000` → `90s`.
fn humanize_ms(ms: i64) -> String {
    let secs = u64::try_from(ms / 1000).unwrap_or(0);
    toolgate_core::span(secs, toolgate_core::SpanStyle::WholeUnit)
}

/// An acknowledgement call: the name, and nothing but its own params (a
/// tool that merely shares the name and carries anything else, say a
/// `command`, is judged like any other call).
fn is_ack(call: &ToolCall) -> bool {
    ACK_TOOLS.contains(&call.tool.as_str())
        && call
            .params
            .keys()
            .all(|k| matches!(k.as_str(), "id" | "ack_id"))
}

/// The call as records keep it: redacted, then cut to a bounded size.
fn shown_call(call: &ToolCall) -> Value {
    bound_size(redact_value(
        &serde_json::to_value(call).unwrap_or(Value::Null),
    ))
}

/// A relayed approval: the name, and nothing but the relay's params.
fn is_relay(call: &ToolCall) -> bool {
    RELAY_TOOLS.contains(&call.tool.as_str())
        && call
            .params
            .keys()
            .all(|k| matches!(k.as_str(), "id" | "approval_id" | "nonce" | "reason"))
}

/// The audit event recording a decision; `shown` is the call as stored
/// ([`shown_call`]), `summary` what it does in one line.
fn decision_event(
    shown: &Value,
    summary: &str,
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
            "summary": summary,
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
