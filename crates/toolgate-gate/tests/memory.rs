//! Memories in the SQLite store: search (terms, phrases, filters, order,
//! hostile input), the revision counter across handles, audited changes,
//! all-or-nothing import, and knowledge-shown records.

mod common;

use common::*;
use std::time::Instant;
use toolgate_core::knowledge::memory::{Category, Memory, MemoryQuery};
use toolgate_gate::{ManualClock, add_memory, import_memories, remove_memory, verify};
use toolgate_store::{Shown, Store};

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

fn add(s: &dyn Store, clock: &ManualClock, text: &str, cats: &[Category], c: f64) -> u64 {
    add_memory(s, clock, mem(text, cats, c), "tester")
        .unwrap()
        .id
}

fn query(terms: &[&str]) -> MemoryQuery {
    MemoryQuery {
        terms: terms.iter().map(|t| t.to_string()).collect(),
        min_confidence: 0.0,
        categories: Vec::new(),
        limit: 100,
    }
}

fn ids(found: &[Memory]) -> Vec<u64> {
    found.iter().map(|m| m.id).collect()
}

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort();
    v
}

#[test]
fn search_by_terms_with_filters_and_limit() {
    use Category::*;
    let dir = TempDir::new("mem-search");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let a = add(
        &*s,
        &clock,
        "pg_dump locks the billing database for minutes",
        &[Gotchas],
        0.9,
    );
    let b = add(
        &*s,
        &clock,
        "Deploys to billing go through the release train",
        &[Process],
        0.6,
    );
    let c = add(
        &*s,
        &clock,
        "The billing database has no replica",
        &[Technical, Gotchas],
        0.3,
    );
    let d = add(&*s, &clock, "Nothing to do with it", &[General], 1.0);

    assert_eq!(
        sorted(ids(&s.search_memories(&query(&["billing"])).unwrap())),
        vec![a, b, c]
    );
    // Any term matches.
    assert_eq!(
        sorted(ids(&s
            .search_memories(&query(&["replica", "train", "absent"]))
            .unwrap())),
        vec![b, c]
    );
    // Whole words only.
    assert!(s.search_memories(&query(&["bill"])).unwrap().is_empty());
    // Case and diacritics do not matter.
    assert_eq!(
        ids(&s.search_memories(&query(&["BÍLLING", "nothing"])).unwrap()).len(),
        4
    );
    let _ = d;

    let mut q = query(&["billing"]);
    q.min_confidence = 0.5;
    assert_eq!(sorted(ids(&s.search_memories(&q).unwrap())), vec![a, b]);
    q.min_confidence = 0.9;
    assert_eq!(ids(&s.search_memories(&q).unwrap()), vec![a]);

    let mut q = query(&["billing"]);
    q.categories = vec![Gotchas];
    assert_eq!(sorted(ids(&s.search_memories(&q).unwrap())), vec![a, c]);
    q.categories = vec![Process, Technical];
    assert_eq!(sorted(ids(&s.search_memories(&q).unwrap())), vec![b, c]);
    q.categories = vec![Security];
    assert!(s.search_memories(&q).unwrap().is_empty());
    q.categories = vec![Technical];
    q.min_confidence = 0.5;
    assert!(s.search_memories(&q).unwrap().is_empty());

    let mut q = query(&["billing"]);
    q.limit = 2;
    assert_eq!(s.search_memories(&q).unwrap().len(), 2);
    q.limit = 0;
    assert!(s.search_memories(&q).unwrap().is_empty());
    q.limit = usize::MAX;
    assert_eq!(s.search_memories(&q).unwrap().len(), 3);

    // Memories come back whole.
    let got = s.search_memories(&query(&["replica"])).unwrap();
    assert_eq!(got[0].text, "The billing database has no replica");
    assert_eq!(got[0].categories, vec![Technical, Gotchas]);
    assert_eq!(got[0].confidence, 0.3);
    assert_eq!(got[0].source.as_deref(), Some("test"));
    assert_eq!(got[0].created_ms, T0);

    // No terms, no results.
    assert!(s.search_memories(&query(&[])).unwrap().is_empty());
    assert!(
        s.search_memories(&query(&["", "--", "  "]))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn best_bm25_match_first() {
    let dir = TempDir::new("mem-rank");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let filler = "the quick brown fox jumps over the lazy dog again and again";
    let weak = add(&*s, &clock, &format!("kubectl {filler} {filler}"), &[], 0.5);
    let strong = add(&*s, &clock, "kubectl kubectl drain", &[], 0.5);
    let both = add(
        &*s,
        &clock,
        "kubectl drain on prod needs the release manager",
        &[],
        0.5,
    );
    for i in 0..20 {
        add(&*s, &clock, &format!("unrelated note {i}"), &[], 0.5);
    }
    let found = ids(&s.search_memories(&query(&["kubectl"])).unwrap());
    assert_eq!(found.len(), 3);
    assert_eq!(
        *found.last().unwrap(),
        weak,
        "the long text mentioning it once is last"
    );
    assert_eq!(found[0], strong);
    // Matching two terms beats matching one.
    let found = ids(&s
        .search_memories(&query(&["release", "manager", "kubectl"]))
        .unwrap());
    assert_eq!(found[0], both);
}

#[test]
fn many_matches_rank_rare_terms_first_and_still_filter() {
    use Category::*;
    let dir = TempDir::new("mem-many");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    // Old and few: the only security memories, all mentioning git.
    let old: Vec<u64> = (0..3)
        .map(|i| {
            add(
                &*s,
                &clock,
                &format!("git signing key {i} is on the yubikey"),
                &[Security],
                0.9,
            )
        })
        .collect();
    let items: Vec<Memory> = (0..700)
        .map(|i| {
            let extra = if i % 100 == 7 {
                " never force push to main"
            } else {
                ""
            };
            mem(
                &format!("git note {i}{extra}"),
                &[Process],
                if i % 2 == 0 { 0.4 } else { 0.8 },
            )
        })
        .collect();
    let ids = import_memories(&*s, &clock, items, "tester").unwrap();
    let rare: Vec<u64> = ids
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 100 == 7)
        .map(|(_, id)| *id)
        .collect();
    assert_eq!(rare.len(), 7);

    // 703 match "git": the seven that also say "force push" come first.
    let mut q = query(&["git", "force push"]);
    q.limit = 7;
    assert_eq!(sorted(ids_of(&*s, &q)), sorted(rare.clone()));
    q.limit = 3;
    assert_eq!(s.search_memories(&q).unwrap().len(), 3);
    // A filter only old memories pass still finds them, past hundreds of
    // newer matches.
    let mut q = query(&["git"]);
    q.categories = vec![Security];
    assert_eq!(sorted(ids_of(&*s, &q)), old);
    // Confidence floor over the big set: every result passes it.
    let mut q = query(&["git", "note"]);
    q.min_confidence = 0.5;
    q.limit = usize::MAX;
    let got = s.search_memories(&q).unwrap();
    assert!(got.iter().all(|m| m.confidence >= 0.5));
    assert_eq!(got.len(), 350 + 3);
    q.limit = 10;
    assert_eq!(s.search_memories(&q).unwrap().len(), 10);
}

fn ids_of(s: &dyn Store, q: &MemoryQuery) -> Vec<u64> {
    ids(&s.search_memories(q).unwrap())
}

#[test]
fn phrase_terms_match_whole_token_runs() {
    let dir = TempDir::new("mem-phrase");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let flaky = add(&*s, &clock, "host 10.0.0.163 is flaky", &[], 0.5);
    let other = add(&*s, &clock, "host 10.0.0.16 is fine", &[], 0.5);
    let db = add(
        &*s,
        &clock,
        "db.example.com is the primary; never restart it",
        &[],
        0.5,
    );
    let dump = add(&*s, &clock, "pg_dump locks tables", &[], 0.5);
    let compose = add(
        &*s,
        &clock,
        "docker-compose down drops the volumes",
        &[],
        0.5,
    );
    let multi = add(&*s, &clock, "the release train leaves on Tuesday", &[], 0.5);

    assert_eq!(
        ids(&s.search_memories(&query(&["10.0.0.163"])).unwrap()),
        vec![flaky]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["10.0.0.16"])).unwrap()),
        vec![other]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["db.example.com"])).unwrap()),
        vec![db]
    );
    assert!(
        s.search_memories(&query(&["example.org"]))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["pg_dump"])).unwrap()),
        vec![dump]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["docker-compose"])).unwrap()),
        vec![compose]
    );
    // A multi-word term is a phrase: its words in order, adjacent.
    assert_eq!(
        ids(&s.search_memories(&query(&["release train"])).unwrap()),
        vec![multi]
    );
    assert!(
        s.search_memories(&query(&["train release"]))
            .unwrap()
            .is_empty()
    );

    // Free text: every word must be there, each word a phrase.
    assert_eq!(
        ids(&s.search_memories_text("host flaky", 10).unwrap()),
        vec![flaky]
    );
    assert_eq!(
        sorted(ids(&s.search_memories_text("host", 10).unwrap())),
        vec![flaky, other]
    );
    assert_eq!(
        ids(&s.search_memories_text("10.0.0.163 host", 10).unwrap()),
        vec![flaky]
    );
    assert!(
        s.search_memories_text("host 10.0.0.1", 10)
            .unwrap()
            .is_empty()
    );
    assert!(s.search_memories_text("", 10).unwrap().is_empty());
    assert!(s.search_memories_text("pg_dump", 0).unwrap().is_empty());
}

