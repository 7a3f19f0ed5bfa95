//! Approvals end to end through the gate and the SQLite store: one-time,
//! bound to exact parameters, separation of duties, quorum, expiry, relay.

mod common;

use common::*;
use serde_json::json;
use std::sync::{Arc, Barrier};
use toolgate_core::{ApprovalState, Layer, RiskClass, ToolCall, Verdict};
use toolgate_gate::{ManualClock, VoteOutcome};
use toolgate_store::StoreError;

const DEFAULT: &str = "";
const APPLY: &str = "kubectl apply -f prod.yaml";

#[test]
fn approve_then_retry_runs_exactly_once() {
    let dir = TempDir::new("once");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let call = exec(APPLY);
    let d = g.check(&call).unwrap();
    let id = approval_id(&d);
    assert_eq!(
        d.block_reason.as_deref().unwrap().split('|').nth(1),
        Some(id.to_string().as_str())
    );
    assert!(d.audit_seq.is_some());
    // Retrying before approval joins the same pending approval.
    assert_eq!(approval_id(&g.check(&call).unwrap()), id);
    let out = toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
    let d = g.check(&call).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
    assert!(d.reason.contains("alice"), "{}", d.reason);
    // Used once: the next retry asks again, with a new id.
    let again = g.check(&call).unwrap();
    assert_ne!(approval_id(&again), id);
    let view = toolgate_gate::show(&*s, &*clock, &id).unwrap();
    assert_eq!(view.approval.state, ApprovalState::Consumed);
}

#[test]
fn two_concurrent_retries_one_runs_1000_times() {
    let dir = TempDir::new("race");
    let clock = Arc::new(ManualClock::new(T0));
    // Each racer has its own connection, as two processes would.
    // Each iteration leaves the losing racer's new approval open: room for
    // them all (the fair-share caps are tested on their own).
    let roomy =
        "[approvals]\nmax_open_per_session = 5000\nmax_open_per_agent = 5000\nmax_open = 5000\n";
    let g1 = Arc::new(gate(store(&dir.0), roomy, clock.clone()));
    let g2 = Arc::new(gate(store(&dir.0), roomy, clock.clone()));
    let operator = store(&dir.0);
    for i in 0..1000 {
        let call = exec(&format!("kubectl apply -f x{i}.yaml"));
        let id = approval_id(&g1.check(&call).unwrap());
        toolgate_gate::vote(&*operator, &*clock, &id, person("alice", true)).unwrap();
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = [g1.clone(), g2.clone()]
            .into_iter()
            .map(|g| {
                let (call, barrier) = (call.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    g.check(&call).unwrap().decision
                })
            })
            .collect();
        let results: Vec<Verdict> = racers.into_iter().map(|t| t.join().unwrap()).collect();
        let allowed = results.iter().filter(|v| **v == Verdict::Allow).count();
        assert_eq!(allowed, 1, "iteration {i}: {results:?}");
        assert!(
            results.contains(&Verdict::Escalate),
            "iteration {i}: {results:?}"
        );
    }
}

#[test]
fn an_approval_unlocks_only_the_exact_params_in_any_key_order() {
    let dir = TempDir::new("exact");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let send = |body: serde_json::Value| -> ToolCall {
        serde_json::from_value(json!({
            "tool": "message",
            "params": body,
            "session": "s1",
        }))
        .unwrap()
    };
    let original = send(
        json!({"action": "send", "channel": "telegram", "target": "boss",
        "message": {"text": "hi", "attachments": [{"name": "a.txt", "size": 1}]}}),
    );
    let id = approval_id(&g.check(&original).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    // A changed nested value is a different call.
    let changed = send(
        json!({"action": "send", "channel": "telegram", "target": "boss",
        "message": {"text": "hi", "attachments": [{"name": "a.txt", "size": 2}]}}),
    );
    assert_eq!(g.check(&changed).unwrap().decision, Verdict::Escalate);
    // The same call with its keys in another order is the approved call.
    let reordered = send(
        json!({"message": {"attachments": [{"size": 1, "name": "a.txt"}], "text": "hi"},
        "target": "boss", "channel": "telegram", "action": "send"}),
    );
    let d = g.check(&reordered).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
}

#[test]
fn expired_approvals_fail() {
    let dir = TempDir::new("expiry");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let call = exec(APPLY);
    // Pending past its TTL (5 minutes): votes are refused.
    let id = approval_id(&g.check(&call).unwrap());
    clock.advance(5 * 60 * 1000);
    let e = toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap_err();
    assert!(matches!(e, StoreError::Refused(_)), "{e}");
    assert!(e.to_string().contains("expired"), "{e}");
    // Approved but not used within the window (10 min): the retry asks again.
    let id2 = approval_id(&g.check(&call).unwrap());
    assert_ne!(id2, id);
    toolgate_gate::vote(&*s, &*clock, &id2, person("alice", true)).unwrap();
    clock.advance(10 * 60 * 1000);
    let d = g.check(&call).unwrap();
    assert_eq!(d.decision, Verdict::Escalate);
    assert_ne!(approval_id(&d), id2);
    let state = |id| {
        toolgate_gate::show(&*s, &*clock, &id)
            .unwrap()
            .approval
            .state
    };
    assert_eq!(state(id), ApprovalState::Expired);
    assert_eq!(state(id2), ApprovalState::Expired);
    // Just inside the window it works.
    let id3 = approval_id(&g.check(&call).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id3, person("alice", true)).unwrap();
    clock.advance(29_999);
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Allow);
}

