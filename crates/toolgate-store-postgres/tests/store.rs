//! The PostgreSQL store against a real server: what the SQLite store's
//! tests check, in PostgreSQL's terms. Each test has a schema of its own.

mod common;

use common::*;
use serde_json::json;
use toolgate_core::knowledge::memory::{Category, Memory};
use toolgate_core::{ApprovalState, ApproverKind, AuditEvent, AuditKind, Layer, RiskClass, Vote};
use toolgate_gate::{check_anchor, verify};
use toolgate_store::{Ack, AuditRow, Bypass, DecisionFields, Operator, Shown, Store, StoreError};
use toolgate_store_postgres::PostgresStore;

fn event(n: u64) -> AuditEvent {
    AuditEvent {
        ts_ms: T0 + n as i64,
        trace: format!("t{n}"),
        kind: AuditKind::AckCreated,
        data: json!({"n": n}),
    }
}

#[test]
fn approvals_round_trip_with_latest_due_and_open_counts() {
    let Some(db) = db("approvals_round_trip_with_latest_due_and_open_counts") else {
        return;
    };
    let s = db.store();
    let a = approval(id(1), binding(1), T0);
    // Same binding, created later by the clock but earlier in insertion
    // order for the third: insertion order wins.
    let b = approval(id(2), binding(1), T0 + 10);
    let c = approval(id(3), binding(1), T0 - 1_000);
    let other = approval(id(4), binding(2), T0);
    let mut tx = s.begin().unwrap();
    assert_eq!(tx.count_open().unwrap(), 0);
    assert!(tx.latest_for_binding(&binding(1)).unwrap().is_none());
    for x in [&a, &b, &c, &other] {
        tx.put_approval(x).unwrap();
    }
    assert_eq!(tx.approval(&id(1)).unwrap().as_ref(), Some(&a));
    assert_eq!(tx.latest_for_binding(&binding(1)).unwrap(), Some(c.clone()));
    assert_eq!(
        tx.latest_for_binding(&binding(2)).unwrap(),
        Some(other.clone())
    );
    tx.commit().unwrap();

    // Read back whole (the big integer in the call too) without the lock.
    let back = s.read_approval(&id(1)).unwrap().unwrap();
    assert_eq!(back, a);
    assert_eq!(back.call["params"]["n"].to_string(), "12345678901234567890");
    assert!(s.read_approval(&id(9)).unwrap().is_none());
    assert_eq!(s.count_open_approvals().unwrap(), 4);

    // Replacing keeps the insertion position; states move the counts.
    let mut tx = s.begin().unwrap();
    let a2 = approved(a.clone(), T0 + 100);
    tx.put_approval(&a2).unwrap();
    let mut b2 = b.clone();
    b2.state = ApprovalState::Denied;
    tx.put_approval(&b2).unwrap();
    assert_eq!(tx.count_open().unwrap(), 3);
    let newest: Vec<_> = tx.approvals(false, usize::MAX).unwrap();
    let order: Vec<_> = newest.iter().map(|x| x.id).collect();
    assert_eq!(order, vec![id(4), id(3), id(2), id(1)]);
    let open: Vec<_> = tx
        .approvals(true, 2)
        .unwrap()
        .iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(open, vec![id(4), id(3)]);
    assert_eq!(tx.approvals(true, 0).unwrap().len(), 0);
    // Due: pending ones at expiry, approved ones at the end of their window
    // (earliest first); denied ones never.
    let due: Vec<_> = tx
        .due_approvals(T0 + 3_600_000)
        .unwrap()
        .iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(due, vec![id(1), id(3), id(4)]);
    let due: Vec<_> = tx
        .due_approvals(T0 + 100 + 600_000)
        .unwrap()
        .iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(due, vec![id(1)]);
    assert!(tx.due_approvals(T0 + 600_099).unwrap().is_empty());
    assert!(tx.due_approvals(T0 - 2_000).unwrap().is_empty());
    tx.commit().unwrap();
    assert_eq!(s.read_approval(&id(1)).unwrap(), Some(a2));
    assert_eq!(s.count_open_approvals().unwrap(), 3);

    // Prefixes are text, never patterns.
    let all = s.approval_ids_starting("", 10).unwrap();
    assert_eq!(all.len(), 4);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    assert_eq!(
        s.approval_ids_starting("01", 10).unwrap(),
        vec![id(1).to_string()]
    );
    assert_eq!(s.approval_ids_starting("0", 2).unwrap().len(), 2);
    for p in ["%", "_", "0%", "\0", "zz"] {
        assert!(s.approval_ids_starting(p, 10).unwrap().is_empty(), "{p:?}");
    }
}

fn vote(identity: &str, approve: bool, at_ms: i64, generation: u32) -> Vote {
    Vote {
        approval: id(1),
        kind: ApproverKind::UserRequest,
        identity: identity.to_string(),
        approve,
        reason: None,
        relayed: false,
        named: true,
        channel: "cli".to_string(),
        risk: RiskClass::R3,
        generation,
        at_ms,
    }
}

#[test]
fn a_new_vote_replaces_the_same_identitys_stale_one() {
    let Some(db) = db("a_new_vote_replaces_the_same_identitys_stale_one") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    tx.put_approval(&approval(id(1), binding(1), T0)).unwrap();
    tx.put_vote(&vote("alice", false, T0 + 1, 0)).unwrap();
    tx.put_vote(&vote("bob", true, T0 + 2, 0)).unwrap();
    tx.put_vote(&vote("carol", true, T0 + 2, 0)).unwrap();
    // Alice again, on a newer generation: her old vote is gone.
    tx.put_vote(&vote("alice", true, T0 + 3, 1)).unwrap();
    tx.commit().unwrap();
    let mut tx = s.begin().unwrap();
    let votes = tx.votes(&id(1)).unwrap();
    let seen: Vec<_> = votes
        .iter()
        .map(|v| (v.identity.as_str(), v.approve, v.generation))
        .collect();
    assert_eq!(
        seen,
        vec![("bob", true, 0), ("carol", true, 0), ("alice", true, 1)]
    );
    assert!(tx.votes(&id(2)).unwrap().is_empty());
    // A vote on no approval is refused by the database.
    let mut orphan = vote("dave", true, T0, 0);
    orphan.approval = id(7);
    assert!(matches!(
        tx.put_vote(&orphan),
        Err(StoreError::Backend { .. })
    ));
}