#[test]
fn hostile_terms_never_error_and_stay_literal() {
    let dir = TempDir::new("mem-hostile");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let or = add(&*s, &clock, "a or b: NEAR the x star", &[], 0.5);
    let cafe = add(&*s, &clock, "Café Zürich 東京 сервер", &[], 0.5);
    let hostile = [
        "\"",
        "\"\"",
        "*",
        "NEAR(",
        "NEAR(a b",
        "OR",
        "AND",
        "NOT",
        "-",
        "--",
        "",
        " ",
        "^",
        "x*",
        "\"a\" OR x*",
        "text:secret",
        "{text}: a",
        "(",
        ")",
        "a\0b",
        "\u{1}",
        "+",
        "'",
        "`",
        ";DROP TABLE memories;--",
        "🙂",
        "\u{10FFFD}",
        "\u{301}",
        "ﬁ",
        "𝔘𝔫𝔦",
        "\\",
        "a AND",
        "NEAR/3",
        "col:",
        "memories_fts",
        "rank",
        "bm25(",
        "%",
        "_",
        // PostgreSQL tsquery syntax, which must stay text there too.
        "''",
        "½",
        "!",
        "!a",
        "a & b",
        "a | b",
        "a <-> b",
        "a <2> b",
        "a:*",
        "a:A",
        "'a' | 'b'",
        "&",
        "|",
        "<->",
        "$1",
        "E'\\x00'",
    ];
    for t in hostile {
        let got = s.search_memories(&query(&[t]));
        assert!(got.is_ok(), "{t:?}: {got:?}");
        let got = s.search_memories_text(t, 10);
        assert!(got.is_ok(), "{t:?}: {got:?}");
    }
    let all: Vec<&str> = hostile.to_vec();
    assert!(s.search_memories(&query(&all)).is_ok());
    assert!(s.search_memories_text(&all.join(" "), 10).is_ok());
    // Query words are text: `OR` is the word "or", `NEAR(` the word "near",
    // `x*` the word "x" (no prefix search).
    assert_eq!(ids(&s.search_memories(&query(&["OR"])).unwrap()), vec![or]);
    assert_eq!(
        ids(&s.search_memories(&query(&["NEAR("])).unwrap()),
        vec![or]
    );
    assert_eq!(
        ids(&s.search_memories_text("\"a\" OR x*", 10).unwrap()),
        vec![or]
    );
    assert!(s.search_memories_text("st*", 10).unwrap().is_empty());
    assert!(s.search_memories_text("b NOT a", 10).unwrap().is_empty());
    // Unicode words, diacritics folded.
    assert_eq!(
        ids(&s.search_memories(&query(&["cafe"])).unwrap()),
        vec![cafe]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["zurich"])).unwrap()),
        vec![cafe]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["СЕРВЕР"])).unwrap()),
        vec![cafe]
    );
    assert_eq!(
        ids(&s.search_memories_text("東京", 10).unwrap()),
        vec![cafe]
    );
    // A NaN confidence floor is no floor.
    let mut q = query(&["cafe"]);
    q.min_confidence = f64::NAN;
    assert_eq!(ids(&s.search_memories(&q).unwrap()), vec![cafe]);
}

