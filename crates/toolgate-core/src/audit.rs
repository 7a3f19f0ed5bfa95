//! The audit hash chain, as pure functions: every layer verdict, decision,
//! approval event and acknowledgement is an entry, secrets redacted.
//!
//! Each entry is stored as its RFC 8785 canonical JSON text
//! `{"data":…,"kind":…,"seq":N,"trace":…,"ts":…}` together with
//! `hash = SHA-256(prev_hash ‖ text)`, where `prev_hash` is the previous
//! entry's hash (32 zero bytes before the first). The store also keeps the
//! head (last sequence number and hash) beside the chain, so that cutting
//! entries off the end is caught too.
//!
//! What verification proves: nobody edited, deleted, inserted or reordered
//! entries without also rewriting every later hash and the head. Someone who
//! can rewrite the whole database can rewrite the whole chain; two things
//! catch that. The daemon signs **checkpoints**: entries of kind
//! `checkpoint` whose data is the sequence number and hash of the entry
//! just before, signed with the daemon's key ([`checkpoint_message`] is what
//! is signed); a rewrite with recomputed hashes breaks every checkpoint
//! after the rewritten entry, and deleting those leaves more unsigned
//! entries after the last good one than verification accepts (the rule is
//! in `docs/audit.md`). And the head hash can be exported somewhere else
//! (`toolgate audit verify` prints it).

use crate::approval::exact_integers;
use crate::hex::{hex, unhex};
use crate::time::rfc3339_ms;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fmt;

/// The hash before the first entry.
pub const GENESIS: [u8; 32] = [0; 32];

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum AuditKind {
    /// One layer's verdict on a call.
    Verdict,
    /// The decision returned for a call.
    Decision,
    /// A pending approval was created.
    #[strum(to_string = "approval.created")]
    ApprovalCreated,
    /// A retry re-judged an approval differently; earlier votes are stale.
    #[strum(to_string = "approval.refreshed")]
    ApprovalRefreshed,
    /// An approver voted.
    #[strum(to_string = "approval.vote")]
    ApprovalVote,
    /// The quorum was reached.
    #[strum(to_string = "approval.approved")]
    ApprovalApproved,
    /// An approver denied.
    #[strum(to_string = "approval.denied")]
    ApprovalDenied,
    /// A retry used the approval.
    #[strum(to_string = "approval.consumed")]
    ApprovalConsumed,
    /// The approval's time ran out.
    #[strum(to_string = "approval.expired")]
    ApprovalExpired,
    /// An acknowledgement was recorded.
    #[strum(to_string = "ack.created")]
    AckCreated,
    /// A daemon loaded a policy (at start or on reload), or rejected one.
    #[strum(to_string = "policy.loaded")]
    PolicyLoaded,
    /// A caller stopped waiting for an approval (`/v1/check?wait=`).
    #[strum(to_string = "wait.ended")]
    WaitEnded,
    /// Knowledge (SOP sections, memories) was shown for a call and must be
    /// acknowledged before it runs.
    #[strum(to_string = "knowledge.shown")]
    KnowledgeShown,
    /// Knowledge shown earlier was acknowledged (a retry, or explicitly).
    #[strum(to_string = "knowledge.acked")]
    KnowledgeAcked,
    /// A knowledge source failed; the layer failed open or closed as configured.
    #[strum(to_string = "knowledge.error")]
    KnowledgeError,
    /// A memory was added, imported or removed.
    #[strum(to_string = "memory.changed")]
    MemoryChanged,
    /// A named operator was added, given a new token, or removed.
    #[strum(to_string = "operator.changed")]
    OperatorChanged,
    /// An emergency bypass started, ended, or approved one approval.
    Bypass,
    /// The daemon signed the chain's head (see [`checkpoint_message`]).
    Checkpoint,
}

impl AuditKind {
    /// The dotted wire name (`decision`, `approval.created`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for AuditKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An entry before it has a place in the chain. `data` must already be
/// redacted: whatever is here is stored and shown.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// When it happened, Unix milliseconds.
    pub ts_ms: i64,
    /// Ties together everything one call or one operator action caused.
    pub trace: String,
    /// What it records.
    pub kind: AuditKind,
    /// The details.
    pub data: Value,
}

