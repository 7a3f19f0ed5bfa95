//! One write transaction on the SQLite store: approvals, votes,
//! acknowledgements, memories, knowledge shown and audit appends, committed
//! together or not at all.

use super::memory::{self, RowError, SHOWN_COLUMNS};
use super::read_head;
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::{LazyLock, MutexGuard};
use toolgate_core::knowledge::memory::Memory;
use toolgate_core::{
    Approval, ApprovalId, ApprovalState, AuditEvent, BindingHash, GENESIS, Vote, chain_hash,
};
use toolgate_store::{Ack, AuditRow, Bypass, DecisionFields, Operator, Shown, StoreError, Tx};

pub(super) struct SqliteTx<'a> {
    conn: MutexGuard<'a, Connection>,
    location: String,
    head: Option<(u64, [u8; 32])>,
    head_dirty: bool,
    /// Memories written (inserted, replaced or deleted) so far.
    memories_written: usize,
    done: bool,
}

/// A transaction that writes at least this many memories (an import)
/// rewrites the full-text index as one segment before committing, so
/// searches read one b-tree per term instead of one per segment the bulk
/// write left (a term with no match costs about a third as much).
const OPTIMIZE_AFTER_WRITES: usize = 1_000;

/// The statement adding one entry to the decisions index (migration 5):
/// its seq, then the fields in [`DecisionFields::COLUMNS`] order, named by
/// that constant so the two cannot drift apart.
static INSERT_DECISION: LazyLock<String> = LazyLock::new(|| {
    let columns = DecisionFields::COLUMNS.join(", ");
    let params: Vec<String> = (2..=DecisionFields::COLUMNS.len() + 1)
        .map(|i| format!("?{i}"))
        .collect();
    format!(
        "INSERT INTO decisions (seq, {columns}) VALUES (?1, {})",
        params.join(", ")
    )
});

