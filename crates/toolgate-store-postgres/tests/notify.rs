//! Commits on one handle wake another handle's watcher (as one daemon hears
//! of another's votes), never its own, and never a store on another schema.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;
use toolgate_core::{AuditEvent, AuditKind};
use toolgate_store::Store;
use toolgate_store_postgres::PostgresStore;

/// A liveness bound, not a measurement: a notification that has not come
/// in this long is taken as never coming.
const PATIENCE: Duration = Duration::from_secs(20);

fn append_one(store: &PostgresStore, note: &str) {
    let mut tx = store.begin().unwrap();
    tx.append(&AuditEvent {
        ts_ms: T0,
        trace: note.to_string(),
        kind: AuditKind::AckCreated,
        data: json!({ "note": note }),
    })
    .unwrap();
    tx.commit().unwrap();
}

fn watch(store: &PostgresStore) -> Receiver<()> {
    let (tx, rx) = channel();
    let tx = std::sync::Mutex::new(tx);
    assert!(store.watch_commits(Arc::new(move || {
        let _ = tx.lock().unwrap().send(());
    })));
    rx
}

/// Commits on `from` until `rx` hears of one: the listener behind `rx` is
/// then known to be listening (it connects in the background).
fn until_heard(from: &PostgresStore, rx: &Receiver<()>) {
    for i in 0..100 {
        append_one(from, &format!("hello {i}"));
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(()) => return,
            Err(RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("{e}"),
        }
    }
    panic!("the watcher never heard of a commit");
}

fn drain(rx: &Receiver<()>) {
    while rx.try_recv().is_ok() {}
}

#[test]
fn a_commit_wakes_other_handles_on_its_schema_only() {
    let Some(db) = db("a_commit_wakes_other_handles_on_its_schema_only") else {
        return;
    };
    let Some(elsewhere) = common::db("a_commit_wakes_other_handles_on_its_schema_only") else {
        return;
    };
    let a = db.store();
    let b = db.store();
    let other_schema = elsewhere.store();
    let a_heard = watch(&a);
    let b_heard = watch(&b);
    until_heard(&b, &a_heard);
    until_heard(&a, &b_heard);
    drain(&a_heard);
    drain(&b_heard);

    // B's own commits and commits on another schema wake nobody here; A's
    // last commit wakes B. One connection delivers notifications in commit
    // order, so by the time B hears A, it has heard everything before.
    for i in 0..5 {
        append_one(&b, &format!("b {i}"));
        append_one(&other_schema, &format!("elsewhere {i}"));
    }
    append_one(&a, "a last");
    b_heard.recv_timeout(PATIENCE).expect("B hears A's commit");
    a_heard.recv_timeout(PATIENCE).expect("A hears B's commits");
    // Give any stray wake the time the last one took, then count.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        b_heard.try_recv().is_err(),
        "B was woken by its own commits or another schema's"
    );

    // A transaction that rolls back notifies no one.
    drain(&a_heard);
    {
        let mut tx = b.begin().unwrap();
        tx.append(&AuditEvent {
            ts_ms: T0,
            trace: "rolled back".to_string(),
            kind: AuditKind::AckCreated,
            data: json!({}),
        })
        .unwrap();
        drop(tx);
    }
    append_one(&other_schema, "marker");
    append_one(&b, "after the rollback");
    a_heard.recv_timeout(PATIENCE).expect("A hears the commit");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        a_heard.try_recv().is_err(),
        "the rolled-back transaction woke A"
    );
}
