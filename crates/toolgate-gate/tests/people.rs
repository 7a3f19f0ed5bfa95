//! A quorum counts distinct, authenticated people, on every backend: the
//! administrator (the shared operator token, the command line without a
//! token) is never a second person and never counts at R4; a bypass of one
//! approval is one person's vote; separation of duties sees every identity
//! linked to an operator in the requester and the session.

mod common;

use common::*;
use std::sync::Arc;
use toolgate_core::{RiskClass, ToolCall, Verdict};
use toolgate_gate::{ADMIN, ManualClock, VoteOutcome, add_operator, bypass_approval, vote};
use toolgate_store::StoreError;

const R4: &str = "dropdb prod";
const R3: &str = "kubectl apply -f prod.yaml";

fn call(cmd: &str, requester: &str, session: &str) -> ToolCall {
    serde_json::from_value(serde_json::json!({
        "tool": "exec",
        "params": {"command": cmd},
        "session": session,
        "cwd": "/home/dev/proj",
        "requester": {"id": requester},
    }))
    .unwrap()
}

fn refused(e: StoreError) -> String {
    match e {
        StoreError::Refused(r) => r.to_string(),
        other => panic!("not a refusal: {other}"),
    }
}

#[test]
fn one_operator_and_the_administrator_never_meet_r4() {
    let dir = TempDir::new("people-admin");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), "", clock.clone());
    named(&s, &["alice", "bob"]);
    let c = exec(R4);
    let d = g.check(&c).unwrap();
    assert_eq!(d.risk, RiskClass::R4, "{d:?}");
    let id = approval_id(&d);
    let out = vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert!(
        matches!(
            out,
            VoteOutcome::Recorded {
                have: 1,
                need: 2,
                ..
            }
        ),
        "{out:?}"
    );
    // The shared token over HTTP and the command line without a token both
    // vote as the administrator: refused, on the record.
    let e = refused(vote(&*s, &*clock, &id, person(ADMIN, true)).unwrap_err());
    assert!(e.contains("not a named operator"), "{e}");
    // Not by bypass either.
    let e = refused(bypass_approval(&*s, &*clock, &id, "incident 1: urgent", ADMIN).unwrap_err());
    assert!(e.contains("not a named operator"), "{e}");
    // Nor by a name nobody holds a credential for.
    let e = refused(vote(&*s, &*clock, &id, person("mallory", true)).unwrap_err());
    assert!(e.contains("not a named operator"), "{e}");
    assert_eq!(g.check(&c).unwrap().decision, Verdict::Escalate);
    // A removed operator is nobody's name any more.
    toolgate_gate::remove_operator(&*s, &*clock, "bob", "test").unwrap();
    assert!(vote(&*s, &*clock, &id, person("bob", true)).is_err());
    named(&s, &["carol"]);
    let out = vote(&*s, &*clock, &id, person("carol", true)).unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
    assert_eq!(g.check(&c).unwrap().decision, Verdict::Allow);
    // The votes say who was a named person.
    let v = toolgate_gate::show(&*s, &*clock, &id).unwrap();
    let counted: Vec<(String, bool)> = v
        .votes
        .iter()
        .map(|v| (v.vote.identity.clone(), v.vote.named))
        .collect();
    assert_eq!(
        counted,
        [("alice".to_string(), true), ("carol".to_string(), true)]
    );
}

#[test]
fn the_administrator_approves_alone_only_where_one_approval_is_enough() {
    let dir = TempDir::new("people-break-glass");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), "", clock.clone());
    let c = exec(R3);
    let id = approval_id(&g.check(&c).unwrap());
    let out = vote(&*s, &*clock, &id, person(ADMIN, true)).unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
    assert_eq!(g.check(&c).unwrap().decision, Verdict::Allow);
    // A quorum of two below R4: only named people make it up.
    let g = gate(
        s.clone(),
        "[approvals]\nquorum = { R3 = 2 }\n",
        clock.clone(),
    );
    named(&s, &["alice"]);
    let c = exec("kubectl apply -f other.yaml");
    let id = approval_id(&g.check(&c).unwrap());
    vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert!(vote(&*s, &*clock, &id, person(ADMIN, true)).is_err());
    assert_eq!(g.check(&c).unwrap().decision, Verdict::Escalate);
    // Its denial counts anywhere.
    let out = vote(&*s, &*clock, &id, person(ADMIN, false)).unwrap();
    assert_eq!(out, VoteOutcome::Denied);
}

