//! Copying a whole store into another (`toolgate store migrate`): moving an
//! SQLite deployment onto PostgreSQL, or back, without losing a record or a
//! link of the audit chain.

use crate::operator::approval_event;
use crate::{Clock, random_hex};
use toolgate_core::{Approval, AuditKind, ChainVerifier};
use toolgate_store::{AuditRow, Store, StoreError, Tx};

/// How many audit entries pass between two progress reports.
pub const PROGRESS_EVERY: u64 = 10_000;

/// What a copy moved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    /// Approvals, every state.
    pub approvals: u64,
    /// Votes on them.
    pub votes: u64,
    /// Acknowledgements.
    pub acks: u64,
    /// Knowledge-shown records.
    pub shown: u64,
    /// Memories (with their ids).
    pub memories: u64,
    /// Named operators, removed ones included.
    pub operators: u64,
    /// Emergency bypasses.
    pub bypasses: u64,
    /// Single-use keys still remembered.
    pub keys: u64,
    /// Audit entries, copied verbatim.
    pub audit_entries: u64,
    /// The audit chain's head after the copy (the source's), if any.
    pub head: Option<(u64, [u8; 32])>,
    /// Open approvals closed on the source once the copy committed.
    pub retired: u64,
    /// Why the source's open approvals could not be closed, if they could
    /// not: the copy stands, but they can still be granted and used there.
    pub retire_failed: Option<String>,
}

/// Copies everything `from` keeps into `to`, which must hold nothing yet.
///
/// Both sides are one write transaction: `from`'s is held (and rolled back)
/// throughout, so no daemon changes the source while it is read, and `to`
/// shows nothing until all of it commits; a copy that fails leaves `to` as
/// it was. The audit chain is copied entry by entry with its numbers, hashes
/// and texts unchanged, each link checked on the way, so a broken source
/// chain stops the copy and the target verifies with the same head.
/// `progress(entries_copied)` is called every [`PROGRESS_EVERY`] entries.
///
/// Once the target has committed, every approval still open on the source
/// (pending, or approved and not yet used) is closed there, in the source's
/// transaction, as expired "moved to <target>": a one-time approval must be
/// usable once, and a daemon left running on the old store (or started on
/// it by mistake) would otherwise let the same approval run a call there
/// too. Those closings are the only thing the copy writes to the source,
/// appended to its chain after the copied head.
///
/// `from` and `to` must be different stores: the same one would wait on its
/// own write lock until the backend's lock timeout.
pub fn copy_store(
    from: &dyn Store,
    to: &dyn Store,
    clock: &dyn Clock,
    progress: &mut dyn FnMut(u64),
) -> Result<Copied, StoreError> {
    let mut target = to.begin()?;
    refuse_unless_empty(to, &mut *target)?;
    let mut source = from.begin()?;
    let mut copied = Copied::default();

    let mut approvals = source.approvals(false, usize::MAX)?;
    // Newest first as read; oldest first as written, so "the latest for this
    // call" is the same approval on both sides.
    approvals.reverse();
    for a in &approvals {
        target.put_approval(a)?;
        for v in source.votes(&a.id)? {
            target.put_vote(&v)?;
            copied.votes += 1;
        }
    }
    copied.approvals = approvals.len() as u64;
    for ack in source.acks()? {
        target.put_ack(&ack)?;
        copied.acks += 1;
    }
    for s in source.all_shown()? {
        target.put_shown(&s)?;
        copied.shown += 1;
    }
    let mut memories = from.list_memories(None, usize::MAX)?;
    memories.reverse();
    for m in &memories {
        target.put_memory(m)?;
    }
    copied.memories = memories.len() as u64;
    for op in source.operators()? {
        target.put_operator(&op)?;
        copied.operators += 1;
    }
    for b in source.bypasses()? {
        target.put_bypass(&b)?;
        copied.bypasses += 1;
    }
    for (key, until_ms) in source.used_keys()? {
        // A "now" before every key's end: the target forgets none of them.
        target.use_key(&key, until_ms, i64::MIN)?;
        copied.keys += 1;
    }

    let mut verifier = ChainVerifier::new();
    let mut failed: Option<StoreError> = None;
    let head = from.scan_audit(1, &mut |row: AuditRow| {
        let step = verifier
            .push(row.seq, &row.hash, &row.entry)
            .map_err(StoreError::from)
            .and_then(|()| target.append_row(&row));
        match step {
            Ok(()) => {
                copied.audit_entries += 1;
                if copied.audit_entries % PROGRESS_EVERY == 0 {
                    progress(copied.audit_entries);
                }
                true
            }
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    verifier.finish(head)?;
    copied.head = head;
    target.commit()?;
    match retire_open(&mut *source, &mut approvals, &to.location(), clock)
        .and_then(|n| source.commit().map(|()| n))
    {
        Ok(n) => copied.retired = n,
        Err(e) => copied.retire_failed = Some(e.to_string()),
    }
    Ok(copied)
}

/// Closes the source's open approvals (see [`copy_store`]); returns how
/// many.
fn retire_open(
    source: &mut dyn Tx,
    approvals: &mut [Approval],
    target: &str,
    clock: &dyn Clock,
) -> Result<u64, StoreError> {
    let now = clock.now_ms();
    let trace = random_hex()?;
    let why = format!("moved to {target}: decide and use it there");
    let mut n = 0;
    for a in approvals.iter_mut() {
        if a.retire(now, &why) {
            source.put_approval(a)?;
            source.append(&approval_event(&trace, now, AuditKind::ApprovalExpired, a))?;
            n += 1;
        }
    }
    Ok(n)
}

/// Refuses a target that already holds state: merging two stores would
/// give two audit chains one set of numbers.
fn refuse_unless_empty(to: &dyn Store, tx: &mut dyn Tx) -> Result<(), StoreError> {
    let mut held = Vec::new();
    if let Some((seq, _)) = to.audit_head()? {
        held.push(format!("{seq} audit entries"));
    }
    if !tx.approvals(false, 1)?.is_empty() {
        held.push("approvals".to_string());
    }
    if !to.list_memories(None, 1)?.is_empty() {
        held.push("memories".to_string());
    }
    if !tx.operators()?.is_empty() {
        held.push("operators".to_string());
    }
    if !tx.bypasses()?.is_empty() {
        held.push("bypasses".to_string());
    }
    if held.is_empty() {
        return Ok(());
    }
    Err(StoreError::Operators(format!(
        "{} already holds {}: copy into an empty store (a new database or schema, or an \
         empty directory), so the audit chain keeps one set of numbers",
        to.location(),
        held.join(", ")
    )))
}
