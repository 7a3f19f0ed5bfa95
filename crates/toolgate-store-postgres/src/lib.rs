//! toolgate's durable state in PostgreSQL: [`PostgresStore`] implements
//! `toolgate_store::Store` with the SQLite store's observable semantics, so
//! several daemons (on several hosts) can share one database.
//!
//! # Writers
//!
//! [`Store::begin`] opens a `READ COMMITTED` transaction and, as its first
//! statement, takes one transaction-scoped advisory lock
//! (`pg_advisory_xact_lock`) with a fixed key: every writer in every process
//! on the database queues on it, so a transaction's reads and writes are
//! serialized against every other writer (consuming an approval is
//! exclusive; audit appends get one global order). PostgreSQL makes a
//! commit visible before it releases the lock, and each statement of a
//! `READ COMMITTED` transaction reads what was committed before it started,
//! so the next writer reads everything the previous one wrote (a
//! `REPEATABLE READ` writer would not: its snapshot would date from before
//! the lock wait). A lock wait longer than 30 s fails, as SQLite's busy
//! timeout does.
//!
//! The key is the pair (a constant, a hash of the schema's name): stores on
//! different schemas of one database (tests, several deployments) do not
//! queue behind each other; two schemas whose names hash alike only share a
//! queue, never lose exclusion.
//!
//! A statement that fails inside a transaction aborts it, as PostgreSQL
//! does: later statements fail too, and [`Tx::commit`] then reports an error
//! and commits nothing (SQLite would carry on after a failed statement).
//!
//! # Readers
//!
//! Reads outside a transaction (`read_approval`, `scan_audit`,
//! `audit_head`, memory searches, `read_operators`, …) never take the lock
//! and run on connections of their own (a separate pool), so they never
//! queue behind writers. `scan_audit` and `scan_audit_back` read the rows
//! and the head in one `REPEATABLE READ` snapshot, fetching rows in batches
//! so a visitor that stops early does not read the whole log.
//!
//! # Blocking calls, async callers
//!
//! The `Store` and `Tx` traits are synchronous; they are called from
//! blocking threads (`spawn_blocking`), plain threads and a CLI with no
//! runtime. The store owns a small tokio runtime (two worker threads), which
//! drives its connections; each call blocks the calling thread (parked)
//! until its round trips are done. Waiting is done by a minimal executor of
//! the store's own, not tokio's `block_on`, so it works the same on any
//! thread: a plain one, a `spawn_blocking` one, or even inside an async
//! task, where tokio's `block_on` would panic ("cannot start a runtime from
//! within a runtime") and `block_in_place` panics on a current-thread
//! runtime and in a `LocalSet`.
//!
//! Still, **do not call the store from inside an async task**: the call
//! blocks the task's executor thread for its whole round trip (on a
//! current-thread runtime, every other task waits meanwhile). Call it from
//! `spawn_blocking` or a thread of your own. A call from a task is slow, not
//! fatal: no panic, no deadlock (the store's I/O never runs on the caller's
//! runtime). Dropping a store inside a task is fine too (its runtime shuts
//! down in the background).
//!
//! # Other daemons' commits
//!
//! A write transaction that appended to the audit log notifies
//! (`NOTIFY toolgate_commits`) as it commits, and
//! [`Store::watch_commits`] listens on a connection of its own, so a daemon
//! hears of another's decisions and votes as they commit (see `notify`).
//!
//! # Not yet
//!
//! TLS (`sslmode=require` fails to connect: only plain connections are
//! made).
#![forbid(unsafe_code)]

mod memory;
mod notify;
mod schema;
mod tx;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use tokio::runtime::Runtime;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Config, IsolationLevel, NoTls, Row};
use toolgate_core::knowledge::memory::{Category, Memory, MemoryQuery};
use toolgate_core::{Approval, ApprovalId};
use toolgate_store::{
    AuditRow, Bypass, DecisionCount, DecisionFields, Operator, Store, StoreError, Tx,
};

/// At most this many connections write at once per store (writers queue on
/// one lock anyway; the rest wait here, in process, without a connection).
const WRITERS: usize = 4;

/// At most this many connections read at once per store.
const READERS: usize = 8;

/// Audit rows fetched per round trip while scanning.
const SCAN_BATCH: i32 = 256;