impl AuditEvent {
    /// The canonical text of this event as entry number `seq`.
    /// Integers beyond ±2^53 in `data` are stored as their exact decimal
    /// strings (RFC 8785 would round them to doubles).
    pub fn canonical(&self, seq: u64) -> String {
        let (data, _) = exact_integers(&self.data);
        let entry = json!({
            "seq": seq,
            "ts": rfc3339_ms(self.ts_ms),
            "trace": self.trace,
            "kind": self.kind.as_str(),
            "data": data,
        });
        // A `Value` built from strings, integers and an already-valid
        // `Value` always serializes.
        serde_json_canonicalizer::to_string(&entry).unwrap_or_default()
    }
}

/// The bytes a checkpoint's signature covers: the sequence number and hash
/// of the entry it vouches for, under a label no other signature of the
/// same key can share.
pub fn checkpoint_message(covers: u64, hash: &[u8; 32]) -> Vec<u8> {
    format!("toolgate audit checkpoint v1\n{covers}\n{}\n", hex(hash)).into_bytes()
}

/// The data of a checkpoint entry that vouches for entry `covers` (whose
/// hash is `hash`): the signer's public key (`ed25519:…`), the signature
/// (hex) over [`checkpoint_message`], and why it was written (`start`,
/// `interval`, `shutdown`).
pub fn checkpoint_data(covers: u64, hash: &[u8; 32], key: &str, sig: &str, why: &str) -> Value {
    json!({
        "covers": covers,
        "hash": hex(hash),
        "key": key,
        "sig": sig,
        "why": why,
    })
}

/// A checkpoint entry met while verifying, its claims already checked
/// against the chain (it vouches for the entry right before it, and that
/// entry's hash is the one it names); its signature is the caller's to
/// check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The checkpoint entry's own sequence number.
    pub seq: u64,
    /// The entry it vouches for (`seq - 1`).
    pub covers: u64,
    /// That entry's hash.
    pub hash: [u8; 32],
    /// The signer's public key as written (`ed25519:…`).
    pub key: String,
    /// The signature, hex.
    pub sig: String,
}

impl Checkpoint {
    /// What the signature must cover.
    pub fn message(&self) -> Vec<u8> {
        checkpoint_message(self.covers, &self.hash)
    }
}

/// `SHA-256(prev ‖ text)`.
pub fn chain_hash(prev: &[u8; 32], text: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(text);
    h.finalize().into()
}

/// The first thing wrong with a chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("audit chain broken at seq {seq}: {why}")]
pub struct ChainBreak {
    /// The sequence number where verification failed.
    pub seq: u64,
    /// What is wrong there, and what it suggests happened.
    pub why: String,
}

/// A chain that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Entries checked.
    pub entries: u64,
    /// The last sequence number (0 for an empty chain).
    pub head_seq: u64,
    /// The last hash ([`GENESIS`] for an empty chain).
    pub head_hash: [u8; 32],
}

/// Checks stored entries one by one, in the order of their sequence column.
#[derive(Debug, Clone)]
pub struct ChainVerifier {
    next_seq: u64,
    prev: [u8; 32],
    checkpoint: Option<Checkpoint>,
}

impl Default for ChainVerifier {
    fn default() -> Self {
        ChainVerifier {
            next_seq: 1,
            prev: GENESIS,
            checkpoint: None,
        }
    }
}

/// What verification reads of every entry: its number and kind.
#[derive(Deserialize)]
struct SeqOnly<'a> {
    seq: u64,
    #[serde(borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// A checkpoint entry's data.
#[derive(Deserialize)]
struct CheckpointData {
    covers: u64,
    hash: String,
    key: String,
    sig: String,
}

#[derive(Deserialize)]
struct CheckpointEntry {
    data: CheckpointData,
}

impl ChainVerifier {
    /// A verifier expecting entry 1.
    pub fn new() -> ChainVerifier {
        ChainVerifier::default()
    }