#[test]
fn rev_changes_on_every_change_seen_from_another_handle() {
    let dir = TempDir::new("mem-rev");
    let s = store(&dir.0);
    // Another process's view: its own connections to the same file.
    let other = store(&dir.0);
    let clock = ManualClock::new(T0);
    let r0 = other.memories_rev().unwrap();
    assert_eq!(s.memories_rev().unwrap(), r0);
    let id = add(&*s, &clock, "first lesson", &[], 0.5);
    let r1 = other.memories_rev().unwrap();
    assert_ne!(r1, r0);
    assert_eq!(
        ids(&other.search_memories(&query(&["lesson"])).unwrap()),
        vec![id]
    );
    // Replacing a memory changes it too, and the index follows the text.
    {
        let mut tx = s.begin().unwrap();
        let mut m = mem("second version", &[], 0.5);
        m.id = id;
        assert_eq!(tx.put_memory(&m).unwrap(), id);
        tx.commit().unwrap();
    }
    let r2 = other.memories_rev().unwrap();
    assert_ne!(r2, r1);
    assert!(
        other
            .search_memories(&query(&["lesson"]))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(&other.search_memories(&query(&["version"])).unwrap()),
        vec![id]
    );
    // An uncommitted change is not seen and does not move the revision.
    {
        let mut tx = s.begin().unwrap();
        tx.put_memory(&mem("never committed", &[], 0.5)).unwrap();
        assert_eq!(other.memories_rev().unwrap(), r2);
    }
    assert_eq!(other.memories_rev().unwrap(), r2);
    assert!(remove_memory(&*s, &clock, id, "tester").unwrap());
    let r3 = other.memories_rev().unwrap();
    assert_ne!(r3, r2);
    assert!(
        other
            .search_memories(&query(&["version"]))
            .unwrap()
            .is_empty()
    );
    // Removing what is not there changes nothing.
    assert!(!remove_memory(&*s, &clock, id, "tester").unwrap());
    assert!(!remove_memory(&*s, &clock, u64::MAX, "tester").unwrap());
    assert_eq!(other.memories_rev().unwrap(), r3);
    assert_eq!(s.memories_rev().unwrap(), r3);
}

