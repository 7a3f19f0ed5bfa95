//! One write transaction on the PostgreSQL store: approvals, votes,
//! acknowledgements, memories, knowledge shown and audit appends, committed
//! together or not at all, serialized against every other writer by the
//! store's advisory lock (see the crate documentation).

use crate::memory::{self, SHOWN_COLUMNS};
use crate::{Keys, PostgresStore, RowError, db_err, index_values, read_head, sql_limit};
use deadpool_postgres::Object;
use std::sync::LazyLock;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use toolgate_core::hex;
use toolgate_core::knowledge::memory::Memory;
use toolgate_core::{
    Approval, ApprovalId, ApprovalState, AuditEvent, BindingHash, GENESIS, Vote, chain_hash,
};
use toolgate_store::{Ack, AuditRow, Bypass, DecisionFields, Operator, Shown, StoreError, Tx};

/// How long a writer waits for the lock (or any lock) before failing, as
/// the SQLite store's busy timeout.
const LOCK_TIMEOUT: &str = "30s";

/// Adds one entry (`$1` seq, `$2` hash, `$3` text) to the audit log.
const INSERT_AUDIT: &str = "INSERT INTO audit (seq, hash, entry) VALUES ($1, $2, $3)";

/// Adds one decision entry to the audit log and to the decisions index
/// (migration 2) in one statement: indexing costs an append no round trip
/// of its own (appends are on every decision's path). `$1`..`$3` as
/// [`INSERT_AUDIT`], then the fields in [`DecisionFields::COLUMNS`] order,
/// named by that constant so the two cannot drift apart. A data-modifying
/// CTE runs whether or not anything reads it.
static INSERT_AUDIT_DECISION: LazyLock<String> = LazyLock::new(|| {
    let columns = DecisionFields::COLUMNS.join(", ");
    let params: Vec<String> = (4..DecisionFields::COLUMNS.len() + 4)
        .map(|i| format!("${i}"))
        .collect();
    format!(
        "WITH entry AS ({INSERT_AUDIT}) \
         INSERT INTO decisions (seq, {columns}) VALUES ($1, {})",
        params.join(", ")
    )
});

pub(crate) struct PostgresTx<'a> {
    store: &'a PostgresStore,
    /// `None` only once the connection has been discarded.
    conn: Option<Object>,
    head: Option<(u64, [u8; 32])>,
    head_dirty: bool,
    /// A statement failed: PostgreSQL has aborted the transaction.
    failed: bool,
    done: bool,
}

