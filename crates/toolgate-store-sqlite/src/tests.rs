//! The schema: FTS5 is compiled in, a database made by migration 1
//! upgrades in place with its audit chain intact, and one made before the
//! decisions index gets its decisions indexed. Decisions are found through
//! that index as a scan of the log would find them; entries copied row by
//! row keep the chain; what a copy reads back is what was put.

use super::*;
use toolgate_core::{AuditEvent, AuditKind};
use toolgate_gate::{Clock, ManualClock, add_memory, random_hex, verify};
use toolgate_store::{Ack, Shown, Store};

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
        let mut prev = toolgate_core::GENESIS;
        for seq in 1..=3u64 {
            let e = AuditEvent {
                ts_ms: clock.now_ms(),
                trace: format!("t{seq}"),
                kind: AuditKind::AckCreated,
                data: serde_json::json!({"n": seq}),
            };
            let text = e.canonical(seq);
            let hash = toolgate_core::chain_hash(&prev, text.as_bytes());
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

/// A decision entry's event, shaped as the gate records one (only the
/// fields the index reads, and a summary); `fields` in
/// `DecisionFields::COLUMNS` order.
fn decision_event(n: usize, kind: AuditKind, fields: [&str; 6]) -> AuditEvent {
    let [decision, tool, risk, layer, agent, session] = fields;
    AuditEvent {
        ts_ms: 1_800_000_000_000 + n as i64,
        trace: format!("t{n}"),
        kind,
        data: serde_json::json!({
            "call": {"tool": tool, "agent": agent, "session": session, "params": {}},
            "summary": format!("call {n}"),
            "decision": decision,
            "risk": risk,
            "layer": layer,
        }),
    }
}

/// Appends `events` in one transaction.
fn append_all(store: &SqliteStore, events: &[AuditEvent]) {
    let mut tx = store.begin().unwrap();
    for e in events {
        tx.append(e).unwrap();
    }
    tx.commit().unwrap();
}

/// A log of decisions with every field varying on its own, interleaved
/// with verdicts (same data, another kind: never decisions) and other
/// entries, and a few decisions missing fields or holding non-strings.
fn mixed_log(store: &SqliteStore) {
    let tools = ["bash", "write", "read"];
    let agents = ["a1", "a2"];
    let sessions = ["s1", "s2", "s3", "s4"];
    let decisions = ["allow", "block", "escalate"];
    let risks = ["R0", "R1", "R2", "R3", "R4"];
    let layers = ["rules", "approval"];
    let mut events = Vec::new();
    for n in 0..90 {
        let kind = if n % 4 == 3 {
            AuditKind::Verdict
        } else {
            AuditKind::Decision
        };
        let fields = [
            decisions[n / 2 % 3],
            tools[n % 3],
            risks[n % 5],
            layers[n / 5 % 2],
            agents[n / 3 % 2],
            sessions[n % 4],
        ];
        events.push(decision_event(n, kind, fields));
        if n % 10 == 0 {
            events.push(AuditEvent {
                ts_ms: 0,
                trace: "ack".into(),
                kind: AuditKind::AckCreated,
                data: serde_json::json!({"tool": "bash", "decision": "allow"}),
            });
        }
    }
    // Decisions without a call, with numbers where strings belong, and
    // with text that needs escaping.
    events.push(AuditEvent {
        ts_ms: 0,
        trace: "odd".into(),
        kind: AuditKind::Decision,
        data: serde_json::json!({"decision": "block", "risk": 3}),
    });
    events.push(AuditEvent {
        ts_ms: 0,
        trace: "odd".into(),
        kind: AuditKind::Decision,
        data: serde_json::json!({
            "call": {"tool": "wr\"ite\u{e9}", "agent": ["a1"], "session": null},
            "decision": "allow", "risk": "R1", "layer": {"x": 1}
        }),
    });
    append_all(store, &events);
}

/// Every decision the log holds with its fields, read from the entries
/// themselves (by scanning, as the index must never be needed to).
fn decisions_by_scan(store: &SqliteStore) -> Vec<(AuditRow, DecisionFields)> {
    let mut all = Vec::new();
    store
        .scan_audit(1, &mut |row| {
            if let Some(f) = DecisionFields::of_text(&row.entry) {
                all.push((row, f));
            }
            true
        })
        .unwrap();
    all
}

/// Whether a decision's fields match a query (every given field equal).
fn matches(q: &DecisionFields, f: &DecisionFields) -> bool {
    q.values()
        .iter()
        .zip(f.values())
        .all(|(want, have)| want.is_none() || *want == have)
}

/// What `decisions` must return, worked out from a scan.
fn expected(
    all: &[(AuditRow, DecisionFields)],
    q: &DecisionFields,
    before: u64,
    limit: usize,
) -> Vec<AuditRow> {
    all.iter()
        .rev()
        .filter(|(row, f)| row.seq < before && matches(q, f))
        .take(limit)
        .map(|(row, _)| row.clone())
        .collect()
}

/// The query holding the fields of `f` picked by the bits of `mask`
/// (bit i: `DecisionFields::COLUMNS[i]`).
fn query(f: &DecisionFields, mask: u32) -> DecisionFields {
    let pick = |i: u32, v: &Option<String>| (mask & (1 << i) != 0).then(|| v.clone()).flatten();
    DecisionFields {
        decision: pick(0, &f.decision),
        tool: pick(1, &f.tool),
        risk: pick(2, &f.risk),
        layer: pick(3, &f.layer),
        agent: pick(4, &f.agent),
        session: pick(5, &f.session),
    }
}

/// Every combination of fields (each alone, all of them, none) finds what
/// a scan of the log finds, newest first, and never an entry of another
/// kind, however alike its data.
#[test]
fn decisions_filter_by_every_combination_of_fields() {
    let dir = TempDir::new("decisions");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    mixed_log(&store);
    let all = decisions_by_scan(&store);
    assert_eq!(all.len(), 90 - 90 / 4 + 2, "decisions in the log");

    let everything = store
        .decisions(&DecisionFields::default(), u64::MAX, usize::MAX)
        .unwrap();
    assert_eq!(everything.len(), all.len());
    // Counted by decision and layer, whole and up to a seq.
    for through in [u64::MAX, 40] {
        let mut want: std::collections::BTreeMap<(String, String), u64> = Default::default();
        for (_, f) in all.iter().filter(|(row, _)| row.seq <= through) {
            let key = (
                f.decision.clone().unwrap_or_default(),
                f.layer.clone().unwrap_or_default(),
            );
            *want.entry(key).or_default() += 1;
        }
        let got: std::collections::BTreeMap<(String, String), u64> = store
            .decision_counts(through)
            .unwrap()
            .into_iter()
            .map(|c| ((c.decision, c.layer), c.count))
            .collect();
        assert_eq!(got, want, "counts through {through}");
        assert!(want.len() > 1, "{want:?}");
    }
    assert!(
        everything.windows(2).all(|w| w[0].seq > w[1].seq),
        "newest first"
    );
    for row in &everything {
        let v: serde_json::Value = serde_json::from_str(&row.entry).unwrap();
        assert_eq!(v["kind"], "decision", "entry {}", row.seq);
    }

    for sample in [0, 1, 7, 22, all.len() - 2, all.len() - 1] {
        let f = &all[sample].1;
        for mask in 0..64 {
            let q = query(f, mask);
            let got = store.decisions(&q, u64::MAX, usize::MAX).unwrap();
            assert_eq!(got, expected(&all, &q, u64::MAX, usize::MAX), "{q:?}");
            assert!(!got.is_empty(), "{q:?} finds at least its sample");
        }
    }

    // Values that are nowhere, or that were not strings in the entry.
    let nowhere = [
        DecisionFields {
            tool: Some("nope".into()),
            ..Default::default()
        },
        DecisionFields {
            risk: Some("3".into()),
            ..Default::default()
        },
        DecisionFields {
            agent: Some("[\"a1\"]".into()),
            ..Default::default()
        },
        DecisionFields {
            decision: Some("allow".into()),
            agent: Some("a1".into()),
            session: Some("s9".into()),
            ..Default::default()
        },
    ];
    for q in nowhere {
        assert_eq!(store.decisions(&q, u64::MAX, 10).unwrap(), vec![], "{q:?}");
    }
    // A string with quotes and accents is matched as the value it is.
    let odd = DecisionFields {
        tool: Some("wr\"ite\u{e9}".into()),
        ..Default::default()
    };
    let got = store.decisions(&odd, u64::MAX, 10).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(DecisionFields::of_text(&got[0].entry).unwrap().layer, None);
}

/// Pages, each before the last seq of the one before, add up to the whole
/// answer with nothing twice; `before` and `limit` cut as they say.
#[test]
fn decisions_page_back_with_before() {
    let dir = TempDir::new("decisions-page");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    mixed_log(&store);
    let all = decisions_by_scan(&store);
    for q in [
        DecisionFields::default(),
        DecisionFields {
            tool: Some("bash".into()),
            ..Default::default()
        },
        DecisionFields {
            risk: Some("R2".into()),
            layer: Some("rules".into()),
            ..Default::default()
        },
    ] {
        let whole = expected(&all, &q, u64::MAX, usize::MAX);
        let mut pages = Vec::new();
        let mut before = u64::MAX;
        loop {
            let page = store.decisions(&q, before, 4).unwrap();
            assert!(page.len() <= 4);
            let Some(last) = page.last() else { break };
            before = last.seq;
            pages.extend(page);
        }
        assert_eq!(pages, whole, "{q:?}");
        for before in [0, 1, 2, 17, 40, 60, 1000] {
            for limit in [0, 1, 3, usize::MAX] {
                assert_eq!(
                    store.decisions(&q, before, limit).unwrap(),
                    expected(&all, &q, before, limit),
                    "{q:?} before {before} limit {limit}"
                );
            }
        }
    }
}

/// A filtered page walks an index in seq order and looks each entry up by
/// its seq: no table scan, and no sort of everything matched.
#[test]
fn decisions_are_found_through_the_index() {
    let dir = TempDir::new("decisions-plan");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    mixed_log(&store);
    let conn = Connection::open(store.path()).unwrap();
    let some = |v: &str| Some(v.to_string());
    let cases = [
        (DecisionFields::default(), None),
        (
            DecisionFields {
                decision: some("block"),
                ..Default::default()
            },
            Some("decisions_by_decision"),
        ),
        (
            DecisionFields {
                tool: some("bash"),
                ..Default::default()
            },
            Some("decisions_by_tool"),
        ),
        (
            DecisionFields {
                agent: some("a1"),
                risk: some("R1"),
                ..Default::default()
            },
            Some("decisions_by_agent"),
        ),
        (
            DecisionFields {
                session: some("s1"),
                layer: some("rules"),
                ..Default::default()
            },
            Some("decisions_by_session"),
        ),
        (
            DecisionFields {
                tool: some("bash"),
                agent: some("a1"),
                session: some("s2"),
                ..Default::default()
            },
            Some("decisions_by_"),
        ),
        (
            DecisionFields {
                risk: some("R4"),
                ..Default::default()
            },
            None,
        ),
    ];
    for (q, index) in cases {
        let sql = decisions_sql(&q);
        let mut args: Vec<rusqlite::types::Value> = vec![100i64.into()];
        args.extend(q.values().iter().flatten().map(|v| v.to_string().into()));
        args.push(10i64.into());
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let plan = plan.join("\n");
        assert!(!plan.contains("SCAN"), "{q:?}: {plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{q:?}: {plan}");
        assert!(
            plan.contains("SEARCH a USING INTEGER PRIMARY KEY"),
            "{plan}"
        );
        if let Some(index) = index {
            assert!(plan.contains(&format!("INDEX {index}")), "{q:?}: {plan}");
        }
        // Values are parameters: none of them is in the statement.
        for v in q.values().into_iter().flatten() {
            assert!(!sql.contains(v), "{sql}");
        }
    }
}

/// The index table has one column per field the contract names, in its
/// order, after the seq.
#[test]
fn decisions_table_has_the_contract_columns() {
    let dir = TempDir::new("decisions-columns");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    let conn = Connection::open(store.path()).unwrap();
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('decisions') ORDER BY cid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut want = vec!["seq".to_string()];
    want.extend(DecisionFields::COLUMNS.iter().map(|c| c.to_string()));
    assert_eq!(columns, want);
}

/// Every index row, as the table holds it, by seq.
fn index_rows(path: &Path) -> Vec<(u64, DecisionFields)> {
    let conn = Connection::open(path).unwrap();
    let sql = format!(
        "SELECT seq, {} FROM decisions ORDER BY seq",
        DecisionFields::COLUMNS.join(", ")
    );
    conn.prepare(&sql)
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)? as u64,
                DecisionFields {
                    decision: r.get(1)?,
                    tool: r.get(2)?,
                    risk: r.get(3)?,
                    layer: r.get(4)?,
                    agent: r.get(5)?,
                    session: r.get(6)?,
                },
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A database made before the decisions index (schema version 4) with
/// decisions already in its log gets them indexed as it upgrades, each
/// field read as `DecisionFields::of_text` reads it (the same rows the
/// append path writes); an entry that is not JSON does not stop the
/// upgrade.
#[test]
fn an_old_database_gets_its_decisions_indexed_on_upgrade() {
    let dir = TempDir::new("decisions-backfill");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    mixed_log(&store);
    let path = store.path().to_path_buf();
    let all = decisions_by_scan(&store);
    let appended = index_rows(&path);
    let from_text: Vec<(u64, DecisionFields)> =
        all.iter().map(|(row, f)| (row.seq, f.clone())).collect();
    assert_eq!(
        appended, from_text,
        "the append path indexes as of_text reads"
    );
    // What every combination finds among the entries toolgate wrote.
    let (head, _) = store.audit_head().unwrap().unwrap();
    let pages = |store: &SqliteStore| -> Vec<Vec<AuditRow>> {
        (0..64)
            .map(|mask| {
                store
                    .decisions(&query(&all[5].1, mask), head + 1, usize::MAX)
                    .unwrap()
            })
            .collect()
    };
    let before = pages(&store);
    drop(store);
    {
        // Back to version 4, plus entries no toolgate writes: not JSON, not
        // an object, a kind that is not a string, a decision without data.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("DROP TABLE decisions").unwrap();
        conn.pragma_update(None, "user_version", MIGRATIONS.len() as i64 - 1)
            .unwrap();
        for (i, entry) in [
            "not json {",
            "[\"decision\"]",
            "{\"kind\":[\"decision\"],\"data\":{\"decision\":\"allow\"}}",
            "{\"kind\":\"decision\",\"data\":\"allow\"}",
            "{\"kind\":\"decision\"}",
        ]
        .iter()
        .enumerate()
        {
            conn.execute(
                "INSERT INTO audit (seq, hash, entry) VALUES (?1, zeroblob(32), ?2)",
                params![(head + 1) as i64 + i as i64, entry],
            )
            .unwrap();
        }
    }
    let store = SqliteStore::open_file(&path, SyncMode::Normal).unwrap();
    let version: i64 = lock(&store.writer)
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, MIGRATIONS.len() as i64);
    assert_eq!(pages(&store), before);
    let all = decisions_by_scan(&store);
    let from_text: Vec<(u64, DecisionFields)> =
        all.iter().map(|(row, f)| (row.seq, f.clone())).collect();
    assert_eq!(from_text.len(), appended.len() + 2, "two odd decisions");
    assert_eq!(index_rows(&path), from_text, "backfilled as of_text reads");
    // The indexes came back with the table.
    let conn = Connection::open(&path).unwrap();
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'decisions'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 4);
}

