//! Holding an escalated call until its approval is settled: the one set of
//! rules every waiter follows (the daemon's `/v1/check?wait=`, a hook or
//! MCP proxy deciding in-process), with the waiting itself — an event
//! stream, a poll — left to the caller.
//!
//! A waiter looks at the approval whenever something may have changed it
//! ([`Waiter::look`]); once it is approved or denied the call is checked
//! again, which consumes the approval or answers the denial
//! ([`Waiter::rechecked`]); if another retry used the approval first, or
//! it went back to pending on new terms, the waiter goes on waiting on the
//! approval that check names. When the approval can no longer be granted,
//! the time runs out or the waiter is stopped, [`Waiter::give_up`] words
//! the block that answers instead, to be recorded with
//! [`crate::Gate::record_wait_end`].

use std::time::Duration;
use toolgate_core::{Approval, ApprovalId, ApprovalState, Decision, Layer, Verdict, rfc3339_ms};
use toolgate_store::{Store, StoreError};

/// How often a waiter re-checks an approval that reads as settled while the
/// gate still escalates on it (each re-check is audited), and the longest a
/// polling waiter should go without looking.
pub const RECHECK_EVERY: Duration = Duration::from_secs(2);

/// What the approval's state means for the waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Still pending: keep waiting.
    Wait,
    /// Approved, denied or used: check the call again.
    Recheck,
    /// It can no longer be approved.
    Gone(GiveUp),
}

/// Why a waiter stops waiting without an answer from the approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// The wait ran out; the approval stays pending.
    Timeout,
    /// The approval expired.
    Expired,
    /// The approval is not in the store any more.
    Removed,
    /// The process answering is stopping; the approval stays pending.
    Stopping,
}

impl GiveUp {
    /// The outcome label recorded in the audit log (`wait.ended`).
    pub fn label(self) -> &'static str {
        match self {
            GiveUp::Timeout => "timeout",
            GiveUp::Expired => "expired",
            GiveUp::Removed => "removed",
            GiveUp::Stopping => "shutdown",
        }
    }

    /// Whether the approval may still be granted (and the block says which).
    fn still_pending(self) -> bool {
        matches!(self, GiveUp::Timeout | GiveUp::Stopping)
    }
}

/// What to do after a re-check.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// The call is answered: allowed (the approval was used) or blocked
    /// (boxed: a decision is large, a pause small).
    Answer(Box<Decision>),
    /// Still escalated: wait on [`Waiter::id`] again, after `pause` (zero
    /// unless it is the same approval, whose re-checks are paced).
    Wait {
        /// How long to pause before looking again.
        pause: Duration,
    },
}

/// One call waiting on its approval.
#[derive(Debug, Clone)]
pub struct Waiter {
    escalated: Decision,
    id: ApprovalId,
    wait: Duration,
}

impl Waiter {
    /// A waiter for `escalated`, for at most `wait`; `None` when the
    /// decision names no approval to wait on (answer it as it is).
    pub fn new(escalated: Decision, wait: Duration) -> Option<Waiter> {
        let id = approval_of(&escalated)?;
        Some(Waiter {
            escalated,
            id,
            wait,
        })
    }

    /// The approval waited on now.
    pub fn id(&self) -> ApprovalId {
        self.id
    }

    /// The escalation as last answered (what to return when the waiter is
    /// cancelled by its caller going away).
    pub fn escalated(&self) -> &Decision {
        &self.escalated
    }

    /// What the approval as read now (`None`: not found) means at
    /// `now_ms`. A pending approval past its expiry is gone, whether or not
    /// anything has marked it expired yet.
    pub fn look(&self, approval: Option<&Approval>, now_ms: i64) -> Look {
        let Some(a) = approval else {
            return Look::Gone(GiveUp::Removed);
        };
        match a.state {
            ApprovalState::Pending if now_ms >= a.expires_ms => Look::Gone(GiveUp::Expired),
            ApprovalState::Pending => Look::Wait,
            ApprovalState::Expired => Look::Gone(GiveUp::Expired),
            ApprovalState::Approved | ApprovalState::Denied | ApprovalState::Consumed => {
                Look::Recheck
            }
        }
    }

    /// What an event about this waiter's approval (`approved`, `denied`,
    /// `consumed`, `expired`, …) means, without reading the store.
    pub fn look_event(&self, event: &str) -> Look {
        match event {
            // Consumed by another retry of the same call: the re-check asks
            // again, and this call waits on that.
            "approved" | "denied" | "consumed" => Look::Recheck,
            "expired" => Look::Gone(GiveUp::Expired),
            _ => Look::Wait,
        }
    }

    /// Takes the decision of checking the call again.
    pub fn rechecked(&mut self, decision: Decision) -> Next {
        if decision.decision != Verdict::Escalate {
            return Next::Answer(Box::new(decision));
        }
        let Some(next) = approval_of(&decision) else {
            return Next::Answer(Box::new(decision));
        };
        // Another retry used the approval first (a new id), or it went back
        // to pending on new terms (the same id, paced since every re-check
        // is audited): keep waiting.
        let pause = if next == self.id {
            RECHECK_EVERY
        } else {
            Duration::ZERO
        };
        self.id = next;
        self.escalated = decision;
        Next::Wait { pause }
    }