#[test]
fn the_requester_cannot_approve_their_own_call() {
    let dir = TempDir::new("self");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let call = exec(APPLY); // requester u1
    let id = approval_id(&g.check(&call).unwrap());
    let e = toolgate_gate::vote(&*s, &*clock, &id, person("u1", true)).unwrap_err();
    assert!(e.to_string().contains("separation of duties"), "{e}");
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Escalate);
    // The refusal is on the record.
    let mut refused = 0;
    toolgate_gate::export(&*s, 1, &mut |e| {
        if e.entry["kind"] == "approval.vote" && e.entry["data"].get("refused").is_some() {
            refused += 1;
        }
        true
    })
    .unwrap();
    assert_eq!(refused, 1);
    // One vote per identity.
    named(&s, &["alice"]);
    let policy = "[approvals]\nquorum = { R3 = 2 }\n";
    let g = gate(s.clone(), policy, clock.clone());
    let call = exec("kubectl apply -f other.yaml");
    let id = approval_id(&g.check(&call).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    let e = toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap_err();
    assert!(e.to_string().contains("already voted"), "{e}");
}

#[test]
fn r4_needs_two_approvers_including_a_person() {
    let dir = TempDir::new("r4");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    named(&s, &["alice", "bob"]);
    let call = exec("dropdb prod");
    let d = g.check(&call).unwrap();
    assert_eq!(d.risk, RiskClass::R4, "{d:?}");
    assert_eq!(d.approval.as_ref().unwrap().min_approvals, 2);
    let id = approval_id(&d);
    let out = toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
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
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Escalate);
    let out = toolgate_gate::vote(&*s, &*clock, &id, person("bob", true)).unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Allow);
}

#[test]
fn too_few_approvers_fail_closed() {
    let dir = TempDir::new("insufficient");
    let clock = Arc::new(ManualClock::new(T0));
    let policy = "[approvals]\noperators = [\"alice\"]\n";
    let g = gate(store(&dir.0), policy, clock.clone());
    let d = g.check(&exec("dropdb prod")).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Block, Layer::Approval),
        "{d:?}"
    );
    assert!(d.reason.contains("insufficient-factors"), "{}", d.reason);
    assert!(d.block_reason.unwrap().starts_with("TOOLGATE_BLOCK|"));
    // R3 still works with one named operator, and only that operator.
    let s = store(&dir.0);
    let id = approval_id(&g.check(&exec(APPLY)).unwrap());
    let e = toolgate_gate::vote(&*s, &*clock, &id, person("mallory", true)).unwrap_err();
    assert!(e.to_string().contains("not one of the operators"), "{e}");
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
}

#[test]
fn a_denial_blocks_retries_until_the_ttl_passes() {
    let dir = TempDir::new("deny");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let call = exec(APPLY);
    let id = approval_id(&g.check(&call).unwrap());
    let mut no = person("u1", false); // the requester may withdraw
    no.reason = Some("not today".into());
    assert_eq!(
        toolgate_gate::vote(&*s, &*clock, &id, no).unwrap(),
        VoteOutcome::Denied
    );
    let d = g.check(&call).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert!(d.reason.contains("not today"), "{}", d.reason);
    clock.advance(5 * 60 * 1000);
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Escalate);
}