/// Entries copied row by row must come in order: a gap, a repeat or a
/// start past 1 is refused, the next seq accepted (in one transaction or
/// over several), and the copy verifies, indexes its decisions, and grows
/// on from the copied head.
#[test]
fn append_row_takes_only_the_next_seq_and_keeps_the_chain() {
    let dir = TempDir::new("append-row");
    let from = SqliteStore::open(&dir.0.join("from"), SyncMode::Normal).unwrap();
    mixed_log(&from);
    let mut rows = Vec::new();
    let head = from
        .scan_audit(1, &mut |row| {
            rows.push(row);
            true
        })
        .unwrap()
        .unwrap();

    let to = SqliteStore::open(&dir.0.join("to"), SyncMode::Normal).unwrap();
    let refused = |tx: &mut Box<dyn Tx + '_>, row: &AuditRow, after: u64| {
        let e = tx.append_row(row).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        let want = format!("audit entry {} cannot follow {after}", row.seq);
        assert!(e.to_string().contains(&want), "{e}");
    };
    {
        let mut tx = to.begin().unwrap();
        refused(&mut tx, &rows[1], 0);
        tx.append_row(&rows[0]).unwrap();
        refused(&mut tx, &rows[0], 1);
        refused(&mut tx, &rows[2], 1);
        for row in &rows[1..10] {
            tx.append_row(row).unwrap();
        }
        tx.commit().unwrap();
    }
    {
        // Dropped without commit: nothing of it stays, the head included.
        let mut tx = to.begin().unwrap();
        tx.append_row(&rows[10]).unwrap();
    }
    assert_eq!(to.audit_head().unwrap(), Some((10, rows[9].hash)));
    {
        let mut tx = to.begin().unwrap();
        refused(&mut tx, &rows[11], 10);
        for row in &rows[10..] {
            tx.append_row(row).unwrap();
        }
        tx.commit().unwrap();
    }
    let v = verify(&to).unwrap();
    assert_eq!(
        (v.entries, v.head_seq, v.head_hash),
        (head.0, head.0, head.1)
    );
    assert_eq!(to.audit_head().unwrap(), Some(head));
    assert_eq!(index_rows(to.path()), index_rows(from.path()));
    let q = DecisionFields {
        tool: Some("read".into()),
        ..Default::default()
    };
    assert_eq!(
        to.decisions(&q, u64::MAX, usize::MAX).unwrap(),
        from.decisions(&q, u64::MAX, usize::MAX).unwrap()
    );
    // An append after the copy chains on from the copied head.
    let fields = ["allow", "x", "R0", "rules", "a", "s"];
    let next = decision_event(1000, AuditKind::Decision, fields);
    let seq = {
        let mut tx = to.begin().unwrap();
        let seq = tx.append(&next).unwrap();
        tx.commit().unwrap();
        seq
    };
    assert_eq!(seq, head.0 + 1);
    assert_eq!(verify(&to).unwrap().entries, head.0 + 1);
    let q = DecisionFields {
        tool: Some("x".into()),
        ..Default::default()
    };
    let found = to.decisions(&q, u64::MAX, 10).unwrap();
    assert_eq!(found.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![seq]);
}