/// The first half of every advisory lock key of the store: "tgat".
const LOCK_CLASS_WRITE: i32 = 0x7467_6174;
/// The first half of the migration lock's key: "tgmg".
const LOCK_CLASS_MIGRATE: i32 = 0x7467_6d67;

/// The advisory lock keys of one store: `(write, space)` for writers,
/// `(migrate, space)` for migrations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keys {
    pub(crate) write: i32,
    pub(crate) migrate: i32,
    pub(crate) space: i32,
}

/// Why a stored row could not be read back, or the database failed.
#[derive(Debug)]
pub(crate) enum RowError {
    /// The engine failed.
    Db(tokio_postgres::Error),
    /// The row holds something this version cannot read.
    Corrupt(String),
}

impl From<tokio_postgres::Error> for RowError {
    fn from(e: tokio_postgres::Error) -> RowError {
        RowError::Db(e)
    }
}

/// A closure turning an engine error into [`StoreError::Backend`] at
/// `location`.
pub(crate) fn db_err<E>(location: &str) -> impl Fn(E) -> StoreError + '_
where
    E: std::error::Error + Send + Sync + 'static,
{
    move |source| StoreError::Backend {
        location: location.to_string(),
        source: Box::new(source),
    }
}

/// The PostgreSQL store. Cheap to share behind an `Arc`; every method is
/// safe to call from several threads at once (but not from inside an async
/// task: see the crate documentation).
pub struct PostgresStore {
    location: String,
    keys: Keys,
    /// How to connect (for the notification listener).
    config: Config,
    /// This store's commits, as other stores' listeners see them.
    sender: notify::Sender,
    writers: Pool,
    readers: Pool,
    /// Always `Some` until dropped (taken there to shut it down without
    /// blocking).
    rt: Option<Runtime>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db`, or
    /// the key=value form) and migrates its schema (the first schema on the
    /// connection's `search_path`, usually `public`) to the current version.
    pub fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        PostgresStore::open(url, None)
    }

    /// Like [`PostgresStore::connect`], but in `schema` (created if missing),
    /// which every pooled connection uses as its only `search_path` entry:
    /// how each test gets tables of its own in a shared database. `schema`
    /// must be a plain lowercase identifier (`[a-z_][a-z0-9_]*`, at most 63
    /// characters).
    pub fn connect_in_schema(url: &str, schema: &str) -> Result<PostgresStore, StoreError> {
        PostgresStore::open(url, Some(schema))
    }

    fn open(url: &str, schema: Option<&str>) -> Result<PostgresStore, StoreError> {
        let mut config: Config = url.parse().map_err(|e| StoreError::Backend {
            // The URL itself may hold a password: never repeat it.
            location: "postgres (the URL given)".to_string(),
            source: Box::new(e),
        })?;
        let location = location_of(&config);
        if let Some(schema) = schema {
            if !plain_identifier(schema) {
                return Err(StoreError::Backend {
                    location,
                    source: format!(
                        "schema name {schema:?} is not a plain lowercase identifier \
                         ([a-z_][a-z0-9_]*, at most 63 characters)"
                    )
                    .into(),
                });
            }
            let options = match config.get_options() {
                Some(o) if !o.trim().is_empty() => format!("{o} -c search_path={schema}"),
                _ => format!("-c search_path={schema}"),
            };
            config.options(options);
        }
        if config.get_application_name().is_none() {
            config.application_name("toolgate");
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("toolgate-postgres")
            .enable_all()
            .build()
            .map_err(db_err(&location))?;
        let pool = |size: usize| {
            let manager = Manager::from_config(
                config.clone(),
                NoTls,
                ManagerConfig {
                    recycling_method: RecyclingMethod::Fast,
                },
            );
            Pool::builder(manager)
                .max_size(size)
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .build()
                .map_err(db_err(&location))
        };
        let mut instance = [0u8; 8];
        getrandom::fill(&mut instance).map_err(|e| StoreError::Random(e.to_string()))?;
        let mut store = PostgresStore {
            sender: notify::Sender {
                space: 0,
                instance: u64::from_le_bytes(instance),
            },
            config: config.clone(),
            writers: pool(WRITERS)?,
            readers: pool(READERS)?,
            keys: Keys {
                write: LOCK_CLASS_WRITE,
                migrate: LOCK_CLASS_MIGRATE,
                space: 0,
            },
            location,
            rt: Some(rt),
        };
        let conn = store.writer()?;
        let current: Option<String> = match schema {
            Some(s) => Some(s.to_string()),
            None => store
                .run(conn.query_one("SELECT current_schema()::text", &[]))
                .and_then(|r| r.try_get(0))
                .map_err(db_err(&store.location))?,
        };
        store.keys.space = space_key(current.as_deref().unwrap_or(""));
        store.sender.space = store.keys.space;
        store.migrate(&conn, schema)?;
        Ok(store)
    }

    /// Runs `f` to completion, blocking this thread (see the crate
    /// documentation for calls from async code).
    pub(crate) fn run<F: Future>(&self, f: F) -> F::Output {
        let Some(rt) = self.rt.as_ref() else {
            unreachable!("the runtime is only taken on drop")
        };
        // The store's runtime is the context for what `f` creates
        // (connections, their tasks); its workers drive their I/O.
        let _context = rt.enter();
        park_on(f)
    }

    /// A connection for a write transaction.
    pub(crate) fn writer(&self) -> Result<Object, StoreError> {
        self.run(self.writers.get()).map_err(db_err(&self.location))
    }

    /// A connection for reading outside any write transaction.
    fn reader(&self) -> Result<Object, StoreError> {
        self.run(self.readers.get()).map_err(db_err(&self.location))
    }

    fn row_err(&self, e: RowError) -> StoreError {
        match e {
            RowError::Db(source) => StoreError::Backend {
                location: self.location.clone(),
                source: Box::new(source),
            },
            RowError::Corrupt(detail) => StoreError::Corrupt {
                location: self.location.clone(),
                detail,
            },
        }
    }

    /// Runs one statement on a reader connection (its own snapshot).
    fn read(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        let conn = self.reader()?;
        self.run(async {
            let stmt = conn.prepare_cached(sql).await?;
            conn.query(&stmt, params).await
        })
        .map_err(db_err(&self.location))
    }

    /// Reads JSON records (column 0 of each row) back as values.
    fn decode_all<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        rows: &[Row],
    ) -> Result<Vec<T>, StoreError> {
        rows.iter()
            .map(|r| {
                let text: String = memory::get(r, 0, what).map_err(|e| self.row_err(e))?;
                serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    location: self.location.clone(),
                    detail: format!("{what}: {e}"),
                })
            })
            .collect()
    }

    /// Memories matching the `to_tsquery` text `query` and the filters,
    /// best first, at most `limit`.
    fn search(
        &self,
        query: &str,
        min_confidence: f64,
        categories: &[Category],
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        // NaN is no floor (PostgreSQL ranks NaN above every number).
        let min = if min_confidence.is_nan() {
            0.0
        } else {
            min_confidence
        };
        let names = memory::category_names(categories);
        let limit = sql_limit(limit);
        let sql = format!(
            "SELECT {} FROM memories, to_tsquery('simple', $1) q \
             WHERE words @@ q AND confidence >= $2 \
             AND (cardinality($3::text[]) = 0 OR categories && $3::text[]) \
             ORDER BY ts_rank(words, q, 1) DESC, id DESC LIMIT $4",
            memory::MEMORY_COLUMNS
        );
        let rows = self.read(&sql, &[&query, &min, &names, &limit])?;
        rows.iter()
            .map(|r| memory::memory_from_row(r).map_err(|e| self.row_err(e)))
            .collect()
    }

    /// Runs an audit query with one bound number in a `REPEATABLE READ`
    /// snapshot, visiting rows until `visit` says stop; returns the head in
    /// the same snapshot.
    fn scan(
        &self,
        sql: &str,
        bound: i64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        let err = db_err(&self.location);
        let mut conn = self.reader()?;
        let txn = self
            .run(
                conn.build_transaction()
                    .isolation_level(IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start(),
            )
            .map_err(&err)?;
        let (head, portal) = self
            .run(async {
                let head = txn.query_opt(HEAD_SQL, &[]).await?;
                let head = head_from(head)?;
                let stmt = txn.prepare_cached(sql).await?;
                let portal = txn.bind(&stmt, &[&bound]).await?;
                Ok::<_, tokio_postgres::Error>((head, portal))
            })
            .map_err(&err)?;
        'outer: loop {
            let rows = self
                .run(txn.query_portal(&portal, SCAN_BATCH))
                .map_err(&err)?;
            let done = rows.len() < SCAN_BATCH as usize;
            for r in &rows {
                if !visit(audit_row(r).map_err(|e| self.row_err(e))?) {
                    break 'outer;
                }
            }
            if done {
                break;
            }
        }
        self.run(txn.commit()).map_err(&err)?;
        Ok(head)
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        // Without blocking, so that a store dropped in async code does not
        // panic; the pools (dropped after this) close their connections.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Wakes a thread parked in [`park_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `f` on this thread until it is ready, parking between polls: an
/// executor of one future that works in any thread, inside a runtime or
/// not (tokio's own `block_on` panics inside one).
fn park_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
        // A wake before this park makes it return at once.
        std::thread::park();
    }
}