#[test]
fn a_key_is_used_once_until_it_lapses() {
    let Some(db) = db("a_key_is_used_once_until_it_lapses") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    assert!(tx.use_key("nonce-1", T0 + 1_000, T0).unwrap());
    assert!(!tx.use_key("nonce-1", T0 + 1_000, T0).unwrap());
    assert!(tx.use_key("nonce-2", T0 + 1_000, T0).unwrap());
    tx.commit().unwrap();
    let other = db.store();
    let mut tx = other.begin().unwrap();
    assert!(!tx.use_key("nonce-1", T0 + 1_000, T0 + 10).unwrap());
    // Past its time it may be forgotten, and then used again.
    assert!(tx.use_key("nonce-1", T0 + 9_000, T0 + 2_000).unwrap());
    tx.commit().unwrap();
    assert_eq!(
        db.column("SELECT count(*) FROM records WHERE ns = 'key'"),
        vec!["1"]
    );
}

#[test]
fn acknowledgements_and_shown_records_put_get_and_prune() {
    let Some(db) = db("acknowledgements_and_shown_records_put_get_and_prune") else {
        return;
    };
    let s = db.store();
    let ack = |key: &str, expires_ms: i64| Ack {
        key: key.to_string(),
        scope: "session:s1".to_string(),
        by: "agent".to_string(),
        reason: Some("read it".to_string()),
        created_ms: T0,
        expires_ms,
    };
    let shown = |id: &str, scope: &str, shown_ms: i64| Shown {
        id: id.to_string(),
        binding: "b".repeat(64),
        scope: scope.to_string(),
        shown_ms,
        expires_ms: shown_ms + 1_000,
        keys: vec!["mem:1".to_string(), "sop:deploy#1".to_string()],
    };
    let mut tx = s.begin().unwrap();
    tx.put_ack(&ack("mem:1", T0 + 10)).unwrap();
    tx.put_ack(&ack("mem:2", T0 + 5_000)).unwrap();
    // Replaced, not added.
    tx.put_ack(&ack("mem:1", T0 + 20)).unwrap();
    assert_eq!(
        tx.ack("mem:1", "session:s1").unwrap(),
        Some(ack("mem:1", T0 + 20))
    );
    assert!(tx.ack("mem:1", "session:s2").unwrap().is_none());
    for (id, scope, at) in [
        ("a", "s1", T0),
        ("b", "s1", T0 + 5),
        ("c", "s2", T0 + 5),
        ("d", "s1", T0 + 5),
    ] {
        tx.put_shown(&shown(id, scope, at)).unwrap();
    }
    assert_eq!(tx.shown("b").unwrap(), Some(shown("b", "s1", T0 + 5)));
    assert!(tx.shown("zz").unwrap().is_none());
    // Newest first, the later insert first among equal times.
    let ids: Vec<String> = tx
        .shown_in_scope("s1", T0, 10)
        .unwrap()
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(ids, ["d", "b", "a"]);
    assert_eq!(tx.shown_in_scope("s1", T0 + 1, 1).unwrap().len(), 1);
    // Expired before T0 + 1003: only "a" (expires T0 + 1000).
    assert_eq!(tx.prune_shown(T0 + 1_003).unwrap(), 1);
    assert!(tx.shown("a").unwrap().is_none());
    assert!(
        tx.ack("mem:1", "session:s1").unwrap().is_none(),
        "lapsed ack pruned"
    );
    assert!(tx.ack("mem:2", "session:s1").unwrap().is_some());
    tx.commit().unwrap();
}

#[test]
fn audit_appends_scan_back_and_forth_and_verify() {
    let Some(db) = db("audit_appends_scan_back_and_forth_and_verify") else {
        return;
    };
    let s = db.store();
    assert_eq!(s.audit_head().unwrap(), None);
    assert_eq!(verify(&s).unwrap().entries, 0);
    // 600 entries: more than one batch of a scan.
    for chunk in 0..3u64 {
        let mut tx = s.begin().unwrap();
        for i in 1..=200u64 {
            let n = chunk * 200 + i;
            assert_eq!(tx.append(&event(n)).unwrap(), n);
        }
        tx.commit().unwrap();
    }
    let v = verify(&s).unwrap();
    assert_eq!((v.entries, v.head_seq), (600, 600));
    let (head_seq, head_hash) = s.audit_head().unwrap().unwrap();
    assert_eq!(head_seq, 600);
    let mut rows: Vec<AuditRow> = Vec::new();
    let head = s
        .scan_audit(598, &mut |r| {
            rows.push(r);
            true
        })
        .unwrap();
    assert_eq!(head, Some((600, head_hash)));
    assert_eq!(
        rows.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [598, 599, 600]
    );
    assert_eq!(rows[2].hash, head_hash);
    let entry: serde_json::Value = serde_json::from_str(&rows[0].entry).unwrap();
    assert_eq!(entry["data"]["n"], 598);
    // A visitor that stops early sees only what it asked for.
    let mut seen = 0;
    s.scan_audit(1, &mut |_| {
        seen += 1;
        seen < 5
    })
    .unwrap();
    assert_eq!(seen, 5);
    let mut back = Vec::new();
    s.scan_audit_back(301, &mut |r| {
        back.push(r.seq);
        back.len() < 260
    })
    .unwrap();
    assert_eq!(back.len(), 260);
    assert_eq!(back[0], 300);
    assert_eq!(*back.last().unwrap(), 41);
    let mut all_back = 0;
    s.scan_audit_back(u64::MAX, &mut |_| {
        all_back += 1;
        true
    })
    .unwrap();
    assert_eq!(all_back, 600);
    check_anchor(&s, 300, &rows_hash(&s, 300)).unwrap();
    assert!(check_anchor(&s, 300, &rows_hash(&s, 301)).is_err());
    assert!(check_anchor(&s, 700, &head_hash).is_err());

    // A second handle goes on from the same head.
    let other = db.store();
    let mut tx = other.begin().unwrap();
    assert_eq!(tx.append(&event(601)).unwrap(), 601);
    tx.commit().unwrap();
    assert_eq!(verify(&s).unwrap().entries, 601);

    // Tampering is caught where it happened.
    db.sql("UPDATE audit SET entry = replace(entry, '\"n\":77', '\"n\":78') WHERE seq = 77");
    match verify(&s) {
        Err(StoreError::Chain(b)) => assert_eq!(b.seq, 77),
        other => panic!("edited row not caught: {other:?}"),
    }
}