impl<'a> SqliteTx<'a> {
    /// Wraps a connection on which `BEGIN IMMEDIATE` has just succeeded.
    pub(super) fn new(conn: MutexGuard<'a, Connection>, location: String) -> SqliteTx<'a> {
        SqliteTx {
            conn,
            location,
            head: None,
            head_dirty: false,
            memories_written: 0,
            done: false,
        }
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Backend {
            location: self.location.clone(),
            source: Box::new(source),
        }
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        text: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
            location: self.location.clone(),
            detail: format!("{what}: {e}"),
        })
    }

    fn encode<T: serde::Serialize>(&self, value: &T) -> Result<String, StoreError> {
        serde_json::to_string(value).map_err(|e| StoreError::Corrupt {
            location: self.location.clone(),
            detail: e.to_string(),
        })
    }

    /// JSON records (column 0 of each row `sql` selects) as values; `what`
    /// names them in errors.
    fn records<T: serde::de::DeserializeOwned>(
        &mut self,
        what: &str,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<T>, StoreError> {
        let texts: Vec<String> = {
            let mut stmt = self.conn.prepare_cached(sql).map_err(self.err())?;
            stmt.query_map(args, |r| r.get::<_, String>(0))
                .and_then(|rows| rows.collect())
                .map_err(self.err())?
        };
        texts.iter().map(|t| self.decode(what, t)).collect()
    }

    /// Adds or replaces the record `key` of namespace `ns` in `records`.
    fn put_record<T: serde::Serialize>(
        &mut self,
        ns: &str,
        key: &str,
        value: &T,
    ) -> Result<(), StoreError> {
        let record = self.encode(value)?;
        self.conn
            .prepare_cached(
                "INSERT INTO records (ns, key, record) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (ns, key) DO UPDATE SET record = excluded.record",
            )
            .and_then(|mut s| s.execute(params![ns, key, record]))
            .map_err(self.err())?;
        Ok(())
    }

    /// Adds entry `seq` to the log as given, indexes it when it is a
    /// decision, and makes it this transaction's head: what `append` and
    /// `append_row` share once they know the entry.
    fn push_entry(
        &mut self,
        seq: u64,
        hash: [u8; 32],
        entry: &str,
        decision: Option<DecisionFields>,
    ) -> Result<(), StoreError> {
        let seq_col = i64::try_from(seq).map_err(|_| StoreError::Corrupt {
            location: self.location.clone(),
            detail: format!("audit seq {seq} is out of range"),
        })?;
        self.conn
            .prepare_cached("INSERT INTO audit (seq, hash, entry) VALUES (?1, ?2, ?3)")
            .and_then(|mut s| s.execute(params![seq_col, &hash[..], entry]))
            .map_err(self.err())?;
        if let Some(fields) = decision {
            self.index_decision(seq_col, &fields)?;
        }
        self.head = Some((seq, hash));
        self.head_dirty = true;
        Ok(())
    }

    /// The head of the chain as this transaction has it: what it appended
    /// last, else what was committed (`None` when the log is empty).
    fn head(&self) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        match self.head {
            Some(h) => Ok(Some(h)),
            None => read_head(&self.conn).map_err(self.err()),
        }
    }

    /// Adds entry `seq`'s fields to the decisions index, in this
    /// transaction, so the index never holds an entry the log does not (or
    /// misses one it does).
    fn index_decision(&mut self, seq: i64, fields: &DecisionFields) -> Result<(), StoreError> {
        let [decision, tool, risk, layer, agent, session] = fields.values();
        self.conn
            .prepare_cached(&INSERT_DECISION)
            .and_then(|mut s| s.execute(params![seq, decision, tool, risk, layer, agent, session]))
            .map_err(self.err())?;
        Ok(())
    }

    fn row_err(&self, e: RowError) -> StoreError {
        match e {
            RowError::Sql(source) => StoreError::Backend {
                location: self.location.clone(),
                source: Box::new(source),
            },
            RowError::Corrupt(detail) => StoreError::Corrupt {
                location: self.location.clone(),
                detail,
            },
        }
    }

    fn query_shown(
        &mut self,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Shown>, StoreError> {
        let found = (|| {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let mut rows = stmt.query(args)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                out.push(memory::shown_from_row(r)?);
            }
            Ok(out)
        })();
        found.map_err(|e| self.row_err(e))
    }

    /// The text of memory `id`, if there is one.
    fn memory_text(&self, id: i64) -> Result<Option<String>, StoreError> {
        self.conn
            .prepare_cached("SELECT text FROM memories WHERE id = ?1")
            .and_then(|mut s| s.query_row(params![id], |r| r.get(0)).optional())
            .map_err(self.err())
    }

    /// Keeps the full-text index and the revision in step with one memory
    /// row changed by this transaction: `old` is the (id, text) it had, if
    /// any, `new` the one it has now, if any. Every write to `memories`
    /// goes through here (migration 3 dropped the triggers that did this).
    fn index_memory(
        &mut self,
        old: Option<(i64, &str)>,
        new: Option<(i64, &str)>,
    ) -> Result<(), StoreError> {
        let run = |sql: &str, args: &[&dyn rusqlite::ToSql]| {
            self.conn
                .prepare_cached(sql)
                .and_then(|mut s| s.execute(args))
                .map_err(self.err())
        };
        if let Some((id, text)) = old {
            run(
                "INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', ?1, ?2)",
                &[&id, &text],
            )?;
        }
        if let Some((id, text)) = new {
            run(
                "INSERT INTO memories_fts (rowid, text) VALUES (?1, ?2)",
                &[&id, &text],
            )?;
        }
        run("UPDATE memory_rev SET rev = rev + 1 WHERE id = 1", &[])?;
        self.memories_written += 1;
        Ok(())
    }
}

