//! The contract between toolgate and the database that keeps its durable
//! state: approvals, votes, acknowledgements, memories, operators, bypasses
//! and the hash-chained audit log. [`Store`] and [`Tx`] say what every
//! backend must guarantee (the embedded SQLite one in
//! `toolgate-store-sqlite`, the shared PostgreSQL one in
//! `toolgate-store-postgres`); the services that decide and vote with them
//! live in `toolgate-gate`, and name no engine.
//!
//! What a backend must hold, whatever its engine:
//! - **One writer at a time.** While a [`Tx`] is open, no other transaction
//!   of any process sharing the store can write, so check-then-update
//!   sequences (consuming a one-time approval, counting a quorum) are
//!   atomic across every daemon.
//! - **One global order of audit appends.** Each append gets the next
//!   sequence number and is chained to the entry before it; numbers have no
//!   gaps and a committed entry never changes.
//! - **Durable before visible.** A commit returns only once what it wrote
//!   survives a crash (per the backend's sync setting), and readers never
//!   see a half-done transaction.
//! - **Relevance-ordered memory search**, every search term literal text,
//!   never the engine's query syntax.
#![forbid(unsafe_code)]

mod error;
mod rows;

pub use error::StoreError;
pub use rows::{Ack, Bypass, DecisionCount, DecisionFields, Operator, Shown};

use std::sync::Arc;

use toolgate_core::AuditEvent;
use toolgate_core::knowledge::memory::{Category, Memory, MemoryQuery};
use toolgate_core::{Approval, ApprovalId, BindingHash, Vote};

/// One stored audit row, as kept: its number, its hash, and its canonical
/// text (see `toolgate_core::audit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// The sequence number column.
    pub seq: u64,
    /// The stored hash.
    pub hash: [u8; 32],
    /// The canonical JSON text of the entry.
    pub entry: String,
}

/// Durable state. Writes happen inside a [`Tx`], and transactions are
/// serialized: while one is open no other (in this process or another
/// daemon on the same store) can write, so check-then-update sequences such
/// as consuming an approval are atomic.
pub trait Store: Send + Sync {
    /// Opens a write transaction, waiting for other writers to finish.
    fn begin(&self) -> Result<Box<dyn Tx + '_>, StoreError>;

