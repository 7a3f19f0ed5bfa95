//! Reading the audit chain back: verify it, export it.

use serde::Serialize;
use serde_json::Value;
use toolgate_core::{ChainBreak, ChainVerifier, GENESIS, Verified, hex};
use toolgate_store::{AuditRow, Store, StoreError};

/// Verifies the whole chain against its recorded head, in one snapshot.
/// `Err(StoreError::Chain(..))` names the first bad sequence number.
pub fn verify(store: &dyn Store) -> Result<Verified, StoreError> {
    let mut verifier = ChainVerifier::new();
    let mut broken: Option<ChainBreak> = None;
    let head = store.scan_audit(1, &mut |row: AuditRow| match verifier
        .push(row.seq, &row.hash, &row.entry)
    {
        Ok(()) => true,
        Err(e) => {
            broken = Some(e);
            false
        }
    })?;
    if let Some(b) = broken {
        return Err(b.into());
    }
    Ok(verifier.finish(head)?)
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
