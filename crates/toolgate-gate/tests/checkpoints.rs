//! Signed audit checkpoints, on every backend: a chain rewritten with every
//! hash recomputed passes the unkeyed check but fails the daemon's
//! signatures; deleting the checkpoints to hide that fails the unsigned
//! limit; an untouched log, hooks writing in-process between daemon runs,
//! passes.
//!
//! The attacker here has the database and not the key: rewritten chains
//! are built row by row into a fresh store through `Tx::append_row`, which
//! is what anyone able to write the tables can produce.

mod common;

use common::*;
use std::sync::Arc;
use toolgate_core::{GENESIS, chain_hash};
use toolgate_gate::{DaemonKey, ManualClock, SigningRule, verify, verify_signed, write_checkpoint};
use toolgate_store::{AuditRow, Store, StoreError};

fn key() -> DaemonKey {
    DaemonKey::from_seed([7; 32])
}

fn rule(max_unsigned: u64) -> SigningRule {
    SigningRule {
        keys: vec![key().public()],
        max_unsigned,
    }
}

/// Decides `n` calls on `store` in-process, as a hook does (no key).
fn hooks(store: &Arc<dyn Store>, clock: &Arc<ManualClock>, n: usize, tag: &str) {
    let g = gate(store.clone(), "", clock.clone());
    for i in 0..n {
        g.check(&exec(&format!("ls -la {tag}{i}"))).unwrap();
    }
}

/// A daemon's run: a checkpoint at start, `n` calls with a checkpoint
/// every `every`, one at shutdown.
fn daemon_run(store: &Arc<dyn Store>, clock: &Arc<ManualClock>, n: usize, every: usize) {
    let k = key();
    write_checkpoint(&**store, &**clock, &k, "start").unwrap();
    for i in 0..n {
        hooks(store, clock, 1, &format!("d{i}-"));
        if (i + 1) % every == 0 {
            write_checkpoint(&**store, &**clock, &k, "interval").unwrap();
        }
    }
    write_checkpoint(&**store, &**clock, &k, "shutdown").unwrap();
}

fn rows(store: &dyn Store) -> Vec<AuditRow> {
    let mut out = Vec::new();
    store
        .scan_audit(1, &mut |r| {
            out.push(r);
            true
        })
        .unwrap();
    out
}