    /// Checks the next stored row: its sequence column, the sequence number
    /// inside its text, and its hash.
    pub fn push(&mut self, row_seq: u64, hash: &[u8; 32], text: &str) -> Result<(), ChainBreak> {
        let expected = self.next_seq;
        if row_seq != expected {
            let why = if row_seq > expected {
                if row_seq == expected + 1 {
                    format!("entry {expected} is missing (deleted?); the next stored is {row_seq}")
                } else {
                    format!(
                        "entries {expected}..{} are missing (deleted?); the next stored is {row_seq}",
                        row_seq - 1
                    )
                }
            } else {
                format!(
                    "entry numbered {row_seq} appears after {} (inserted or reordered?)",
                    expected - 1
                )
            };
            return Err(ChainBreak { seq: expected, why });
        }
        let is_checkpoint = match serde_json::from_str::<SeqOnly>(text) {
            Ok(s) if s.seq == row_seq => s.kind.as_deref() == Some(AuditKind::Checkpoint.as_str()),
            Ok(s) => {
                return Err(ChainBreak {
                    seq: row_seq,
                    why: format!(
                        "the entry stored as {row_seq} says it is {} (rows reordered or renumbered?)",
                        s.seq
                    ),
                });
            }
            Err(_) => {
                return Err(ChainBreak {
                    seq: row_seq,
                    why: "the entry text is not a valid audit entry (edited?)".to_string(),
                });
            }
        };
        let computed = chain_hash(&self.prev, text.as_bytes());
        if &computed != hash {
            let why = if row_seq == 1 {
                "its hash does not match its content (edited?)".to_string()
            } else {
                format!(
                    "its hash does not match its content and entry {}'s hash (this entry or the \
                     one before was edited?)",
                    row_seq - 1
                )
            };
            return Err(ChainBreak { seq: row_seq, why });
        }
        self.checkpoint = if is_checkpoint {
            Some(self.read_checkpoint(row_seq, text)?)
        } else {
            None
        };
        self.prev = *hash;
        self.next_seq += 1;
        Ok(())
    }

    /// The checkpoint the entry just pushed was, if it was one.
    pub fn take_checkpoint(&mut self) -> Option<Checkpoint> {
        self.checkpoint.take()
    }