fn rows_hash(s: &PostgresStore, seq: u64) -> [u8; 32] {
    let mut hash = None;
    s.scan_audit(seq, &mut |r| {
        hash = Some(r.hash);
        false
    })
    .unwrap();
    hash.unwrap()
}

#[test]
fn a_transaction_dropped_without_commit_leaves_nothing() {
    let Some(db) = db("a_transaction_dropped_without_commit_leaves_nothing") else {
        return;
    };
    let s = db.store();
    {
        let mut tx = s.begin().unwrap();
        tx.put_approval(&approval(id(1), binding(1), T0)).unwrap();
        tx.append(&event(1)).unwrap();
        tx.put_memory(&mem("never committed", &[], 0.5)).unwrap();
        assert!(tx.use_key("k", T0 + 1, T0).unwrap());
        // Not visible to readers meanwhile.
        assert!(s.read_approval(&id(1)).unwrap().is_none());
    }
    assert!(s.read_approval(&id(1)).unwrap().is_none());
    assert_eq!(s.audit_head().unwrap(), None);
    assert!(s.list_memories(None, usize::MAX).unwrap().is_empty());
    assert_eq!(s.memories_rev().unwrap(), 0);
    // The lock was released: another handle writes at once, and the key
    // was never used.
    let other = db.store();
    let mut tx = other.begin().unwrap();
    assert!(tx.use_key("k", T0 + 1, T0).unwrap());
    assert_eq!(tx.append(&event(1)).unwrap(), 1);
    tx.commit().unwrap();
    assert_eq!(verify(&s).unwrap().entries, 1);
}

#[test]
fn a_failed_statement_aborts_the_transaction_and_commit_says_so() {
    let Some(db) = db("a_failed_statement_aborts_the_transaction_and_commit_says_so") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    tx.append(&event(1)).unwrap();
    // Confidence out of range: refused by the database.
    assert!(matches!(
        tx.put_memory(&mem("bad", &[], 2.0)),
        Err(StoreError::Backend { .. })
    ));
    let err = tx.commit().unwrap_err();
    assert!(err.to_string().contains("nothing was committed"), "{err}");
    assert_eq!(s.audit_head().unwrap(), None);
    // The connection went back to the pool clean.
    for _ in 0..8 {
        let mut tx = s.begin().unwrap();
        tx.append(&event(1)).unwrap();
        drop(tx);
    }
    let mut tx = s.begin().unwrap();
    assert_eq!(tx.append(&event(1)).unwrap(), 1);
    tx.commit().unwrap();
}

fn mem(text: &str, cats: &[Category], confidence: f64) -> Memory {
    Memory {
        id: 0,
        text: text.to_string(),
        categories: cats.to_vec(),
        confidence,
        source: Some("test".to_string()),
        created_ms: 0,
    }
}

#[test]
fn operators_and_bypasses_round_trip() {
    let Some(db) = db("operators_and_bypasses_round_trip") else {
        return;
    };
    let s = db.store();
    let op = |name: &str| Operator {
        name: name.to_string(),
        token_sha256: "ab".repeat(32),
        created_ms: T0,
        created_by: "admin".to_string(),
        token_issued_ms: T0,
        removed_ms: None,
        identities: vec![format!("slack:U{name}")],
    };
    let bypass = |id: &str| Bypass {
        id: id.to_string(),
        layers: vec![Layer::Knowledge],
        reason: "incident 42".to_string(),
        by: "alice".to_string(),
        started_ms: T0,
        until_ms: T0 + 60_000,
        ended: None,
    };
    assert!(s.read_operators().unwrap().is_empty());
    assert!(s.read_bypasses().unwrap().is_empty());
    let mut tx = s.begin().unwrap();
    tx.put_operator(&op("carol")).unwrap();
    tx.put_operator(&op("alice")).unwrap();
    tx.put_operator(&op("bob")).unwrap();
    let mut removed = op("bob");
    removed.removed_ms = Some(T0 + 5);
    tx.put_operator(&removed).unwrap();
    tx.put_bypass(&bypass("b1")).unwrap();
    let mut ended = bypass("b1");
    ended.ended = Some((T0 + 10, "bob".to_string()));
    tx.put_bypass(&ended).unwrap();
    tx.put_bypass(&bypass("b2")).unwrap();
    assert_eq!(tx.operators().unwrap().len(), 3);
    assert_eq!(tx.bypasses().unwrap().len(), 2);
    // Not visible outside before the commit.
    assert!(s.read_operators().unwrap().is_empty());
    tx.commit().unwrap();
    let ops = s.read_operators().unwrap();
    assert_eq!(ops, vec![op("alice"), removed, op("carol")]);
    let mut bs = s.read_bypasses().unwrap();
    bs.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(bs, vec![ended, bypass("b2")]);
}

