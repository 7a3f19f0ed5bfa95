//! Writers on two handles (as two daemons on one database): consuming an
//! approval is exclusive, and audit appends get one global order.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use toolgate_core::{ApprovalState, AuditEvent, AuditKind};
use toolgate_gate::verify;
use toolgate_store::Store;
use toolgate_store_postgres::PostgresStore;

#[test]
fn two_handles_200_threads_one_consume_wins() {
    let Some(db) = db("two_handles_200_threads_one_consume_wins") else {
        return;
    };
    let handles: Vec<Arc<PostgresStore>> = (0..2).map(|_| Arc::new(db.store())).collect();
    let now = T0 + 1_000;
    {
        let mut tx = handles[0].begin().unwrap();
        tx.put_approval(&approved(approval(id(1), binding(1), T0), T0 + 500))
            .unwrap();
        tx.commit().unwrap();
    }
    let wins = Arc::new(AtomicUsize::new(0));
    let saw_approved = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(std::sync::Barrier::new(200));
    let threads: Vec<_> = (0..200)
        .map(|i| {
            let store = handles[i % 2].clone();
            let wins = wins.clone();
            let saw_approved = saw_approved.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let mut tx = store.begin().unwrap();
                let mut a = tx.approval(&id(1)).unwrap().unwrap();
                if a.state == ApprovalState::Approved {
                    saw_approved.fetch_add(1, Ordering::SeqCst);
                }
                if a.consume(now) {
                    tx.put_approval(&a).unwrap();
                    tx.commit().unwrap();
                    wins.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(wins.load(Ordering::SeqCst), 1, "exactly one retry runs");
    // Every other writer read the approval after the winner's commit.
    assert_eq!(saw_approved.load(Ordering::SeqCst), 1);
    let a = handles[1].read_approval(&id(1)).unwrap().unwrap();
    assert_eq!(a.state, ApprovalState::Consumed);
    assert_eq!(a.resolved_ms, Some(now));
}

#[test]
fn eight_threads_append_400_entries_through_two_handles_in_one_chain() {
    let Some(db) = db("eight_threads_append_400_entries_through_two_handles_in_one_chain") else {
        return;
    };
    let handles: Vec<Arc<PostgresStore>> = (0..2).map(|_| Arc::new(db.store())).collect();
    let started = Instant::now();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = handles[t % 2].clone();
            std::thread::spawn(move || {
                let mut seqs = Vec::new();
                for i in 0..50 {
                    let mut tx = store.begin().unwrap();
                    let seq = tx
                        .append(&AuditEvent {
                            ts_ms: T0 + i,
                            trace: format!("thread-{t}"),
                            kind: AuditKind::AckCreated,
                            data: json!({"thread": t, "i": i}),
                        })
                        .unwrap();
                    tx.commit().unwrap();
                    seqs.push(seq);
                }
                seqs
            })
        })
        .collect();
    let mut returned: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let elapsed = started.elapsed();
    eprintln!(
        "400 appends (one per transaction) through two handles, 8 threads: {:.0} ms, {:.0} per second",
        elapsed.as_secs_f64() * 1e3,
        400.0 / elapsed.as_secs_f64()
    );
    returned.sort();
    assert_eq!(
        returned,
        (1..=400).collect::<Vec<u64>>(),
        "each seq handed out once"
    );
    let v = verify(&*handles[0]).unwrap();
    assert_eq!((v.entries, v.head_seq), (400, 400));
    let mut stored = Vec::new();
    handles[1]
        .scan_audit(1, &mut |r| {
            stored.push(r.seq);
            true
        })
        .unwrap();
    assert_eq!(stored, (1..=400).collect::<Vec<u64>>());
    // Each thread's entries are in its own order along the chain.
    let mut last = [None::<i64>; 8];
    handles[0]
        .scan_audit(1, &mut |r| {
            let e: serde_json::Value = serde_json::from_str(&r.entry).unwrap();
            let t = e["data"]["thread"].as_u64().unwrap() as usize;
            let i = e["data"]["i"].as_i64().unwrap();
            assert!(last[t] < Some(i), "thread {t}: {i} after {:?}", last[t]);
            last[t] = Some(i);
            true
        })
        .unwrap();
    assert!(last.iter().all(|l| *l == Some(49)));
}
