//! The automated approval factors (seed 001's `rules_based` and
//! `llm_evaluation`), asked once an escalation is committed: outside the
//! store's write lock (a model may take its whole timeout), voting through
//! the same path and the same checks as people, so their votes are audited
//! and counted like anyone's.

use crate::gate::{Gate, Judged};
use crate::operator::{VoteInput, VoteOutcome, vote_as_in};
use crate::{StoreError, random_hex};
use toolgate_core::approval::{ApprovalId, ApprovalState, ApproverKind};
use toolgate_core::approvers::{Approver, FactorVote, RulesApprover};
use toolgate_core::model::{Decision, ToolCall, Verdict};

impl Gate {
    /// Lets the automated approvers that the pending approval named by
    /// `decision` admits vote on it (those that already voted on its
    /// current terms are refused as any second vote is). When their votes
    /// settle it, `call` is checked again, which uses the approval they
    /// completed or answers their denial; otherwise `decision` stands.
    /// Anything but a pending escalation is returned as it is.
    ///
    /// Runs outside any transaction: call it after the decision is
    /// recorded ([`Gate::check`] does; a daemon does it after its group
    /// commit, off the commit thread).
    pub fn run_factors(&self, call: &ToolCall, decision: Decision) -> Result<Decision, StoreError> {
        if decision.decision != Verdict::Escalate {
            return Ok(decision);
        }
        self.factors_for(&self.judge(call.clone()), decision)
    }

    /// [`Gate::run_factors`] for a call this gate judged and recorded as
    /// `judged`: its analyses are reused, and the re-check records it again
    /// rather than judging it anew (one analysis per call, all told).
    pub(crate) fn factors_for(
        &self,
        judged: &Judged,
        decision: Decision,
    ) -> Result<Decision, StoreError> {
        let call = &judged.call;
        if decision.decision != Verdict::Escalate {
            return Ok(decision);
        }
        let Some(id) = decision
            .approval
            .as_ref()
            .and_then(|a| ApprovalId::parse(&a.id).ok())
        else {
            return Ok(decision);
        };
        let Some(approval) = self.store().read_approval(&id)? else {
            return Ok(decision);
        };
        if approval.state != ApprovalState::Pending {
            return Ok(decision);
        }
        let rules = RulesApprover;
        let mut approvers: Vec<&dyn Approver> = Vec::new();
        if approval.quorum.admits(ApproverKind::RulesBased) {
            approvers.push(&rules);
        }
        if let Some(llm) = &self.llm
            && approval.quorum.admits(ApproverKind::LlmEvaluation)
        {
            approvers.push(&**llm);
        }
        if approvers.is_empty() {
            return Ok(decision);
        }
        let Some(analyses) = judged.analyses() else {
            return Ok(decision);
        };
        let mut cast = Vec::new();
        for approver in approvers {
            let vote = approver.evaluate(&self.engine, call, &self.base, approval.risk, analyses);
            match vote {
                FactorVote::Approve(reason) => cast.push((approver, true, reason)),
                FactorVote::Deny(reason) => cast.push((approver, false, reason)),
                FactorVote::Abstain => {}
            }
        }
        if cast.is_empty() {
            return Ok(decision);
        }
        let now = self.clock.now_ms();
        let trace = random_hex()?;
        let mut settled = false;
        let mut tx = self.store().begin()?;
        for (approver, approve, reason) in cast {
            let input = VoteInput {
                identity: approver.identity(),
                approve,
                reason: Some(reason),
                channel: "policy".to_string(),
                relayed: false,
            };
            // A refusal (it voted already, the terms changed, the approval
            // was settled meanwhile) is audited and otherwise ignored.
            if let Ok(outcome) = vote_as_in(&mut *tx, &id, approver.kind(), input, now, &trace)? {
                settled |= !matches!(outcome, VoteOutcome::Recorded { .. });
            }
        }
        tx.commit()?;
        if !settled {
            return Ok(decision);
        }
        Ok(self
            .record_batch(std::slice::from_ref(judged))?
            .swap_remove(0))
    }
}