#[test]
fn rules_based_approver_approves_what_its_rules_cover() {
    let dir = TempDir::new("rules");
    let clock = Arc::new(ManualClock::new(T0));
    let policy = r#"
[approvals]
require_user = []
[[approvals.rule]]
name = "owners may apply staging manifests"
approve = ["exec(kubectl apply -f staging.yaml)", "exec(kubectl apply -f staging-2.yaml)"]
requester_roles = ["owner"]
"#;
    let g = gate(store(&dir.0), policy, clock.clone());
    let d = g.check(&exec("kubectl apply -f staging.yaml")).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
    assert!(d.reason.contains("rules_based"), "{}", d.reason);
    // Not covered: the rules abstain, a person must decide.
    assert_eq!(g.check(&exec(APPLY)).unwrap().decision, Verdict::Escalate);
    // A compound command needs every part covered.
    let d = g
        .check(&exec(
            "kubectl apply -f staging.yaml && kubectl apply -f prod.yaml",
        ))
        .unwrap();
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
    // Another role: abstain.
    let mut guest = exec("kubectl apply -f staging-2.yaml");
    guest.requester.as_mut().unwrap().role = Some("guest".into());
    assert_eq!(g.check(&guest).unwrap().decision, Verdict::Escalate);
    // With the default require_user (R3 needs a person), rules alone are not enough.
    let g = gate(
        store(&dir.0),
        &policy.replace("require_user = []", ""),
        clock,
    );
    assert_eq!(
        g.check(&exec("kubectl apply -f staging-2.yaml"))
            .unwrap()
            .decision,
        Verdict::Escalate
    );
}