#[test]
fn migrations_are_idempotent_and_a_newer_schema_is_refused() {
    let Some(db) = db("migrations_are_idempotent_and_a_newer_schema_is_refused") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    tx.append(&event(1)).unwrap();
    tx.commit().unwrap();
    // Connecting again (twice, at once) changes nothing.
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let url = db.url.clone();
            let schema = db.schema.clone();
            std::thread::spawn(move || PostgresStore::connect_in_schema(&url, &schema).unwrap())
        })
        .collect();
    for h in handles {
        assert_eq!(verify(&h.join().unwrap()).unwrap().entries, 1);
    }
    assert_eq!(
        db.column("SELECT version FROM schema_migrations ORDER BY version"),
        vec!["1", "2"]
    );
    db.sql("INSERT INTO schema_migrations (version) VALUES (99)");
    match PostgresStore::connect_in_schema(&db.url, &db.schema) {
        Err(StoreError::SchemaTooNew {
            found,
            known,
            location,
        }) => {
            assert_eq!((found, known), (99, 2));
            assert!(location.starts_with("postgres://"), "{location}");
        }
        other => panic!("a newer schema was accepted: {other:?}"),
    }
}

#[test]
fn the_location_names_no_password_and_bad_schema_names_are_refused() {
    let Some(db) = db("the_location_names_no_password_and_bad_schema_names_are_refused") else {
        return;
    };
    let s = db.store();
    let loc = s.location();
    assert!(loc.starts_with("postgres://"), "{loc}");
    assert!(!loc.contains('@'), "{loc}");
    assert!(!loc.contains(&db.schema), "{loc}");
    let err = PostgresStore::connect_in_schema(&db.url, "Bad; DROP").unwrap_err();
    assert!(
        err.to_string().contains("not a plain lowercase identifier"),
        "{err}"
    );
    let err = PostgresStore::connect("postgres://u:hunter2@127.0.0.1:1/x").unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(
        err.to_string().contains("postgres://127.0.0.1:1/x"),
        "{err}"
    );
}

/// Store calls from inside async tasks (a mistake, but it happens) work
/// instead of panicking, on both kinds of runtime.
#[test]
fn calls_from_async_tasks_work_on_either_runtime() {
    let Some(db) = db("calls_from_async_tasks_work_on_either_runtime") else {
        return;
    };
    let s = std::sync::Arc::new(db.store());
    let work = |s: std::sync::Arc<PostgresStore>, n: u64| async move {
        let mut tx = s.begin().unwrap();
        let seq = tx.append(&event(n)).unwrap();
        tx.commit().unwrap();
        assert!(s.audit_head().unwrap().is_some());
        seq
    };
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(current.block_on(work(s.clone(), 1)), 1);
    // Spawned as a task, and from spawn_blocking (the intended way).
    assert_eq!(
        current.block_on(current.spawn(work(s.clone(), 2))).unwrap(),
        2
    );
    let s2 = s.clone();
    let seq = current
        .block_on(current.spawn_blocking(move || {
            let mut tx = s2.begin().unwrap();
            let seq = tx.append(&event(3)).unwrap();
            tx.commit().unwrap();
            seq
        }))
        .unwrap();
    assert_eq!(seq, 3);
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(multi.block_on(multi.spawn(work(s.clone(), 4))).unwrap(), 4);
    assert_eq!(multi.block_on(work(s.clone(), 5)), 5);
    assert_eq!(verify(&*s).unwrap().entries, 5);
    // Dropping the store inside a task does not panic either.
    let last = std::sync::Arc::new(db.store());
    drop(s);
    current
        .block_on(current.spawn(async move {
            drop(last);
        }))
        .unwrap();
}

/// `connect` (no schema of its own) uses the connection's search_path: here
/// set in the URL, to a schema made beforehand.
#[test]
fn connect_uses_the_search_path_of_the_url() {
    let Some(db) = db("connect_uses_the_search_path_of_the_url") else {
        return;
    };
    db.sql(&format!("CREATE SCHEMA {}", db.schema));
    let sep = if db.url.contains('?') { '&' } else { '?' };
    let url = format!("{}{sep}options=-c%20search_path%3D{}", db.url, db.schema);
    let s = PostgresStore::connect(&url).unwrap();
    let mut tx = s.begin().unwrap();
    tx.append(&event(1)).unwrap();
    tx.commit().unwrap();
    // Already migrated: the second connect takes the quick path.
    let again = PostgresStore::connect(&url).unwrap();
    assert_eq!(verify(&again).unwrap().entries, 1);
    assert_eq!(db.column("SELECT count(*) FROM audit"), vec!["1"]);
    assert_eq!(
        db.column("SELECT version FROM schema_migrations ORDER BY version"),
        vec!["1", "2"]
    );
}

/// A decision entry's event with `data` as given.
fn decision_event(n: u64, data: serde_json::Value) -> AuditEvent {
    AuditEvent {
        ts_ms: T0 + n as i64,
        trace: format!("d{n}"),
        kind: AuditKind::Decision,
        data,
    }
}

/// The `i`th event of a mixed log: mostly decisions, their fields drawn
/// from small sets, some with a field that is no string or no call; every
/// fifth a verdict shaped like a decision (which is never one).
fn mixed_event(i: u64) -> AuditEvent {
    const DECISIONS: [&str; 3] = ["allow", "block", "escalate"];
    const TOOLS: [&str; 3] = ["exec", "read", "write"];
    const LAYERS: [&str; 2] = ["policy", "risk"];
    const AGENTS: [&str; 2] = ["claude", "codex"];
    const SESSIONS: [&str; 4] = ["s1", "s2", "s3", "s4"];
    let k = i as usize;
    let mut data = json!({
        "decision": DECISIONS[k % 3],
        "risk": format!("R{}", k % 5),
        "layer": LAYERS[k % 2],
        "call": {
            "tool": TOOLS[(k / 3) % 3],
            "agent": AGENTS[(k / 2) % 2],
            "session": SESSIONS[(k / 4) % 4],
            "params": {"n": i},
        },
    });
    if i.is_multiple_of(7) {
        data["risk"] = json!(3);
    }
    if i.is_multiple_of(11) {
        data.as_object_mut().unwrap().remove("call");
    }
    if i.is_multiple_of(13) {
        data["call"]["agent"] = json!(["claude"]);
    }
    let mut e = decision_event(i, data);
    if i.is_multiple_of(5) {
        e.kind = AuditKind::Verdict;
    }
    e
}

