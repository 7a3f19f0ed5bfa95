//! Changing memories, each change in one audited transaction, and the
//! record of knowledge shown for a call until it is acknowledged.
//!
//! A memory's text is stored as given (it is knowledge, not a record of what
//! happened); only what goes into the audit log is redacted, and the text of
//! a `credentials` memory never goes there at all.

use crate::{Clock, random_hex};
use serde_json::{Value, json};
use toolgate_core::knowledge::memory::{Category, Memory};
use toolgate_core::{AuditEvent, AuditKind, bound_size, redact_text};
use toolgate_store::{Store, StoreError};

/// What the audit log records instead of a credentials memory's text.
const WITHHELD: &str = "[credentials withheld]";

/// Adds a memory (its `id` is ignored: a new one is assigned; categories
/// are sorted, `general` when none; a zero `created_ms` is set to now) and
/// records it in the audit log, in one transaction. Returns the memory as
/// stored, with its id. The caller validates it first
/// (`MemoryInput::validate`); a confidence outside 0..=1 or an empty text
/// is refused by the database.
pub fn add_memory(
    store: &dyn Store,
    clock: &dyn Clock,
    mut m: Memory,
    by: &str,
) -> Result<Memory, StoreError> {
    let now = clock.now_ms();
    prepare(&mut m, now);
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    m.id = tx.put_memory(&m)?;
    tx.append(&event(&trace, now, added_data(&m, by)))?;
    tx.commit()?;
    Ok(m)
}

/// Adds every memory in `items` in one transaction (all or none: any
/// failure stores nothing), with one audit event for the lot. Ids are
/// ignored and assigned in order; a zero `created_ms` is set to now.
/// Returns the new ids in the order of `items`. Nothing is written (not
/// even an audit event) when `items` is empty.
pub fn import_memories(
    store: &dyn Store,
    clock: &dyn Clock,
    items: Vec<Memory>,
    by: &str,
) -> Result<Vec<u64>, StoreError> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let mut ids = Vec::with_capacity(items.len());
    for mut m in items {
        prepare(&mut m, now);
        ids.push(tx.put_memory(&m)?);
    }
    let first = ids.first().copied().unwrap_or_default();
    let last = ids.last().copied().unwrap_or_default();
    let data = json!({
        "op": "imported",
        "count": ids.len(),
        "ids": [first, last],
        "by": redact_text(by),
    });
    tx.append(&event(&trace, now, data))?;
    tx.commit()?;
    Ok(ids)
}

/// Removes the memory with this id and records it in the audit log, in one
/// transaction. `false` (and nothing recorded) when there is no such
/// memory.
pub fn remove_memory(
    store: &dyn Store,
    clock: &dyn Clock,
    id: u64,
    by: &str,
) -> Result<bool, StoreError> {
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    if !tx.delete_memory(id)? {
        return Ok(false);
    }
    let data = json!({"op": "removed", "id": id, "by": redact_text(by)});
    tx.append(&event(&trace, now, data))?;
    tx.commit()?;
    Ok(true)
}

/// A memory as it will be stored: no id yet, categories sorted without
/// repeats (`general` when none), stamped `now` unless it has a time.
fn prepare(m: &mut Memory, now: i64) {
    m.id = 0;
    m.categories.sort();
    m.categories.dedup();
    if m.categories.is_empty() {
        m.categories.push(Category::General);
    }
    if m.created_ms == 0 {
        m.created_ms = now;
    }
}

/// The audit data for an added memory: redacted, a credentials memory's
/// text withheld, long strings bounded.
fn added_data(m: &Memory, by: &str) -> Value {
    let text = if m.is_credentials() {
        WITHHELD.into()
    } else {
        redact_text(&m.text)
    };
    bound_size(json!({
        "op": "added",
        "id": m.id,
        "categories": m.categories,
        "confidence": m.confidence,
        "source": m.source.as_deref().map(redact_text),
        "by": redact_text(by),
        "text": text,
    }))
}

fn event(trace: &str, now: i64, data: Value) -> AuditEvent {
    AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind: AuditKind::MemoryChanged,
        data,
    }
}