#[test]
fn a_changed_ttl_makes_earlier_votes_stale() {
    let dir = TempDir::new("stale");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let two = "[approvals]\nquorum = { R3 = 2 }\n";
    named(&s, &["alice", "bob"]);
    let g = gate(s.clone(), two, clock.clone());
    let call = exec(APPLY);
    let id = approval_id(&g.check(&call).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    // The policy changes the TTL; the retry re-judges the same approval.
    let g = gate(
        s.clone(),
        "[approvals]\nquorum = { R3 = 2 }\npending_ttl = \"10m\"\n",
        clock.clone(),
    );
    assert_eq!(approval_id(&g.check(&call).unwrap()), id);
    let out = toolgate_gate::vote(&*s, &*clock, &id, person("bob", true)).unwrap();
    assert!(
        matches!(
            out,
            VoteOutcome::Recorded {
                have: 1,
                need: 2,
                ..
            }
        ),
        "alice's vote is stale: {out:?}"
    );
    // Alice may vote again on the current terms.
    let out = toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert!(matches!(out, VoteOutcome::Approved { .. }), "{out:?}");
    let view = toolgate_gate::show(&*s, &*clock, &id).unwrap();
    assert!(view.votes.iter().all(|v| v.current));
}

fn relay_call(id: &str, session: &str) -> ToolCall {
    serde_json::from_value(json!({"tool": "toolgate_approve", "params": {"id": id, "reason": "user said yes"}, "session": session})).unwrap()
}

#[test]
fn relayed_approval_is_opt_in_same_session_and_never_r4() {
    let dir = TempDir::new("relay");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let call = exec(APPLY);
    // Off by default.
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let id = approval_id(&g.check(&call).unwrap()).to_string();
    let d = g.check(&relay_call(&id, "agent:main:main")).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert!(d.reason.contains("relay"), "{}", d.reason);
    // Opted in: the agent relays, then retries.
    let g = gate(s.clone(), "[approvals]\nrelay = true\n", clock.clone());
    let call2 = exec("kubectl apply -f release.yaml");
    let id = approval_id(&g.check(&call2).unwrap()).to_string();
    let d = g.check(&relay_call(&id, "another-session")).unwrap();
    assert_eq!(
        d.decision,
        Verdict::Block,
        "another session cannot relay: {d:?}"
    );
    let d = g.check(&relay_call(&id, "agent:main:main")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    let d = g.check(&call2).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
    let view = toolgate_gate::show(
        &*s,
        &*clock,
        &toolgate_core::ApprovalId::parse(&id).unwrap(),
    )
    .unwrap();
    assert!(
        view.votes.iter().any(|v| v.vote.relayed),
        "recorded as relayed"
    );
    // Never for R4.
    let id = approval_id(&g.check(&exec("dropdb prod")).unwrap()).to_string();
    let d = g.check(&relay_call(&id, "agent:main:main")).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert!(d.reason.contains("R4"), "{}", d.reason);
    // Junk ids are refused clearly.
    let d = g.check(&relay_call("nonsense", "agent:main:main")).unwrap();
    assert_eq!(d.decision, Verdict::Block);
}

#[test]
fn acknowledgements_hold_until_they_expire() {
    let dir = TempDir::new("ack");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    toolgate_gate::acknowledge(
        &*s,
        &*clock,
        "sop:deploy",
        "session:s1",
        "alice",
        Some("read it"),
        60_000,
    )
    .unwrap();
    assert!(
        toolgate_gate::acknowledged(&*s, &*clock, "sop:deploy", "session:s1")
            .unwrap()
            .is_some()
    );
    assert!(
        toolgate_gate::acknowledged(&*s, &*clock, "sop:deploy", "session:s2")
            .unwrap()
            .is_none()
    );
    clock.advance(60_000);
    assert!(
        toolgate_gate::acknowledged(&*s, &*clock, "sop:deploy", "session:s1")
            .unwrap()
            .is_none()
    );
    toolgate_gate::verify(&*s).unwrap();
}

#[test]
fn state_survives_reopening() {
    let dir = TempDir::new("reopen");
    let clock = Arc::new(ManualClock::new(T0));
    let id = {
        let g = gate(store(&dir.0), DEFAULT, clock.clone());
        approval_id(&g.check(&exec(APPLY)).unwrap())
    };
    let s = store(&dir.0);
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    let g = gate(s.clone(), DEFAULT, clock);
    assert_eq!(g.check(&exec(APPLY)).unwrap().decision, Verdict::Allow);
    assert!(toolgate_gate::verify(&*s).unwrap().entries >= 5);
}

#[test]
fn an_operator_can_take_an_approval_back_before_it_is_used() {
    let dir = TempDir::new("revoke");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let call = exec(APPLY);
    let id = approval_id(&g.check(&call).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    let out = toolgate_gate::vote(&*s, &*clock, &id, person("bob", false)).unwrap();
    assert_eq!(out, VoteOutcome::Denied);
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Block);
}

#[test]
fn an_agent_cannot_stack_relayed_votes_under_invented_sessions() {
    let dir = TempDir::new("relay-stack");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(
        s.clone(),
        "[approvals]\nrelay = true\nquorum = { R3 = 2 }\n",
        clock.clone(),
    );
    let call = exec(APPLY);
    let id = approval_id(&g.check(&call).unwrap()).to_string();
    assert_eq!(
        g.check(&relay_call(&id, "agent:main:main"))
            .unwrap()
            .decision,
        Verdict::Allow
    );
    // Another relay, whatever session it claims, does not add a vote.
    for session in ["agent:main:main", "a", "b"] {
        let d = g.check(&relay_call(&id, session)).unwrap();
        assert_eq!(d.decision, Verdict::Block, "{session}: {d:?}");
    }
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Escalate);
    // A call without a session cannot be relayed at all.
    let mut nosession = exec("kubectl apply -f nosession.yaml");
    nosession.session = None;
    let id = approval_id(&g.check(&nosession).unwrap()).to_string();
    assert_eq!(
        g.check(&relay_call(&id, "x")).unwrap().decision,
        Verdict::Block
    );
    // With named operators, relay is refused.
    let g = gate(
        s.clone(),
        "[approvals]\nrelay = true\noperators = [\"alice\"]\n",
        clock.clone(),
    );
    let id = approval_id(&g.check(&exec("kubectl apply -f ops.yaml")).unwrap()).to_string();
    let d = g.check(&relay_call(&id, "agent:main:main")).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert!(d.reason.contains("operators"), "{}", d.reason);
}

#[test]
fn a_relay_and_its_answer_share_one_trace() {
    let dir = TempDir::new("relay-trace");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), "[approvals]\nrelay = true\n", clock.clone());
    let id = approval_id(&g.check(&exec(APPLY)).unwrap()).to_string();
    let d = g.check(&relay_call(&id, "agent:main:main")).unwrap();
    let mut entries = Vec::new();
    toolgate_gate::export(&*s, 1, &mut |e| {
        entries.push(e);
        true
    })
    .unwrap();
    let answer = entries
        .iter()
        .find(|e| e.entry["seq"] == json!(d.audit_seq.unwrap()))
        .unwrap();
    let vote = entries
        .iter()
        .find(|e| e.entry["kind"] == "approval.vote")
        .unwrap();
    assert_eq!(answer.entry["trace"], vote.entry["trace"]);
    assert_eq!(vote.entry["data"]["relayed"], json!(true));
}