/// SQLite's own check of an external-content index against its table:
/// every row indexed with its current text, nothing else.
fn index_is_consistent(dir: &std::path::Path) -> Result<(), String> {
    // The check is of SQLite's FTS5 index; other engines keep their own.
    if common::backend() != "sqlite" {
        return Ok(());
    }
    let conn = rusqlite::Connection::open(dir.join("toolgate.db")).unwrap();
    conn.execute(
        "INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)",
        [],
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[test]
fn the_text_index_follows_every_kind_of_write() {
    let dir = TempDir::new("mem-index");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let a = add(&*s, &clock, "alpha lesson", &[], 0.5);
    let b = add(&*s, &clock, "beta lesson", &[], 0.5);
    index_is_consistent(&dir.0).unwrap();
    // An upsert of a new id, then of an existing one with other text.
    {
        let mut tx = s.begin().unwrap();
        let mut m = mem("gamma note", &[], 0.5);
        m.id = 77;
        assert_eq!(tx.put_memory(&m).unwrap(), 77);
        let mut m = mem("alpha rewritten", &[], 0.5);
        m.id = a;
        tx.put_memory(&m).unwrap();
        tx.commit().unwrap();
    }
    index_is_consistent(&dir.0).unwrap();
    assert_eq!(
        ids(&s.search_memories(&query(&["lesson"])).unwrap()),
        vec![b]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["gamma"])).unwrap()),
        vec![77]
    );
    assert_eq!(
        ids(&s.search_memories(&query(&["rewritten"])).unwrap()),
        vec![a]
    );
    // A rolled-back write leaves the index as it was.
    {
        let mut tx = s.begin().unwrap();
        tx.put_memory(&mem("never kept", &[], 0.5)).unwrap();
        assert!(tx.delete_memory(b).unwrap());
    }
    index_is_consistent(&dir.0).unwrap();
    assert!(s.search_memories(&query(&["kept"])).unwrap().is_empty());
    assert_eq!(ids(&s.search_memories(&query(&["beta"])).unwrap()), vec![b]);
    assert!(remove_memory(&*s, &clock, b, "tester").unwrap());
    assert!(!remove_memory(&*s, &clock, b, "tester").unwrap());
    index_is_consistent(&dir.0).unwrap();
    assert!(s.search_memories(&query(&["beta"])).unwrap().is_empty());
}