    /// Visits audit rows with `seq >= from`, in order, until `visit` returns
    /// `false`, and returns the head recorded in the same snapshot. Reads a
    /// consistent snapshot without blocking writers.
    fn scan_audit(
        &self,
        from: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<Option<(u64, [u8; 32])>, StoreError>;

    /// Visits audit rows with `seq < before`, newest first, until `visit`
    /// returns `false` (for paging back through recent history). Reads a
    /// consistent snapshot without blocking writers.
    fn scan_audit_back(
        &self,
        before: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<(), StoreError>;

    /// The recorded head of the audit chain (last seq and hash), read in the
    /// same snapshot as a scan started now would see; `None` when empty.
    fn audit_head(&self) -> Result<Option<(u64, [u8; 32])>, StoreError>;

    /// The approval with this id as last committed, read without taking the
    /// write lock (for polling; expiry is not applied).
    fn read_approval(&self, id: &ApprovalId) -> Result<Option<Approval>, StoreError>;

    /// How many approvals are open (pending or approved), read without
    /// taking the write lock.
    fn count_open_approvals(&self) -> Result<u64, StoreError>;

    /// Ids of approvals (any state) that start with `prefix`, at most
    /// `limit`, in id order: how a person's shortened id is resolved.
    fn approval_ids_starting(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError>;

    /// The audit rows of decisions matching `q` with `seq < before`, newest
    /// first, at most `limit`, found through an index kept as entries are
    /// appended (its cost grows with the rows read, not the log). An entry is
    /// a decision when its kind is `decision`; its fields are read as
    /// [`DecisionFields::of_event`] does.
    fn decisions(
        &self,
        q: &DecisionFields,
        before: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError>;

    /// How many decisions with `seq <= through` the log holds, by decision
    /// and deciding layer, counted through the decisions index (a read of
    /// the index, not of the log's entries): how a restarted daemon's
    /// counts start where the log stands.
    fn decision_counts(&self, through: u64) -> Result<Vec<DecisionCount>, StoreError>;

    /// Memories matching `q`: text contains any term as whole words (phrase
    /// for multi-word terms), confidence >= `q.min_confidence`, at least one
    /// of `q.categories` (empty = any), most relevant first (the engine's
    /// full-text rank: rarer matched terms and more of them rank higher), at
    /// most `q.limit`. Empty terms (or terms without a letter or digit) give
    /// an empty result. A term is always literal text, never query syntax.
    /// Reads the last committed state without taking the write lock, through
    /// a full-text index: its cost grows with the matches, not the table.
    fn search_memories(&self, q: &MemoryQuery) -> Result<Vec<Memory>, StoreError>;

    /// Memories holding every whitespace-separated word of `text` (each word
    /// literal, as a phrase of its letters and digits), most relevant
    /// first, at most `limit`; for a person searching (`toolgate memory
    /// search`). Words without a letter or digit are ignored; none left
    /// gives an empty result. Never a query syntax error.
    fn search_memories_text(&self, text: &str, limit: usize) -> Result<Vec<Memory>, StoreError>;

    /// A number that changes whenever any memory is added, changed or
    /// removed (by any process). Cheap (one cached statement on an open
    /// connection), for keying a cache: read it before searching, so
    /// results cached under it are at least as new as it.
    fn memories_rev(&self) -> Result<u64, StoreError>;

    /// Memories newest first (insertion order), only those with `category`
    /// when given, at most `limit` (`usize::MAX` for all).
    fn list_memories(
        &self,
        category: Option<Category>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError>;

    /// Every named operator, removed ones included, by name; read without
    /// taking the write lock (a small table: a daemon reads it to
    /// authenticate each operator request, so a removal takes effect at
    /// once).
    fn read_operators(&self) -> Result<Vec<Operator>, StoreError>;

    /// Every emergency bypass recorded, ended and lapsed ones included;
    /// read without taking the write lock.
    fn read_bypasses(&self) -> Result<Vec<Bypass>, StoreError>;

    /// Where the state lives, for messages (`sqlite:/path/toolgate.db`).
    fn location(&self) -> String;

    /// Asks the store to call `wake` soon after another process (another
    /// daemon sharing the store) commits a transaction that appended to the
    /// audit log, for as long as the store lives: how a daemon learns of
    /// other daemons' decisions and votes without reading the log over and
    /// over. `wake` may also be called when nothing new was committed (after
    /// a lost connection is restored, say), and must return at once. Returns
    /// `false` when the backend cannot tell; the caller then polls. Default:
    /// `false`.
    fn watch_commits(&self, wake: Arc<dyn Fn() + Send + Sync>) -> bool {
        let _ = wake;
        false
    }

    /// Does now whatever closing the store would do that matters later, so
    /// that a short-lived process may exit without closing it (every commit
    /// is durable already, and the operating system releases files and
    /// locks at exit), such as folding a write-ahead log into the database.
    /// Default: nothing.
    fn prepare_exit(&self) {}
}

/// One write transaction, alone among writers while open. Dropped without
/// [`Tx::commit`], it rolls back and nothing it did is visible.
pub trait Tx {
    /// The approval with this id.
    fn approval(&mut self, id: &ApprovalId) -> Result<Option<Approval>, StoreError>;
    /// The most recently created approval for this exact call.
    fn latest_for_binding(&mut self, binding: &BindingHash)
    -> Result<Option<Approval>, StoreError>;
    /// Inserts or replaces an approval.
    fn put_approval(&mut self, approval: &Approval) -> Result<(), StoreError>;
    /// Pending or approved approvals whose time is up at `now_ms`.
    fn due_approvals(&mut self, now_ms: i64) -> Result<Vec<Approval>, StoreError>;
    /// Approvals newest first, at most `limit`: only the open ones (pending
    /// or approved) with `open_only`, else every state.
    fn approvals(&mut self, open_only: bool, limit: usize) -> Result<Vec<Approval>, StoreError>;
    /// How many approvals are open (pending or approved).
    fn count_open(&mut self) -> Result<u64, StoreError>;
    /// The votes cast on an approval, in the order cast.
    fn votes(&mut self, id: &ApprovalId) -> Result<Vec<Vote>, StoreError>;
    /// Records a vote, replacing an earlier (stale) vote by the same identity.
    fn put_vote(&mut self, vote: &Vote) -> Result<(), StoreError>;
    /// Inserts or replaces an acknowledgement (one per key and scope).
    fn put_ack(&mut self, ack: &Ack) -> Result<(), StoreError>;
    /// The acknowledgement for a key and scope, if recorded.
    fn ack(&mut self, key: &str, scope: &str) -> Result<Option<Ack>, StoreError>;
    /// Inserts a memory when `m.id` is 0 and returns its new id; otherwise
    /// replaces (or creates) the memory with that id and returns the id.
    /// The text is stored as given; `m.confidence` must be within 0..=1.
    fn put_memory(&mut self, m: &Memory) -> Result<u64, StoreError>;
    /// Deletes a memory; `false` when there was none with this id.
    fn delete_memory(&mut self, id: u64) -> Result<bool, StoreError>;
    /// Inserts or replaces a knowledge-shown record (by its id).
    fn put_shown(&mut self, s: &Shown) -> Result<(), StoreError>;
    /// The knowledge-shown record with this id, expired or not.
    fn shown(&mut self, id: &str) -> Result<Option<Shown>, StoreError>;
    /// Knowledge shown in `scope` at or after `since_ms`, newest first, at
    /// most `limit` records.
    fn shown_in_scope(
        &mut self,
        scope: &str,
        since_ms: i64,
        limit: usize,
    ) -> Result<Vec<Shown>, StoreError>;
    /// Deletes knowledge-shown records that expired before `now_ms`
    /// (`expires_ms < now_ms`), and acknowledgements that lapsed; returns
    /// how many shown records went.
    fn prune_shown(&mut self, now_ms: i64) -> Result<u64, StoreError>;
    /// Every named operator, removed ones included, by name.
    fn operators(&mut self) -> Result<Vec<Operator>, StoreError>;
    /// Adds or replaces the operator with this name.
    fn put_operator(&mut self, operator: &Operator) -> Result<(), StoreError>;
    /// Every emergency bypass recorded.
    fn bypasses(&mut self) -> Result<Vec<Bypass>, StoreError>;
    /// Adds or replaces the bypass with this id.
    fn put_bypass(&mut self, bypass: &Bypass) -> Result<(), StoreError>;
    /// Marks `key` (a signed link's nonce, a channel callback's id) used
    /// until `until_ms`: `true` the first time, `false` if it already was.
    /// Keys past their `until_ms` (by `now_ms`) may be forgotten.
    fn use_key(&mut self, key: &str, until_ms: i64, now_ms: i64) -> Result<bool, StoreError>;
    /// Every acknowledgement recorded, lapsed ones included, in no set
    /// order (for copying a store).
    fn acks(&mut self) -> Result<Vec<Ack>, StoreError>;
    /// Every knowledge-shown record, expired ones included, oldest first
    /// (for copying a store).
    fn all_shown(&mut self) -> Result<Vec<Shown>, StoreError>;
    /// Every single-use key remembered ([`Tx::use_key`]) with its
    /// `until_ms`, in no set order (for copying a store).
    fn used_keys(&mut self) -> Result<Vec<(String, i64)>, StoreError>;
    /// Appends an entry exactly as another store kept it (its number, hash
    /// and text unchanged, so the chain verifies on this store too). Refused
    /// unless `row.seq` is the next number of this store's chain; the caller
    /// checks the hash links to the entry before it.
    fn append_row(&mut self, row: &AuditRow) -> Result<(), StoreError>;
    /// Appends an event to the audit chain; returns its sequence number.
    fn append(&mut self, event: &AuditEvent) -> Result<u64, StoreError>;
    /// Makes everything durable (per the store's sync mode) and visible.
    fn commit(self: Box<Self>) -> Result<(), StoreError>;
}