#[test]
fn approvals_tell_apart_integers_beyond_double_precision() {
    let dir = TempDir::new("bigint");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let send = |target: u64| -> ToolCall {
        serde_json::from_value(json!({"tool": "message", "params": {"action": "send", "target": target, "message": "hi"}, "session": "s"})).unwrap()
    };
    let id = approval_id(&g.check(&send(9_007_199_254_740_993)).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert_eq!(
        g.check(&send(9_007_199_254_740_992)).unwrap().decision,
        Verdict::Escalate
    );
    assert_eq!(
        g.check(&send(9_007_199_254_740_993)).unwrap().decision,
        Verdict::Allow
    );
    // The audit log keeps the exact digits.
    let mut exact = false;
    toolgate_gate::export(&*s, 1, &mut |e| {
        exact |= e.entry["data"]["call"]["params"]["target"] == json!("9007199254740993");
        true
    })
    .unwrap();
    assert!(exact);
}

#[test]
fn listing_expires_what_is_due_and_only_that() {
    let dir = TempDir::new("list");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let old = approval_id(&g.check(&exec("kubectl apply -f old.yaml")).unwrap());
    clock.advance(4 * 60 * 1000);
    let new = approval_id(&g.check(&exec("kubectl apply -f new.yaml")).unwrap());
    clock.advance(60 * 1000);
    let open = toolgate_gate::list(&*s, &*clock, false, 100).unwrap();
    assert_eq!(
        open.iter().map(|v| v.approval.id).collect::<Vec<_>>(),
        vec![new]
    );
    let all = toolgate_gate::list(&*s, &*clock, true, 100).unwrap();
    let old_view = all.iter().find(|v| v.approval.id == old).unwrap();
    assert_eq!(old_view.approval.state, ApprovalState::Expired);
    toolgate_gate::verify(&*s).unwrap();
}

#[test]
fn after_a_policy_change_the_rejudged_approval_can_still_be_used() {
    let dir = TempDir::new("rejudge");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let call = exec(APPLY);
    let first = gate(s.clone(), "[approvals]\nrelay = true\n", clock.clone());
    let id = approval_id(&first.check(&call).unwrap());
    // The policy changes: the retry re-judges the same approval once…
    let g = gate(s.clone(), DEFAULT, clock.clone());
    assert_eq!(approval_id(&g.check(&call).unwrap()), id);
    assert_eq!(approval_id(&g.check(&call).unwrap()), id);
    let before = toolgate_gate::show(&*s, &*clock, &id)
        .unwrap()
        .approval
        .generation;
    assert_eq!(approval_id(&g.check(&call).unwrap()), id);
    assert_eq!(
        toolgate_gate::show(&*s, &*clock, &id)
            .unwrap()
            .approval
            .generation,
        before,
        "same terms, no new generation"
    );
    // …and an approval given now is used by the next retry.
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert_eq!(g.check(&call).unwrap().decision, Verdict::Allow);
}

#[test]
fn a_call_naming_no_directory_is_bound_to_the_directory_it_was_judged_in() {
    let dir = TempDir::new("cwdless");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let in_dir = |cwd: &str| {
        toolgate_gate::Gate::new(
            engine(DEFAULT),
            s.clone(),
            clock.clone(),
            toolgate_core::paths::Env::new("/home/dev", cwd),
        )
    };
    let mut call = exec(APPLY);
    call.cwd = None;
    let here = in_dir("/srv/staging");
    let id = approval_id(&here.check(&call).unwrap());
    toolgate_gate::vote(&*s, &*clock, &id, person("alice", true)).unwrap();
    assert_eq!(
        in_dir("/srv/prod").check(&call).unwrap().decision,
        Verdict::Escalate
    );
    assert_eq!(here.check(&call).unwrap().decision, Verdict::Allow);
}

#[test]
fn numbers_too_large_to_bind_exactly_block_instead_of_escalating() {
    let dir = TempDir::new("hugenum");
    let clock = Arc::new(ManualClock::new(T0));
    let g = gate(store(&dir.0), DEFAULT, clock);
    let call: ToolCall = serde_json::from_str(
        r#"{"tool":"message","params":{"action":"send","target":18446744073709551616,"message":"hi"},"session":"s"}"#,
    )
    .unwrap();
    let d = g.check(&call).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Block, Layer::Approval),
        "{d:?}"
    );
    assert!(d.reason.contains("as strings"), "{}", d.reason);
}