/// What a copy reads back: every acknowledgement, every knowledge-shown
/// record (oldest first, ties in insertion order), every used key.
#[test]
fn acks_shown_and_used_keys_read_back_as_put() {
    let dir = TempDir::new("copy-reads");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    let ack = |key: &str, scope: &str, expires_ms: i64| Ack {
        key: key.into(),
        scope: scope.into(),
        by: "tester".into(),
        reason: (key == "k1").then(|| "read it".into()),
        created_ms: 10,
        expires_ms,
    };
    let shown = |id: &str, shown_ms: i64| Shown {
        id: id.into(),
        binding: format!("b-{id}"),
        scope: "s1".into(),
        shown_ms,
        expires_ms: shown_ms + 100,
        keys: vec![format!("mem:{id}"), "sop#x".into()],
    };
    let acks = vec![ack("k1", "s1", 50), ack("k1", "s2", 5), ack("k2", "s1", 60)];
    let shown_all = vec![
        shown("c", 30),
        shown("a", 10),
        shown("b", 30),
        shown("d", 5),
    ];
    {
        let mut tx = store.begin().unwrap();
        assert_eq!(tx.acks().unwrap(), vec![]);
        assert_eq!(tx.all_shown().unwrap(), vec![]);
        assert_eq!(tx.used_keys().unwrap(), vec![]);
        for a in &acks {
            tx.put_ack(a).unwrap();
        }
        for s in &shown_all {
            tx.put_shown(s).unwrap();
        }
        assert!(tx.use_key("n1", 1_000, 0).unwrap());
        assert!(tx.use_key("n2", 2_000, 0).unwrap());
        assert!(!tx.use_key("n1", 5_000, 0).unwrap());
        // A bypass is a record too, in another namespace: not a key.
        tx.put_bypass(&Bypass {
            id: "n3".into(),
            layers: vec![],
            reason: "r".into(),
            by: "b".into(),
            started_ms: 0,
            until_ms: 1,
            ended: None,
        })
        .unwrap();
        tx.commit().unwrap();
    }
    let mut tx = store.begin().unwrap();
    let mut got = tx.acks().unwrap();
    got.sort_by(|a, b| (&a.key, &a.scope).cmp(&(&b.key, &b.scope)));
    assert_eq!(got, acks);
    let order: Vec<String> = tx.all_shown().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(order, ["d", "a", "c", "b"]);
    assert_eq!(tx.all_shown().unwrap()[0], shown_all[3]);
    let mut keys = tx.used_keys().unwrap();
    keys.sort();
    assert_eq!(keys, vec![("n1".into(), 1_000), ("n2".into(), 2_000)]);
}

