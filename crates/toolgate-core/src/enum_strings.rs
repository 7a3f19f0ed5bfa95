//! Every enum's string forms, pinned: these strings are on the wire, in
//! audit records, in policies and in rendered docs, and the forms are
//! derived (strum), so a renamed variant must fail here rather than change
//! them silently. Each test lists every variant (checked against the
//! derived list of variants) with its string, and round-trips it through
//! the enum's parser, Display and serde where the enum has them.
//!
//! `as_str` and the parsers are derived; the `Display` impls stay
//! `f.write_str(self.as_str())`, because strum's derived `Display` honours
//! a width (`{:<9}`) and would change the layout of any table printing an
//! enum that way.

use crate::approval::{ApprovalState, ApproverKind};
use crate::audit::AuditKind;
use crate::hooks::{AnswerKind, Outcome};
use crate::knowledge::memory::Category;
use crate::knowledge::settings::{Criticality, Enforcement};
use crate::knowledge::sop::SectionKind;
use crate::model::{Layer, RiskClass, Verdict};
use crate::normalize::ToolKind;
use crate::policy::{Expectation, RoutingMode};
use crate::profile::model::Tier;
use std::fmt::Debug;
use strum::VariantArray;

/// Checks that `table` names every variant once and that `as_str` writes
/// each as the table says.
fn pinned<T: VariantArray + Copy + PartialEq + Debug>(
    table: &[(T, &str)],
    as_str: fn(T) -> &'static str,
) {
    assert_eq!(table.len(), T::VARIANTS.len(), "every variant is pinned");
    for v in T::VARIANTS {
        assert_eq!(
            table.iter().filter(|(p, _)| p == v).count(),
            1,
            "{v:?} is pinned once"
        );
    }
    for (v, s) in table {
        assert_eq!(as_str(*v), *s, "{v:?}");
    }
}

#[test]
fn verdict() {
    let t = [
        (Verdict::Allow, "allow"),
        (Verdict::Escalate, "escalate"),
        (Verdict::Block, "block"),
    ];
    pinned(&t, Verdict::as_str);
    for (v, s) in t {
        assert_eq!(serde_json::to_value(v).unwrap(), s);
        assert_eq!(serde_json::from_value::<Verdict>(s.into()).unwrap(), v);
    }
}

#[test]
fn risk_class() {
    let t = [
        (RiskClass::R0, "R0"),
        (RiskClass::R1, "R1"),
        (RiskClass::R2, "R2"),
        (RiskClass::R3, "R3"),
        (RiskClass::R4, "R4"),
    ];
    pinned(&t, RiskClass::as_str);
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
        assert_eq!(RiskClass::parse(s), Some(v));
        assert_eq!(
            RiskClass::parse(&format!(" {} ", s.to_lowercase())),
            Some(v)
        );
        assert_eq!(serde_json::to_value(v).unwrap(), s);
    }
    assert_eq!(RiskClass::parse("R5"), None);
    assert_eq!(RiskClass::parse("R 1"), None);
}

#[test]
fn layer() {
    let t = [
        (Layer::Policy, "policy"),
        (Layer::Exec, "exec"),
        (Layer::Scope, "scope"),
        (Layer::Risk, "risk"),
        (Layer::Knowledge, "knowledge"),
        (Layer::Posture, "posture"),
        (Layer::Approval, "approval"),
    ];
    pinned(&t, Layer::as_str);
    for (v, s) in t {
        assert_eq!(serde_json::to_value(v).unwrap(), s);
    }
}

#[test]
fn outcome() {
    pinned(
        &[
            (Outcome::Runs, "runs"),
            (Outcome::Stops, "stopped"),
            (Outcome::PersonDecides, "person at the prompt decides"),
        ],
        Outcome::as_str,
    );
}