/// A stand-in for a model evaluator: approves or denies by the command's
/// first word, so the llm_evaluation seam is exercised deterministically.
struct Evaluator;

impl toolgate_core::Approver for Evaluator {
    fn kind(&self) -> toolgate_core::ApproverKind {
        toolgate_core::ApproverKind::LlmEvaluation
    }
    fn identity(&self) -> String {
        "llm:test".to_string()
    }
    fn evaluate(
        &self,
        _: &toolgate_core::Engine,
        call: &ToolCall,
        _: &toolgate_core::paths::Env,
        _: RiskClass,
        _: &toolgate_core::shell::Analyses,
    ) -> toolgate_core::FactorVote {
        use toolgate_core::FactorVote;
        match call.params.get("command").and_then(|c| c.as_str()) {
            Some(c) if c.starts_with("kubectl apply -f staging") => {
                FactorVote::Approve("staging".into())
            }
            Some(c) if c.starts_with("kubectl apply -f prod") => {
                FactorVote::Deny("production".into())
            }
            _ => FactorVote::Abstain,
        }
    }
}

#[test]
fn a_configured_model_evaluator_votes_when_the_policy_allows_it() {
    let dir = TempDir::new("llm");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let policy = "[approvals]\nallowed_approvers = [\"user_request\", \"llm_evaluation\"]\nrequire_user = []\n";
    let g = gate(s.clone(), policy, clock.clone()).with_llm_approver(Arc::new(Evaluator));
    let d = g.check(&exec("kubectl apply -f staging.yaml")).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
    assert!(d.reason.contains("llm:test"), "{}", d.reason);
    let d = g.check(&exec("kubectl apply -f prod.yaml")).unwrap();
    assert_eq!(
        d.decision,
        Verdict::Block,
        "a model denial settles it: {d:?}"
    );
    assert_eq!(
        g.check(&exec("kubectl apply -f other.yaml"))
            .unwrap()
            .decision,
        Verdict::Escalate
    );
    // Not allowed by the policy: the evaluator is not asked.
    let g = gate(s.clone(), "[approvals]\nrequire_user = []\n", clock)
        .with_llm_approver(Arc::new(Evaluator));
    assert_eq!(
        g.check(&exec("kubectl apply -f staging-2.yaml"))
            .unwrap()
            .decision,
        Verdict::Escalate
    );
}

#[test]
fn open_approvals_are_capped_and_the_cap_frees_up() {
    let dir = TempDir::new("cap");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), "[approvals]\nmax_open = 2\n", clock.clone());
    let a = approval_id(&g.check(&exec("kubectl apply -f a.yaml")).unwrap());
    approval_id(&g.check(&exec("kubectl apply -f b.yaml")).unwrap());
    // Joining an open approval is not a new one.
    assert_eq!(
        approval_id(&g.check(&exec("kubectl apply -f a.yaml")).unwrap()),
        a
    );
    let third = g.check(&exec("kubectl apply -f c.yaml")).unwrap();
    assert_eq!(third.decision, Verdict::Block, "{third:?}");
    assert!(third.reason.contains("max_open = 2"), "{}", third.reason);
    toolgate_gate::vote(&*s, &*clock, &a, person("alice", false)).unwrap();
    let again = g.check(&exec("kubectl apply -f c.yaml")).unwrap();
    assert_eq!(again.decision, Verdict::Escalate, "{again:?}");
}