/// One `audit` row (`seq, hash, entry`).
fn audit_row(r: &Row) -> Result<AuditRow, RowError> {
    let seq: i64 = memory::get(r, 0, "audit seq")?;
    let h: Vec<u8> = memory::get(r, 1, "audit hash")?;
    let entry: String = memory::get(r, 2, "audit entry")?;
    Ok(AuditRow {
        seq: seq as u64,
        // A hash of the wrong size is left zeroed: it can never verify, so
        // the break is reported at this seq.
        hash: hash32(&h),
        entry,
    })
}

/// `h` as a 32-byte hash, zeroed when it has another length.
pub(crate) fn hash32(h: &[u8]) -> [u8; 32] {
    let mut hash = [0u8; 32];
    if h.len() == 32 {
        hash.copy_from_slice(h);
    }
    hash
}

/// Reads the recorded head of the audit chain (see [`head_from`]).
pub(crate) const HEAD_SQL: &str = "SELECT seq, hash FROM audit_head WHERE id = 1";

/// The recorded head of the audit chain.
pub(crate) async fn read_head(
    client: &tokio_postgres::Client,
) -> Result<Option<(u64, [u8; 32])>, tokio_postgres::Error> {
    head_from(client.query_opt(HEAD_SQL, &[]).await?)
}

