//! Automated approval factors (docs/approvals.md): the deterministic `rules_based`
//! approver, and the trait a model-backed `llm_evaluation` approver
//! implements.

use crate::approval::ApproverKind;
use crate::engine::Engine;
use crate::engine::{Assessment, THRESHOLD_RULE};
use crate::model::{Layer, RiskClass, ToolCall, Verdict};
use crate::normalize::{ToolKind, normalize};
use crate::paths::Env;
use crate::policy::ApprovalRule;
use crate::shell::Analyses;

/// What an automated approver says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactorVote {
    /// Approve, with the reason recorded on the vote.
    Approve(String),
    /// Deny, with the reason; a single denial settles the approval.
    Deny(String),
    /// No opinion: a person (or another factor) must decide.
    Abstain,
}

/// An automated approval factor. Implementations must be deterministic for
/// a given call and class, or record why not in their reasons: their votes
/// are audited and must be explainable afterwards.
pub trait Approver: Send + Sync {
    /// Which kind of factor this is.
    fn kind(&self) -> ApproverKind;
    /// The identity its votes carry (one vote per identity).
    fn identity(&self) -> String;
    /// Judges a call of risk class `class`, whose requester is on the call;
    /// `analyses` holds the shell analyses the engine made of it (reuse them
    /// rather than analysing its command again).
    fn evaluate(
        &self,
        engine: &Engine,
        call: &ToolCall,
        base: &Env,
        class: RiskClass,
        analyses: &Analyses,
    ) -> FactorVote;
}

/// Whether the static stage is unsure of a call, and so whether the model
/// approver (the fast model stage) is asked about it: an escalation
/// of class R3 or lower that only the clarity × stakes score raised
/// ([`THRESHOLD_RULE`]), with no layer finding anything to escalate or
/// block. Clear cases are never asked: an allow, a block, an escalation by
/// a policy rule, the catalogue, a tool's own class, the scope profile or
/// unreadable input (findings, not guesses), and anything R4.
pub fn is_unsure(assessment: &Assessment) -> bool {
    let d = &assessment.decision;
    d.decision == Verdict::Escalate
        && d.layer == Layer::Risk
        && d.risk <= RiskClass::R3
        && assessment
            .verdicts
            .iter()
            .filter(|v| v.verdict != Verdict::Allow)
            .all(|v| v.layer == Layer::Risk && v.rule.as_deref() == Some(THRESHOLD_RULE))
}

/// The `rules_based` approver: approves when one of the policy's
/// `[[approvals.rule]]` entries covers the call; otherwise abstains.
#[derive(Debug, Clone, Copy, Default)]
pub struct RulesApprover;

impl Approver for RulesApprover {
    fn kind(&self) -> ApproverKind {
        ApproverKind::RulesBased
    }

    fn identity(&self) -> String {
        "rules_based".to_string()
    }

    fn evaluate(
        &self,
        engine: &Engine,
        call: &ToolCall,
        base: &Env,
        class: RiskClass,
        analyses: &Analyses,
    ) -> FactorVote {
        let rules = &engine.policy().approvals().rules;
        match rules
            .iter()
            .find(|r| rule_covers(engine, r, call, base, class, analyses))
        {
            Some(r) => FactorVote::Approve(format!("[[approvals.rule]] {:?}", r.name)),
            None => FactorVote::Abstain,
        }
    }
}

/// Whether one approval rule covers the call: the class is within its
/// `max_risk`, the requester has one of its roles (when it names any), and
/// its `approve` patterns match as strictly as allow rules do — for shell
/// commands, every simple command must match one and nothing may be opaque.
fn rule_covers(
    engine: &Engine,
    rule: &ApprovalRule,
    call: &ToolCall,
    base: &Env,
    class: RiskClass,
    analyses: &Analyses,
) -> bool {
    if class > rule.max_risk {
        return false;
    }
    if !rule.requester_roles.is_empty() {
        let role = call.requester.as_ref().and_then(|r| r.role.as_deref());
        if !role.is_some_and(|role| rule.requester_roles.iter().any(|r| r == role)) {
            return false;
        }
    }
    let env = engine.env_for(call, base);
    let n = normalize(call, &env);
    let env = env.with_cwd(&n.cwd);
    // Rules approve what they can see whole: a call naming several
    // commands or working directories, or a non-shell tool that also
    // carries a command, is left to people.
    if !n.alt_commands.is_empty() || !n.alt_cwds.is_empty() {
        return false;
    }
    if n.kind != ToolKind::Exec {
        return n.command.is_none() && rule.approve.iter().any(|r| r.matches(&n, &env, true));
    }
    let Some(command) = n.command.as_deref() else {
        return false;
    };
    let analysis = analyses.get(command, &env);
    !analysis.commands.is_empty()
        && analysis.opaque.is_empty()
        && analysis
            .commands
            .iter()
            .all(|c| rule.approve.iter().any(|r| r.matches_exec_strict(c)))
}

#[cfg(test)]
mod tests {
    use super::is_unsure;
    use crate::engine::Engine;
    use crate::model::ToolCall;
    use crate::paths::Env;
    use crate::policy::Policy;

    fn unsure(policy: &str, call: &str) -> bool {
        let engine = Engine::new(Policy::from_toml_str(policy, "p.toml").unwrap());
        let call: ToolCall = serde_json::from_str(call).unwrap();
        is_unsure(&engine.decide(&call, &Env::new("/home/dev", "/home/dev/proj")))
    }

    #[test]
    fn only_escalations_the_score_alone_raised_are_unsure() {
        let low = "[risk]\nescalation_threshold = 2\n";
        // Nothing found, but the score reaches a (very low) threshold.
        assert!(unsure(
            low,
            r#"{"tool":"exec","params":{"command":"ls -la"}}"#
        ));
        // Findings are not guesses: a tool's own class, the catalogue, a block.
        for call in [
            r#"{"tool":"cron","params":{"action":"add","schedule":"* * * * *"}}"#,
            r#"{"tool":"exec","params":{"command":"git push --force origin main"}}"#,
            r#"{"tool":"exec","params":{"command":"rm -rf /"}}"#,
            r#"{"tool":"exec","params":{"command":"ls -la"}}"#,
        ] {
            assert!(!unsure("", call), "{call}");
        }
        // A finding next to the score is still a finding.
        assert!(!unsure(
            low,
            r#"{"tool":"exec","params":{"command":"scp file.txt user@host:/tmp"}}"#
        ));
    }
}