/// A memory put with an explicit id does not take the id a later new
/// memory gets (nor does a deleted one's id come back).
#[test]
fn explicit_memory_ids_never_collide_with_new_ones() {
    let dir = TempDir::new("memory-ids");
    let store = SqliteStore::open(&dir.0, SyncMode::Normal).unwrap();
    let memory = |id: u64, text: &str| Memory {
        id,
        text: text.into(),
        categories: vec![Category::Gotchas],
        confidence: 0.5,
        source: None,
        created_ms: 0,
    };
    let mut tx = store.begin().unwrap();
    assert_eq!(tx.put_memory(&memory(0, "first note")).unwrap(), 1);
    assert_eq!(tx.put_memory(&memory(50, "copied fifty")).unwrap(), 50);
    assert_eq!(tx.put_memory(&memory(0, "new after fifty")).unwrap(), 51);
    assert_eq!(tx.put_memory(&memory(7, "copied seven")).unwrap(), 7);
    assert_eq!(tx.put_memory(&memory(0, "new after seven")).unwrap(), 52);
    assert!(tx.delete_memory(52).unwrap());
    assert_eq!(tx.put_memory(&memory(0, "new after delete")).unwrap(), 53);
    tx.commit().unwrap();
    let ids: Vec<u64> = store
        .list_memories(None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(sorted, vec![1, 7, 50, 51, 53]);
    assert_eq!(store.search_memories_text("copied", 10).unwrap().len(), 2);
    assert_eq!(store.search_memories_text("new", 10).unwrap().len(), 2);
}