/// The head in a row read by [`HEAD_SQL`].
fn head_from(row: Option<Row>) -> Result<Option<(u64, [u8; 32])>, tokio_postgres::Error> {
    row.map(|r| {
        let seq: i64 = r.try_get(0)?;
        let h: Vec<u8> = r.try_get(1)?;
        Ok((seq as u64, hash32(&h)))
    })
    .transpose()
}

/// The values of `fields` as the decisions index holds them, in
/// [`DecisionFields::COLUMNS`] order: a value holding NUL (which an agent
/// may send, and the log keeps escaped) is indexed as absent, since
/// PostgreSQL text cannot hold NUL and the statement binding it would fail
/// (and with it the append, and the decision it records). The backfill of
/// migration 2 does the same.
pub(crate) fn index_values(fields: &DecisionFields) -> [Option<&str>; 6] {
    fields.values().map(|v| v.filter(|v| !v.contains('\0')))
}

/// The query for a page of decisions matching the fields given in `q`
/// (`$1` is `before`, then one parameter per given field in
/// [`DecisionFields::COLUMNS`] order, then the limit). Only the given
/// fields are in the WHERE clause, so the planner can walk the index of
/// one of them backwards in seq order and stop after `limit` rows; column
/// names come only from `COLUMNS`, and every value is bound, never spliced
/// into the text.
fn decisions_sql(q: &DecisionFields) -> String {
    let mut sql = String::from(
        "SELECT a.seq, a.hash, a.entry FROM decisions AS d JOIN audit AS a \
         ON a.seq = d.seq WHERE d.seq < $1",
    );
    let mut n = 1;
    for (column, value) in DecisionFields::COLUMNS.iter().zip(q.values()) {
        if value.is_some() {
            n += 1;
            sql.push_str(&format!(" AND d.{column} = ${n}"));
        }
    }
    sql.push_str(&format!(" ORDER BY d.seq DESC LIMIT ${}", n + 1));
    sql
}