    /// The block that answers when the waiter gives up, and its audit
    /// label. A block for an approval that stays pending names it, so the
    /// agent may retry once someone grants it.
    pub fn give_up(&self, why: GiveUp) -> (&'static str, Decision) {
        let id = self.id;
        let until = self
            .escalated
            .approval
            .as_ref()
            .map(|a| a.expires_at.clone())
            .unwrap_or_else(|| rfc3339_ms(0));
        let text = match why {
            GiveUp::Timeout => format!(
                "no operator resolved approval {id} within {}; it stays pending until {until}: \
                 retry the exact call once it is approved",
                toolgate_core::span(self.wait.as_secs(), toolgate_core::SpanStyle::Exact)
            ),
            GiveUp::Stopping => format!(
                "toolgate is shutting down; approval {id} stays pending until {until}: retry the \
                 exact call once it is approved"
            ),
            GiveUp::Expired => {
                format!("approval {id} expired while this call waited; retry the call to ask again")
            }
            GiveUp::Removed => format!(
                "approval {id} is gone from the store while this call waited; retry the call to \
                 ask again"
            ),
        };
        let mut block = Decision::new(
            Verdict::Block,
            self.escalated.risk,
            self.escalated.score,
            Layer::Approval,
            &text,
        );
        if why.still_pending() {
            block.approval = self.escalated.approval.clone();
        }
        (why.label(), block)
    }
}

/// The approval an escalation waits on.
fn approval_of(d: &Decision) -> Option<ApprovalId> {
    d.approval
        .as_ref()
        .and_then(|a| ApprovalId::parse(&a.id).ok())
}

/// Marks approval `id` as waited on by an agent in this process until
/// `until_ms`, or clears the mark (`None`), for the people asked to see
/// that someone is blocked on it now. Only a pending approval is marked;
/// read and written in one transaction, so no vote is ever overwritten.
pub fn mark_waiting(
    store: &dyn Store,
    id: &ApprovalId,
    until_ms: Option<i64>,
) -> Result<(), StoreError> {
    let mut tx = store.begin()?;
    let Some(mut a) = tx.approval(id)? else {
        return Ok(());
    };
    let until_ms = until_ms.filter(|_| a.state == ApprovalState::Pending);
    if a.waiting_until_ms == until_ms {
        return Ok(());
    }
    a.waiting_until_ms = until_ms;
    tx.put_approval(&a)?;
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::{ApprovalRef, RiskClass};

    fn escalation(id: &str) -> Decision {
        let mut d = Decision::new(Verdict::Escalate, RiskClass::R3, 40, Layer::Exec, "push");
        d.approval = Some(ApprovalRef {
            id: id.to_string(),
            expires_at: "2026-01-01T00:05:00.000Z".into(),
            min_approvals: 1,
            approve_url: None,
        });
        d
    }

    const A: &str = "0123456789abcdef0123456789abcdef";
    const B: &str = "fedcba9876543210fedcba9876543210";

    #[test]
    fn nothing_to_wait_on_without_an_approval() {
        let d = Decision::new(Verdict::Block, RiskClass::R4, 90, Layer::Exec, "no");
        assert!(Waiter::new(d, Duration::from_secs(5)).is_none());
    }

    #[test]
    fn a_recheck_answers_or_waits_on_the_approval_it_names() {
        let mut w = Waiter::new(escalation(A), Duration::from_secs(30)).unwrap();
        assert_eq!(
            w.rechecked(escalation(A)),
            Next::Wait {
                pause: RECHECK_EVERY
            }
        );
        assert_eq!(
            w.rechecked(escalation(B)),
            Next::Wait {
                pause: Duration::ZERO
            }
        );
        assert_eq!(w.id().to_string(), B);
        let allow = Decision::new(Verdict::Allow, RiskClass::R3, 40, Layer::Approval, "ok");
        assert_eq!(w.rechecked(allow.clone()), Next::Answer(Box::new(allow)));
    }

    #[test]
    fn giving_up_says_why_and_names_a_still_pending_approval() {
        let w = Waiter::new(escalation(A), Duration::from_secs(90)).unwrap();
        let (label, d) = w.give_up(GiveUp::Timeout);
        assert_eq!(label, "timeout");
        assert_eq!(d.decision, Verdict::Block);
        assert!(d.reason.contains("within 1m30s"), "{}", d.reason);
        assert_eq!(d.approval.as_ref().unwrap().id, A);
        let (label, d) = w.give_up(GiveUp::Expired);
        assert_eq!(label, "expired");
        assert!(d.approval.is_none());
        assert_eq!(w.give_up(GiveUp::Stopping).0, "shutdown");
        assert_eq!(w.give_up(GiveUp::Removed).0, "removed");
    }

    #[test]
    fn events_map_to_looks() {
        let w = Waiter::new(escalation(A), Duration::from_secs(1)).unwrap();
        assert_eq!(w.look_event("approved"), Look::Recheck);
        assert_eq!(w.look_event("consumed"), Look::Recheck);
        assert_eq!(w.look_event("expired"), Look::Gone(GiveUp::Expired));
        assert_eq!(w.look_event("vote"), Look::Wait);
    }
}
