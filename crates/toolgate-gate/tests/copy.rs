//! Copying a whole store (`toolgate store migrate`): from an SQLite store
//! full of state into the backend under test, everything arrives, the audit
//! chain verifies with the same head, and what the copy refuses leaves the
//! target untouched.

mod common;

use common::*;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::ApprovalState;
use toolgate_core::knowledge::memory::{Category, Memory};
use toolgate_core::{Layer, Verdict};
use toolgate_gate::{
    ManualClock, acknowledge, add_memory, add_operator, copy_store, start_bypass, use_once, verify,
};
use toolgate_store::{DecisionFields, Shown, Store, StoreError};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

/// A call approved on the source whose retry comes after the move.
const APPROVED_UNUSED: &str = "kubectl apply -f d.yaml";

/// An SQLite store with some of everything a store keeps.
fn full_source(dir: &std::path::Path, clock: &Arc<ManualClock>) -> Arc<dyn Store> {
    let s: Arc<dyn Store> = Arc::new(SqliteStore::open(dir, SyncMode::Normal).unwrap());
    let g = gate(s.clone(), "", clock.clone());
    // One approved and used, one pending, one denied; allows and blocks.
    let used = approval_id(&g.check(&exec("kubectl apply -f a.yaml")).unwrap());
    toolgate_gate::vote(&*s, &**clock, &used, person("alice", true)).unwrap();
    g.check(&exec("kubectl apply -f a.yaml")).unwrap();
    approval_id(&g.check(&exec("kubectl apply -f b.yaml")).unwrap());
    // Approved, and its retry not made yet when the store moves.
    let waiting = approval_id(&g.check(&exec(APPROVED_UNUSED)).unwrap());
    toolgate_gate::vote(&*s, &**clock, &waiting, person("alice", true)).unwrap();
    let denied = approval_id(&g.check(&exec("kubectl apply -f c.yaml")).unwrap());
    toolgate_gate::vote(&*s, &**clock, &denied, person("bob", false)).unwrap();
    for i in 0..30 {
        g.check(&exec(&format!("ls dir{i}"))).unwrap();
    }
    g.check(&exec("rm -rf /")).unwrap();
    acknowledge(
        &*s,
        &**clock,
        "sop:deploy",
        "session:s1",
        "alice",
        None,
        3_600_000,
    )
    .unwrap();
    {
        let mut tx = s.begin().unwrap();
        tx.put_shown(&Shown {
            id: "shown-1".to_string(),
            binding: "b".repeat(64),
            scope: "session:s1".to_string(),
            shown_ms: T0,
            expires_ms: T0 + 60_000,
            keys: vec!["mem:1".to_string()],
        })
        .unwrap();
        tx.commit().unwrap();
    }
    for (i, text) in ["never force-push main", "staging db is shared"]
        .iter()
        .enumerate()
    {
        add_memory(
            &*s,
            &**clock,
            Memory {
                id: 0,
                text: text.to_string(),
                categories: vec![Category::Process],
                confidence: 0.5 + i as f64 / 10.0,
                source: Some("test".to_string()),
                created_ms: 0,
            },
            "tester",
        )
        .unwrap();
    }
    add_operator(
        &*s,
        &**clock,
        "carol",
        &["slack:U1".to_string()],
        "operator",
    )
    .unwrap();
    start_bypass(
        &*s,
        &**clock,
        &[Layer::Knowledge],
        Duration::from_secs(600),
        "incident 42: the SOP server is down",
        "operator",
    )
    .unwrap();
    assert!(use_once(&*s, &**clock, "link-nonce-1", T0 + 3_600_000).unwrap());
    s
}

fn approvals(s: &dyn Store) -> Vec<(String, ApprovalState, usize)> {
    let mut tx = s.begin().unwrap();
    tx.approvals(false, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|a| {
            let votes = tx.votes(&a.id).unwrap().len();
            (a.id.to_string(), a.state, votes)
        })
        .collect()
}

fn audit(s: &dyn Store) -> Vec<(u64, [u8; 32], String)> {
    let mut rows = Vec::new();
    s.scan_audit(1, &mut |r| {
        rows.push((r.seq, r.hash, r.entry));
        true
    })
    .unwrap();
    rows
}

