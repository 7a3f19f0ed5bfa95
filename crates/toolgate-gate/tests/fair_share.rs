//! A fair share of approvals, on every backend: one session (or agent)
//! cannot hold more than its cap of open approvals, so it cannot exhaust
//! `max_open` or flood the people asked; identical calls fold into one
//! approval; everyone else's escalations keep working.

mod common;

use common::*;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;
use toolgate_core::{ApprovalState, Decision, ToolCall, Verdict};
use toolgate_gate::{ADMIN, ApprovalView, ManualClock};

fn call(cmd: &str, session: &str, agent: &str) -> ToolCall {
    serde_json::from_value(serde_json::json!({
        "tool": "exec",
        "params": {"command": cmd},
        "session": session,
        "agent": agent,
        "cwd": "/home/dev/proj",
    }))
    .unwrap()
}

fn created(s: &Arc<dyn toolgate_store::Store>) -> usize {
    let mut n = 0;
    toolgate_gate::export(&**s, 1, &mut |e| {
        n += usize::from(e.entry["kind"] == "approval.created");
        true
    })
    .unwrap();
    n
}

/// The flood: 1,005 distinct escalations from one session, as fast
/// as a daemon's group commit takes them.
#[test]
fn a_flood_from_one_session_gets_its_share_and_no_more() {
    let dir = TempDir::new("fair-flood");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(s.clone(), "", clock.clone());
    let flood: Vec<ToolCall> = (0..1005)
        .map(|i| call(&format!("kubectl apply -f f{i}.yaml"), "flood", "main"))
        .collect();
    let mut decisions: Vec<Decision> = Vec::new();
    for batch in flood.chunks(67) {
        decisions.extend(g.check_batch(batch).unwrap());
    }
    let escalated: BTreeSet<String> = decisions
        .iter()
        .filter(|d| d.decision == Verdict::Escalate)
        .map(|d| d.approval.as_ref().unwrap().id.clone())
        .collect();
    assert_eq!(escalated.len(), 20, "the default max_open_per_session");
    let blocked: Vec<&Decision> = decisions
        .iter()
        .filter(|d| d.decision == Verdict::Block)
        .collect();
    assert_eq!(blocked.len(), 985);
    for d in &blocked {
        assert!(
            d.reason
                .contains("session \"flood\" already has 20 approvals waiting")
                && d.reason.contains("max_open_per_session = 20")
                && d.reason.contains("toolgate approvals list"),
            "{}",
            d.reason
        );
        assert!(
            d.block_reason
                .as_deref()
                .unwrap()
                .starts_with("TOOLGATE_BLOCK|")
        );
    }
    // Twenty approvals, so twenty messages at most to the people asked.
    assert_eq!(created(&s), 20);
    // Another session of the same agent is not held up.
    let other = g
        .check(&call("kubectl apply -f mine.yaml", "other", "main"))
        .unwrap();
    assert_eq!(other.decision, Verdict::Escalate, "{other:?}");
    // An identical flood folds into one approval: no new approval, no new
    // message.
    let same = call("kubectl apply -f same.yaml", "third", "main");
    let ids: BTreeSet<String> = g
        .check_batch(&vec![same.clone(); 300])
        .unwrap()
        .iter()
        .map(|d| approval_id(d).to_string())
        .collect();
    assert_eq!(ids.len(), 1);
    for _ in 0..50 {
        approval_id(&g.check(&same).unwrap());
    }
    assert_eq!(created(&s), 22);
    // The flooding session's own retries of a waiting call still join it.
    let d = g.check(&flood[0]).unwrap();
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
    // Once its approvals expire, it gets its share again.
    clock.advance(5 * 60 * 1000);
    let d = g.check(&flood[1004]).unwrap();
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
}

#[test]
fn one_agent_across_many_sessions_is_capped_too() {
    let dir = TempDir::new("fair-agent");
    let clock = Arc::new(ManualClock::new(T0));
    let s = store(&dir.0);
    let g = gate(
        s.clone(),
        "[approvals]\nmax_open_per_agent = 10\n",
        clock.clone(),
    );
    let hopping: Vec<ToolCall> = (0..30)
        .map(|i| {
            call(
                &format!("kubectl apply -f h{i}.yaml"),
                &format!("s{i}"),
                "main",
            )
        })
        .collect();
    let d = g.check_batch(&hopping).unwrap();
    assert_eq!(
        d.iter().filter(|d| d.decision == Verdict::Escalate).count(),
        10
    );
    let last = d.last().unwrap();
    assert_eq!(last.decision, Verdict::Block);
    assert!(
        last.reason
            .contains("agent \"main\" already has 10 approvals waiting")
            && last.reason.contains("max_open_per_agent = 10"),
        "{}",
        last.reason
    );
    let other = g
        .check(&call("kubectl apply -f o.yaml", "s0", "other"))
        .unwrap();
    assert_eq!(other.decision, Verdict::Escalate, "{other:?}");
    // Calls that name no session or agent share one count of their own.
    let g = gate(
        s.clone(),
        "[approvals]\nmax_open_per_session = 2\n",
        clock.clone(),
    );
    let anonymous = |i: usize| -> ToolCall {
        serde_json::from_value(serde_json::json!({
            "tool": "exec", "params": {"command": format!("kubectl apply -f a{i}.yaml")},
        }))
        .unwrap()
    };
    approval_id(&g.check(&anonymous(0)).unwrap());
    approval_id(&g.check(&anonymous(1)).unwrap());
    let third = g.check(&anonymous(2)).unwrap();
    assert_eq!(third.decision, Verdict::Block, "{third:?}");
    assert!(
        third
            .reason
            .contains("calls naming no session already have 2"),
        "{}",
        third.reason
    );
}

