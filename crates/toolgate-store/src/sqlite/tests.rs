//! The schema: FTS5 is compiled in, and a database made by migration 1
//! upgrades in place with its audit chain intact.

use super::*;
use crate::{Clock, ManualClock, add_memory, random_hex, verify};
use toolgate_core::audit::{AuditEvent, AuditKind};

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "toolgate-sqlite-{tag}-{}",
            random_hex().expect("random")
        ));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn bundled_sqlite_has_fts5() {
    let conn = Connection::open_in_memory().unwrap();
    let on: i64 = conn
        .query_row(
            "SELECT sqlite_compileoption_used('ENABLE_FTS5')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(on, 1);
    conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'unicode61 remove_diacritics 2')")
        .unwrap();
}

#[test]
fn version_1_database_upgrades_and_keeps_its_chain() {
    let dir = TempDir::new("migrate");
    let path = dir.0.join(DB_FILE);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let clock = ManualClock::new(1_800_000_000_000);
    {
        let conn = Connection::open(&path).unwrap();
        // Append entries exactly as a version-1 toolgate would: audit rows
        // and the head only.
        let mut prev = toolgate_core::audit::GENESIS;
        for seq in 1..=3u64 {
            let e = AuditEvent {
                ts_ms: clock.now_ms(),
                trace: format!("t{seq}"),
                kind: AuditKind::AckCreated,
                data: serde_json::json!({"n": seq}),
            };
            let text = e.canonical(seq);
            let hash = toolgate_core::audit::chain_hash(&prev, text.as_bytes());
            conn.execute(
                "INSERT INTO audit (seq, hash, entry) VALUES (?1, ?2, ?3)",
                params![seq as i64, &hash[..], text],
            )
            .unwrap();
            prev = hash;
        }
        conn.execute(
            "INSERT INTO audit_head (id, seq, hash) VALUES (1, 3, ?1)",
            params![&prev[..]],
        )
        .unwrap();
    }
    let store = SqliteStore::open_file(&path, SyncMode::Normal).unwrap();
    let version: i64 = {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    };
    assert_eq!(version, MIGRATIONS.len() as i64);
    let v = verify(&store).unwrap();
    assert_eq!(v.entries, 3);
    // The new tables work, and the chain grows on from the old head.
    let m = Memory {
        id: 0,
        text: "pg_dump locks the billing db".into(),
        categories: vec![Category::Gotchas],
        confidence: 0.9,
        source: None,
        created_ms: 0,
    };
    let m = add_memory(&store, &clock, m, "tester").unwrap();
    assert_eq!(m.id, 1);
    assert_eq!(store.search_memories_text("pg_dump", 10).unwrap(), vec![m]);
    let v = verify(&store).unwrap();
    assert_eq!((v.entries, v.head_seq), (4, 4));
    // Opening again is a no-op.
    drop(store);
    let store = SqliteStore::open_file(&path, SyncMode::Normal).unwrap();
    assert_eq!(verify(&store).unwrap().entries, 4);
}
