//! The audit chain as stored: every decision and approval event is on it,
//! secrets never reach the disk, and any tampering with the rows is caught
//! with its sequence number.

mod common;

use common::*;
use rusqlite::{Connection, params};
use serde_json::json;
use std::sync::Arc;
use toolgate_core::{ToolCall, binding_hash};
use toolgate_gate::ManualClock;
use toolgate_store::StoreError;

/// A store with `n` decisions recorded, and a raw connection to tamper with.
fn recorded(tag: &str, n: usize) -> (TempDir, Connection) {
    let dir = TempDir::new(tag);
    let clock = Arc::new(ManualClock::new(T0));
    let g = gate(store(&dir.0), "", clock);
    for i in 0..n {
        g.check(&exec(&format!("ls -la dir{i}"))).unwrap();
    }
    let conn = Connection::open(dir.0.join("toolgate.db")).unwrap();
    (dir, conn)
}

fn broken_at(dir: &TempDir) -> u64 {
    match toolgate_gate::verify(&*store(&dir.0)) {
        Err(StoreError::Chain(b)) => b.seq,
        other => panic!("tampering not caught: {other:?}"),
    }
}

fn entry(conn: &Connection, seq: i64) -> (Vec<u8>, String) {
    conn.query_row("SELECT hash, entry FROM audit WHERE seq = ?1", [seq], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .unwrap()
}

#[test]
fn an_untouched_chain_verifies() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    let (dir, _) = recorded("intact", 20);
    let v = toolgate_gate::verify(&*store(&dir.0)).unwrap();
    assert_eq!(v.entries, 20);
}

#[test]
fn editing_a_row_is_caught() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    for seq in [1, 7, 12] {
        let (dir, conn) = recorded("edit", 12);
        let (_, text) = entry(&conn, seq);
        let edited = text.replace(&format!("dir{}", seq - 1), "dirX");
        assert_ne!(edited, text);
        conn.execute(
            "UPDATE audit SET entry = ?1 WHERE seq = ?2",
            params![edited, seq],
        )
        .unwrap();
        assert_eq!(broken_at(&dir), seq as u64);
    }
}

#[test]
fn editing_a_row_and_its_hash_is_caught_at_the_next() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    let (dir, conn) = recorded("edit-hash", 10);
    let (prev, _) = entry(&conn, 4);
    let (_, text) = entry(&conn, 5);
    let edited = text.replace("dir4", "dirX");
    let prev: [u8; 32] = prev.try_into().unwrap();
    let hash = toolgate_core::chain_hash(&prev, edited.as_bytes());
    conn.execute(
        "UPDATE audit SET entry = ?1, hash = ?2 WHERE seq = 5",
        params![edited, &hash[..]],
    )
    .unwrap();
    assert_eq!(broken_at(&dir), 6);
}

#[test]
fn deleting_any_row_is_caught() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    for seq in [1, 5, 10] {
        let (dir, conn) = recorded("delete", 10);
        conn.execute("DELETE FROM audit WHERE seq = ?1", [seq])
            .unwrap();
        assert_eq!(broken_at(&dir), seq as u64, "deleted {seq}");
    }
}

#[test]
fn inserting_a_row_is_caught() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    // Appended at the end without moving the head.
    let (dir, conn) = recorded("insert-end", 5);
    let (_, text) = entry(&conn, 5);
    conn.execute(
        "INSERT INTO audit (seq, hash, entry) VALUES (6, ?1, ?2)",
        params![vec![0u8; 32], text.replace("\"seq\":5", "\"seq\":6")],
    )
    .unwrap();
    assert_eq!(broken_at(&dir), 6);
    // Slipped into the middle by renumbering the rows after it.
    let (dir, conn) = recorded("insert-mid", 6);
    conn.execute("UPDATE audit SET seq = seq + 100 WHERE seq >= 4", [])
        .unwrap();
    conn.execute("UPDATE audit SET seq = seq - 99 WHERE seq >= 104", [])
        .unwrap();
    let (h, t) = entry(&conn, 3);
    conn.execute(
        "INSERT INTO audit (seq, hash, entry) VALUES (4, ?1, ?2)",
        params![h, t.replace("\"seq\":3", "\"seq\":4")],
    )
    .unwrap();
    assert_eq!(broken_at(&dir), 4);
}