/// What a sequence may do: ask, have the administrator approve one open
/// approval (which the asking session's retry then uses), or let time pass.
#[derive(Debug, Clone)]
enum Step {
    Check {
        session: usize,
        agent: usize,
        cmd: usize,
    },
    Approve(usize),
    Wait(i64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..3usize, 0..2usize, 0..14usize)
            .prop_map(|(session, agent, cmd)| Step::Check { session, agent, cmd }),
        1 => (0..8usize).prop_map(Step::Approve),
        1 => prop_oneof![Just(1_000i64), Just(400_000i64)].prop_map(Step::Wait),
    ]
}

const PER_SESSION: usize = 3;
const PER_AGENT: usize = 5;
const MAX_OPEN: usize = 8;

fn open(s: &Arc<dyn toolgate_store::Store>, clock: &ManualClock) -> Vec<ApprovalView> {
    toolgate_gate::list(&**s, clock, false, 1000).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// No sequence of escalations lets a session (or agent) hold more than
    /// its cap open; a session under its cap (its agent and everyone under
    /// theirs) always gets its approval, whatever the others did.
    #[test]
    fn no_sequence_exceeds_a_cap_or_holds_up_a_session_under_its_own(
        steps in prop::collection::vec(step(), 1..40)
    ) {
        let dir = TempDir::new("fair-prop");
        let clock = Arc::new(ManualClock::new(T0));
        let s = store(&dir.0);
        let policy = format!(
            "[approvals]\nmax_open_per_session = {PER_SESSION}\nmax_open_per_agent = {PER_AGENT}\nmax_open = {MAX_OPEN}\n"
        );
        let g = gate(s.clone(), &policy, clock.clone());
        for st in steps {
            match st {
                Step::Wait(ms) => clock.advance(ms),
                Step::Approve(k) => {
                    let pending: Vec<ApprovalView> = open(&s, &clock)
                        .into_iter()
                        .filter(|v| v.approval.state == ApprovalState::Pending)
                        .collect();
                    if let Some(v) = pending.get(k % pending.len().max(1)) {
                        toolgate_gate::vote(&*s, &*clock, &v.approval.id, person(ADMIN, true)).unwrap();
                    }
                }
                Step::Check { session, agent, cmd } => {
                    let (sess, ag) = (format!("s{session}"), format!("a{agent}"));
                    let command = format!("kubectl apply -f c{cmd}.yaml");
                    let before = open(&s, &clock);
                    // The same call: the binding covers the session and agent too.
                    let existing = before.iter().find(|v| {
                        v.approval.summary == command
                            && v.approval.session.as_deref() == Some(sess.as_str())
                            && v.approval.agent.as_deref() == Some(ag.as_str())
                    });
                    let count = |f: &dyn Fn(&ApprovalView) -> bool| before.iter().filter(|v| f(v)).count();
                    let of_session = count(&|v| v.approval.session.as_deref() == Some(sess.as_str()));
                    let of_agent = count(&|v| v.approval.agent.as_deref() == Some(ag.as_str()));
                    let d = g.check(&call(&command, &sess, &ag)).unwrap();
                    match existing {
                        Some(v) if v.approval.state == ApprovalState::Approved => {
                            prop_assert_eq!(d.decision, Verdict::Allow, "{:?}", d);
                        }
                        Some(v) => {
                            prop_assert_eq!(approval_id(&d), v.approval.id, "joins its approval");
                        }
                        None if of_session >= PER_SESSION => {
                            prop_assert_eq!(d.decision, Verdict::Block);
                            prop_assert!(d.reason.contains("max_open_per_session"), "{}", d.reason);
                        }
                        None if of_agent >= PER_AGENT => {
                            prop_assert_eq!(d.decision, Verdict::Block);
                            prop_assert!(d.reason.contains("max_open_per_agent"), "{}", d.reason);
                        }
                        None if before.len() >= MAX_OPEN => {
                            prop_assert_eq!(d.decision, Verdict::Block);
                            prop_assert!(d.reason.contains("max_open = "), "{}", d.reason);
                        }
                        None => {
                            prop_assert_eq!(d.decision, Verdict::Escalate, "under every cap: {:?}", d);
                            prop_assert!(before.iter().all(|v| v.approval.id != approval_id(&d)));
                        }
                    }
                }
            }
            let now = open(&s, &clock);
            prop_assert!(now.len() <= MAX_OPEN);
            for i in 0..3 {
                let sess = format!("s{i}");
                let n = now.iter().filter(|v| v.approval.session.as_deref() == Some(sess.as_str())).count();
                prop_assert!(n <= PER_SESSION, "{sess} holds {n}");
            }
            for i in 0..2 {
                let ag = format!("a{i}");
                let n = now.iter().filter(|v| v.approval.agent.as_deref() == Some(ag.as_str())).count();
                prop_assert!(n <= PER_AGENT, "{ag} holds {n}");
            }
        }
    }
}
