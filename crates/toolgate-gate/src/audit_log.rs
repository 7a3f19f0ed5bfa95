//! Reading the audit chain back: verify it (with the daemon's signed
//! checkpoints), export it; and writing those checkpoints.
//!
//! The checkpoint rule (`docs/audit.md`): with a daemon key to check
//! against, every checkpoint signed by that key must verify and vouch for
//! the entry right before it, and at most `max_unsigned` entries may follow
//! the last such checkpoint (none at all counts as every entry following).
//! A rewrite with recomputed hashes breaks every checkpoint after the
//! rewritten entry; deleting those checkpoints leaves the rewritten entries
//! unsigned, and past the limit that fails too. What the rule cannot catch:
//! a rewrite of the last `max_unsigned` entries with the checkpoints after
//! them deleted; export the head elsewhere (`--expect-head`) for those.

use crate::clock::Clock;
use crate::daemon_key::{DaemonKey, PublicKey};
use serde::Serialize;
use serde_json::Value;
use toolgate_core::{
    AuditEvent, AuditKind, ChainBreak, ChainVerifier, GENESIS, Verified, checkpoint_data,
    checkpoint_message, hex,
};
use toolgate_store::{AuditRow, Store, StoreError};

/// Most entries that may follow the last signed checkpoint before
/// `verify` fails, unless told otherwise. The daemon signs every
/// [`CHECKPOINT_EVERY`] entries and every [`CHECKPOINT_SECS`] seconds while
/// it runs, so only entries written while no daemon ran (hooks deciding
/// in-process) come near it.
pub const DEFAULT_MAX_UNSIGNED: u64 = 10_000;

/// The daemon signs a checkpoint once this many entries follow the last.
pub const CHECKPOINT_EVERY: u64 = 1_000;

/// The daemon signs a checkpoint this often (seconds) while the log grows.
pub const CHECKPOINT_SECS: u64 = 10;

/// How `verify` treats signed checkpoints.
#[derive(Debug, Clone)]
pub struct SigningRule {
    /// The daemon keys whose checkpoints count. Empty: checkpoints are
    /// read (their claims must hold) but no signature is checked and no
    /// limit applies: the chain is only as good as a head kept elsewhere.
    pub keys: Vec<PublicKey>,
    /// Most entries that may follow the last checkpoint signed by one of
    /// `keys`.
    pub max_unsigned: u64,
}

impl SigningRule {
    /// No key: the chain alone.
    pub fn unkeyed() -> SigningRule {
        SigningRule {
            keys: Vec::new(),
            max_unsigned: DEFAULT_MAX_UNSIGNED,
        }
    }

    /// Checkpoints must be signed by `key`, with the default limit.
    pub fn key(key: PublicKey) -> SigningRule {
        SigningRule {
            keys: vec![key],
            max_unsigned: DEFAULT_MAX_UNSIGNED,
        }
    }
}

/// What verification found about signed checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signatures {
    /// Whether any key was given to check with.
    pub checked: bool,
    /// Checkpoints whose signature verified with a given key.
    pub valid: u64,
    /// Checkpoints signed by keys not given (another daemon on a shared
    /// store, or a key that was replaced): not counted.
    pub other_keys: u64,
    /// The entry the last valid checkpoint vouches for (0: none).
    pub signed_through: u64,
    /// Entries after the last valid checkpoint.
    pub unsigned_tail: u64,
}

/// Verifies the whole chain against its recorded head, in one snapshot,
/// without a daemon key. `Err(StoreError::Chain(..))` names the first bad
/// sequence number.
pub fn verify(store: &dyn Store) -> Result<Verified, StoreError> {
    verify_signed(store, &SigningRule::unkeyed()).map(|(v, _)| v)
}

/// Verifies the whole chain against its recorded head and its checkpoints
/// against `rule`, in one snapshot. `Err(StoreError::Chain(..))` names the
/// first bad sequence number and what is wrong there.
pub fn verify_signed(
    store: &dyn Store,
    rule: &SigningRule,
) -> Result<(Verified, Signatures), StoreError> {
    let mut verifier = ChainVerifier::new();
    let mut broken: Option<ChainBreak> = None;
    let mut sigs = Signatures {
        checked: !rule.keys.is_empty(),
        valid: 0,
        other_keys: 0,
        signed_through: 0,
        unsigned_tail: 0,
    };
    // The last valid checkpoint entry's own number.
    let mut last_valid = 0u64;
    let head = store.scan_audit(1, &mut |row: AuditRow| {
        if let Err(e) = verifier.push(row.seq, &row.hash, &row.entry) {
            broken = Some(e);
            return false;
        }
        let Some(cp) = verifier.take_checkpoint() else {
            return true;
        };
        if rule.keys.is_empty() {
            return true;
        }
        let Some(key) = rule
            .keys
            .iter()
            .find(|k| PublicKey::parse(&cp.key).is_ok_and(|c| c == **k))
        else {
            sigs.other_keys += 1;
            return true;
        };
        if !key.verify(&cp.message(), &cp.sig) {
            broken = Some(ChainBreak {
                seq: cp.seq,
                why: format!(
                    "the checkpoint's signature does not verify with the daemon's key {key}: \
                     entries up to {} were changed after it was signed (a rewrite with \
                     recomputed hashes?)",
                    cp.covers
                ),
            });
            return false;
        }
        sigs.valid += 1;
        sigs.signed_through = cp.covers;
        last_valid = cp.seq;
        true
    })?;
    if let Some(b) = broken {
        return Err(b.into());
    }
    let verified = verifier.finish(head)?;
    sigs.unsigned_tail = verified.head_seq - last_valid;
    if sigs.checked && sigs.unsigned_tail > rule.max_unsigned {
        let since = if last_valid == 0 {
            "no entry is covered by a checkpoint signed with the daemon's key".to_string()
        } else {
            format!(
                "{} entries follow the last signed checkpoint (entry {last_valid})",
                sigs.unsigned_tail
            )
        };
        return Err(ChainBreak {
            seq: last_valid + 1,
            why: format!(
                "{since}, more than the {} allowed: checkpoints were deleted (after a rewrite?), \
                 or these entries were written while no daemon with this key ran (hooks \
                 deciding in-process). Start `toolgate serve` (it signs a checkpoint at start) \
                 and verify again, or pass --max-unsigned if you know why",
                rule.max_unsigned
            ),
        }
        .into());
    }
    Ok((verified, sigs))
}