/// The decisions index as the store should hold it, from the log itself:
/// each decision entry's seq and fields (`DecisionFields::of_text`), a
/// field holding NUL as absent (PostgreSQL text cannot hold it).
fn index_model(s: &PostgresStore) -> Vec<(u64, DecisionFields)> {
    let mut model = Vec::new();
    s.scan_audit(1, &mut |r| {
        if let Some(f) = DecisionFields::of_text(&r.entry) {
            let [decision, tool, risk, layer, agent, session] = f
                .values()
                .map(|v| v.filter(|v| !v.contains('\0')).map(str::to_string));
            model.push((
                r.seq,
                DecisionFields {
                    decision,
                    tool,
                    risk,
                    layer,
                    agent,
                    session,
                },
            ));
        }
        true
    })
    .unwrap();
    model
}

/// What `decisions(q, before, limit)` should return (its seqs), by the
/// model.
fn expected(
    model: &[(u64, DecisionFields)],
    q: &DecisionFields,
    before: u64,
    limit: usize,
) -> Vec<u64> {
    model
        .iter()
        .rev()
        .filter(|(seq, f)| {
            *seq < before
                && q.values()
                    .iter()
                    .zip(f.values())
                    .all(|(want, have)| want.is_none() || *want == have)
        })
        .map(|(seq, _)| *seq)
        .take(limit)
        .collect()
}

/// Every combination of the fields of `sample` (64 queries, the empty one
/// included).
fn combinations(sample: &DecisionFields) -> Vec<DecisionFields> {
    (0..64u32)
        .map(|mask| {
            let pick = |bit: u32, v: &Option<String>| {
                if mask & (1 << bit) != 0 {
                    v.clone()
                } else {
                    None
                }
            };
            DecisionFields {
                decision: pick(0, &sample.decision),
                tool: pick(1, &sample.tool),
                risk: pick(2, &sample.risk),
                layer: pick(3, &sample.layer),
                agent: pick(4, &sample.agent),
                session: pick(5, &sample.session),
            }
        })
        .collect()
}

fn seqs(rows: &[AuditRow]) -> Vec<u64> {
    rows.iter().map(|r| r.seq).collect()
}

/// Checks every combination of a few entries' fields (and values no entry
/// has) against the model, whole and in pages.
fn check_decisions_against(s: &PostgresStore, model: &[(u64, DecisionFields)]) {
    let mut samples: Vec<DecisionFields> = [0, 5, 17, 40]
        .iter()
        .filter_map(|&i| model.get(i).map(|(_, f)| f.clone()))
        .collect();
    samples.push(DecisionFields {
        decision: Some("allow".into()),
        tool: Some("nope".into()),
        risk: Some("R9".into()),
        layer: Some("x".into()),
        agent: Some("nobody".into()),
        session: Some("s0".into()),
    });
    let mut checked = 0;
    for sample in &samples {
        for q in combinations(sample) {
            let all = s.decisions(&q, u64::MAX, usize::MAX).unwrap();
            assert_eq!(
                seqs(&all),
                expected(model, &q, u64::MAX, usize::MAX),
                "{q:?}"
            );
            let page = s.decisions(&q, 60, 3).unwrap();
            assert_eq!(seqs(&page), expected(model, &q, 60, 3), "{q:?}");
            checked += usize::from(!all.is_empty());
        }
    }
    assert!(checked > 100, "too few queries found anything: {checked}");
    // Counted by decision and layer, whole and up to a seq.
    for through in [u64::MAX, 60] {
        let mut want: std::collections::BTreeMap<(String, String), u64> = Default::default();
        for (_, f) in model.iter().filter(|(seq, _)| *seq <= through) {
            let key = (
                f.decision.clone().unwrap_or_default(),
                f.layer.clone().unwrap_or_default(),
            );
            *want.entry(key).or_default() += 1;
        }
        let got: std::collections::BTreeMap<(String, String), u64> = s
            .decision_counts(through)
            .unwrap()
            .into_iter()
            .map(|c| ((c.decision, c.layer), c.count))
            .collect();
        assert_eq!(got, want, "counts through {through}");
    }
}

