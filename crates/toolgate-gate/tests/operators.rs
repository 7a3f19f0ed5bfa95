//! Named operators in the SQLite store: tokens issued once and stored
//! hashed, rotation and removal revoking at once, chat identities owned by
//! one person, audited changes, and single-use keys.

mod common;

use common::*;
use toolgate_gate::{
    ADMIN, ManualClock, add_operator, change_identities, operator_for_identity, operator_for_token,
    remove_operator, rotate_token, use_once, verify,
};
use toolgate_store::StoreError;

#[test]
fn a_token_is_issued_once_and_stored_only_hashed() {
    if not_sqlite("reads the SQLite file for the plain token") {
        return;
    }
    let dir = TempDir::new("ops-hash");
    let s = store(&dir.0);
    let clock = ManualClock::new(1_000);
    let (op, token) = add_operator(&*s, &clock, "Alice", &["slack:U01".into()], ADMIN).unwrap();
    assert_eq!(op.name, "alice");
    assert!(
        token.starts_with("tgo_") && token.len() == 4 + 64,
        "{token}"
    );
    let found = operator_for_token(&*s, &token).unwrap().unwrap();
    assert_eq!(found.name, "alice");
    assert_eq!(found.identities, vec!["slack:U01".to_string()]);
    // The database holds the digest, never the token.
    let bytes = std::fs::read(dir.0.join("toolgate.db")).unwrap();
    let mut all = bytes;
    if let Ok(wal) = std::fs::read(dir.0.join("toolgate.db-wal")) {
        all.extend(wal);
    }
    let hay = String::from_utf8_lossy(&all);
    assert!(!hay.contains(&token), "the token itself was stored");
    assert!(hay.contains(&op.token_sha256));
    assert!(operator_for_token(&*s, "tgo_0000").unwrap().is_none());
}

#[test]
fn rotation_and_removal_revoke_at_once() {
    let dir = TempDir::new("ops-revoke");
    let s = store(&dir.0);
    let clock = ManualClock::new(1_000);
    let (_, old) = add_operator(&*s, &clock, "bob", &[], ADMIN).unwrap();
    let (_, new) = rotate_token(&*s, &clock, "bob", ADMIN).unwrap();
    assert!(operator_for_token(&*s, &old).unwrap().is_none());
    assert_eq!(operator_for_token(&*s, &new).unwrap().unwrap().name, "bob");
    let removed = remove_operator(&*s, &clock, "bob", ADMIN).unwrap();
    assert!(removed.removed_ms.is_some());
    assert!(operator_for_token(&*s, &new).unwrap().is_none());
    // Removed is kept (the audit log names them) and may be added again.
    assert_eq!(s.read_operators().unwrap().len(), 1);
    let (_, again) = add_operator(&*s, &clock, "bob", &[], ADMIN).unwrap();
    assert!(operator_for_token(&*s, &again).unwrap().is_some());
    assert!(operator_for_token(&*s, &new).unwrap().is_none());
    let e = remove_operator(&*s, &clock, "carol", ADMIN).unwrap_err();
    assert!(matches!(e, StoreError::Operators(_)), "{e}");
    assert!(e.to_string().contains("operators list"), "{e}");
}