/// Appends a checkpoint signed with `key` vouching for the chain's head as
/// it is now, unless the chain is empty or its head is already a
/// checkpoint; `why` says what prompted it (`start`, `interval`,
/// `shutdown`). Returns the checkpoint's sequence number, if one was
/// written.
pub fn write_checkpoint(
    store: &dyn Store,
    clock: &dyn Clock,
    key: &DaemonKey,
    why: &str,
) -> Result<Option<u64>, StoreError> {
    let mut tx = store.begin()?;
    // Read with the write lock held: nobody can append in between.
    let Some((covers, hash)) = store.audit_head()? else {
        return Ok(None);
    };
    if head_is_checkpoint(store, covers)? {
        return Ok(None);
    }
    let sig = key.sign(&checkpoint_message(covers, &hash));
    let event = AuditEvent {
        ts_ms: clock.now_ms(),
        trace: format!("checkpoint-{}", covers + 1),
        kind: AuditKind::Checkpoint,
        data: checkpoint_data(covers, &hash, &key.public().to_string(), &sig, why),
    };
    let seq = tx.append(&event)?;
    if seq != covers + 1 {
        // The head moved under us (a store that does not hold its lock
        // across readers): write nothing rather than a false claim.
        return Ok(None);
    }
    tx.commit()?;
    Ok(Some(seq))
}

/// Whether entry `seq` is a checkpoint (nothing new to vouch for).
fn head_is_checkpoint(store: &dyn Store, seq: u64) -> Result<bool, StoreError> {
    let mut is = false;
    store.scan_audit(seq, &mut |row: AuditRow| {
        is = row.seq == seq
            && serde_json::from_str::<Value>(&row.entry).is_ok_and(|v| {
                v.get("kind").and_then(Value::as_str) == Some(AuditKind::Checkpoint.as_str())
            });
        false
    })?;
    Ok(is)
}

/// Checks that entry `seq` is still stored with `hash` (a head recorded
/// earlier, outside the database). A chain that verifies on its own but
/// fails this was cut and re-headed, or rewritten.
pub fn check_anchor(store: &dyn Store, seq: u64, hash: &[u8; 32]) -> Result<(), StoreError> {
    let mut found: Option<[u8; 32]> = None;
    store.scan_audit(seq, &mut |row: AuditRow| {
        if row.seq == seq {
            found = Some(row.hash);
        }
        false
    })?;
    match found {
        Some(h) if &h == hash => Ok(()),
        Some(_) => Err(ChainBreak {
            seq,
            why: "the entry differs from the head recorded earlier (chain rewritten?)".to_string(),
        }
        .into()),
        None => Err(ChainBreak {
            seq,
            why: "the entry recorded earlier as a head is gone (chain cut?)".to_string(),
        }
        .into()),
    }
}

/// One exported entry: the stored entry's fields, plus its hash and the
/// previous hash, so anyone can recompute
/// `hash = SHA-256(prev ‖ canonical(entry without hash and prev))`.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedEntry {
    /// The entry as stored (seq, ts, trace, kind, data).
    #[serde(flatten)]
    pub entry: serde_json::Map<String, Value>,
    /// Its hash, hex.
    pub hash: String,
    /// The previous entry's hash, hex (64 zeros before the first).
    pub prev: String,
}

/// Visits entries from `from` on, in order, until `visit` returns `false`.
pub fn export(
    store: &dyn Store,
    from: u64,
    visit: &mut dyn FnMut(ExportedEntry) -> bool,
) -> Result<(), StoreError> {
    let mut prev: Option<[u8; 32]> = None;
    let mut first = true;
    let mut bad: Option<StoreError> = None;
    let location = store.location();
    store.scan_audit(from.saturating_sub(1).max(1), &mut |row: AuditRow| {
        // The row before `from` only supplies `prev`.
        if first && from > 1 && row.seq + 1 == from {
            prev = Some(row.hash);
            first = false;
            return true;
        }
        first = false;
        let entry = match serde_json::from_str::<Value>(&row.entry) {
            Ok(Value::Object(m)) => m,
            _ => {
                bad = Some(StoreError::Corrupt {
                    location: location.clone(),
                    detail: format!(
                        "audit entry {} is not a JSON object (run `toolgate audit verify`)",
                        row.seq
                    ),
                });
                return false;
            }
        };
        let p = prev.unwrap_or(GENESIS);
        prev = Some(row.hash);
        visit(ExportedEntry {
            entry,
            hash: hex(&row.hash),
            prev: hex(&p),
        })
    })?;
    match bad {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