#[test]
fn answer_kind() {
    pinned(
        &[
            (AnswerKind::Allow, "allow"),
            (AnswerKind::AllowWithInput, "allow + new input"),
            (AnswerKind::Deny, "deny"),
            (AnswerKind::Ask, "ask"),
            (AnswerKind::Defer, "defer"),
            (AnswerKind::NoDecision, "no decision (`{}`)"),
            (AnswerKind::Malformed, "malformed / rejected JSON"),
            (AnswerKind::Exit2, "exit 2 + stderr"),
            (AnswerKind::Exit2Silent, "exit 2, empty stderr"),
            (AnswerKind::ExitOther, "exit 1 / other code"),
            (AnswerKind::Timeout, "timeout"),
            (AnswerKind::Crash, "crash"),
        ],
        AnswerKind::as_str,
    );
    assert_eq!(AnswerKind::ALL.len(), AnswerKind::VARIANTS.len());
}

#[test]
fn expectation() {
    let t = [
        (Expectation::Allow, "allow"),
        (Expectation::Block, "block"),
        (Expectation::Escalate, "escalate"),
        (Expectation::Stop, "stop"),
    ];
    pinned(&t, Expectation::as_str);
    for (v, s) in t {
        assert_eq!(Expectation::parse(s), Some(v));
        assert_eq!(
            Expectation::parse(&format!(" {} ", s.to_uppercase())),
            Some(v)
        );
    }
    assert_eq!(Expectation::parse("deny"), None);
}

#[test]
fn routing_mode() {
    let t = [
        (RoutingMode::Targets, "targets"),
        (RoutingMode::Session, "session"),
        (RoutingMode::Both, "both"),
    ];
    pinned(&t, RoutingMode::as_str);
    for (v, s) in t {
        assert_eq!(s.parse::<RoutingMode>().ok(), Some(v));
        // Policies spell it exactly.
        assert!(s.to_uppercase().parse::<RoutingMode>().is_err());
        assert!(format!(" {s}").parse::<RoutingMode>().is_err());
    }
}

#[test]
fn tier() {
    let t = [
        (Tier::Autonomous, "autonomous"),
        (Tier::Supervised, "supervised"),
        (Tier::Manual, "manual"),
    ];
    pinned(&t, Tier::as_str);
    for (v, s) in t {
        assert_eq!(serde_json::from_value::<Tier>(s.into()).unwrap(), v);
    }
}

#[test]
fn tool_kind() {
    pinned(
        &[
            (ToolKind::Exec, "exec"),
            (ToolKind::Read, "read"),
            (ToolKind::Write, "write"),
            (ToolKind::Fetch, "web_fetch"),
            (ToolKind::Search, "web_search"),
            (ToolKind::Message, "message"),
            (ToolKind::Gateway, "gateway"),
            (ToolKind::Automation, "automations"),
            (ToolKind::Nodes, "nodes"),
            (ToolKind::Browser, "browser"),
            (ToolKind::Process, "process"),
            (ToolKind::Sessions, "sessions"),
            (ToolKind::Plugins, "plugins"),
            (ToolKind::Secrets, "secrets"),
            (ToolKind::Memory, "memory"),
            (ToolKind::Other, "other"),
        ],
        ToolKind::as_str,
    );
}

#[test]
fn audit_kind() {
    let t = [
        (AuditKind::Verdict, "verdict"),
        (AuditKind::Decision, "decision"),
        (AuditKind::ApprovalCreated, "approval.created"),
        (AuditKind::ApprovalRefreshed, "approval.refreshed"),
        (AuditKind::ApprovalVote, "approval.vote"),
        (AuditKind::ApprovalApproved, "approval.approved"),
        (AuditKind::ApprovalDenied, "approval.denied"),
        (AuditKind::ApprovalConsumed, "approval.consumed"),
        (AuditKind::ApprovalExpired, "approval.expired"),
        (AuditKind::AckCreated, "ack.created"),
        (AuditKind::PolicyLoaded, "policy.loaded"),
        (AuditKind::WaitEnded, "wait.ended"),
        (AuditKind::KnowledgeShown, "knowledge.shown"),
        (AuditKind::KnowledgeAcked, "knowledge.acked"),
        (AuditKind::KnowledgeError, "knowledge.error"),
        (AuditKind::MemoryChanged, "memory.changed"),
        (AuditKind::OperatorChanged, "operator.changed"),
        (AuditKind::Bypass, "bypass"),
        (AuditKind::Checkpoint, "checkpoint"),
    ];
    pinned(&t, AuditKind::as_str);
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
    }
}