    /// Reads checkpoint entry `seq` and checks its claims against the chain
    /// read so far: it vouches for the entry right before it, by that
    /// entry's hash.
    fn read_checkpoint(&self, seq: u64, text: &str) -> Result<Checkpoint, ChainBreak> {
        let bad = |why: String| ChainBreak { seq, why };
        let entry: CheckpointEntry = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "a checkpoint entry without its fields ({e}) (edited?)"
            ))
        })?;
        let d = entry.data;
        let mut hash = [0u8; 32];
        unhex(&d.hash, &mut hash)
            .ok_or_else(|| bad("a checkpoint whose hash is not 64 hex digits (edited?)".into()))?;
        if d.covers + 1 != seq || hash != self.prev {
            return Err(bad(format!(
                "a checkpoint that vouches for entry {} with hash {}…, but the entry before it \
                 is {} with hash {}… (moved or forged?)",
                d.covers,
                &d.hash.get(..12).unwrap_or(&d.hash),
                seq - 1,
                &hex(&self.prev)[..12]
            )));
        }
        Ok(Checkpoint {
            seq,
            covers: d.covers,
            hash,
            key: d.key,
            sig: d.sig,
        })
    }

    /// Ends verification against the head the store recorded (`None` when it
    /// recorded none, which is right only for an empty chain).
    pub fn finish(self, head: Option<(u64, [u8; 32])>) -> Result<Verified, ChainBreak> {
        let last = self.next_seq - 1;
        let (head_seq, head_hash) = head.unwrap_or((0, GENESIS));
        if head_seq > last {
            return Err(ChainBreak {
                seq: last + 1,
                why: format!(
                    "the head records {head_seq} entries but only {last} are stored (entries \
                     deleted from the end?)"
                ),
            });
        }
        if head_seq < last {
            return Err(ChainBreak {
                seq: head_seq + 1,
                why: format!(
                    "entries after {head_seq} are not covered by the recorded head (inserted?)"
                ),
            });
        }
        if head_hash != self.prev {
            return Err(ChainBreak {
                seq: last,
                why: "the last entry's hash differs from the recorded head (rewritten?)"
                    .to_string(),
            });
        }
        Ok(Verified {
            entries: last,
            head_seq: last,
            head_hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: i64) -> AuditEvent {
        AuditEvent {
            ts_ms: 1_700_000_000_000 + n,
            trace: format!("t{n}"),
            kind: AuditKind::Decision,
            data: json!({"n": n, "b": {"z": 1, "a": [1, 2]}}),
        }
    }

    type Row = (u64, [u8; 32], String);

    /// A chain of `n` rows as a store would keep them, and its head.
    fn chain(n: u64) -> (Vec<Row>, (u64, [u8; 32])) {
        let mut prev = GENESIS;
        let mut rows = Vec::new();
        for seq in 1..=n {
            let text = event(seq as i64).canonical(seq);
            let hash = chain_hash(&prev, text.as_bytes());
            rows.push((seq, hash, text));
            prev = hash;
        }
        (rows, (n, prev))
    }

    fn verify(rows: &[Row], head: (u64, [u8; 32])) -> Result<Verified, ChainBreak> {
        let mut v = ChainVerifier::new();
        for (seq, hash, text) in rows {
            v.push(*seq, hash, text)?;
        }
        v.finish(Some(head))
    }

    #[test]
    fn canonical_text_sorts_keys() {
        let text = event(1).canonical(7);
        assert!(
            text.starts_with(r#"{"data":{"b":{"a":[1,2],"z":1},"n":1},"kind":"decision","seq":7"#)
        );
    }

    #[test]
    fn an_intact_chain_verifies() {
        let (rows, head) = chain(10);
        let v = verify(&rows, head).unwrap();
        assert_eq!(v.entries, 10);
        assert_eq!(v.head_hash, head.1);
        assert_eq!(ChainVerifier::new().finish(None).unwrap().entries, 0);
    }

    #[test]
    fn every_kind_of_tampering_names_its_seq() {
        let (rows, head) = chain(6);
        // Edited content.
        let mut r = rows.clone();
        r[2].2 = r[2].2.replace("\"n\":3", "\"n\":4");
        assert_eq!(verify(&r, head).unwrap_err().seq, 3);
        // Edited content with its own hash recomputed: the next row breaks.
        let mut r = rows.clone();
        r[2].2 = r[2].2.replace("\"n\":3", "\"n\":4");
        r[2].1 = chain_hash(&r[1].1, r[2].2.as_bytes());
        assert_eq!(verify(&r, head).unwrap_err().seq, 4);
        // Deleted from the middle.
        let mut r = rows.clone();
        r.remove(3);
        assert_eq!(verify(&r, head).unwrap_err().seq, 4);
        // Deleted from the end.
        let mut r = rows.clone();
        r.pop();
        assert_eq!(verify(&r, head).unwrap_err().seq, 6);
        // Appended without moving the head.
        let mut r = rows.clone();
        let text = event(7).canonical(7);
        r.push((7, chain_hash(&head.1, text.as_bytes()), text));
        assert_eq!(verify(&r, head).unwrap_err().seq, 7);
        // Two rows swapped (sequence column kept).
        let mut r = rows.clone();
        let (a, b) = (r[1].clone(), r[2].clone());
        r[1] = (2, b.1, b.2);
        r[2] = (3, a.1, a.2);
        assert_eq!(verify(&r, head).unwrap_err().seq, 2);
        // Two rows swapped with their sequence column.
        let mut r = rows.clone();
        r.swap(1, 2);
        assert_eq!(verify(&r, head).unwrap_err().seq, 2);
        // Hash edited.
        let mut r = rows;
        r[0].1[0] ^= 1;
        assert_eq!(verify(&r, head).unwrap_err().seq, 1);
    }
}
