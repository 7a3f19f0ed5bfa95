use super::*;
use crate::model::{RiskClass, ToolCall};
use crate::policy::Policy;
use serde_json::json;

/// The binding as the gate computes it: in the environment the call names.
fn binding_hash_here(call: &ToolCall) -> BindingHash {
    let cwd = call.cwd.as_deref().unwrap_or("/home/dev/proj");
    binding_hash(call, &crate::paths::Env::new("/home/dev", cwd))
}

fn call(v: serde_json::Value) -> ToolCall {
    serde_json::from_value(v).unwrap()
}

#[test]
fn binding_ignores_key_order_and_counts_every_nested_value() {
    let a = call(
        json!({"tool":"exec","params":{"command":"rm -rf build","opts":{"a":1,"b":[1,{"x":"y"}]}}}),
    );
    let b = call(
        json!({"params":{"opts":{"b":[1,{"x":"y"}],"a":1},"command":"rm -rf build"},"tool":"exec"}),
    );
    assert_eq!(binding_hash_here(&a), binding_hash_here(&b));
    let c = call(
        json!({"tool":"exec","params":{"command":"rm -rf build","opts":{"a":1,"b":[1,{"x":"z"}]}}}),
    );
    assert_ne!(
        binding_hash_here(&a),
        binding_hash_here(&c),
        "a changed nested value"
    );
    let d = call(
        json!({"tool":"exec","params":{"command":"rm -rf build","opts":{"a":1,"b":[1,{"x":"y"}],"c":null}}}),
    );
    assert_ne!(
        binding_hash_here(&a),
        binding_hash_here(&d),
        "an added nested key"
    );
    let e = call(
        json!({"tool":"exec","params":{"command":"rm -rf build","opts":{"a":1,"b":[{"x":"y"},1]}}}),
    );
    assert_ne!(
        binding_hash_here(&a),
        binding_hash_here(&e),
        "array order counts"
    );
}

#[test]
fn integers_beyond_double_precision_keep_their_exact_value() {
    let a = call(
        json!({"tool":"message","params":{"target": 9007199254740992_u64, "ids": [1, 9007199254740993_u64]}}),
    );
    let b = call(
        json!({"tool":"message","params":{"target": 9007199254740993_u64, "ids": [1, 9007199254740993_u64]}}),
    );
    assert_ne!(binding_hash_here(&a), binding_hash_here(&b));
    let c = call(json!({"tool":"message","params":{"target": -9007199254740993_i64}}));
    let d = call(json!({"tool":"message","params":{"target": -9007199254740994_i64}}));
    assert_ne!(binding_hash_here(&c), binding_hash_here(&d));
    // The same digits as a string are a different call.
    let e = call(
        json!({"tool":"message","params":{"target": "9007199254740993", "ids": [1, 9007199254740993_u64]}}),
    );
    assert_ne!(binding_hash_here(&b), binding_hash_here(&e));
    let (copy, at) = exact_integers(&b.params.clone().into());
    assert_eq!(at, vec!["/ids/1", "/target"]);
    assert_eq!(copy["target"], json!("9007199254740993"));
    // Ordinary numbers are untouched.
    let (copy, at) = exact_integers(&json!({"a": 1.5, "b": 9007199254740992_u64}));
    assert!(at.is_empty());
    assert_eq!(copy, json!({"a": 1.5, "b": 9007199254740992_u64}));
}

#[test]
fn binding_includes_tool_and_scope() {
    let base = json!({"tool":"exec","params":{"command":"rm -rf build"},"cwd":"/a","session":"s1"});
    let h = binding_hash_here(&call(base.clone()));
    for (k, v) in [
        ("tool", json!("Bash")),
        ("cwd", json!("/b")),
        ("session", json!("s2")),
        ("agent", json!("x")),
    ] {
        let mut other = base.clone();
        other[k] = v;
        assert_ne!(
            h,
            binding_hash_here(&call(other)),
            "{k} is part of the binding"
        );
    }
    // Fields outside the binding do not change it.
    let mut other = base.clone();
    other["call_id"] = json!("c9");
    other["requester"] = json!({"id": "u2"});
    assert_eq!(h, binding_hash_here(&call(other)));
}

#[test]
fn the_environment_judged_in_is_part_of_the_binding() {
    use crate::paths::Env;
    let c = call(json!({"tool":"exec","params":{"command":"rm -rf build"}}));
    let here = binding_hash(&c, &Env::new("/home/dev", "/srv/a"));
    assert_ne!(here, binding_hash(&c, &Env::new("/home/dev", "/srv/b")));
    assert_ne!(here, binding_hash(&c, &Env::new("/home/other", "/srv/a")));
    assert_eq!(here, binding_hash(&c, &Env::new("/home/dev", "/srv/a")));
}