#[test]
fn decisions_are_found_by_any_fields_newest_first_in_pages() {
    let Some(db) = db("decisions_are_found_by_any_fields_newest_first_in_pages") else {
        return;
    };
    let s = db.store();
    let other = db.store();
    // Two handles, several transactions: the index follows the log.
    for (chunk, store) in [(0u64, &s), (1, &other), (2, &s)] {
        let mut tx = store.begin().unwrap();
        for i in 1..=50u64 {
            tx.append(&mixed_event(chunk * 50 + i)).unwrap();
        }
        tx.commit().unwrap();
    }
    // A rolled-back decision leaves no index row behind.
    {
        let mut tx = s.begin().unwrap();
        tx.append(&mixed_event(1)).unwrap();
    }
    let model = index_model(&s);
    assert_eq!(model.len(), 120, "150 entries, every fifth a verdict");
    assert_eq!(
        db.column("SELECT count(*) FROM decisions"),
        vec![model.len().to_string()]
    );
    check_decisions_against(&s, &model);

    // Each field alone, by name, and combinations.
    let q = |f: fn(&mut DecisionFields)| {
        let mut q = DecisionFields::default();
        f(&mut q);
        seqs(&s.decisions(&q, u64::MAX, usize::MAX).unwrap())
    };
    let by = |pred: &dyn Fn(&DecisionFields) -> bool| -> Vec<u64> {
        model
            .iter()
            .rev()
            .filter(|(_, f)| pred(f))
            .map(|(seq, _)| *seq)
            .collect()
    };
    let is = |v: &Option<String>, want: &str| v.as_deref() == Some(want);
    for (got, want) in [
        (
            q(|q| q.decision = Some("block".into())),
            by(&|f| is(&f.decision, "block")),
        ),
        (
            q(|q| q.tool = Some("read".into())),
            by(&|f| is(&f.tool, "read")),
        ),
        (
            q(|q| q.risk = Some("R2".into())),
            by(&|f| is(&f.risk, "R2")),
        ),
        (
            q(|q| q.layer = Some("risk".into())),
            by(&|f| is(&f.layer, "risk")),
        ),
        (
            q(|q| q.agent = Some("codex".into())),
            by(&|f| is(&f.agent, "codex")),
        ),
        (
            q(|q| q.session = Some("s3".into())),
            by(&|f| is(&f.session, "s3")),
        ),
        (
            q(|q| {
                q.tool = Some("exec".into());
                q.agent = Some("claude".into());
                q.decision = Some("allow".into());
            }),
            by(&|f| is(&f.tool, "exec") && is(&f.agent, "claude") && is(&f.decision, "allow")),
        ),
    ] {
        assert!(!got.is_empty());
        assert_eq!(got, want);
    }
    // A risk that is a number is no string: indexed as absent.
    assert!(
        q(|q| q.risk = Some("3".into()))
            .iter()
            .all(|seq| !seq.is_multiple_of(7))
    );
    // Verdicts, shaped like decisions, are never returned.
    let all = s
        .decisions(&DecisionFields::default(), u64::MAX, usize::MAX)
        .unwrap();
    assert_eq!(all.len(), 120);
    assert!(all.iter().all(|r| !r.seq.is_multiple_of(5)));
    // Newest first, and the rows are the log's own.
    assert!(all.windows(2).all(|w| w[0].seq > w[1].seq));
    let mut log = std::collections::HashMap::new();
    s.scan_audit(1, &mut |r| {
        log.insert(r.seq, r);
        true
    })
    .unwrap();
    for r in &all {
        assert_eq!(Some(r), log.get(&r.seq));
        let v: serde_json::Value = serde_json::from_str(&r.entry).unwrap();
        assert_eq!(v["kind"], "decision");
    }
    // Paging back with `before` visits each once, in order.
    let q = DecisionFields {
        agent: Some("claude".into()),
        ..Default::default()
    };
    let whole = seqs(&s.decisions(&q, u64::MAX, usize::MAX).unwrap());
    let mut paged = Vec::new();
    let mut before = u64::MAX;
    loop {
        let page = s.decisions(&q, before, 7).unwrap();
        assert!(page.len() <= 7);
        let Some(last) = page.last() else { break };
        before = last.seq;
        paged.extend(seqs(&page));
    }
    assert_eq!(paged, whole);
    assert_eq!(seqs(&s.decisions(&q, whole[3], 2).unwrap()), whole[4..6]);
    // Nothing to return.
    assert!(s.decisions(&q, u64::MAX, 0).unwrap().is_empty());
    assert!(s.decisions(&q, 1, 10).unwrap().is_empty());
    assert!(s.decisions(&q, 0, 10).unwrap().is_empty());
}

#[test]
fn a_decision_holding_nul_is_logged_and_indexed_without_it() {
    let Some(db) = db("a_decision_holding_nul_is_logged_and_indexed_without_it") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    let seq = tx
        .append(&decision_event(
            1,
            json!({"decision": "block", "call": {"tool": "ex\u{0}ec", "agent": "claude",
                   "params": {"command": "cat \u{0}"}}}),
        ))
        .unwrap();
    tx.commit().unwrap();
    let by_agent = DecisionFields {
        agent: Some("claude".into()),
        ..Default::default()
    };
    assert_eq!(seqs(&s.decisions(&by_agent, u64::MAX, 10).unwrap()), [seq]);
    // PostgreSQL cannot hold the NUL: a query for it finds nothing (and
    // fails nothing).
    let by_tool = DecisionFields {
        tool: Some("ex\u{0}ec".into()),
        ..Default::default()
    };
    assert!(s.decisions(&by_tool, u64::MAX, 10).unwrap().is_empty());
    assert_eq!(verify(&s).unwrap().entries, 1);
}

/// Brings the test's schema back to version 1 (the decisions index gone)
/// and opens it again, as a newer toolgate would.
fn reopen_from_version_1(db: &Db) -> PostgresStore {
    db.sql("DROP TABLE decisions; DELETE FROM schema_migrations WHERE version = 2");
    assert_eq!(
        db.column("SELECT version FROM schema_migrations ORDER BY version"),
        vec!["1"]
    );
    let s = db.store();
    assert_eq!(
        db.column("SELECT version FROM schema_migrations ORDER BY version"),
        vec!["1", "2"]
    );
    s
}

#[test]
fn decisions_logged_before_the_index_are_backfilled() {
    let Some(db) = db("decisions_logged_before_the_index_are_backfilled") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    for i in 1..=150u64 {
        tx.append(&mixed_event(i)).unwrap();
    }
    tx.commit().unwrap();
    let model = index_model(&s);
    let indexed: Vec<_> = combinations(&model[3].1)
        .iter()
        .map(|q| s.decisions(q, u64::MAX, usize::MAX).unwrap())
        .collect();
    drop(s);
    let s = reopen_from_version_1(&db);
    // The same index the writers kept, row for row.
    let backfilled: Vec<_> = combinations(&model[3].1)
        .iter()
        .map(|q| s.decisions(q, u64::MAX, usize::MAX).unwrap())
        .collect();
    assert_eq!(backfilled, indexed);
    check_decisions_against(&s, &model);
    // And appends index on from there.
    let mut tx = s.begin().unwrap();
    let seq = tx.append(&mixed_event(151)).unwrap();
    tx.commit().unwrap();
    let all = s
        .decisions(&DecisionFields::default(), u64::MAX, 1)
        .unwrap();
    assert_eq!(seqs(&all), [seq]);
}