fn is_checkpoint(text: &str) -> bool {
    text.contains(r#""kind":"checkpoint""#)
}

/// A fresh store holding `texts` as a chain: renumbered from 1 and every
/// hash recomputed, as someone with write access to the tables would, and
/// every checkpoint's claim (the entry and hash it vouches for) brought in
/// line with the new chain; only its signature, which needs the key,
/// stays as it was.
fn rebuilt(tag: &str, texts: &[String]) -> (TempDir, Arc<dyn Store>) {
    let dir = TempDir::new(tag);
    let s = store(&dir.0);
    let mut tx = s.begin().unwrap();
    let mut prev = GENESIS;
    for (i, text) in texts.iter().enumerate() {
        let seq = i as u64 + 1;
        // Canonical text: `…,"seq":N,"trace":…` at the top level.
        let at = text.rfind(r#","seq":"#).unwrap();
        let end = at + text[at..].find(r#","trace":"#).unwrap();
        let mut entry = format!("{},\"seq\":{seq}{}", &text[..at], &text[end..]);
        if is_checkpoint(&entry) {
            // Data first in canonical text: `{"data":{"covers":N,"hash":"…","key":…`.
            let from = entry.find(r#""covers":"#).unwrap();
            let to = entry.find(r#","key":"#).unwrap();
            entry = format!(
                "{}\"covers\":{},\"hash\":\"{}\"{}",
                &entry[..from],
                seq - 1,
                toolgate_core::hex(&prev),
                &entry[to..]
            );
        }
        let hash = chain_hash(&prev, entry.as_bytes());
        tx.append_row(&AuditRow { seq, hash, entry }).unwrap();
        prev = hash;
    }
    tx.commit().unwrap();
    (dir, s)
}

fn broken(r: Result<impl std::fmt::Debug, StoreError>) -> (u64, String) {
    match r {
        Err(StoreError::Chain(b)) => (b.seq, b.why),
        other => panic!("not caught: {other:?}"),
    }
}

#[test]
fn checkpoints_vouch_for_the_chain_and_are_counted() {
    let dir = TempDir::new("cp-count");
    let s = store(&dir.0);
    let clock = Arc::new(ManualClock::new(T0));
    // Nothing to vouch for yet.
    assert_eq!(
        write_checkpoint(&*s, &*clock, &key(), "start").unwrap(),
        None
    );
    hooks(&s, &clock, 5, "a");
    let head = s.audit_head().unwrap().unwrap().0;
    let cp = write_checkpoint(&*s, &*clock, &key(), "start").unwrap();
    assert_eq!(cp, Some(head + 1));
    // A checkpoint right after a checkpoint adds nothing.
    assert_eq!(
        write_checkpoint(&*s, &*clock, &key(), "interval").unwrap(),
        None
    );
    hooks(&s, &clock, 3, "b");
    let (v, sig) = verify_signed(&*s, &rule(10_000)).unwrap();
    assert_eq!(sig.valid, 1);
    assert_eq!(sig.signed_through, head);
    assert_eq!(sig.unsigned_tail, v.head_seq - (head + 1));
    assert!(sig.unsigned_tail > 0);
    // Without a key, the chain alone.
    let (_, unkeyed) = verify_signed(&*s, &SigningRule::unkeyed()).unwrap();
    assert!(!unkeyed.checked && unkeyed.valid == 0);
    // Another daemon's checkpoints (another key) do not count.
    let other = SigningRule {
        keys: vec![DaemonKey::from_seed([9; 32]).public()],
        max_unsigned: 10_000,
    };
    let (_, sig) = verify_signed(&*s, &other).unwrap();
    assert_eq!((sig.valid, sig.other_keys), (0, 1));
    // … and with a strict limit, that leaves the whole log unsigned.
    let strict = SigningRule {
        max_unsigned: 2,
        ..other
    };
    let (seq, why) = broken(verify_signed(&*s, &strict));
    assert_eq!(seq, 1);
    assert!(why.contains("no entry is covered"), "{why}");
}

#[test]
fn an_untouched_log_with_hooks_writing_between_daemon_runs_passes() {
    let dir = TempDir::new("cp-runs");
    let s = store(&dir.0);
    let clock = Arc::new(ManualClock::new(T0));
    hooks(&s, &clock, 4, "before");
    daemon_run(&s, &clock, 12, 5);
    // The daemon is stopped; hooks decide in-process, on another handle.
    hooks(&store(&dir.0), &clock, 30, "between");
    daemon_run(&s, &clock, 7, 5);
    let (v, sig) = verify_signed(&*s, &rule(0)).unwrap();
    assert_eq!(sig.unsigned_tail, 0, "the shutdown checkpoint is the head");
    assert_eq!(sig.signed_through + 1, v.head_seq);
    assert!(sig.valid >= 6, "{sig:?}");
    // While the daemon is down, the hooks' entries are the unsigned tail.
    hooks(&s, &clock, 3, "after");
    let (_, sig) = verify_signed(&*s, &rule(10_000)).unwrap();
    assert!(sig.unsigned_tail > 0);
    let (_, why) = broken(verify_signed(&*s, &rule(sig.unsigned_tail - 1)));
    assert!(why.contains("Start `toolgate serve`"), "{why}");
}

#[test]
fn a_rewrite_with_every_hash_recomputed_fails_the_signatures() {
    let dir = TempDir::new("cp-rewrite");
    let s = store(&dir.0);
    let clock = Arc::new(ManualClock::new(T0));
    daemon_run(&s, &clock, 20, 4);
    let texts: Vec<String> = rows(&*s).into_iter().map(|r| r.entry).collect();
    // Rewrite one decision early in the log, then recompute everything.
    let target = texts
        .iter()
        .position(|t| t.contains("ls -la d1-0"))
        .unwrap();
    let mut forged = texts.clone();
    forged[target] = forged[target].replace("ls -la d1-0", "ls -la XXXX");
    assert_ne!(forged[target], texts[target]);
    let (_d, rewritten) = rebuilt("cp-rewritten", &forged);
    // The unkeyed chain cannot tell: every hash is right.
    assert!(verify(&*rewritten).is_ok());
    // The first checkpoint after the rewrite does not verify.
    let first_cp_after = (target..texts.len())
        .find(|&i| is_checkpoint(&texts[i]))
        .unwrap() as u64
        + 1;
    let (seq, why) = broken(verify_signed(&*rewritten, &rule(10_000)));
    assert_eq!(seq, first_cp_after);
    assert!(why.contains("signature does not verify"), "{why}");
    // The original, rebuilt the same way, still verifies.
    let (_d2, same) = rebuilt("cp-same", &texts);
    verify_signed(&*same, &rule(0)).unwrap();
}

#[test]
fn deleting_the_checkpoints_to_hide_a_rewrite_fails() {
    let dir = TempDir::new("cp-delete");
    let s = store(&dir.0);
    let clock = Arc::new(ManualClock::new(T0));
    daemon_run(&s, &clock, 30, 5);
    let texts: Vec<String> = rows(&*s).into_iter().map(|r| r.entry).collect();
    let target = texts
        .iter()
        .position(|t| t.contains("ls -la d12-0"))
        .unwrap();
    let mut forged = texts.clone();
    forged[target] = forged[target].replace("ls -la d12-0", "ls -la XXXXX");
    // Every checkpoint after the rewritten entry goes.
    let kept: Vec<String> = forged
        .iter()
        .enumerate()
        .filter(|(i, t)| *i < target || !is_checkpoint(t))
        .map(|(_, t)| t.clone())
        .collect();
    let (_d, hidden) = rebuilt("cp-hidden", &kept);
    assert!(verify(&*hidden).is_ok());
    let (_, sig) = verify_signed(&*hidden, &rule(u64::MAX)).unwrap();
    let (seq, why) = broken(verify_signed(&*hidden, &rule(sig.unsigned_tail - 1)));
    assert_eq!(
        seq,
        sig.signed_through + 2,
        "the first entry after the last good checkpoint"
    );
    assert!(why.contains("checkpoints were deleted"), "{why}");
    // Every checkpoint deleted: nothing is signed at all.
    let none: Vec<String> = forged
        .iter()
        .filter(|t| !is_checkpoint(t))
        .cloned()
        .collect();
    let (_d2, bare) = rebuilt("cp-bare", &none);
    let (seq, why) = broken(verify_signed(&*bare, &rule(10)));
    assert_eq!(seq, 1);
    assert!(why.contains("no entry is covered"), "{why}");
}

#[test]
fn a_checkpoint_moved_or_signed_by_another_key_does_not_count() {
    let dir = TempDir::new("cp-forge");
    let s = store(&dir.0);
    let clock = Arc::new(ManualClock::new(T0));
    daemon_run(&s, &clock, 6, 3);
    let texts: Vec<String> = rows(&*s).into_iter().map(|r| r.entry).collect();
    // A genuine checkpoint moved one place later claims the wrong entry.
    let cp = texts.iter().rposition(|t| is_checkpoint(t)).unwrap() - 1;
    let cp = (0..=cp).rev().find(|&i| is_checkpoint(&texts[i])).unwrap();
    let mut moved = texts.clone();
    moved.swap(cp, cp + 1);
    let (_d, m) = rebuilt("cp-moved", &moved);
    let (seq, why) = broken(verify_signed(&*m, &rule(10_000)));
    assert_eq!(seq, cp as u64 + 2);
    assert!(why.contains("signature does not verify"), "{why}");
    // Moved without its claim brought in line: the chain alone sees it.
    let mut rows_moved: Vec<AuditRow> = rows(&*s);
    let a = rows_moved.remove(cp);
    rows_moved.insert(cp + 1, a);
    let d3 = TempDir::new("cp-moved-raw");
    let s3 = store(&d3.0);
    let mut tx = s3.begin().unwrap();
    let mut prev = GENESIS;
    for (i, r) in rows_moved.iter().enumerate() {
        let seq = i as u64 + 1;
        let at = r.entry.rfind(r#","seq":"#).unwrap();
        let end = at + r.entry[at..].find(r#","trace":"#).unwrap();
        let entry = format!("{},\"seq\":{seq}{}", &r.entry[..at], &r.entry[end..]);
        let hash = chain_hash(&prev, entry.as_bytes());
        tx.append_row(&AuditRow { seq, hash, entry }).unwrap();
        prev = hash;
    }
    tx.commit().unwrap();
    let (seq, why) = broken(verify(&*s3));
    assert_eq!(seq, cp as u64 + 2);
    assert!(why.contains("vouches for entry"), "{why}");
    // Checkpoints the attacker signs with a key of their own are not the
    // daemon's: with every genuine one removed, the log is unsigned.
    let (dir2, s2) = {
        let d = TempDir::new("cp-own-key");
        let st = store(&d.0);
        (d, st)
    };
    let mine = DaemonKey::from_seed([1; 32]);
    hooks(&s2, &clock, 8, "x");
    write_checkpoint(&*s2, &*clock, &mine, "start").unwrap();
    let (_, sig) = verify_signed(&*s2, &rule(100)).unwrap();
    assert_eq!((sig.valid, sig.other_keys), (0, 1));
    let (seq, _) = broken(verify_signed(&*s2, &rule(3)));
    assert_eq!(seq, 1);
    drop(dir2);
}