#[test]
fn a_waiter_follows_its_approval_to_an_answer_or_gives_up_on_expiry() {
    use std::time::Duration;
    use toolgate_gate::{GiveUp, Look, Next, Waiter};
    let dir = TempDir::new("waiter");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), DEFAULT, clock.clone());
    let call = exec(APPLY);
    let d = g.check(&call).unwrap();
    let id = approval_id(&d);
    let mut w = Waiter::new(d, Duration::from_secs(30)).unwrap();
    let read = || s.read_approval(&id).unwrap();
    assert_eq!(w.look(read().as_ref(), now(&*clock)), Look::Wait);
    // Past its expiry a pending approval is gone, marked expired or not.
    let expires = read().unwrap().expires_ms;
    assert_eq!(
        w.look(read().as_ref(), expires),
        Look::Gone(GiveUp::Expired)
    );
    assert_eq!(w.look(None, T0), Look::Gone(GiveUp::Removed));
    // Approved: re-check, which uses the approval and answers allow.
    toolgate_gate::vote(&*s, &*clock, &id, person("op", true)).unwrap();
    assert_eq!(w.look(read().as_ref(), now(&*clock)), Look::Recheck);
    match w.rechecked(g.check(&call).unwrap()) {
        Next::Answer(d) => assert_eq!(d.decision, Verdict::Allow),
        other => panic!("{other:?}"),
    }
    // A waiter whose approval another retry used waits on the next one.
    let d2 = g.check(&call).unwrap();
    let id2 = approval_id(&d2);
    assert_ne!(id2, id);
    let mut w2 = Waiter::new(d2.clone(), Duration::from_secs(30)).unwrap();
    assert_eq!(
        w2.rechecked(d2),
        Next::Wait {
            pause: toolgate_gate::RECHECK_EVERY
        }
    );
    let (label, block) = w2.give_up(GiveUp::Timeout);
    let recorded = g
        .record_wait_end(&call, &id2, label, 30_000, block)
        .unwrap();
    assert_eq!(recorded.decision, Verdict::Block);
    assert!(recorded.audit_seq.is_some());
    assert_eq!(recorded.approval.unwrap().id, id2.to_string());
}

/// A rules approver that approves the staging apply.
const STAGING_RULE: &str = r#"
[[approvals.rule]]
name = "staging"
approve = ["exec(kubectl apply -f staging.yaml)"]
"#;

#[test]
fn automated_approvers_vote_after_the_escalation_is_committed() {
    let dir = TempDir::new("factors-after");
    let clock = Arc::new(ManualClock::new(T0));
    let policy = format!("[approvals]\nrequire_user = []\n{STAGING_RULE}");
    let s = store(&dir.0);
    let g = gate(s.clone(), &policy, clock);
    let d = g.check(&exec("kubectl apply -f staging.yaml")).unwrap();
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
    let mut rows: Vec<serde_json::Value> = Vec::new();
    s.scan_audit(0, &mut |r| {
        rows.push(serde_json::from_str(&r.entry).unwrap());
        true
    })
    .unwrap();
    let kinds: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r["kind"] != "verdict")
        .map(|r| (r["kind"].as_str().unwrap(), r["trace"].as_str().unwrap()))
        .collect();
    let names: Vec<&str> = kinds.iter().map(|k| k.0).collect();
    assert_eq!(
        names,
        [
            "approval.created",
            "decision",
            "approval.vote",
            "approval.approved",
            "approval.consumed",
            "decision"
        ],
        "{rows:#?}"
    );
    // The escalation, the rules' vote and the retry are three transactions.
    assert_ne!(kinds[1].1, kinds[2].1);
    assert_ne!(kinds[3].1, kinds[4].1);
    let vote = &rows.iter().find(|r| r["kind"] == "approval.vote").unwrap()["data"];
    assert_eq!(vote["identity"], "rules_based");
    assert_eq!(vote["channel"], "policy");
}

#[test]
fn a_factor_that_voted_is_not_recorded_again_on_every_retry() {
    let dir = TempDir::new("factors-once");
    let clock = Arc::new(ManualClock::new(T0));
    // The rules approve, but R3 still needs a person: the approval stays
    // pending while the agent retries.
    let s = store(&dir.0);
    let g = gate(s.clone(), STAGING_RULE, clock);
    for _ in 0..3 {
        let d = g.check(&exec("kubectl apply -f staging.yaml")).unwrap();
        assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
    }
    let mut votes = 0;
    s.scan_audit(0, &mut |r| {
        votes += usize::from(r.entry.contains("\"kind\":\"approval.vote\""));
        true
    })
    .unwrap();
    assert_eq!(votes, 1, "one vote by the rules, no refused repeats");
}