#[test]
fn everything_arrives_and_the_chain_verifies_with_the_same_head() {
    let src_dir = TempDir::new("copy-src");
    let dst_dir = TempDir::new("copy-dst");
    let clock = Arc::new(ManualClock::new(T0));
    let from = full_source(&src_dir.0, &clock);
    let to = store(&dst_dir.0);
    let source_head = verify(&*from).unwrap();
    let source_audit = audit(&*from);
    let source_approvals = approvals(&*from);
    let mut reports = 0;
    let copied = copy_store(&*from, &*to, &*clock, &mut |_| reports += 1).unwrap();

    let target_head = verify(&*to).unwrap();
    assert_eq!(target_head, source_head);
    assert_eq!(copied.audit_entries, source_head.entries);
    assert_eq!(audit(&*to), source_audit, "entries copied verbatim");
    assert_eq!(approvals(&*to), source_approvals);
    assert_eq!((copied.approvals, copied.votes), (4, 3));
    // The source's open approvals (b pending, d approved) are closed there,
    // after the copied head, and its chain still verifies.
    assert_eq!((copied.retired, copied.retire_failed.clone()), (2, None));
    let after = verify(&*from).unwrap();
    assert_eq!(after.entries, source_head.entries + 2);
    assert!(
        approvals(&*from).iter().all(|(_, state, _)| !matches!(
            state,
            ApprovalState::Pending | ApprovalState::Approved
        ))
    );
    assert_eq!(
        to.list_memories(None, usize::MAX).unwrap(),
        from.list_memories(None, usize::MAX).unwrap(),
        "memories keep their ids"
    );
    assert_eq!(to.read_operators().unwrap(), from.read_operators().unwrap());
    assert_eq!(to.read_bypasses().unwrap(), from.read_bypasses().unwrap());
    {
        let mut tx = to.begin().unwrap();
        let ack = tx.ack("sop:deploy", "session:s1").unwrap().unwrap();
        assert_eq!(ack.by, "alice");
        assert_eq!(tx.shown("shown-1").unwrap().unwrap().keys, ["mem:1"]);
    }
    // A single-use key used on the source stays used on the target.
    assert!(!use_once(&*to, &*clock, "link-nonce-1", T0 + 3_600_000).unwrap());
    // The decisions index is filled on the target too.
    let q = DecisionFields {
        decision: Some("block".to_string()),
        ..DecisionFields::default()
    };
    let from_blocks = from.decisions(&q, u64::MAX, 100).unwrap();
    assert!(!from_blocks.is_empty());
    assert_eq!(to.decisions(&q, u64::MAX, 100).unwrap(), from_blocks);
    // The approval granted before the move runs its call once, on the
    // target only: a daemon left on the old store cannot use it too.
    let old = gate(from.clone(), "", clock.clone());
    let new = gate(to.clone(), "", clock.clone());
    let call = exec(APPROVED_UNUSED);
    assert_eq!(old.check(&call).unwrap().decision, Verdict::Escalate);
    assert_eq!(new.check(&call).unwrap().decision, Verdict::Allow);
    assert_eq!(new.check(&call).unwrap().decision, Verdict::Escalate);
    // A new memory on the target does not collide with a copied id.
    let new = add_memory(
        &*to,
        &*clock,
        Memory {
            id: 0,
            text: "a lesson learnt after the move".to_string(),
            categories: vec![],
            confidence: 0.9,
            source: None,
            created_ms: 0,
        },
        "tester",
    )
    .unwrap();
    assert_eq!(to.list_memories(None, usize::MAX).unwrap().len(), 3);
    assert!(
        from.list_memories(None, usize::MAX)
            .unwrap()
            .iter()
            .all(|m| m.id != new.id)
    );
    // The target goes on chaining where the source stopped.
    verify(&*to).unwrap();
    assert_eq!(reports, 0, "no progress report below 10,000 entries");
}

#[test]
fn a_target_that_holds_anything_is_refused_and_left_as_it_was() {
    let src_dir = TempDir::new("copy-src2");
    let dst_dir = TempDir::new("copy-dst2");
    let clock = Arc::new(ManualClock::new(T0));
    let from = full_source(&src_dir.0, &clock);
    let to = store(&dst_dir.0);
    copy_store(&*from, &*to, &*clock, &mut |_| {}).unwrap();
    let before = audit(&*to);
    let e = copy_store(&*from, &*to, &*clock, &mut |_| {}).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("already holds") && text.contains("empty store"),
        "{text}"
    );
    assert_eq!(audit(&*to), before);
}

#[test]
fn a_broken_source_chain_stops_the_copy_and_writes_nothing() {
    let src_dir = TempDir::new("copy-src3");
    let dst_dir = TempDir::new("copy-dst3");
    let clock = Arc::new(ManualClock::new(T0));
    let from = full_source(&src_dir.0, &clock);
    drop(from);
    let conn = rusqlite::Connection::open(src_dir.0.join("toolgate.db")).unwrap();
    conn.execute(
        "UPDATE audit SET entry = replace(entry, 'ls dir7', 'ls dir8') WHERE seq = \
         (SELECT min(seq) FROM audit WHERE entry LIKE '%ls dir7%')",
        [],
    )
    .unwrap();
    drop(conn);
    let from: Arc<dyn Store> = Arc::new(SqliteStore::open(&src_dir.0, SyncMode::Normal).unwrap());
    let to = store(&dst_dir.0);
    let e = copy_store(&*from, &*to, &*clock, &mut |_| {}).unwrap_err();
    assert!(matches!(e, StoreError::Chain(_)), "{e}");
    assert!(audit(&*to).is_empty());
    assert!(to.list_memories(None, 10).unwrap().is_empty());
    assert!(to.read_operators().unwrap().is_empty());
}
