//! The automated approval factors (`rules_based` and `llm_evaluation`;
//! docs/approvals.md), asked once an escalation is committed: outside the
//! store's write lock (a model may take its whole timeout), voting through
//! the same path and the same checks as people, so their votes are audited
//! and counted like anyone's.

use crate::gate::{Gate, Judged};
use crate::operator::{VoteInput, VoteOutcome, vote_as_in};
use crate::random_hex;
use toolgate_core::{
    ApprovalId, ApprovalState, Approver, ApproverKind, Decision, FactorVote, RulesApprover,
    ToolCall, Verdict,
};
use toolgate_store::StoreError;

impl Gate {
    /// Lets the automated approvers that the pending approval named by
    /// `decision` admits vote on it. When their votes settle it, `call` is
    /// recorded again, which uses the approval they completed or answers
    /// their denial; otherwise `decision` stands. Anything but a pending
    /// escalation is returned as it is.
    ///
    /// The rules are asked on every check (they are pure and a second vote
    /// is refused anyway); the model once per approval and terms (a
    /// single-use key in the store, so no retry, no other process and no
    /// waiter's re-check asks it again and waits its timeout again).
    ///
    /// Runs outside any transaction: call it after the decision is
    /// recorded ([`Gate::check`] does; a daemon does it after its group
    /// commit, off the commit thread).
    pub fn run_factors(&self, call: &ToolCall, decision: Decision) -> Result<Decision, StoreError> {
        let Some(due) = self.factors_due(&decision)? else {
            return Ok(decision);
        };
        // Judged again only now: most escalations have no factor to ask.
        self.ask_factors(&self.judge(call.clone()), decision, due)
    }

    /// [`Gate::run_factors`] for a call this gate judged and recorded as
    /// `judged`: its analyses are reused, and the re-check records it again
    /// rather than judging it anew (one analysis per call, all told).
    pub(crate) fn factors_for(
        &self,
        judged: &Judged,
        decision: Decision,
    ) -> Result<Decision, StoreError> {
        match self.factors_due(&decision)? {
            Some(due) => self.ask_factors(judged, decision, due),
            None => Ok(decision),
        }
    }

    /// The pending approval `decision` names and the automated approvers
    /// to ask about it, if there are any.
    fn factors_due(&self, decision: &Decision) -> Result<Option<Due>, StoreError> {
        if decision.decision != Verdict::Escalate {
            return Ok(None);
        }
        let Some(id) = decision
            .approval
            .as_ref()
            .and_then(|a| ApprovalId::parse(&a.id).ok())
        else {
            return Ok(None);
        };
        let Some(approval) = self.store().read_approval(&id)? else {
            return Ok(None);
        };
        if approval.state != ApprovalState::Pending {
            return Ok(None);
        }
        let rules = approval.quorum.admits(ApproverKind::RulesBased);
        let model = self.llm.is_some()
            && approval.quorum.admits(ApproverKind::LlmEvaluation)
            && crate::people::use_once(
                &**self.store(),
                &*self.clock,
                &format!("factors:{id}:{}", approval.generation),
                approval.expires_ms,
            )?;
        Ok((rules || model).then_some(Due {
            approval,
            rules,
            model,
        }))
    }

    fn ask_factors(
        &self,
        judged: &Judged,
        decision: Decision,
        due: Due,
    ) -> Result<Decision, StoreError> {
        let call = &judged.call;
        let Due {
            approval,
            rules,
            model,
        } = due;
        let id = approval.id;
        let rules_approver = RulesApprover;
        let mut approvers: Vec<&dyn Approver> = Vec::new();
        if rules {
            approvers.push(&rules_approver);
        }
        if let (true, Some(llm)) = (model, &self.llm) {
            approvers.push(&**llm);
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
        // A factor that voted on these terms already (an earlier check of
        // the same call) is not recorded again as a refused second vote.
        let voted = tx.votes(&id)?;
        for (approver, approve, reason) in cast {
            let identity = approver.identity();
            if voted
                .iter()
                .any(|v| v.identity == identity && v.generation == approval.generation)
            {
                continue;
            }
            let input = VoteInput {
                identity,
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

/// What [`Gate::factors_due`] found to ask.
struct Due {
    approval: toolgate_core::Approval,
    rules: bool,
    model: bool,
}