impl<'a> PostgresTx<'a> {
    /// Opens a transaction holding the store's write lock.
    pub(crate) fn begin(store: &'a PostgresStore) -> Result<PostgresTx<'a>, StoreError> {
        let conn = store.writer()?;
        let Keys { write, space, .. } = store.keys;
        let mut tx = PostgresTx {
            store,
            conn: Some(conn),
            head: None,
            head_dirty: false,
            failed: false,
            done: false,
        };
        tx.batch(&format!(
            "BEGIN ISOLATION LEVEL READ COMMITTED; \
             SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; \
             SELECT pg_advisory_xact_lock({write}, {space})"
        ))?;
        Ok(tx)
    }

    fn conn(&self) -> Result<&Object, StoreError> {
        self.conn.as_ref().ok_or_else(|| StoreError::Backend {
            location: self.store.location.clone(),
            source: "the transaction's connection was lost".into(),
        })
    }

    fn fail(&mut self, e: tokio_postgres::Error) -> StoreError {
        self.failed = true;
        db_err(&self.store.location)(e)
    }

    /// Runs statements without parameters (the simple protocol).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        let conn = self.conn()?;
        let r = self.store.run(conn.batch_execute(sql));
        r.map_err(|e| self.fail(e))
    }

    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        let conn = self.conn()?;
        let r = self.store.run(async {
            let stmt = conn.prepare_cached(sql).await?;
            conn.query(&stmt, params).await
        });
        r.map_err(|e| self.fail(e))
    }

    fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        let conn = self.conn()?;
        let r = self.store.run(async {
            let stmt = conn.prepare_cached(sql).await?;
            conn.execute(&stmt, params).await
        });
        r.map_err(|e| self.fail(e))
    }

    fn row_err(&self, e: RowError) -> StoreError {
        self.store.row_err(e)
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        text: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
            location: self.store.location.clone(),
            detail: format!("{what}: {e}"),
        })
    }

    fn encode<T: serde::Serialize>(&self, value: &T) -> Result<String, StoreError> {
        serde_json::to_string(value).map_err(|e| StoreError::Corrupt {
            location: self.store.location.clone(),
            detail: e.to_string(),
        })
    }

    /// Inserts or replaces the record `key` of namespace `ns` in `records`.
    fn put_record<T: serde::Serialize>(
        &mut self,
        ns: &str,
        key: &str,
        value: &T,
    ) -> Result<(), StoreError> {
        let record = self.encode(value)?;
        self.execute(
            "INSERT INTO records (ns, key, record) VALUES ($1, $2, $3) \
             ON CONFLICT (ns, key) DO UPDATE SET record = excluded.record",
            &[&ns, &key, &record],
        )?;
        Ok(())
    }

    /// JSON records (column 0 of each row) as values.
    fn records<T: serde::de::DeserializeOwned>(
        &mut self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<T>, StoreError> {
        let rows = self.query(sql, params)?;
        rows.iter()
            .map(|r| {
                let text: String = memory::get(r, 0, what).map_err(|e| self.row_err(e))?;
                self.decode(what, &text)
            })
            .collect()
    }

    fn query_shown(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Shown>, StoreError> {
        let rows = self.query(sql, params)?;
        rows.iter()
            .map(|r| memory::shown_from_row(r).map_err(|e| self.row_err(e)))
            .collect()
    }

    /// The head of the audit chain as this transaction sees it: its own
    /// last append, else the one recorded.
    fn head(&mut self) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        if let Some(h) = self.head {
            return Ok(Some(h));
        }
        let conn = self.conn()?;
        let r = self.store.run(read_head(conn));
        r.map_err(|e| self.fail(e))
    }

    /// Inserts audit entry `seq` and, when it is a decision (`fields`), its
    /// row of the decisions index, in one statement; so the index never
    /// holds an entry the log does not, or misses one it does.
    fn insert_entry(
        &mut self,
        seq: i64,
        hash: &[u8; 32],
        entry: &str,
        fields: Option<&DecisionFields>,
    ) -> Result<(), StoreError> {
        let hash = &hash[..];
        match fields {
            None => self.execute(INSERT_AUDIT, &[&seq, &hash, &entry])?,
            Some(fields) => {
                let [decision, tool, risk, layer, agent, session] = index_values(fields);
                self.execute(
                    &INSERT_AUDIT_DECISION,
                    &[
                        &seq, &hash, &entry, &decision, &tool, &risk, &layer, &agent, &session,
                    ],
                )?
            }
        };
        Ok(())
    }

    /// Ends the transaction without committing; a connection that cannot
    /// even roll back is closed instead of going back to the pool.
    fn rollback(&mut self) {
        let Some(conn) = self.conn.as_ref() else {
            return;
        };
        if self.store.run(conn.batch_execute("ROLLBACK")).is_err()
            && let Some(conn) = self.conn.take()
        {
            drop(Object::take(conn));
        }
    }
}