#[test]
fn a_bypass_of_one_approval_is_one_vote_by_an_allowed_person() {
    let dir = TempDir::new("people-bypass");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    named(&s, &["alice", "bob", "carol"]);
    let g = gate(s.clone(), "", clock.clone());
    let c = exec(R4);
    let id = approval_id(&g.check(&c).unwrap());
    // A reason is required, as for any bypass.
    assert!(matches!(
        bypass_approval(&*s, &*clock, &id, "x", "alice").unwrap_err(),
        StoreError::Operators(_)
    ));
    let (a, out) =
        bypass_approval(&*s, &*clock, &id, "incident 7: the fix must ship", "alice").unwrap();
    assert!(
        matches!(
            out,
            VoteOutcome::Recorded {
                have: 1,
                need: 2,
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(a.state, toolgate_core::ApprovalState::Pending);
    assert_eq!(g.check(&c).unwrap().decision, Verdict::Escalate);
    // The same person again, by bypass or by vote, counts once.
    assert!(bypass_approval(&*s, &*clock, &id, "incident 7: really urgent", "alice").is_err());
    assert!(vote(&*s, &*clock, &id, person("alice", true)).is_err());
    let out = vote(&*s, &*clock, &id, person("bob", true)).unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
    assert_eq!(g.check(&c).unwrap().decision, Verdict::Allow);
    // The bypass and what it counted for are in the audit chain.
    let mut bypasses = Vec::new();
    toolgate_gate::export(&*s, 1, &mut |e| {
        if e.entry["kind"] == "bypass" {
            bypasses.push(e.entry["data"].clone());
        }
        true
    })
    .unwrap();
    assert_eq!(bypasses.len(), 2, "{bypasses:?}");
    assert_eq!(bypasses[0]["counted"], "1 of 2");
    assert!(
        bypasses[1]["counted"]
            .as_str()
            .unwrap()
            .starts_with("refused")
    );

    // Where the policy names its operators, only they may bypass.
    let g = gate(
        s.clone(),
        "[approvals]\noperators = [\"carol\"]\n",
        clock.clone(),
    );
    let c = exec(R3);
    let id = approval_id(&g.check(&c).unwrap());
    for who in ["alice", ADMIN] {
        let e = refused(bypass_approval(&*s, &*clock, &id, "incident 8: hotfix", who).unwrap_err());
        assert!(e.contains("not one of the operators"), "{who}: {e}");
    }
    let (_, out) = bypass_approval(&*s, &*clock, &id, "incident 8: hotfix", "carol").unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
}

#[test]
fn an_operator_never_approves_what_they_asked_for_under_a_linked_identity() {
    let dir = TempDir::new("people-linked");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let c0 = ManualClock::new(T0);
    add_operator(
        &*s,
        &c0,
        "alice",
        &[
            "slack:U0ALICE1".into(),
            "telegram:987654321".into(),
            "email:Alice@Example.com".into(),
        ],
        "test",
    )
    .unwrap();
    named(&s, &["bob"]);
    let g = gate(s.clone(), "", clock.clone());
    let asked = [
        ("U0ALICE1", "s1"),
        ("u0alice1", "s1"),
        ("slack:U0ALICE1", "s1"),
        ("Slack:u0alice1", "s1"),
        ("<@U0ALICE1>", "s1"),
        ("987654321", "s1"),
        ("telegram:987654321", "s1"),
        ("alice@example.com", "s1"),
        ("ALICE@EXAMPLE.COM", "s1"),
        ("mailto:alice+bot@example.com", "s1"),
        ("Alice", "s1"),
        ("U0\u{200b}ALICE1", "s1"),
        // OpenClaw's per-peer session key carries the sender.
        ("someone", "agent:main:telegram:direct:987654321"),
    ];
    for (i, (requester, session)) in asked.iter().enumerate() {
        let c = call(&format!("kubectl apply -f p{i}.yaml"), requester, session);
        let id = approval_id(&g.check(&c).unwrap());
        for how in ["vote", "bypass"] {
            let e = match how {
                "vote" => vote(&*s, &*clock, &id, person("alice", true)).unwrap_err(),
                _ => bypass_approval(&*s, &*clock, &id, "incident 3: my own call", "alice")
                    .unwrap_err(),
            };
            let e = refused(e);
            assert!(
                e.contains("separation of duties"),
                "{requester:?} {how}: {e}"
            );
        }
        assert_eq!(g.check(&c).unwrap().decision, Verdict::Escalate);
        let out = vote(&*s, &*clock, &id, person("bob", true)).unwrap();
        assert!(
            matches!(out, VoteOutcome::Approved { .. }),
            "{requester:?}: {out:?}"
        );
    }
    // An account linked after the call was made counts too.
    let c = call(
        "kubectl apply -f late.yaml",
        "discord:123456789012345678",
        "s1",
    );
    let id = approval_id(&g.check(&c).unwrap());
    toolgate_gate::change_identities(
        &*s,
        &c0,
        "alice",
        &["discord:123456789012345678".into()],
        &[],
        "test",
    )
    .unwrap();
    assert!(vote(&*s, &*clock, &id, person("alice", true)).is_err());
    // Someone else's account is not hers.
    let c = call("kubectl apply -f theirs.yaml", "U0DAVE22", "s1");
    let id = approval_id(&g.check(&c).unwrap());
    vote(&*s, &*clock, &id, person("alice", true)).unwrap();
}

#[test]
fn a_named_operator_who_asked_does_not_count_towards_what_is_reachable() {
    let dir = TempDir::new("people-reach");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    add_operator(
        &*s,
        &ManualClock::new(T0),
        "alice",
        &["slack:U0ALICE1".into()],
        "test",
    )
    .unwrap();
    named(&s, &["bob"]);
    // Two operators named, R4 needs two: the one who asked (by her chat
    // account) leaves one, so the call can never be approved and blocks now.
    let g = gate(
        s.clone(),
        "[approvals]\noperators = [\"alice\", \"bob\"]\n",
        clock.clone(),
    );
    let d = g.check(&call(R4, "U0ALICE1", "s1")).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert!(d.reason.contains("insufficient-factors"), "{}", d.reason);
    // Asked by someone else, it waits for the two of them.
    let d = g.check(&call(R4, "U0CAROL3", "s1")).unwrap();
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
}