#[test]
fn names_and_chat_identities_belong_to_one_person() {
    let dir = TempDir::new("ops-unique");
    let s = store(&dir.0);
    let clock = ManualClock::new(1_000);
    add_operator(&*s, &clock, "alice", &["telegram:42".into()], ADMIN).unwrap();
    let e = add_operator(&*s, &clock, "ALICE", &[], ADMIN).unwrap_err();
    assert!(e.to_string().contains("already an operator"), "{e}");
    let e = add_operator(&*s, &clock, "bob", &["Telegram:42".into()], ADMIN).unwrap_err();
    assert!(e.to_string().contains("already alice's"), "{e}");
    let e = add_operator(&*s, &clock, "operator", &[], ADMIN).unwrap_err();
    assert!(e.to_string().contains("reserved"), "{e}");
    let e = add_operator(&*s, &clock, "carol", &["irc:x".into()], ADMIN).unwrap_err();
    assert!(e.to_string().contains("KIND:ID"), "{e}");
    assert_eq!(
        operator_for_identity(&*s, "telegram:42")
            .unwrap()
            .unwrap()
            .name,
        "alice"
    );
    assert!(operator_for_identity(&*s, "telegram:43").unwrap().is_none());
    assert!(operator_for_identity(&*s, "garbage").unwrap().is_none());
    remove_operator(&*s, &clock, "alice", ADMIN).unwrap();
    assert!(operator_for_identity(&*s, "telegram:42").unwrap().is_none());
    // Once alice is gone her chat account may be someone else's.
    add_operator(&*s, &clock, "bob", &["telegram:42".into()], ADMIN).unwrap();
    assert_eq!(
        operator_for_identity(&*s, "telegram:42")
            .unwrap()
            .unwrap()
            .name,
        "bob"
    );
}

#[test]
fn every_change_is_in_the_audit_chain() {
    let dir = TempDir::new("ops-audit");
    let s = store(&dir.0);
    let clock = ManualClock::new(1_000);
    let (_, token) = add_operator(&*s, &clock, "alice", &[], "tester").unwrap();
    rotate_token(&*s, &clock, "alice", "tester").unwrap();
    remove_operator(&*s, &clock, "alice", "tester").unwrap();
    let mut entries = Vec::new();
    s.scan_audit(0, &mut |row| {
        entries.push(row.entry);
        true
    })
    .unwrap();
    let changes: Vec<&String> = entries
        .iter()
        .filter(|e| e.contains("operator.changed"))
        .collect();
    assert_eq!(changes.len(), 3, "{entries:?}");
    assert!(changes[0].contains("\"added\"") && changes[2].contains("\"removed\""));
    assert!(entries.iter().all(|e| !e.contains(&token)));
    verify(&*s).unwrap();
}

#[test]
fn a_key_is_used_once_until_it_lapses() {
    let dir = TempDir::new("ops-keys");
    let s = store(&dir.0);
    let clock = ManualClock::new(1_000);
    assert!(use_once(&*s, &clock, "link:abc", 5_000).unwrap());
    assert!(!use_once(&*s, &clock, "link:abc", 5_000).unwrap());
    assert!(use_once(&*s, &clock, "link:def", 5_000).unwrap());
    // Past its time the key is forgotten when others are used.
    clock.advance(10_000);
    assert!(use_once(&*s, &clock, "link:ghi", 20_000).unwrap());
    assert!(use_once(&*s, &clock, "link:abc", 20_000).unwrap());
    // Another handle on the same database sees the same keys.
    let other = store(&dir.0);
    assert!(!use_once(&*other, &clock, "link:ghi", 20_000).unwrap());
}

#[test]
fn chat_accounts_are_linked_and_unlinked_without_a_new_token() {
    let dir = TempDir::new("ops-ids");
    let s = store(&dir.0);
    let clock = ManualClock::new(1_000);
    let (_, token) = add_operator(&*s, &clock, "alice", &[], ADMIN).unwrap();
    add_operator(&*s, &clock, "bob", &["discord:77".into()], ADMIN).unwrap();
    let op = change_identities(&*s, &clock, "alice", &["slack:U1".into()], &[], ADMIN).unwrap();
    assert_eq!(op.identities, vec!["slack:U1".to_string()]);
    assert_eq!(
        operator_for_identity(&*s, "slack:U1")
            .unwrap()
            .unwrap()
            .name,
        "alice"
    );
    let e =
        change_identities(&*s, &clock, "alice", &["discord:77".into()], &[], ADMIN).unwrap_err();
    assert!(e.to_string().contains("already bob's"), "{e}");
    change_identities(&*s, &clock, "alice", &[], &["slack:U1".into()], ADMIN).unwrap();
    assert!(operator_for_identity(&*s, "slack:U1").unwrap().is_none());
    assert!(
        operator_for_token(&*s, &token).unwrap().is_some(),
        "the token is kept"
    );
}