#[test]
fn section_kind() {
    let t = [
        (SectionKind::Preflight, "preflight"),
        (SectionKind::Gotchas, "gotchas"),
        (SectionKind::Credentials, "credentials"),
    ];
    pinned(&t, SectionKind::as_str);
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
    }
}

#[test]
fn category() {
    let t = [
        (Category::Process, "process"),
        (Category::Technical, "technical"),
        (Category::Security, "security"),
        (Category::Gotchas, "gotchas"),
        (Category::Credentials, "credentials"),
        (Category::General, "general"),
    ];
    pinned(&t, Category::as_str);
    assert_eq!(Category::ALL.len(), Category::VARIANTS.len());
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
        assert_eq!(Category::parse(s), Some(v));
        assert_eq!(Category::parse(&format!(" {} ", s.to_uppercase())), Some(v));
        assert_eq!(serde_json::to_value(v).unwrap(), s);
    }
    assert_eq!(Category::parse("Gotcha"), Some(Category::Gotchas));
    assert_eq!(Category::parse("credential"), Some(Category::Credentials));
    assert_eq!(Category::parse("secrets"), None);
}

#[test]
fn enforcement() {
    let t = [
        (Enforcement::Strict, "strict"),
        (Enforcement::Advisory, "advisory"),
        (Enforcement::Category, "category"),
        (Enforcement::Disabled, "disabled"),
    ];
    pinned(&t, Enforcement::as_str);
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
        assert_eq!(Enforcement::parse(s), Some(v));
        assert_eq!(
            Enforcement::parse(&format!(" {} ", s.to_uppercase())),
            Some(v)
        );
    }
    assert_eq!(Enforcement::parse("OFF"), Some(Enforcement::Disabled));
    assert_eq!(Enforcement::parse("on"), None);
}

#[test]
fn criticality() {
    pinned(
        &[
            (Criticality::Critical, "critical"),
            (Criticality::Routine, "routine"),
            (Criticality::Experimental, "experimental"),
        ],
        Criticality::as_str,
    );
}

#[test]
fn approver_kind() {
    let t = [
        (ApproverKind::UserRequest, "user_request"),
        (ApproverKind::RulesBased, "rules_based"),
        (ApproverKind::LlmEvaluation, "llm_evaluation"),
    ];
    pinned(&t, ApproverKind::as_str);
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
        assert_eq!(ApproverKind::parse(s), Some(v));
        assert_eq!(ApproverKind::parse(&format!(" {s} ")), Some(v));
        assert_eq!(ApproverKind::parse(&s.to_uppercase()), None);
        assert_eq!(serde_json::to_value(v).unwrap(), s);
    }
}

#[test]
fn approval_state() {
    let t = [
        (ApprovalState::Pending, "pending"),
        (ApprovalState::Approved, "approved"),
        (ApprovalState::Consumed, "consumed"),
        (ApprovalState::Denied, "denied"),
        (ApprovalState::Expired, "expired"),
    ];
    pinned(&t, ApprovalState::as_str);
    for (v, s) in t {
        assert_eq!(v.to_string(), s);
        assert_eq!(ApprovalState::parse(s), Some(v));
        // Stored exactly: no blanks, no other case.
        assert_eq!(ApprovalState::parse(&format!(" {s}")), None);
        assert_eq!(ApprovalState::parse(&s.to_uppercase()), None);
        assert_eq!(serde_json::to_value(v).unwrap(), s);
    }
}