/// A database from before migration 3 kept its index with triggers; once
/// migrated they are gone (left in place, every write would be indexed
/// twice) and the store keeps the index itself.
#[test]
fn a_database_with_the_old_triggers_is_migrated() {
    if not_sqlite("migrates an old SQLite schema") {
        return;
    }
    let dir = TempDir::new("mem-migrate");
    let clock = ManualClock::new(T0);
    let kept = {
        let s = store(&dir.0);
        add(&*s, &clock, "written before the upgrade", &[], 0.5)
    };
    {
        let conn = rusqlite::Connection::open(dir.0.join("toolgate.db")).unwrap();
        conn.execute_batch(
            "CREATE TRIGGER memories_inserted AFTER INSERT ON memories BEGIN
                INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
                UPDATE memory_rev SET rev = rev + 1 WHERE id = 1;
             END;
             CREATE TRIGGER memories_deleted AFTER DELETE ON memories BEGIN
                INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
                UPDATE memory_rev SET rev = rev + 1 WHERE id = 1;
             END;
             CREATE TRIGGER memories_updated AFTER UPDATE ON memories BEGIN
                INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
                INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
                UPDATE memory_rev SET rev = rev + 1 WHERE id = 1;
             END;
             DROP TABLE records;
             DROP TABLE decisions;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let s = store(&dir.0);
    let conn = rusqlite::Connection::open(dir.0.join("toolgate.db")).unwrap();
    let triggers: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(triggers, 0);
    let rev = s.memories_rev().unwrap();
    let added = add(&*s, &clock, "written after the upgrade", &[], 0.5);
    assert_eq!(
        s.memories_rev().unwrap(),
        rev + 1,
        "one write, one revision"
    );
    index_is_consistent(&dir.0).unwrap();
    assert_eq!(
        sorted(ids(&s.search_memories(&query(&["written"])).unwrap())),
        sorted(vec![kept, added])
    );
}

#[test]
fn searches_run_side_by_side_with_a_writer() {
    let dir = TempDir::new("mem-threads");
    let s = store(&dir.0);
    let clock = std::sync::Arc::new(ManualClock::new(T0));
    for i in 0..100 {
        add(&*s, &clock, &format!("kubectl drain node{i}"), &[], 0.5);
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..6)
        .map(|_| {
            let s = s.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut last = 0;
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || n < 50 {
                    let rev = s.memories_rev().unwrap();
                    assert!(rev >= last, "the revision never goes back");
                    last = rev;
                    let found = s.search_memories(&query(&["kubectl", "node7"])).unwrap();
                    assert!(found.len() >= 100, "{}", found.len());
                    assert!(found[0].text.ends_with("node7"), "{}", found[0].text);
                    n += 1;
                }
            })
        })
        .collect();
    for i in 0..50 {
        add(&*s, &clock, &format!("kubectl cordon extra{i}"), &[], 0.5);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(s.search_memories(&query(&["cordon"])).unwrap().len(), 50);
}

#[test]
fn list_newest_first_with_category_filter() {
    use Category::*;
    let dir = TempDir::new("mem-list");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let a = add(&*s, &clock, "one", &[Process], 0.5);
    let b = add(&*s, &clock, "two", &[Gotchas, Security], 0.5);
    let c = add(&*s, &clock, "three", &[], 0.5);
    assert_eq!(
        ids(&s.list_memories(None, usize::MAX).unwrap()),
        vec![c, b, a]
    );
    assert_eq!(ids(&s.list_memories(None, 2).unwrap()), vec![c, b]);
    assert_eq!(ids(&s.list_memories(Some(Security), 10).unwrap()), vec![b]);
    assert_eq!(ids(&s.list_memories(Some(General), 10).unwrap()), vec![c]);
    assert!(s.list_memories(Some(Credentials), 10).unwrap().is_empty());
    let listed = s.list_memories(Some(Gotchas), 10).unwrap();
    assert_eq!(listed[0].categories, vec![Security, Gotchas]);
}

#[test]
fn import_is_all_or_nothing_and_audited_once() {
    let dir = TempDir::new("mem-import");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let items: Vec<Memory> = (0..500)
        .map(|i| mem(&format!("lesson number {i}"), &[Category::Process], 0.7))
        .collect();
    let head_before = s.audit_head().unwrap();
    let got = import_memories(&*s, &clock, items.clone(), "tester").unwrap();
    assert_eq!(got.len(), 500);
    assert_eq!(got, (got[0]..got[0] + 500).collect::<Vec<_>>());
    let head = s.audit_head().unwrap().unwrap();
    assert_eq!(
        head.0,
        head_before.map_or(0, |h| h.0) + 1,
        "one audit event"
    );
    assert_eq!(s.list_memories(None, usize::MAX).unwrap().len(), 500);
    let rev = s.memories_rev().unwrap();

    // One bad memory (confidence out of range) in the middle: nothing stays.
    let mut bad = items.clone();
    bad[250].confidence = 7.0;
    assert!(import_memories(&*s, &clock, bad, "tester").is_err());
    let mut bad = items;
    bad[499].text = String::new();
    assert!(import_memories(&*s, &clock, bad, "tester").is_err());
    assert_eq!(s.list_memories(None, usize::MAX).unwrap().len(), 500);
    assert_eq!(s.memories_rev().unwrap(), rev);
    assert_eq!(s.audit_head().unwrap().unwrap(), head);
    assert!(
        import_memories(&*s, &clock, Vec::new(), "tester")
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.audit_head().unwrap().unwrap(), head);

    let event = last_audit_entry(&*s);
    assert_eq!(event["kind"], "memory.changed");
    assert_eq!(event["data"]["op"], "imported");
    assert_eq!(event["data"]["count"], 500);
    assert_eq!(event["data"]["ids"], serde_json::json!([got[0], got[499]]));
    verify(&*s).unwrap();
}

fn last_audit_entry(s: &dyn Store) -> serde_json::Value {
    let mut last = String::new();
    s.scan_audit(1, &mut |row| {
        last = row.entry;
        true
    })
    .unwrap();
    serde_json::from_str(&last).unwrap()
}

fn audit_text(s: &dyn Store) -> String {
    let mut all = String::new();
    s.scan_audit(1, &mut |row| {
        all.push_str(&row.entry);
        all.push('\n');
        true
    })
    .unwrap();
    all
}

#[test]
fn audit_is_redacted_and_never_holds_credentials() {
    let dir = TempDir::new("mem-audit");
    let s = store(&dir.0);
    let clock = ManualClock::new(T0);
    let secret = "the prod db password is Tr0ub4dor-and-3-horses-correct";
    let mut cred = mem(secret, &[Category::Credentials, Category::Technical], 0.8);
    cred.source = Some("vault handbook".into());
    let cred = add_memory(&*s, &clock, cred, "alice").unwrap();
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let plain = add_memory(
        &*s,
        &clock,
        mem(
            &format!("the CI token {token} was rotated"),
            &[Category::Security],
            0.5,
        ),
        "bob",
    )
    .unwrap();
    // The store keeps the text as given (it is knowledge) …
    let found = s.search_memories(&query(&["Tr0ub4dor"])).unwrap();
    assert_eq!(found[0].text, secret);
    assert_eq!(s.search_memories(&query(&[token])).unwrap()[0].id, plain.id);
    // … the audit log does not.
    let log = audit_text(&*s);
    assert!(!log.contains("Tr0ub4dor"), "{log}");
    assert!(!log.contains("horses"), "{log}");
    assert!(!log.contains(token), "{log}");
    assert!(log.contains("[credentials withheld]"), "{log}");
    assert!(log.contains("was rotated"), "{log}");
    remove_memory(&*s, &clock, cred.id, "alice").unwrap();
    let last = last_audit_entry(&*s);
    assert_eq!(last["data"]["op"], "removed");
    assert_eq!(last["data"]["id"], cred.id);
    assert_eq!(last["data"]["by"], "alice");
    let v = verify(&*s).unwrap();
    assert_eq!(v.entries, 3);

    let mut first = None;
    s.scan_audit(1, &mut |row| {
        first = Some(row.entry);
        false
    })
    .unwrap();
    let first: serde_json::Value = serde_json::from_str(&first.unwrap()).unwrap();
    assert_eq!(first["kind"], "memory.changed");
    let d = &first["data"];
    assert_eq!(d["op"], "added");
    assert_eq!(d["id"], cred.id);
    assert_eq!(
        d["categories"],
        serde_json::json!(["technical", "credentials"])
    );
    assert_eq!(d["confidence"], 0.8);
    assert_eq!(d["source"], "vault handbook");
    assert_eq!(d["by"], "alice");
}

#[test]
fn shown_records_put_get_newest_and_prune() {
    let dir = TempDir::new("mem-shown");
    let s = store(&dir.0);
    let shown = |id: &str, binding: &str, scope: &str, at: i64| Shown {
        id: id.to_string(),
        binding: binding.to_string(),
        scope: scope.to_string(),
        shown_ms: at,
        expires_ms: at + 1_000,
        keys: vec!["mem:1".to_string(), format!("sop:{id}")],
    };
    let mut tx = s.begin().unwrap();
    tx.put_shown(&shown("a", "b1", "s1", T0)).unwrap();
    tx.put_shown(&shown("b", "b1", "s1", T0 + 10)).unwrap();
    tx.put_shown(&shown("c", "b1", "s2", T0 + 20)).unwrap();
    tx.put_shown(&shown("d", "b2", "s1", T0 + 30)).unwrap();
    tx.commit().unwrap();

    let mut tx = s.begin().unwrap();
    assert_eq!(tx.shown("a").unwrap(), Some(shown("a", "b1", "s1", T0)));
    assert_eq!(tx.shown("zz").unwrap(), None);
    let ids = |v: Vec<Shown>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(tx.shown_in_scope("s1", T0, 10).unwrap()),
        ["d", "b", "a"]
    );
    assert_eq!(
        ids(tx.shown_in_scope("s1", T0 + 10, 10).unwrap()),
        ["d", "b"]
    );
    assert_eq!(ids(tx.shown_in_scope("s1", T0, 1).unwrap()), ["d"]);
    assert_eq!(
        ids(tx.shown_in_scope("s1", T0 + 31, 10).unwrap()),
        Vec::<String>::new()
    );
    assert_eq!(ids(tx.shown_in_scope("s2", 0, 10).unwrap()), ["c"]);
    // Replacing by id.
    let mut again = shown("a", "b1", "s1", T0 + 50);
    again.keys = vec![];
    tx.put_shown(&again).unwrap();
    assert_eq!(tx.shown_in_scope("s1", 0, 10).unwrap()[0], again);
    // Rolled back when dropped.
    drop(tx);
    let mut tx = s.begin().unwrap();
    assert_eq!(
        ids(tx.shown_in_scope("s1", 0, 10).unwrap()),
        ["d", "b", "a"]
    );
    // Prune: strictly before now.
    assert_eq!(tx.prune_shown(T0 + 1_000).unwrap(), 0);
    assert_eq!(tx.prune_shown(T0 + 1_011).unwrap(), 2);
    assert_eq!(tx.shown("a").unwrap(), None);
    assert_eq!(tx.shown("b").unwrap(), None);
    assert!(tx.shown("c").unwrap().is_some());
    tx.commit().unwrap();
    let mut tx = s.begin().unwrap();
    assert_eq!(tx.prune_shown(i64::MAX).unwrap(), 2);
    tx.commit().unwrap();
    verify(&*s).unwrap();
}