/// Entries holding the escape `\u0000` (which jsonb refuses) are indexed
/// one by one, each field holding NUL as absent, the rest as the writers
/// would have; the others by the quick backfill.
#[test]
fn the_backfill_indexes_entries_holding_nul() {
    let Some(db) = db("the_backfill_indexes_entries_holding_nul") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    for i in 1..=40u64 {
        tx.append(&mixed_event(i)).unwrap();
        if i.is_multiple_of(10) {
            tx.append(&decision_event(
                i,
                json!({"decision": "block", "risk": "R2",
                       "call": {"tool": format!("t{i}\u{0}"), "agent": "a\\u0000\u{0}x",
                                "session": format!("s{i}"), "params": {"c": "\u{0}\u{0}"}}}),
            ))
            .unwrap();
        }
    }
    tx.commit().unwrap();
    let model = index_model(&s);
    let all = DecisionFields::default();
    let indexed = s.decisions(&all, u64::MAX, usize::MAX).unwrap();
    assert_eq!(indexed.len(), model.len());
    drop(s);
    let s = reopen_from_version_1(&db);
    assert_eq!(s.decisions(&all, u64::MAX, usize::MAX).unwrap(), indexed);
    check_decisions_against(&s, &model);
    let by_session = DecisionFields {
        session: Some("s20".into()),
        risk: Some("R2".into()),
        ..Default::default()
    };
    let found = s.decisions(&by_session, u64::MAX, usize::MAX).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        db.column(&format!(
            "SELECT coalesce(tool, 'NULL') || '|' || coalesce(agent, 'NULL') \
             FROM decisions WHERE seq = {}",
            found[0].seq
        )),
        vec!["NULL|NULL"]
    );
}

/// An entry that is not JSON fails the quick backfill; the slow one still
/// indexes every decision (entries holding `\u0000` too), as the writers
/// would have, and takes the entry for no decision, as `of_text` does.
#[test]
fn the_backfill_reads_entries_jsonb_refuses() {
    let Some(db) = db("the_backfill_reads_entries_jsonb_refuses") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    for i in 1..=40u64 {
        tx.append(&mixed_event(i)).unwrap();
    }
    tx.append(&decision_event(
        41,
        json!({"decision": "allow", "risk": "R1",
               "call": {"tool": "t\u{0}", "agent": "a\\u0000", "session": "s\u{0}\u{0}",
                        "params": {"command": "\u{0}"}}}),
    ))
    .unwrap();
    tx.append(&decision_event(
        42,
        json!({"decision": "block", "call": {"tool": "exec", "params": "\u{0}"}}),
    ))
    .unwrap();
    tx.commit().unwrap();
    // Written by hand: not JSON; a decision with spaces and a numeric
    // tool; a kind that is no string.
    db.sql(
        r#"INSERT INTO audit (seq, hash, entry) VALUES
           (43, '\x00', 'not json {'),
           (44, '\x00', '{ "kind" : "decision", "data" : { "call": {"tool": 5, "agent": "b"}, "risk": "R4" } }'),
           (45, '\x00', '{"kind": ["decision"], "data": {"decision": "allow"}}'),
           (46, '\x00', '"decision"')"#,
    );
    let model = index_model(&s);
    assert_eq!(model.len(), 32 + 3, "{model:?}");
    assert_eq!(model.last().unwrap().0, 44);
    drop(s);
    let s = reopen_from_version_1(&db);
    check_decisions_against(&s, &model);
    let q = |f: DecisionFields| seqs(&s.decisions(&f, u64::MAX, usize::MAX).unwrap());
    assert_eq!(
        q(DecisionFields {
            agent: Some("a\\u0000".into()),
            ..Default::default()
        }),
        [41]
    );
    assert_eq!(
        q(DecisionFields {
            agent: Some("b".into()),
            risk: Some("R4".into()),
            ..Default::default()
        }),
        [44]
    );
    assert_eq!(
        db.column("SELECT coalesce(tool, 'NULL') || '|' || coalesce(session, 'NULL') FROM decisions WHERE seq = 41"),
        vec!["NULL|NULL"]
    );
    assert_eq!(
        db.column("SELECT tool FROM decisions WHERE seq = 42"),
        vec!["exec"]
    );
}

