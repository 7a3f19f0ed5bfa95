//! Durable audit append and verify throughput (targets: ≥ 20k entries/s
//! durable append, ≥ 200k entries/s verify; docs/performance.md). Prints figures; asserts
//! nothing about time. Run with `cargo bench -p toolgate-store-sqlite --bench audit`.

use serde_json::json;
use std::time::Instant;
use toolgate_core::{AuditEvent, AuditKind};
use toolgate_store::Store;
use toolgate_store_sqlite::{SqliteStore, SyncMode};

/// A decision entry of realistic size (~500 bytes of canonical JSON).
fn event(i: u64) -> AuditEvent {
    AuditEvent {
        ts_ms: 1_800_000_000_000 + i as i64,
        trace: format!("{i:032x}"),
        kind: AuditKind::Decision,
        data: json!({
            "call": {"tool": "exec", "params": {"command": format!("cargo test -p toolgate-core --lib -- case{i}")},
                     "session": "agent:main:main", "cwd": "/home/dev/proj"},
            "binding": format!("{i:064x}"),
            "decision": "allow", "risk": "R1", "score": 4, "layer": "risk",
            "reason": "allowed: nothing risky found", "approval": null,
        }),
    }
}

fn main() {
    let root = std::env::temp_dir().join(format!("toolgate-bench-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    println!("audit append (SQLite WAL) and verify, entries of ~500 bytes");
    println!(
        "targets (docs/performance.md): append >= 20,000 entries/s durable (sync=full); verify >= 200,000 entries/s"
    );
    for (sync, name) in [(SyncMode::Full, "full"), (SyncMode::Normal, "normal")] {
        for per_commit in [1usize, 10, 100, 1000] {
            let dir = root.join(format!("{name}-{per_commit}"));
            let store = SqliteStore::open(&dir, sync).expect("open store");
            let total = (per_commit * 200).clamp(2_000, 100_000);
            let events: Vec<AuditEvent> = (0..total as u64).map(event).collect();
            let start = Instant::now();
            for chunk in events.chunks(per_commit) {
                let mut tx = store.begin().expect("begin");
                for e in chunk {
                    tx.append(e).expect("append");
                }
                tx.commit().expect("commit");
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "  append sync={name:<6} {per_commit:>5} entries/commit: {:>9.0} entries/s ({:.1} µs per commit)",
                total as f64 / secs,
                secs * 1e6 / (total / per_commit) as f64
            );
        }
    }
    let dir = root.join("normal-1000");
    let store = SqliteStore::open(&dir, SyncMode::Normal).expect("open store");
    for _ in 0..3 {
        let start = Instant::now();
        let v = toolgate_gate::verify(&store).expect("chain verifies");
        let secs = start.elapsed().as_secs_f64();
        println!(
            "  verify {} entries: {:>9.0} entries/s",
            v.entries,
            v.entries as f64 / secs
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