impl Tx for SqliteTx<'_> {
    fn approval(&mut self, id: &ApprovalId) -> Result<Option<Approval>, StoreError> {
        let id = id.to_string();
        Ok(self
            .records(
                "approval",
                "SELECT record FROM approvals WHERE id = ?1",
                &[&id],
            )?
            .pop())
    }

    fn latest_for_binding(
        &mut self,
        binding: &BindingHash,
    ) -> Result<Option<Approval>, StoreError> {
        let b = binding.to_hex();
        Ok(self
            .records(
                "approval",
                // Insertion order, not the clock: a clock stepped back must
                // not hide the newest approval.
                "SELECT record FROM approvals WHERE binding = ?1 ORDER BY rowid DESC LIMIT 1",
                &[&b],
            )?
            .pop())
    }

    fn put_approval(&mut self, a: &Approval) -> Result<(), StoreError> {
        let record = self.encode(a)?;
        // When the approval's time runs out, if it still can.
        let due = match a.state {
            ApprovalState::Pending => Some(a.expires_ms),
            ApprovalState::Approved => Some(a.usable_until_ms.unwrap_or(a.expires_ms)),
            _ => None,
        };
        self.conn
            .prepare_cached(
                "INSERT INTO approvals (id, binding, state, created_ms, due_ms, record) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                 ON CONFLICT (id) DO UPDATE SET state = excluded.state, \
                 due_ms = excluded.due_ms, record = excluded.record",
            )
            .and_then(|mut s| {
                s.execute(params![
                    a.id.to_string(),
                    a.binding.to_hex(),
                    a.state.as_str(),
                    a.created_ms,
                    due,
                    record
                ])
            })
            .map_err(self.err())?;
        Ok(())
    }

    fn due_approvals(&mut self, now_ms: i64) -> Result<Vec<Approval>, StoreError> {
        self.records(
            "approval",
            "SELECT record FROM approvals WHERE due_ms IS NOT NULL AND due_ms <= ?1 \
             ORDER BY due_ms LIMIT 500",
            &[&now_ms],
        )
    }

    fn approvals(&mut self, open_only: bool, limit: usize) -> Result<Vec<Approval>, StoreError> {
        // SQLite reads a negative LIMIT as "no limit".
        let lim = i64::try_from(limit).unwrap_or(-1);
        // Two statements, so the open-only one can use the state index
        // (`NOT ?1 OR …` would scan every approval ever made).
        if open_only {
            self.records(
                "approval",
                "SELECT record FROM approvals WHERE state IN ('pending', 'approved') \
                 ORDER BY rowid DESC LIMIT ?1",
                &[&lim],
            )
        } else {
            self.records(
                "approval",
                "SELECT record FROM approvals ORDER BY rowid DESC LIMIT ?1",
                &[&lim],
            )
        }
    }

    fn count_open(&mut self) -> Result<u64, StoreError> {
        self.conn
            .prepare_cached("SELECT count(*) FROM approvals WHERE state IN ('pending', 'approved')")
            .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
            .map(|n| n.max(0) as u64)
            .map_err(self.err())
    }

    fn votes(&mut self, id: &ApprovalId) -> Result<Vec<Vote>, StoreError> {
        self.records(
            "vote",
            "SELECT record FROM votes WHERE approval = ?1 ORDER BY at_ms, rowid",
            &[&id.to_string()],
        )
    }

    fn put_vote(&mut self, v: &Vote) -> Result<(), StoreError> {
        let record = self.encode(v)?;
        self.conn
            .prepare_cached(
                "INSERT INTO votes (approval, identity, at_ms, record) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (approval, identity) DO UPDATE SET at_ms = excluded.at_ms, \
                 record = excluded.record",
            )
            .and_then(|mut s| {
                s.execute(params![v.approval.to_string(), v.identity, v.at_ms, record])
            })
            .map_err(self.err())?;
        Ok(())
    }

    fn put_ack(&mut self, ack: &Ack) -> Result<(), StoreError> {
        let record = self.encode(ack)?;
        self.conn
            .prepare_cached(
                "INSERT INTO acks (key, scope, record) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (key, scope) DO UPDATE SET record = excluded.record",
            )
            .and_then(|mut s| s.execute(params![ack.key, ack.scope, record]))
            .map_err(self.err())?;
        Ok(())
    }

    fn ack(&mut self, key: &str, scope: &str) -> Result<Option<Ack>, StoreError> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT record FROM acks WHERE key = ?1 AND scope = ?2")
            .and_then(|mut s| s.query_row(params![key, scope], |r| r.get(0)).optional())
            .map_err(self.err())?;
        text.map(|t| self.decode("acknowledgement", &t)).transpose()
    }

    fn put_memory(&mut self, m: &Memory) -> Result<u64, StoreError> {
        let categories = memory::categories_column(&m.categories);
        if m.id == 0 {
            self.conn
                .prepare_cached(
                    "INSERT INTO memories (text, categories, confidence, source, created_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        m.text,
                        categories,
                        m.confidence,
                        m.source,
                        m.created_ms
                    ])
                })
                .map_err(self.err())?;
            let id = self.conn.last_insert_rowid();
            self.index_memory(None, Some((id, &m.text)))?;
            Ok(id as u64)
        } else {
            let id = i64::try_from(m.id).map_err(|_| StoreError::Corrupt {
                location: self.location.clone(),
                detail: format!("memory id {} is out of range", m.id),
            })?;
            let old = self.memory_text(id)?;
            // An upsert, not INSERT OR REPLACE (which could delete other
            // rows behind the index's back).
            self.conn
                .prepare_cached(
                    "INSERT INTO memories (id, text, categories, confidence, source, created_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                     ON CONFLICT (id) DO UPDATE SET text = excluded.text, \
                     categories = excluded.categories, confidence = excluded.confidence, \
                     source = excluded.source, created_ms = excluded.created_ms",
                )
                .and_then(|mut s| {
                    s.execute(params![
                        id,
                        m.text,
                        categories,
                        m.confidence,
                        m.source,
                        m.created_ms
                    ])
                })
                .map_err(self.err())?;
            self.index_memory(old.as_deref().map(|t| (id, t)), Some((id, &m.text)))?;
            Ok(m.id)
        }
    }

    fn delete_memory(&mut self, id: u64) -> Result<bool, StoreError> {
        let Ok(id) = i64::try_from(id) else {
            return Ok(false);
        };
        let Some(old) = self.memory_text(id)? else {
            return Ok(false);
        };
        self.conn
            .prepare_cached("DELETE FROM memories WHERE id = ?1")
            .and_then(|mut s| s.execute(params![id]))
            .map_err(self.err())?;
        self.index_memory(Some((id, &old)), None)?;
        Ok(true)
    }

    fn put_shown(&mut self, s: &Shown) -> Result<(), StoreError> {
        let keys = self.encode(&s.keys)?;
        self.conn
            .prepare_cached(
                "INSERT INTO knowledge_shown (id, binding, scope, shown_ms, expires_ms, keys) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                 ON CONFLICT (id) DO UPDATE SET binding = excluded.binding, \
                 scope = excluded.scope, shown_ms = excluded.shown_ms, \
                 expires_ms = excluded.expires_ms, keys = excluded.keys",
            )
            .and_then(|mut st| {
                st.execute(params![
                    s.id,
                    s.binding,
                    s.scope,
                    s.shown_ms,
                    s.expires_ms,
                    keys
                ])
            })
            .map_err(self.err())?;
        Ok(())
    }

    fn shown(&mut self, id: &str) -> Result<Option<Shown>, StoreError> {
        Ok(self
            .query_shown(
                &format!("SELECT {SHOWN_COLUMNS} FROM knowledge_shown WHERE id = ?1"),
                &[&id],
            )?
            .pop())
    }

    fn shown_in_scope(
        &mut self,
        scope: &str,
        since_ms: i64,
        limit: usize,
    ) -> Result<Vec<Shown>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.query_shown(
            &format!(
                "SELECT {SHOWN_COLUMNS} FROM knowledge_shown \
                 WHERE scope = ?1 AND shown_ms >= ?2 ORDER BY shown_ms DESC, rowid DESC LIMIT ?3"
            ),
            &[&scope, &since_ms, &limit],
        )
    }

    fn prune_shown(&mut self, now_ms: i64) -> Result<u64, StoreError> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM knowledge_shown WHERE expires_ms < ?1")
            .and_then(|mut s| s.execute(params![now_ms]))
            .map_err(self.err())?;
        // Lapsed acknowledgements go too: one row per item and session
        // would otherwise pile up for ever.
        self.conn
            .prepare_cached(
                "DELETE FROM acks WHERE json_valid(record) \
                 AND json_extract(record, '$.expires_ms') < ?1",
            )
            .and_then(|mut s| s.execute(params![now_ms]))
            .map_err(self.err())?;
        Ok(n as u64)
    }

    fn operators(&mut self) -> Result<Vec<Operator>, StoreError> {
        self.records(
            "operator",
            "SELECT record FROM records WHERE ns = 'operator' ORDER BY key",
            &[],
        )
    }

    fn put_operator(&mut self, operator: &Operator) -> Result<(), StoreError> {
        self.put_record("operator", &operator.name, operator)
    }

    fn bypasses(&mut self) -> Result<Vec<Bypass>, StoreError> {
        self.records(
            "bypass",
            "SELECT record FROM records WHERE ns = 'bypass'",
            &[],
        )
    }

    fn put_bypass(&mut self, bypass: &Bypass) -> Result<(), StoreError> {
        self.put_record("bypass", &bypass.id, bypass)
    }

    fn use_key(&mut self, key: &str, until_ms: i64, now_ms: i64) -> Result<bool, StoreError> {
        // Keys that could no longer be accepted anyway are forgotten here,
        // a few at a time, so the table stays as small as what is live.
        self.conn
            .prepare_cached(
                "DELETE FROM records WHERE ns = 'key' AND key IN \
                 (SELECT key FROM records WHERE ns = 'key' AND until_ms < ?1 LIMIT 16)",
            )
            .and_then(|mut s| s.execute(params![now_ms]))
            .map_err(self.err())?;
        let inserted = self
            .conn
            .prepare_cached(
                "INSERT INTO records (ns, key, until_ms, record) VALUES ('key', ?1, ?2, '') \
                 ON CONFLICT (ns, key) DO NOTHING",
            )
            .and_then(|mut s| s.execute(params![key, until_ms]))
            .map_err(self.err())?;
        Ok(inserted == 1)
    }

    fn acks(&mut self) -> Result<Vec<Ack>, StoreError> {
        self.records("acknowledgement", "SELECT record FROM acks", &[])
    }

    fn all_shown(&mut self) -> Result<Vec<Shown>, StoreError> {
        // rowid breaks ties in insertion order, as `shown_in_scope` does.
        self.query_shown(
            &format!("SELECT {SHOWN_COLUMNS} FROM knowledge_shown ORDER BY shown_ms, rowid"),
            &[],
        )
    }

    fn used_keys(&mut self) -> Result<Vec<(String, i64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, until_ms FROM records WHERE ns = 'key'")
            .map_err(self.err())?;
        stmt.query_map([], |r| {
            // `use_key` always sets until_ms; a key without one is never
            // forgotten (NULL is not before any time), so it is copied as
            // remembered for ever.
            let until: Option<i64> = r.get(1)?;
            Ok((r.get::<_, String>(0)?, until.unwrap_or(i64::MAX)))
        })
        .and_then(|rows| rows.collect())
        .map_err(self.err())
    }

    fn append_row(&mut self, row: &AuditRow) -> Result<(), StoreError> {
        let last = self.head()?.map_or(0, |(seq, _)| seq);
        if row.seq != last + 1 {
            return Err(StoreError::Corrupt {
                location: self.location.clone(),
                detail: format!(
                    "audit entry {} cannot follow {last}: the copy is out of order",
                    row.seq
                ),
            });
        }
        self.push_entry(
            row.seq,
            row.hash,
            &row.entry,
            DecisionFields::of_text(&row.entry),
        )
    }

    fn append(&mut self, event: &AuditEvent) -> Result<u64, StoreError> {
        let (last, prev) = self.head()?.unwrap_or((0, GENESIS));
        let seq = last + 1;
        let text = event.canonical(seq);
        let hash = chain_hash(&prev, text.as_bytes());
        self.push_entry(seq, hash, &text, DecisionFields::of_event(event))?;
        Ok(seq)
    }

    fn commit(mut self: Box<Self>) -> Result<(), StoreError> {
        if self.memories_written >= OPTIMIZE_AFTER_WRITES {
            self.conn
                .execute_batch("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                .map_err(self.err())?;
        }
        if self.head_dirty
            && let Some((seq, hash)) = self.head
        {
            self.conn
                .prepare_cached(
                    "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?1, ?2) \
                     ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
                )
                .and_then(|mut s| s.execute(params![seq as i64, &hash[..]]))
                .map_err(self.err())?;
        }
        self.conn.execute_batch("COMMIT").map_err(self.err())?;
        self.done = true;
        Ok(())
    }
}

impl Drop for SqliteTx<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