/// A LIMIT parameter: `NULL` (no limit) when `limit` does not fit.
pub(crate) fn sql_limit(limit: usize) -> Option<i64> {
    i64::try_from(limit).ok()
}

/// Whether `s` is a plain lowercase identifier, usable unquoted.
fn plain_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z' | '_'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && s.len() <= 63
}

/// The second half of the store's advisory lock keys: FNV-1a of the schema
/// name.
fn space_key(schema: &str) -> i32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in schema.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h as i32
}

/// `postgres://host:port/db`, never with the user's password.
fn location_of(config: &Config) -> String {
    use tokio_postgres::config::Host;
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match h {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "localhost:5432".to_string()
    } else {
        hosts.join(",")
    };
    let db = config.get_dbname().or(config.get_user()).unwrap_or("");
    format!("postgres://{hosts}/{db}")
}

impl Store for PostgresStore {
    fn begin(&self) -> Result<Box<dyn Tx + '_>, StoreError> {
        Ok(Box::new(tx::PostgresTx::begin(self)?))
    }

    fn watch_commits(&self, wake: Arc<dyn Fn() + Send + Sync>) -> bool {
        let Some(rt) = self.rt.as_ref() else {
            return false;
        };
        let _context = rt.enter();
        notify::watch(self.config.clone(), self.sender, wake);
        true
    }

    fn scan_audit(
        &self,
        from: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        let from = i64::try_from(from).unwrap_or(i64::MAX);
        self.scan(
            "SELECT seq, hash, entry FROM audit WHERE seq >= $1 ORDER BY seq",
            from,
            visit,
        )
    }

    fn scan_audit_back(
        &self,
        before: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<(), StoreError> {
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        self.scan(
            "SELECT seq, hash, entry FROM audit WHERE seq < $1 ORDER BY seq DESC",
            before,
            visit,
        )
        .map(|_| ())
    }

    fn audit_head(&self) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        let conn = self.reader()?;
        self.run(read_head(&conn)).map_err(db_err(&self.location))
    }

    fn read_approval(&self, id: &ApprovalId) -> Result<Option<Approval>, StoreError> {
        let rows = self.read(
            "SELECT record FROM approvals WHERE id = $1",
            &[&id.to_string()],
        )?;
        Ok(self.decode_all("approval", &rows)?.pop())
    }

    fn count_open_approvals(&self) -> Result<u64, StoreError> {
        let rows = self.read(
            "SELECT count(*) FROM approvals WHERE state IN ('pending', 'approved')",
            &[],
        )?;
        let n: i64 = match rows.first() {
            Some(r) => memory::get(r, 0, "count").map_err(|e| self.row_err(e))?,
            None => 0,
        };
        Ok(n.max(0) as u64)
    }

    fn approval_ids_starting(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        // PostgreSQL text cannot hold NUL, so no id starts with it.
        if prefix.contains('\0') {
            return Ok(Vec::new());
        }
        // A range on the primary key (byte order), not LIKE: the prefix is
        // the person's text, and '%' or '_' in it must not match anything
        // else.
        let end = format!("{prefix}\u{10FFFF}");
        let rows = self.read(
            "SELECT id FROM approvals WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3",
            &[&prefix, &end, &sql_limit(limit)],
        )?;
        rows.iter()
            .map(|r| memory::get(r, 0, "approval id").map_err(|e| self.row_err(e)))
            .collect()
    }

    fn decisions(
        &self,
        q: &DecisionFields,
        before: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let values = q.values();
        // No entry has seq 0; and no index value holds NUL (see
        // `index_values`), so a query for one matches nothing.
        if limit == 0 || before <= 1 || values.iter().flatten().any(|v| v.contains('\0')) {
            return Ok(Vec::new());
        }
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let limit = sql_limit(limit);
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&before];
        params.extend(values.iter().flatten().map(|v| v as &(dyn ToSql + Sync)));
        params.push(&limit);
        // At most one cached statement per combination of fields (64) on
        // each reader connection.
        let rows = self.read(&decisions_sql(q), &params)?;
        rows.iter()
            .map(|r| audit_row(r).map_err(|e| self.row_err(e)))
            .collect()
    }

    fn decision_counts(&self, through: u64) -> Result<Vec<DecisionCount>, StoreError> {
        let through = i64::try_from(through).unwrap_or(i64::MAX);
        let rows = self.read(
            "SELECT decision, layer, count(*) FROM decisions WHERE seq <= $1 \
             GROUP BY decision, layer",
            &[&through],
        )?;
        rows.iter()
            .map(|r| {
                Ok(DecisionCount {
                    decision: r
                        .try_get::<_, Option<String>>(0)
                        .map_err(|e| self.row_err(RowError::Db(e)))?
                        .unwrap_or_default(),
                    layer: r
                        .try_get::<_, Option<String>>(1)
                        .map_err(|e| self.row_err(RowError::Db(e)))?
                        .unwrap_or_default(),
                    count: r
                        .try_get::<_, i64>(2)
                        .map_err(|e| self.row_err(RowError::Db(e)))?
                        .max(0) as u64,
                })
            })
            .collect()
    }

    fn search_memories(&self, q: &MemoryQuery) -> Result<Vec<Memory>, StoreError> {
        let Some(query) = memory::any_term(&q.terms) else {
            return Ok(Vec::new());
        };
        if q.limit == 0 {
            return Ok(Vec::new());
        }
        self.search(&query, q.min_confidence, &q.categories, q.limit)
    }

    fn search_memories_text(&self, text: &str, limit: usize) -> Result<Vec<Memory>, StoreError> {
        let Some(query) = memory::all_words(text) else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.search(&query, 0.0, &[], limit)
    }

    fn memories_rev(&self) -> Result<u64, StoreError> {
        let rows = self.read("SELECT rev FROM memory_rev WHERE id = 1", &[])?;
        let n: i64 = match rows.first() {
            Some(r) => memory::get(r, 0, "memories revision").map_err(|e| self.row_err(e))?,
            None => 0,
        };
        Ok(n.max(0) as u64)
    }

    fn list_memories(
        &self,
        category: Option<Category>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let limit = sql_limit(limit);
        let cols = memory::MEMORY_COLUMNS;
        let rows = match category {
            None => self.read(
                &format!("SELECT {cols} FROM memories ORDER BY id DESC LIMIT $1"),
                &[&limit],
            )?,
            Some(c) => self.read(
                &format!(
                    "SELECT {cols} FROM memories WHERE $1 = ANY (categories) \
                     ORDER BY id DESC LIMIT $2"
                ),
                &[&c.as_str(), &limit],
            )?,
        };
        rows.iter()
            .map(|r| memory::memory_from_row(r).map_err(|e| self.row_err(e)))
            .collect()
    }

    fn read_operators(&self) -> Result<Vec<Operator>, StoreError> {
        let rows = self.read(
            "SELECT record FROM records WHERE ns = 'operator' ORDER BY key",
            &[],
        )?;
        self.decode_all("operator", &rows)
    }

    fn read_bypasses(&self) -> Result<Vec<Bypass>, StoreError> {
        let rows = self.read("SELECT record FROM records WHERE ns = 'bypass'", &[])?;
        self.decode_all("bypass", &rows)
    }

    fn location(&self) -> String {
        self.location.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_never_shows_the_password() {
        let c: Config = "postgres://alice:s3cret@db.internal:6543/toolgate"
            .parse()
            .unwrap();
        assert_eq!(location_of(&c), "postgres://db.internal:6543/toolgate");
        let c: Config = "host=/run/postgresql user=bob password=pw".parse().unwrap();
        assert_eq!(location_of(&c), "postgres:///run/postgresql:5432/bob");
        let c: Config = "postgres://u:p@a:1,b:2/x".parse().unwrap();
        assert_eq!(location_of(&c), "postgres://a:1,b:2/x");
    }

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(plain_identifier("tg_test_0a1b"));
        assert!(plain_identifier("_x"));
        for bad in [
            "",
            "1x",
            "A",
            "a-b",
            "a b",
            "a;drop",
            "\"x\"",
            &"x".repeat(64),
        ] {
            assert!(!plain_identifier(bad), "{bad:?}");
        }
    }

    #[test]
    fn schemas_get_their_own_lock_keys() {
        assert_ne!(space_key("public"), space_key("tg_a"));
        assert_eq!(space_key("public"), space_key("public"));
    }
}