/// Search latency with 10,000 memories and 8 terms, as the decision path
/// runs it (memories_rev, then search_memories), on two made-up corpora:
/// "zipf" (word frequencies like prose; each domain word in 2-4% of the
/// memories, an IP in 10%) and "dense" (every memory has an IP and ~3 of 30
/// domain words: 8 terms match a third of the store). Run with
/// `cargo test --release -p toolgate-store --test memory -- --ignored
/// --nocapture search_speed`.
#[test]
#[ignore = "timing; run in release"]
fn search_speed() {
    let words = [
        "billing",
        "postgres",
        "deploy",
        "kubectl",
        "replica",
        "backup",
        "nginx",
        "redis",
        "terraform",
        "vault",
        "docker",
        "ssh",
        "cron",
        "disk",
        "latency",
        "queue",
        "kafka",
        "grafana",
        "alert",
        "restart",
        "migration",
        "schema",
        "cache",
        "token",
        "rotate",
        "staging",
        "prod",
        "canary",
        "rollback",
        "helm",
    ];
    let typical: Vec<String> = [
        "kubectl",
        "prod",
        "10.0.3.17",
        "db.example.com",
        "pg_dump",
        "billing",
        "w42",
        "helm",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let rare: Vec<String> = [
        "10.0.3.17",
        "db7.example.com",
        "pg_dump",
        "w4242",
        "w4243",
        "x",
        "y",
        "z",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    for corpus in ["zipf", "dense"] {
        let dir = TempDir::new("mem-speed");
        let s = store(&dir.0);
        let clock = ManualClock::new(T0);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let items: Vec<Memory> = (0..10_000)
            .map(|i| {
                let n = 8 + next() % 20;
                let text: Vec<String> = (0..n)
                    .map(|_| {
                        let r = next();
                        if corpus == "zipf" {
                            let u = (r % 1_000_000) as f64 / 1e6;
                            let rank = 5000f64.powf(u) as usize;
                            if (50..80).contains(&rank) {
                                words[rank - 50].to_string()
                            } else {
                                format!("w{rank}")
                            }
                        } else if r % 5 == 0 {
                            words[(r / 5 % words.len() as u64) as usize].to_string()
                        } else {
                            format!("w{}", r % 5_000)
                        }
                    })
                    .collect();
                let mut text = text.join(" ");
                if corpus == "dense" || i % 10 == 0 {
                    text.push_str(&format!(" host 10.0.{}.{} is slow", i / 250, i % 250));
                }
                if i % 20 == 1 {
                    text.push_str(&format!(" see db{}.example.com", i % 97));
                }
                mem(&text, &[Category::ALL[i % 6]], 0.5)
            })
            .collect();
        import_memories(&*s, &clock, items, "tester").unwrap();
        for (name, terms) in [("typical terms", &typical), ("rare terms", &rare)] {
            let q = MemoryQuery {
                terms: terms.clone(),
                min_confidence: 0.3,
                categories: vec![Category::Gotchas, Category::Process, Category::Technical],
                limit: 5,
            };
            for _ in 0..50 {
                s.search_memories(&q).unwrap();
            }
            let mut times = Vec::new();
            for _ in 0..1000 {
                let t = Instant::now();
                let _ = s.memories_rev().unwrap();
                let _found = s.search_memories(&q).unwrap();
                times.push(t.elapsed());
            }
            times.sort();
            let matched = {
                let mut all = q.clone();
                all.limit = usize::MAX;
                all.categories.clear();
                all.min_confidence = 0.0;
                s.search_memories(&all).unwrap().len()
            };
            println!(
                "{corpus}, {name} ({matched} of 10000 match): p50 {:?} p99 {:?} max {:?}",
                times[times.len() / 2],
                times[times.len() * 99 / 100],
                times[times.len() - 1]
            );
        }
        let mut times = Vec::new();
        for _ in 0..10_000 {
            let t = Instant::now();
            let _ = s.memories_rev().unwrap();
            times.push(t.elapsed());
        }
        times.sort();
        println!(
            "{corpus}, memories_rev: p50 {:?} p99 {:?}",
            times[times.len() / 2],
            times[times.len() * 99 / 100]
        );
    }
}