#[test]
fn reordering_rows_is_caught() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    // Entry texts and hashes swapped between two sequence numbers.
    let (dir, conn) = recorded("reorder", 8);
    let (h3, t3) = entry(&conn, 3);
    let (h4, t4) = entry(&conn, 4);
    conn.execute(
        "UPDATE audit SET hash = ?1, entry = ?2 WHERE seq = 3",
        params![h4, t4],
    )
    .unwrap();
    conn.execute(
        "UPDATE audit SET hash = ?1, entry = ?2 WHERE seq = 4",
        params![h3, t3],
    )
    .unwrap();
    assert_eq!(broken_at(&dir), 3);
}

#[test]
fn cutting_the_tail_is_caught() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    let (dir, conn) = recorded("tail", 8);
    conn.execute("DELETE FROM audit WHERE seq >= 7", [])
        .unwrap();
    assert_eq!(broken_at(&dir), 7);
}

#[test]
fn secrets_never_reach_the_disk_and_do_not_change_the_binding() {
    if not_sqlite("tampers with the SQLite file") {
        return;
    }
    let dir = TempDir::new("redact");
    let clock = Arc::new(ManualClock::new(T0));
    let g = gate(store(&dir.0), "", clock);
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let call: ToolCall = serde_json::from_value(json!({
        "tool": "exec",
        "params": {
            "command": format!("curl -H 'Authorization: Bearer {token}' https://api.github.com/x && export AWS_ACCESS_KEY_ID={aws} && git push --force origin main"),
            "env": {"password": "hunter2hunter2", "API_KEY": "k-123456789"},
        },
        "session": format!("s-{token}"),
        "agent": format!("agent-{aws}"),
        "requester": {"id": "owner", "role": "owner"},
    }))
    .unwrap();
    let d = g.check(&call).unwrap();
    assert_eq!(d.decision, toolgate_core::Verdict::Escalate, "{d:?}");
    assert!(!d.reason.contains(token));
    drop(g);
    // Checkpoint so the WAL is folded into the main file, then read every
    // byte of both.
    let conn = Connection::open(dir.0.join("toolgate.db")).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(dir.0.join("toolgate.db")).unwrap();
    if let Ok(wal) = std::fs::read(dir.0.join("toolgate.db-wal")) {
        bytes.extend(wal);
    }
    let text = String::from_utf8_lossy(&bytes);
    for secret in [token, aws, "hunter2hunter2", "k-123456789"] {
        assert!(!text.contains(secret), "{secret} reached the disk");
    }
    assert!(text.contains("[REDACTED"), "redaction marks are stored");
    // The approval is still bound to the original call.
    let mut exported = Vec::new();
    toolgate_gate::export(&*store(&dir.0), 1, &mut |e| {
        exported.push(e);
        true
    })
    .unwrap();
    let decision = exported
        .iter()
        .rev()
        .find(|e| e.entry["kind"] == "decision")
        .unwrap();
    assert_eq!(
        decision.entry["data"]["binding"],
        json!(
            binding_hash(
                &call,
                &toolgate_core::paths::Env::new("/home/dev", "/home/dev/proj")
            )
            .to_hex()
        )
    );
}

#[test]
fn every_check_records_verdicts_and_decision_under_one_trace() {
    let dir = TempDir::new("trace");
    let clock = Arc::new(ManualClock::new(T0));
    let g = gate(store(&dir.0), "", clock);
    let d = g.check(&exec("git push --force origin main")).unwrap();
    let mut entries = Vec::new();
    toolgate_gate::export(&*store(&dir.0), 1, &mut |e| {
        entries.push(e);
        true
    })
    .unwrap();
    let last = entries.last().unwrap();
    assert_eq!(last.entry["kind"], "decision");
    assert_eq!(last.entry["seq"], json!(d.audit_seq.unwrap()));
    let trace = last.entry["trace"].clone();
    let kinds: Vec<&str> = entries
        .iter()
        .filter(|e| e.entry["trace"] == trace)
        .map(|e| e.entry["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"verdict"), "{kinds:?}");
    assert!(kinds.contains(&"approval.created"), "{kinds:?}");
    // Exported entries chain: each prev is the hash before it.
    for w in entries.windows(2) {
        assert_eq!(w[1].prev, w[0].hash);
    }
}
