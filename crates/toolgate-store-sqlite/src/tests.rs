//! The schema: FTS5 is compiled in, and a database made by migration 1
//! upgrades in place with its audit chain intact.

use super::*;
use toolgate_core::audit::{AuditEvent, AuditKind};
use toolgate_gate::{Clock, ManualClock, add_memory, random_hex, verify};
use toolgate_store::Store;

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
        .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(on, 1);
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'unicode61 remove_diacritics 2')",
    )
    .unwrap();
}

/// The directory syncs SQLite would do are compiled out (the store does the
/// one that matters itself): checked here, so that a build without
/// `.cargo/config.toml`'s flag shows up as a failing test, not a second
/// fsync on every hook call.
#[test]
fn bundled_sqlite_leaves_directory_syncs_to_the_store() {
    let conn = Connection::open_in_memory().unwrap();
    let off: i64 = conn
        .query_row(
            "SELECT sqlite_compileoption_used('DISABLE_DIRSYNC')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(off, 1);
}

/// The other start-up flags of `.cargo/config.toml` are in the build too:
/// without them a hook process pays page faults for blocks it never reuses
/// and a global mutex on every SQLite allocation.
#[test]
fn bundled_sqlite_has_the_short_lived_process_flags() {
    let conn = Connection::open_in_memory().unwrap();
    for option in [
        "DEFAULT_LOOKASIDE=0,0",
        "DEFAULT_PCACHE_INITSZ=0",
        "DEFAULT_MEMSTATUS=0",
        "USE_ALLOCA",
    ] {
        let used: i64 = conn
            .query_row("SELECT sqlite_compileoption_used(?1)", [option], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(used, 1, "SQLite built without {option}");
    }
}

/// What the store's own directory sync must cover exists once it is open:
/// a new database and its WAL.
#[test]
fn a_new_store_has_its_wal_before_any_call_is_recorded() {
    let dir = TempDir::new("fresh");
    let store = SqliteStore::open(&dir.0.join("state"), SyncMode::Full).unwrap();
    assert!(dir.0.join("state").join(DB_FILE).exists());
    let mut wal = store.path().as_os_str().to_owned();
    wal.push("-wal");
    assert!(Path::new(&wal).exists(), "no WAL after opening");
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

/// The decision path's own bm25 puts memories in the order FTS5's `bm25()`
/// does (on text without diacritics, where the tokenizers agree), when it
/// ranks every match (here: no limit).
#[test]
fn own_bm25_orders_like_fts5() {
    let dir = TempDir::new("bm25");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    let clock = ManualClock::new(1_800_000_000_000);
    let vocab = [
        "kubectl", "drain", "prod", "billing", "db", "pg_dump", "10.0.0.7", "replica", "the", "a",
        "is", "never", "before", "after", "host", "deploy", "Helm", "chart", "x-ray",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut items = Vec::new();
    for _ in 0..400 {
        let n = 1 + next() % 30;
        let words: Vec<String> = (0..n)
            .map(|_| {
                let r = next();
                if r % 6 == 0 {
                    vocab[(r / 6 % vocab.len() as u64) as usize].to_string()
                } else {
                    format!("w{}", r % 300)
                }
            })
            .collect();
        items.push(Memory {
            id: 0,
            text: words.join(" "),
            categories: vec![Category::ALL[(next() % 6) as usize]],
            confidence: (next() % 101) as f64 / 100.0,
            source: None,
            created_ms: 0,
        });
    }
    toolgate_gate::import_memories(&store, &clock, items, "t").unwrap();
    let conn = Connection::open(store.path()).unwrap();
    let fts_score = |id: u64, fts: &str| -> f64 {
        conn.query_row(
            "SELECT bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?1 AND rowid = ?2",
            params![fts, id as i64],
            |r| r.get(0),
        )
        .unwrap()
    };
    let queries: [&[&str]; 6] = [
        &["kubectl"],
        &["pg_dump", "replica"],
        &["10.0.0.7", "drain", "helm chart"],
        &["x-ray", "never", "before after"],
        &["db", "prod", "billing", "host", "deploy"],
        &["kubectl drain", "db replica", "chart x", "prod"],
    ];
    for terms in queries {
        for (min, cats) in [
            (0.0, vec![]),
            (0.5, vec![]),
            (0.2, vec![Category::Process, Category::Gotchas]),
        ] {
            let q = MemoryQuery {
                terms: terms.iter().map(|t| t.to_string()).collect(),
                min_confidence: min,
                categories: cats,
                limit: usize::MAX,
            };
            let phrases = memory::phrases(&q.terms);
            let fts = phrases
                .iter()
                .map(|p| p.fts.clone())
                .collect::<Vec<_>>()
                .join(" OR ");
            let ours = store.search_memories(&q).unwrap();
            let theirs = store
                .with_memory_reader(|conn| memory::search_ranked(conn, &fts, &q))
                .unwrap();
            let mut a: Vec<u64> = ours.iter().map(|m| m.id).collect();
            let mut b: Vec<u64> = theirs.iter().map(|m| m.id).collect();
            // Same order, except where FTS5 scores two rows the same (to
            // rounding): compare the FTS5 scores along our order.
            let scores: Vec<f64> = a.iter().map(|id| fts_score(*id, &fts)).collect();
            for w in scores.windows(2) {
                assert!(w[0] <= w[1] + 1e-9, "{terms:?}: {scores:?}");
            }
            a.sort();
            b.sort();
            assert_eq!(a, b, "{terms:?}");
            assert!(!a.is_empty(), "{terms:?}");
        }
    }
}

/// Frames in the WAL as a newly opened connection finds them (a passive
/// checkpoint's second column); closing it leaves the WAL as it is, as the
/// store's own connections do.
fn frames_a_new_process_reads(path: &Path) -> i64 {
    let conn = Connection::open(path).unwrap();
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .unwrap();
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1))
        .unwrap()
}

fn wal_len(store: &SqliteStore) -> u64 {
    let mut wal = store.path().as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0)
}

/// A store dropped with a large WAL folds it into the database and starts
/// it over: the next process reads back only the frames after that, and the
/// WAL file keeps its blocks (a later commit overwrites them, which costs
/// its fsync less than growing a file). A small WAL is left as it is.
#[test]
fn a_large_wal_is_folded_and_started_over_not_truncated() {
    let dir = TempDir::new("wal");
    let clock = ManualClock::new(1_800_000_000_000);
    let store = SqliteStore::open(&dir.0, SyncMode::Full).unwrap();
    let path = store.path().to_path_buf();
    let memory = |n: usize| Memory {
        id: 0,
        text: format!(
            "memory {n}: {}",
            "the staging cluster is shared ".repeat(40)
        ),
        categories: vec![Category::Gotchas],
        confidence: 0.9,
        source: None,
        created_ms: 0,
    };
    add_memory(&store, &clock, memory(0), "tester").unwrap();
    drop(store);
    let small = frames_a_new_process_reads(&path);
    assert!(small > 0, "one memory's pages stay in a small WAL");

    // Grown and folded three times: each fold starts the WAL over again
    // (a marker written unchanged would not).
    let mut n = 1;
    let mut grown = 0;
    for _ in 0..3 {
        let store = SqliteStore::open(&dir.0, SyncMode::Full).unwrap();
        while u64::from(store.wal_pages.load(Ordering::Relaxed)) * WAL_FRAME_BYTES
            <= WAL_CHECKPOINT_BYTES
        {
            add_memory(&store, &clock, memory(n), "tester").unwrap();
            n += 1;
        }
        grown = grown.max(wal_len(&store));
        assert!(
            grown > WAL_CHECKPOINT_BYTES,
            "the WAL grew to {grown} bytes"
        );
        // A hook folds before it exits, and the store stays usable: its
        // commits are as durable as before the marker's.
        store.prepare_exit();
        let level: i64 = lock(&store.writer)
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap();
        assert_eq!(level, 2, "synchronous is FULL again after the fold");
        drop(store);
        let after = frames_a_new_process_reads(&path);
        assert!(after <= 4, "{after} frames read back after the fold");
    }
    let store = SqliteStore::open(&dir.0, SyncMode::Full).unwrap();
    assert_eq!(wal_len(&store), grown, "the WAL file was cut, not reused");
    let v = verify(&store).unwrap();
    assert_eq!(v.entries, n as u64, "every memory's audit entry is there");
    assert_eq!(
        store.search_memories_text("staging", 1000).unwrap().len(),
        n
    );
}