#[test]
fn append_row_takes_only_the_next_seq_and_the_copy_verifies() {
    let Some(src) = db("append_row_takes_only_the_next_seq_and_the_copy_verifies") else {
        return;
    };
    let Some(dst) = db("append_row_takes_only_the_next_seq_and_the_copy_verifies") else {
        return;
    };
    let a = src.store();
    let mut tx = a.begin().unwrap();
    for i in 1..=30u64 {
        tx.append(&mixed_event(i)).unwrap();
    }
    tx.commit().unwrap();
    let mut rows = Vec::new();
    a.scan_audit(1, &mut |r| {
        rows.push(r);
        true
    })
    .unwrap();

    let b = dst.store();
    let mut tx = b.begin().unwrap();
    // A gap is refused, and the transaction goes on.
    match tx.append_row(&rows[1]) {
        Err(StoreError::Corrupt { detail, .. }) => {
            assert!(detail.contains("audit entry 2 cannot follow 0"), "{detail}")
        }
        other => panic!("a gap was accepted: {other:?}"),
    }
    for r in &rows[..10] {
        tx.append_row(r).unwrap();
    }
    for bad in [&rows[9], &rows[11], &rows[0]] {
        let err = tx.append_row(bad).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("audit entry {} cannot follow 10", bad.seq)),
            "{err}"
        );
    }
    let huge = AuditRow {
        seq: u64::MAX,
        ..rows[10].clone()
    };
    assert!(tx.append_row(&huge).is_err());
    tx.commit().unwrap();
    // Across transactions, from the committed head.
    let mut tx = b.begin().unwrap();
    for r in &rows[10..] {
        tx.append_row(r).unwrap();
    }
    tx.commit().unwrap();
    let v = verify(&b).unwrap();
    assert_eq!((v.entries, v.head_seq), (30, 30));
    assert_eq!(b.audit_head().unwrap(), a.audit_head().unwrap());
    // The copy's decisions index is the original's.
    let all = DecisionFields::default();
    assert_eq!(
        b.decisions(&all, u64::MAX, usize::MAX).unwrap(),
        a.decisions(&all, u64::MAX, usize::MAX).unwrap()
    );
    check_decisions_against(&b, &index_model(&a));
    // Appends go on from the copied head, and the chain still verifies.
    let mut tx = b.begin().unwrap();
    assert_eq!(tx.append(&mixed_event(31)).unwrap(), 31);
    tx.commit().unwrap();
    assert_eq!(verify(&b).unwrap().entries, 31);
    assert_eq!(
        seqs(&b.decisions(&all, u64::MAX, 1).unwrap()),
        [31],
        "31 is a decision"
    );
}

#[test]
fn acks_shown_records_and_used_keys_are_listed_whole() {
    let Some(db) = db("acks_shown_records_and_used_keys_are_listed_whole") else {
        return;
    };
    let s = db.store();
    let ack = |key: &str, scope: &str, expires_ms: i64| Ack {
        key: key.to_string(),
        scope: scope.to_string(),
        by: "agent".to_string(),
        reason: None,
        created_ms: T0,
        expires_ms,
    };
    let shown = |id: &str, shown_ms: i64| Shown {
        id: id.to_string(),
        binding: "c".repeat(64),
        scope: "s1".to_string(),
        shown_ms,
        expires_ms: shown_ms + 10,
        keys: vec![format!("mem:{id}")],
    };
    let mut tx = s.begin().unwrap();
    assert!(tx.acks().unwrap().is_empty());
    assert!(tx.all_shown().unwrap().is_empty());
    assert!(tx.used_keys().unwrap().is_empty());
    let acks = [
        ack("mem:2", "session:s1", T0 - 5),
        ack("mem:1", "session:s2", T0 + 5),
        ack("mem:1", "session:s1", T0 + 9),
    ];
    for a in &acks {
        tx.put_ack(a).unwrap();
    }
    // Older first by time, insertion order among equals; expired ones too.
    for (id, at) in [("c", T0 + 2), ("a", T0), ("d", T0 + 2), ("b", T0 - 100)] {
        tx.put_shown(&shown(id, at)).unwrap();
    }
    assert!(tx.use_key("k2", T0 + 20, T0).unwrap());
    assert!(tx.use_key("k1", T0 + 10, T0).unwrap());
    tx.commit().unwrap();
    // A record that is not a key is not listed.
    let mut tx = s.begin().unwrap();
    tx.put_operator(&Operator {
        name: "alice".to_string(),
        token_sha256: "ab".repeat(32),
        created_ms: T0,
        created_by: "admin".to_string(),
        token_issued_ms: T0,
        removed_ms: None,
        identities: Vec::new(),
    })
    .unwrap();
    let mut got = tx.acks().unwrap();
    got.sort_by(|x, y| (&x.key, &x.scope).cmp(&(&y.key, &y.scope)));
    let mut want = acks.to_vec();
    want.sort_by(|x, y| (&x.key, &x.scope).cmp(&(&y.key, &y.scope)));
    assert_eq!(got, want);
    let ids: Vec<String> = tx.all_shown().unwrap().into_iter().map(|x| x.id).collect();
    assert_eq!(ids, ["b", "a", "c", "d"]);
    assert_eq!(tx.all_shown().unwrap()[1], shown("a", T0));
    let mut keys = tx.used_keys().unwrap();
    keys.sort();
    assert_eq!(
        keys,
        [("k1".to_string(), T0 + 10), ("k2".to_string(), T0 + 20)]
    );
}

#[test]
fn an_explicit_memory_id_is_never_handed_out_again() {
    let Some(db) = db("an_explicit_memory_id_is_never_handed_out_again") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    let mut m = mem("deploys go through the staging cluster first", &[], 0.9);
    m.id = 50;
    assert_eq!(tx.put_memory(&m).unwrap(), 50);
    let next = tx
        .put_memory(&mem("backups run nightly", &[], 0.8))
        .unwrap();
    assert!(next > 50, "{next}");
    // Replacing a lower id by hand leaves the sequence where it is.
    m.id = 7;
    assert_eq!(tx.put_memory(&m).unwrap(), 7);
    let after = tx.put_memory(&mem("third", &[], 0.5)).unwrap();
    assert!(after > next, "{after} after {next}");
    tx.commit().unwrap();
    let ids: Vec<u64> = s
        .list_memories(None, usize::MAX)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, [after, next, 50, 7]);

    // The first id of a fresh store, given by hand, too.
    let Some(db) = common::db("an_explicit_memory_id_is_never_handed_out_again") else {
        return;
    };
    let s = db.store();
    let mut tx = s.begin().unwrap();
    let mut m = mem("one", &[], 0.5);
    m.id = 1;
    assert_eq!(tx.put_memory(&m).unwrap(), 1);
    assert_eq!(tx.put_memory(&mem("two", &[], 0.5)).unwrap(), 2);
    tx.commit().unwrap();
}