#[test]
fn numbers_too_large_to_bind_are_found() {
    let v: serde_json::Value =
        serde_json::from_str(r#"{"a": 1, "b": [2.5, {"c": 18446744073709551616}]}"#).unwrap();
    assert_eq!(
        unbindable_number(&v).as_deref(),
        Some("1.8446744073709552e+19")
    );
    let v: serde_json::Value =
        serde_json::from_str(r#"{"a": 9007199254740993, "b": 1e5, "c": 0.1}"#).unwrap();
    assert_eq!(unbindable_number(&v), None);
    let v: serde_json::Value = serde_json::from_str(r#"{"a": -1e300}"#).unwrap();
    assert!(unbindable_number(&v).is_some());
}

#[test]
fn ids_round_trip_and_reject_junk() {
    let id = ApprovalId::from_random([0xab; 16]);
    assert_eq!(id.to_string().len(), 32);
    assert_eq!(ApprovalId::parse(&id.to_string()), Ok(id));
    assert_eq!(ApprovalId::parse(&id.to_string().to_uppercase()), Ok(id));
    for junk in ["", "abc", "zz".repeat(16).as_str(), &"a".repeat(33)] {
        assert!(ApprovalId::parse(junk).is_err(), "{junk:?}");
    }
    let h = binding_hash_here(&ToolCall::default());
    assert_eq!(BindingHash::from_hex(&h.to_hex()), Ok(h));
}

fn settings(extra: &str) -> Policy {
    Policy::from_toml_str(&format!("[approvals]\n{extra}\n"), "t.toml").unwrap()
}

const RULE: &str = "[[approvals.rule]]\nname = \"r\"\napprove = [\"exec(make test)\"]\n";
const RULE4: &str = "allow_weak_r4 = true\n[[approvals.rule]]\nname = \"r\"\napprove = \
                     [\"exec(make test)\"]\nmax_risk = \"R4\"\n";

/// Every approver set × risk class: what quorum it needs, or that it can
/// never be reached.
#[test]
fn quorum_matrix() {
    use ApproverKind::*;
    use RiskClass::*;
    // (policy, llm configured, class, Ok((min, require_user, approvers)) or Err)
    type Want = Result<(u32, bool, &'static [ApproverKind]), ()>;
    let cases: Vec<(String, bool, RiskClass, Want)> = vec![
        // Defaults: people without limit; rules_based inactive without rules.
        (String::new(), false, R2, Ok((1, false, &[UserRequest]))),
        (String::new(), false, R3, Ok((1, true, &[UserRequest]))),
        (String::new(), false, R4, Ok((2, true, &[UserRequest]))),
        (
            RULE.into(),
            false,
            R2,
            Ok((1, false, &[UserRequest, RulesBased])),
        ),
        // Rules count only when one of them reaches the class (default R3).
        (RULE.into(), false, R4, Ok((2, true, &[UserRequest]))),
        (
            RULE4.into(),
            false,
            R4,
            Ok((2, true, &[UserRequest, RulesBased])),
        ),
        // llm_evaluation counts only when allowed and configured.
        (
            "allowed_approvers = [\"user_request\", \"llm_evaluation\"]".into(),
            false,
            R2,
            Ok((1, false, &[UserRequest])),
        ),
        (
            "allowed_approvers = [\"user_request\", \"llm_evaluation\"]".into(),
            true,
            R2,
            Ok((1, false, &[UserRequest, LlmEvaluation])),
        ),
        (
            "allowed_approvers = [\"user_request\"]".into(),
            true,
            R2,
            Ok((1, false, &[UserRequest])),
        ),
        // Disabling people where a person is required fails closed.
        (
            format!("disabled_approvers = [\"user_request\"]\n{RULE}"),
            false,
            R2,
            Ok((1, false, &[RulesBased])),
        ),
        (
            format!("disabled_approvers = [\"user_request\"]\n{RULE}"),
            false,
            R3,
            Err(()),
        ),
        (
            format!("disabled_approvers = [\"user_request\"]\nrequire_user = []\n{RULE}"),
            false,
            R3,
            Ok((1, false, &[RulesBased])),
        ),
        (
            format!("disabled_approvers = [\"user_request\"]\nrequire_user = []\n{RULE4}"),
            false,
            R4,
            Err(()),
        ),
        ("allowed_approvers = []".into(), false, R2, Err(())),
        (
            "allowed_approvers = [\"rules_based\"]".into(),
            false,
            R2,
            Err(()),
        ),
        // Named operators count one each.
        (
            "operators = [\"alice\"]".into(),
            false,
            R3,
            Ok((1, true, &[UserRequest])),
        ),
        ("operators = [\"alice\"]".into(), false, R4, Err(())),
        (
            format!("operators = [\"alice\"]\n{RULE4}"),
            false,
            R4,
            Ok((2, true, &[UserRequest, RulesBased])),
        ),
        (
            format!("operators = [\"alice\"]\n{RULE}"),
            false,
            R4,
            Err(()),
        ),
        (
            "operators = [\"alice\", \"bob\"]".into(),
            false,
            R4,
            Ok((2, true, &[UserRequest])),
        ),
        (
            "operators = [\"alice\", \"bob\"]\nquorum = { R4 = 3 }".into(),
            false,
            R4,
            Err(()),
        ),
        (
            "quorum = { R2 = 5 }".into(),
            false,
            R2,
            Ok((5, false, &[UserRequest])),
        ),
        (
            "require_user = [\"R2\"]".into(),
            false,
            R2,
            Ok((1, true, &[UserRequest])),
        ),
        // The requester (u1) is not counted among the operators.
        ("operators = [\"u1\", \"alice\"]".into(), false, R4, Err(())),
        ("operators = [\"U1\"]".into(), false, R3, Err(())),
        (
            "operators = [\"u1\", \"alice\"]".into(),
            false,
            R3,
            Ok((1, true, &[UserRequest])),
        ),
    ];
    for (extra, llm, class, want) in cases {
        let p = settings(&extra);
        let got = p
            .approvals()
            .requirement(class, llm, &|o: &str| same_identity(o, "u1"));
        match (&got, want) {
            (Ok(q), Ok((min, user, kinds))) => {
                assert_eq!(
                    (q.min_approvals, q.require_user, q.approvers.as_slice()),
                    (min, user, kinds),
                    "{extra:?} {class}"
                );
            }
            (Err(e), Err(())) => {
                assert!(e.to_string().starts_with("insufficient-factors: "), "{e}")
            }
            _ => panic!("{extra:?} {class}: got {got:?}"),
        }
    }
}

fn approval(risk: RiskClass, quorum: QuorumRule) -> Approval {
    Approval {
        id: ApprovalId::from_random([7; 16]),
        binding: binding_hash_here(&ToolCall::default()),
        state: ApprovalState::Pending,
        risk,
        reason: "r".into(),
        summary: "rm -rf build".into(),
        call: json!({}),
        requester: Some("u1".into()),
        requester_keys: requester_keys(Some("u1"), Some("s1")),
        session: Some("s1".into()),
        relay_from: Some(relay_identity(Some("s1"))),
        agent: None,
        cwd: None,
        quorum,
        relay: false,
        created_ms: 1_000,
        expires_ms: 301_000,
        window_ms: 30_000,
        generation: 0,
        usable_until_ms: None,
        resolved_ms: None,
        resolution: None,
        findings: Vec::new(),
        waiting_until_ms: None,
    }
}

fn rule(min: u32, user: bool, kinds: &[ApproverKind]) -> QuorumRule {
    QuorumRule {
        min_approvals: min,
        require_user: user,
        approvers: kinds.to_vec(),
        operators: vec![],
    }
}

fn terms(risk: RiskClass, quorum: QuorumRule, expires_ms: i64) -> Terms {
    Terms::new(risk, quorum, expires_ms, 30_000, false)
}

fn vote(a: &Approval, kind: ApproverKind, who: &str, approve: bool) -> Vote {
    Vote {
        approval: a.id,
        kind,
        identity: who.into(),
        approve,
        reason: None,
        relayed: false,
        // People in these tests are named operators unless a test says
        // otherwise.
        named: kind == ApproverKind::UserRequest,
        channel: "cli".into(),
        risk: a.risk,
        generation: a.generation,
        at_ms: 2_000,
    }
}

/// [`check_vote`] for a voter known only by their name.
fn check(a: &Approval, existing: &[Vote], v: &Vote, now: i64) -> Result<(), VoteRefused> {
    check_vote(a, existing, v, &approver_keys(&v.identity, &[]), now)
}

#[test]
fn quorum_counts_distinct_current_votes_and_needs_a_person_where_required() {
    use ApproverKind::*;
    let a = approval(RiskClass::R4, rule(2, true, &[UserRequest, RulesBased]));
    let alice = vote(&a, UserRequest, "alice", true);
    let rules = vote(&a, RulesBased, "rules_based", true);
    assert!(matches!(
        tally(&a, std::slice::from_ref(&alice)),
        Tally::Pending {
            have: 1,
            need: 2,
            user_missing: false
        }
    ));
    assert!(
        matches!(
            tally(&a, &[alice.clone(), alice.clone()]),
            Tally::Pending { have: 1, .. }
        ),
        "one vote per identity"
    );
    assert!(matches!(
        tally(&a, std::slice::from_ref(&rules)),
        Tally::Pending {
            have: 1,
            user_missing: true,
            ..
        }
    ));
    assert!(matches!(
        tally(&a, &[alice.clone(), rules.clone()]),
        Tally::Approved { .. }
    ));
    let bob = vote(&a, UserRequest, "bob", true);
    assert!(matches!(
        tally(&a, &[alice.clone(), bob.clone()]),
        Tally::Approved { .. }
    ));
    // A vote from another generation (before a change of terms) does not count.
    let mut stale = bob.clone();
    stale.generation += 1;
    assert!(matches!(
        tally(&a, &[alice.clone(), stale]),
        Tally::Pending { have: 1, .. }
    ));
    // The requester's vote never counts, even if it got in.
    let own = vote(&a, UserRequest, "u1", true);
    assert!(matches!(
        tally(&a, &[alice.clone(), own]),
        Tally::Pending { have: 1, .. }
    ));
    // A denial wins over any number of approvals.
    let no = vote(&a, UserRequest, "carol", false);
    assert!(matches!(tally(&a, &[alice, bob, no]), Tally::Denied { .. }));
    // R3 with rules alone is not enough: a person is required.
    let a3 = approval(RiskClass::R3, rule(1, true, &[UserRequest, RulesBased]));
    assert!(matches!(
        tally(&a3, &[vote(&a3, RulesBased, "rules_based", true)]),
        Tally::Pending {
            user_missing: true,
            ..
        }
    ));
    let a2 = approval(RiskClass::R2, rule(1, false, &[UserRequest, RulesBased]));
    assert!(matches!(
        tally(&a2, &[vote(&a2, RulesBased, "rules_based", true)]),
        Tally::Approved { .. }
    ));
}

#[test]
fn votes_are_checked_for_separation_of_duties() {
    use ApproverKind::*;
    let a = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    assert!(matches!(
        check(&a, &[], &vote(&a, UserRequest, "u1", true), 2_000),
        Err(VoteRefused::SelfApproval(_))
    ));
    assert_eq!(
        check(&a, &[], &vote(&a, UserRequest, "u1", false), 2_000),
        Ok(()),
        "the requester may deny"
    );
    assert!(matches!(
        check(&a, &[], &vote(&a, UserRequest, " ", true), 2_000),
        Err(VoteRefused::NoIdentity)
    ));
    assert!(matches!(
        check(&a, &[], &vote(&a, RulesBased, "rules_based", true), 2_000),
        Err(VoteRefused::KindInactive(_))
    ));
    let alice = vote(&a, UserRequest, "alice", true);
    assert_eq!(check(&a, &[], &alice, 2_000), Ok(()));
    assert!(matches!(
        check(&a, std::slice::from_ref(&alice), &alice, 2_000),
        Err(VoteRefused::AlreadyVoted(_))
    ));
    assert!(matches!(
        check(&a, &[], &alice, 301_000),
        Err(VoteRefused::Expired(_))
    ));
    let mut named = a.clone();
    named.quorum.operators = vec!["bob".into()];
    assert!(matches!(
        check(&named, &[], &alice, 2_000),
        Err(VoteRefused::NotAnOperator(_))
    ));
    let mut done = a.clone();
    done.state = ApprovalState::Consumed;
    assert!(matches!(
        check(&done, &[], &alice, 2_000),
        Err(VoteRefused::Closed { .. })
    ));
}

#[test]
fn relayed_votes_need_the_opt_in_the_session_and_never_r4() {
    use ApproverKind::*;
    let mut a = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    let mut relayed = vote(&a, UserRequest, &relay_identity(Some("s1")), true);
    relayed.relayed = true;
    assert!(matches!(
        check(&a, &[], &relayed, 2_000),
        Err(VoteRefused::RelayRefused(_))
    ));
    a.relay = true;
    assert_eq!(check(&a, &[], &relayed, 2_000), Ok(()));
    let mut other = relayed.clone();
    other.identity = relay_identity(Some("s2"));
    assert!(matches!(
        check(&a, &[], &other, 2_000),
        Err(VoteRefused::RelayRefused(_))
    ));
    let mut r4 = approval(RiskClass::R4, rule(1, true, &[UserRequest]));
    r4.relay = false; // what the gate sets for R4 whatever the policy says
    let mut v = vote(&r4, UserRequest, &relay_identity(Some("s1")), true);
    v.relayed = true;
    let e = check(&r4, &[], &v, 2_000).unwrap_err();
    assert!(e.to_string().contains("R4"), "{e}");
}

#[test]
fn relay_counts_once_needs_a_session_and_yields_to_named_operators() {
    use ApproverKind::*;
    let mut a = approval(RiskClass::R3, rule(2, true, &[UserRequest]));
    a.relay = true;
    let relayed = |a: &Approval, session: &str| {
        let mut v = vote(a, UserRequest, &relay_identity(Some(session)), true);
        v.relayed = true;
        v
    };
    let first = relayed(&a, "s1");
    assert_eq!(check(&a, &[], &first, 2_000), Ok(()));
    // A second relay, even one claiming another session name, is refused,
    // and would not count if it got in.
    let second = relayed(&a, "s1");
    assert!(check(&a, std::slice::from_ref(&first), &second, 2_000).is_err());
    let mut forged = relayed(&a, "s1");
    forged.identity = "relay:other".into();
    assert!(matches!(
        tally(&a, &[first.clone(), forged]),
        Tally::Pending { have: 1, .. }
    ));
    // No session on the call: nothing to tie a relay to.
    let mut b = a.clone();
    b.session = None;
    b.relay_from = None;
    assert!(check(&b, &[], &relayed(&b, "s1"), 2_000).is_err());
    // Named operators: only they approve.
    let mut c = a.clone();
    c.quorum.operators = vec!["alice".into()];
    assert!(check(&c, &[], &relayed(&c, "s1"), 2_000).is_err());
    // Re-judged as R4: relay is off, and earlier relayed votes stop counting.
    let mut d = a.clone();
    d.refresh(Terms::new(
        RiskClass::R4,
        rule(1, true, &[UserRequest]),
        d.expires_ms,
        30_000,
        true,
    ));
    assert!(!d.relay, "Terms::new keeps relay off for R4");
    assert!(check(&d, &[], &relayed(&d, "s1"), 2_000).is_err());
    // Even with the flag forced on, an R4 relay is refused and never counts.
    let mut forced = d.clone();
    forced.relay = true;
    assert!(check(&forced, &[], &relayed(&forced, "s1"), 2_000).is_err());
    assert!(matches!(
        tally(&forced, &[relayed(&forced, "s1")]),
        Tally::Pending { have: 0, .. }
    ));
    // Identities compare without case.
    let alice = vote(&a, UserRequest, "alice", true);
    let alice_again = vote(&a, UserRequest, " Alice ", true);
    assert!(matches!(
        check(&a, std::slice::from_ref(&alice), &alice_again, 2_000),
        Err(VoteRefused::AlreadyVoted(_))
    ));
    assert!(matches!(
        tally(&a, &[alice, alice_again]),
        Tally::Pending { have: 1, .. }
    ));
    let own = vote(&a, UserRequest, "U1", true);
    assert!(matches!(
        check(&a, &[], &own, 2_000),
        Err(VoteRefused::SelfApproval(_))
    ));
}

/// The administrator (the shared operator token, the command line without
/// a token) and any other identity no named operator stands behind.
fn admin(a: &Approval, approve: bool) -> Vote {
    let mut v = vote(a, ApproverKind::UserRequest, "operator", approve);
    v.named = false;
    v
}

#[test]
fn the_administrator_is_never_a_second_person() {
    use ApproverKind::*;
    // R4: only named people count, the administrator not at all.
    let r4 = approval(RiskClass::R4, rule(2, true, &[UserRequest]));
    let alice = vote(&r4, UserRequest, "alice", true);
    let e = check(&r4, std::slice::from_ref(&alice), &admin(&r4, true), 2_000).unwrap_err();
    assert!(matches!(e, VoteRefused::NotNamed { need: 2, .. }), "{e}");
    assert!(e.to_string().contains("operators add"), "{e}");
    // Had it got in, it would not count.
    assert!(matches!(
        tally(&r4, &[alice.clone(), admin(&r4, true)]),
        Tally::Pending {
            have: 1,
            need: 2,
            ..
        }
    ));
    // Not even for an R4 quorum of one (allow_weak_r4), nor as the person
    // an R4 call requires beside a rule.
    let weak = approval(RiskClass::R4, rule(1, true, &[UserRequest, RulesBased]));
    assert!(check(&weak, &[], &admin(&weak, true), 2_000).is_err());
    let rules = vote(&weak, RulesBased, "rules_based", true);
    assert!(matches!(
        tally(&weak, &[rules.clone(), admin(&weak, true)]),
        Tally::Pending {
            user_missing: true,
            ..
        }
    ));
    assert!(matches!(
        tally(&weak, &[rules, vote(&weak, UserRequest, "bob", true)]),
        Tally::Approved { .. }
    ));
    // A quorum of two below R4: not the second approval either.
    let two = approval(RiskClass::R3, rule(2, true, &[UserRequest]));
    assert!(check(&two, &[], &admin(&two, true), 2_000).is_err());
    assert!(matches!(
        tally(
            &two,
            &[vote(&two, UserRequest, "alice", true), admin(&two, true)]
        ),
        Tally::Pending { have: 1, .. }
    ));
    // Where one approval is enough below R4 it is that one (break-glass).
    let one = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    assert_eq!(check(&one, &[], &admin(&one, true), 2_000), Ok(()));
    assert!(matches!(
        tally(&one, &[admin(&one, true)]),
        Tally::Approved { .. }
    ));
    // Its denial stops any call.
    assert_eq!(check(&r4, &[], &admin(&r4, false), 2_000), Ok(()));
    assert!(matches!(
        tally(&r4, &[alice, admin(&r4, false)]),
        Tally::Denied { .. }
    ));
}

#[test]
fn the_requester_under_any_linked_identity_cannot_approve() {
    use ApproverKind::*;
    let mut a = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    a.requester = Some("U0123ABCD".into());
    a.requester_keys = requester_keys(Some("U0123ABCD"), Some("agent:main:main"));
    let alice = vote(&a, UserRequest, "alice", true);
    let linked = approver_keys("alice", &["slack:U0123ABCD".to_string()]);
    assert!(matches!(
        check_vote(&a, &[], &alice, &linked, 2_000),
        Err(VoteRefused::SelfApproval(_))
    ));
    // Her denial still stops it.
    let mut no = alice.clone();
    no.approve = false;
    assert_eq!(check_vote(&a, &[], &no, &linked, 2_000), Ok(()));
    // Someone else, linked elsewhere, may approve.
    let bob = vote(&a, UserRequest, "bob", true);
    let bobs = approver_keys("bob", &["slack:U0999".to_string()]);
    assert_eq!(check_vote(&a, &[], &bob, &bobs, 2_000), Ok(()));
    // An approval recorded before requester keys existed still compares
    // what it shows.
    let mut old = a.clone();
    old.requester_keys.clear();
    assert!(check_vote(&old, &[], &alice, &linked, 2_000).is_err());
}

#[test]
fn lifecycle_approve_consume_once_expire_and_refresh() {
    use ApproverKind::*;
    let mut a = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    let alice = vote(&a, UserRequest, "alice", true);
    assert!(!a.consume(2_000), "a pending approval cannot be consumed");
    assert!(matches!(
        a.settle(std::slice::from_ref(&alice), 2_000),
        Tally::Approved { .. }
    ));
    assert_eq!(
        (a.state, a.usable_until_ms),
        (ApprovalState::Approved, Some(32_000))
    );
    assert!(a.consume(3_000));
    assert!(!a.consume(3_001), "consumed once");
    // An approved approval can still be taken back before it is used.
    let mut r = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    let yes = vote(&r, UserRequest, "alice", true);
    r.settle(std::slice::from_ref(&yes), 2_000);
    let no = vote(&r, UserRequest, "bob", false);
    assert_eq!(check(&r, std::slice::from_ref(&yes), &no, 2_500), Ok(()));
    assert!(matches!(r.settle(&[yes, no], 2_500), Tally::Denied { .. }));
    assert_eq!(r.state, ApprovalState::Denied);
    assert!(!r.consume(2_600));
    // Approved but not used in time.
    let mut b = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    b.settle(&[vote(&b, UserRequest, "alice", true)], 2_000);
    assert!(!b.consume(32_000));
    assert!(b.expire_if_due(32_000));
    assert_eq!(b.state, ApprovalState::Expired);
    // Pending past its TTL.
    let mut c = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    assert!(!c.expire_if_due(300_999));
    assert!(c.expire_if_due(301_000));
    // A changed risk class puts an approved approval back to pending and
    // makes its votes stale.
    let mut d = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    let v = vote(&d, UserRequest, "alice", true);
    d.settle(std::slice::from_ref(&v), 2_000);
    assert!(d.refresh(terms(
        RiskClass::R4,
        rule(2, true, &[UserRequest]),
        d.expires_ms
    )));
    assert_eq!(d.state, ApprovalState::Pending);
    assert!(!v.is_current(&d));
    assert!(matches!(
        d.settle(&[v], 3_000),
        Tally::Pending { have: 0, .. }
    ));
    // A changed TTL alone also makes votes stale.
    let mut e = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    let v = vote(&e, UserRequest, "alice", true);
    assert!(e.refresh(terms(RiskClass::R3, rule(1, true, &[UserRequest]), 601_000)));
    assert!(!v.is_current(&e));
    assert!(
        !e.refresh(terms(RiskClass::R3, rule(1, true, &[UserRequest]), 601_000)),
        "nothing changed"
    );
}

mod properties {
    use super::*;
    use crate::audit::{ChainVerifier, GENESIS, chain_hash};
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    /// Arbitrary JSON, nested a few levels.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-zA-Z0-9 _./-]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The same object with its keys inserted in reverse order, at every depth.
    fn reversed(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m.iter().rev() {
                    out.insert(k.clone(), reversed(x));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
            other => other.clone(),
        }
    }

    fn call_with(params: Value) -> ToolCall {
        let Value::Object(params) = params else {
            unreachable!()
        };
        ToolCall {
            tool: "exec".into(),
            params,
            ..ToolCall::default()
        }
    }

    /// A chat account (`kind`, `id`) of the kinds operators link.
    fn account() -> impl Strategy<Value = (&'static str, String)> {
        prop_oneof![
            "U[A-Z0-9]{8,10}".prop_map(|id| ("slack", id)),
            "[1-9][0-9]{6,11}".prop_map(|id| ("telegram", id)),
            "[1-9][0-9]{16,18}".prop_map(|id| ("discord", id)),
            "[a-z][a-z0-9]{2,8}@[a-z]{3,8}\\.(com|org|io)".prop_map(|id| ("email", id)),
        ]
    }

    /// How a runtime or a script may spell `id` of service `kind`.
    fn spelling(kind: &str, id: &str, how: u8, case: u8, junk: u8) -> String {
        let id = match case % 3 {
            0 => id.to_string(),
            1 => id.to_uppercase(),
            _ => id.to_lowercase(),
        };
        let id = match junk % 4 {
            0 => id,
            // A zero-width space inside it.
            1 => {
                let mid = id.len() / 2;
                format!("{}\u{200b}{}", &id[..mid], &id[mid..])
            }
            // Full-width letters and digits.
            2 => id
                .chars()
                .map(|c| match c {
                    '!'..='~' => char::from_u32(c as u32 + 0xFEE0).unwrap_or(c),
                    _ => c,
                })
                .collect(),
            _ => format!("  {id}\t"),
        };
        match how % 8 {
            0 => id,
            1 => format!("{kind}:{id}"),
            2 => format!("{}:{id}", kind.to_uppercase()),
            3 => format!("<@{id}>"),
            4 => format!("@{id}"),
            5 => format!("{kind}/T0001/{id}"),
            6 => match id.split_once('@') {
                Some((local, domain)) => format!("mailto:{local}+agent@{domain}"),
                None => format!("<@{id}|someone>"),
            },
            _ => format!("\"Someone\" <{id}>"),
        }
    }

    proptest! {
        #[test]
        fn key_order_never_changes_the_binding(
            m in prop::collection::btree_map("[a-z]{1,6}", json_value(), 0..6)
        ) {
            let params = Value::Object(m.into_iter().collect());
            prop_assert_eq!(
                binding_hash_here(&call_with(params.clone())),
                binding_hash_here(&call_with(reversed(&params)))
            );
        }

        #[test]
        fn any_added_nested_key_changes_the_binding(
            m in prop::collection::btree_map("[a-z]{1,6}", json_value(), 1..6),
            extra in "[A-Z]{1,4}",
        ) {
            let params = Value::Object(m.into_iter().collect());
            // Add a key (upper case, so new) to the first object found,
            // or to the top.
            let mut changed = params.clone();
            fn add(v: &mut Value, key: &str) -> bool {
                match v {
                    Value::Object(o) => {
                        for x in o.values_mut() {
                            if add(x, key) { return true; }
                        }
                        o.insert(key.to_string(), Value::Null);
                        true
                    }
                    Value::Array(a) => a.iter_mut().any(|x| add(x, key)),
                    _ => false,
                }
            }
            add(&mut changed, &extra);
            prop_assert_ne!(
                binding_hash_here(&call_with(params)),
                binding_hash_here(&call_with(changed))
            );
        }

        #[test]
        fn no_spelling_of_a_linked_identity_approves_its_own_call(
            (kind, id) in account(),
            others in prop::collection::vec(account(), 0..3),
            how in any::<u8>(), case in any::<u8>(), junk in any::<u8>(),
            in_session in any::<bool>(),
            risk in prop_oneof![Just(RiskClass::R2), Just(RiskClass::R3), Just(RiskClass::R4)],
        ) {
            use ApproverKind::*;
            let spelled = spelling(kind, &id, how, case, junk);
            let mut a = approval(risk, rule(1, false, &[UserRequest]));
            let (requester, session) = if in_session {
                // OpenClaw's per-peer session keys carry the sender's id.
                (Some("someone".to_string()), Some(format!("agent:main:{kind}:direct:{spelled}")))
            } else {
                (Some(spelled.clone()), Some("agent:main:main".to_string()))
            };
            a.requester = requester.clone();
            a.session = session.clone();
            a.requester_keys = requester_keys(requester.as_deref(), session.as_deref());
            let mut linked: Vec<String> = others.iter().map(|(k, i)| format!("{k}:{i}")).collect();
            linked.push(format!("{kind}:{id}"));
            let keys = approver_keys("alice", &linked);
            let v = vote(&a, UserRequest, "alice", true);
            prop_assert!(
                matches!(check_vote(&a, &[], &v, &keys, 2_000), Err(VoteRefused::SelfApproval(_))),
                "{spelled:?} slipped through"
            );
        }

        #[test]
        fn another_persons_account_is_not_the_requester(
            (kind, id) in account(),
            (other_kind, other) in account(),
            how in any::<u8>(), case in any::<u8>(),
        ) {
            use ApproverKind::*;
            prop_assume!(!id.eq_ignore_ascii_case(&other));
            let spelled = spelling(kind, &id, how, case, 0);
            let mut a = approval(RiskClass::R3, rule(1, false, &[UserRequest]));
            a.requester = Some(spelled.clone());
            a.requester_keys = requester_keys(Some(&spelled), Some("agent:main:main"));
            let keys = approver_keys("bob", &[format!("{other_kind}:{other}")]);
            let v = vote(&a, UserRequest, "bob", true);
            prop_assert_eq!(check_vote(&a, &[], &v, &keys, 2_000), Ok(()));
        }

        #[test]
        fn verifier_never_panics_on_arbitrary_rows(
            rows in prop::collection::vec((0u64..20, any::<[u8; 32]>(), ".{0,80}"), 0..12)
        ) {
            let mut v = ChainVerifier::new();
            for (seq, hash, text) in &rows {
                if v.push(*seq, hash, text).is_err() { break; }
            }
            let _ = v.finish(None);
        }

        #[test]
        fn verifier_rejects_any_single_byte_edit(pos in 0usize..200, flip in 1u8..=255) {
            let mut prev = GENESIS;
            let mut rows = Vec::new();
            for seq in 1..=3u64 {
                let text = format!("{{\"data\":{{\"n\":{seq}}},\"kind\":\"decision\",\"seq\":{seq},\"trace\":\"t\",\"ts\":\"x\"}}");
                let hash = chain_hash(&prev, text.as_bytes());
                rows.push((seq, hash, text.into_bytes()));
                prev = hash;
            }
            let total: usize = rows.iter().map(|r| r.2.len()).sum();
            let mut at = pos % total;
            let mut row = 0;
            while at >= rows[row].2.len() { at -= rows[row].2.len(); row += 1; }
            rows[row].2[at] ^= flip;
            let mut v = ChainVerifier::new();
            let mut failed = false;
            for (seq, hash, text) in &rows {
                let text = String::from_utf8_lossy(text);
                if v.push(*seq, hash, &text).is_err() { failed = true; break; }
            }
            prop_assert!(failed || v.finish(Some((3, prev))).is_err());
        }
    }
}

#[test]
fn a_retired_approval_can_never_be_granted_or_used() {
    use ApproverKind::*;
    let mut approved = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    let alice = vote(&approved, UserRequest, "alice", true);
    approved.settle(std::slice::from_ref(&alice), 2_000);
    assert!(approved.retire(2_500, "moved to postgres://db/t"));
    assert_eq!(approved.state, ApprovalState::Expired);
    assert_eq!(
        approved.resolution.as_deref(),
        Some("moved to postgres://db/t")
    );
    assert!(!approved.consume(2_600), "retired before its retry");
    assert!(!approved.retire(2_700, "again"), "only open ones retire");

    let mut pending = approval(RiskClass::R3, rule(1, true, &[UserRequest]));
    assert!(pending.retire(2_000, "moved"));
    let late = vote(&pending, UserRequest, "alice", true);
    pending.settle(std::slice::from_ref(&late), 2_100);
    assert_eq!(pending.state, ApprovalState::Expired, "no vote revives it");
}