impl Tx for PostgresTx<'_> {
    fn approval(&mut self, id: &ApprovalId) -> Result<Option<Approval>, StoreError> {
        Ok(self
            .records(
                "approval",
                "SELECT record FROM approvals WHERE id = $1",
                &[&id.to_string()],
            )?
            .pop())
    }

    fn latest_for_binding(
        &mut self,
        binding: &BindingHash,
    ) -> Result<Option<Approval>, StoreError> {
        Ok(self
            .records(
                "approval",
                // Insertion order, not the clock: a clock stepped back must
                // not hide the newest approval.
                "SELECT record FROM approvals WHERE binding = $1 ORDER BY ord DESC LIMIT 1",
                &[&binding.to_hex()],
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
        self.execute(
            "INSERT INTO approvals (id, binding, state, created_ms, due_ms, record) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET state = excluded.state, \
             due_ms = excluded.due_ms, record = excluded.record",
            &[
                &a.id.to_string(),
                &a.binding.to_hex(),
                &a.state.as_str(),
                &a.created_ms,
                &due,
                &record,
            ],
        )?;
        Ok(())
    }

    fn due_approvals(&mut self, now_ms: i64) -> Result<Vec<Approval>, StoreError> {
        self.records(
            "approval",
            "SELECT record FROM approvals WHERE due_ms IS NOT NULL AND due_ms <= $1 \
             ORDER BY due_ms LIMIT 500",
            &[&now_ms],
        )
    }

    fn approvals(&mut self, open_only: bool, limit: usize) -> Result<Vec<Approval>, StoreError> {
        let limit = sql_limit(limit);
        if open_only {
            self.records(
                "approval",
                "SELECT record FROM approvals WHERE state IN ('pending', 'approved') \
                 ORDER BY ord DESC LIMIT $1",
                &[&limit],
            )
        } else {
            self.records(
                "approval",
                "SELECT record FROM approvals ORDER BY ord DESC LIMIT $1",
                &[&limit],
            )
        }
    }

    fn count_open(&mut self) -> Result<u64, StoreError> {
        let rows = self.query(
            "SELECT count(*) FROM approvals WHERE state IN ('pending', 'approved')",
            &[],
        )?;
        let n: i64 = match rows.first() {
            Some(r) => memory::get(r, 0, "count").map_err(|e| self.row_err(e))?,
            None => 0,
        };
        Ok(n.max(0) as u64)
    }

    fn votes(&mut self, id: &ApprovalId) -> Result<Vec<Vote>, StoreError> {
        self.records(
            "vote",
            "SELECT record FROM votes WHERE approval = $1 ORDER BY at_ms, ord",
            &[&id.to_string()],
        )
    }

    fn put_vote(&mut self, v: &Vote) -> Result<(), StoreError> {
        let record = self.encode(v)?;
        self.execute(
            "INSERT INTO votes (approval, identity, at_ms, record) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (approval, identity) DO UPDATE SET at_ms = excluded.at_ms, \
             record = excluded.record",
            &[&v.approval.to_string(), &v.identity, &v.at_ms, &record],
        )?;
        Ok(())
    }

    fn put_ack(&mut self, ack: &Ack) -> Result<(), StoreError> {
        let record = self.encode(ack)?;
        self.execute(
            "INSERT INTO acks (key, scope, expires_ms, record) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (key, scope) DO UPDATE SET expires_ms = excluded.expires_ms, \
             record = excluded.record",
            &[&ack.key, &ack.scope, &ack.expires_ms, &record],
        )?;
        Ok(())
    }

    fn ack(&mut self, key: &str, scope: &str) -> Result<Option<Ack>, StoreError> {
        Ok(self
            .records(
                "acknowledgement",
                "SELECT record FROM acks WHERE key = $1 AND scope = $2",
                &[&key, &scope],
            )?
            .pop())
    }

    fn put_memory(&mut self, m: &Memory) -> Result<u64, StoreError> {
        let categories = memory::categories_column(&m.categories);
        let words = memory::indexed_text(&m.text);
        // The revision moves in the same statement as the row.
        if m.id == 0 {
            let rows = self.query(
                "WITH m AS (INSERT INTO memories \
                 (text, categories, confidence, source, created_ms, words) \
                 VALUES ($1, $2, $3, $4, $5, to_tsvector('simple', $6)) RETURNING id), \
                 r AS (UPDATE memory_rev SET rev = rev + 1 WHERE id = 1) \
                 SELECT id FROM m",
                &[
                    &m.text,
                    &categories,
                    &m.confidence,
                    &m.source,
                    &m.created_ms,
                    &words,
                ],
            )?;
            let id: i64 = match rows.first() {
                Some(r) => memory::get(r, 0, "memory id").map_err(|e| self.row_err(e))?,
                None => {
                    return Err(StoreError::Corrupt {
                        location: self.store.location.clone(),
                        detail: "an inserted memory returned no id".to_string(),
                    });
                }
            };
            Ok(id as u64)
        } else {
            let id = i64::try_from(m.id).map_err(|_| StoreError::Corrupt {
                location: self.store.location.clone(),
                detail: format!("memory id {} is out of range", m.id),
            })?;
            // The revision moves, and the identity sequence moves past an
            // id given by hand (so a later insert without one never
            // collides with it, as with SQLite's AUTOINCREMENT), in the same
            // statement as the row: one round trip. A fresh sequence reads
            // `last_value` 1 before handing out 1 (`is_called` false), so an
            // explicit 1 must move it too. `setval` is not transactional: a
            // rollback leaves a gap in the ids, never a repeat. The final
            // SELECT reads `s`, since a plain SELECT in a CTE runs only if
            // something reads it.
            self.query(
                "WITH m AS (INSERT INTO memories \
                 (id, text, categories, confidence, source, created_ms, words) \
                 VALUES ($1, $2, $3, $4, $5, $6, to_tsvector('simple', $7)) \
                 ON CONFLICT (id) DO UPDATE SET text = excluded.text, \
                 categories = excluded.categories, confidence = excluded.confidence, \
                 source = excluded.source, created_ms = excluded.created_ms, \
                 words = excluded.words RETURNING id), \
                 r AS (UPDATE memory_rev SET rev = rev + 1 WHERE id = 1), \
                 s AS (SELECT setval('memories_id_seq', $1) FROM memories_id_seq \
                       WHERE last_value < $1 OR (last_value = $1 AND NOT is_called)) \
                 SELECT id, (SELECT count(*) FROM s) FROM m",
                &[
                    &id,
                    &m.text,
                    &categories,
                    &m.confidence,
                    &m.source,
                    &m.created_ms,
                    &words,
                ],
            )?;
            Ok(m.id)
        }
    }

    fn delete_memory(&mut self, id: u64) -> Result<bool, StoreError> {
        let Ok(id) = i64::try_from(id) else {
            return Ok(false);
        };
        let rows = self.query(
            "WITH d AS (DELETE FROM memories WHERE id = $1 RETURNING id), \
             r AS (UPDATE memory_rev SET rev = rev + 1 WHERE id = 1 \
                   AND EXISTS (SELECT 1 FROM d)) \
             SELECT count(*) FROM d",
            &[&id],
        )?;
        let n: i64 = match rows.first() {
            Some(r) => memory::get(r, 0, "count").map_err(|e| self.row_err(e))?,
            None => 0,
        };
        Ok(n > 0)
    }

    fn put_shown(&mut self, s: &Shown) -> Result<(), StoreError> {
        let keys = self.encode(&s.keys)?;
        self.execute(
            "INSERT INTO knowledge_shown (id, binding, scope, shown_ms, expires_ms, keys) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET binding = excluded.binding, \
             scope = excluded.scope, shown_ms = excluded.shown_ms, \
             expires_ms = excluded.expires_ms, keys = excluded.keys",
            &[
                &s.id,
                &s.binding,
                &s.scope,
                &s.shown_ms,
                &s.expires_ms,
                &keys,
            ],
        )?;
        Ok(())
    }

    fn shown(&mut self, id: &str) -> Result<Option<Shown>, StoreError> {
        Ok(self
            .query_shown(
                &format!("SELECT {SHOWN_COLUMNS} FROM knowledge_shown WHERE id = $1"),
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
        self.query_shown(
            &format!(
                "SELECT {SHOWN_COLUMNS} FROM knowledge_shown \
                 WHERE scope = $1 AND shown_ms >= $2 \
                 ORDER BY shown_ms DESC, ord DESC LIMIT $3"
            ),
            &[&scope, &since_ms, &sql_limit(limit)],
        )
    }

    fn prune_shown(&mut self, now_ms: i64) -> Result<u64, StoreError> {
        let n = self.execute(
            "DELETE FROM knowledge_shown WHERE expires_ms < $1",
            &[&now_ms],
        )?;
        // Lapsed acknowledgements go too: one row per item and session
        // would otherwise pile up for ever.
        self.execute("DELETE FROM acks WHERE expires_ms < $1", &[&now_ms])?;
        Ok(n)
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
        self.execute(
            "DELETE FROM records WHERE ns = 'key' AND key IN \
             (SELECT key FROM records WHERE ns = 'key' AND until_ms < $1 LIMIT 16)",
            &[&now_ms],
        )?;
        let inserted = self.execute(
            "INSERT INTO records (ns, key, until_ms, record) VALUES ('key', $1, $2, '') \
             ON CONFLICT (ns, key) DO NOTHING",
            &[&key, &until_ms],
        )?;
        Ok(inserted == 1)
    }

    fn acks(&mut self) -> Result<Vec<Ack>, StoreError> {
        self.records(
            "acknowledgement",
            "SELECT record FROM acks ORDER BY key, scope",
            &[],
        )
    }

    fn all_shown(&mut self) -> Result<Vec<Shown>, StoreError> {
        self.query_shown(
            &format!("SELECT {SHOWN_COLUMNS} FROM knowledge_shown ORDER BY shown_ms, ord"),
            &[],
        )
    }

    fn used_keys(&mut self) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = self.query(
            "SELECT key, until_ms FROM records WHERE ns = 'key' ORDER BY key",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                let key: String = memory::get(r, 0, "used key").map_err(|e| self.row_err(e))?;
                // `use_key` always sets it: NULL is a row this store did
                // not write.
                let until: i64 =
                    memory::get(r, 1, "used key until_ms").map_err(|e| self.row_err(e))?;
                Ok((key, until))
            })
            .collect()
    }

    fn append_row(&mut self, row: &AuditRow) -> Result<(), StoreError> {
        let last = self.head()?.map_or(0, |(seq, _)| seq);
        let seq = match i64::try_from(row.seq) {
            Ok(seq) if Some(row.seq) == last.checked_add(1) => seq,
            _ => {
                // Refused before any statement runs: the transaction is
                // still usable.
                return Err(StoreError::Corrupt {
                    location: self.store.location.clone(),
                    detail: format!(
                        "audit entry {} cannot follow {last}: the copy is out of order",
                        row.seq
                    ),
                });
            }
        };
        let fields = DecisionFields::of_text(&row.entry);
        self.insert_entry(seq, &row.hash, &row.entry, fields.as_ref())?;
        self.head = Some((row.seq, row.hash));
        self.head_dirty = true;
        Ok(())
    }

    fn append(&mut self, event: &AuditEvent) -> Result<u64, StoreError> {
        let (last, prev) = self.head()?.unwrap_or((0, GENESIS));
        let seq = last + 1;
        let text = event.canonical(seq);
        let hash = chain_hash(&prev, text.as_bytes());
        let fields = DecisionFields::of_event(event);
        self.insert_entry(seq as i64, &hash, &text, fields.as_ref())?;
        self.head = Some((seq, hash));
        self.head_dirty = true;
        Ok(seq)
    }

    fn commit(mut self: Box<Self>) -> Result<(), StoreError> {
        if self.failed {
            return Err(StoreError::Backend {
                location: self.store.location.clone(),
                source: "an earlier statement of this transaction failed, so PostgreSQL \
                         aborted it: nothing was committed"
                    .into(),
            });
        }
        // The head, the notification to other daemons (sent only if the
        // commit succeeds) and the commit in one round trip (numbers and hex
        // only: nothing from outside is spliced in).
        let sql = match (self.head_dirty, self.head) {
            (true, Some((seq, hash))) => format!(
                "INSERT INTO audit_head (id, seq, hash) VALUES (1, {seq}, decode('{}', 'hex')) \
                 ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash; \
                 {} COMMIT",
                hex(&hash),
                self.store.sender.statement()
            ),
            _ => "COMMIT".to_string(),
        };
        self.batch(&sql)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for PostgresTx<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.rollback();
        }
    }
}
