//! The embedded store: one SQLite database (`toolgate.db`) in the data
//! directory, in WAL mode, with versioned migrations.
//!
//! Writers take SQLite's write lock up front (`BEGIN IMMEDIATE`), so a
//! transaction's reads and writes are serialized against every other writer,
//! in this process or another; readers (audit scans, and memory searches
//! on connections of their own) never block writers. With [`SyncMode::Full`] (the
//! default) a commit is on disk when it returns; with [`SyncMode::Normal`] it
//! survives a killed process but the last commits may be lost on power
//! failure.
//!
//! Most processes are short-lived (a hook, one `check`), so closing a
//! connection does not checkpoint: SQLite's checkpoint on close (two more
//! fsyncs, then deleting the WAL, which the next process must create and
//! fsync again, with its directory) would cost several times the commit
//! itself. The WAL stays, durable, and is read back on the next open. When
//! it has grown past [`WAL_CHECKPOINT_BYTES`], the store folds it into the
//! database as it is dropped (after every answer was committed) and starts
//! the WAL over from its beginning, so the WAL a process reads back on open
//! stays small. Starting over rather than truncating keeps the file's
//! blocks: a commit then overwrites blocks the file already has, and its
//! fsync writes no file-system metadata (measured here: ~105 µs a commit
//! instead of ~160 µs into a truncated, growing WAL). A long-running
//! process also checkpoints as it goes, as SQLite's automatic checkpoint
//! would.

mod memory;
#[cfg(test)]
mod tests;
mod tx;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension, Row, params};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use toolgate_core::knowledge::memory::{Category, Memory, MemoryQuery};
use toolgate_core::{Approval, ApprovalId};
use toolgate_store::{
    AuditRow, Bypass, DecisionCount, DecisionFields, Operator, Store, StoreError, Tx,
};
use tx::SqliteTx;

/// How hard a commit waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// fsync on every commit: survives power loss.
    #[default]
    Full,
    /// fsync at checkpoints: survives a killed process, not a power cut.
    Normal,
}

/// Schema migrations, applied in order; `PRAGMA user_version` records how
/// many ran. Append only: never edit a shipped migration.
const MIGRATIONS: &[&str] = &[
    // 1: approvals, votes, acknowledgements, audit chain and its head.
    "CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        binding TEXT NOT NULL,
        state TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        due_ms INTEGER,
        record TEXT NOT NULL
     ) STRICT;
     CREATE INDEX approvals_by_binding ON approvals (binding);
     CREATE INDEX approvals_by_state ON approvals (state, created_ms);
     CREATE INDEX approvals_by_due ON approvals (due_ms) WHERE due_ms IS NOT NULL;
     CREATE TABLE votes (
        approval TEXT NOT NULL REFERENCES approvals (id),
        identity TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (approval, identity)
     ) STRICT;
     CREATE TABLE acks (
        key TEXT NOT NULL,
        scope TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (key, scope)
     ) STRICT;
     CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        hash BLOB NOT NULL,
        entry TEXT NOT NULL
     ) STRICT;
     CREATE TABLE audit_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq INTEGER NOT NULL,
        hash BLOB NOT NULL
     ) STRICT;",
    // 2: memories with a full-text index kept in step by triggers (until 3), a
    // revision number every change bumps (so a cache in any process can
    // tell it is stale by reading one integer), and the knowledge shown for
    // a call while it waits to be acknowledged.
    "CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        text TEXT NOT NULL CHECK (length(text) > 0),
        categories TEXT NOT NULL,
        confidence REAL NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
        source TEXT,
        created_ms INTEGER NOT NULL
     ) STRICT;
     CREATE VIRTUAL TABLE memories_fts USING fts5 (
        text,
        content = 'memories',
        content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2'
     );
     CREATE TABLE memory_rev (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        rev INTEGER NOT NULL
     ) STRICT;
     INSERT INTO memory_rev (id, rev) VALUES (1, 0);
     CREATE TRIGGER memories_inserted AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        UPDATE memory_rev SET rev = rev + 1 WHERE id = 1;
     END;
     CREATE TRIGGER memories_deleted AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        UPDATE memory_rev SET rev = rev + 1 WHERE id = 1;
     END;
     CREATE TRIGGER memories_updated AFTER UPDATE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        UPDATE memory_rev SET rev = rev + 1 WHERE id = 1;
     END;
     CREATE TABLE knowledge_shown (
        id TEXT PRIMARY KEY,
        binding TEXT NOT NULL,
        scope TEXT NOT NULL,
        shown_ms INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL,
        keys TEXT NOT NULL
     ) STRICT;
     CREATE INDEX knowledge_shown_by_scope ON knowledge_shown (scope, shown_ms);
     CREATE INDEX knowledge_shown_by_expiry ON knowledge_shown (expires_ms);",
    // 3: the store keeps the full-text index and the revision in step
    // itself, in the transaction that writes the memory (`tx.rs`). Every
    // process that opens the database parses its whole schema, and the
    // three triggers were a quarter of that parse (~0.18 M instructions per
    // hook process) for writes a hook never makes.
    "DROP TRIGGER memories_inserted;
     DROP TRIGGER memories_deleted;
     DROP TRIGGER memories_updated;",
    // 4: named operators (each with a token of their own, stored hashed, and
    // the chat identities that are theirs), emergency bypasses, and
    // single-use keys (signed links, channel callbacks) remembered until
    // they could no longer be accepted anyway: one table, by namespace
    // (`operator`, `bypass`, `key`), because every process that opens the
    // database parses every table's definition (~23 k instructions each
    // per hook process, for records a hook rarely reads).
    "CREATE TABLE records (
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        until_ms INTEGER,
        record TEXT NOT NULL,
        PRIMARY KEY (ns, key)
     ) STRICT, WITHOUT ROWID;",
    // 5: an index of decision entries by the fields they are looked up by
    // (`DecisionFields::COLUMNS`; NULL where the entry has no string
    // there), so a filtered page of decisions reads only its own rows, not
    // the whole log. `seq` is the entry's audit seq. Only the
    // high-cardinality fields get an index: risk and layer have a handful
    // of values each, so an index on them would select most rows anyway
    // (and each index is more schema every process parses on open). The
    // entries already logged are indexed here, reading each field as
    // `DecisionFields::of_text` does: strict JSON only (`json_valid`, in a
    // CASE so that nothing parses a malformed entry, which would fail the
    // migration), the kind the string `decision` (`json_extract` gives the
    // SQL text 'decision' for nothing else), and a field only when it is a
    // JSON string (`json_type` 'text'), else NULL.
    "CREATE TABLE decisions (
        seq INTEGER PRIMARY KEY,
        decision TEXT,
        tool TEXT,
        risk TEXT,
        layer TEXT,
        agent TEXT,
        session TEXT
     ) STRICT;
     CREATE INDEX decisions_by_decision ON decisions (decision, seq);
     CREATE INDEX decisions_by_tool ON decisions (tool, seq);
     CREATE INDEX decisions_by_agent ON decisions (agent, seq);
     CREATE INDEX decisions_by_session ON decisions (session, seq);
     INSERT INTO decisions (seq, decision, tool, risk, layer, agent, session)
     SELECT seq,
        CASE json_type(entry, '$.data.decision')
            WHEN 'text' THEN json_extract(entry, '$.data.decision') END,
        CASE json_type(entry, '$.data.call.tool')
            WHEN 'text' THEN json_extract(entry, '$.data.call.tool') END,
        CASE json_type(entry, '$.data.risk')
            WHEN 'text' THEN json_extract(entry, '$.data.risk') END,
        CASE json_type(entry, '$.data.layer')
            WHEN 'text' THEN json_extract(entry, '$.data.layer') END,
        CASE json_type(entry, '$.data.call.agent')
            WHEN 'text' THEN json_extract(entry, '$.data.call.agent') END,
        CASE json_type(entry, '$.data.call.session')
            WHEN 'text' THEN json_extract(entry, '$.data.call.session') END
     FROM audit
     WHERE CASE WHEN json_valid(entry)
        THEN json_extract(entry, '$.kind') = 'decision' ELSE 0 END;",
];

/// The database file's name inside the data directory.
pub const DB_FILE: &str = "toolgate.db";

/// A WAL holding more than this is checkpointed and started over when the
/// store is dropped. A process that opens the database while no other
/// connection has it open reads the whole WAL back (a few µs a page), so it
/// is kept small; each checkpoint costs an fsync of the database, shared by
/// the ~30 decisions recorded in between (a decision is usually two pages).
pub const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;

/// A long-running process checkpoints (without waiting for readers) once a
/// commit leaves this many pages in the WAL: SQLite's own default, which
/// the store's WAL hook replaces.
const AUTOCHECKPOINT_PAGES: u32 = 1000;

/// The WAL file is cut back to this size when it starts over, so a WAL that
/// once grew large does not keep its disk space for good.
const WAL_SIZE_LIMIT: i64 = 4 * 1024 * 1024;

/// One WAL frame: a page and its 24-byte frame header.
const WAL_FRAME_BYTES: u64 = 4096 + 24;

/// At most this many idle memory reader connections are kept open.
const MEMORY_READERS: usize = 8;

/// The SQLite store. Cheap to share behind an `Arc`; every method is safe to
/// call from several threads (writes queue on an internal lock, then on
/// SQLite's).
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    writer: Mutex<Connection>,
    /// Opened on first use: most processes (one `check`) never scan.
    reader: Mutex<Option<Connection>>,
    /// Idle connections for memory searches and the memories revision,
    /// which are on the decision path: their own (opened on first use, one
    /// per concurrent search, at most [`MEMORY_READERS`] kept), so they
    /// never queue behind an audit scan on `reader` or behind each other.
    memory_readers: Mutex<Vec<Connection>>,
    /// Pages in the WAL after the writer's last commit (SQLite's WAL hook):
    /// what a later open would read back.
    wal_pages: Arc<AtomicU32>,
    sync: SyncMode,
}

impl SqliteStore {
    /// Opens (creating if needed) the store in `dir`: the directory is created
    /// private to the user, the database migrated to the current schema.
    pub fn open(dir: &Path, sync: SyncMode) -> Result<SqliteStore, StoreError> {
        create_private_dir(dir).map_err(|source| StoreError::DataDir {
            path: dir.display().to_string(),
            source,
        })?;
        SqliteStore::open_file(&dir.join(DB_FILE), sync)
    }

    /// Opens (creating if needed) the database at `path`.
    pub fn open_file(path: &Path, sync: SyncMode) -> Result<SqliteStore, StoreError> {
        let location = format!("sqlite:{}", path.display());
        let err = |source: rusqlite::Error| StoreError::Backend {
            location: location.clone(),
            source: Box::new(source),
        };
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let created = !(path.exists() && Path::new(&wal).exists());
        let mut writer = Connection::open(path).map_err(err)?;
        // Private whatever the umask or the directory: SQLite gives the
        // -wal and -shm files the database's own mode.
        make_private(path).map_err(|source| StoreError::DataDir {
            path: path.display().to_string(),
            source,
        })?;
        configure(&writer, sync).map_err(err)?;
        let wal_pages = Arc::new(AtomicU32::new(0));
        count_wal_pages(&mut writer, wal_pages.clone()).map_err(err)?;
        migrate(&writer, &location)?;
        if created {
            // The bundled SQLite is built without its directory syncs
            // (.cargo/config.toml): make the new database's and WAL's
            // directory entries durable here, once, before any commit
            // of a call relies on them (the migration's are redone
            // if lost).
            sync_parent_dir(path).map_err(|source| StoreError::DataDir {
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(SqliteStore {
            path: path.to_path_buf(),
            writer: Mutex::new(writer),
            reader: Mutex::new(None),
            memory_readers: Mutex::new(Vec::new()),
            wal_pages,
            sync,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Backend {
            location: self.location(),
            source: Box::new(source),
        }
    }

    /// Runs an audit query with one bound number in a read snapshot,
    /// visiting rows until `visit` says stop; returns the head in the same
    /// snapshot.
    fn scan(
        &self,
        sql: &str,
        bound: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        self.with_reader(|conn| {
            if !conn.is_autocommit() {
                conn.execute_batch("ROLLBACK").map_err(self.err())?;
            }
            conn.execute_batch("BEGIN").map_err(self.err())?;
            let result = (|| {
                let head = read_head(conn)?;
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows = stmt.query(params![bound as i64])?;
                while let Some(r) = rows.next()? {
                    if !visit(audit_row(r)?) {
                        break;
                    }
                }
                Ok(head)
            })();
            let _ = conn.execute_batch("COMMIT");
            result.map_err(self.err())
        })
    }

    /// Runs `f` on the reader connection, opening it the first time.
    fn with_reader<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut guard = lock(&self.reader);
        if guard.is_none() {
            let conn = Connection::open(&self.path).map_err(self.err())?;
            configure(&conn, self.sync).map_err(self.err())?;
            *guard = Some(conn);
        }
        match guard.as_ref() {
            Some(conn) => f(conn),
            None => unreachable!("opened above"),
        }
    }

    /// Runs `f` on an idle memory reader connection, opening one when none
    /// is idle. Every statement on it runs in its own snapshot
    /// (autocommit), so it sees what any process committed before it
    /// started.
    fn with_memory_reader<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, memory::RowError>,
    ) -> Result<R, StoreError> {
        let idle = lock(&self.memory_readers).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = Connection::open(&self.path).map_err(self.err())?;
                configure(&conn, self.sync).map_err(self.err())?;
                conn
            }
        };
        let result = f(&conn).map_err(|e| match e {
            memory::RowError::Sql(source) => StoreError::Backend {
                location: self.location(),
                source: Box::new(source),
            },
            memory::RowError::Corrupt(detail) => StoreError::Corrupt {
                location: self.location(),
                detail,
            },
        });
        let mut idle = lock(&self.memory_readers);
        if idle.len() < MEMORY_READERS {
            idle.push(conn);
        }
        result
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn make_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

/// Flushes `path`'s directory entry (its parent directory) to disk.
fn sync_parent_dir(path: &Path) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    std::fs::File::open(dir.unwrap_or(Path::new("."))).and_then(|d| d.sync_all())
}

/// How long a statement waits for another connection's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

fn configure(conn: &Connection, sync: SyncMode) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Closing leaves the WAL as it is (see the module documentation): every
    // commit in it is already as durable as the sync mode makes it.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", sync_level(sync))?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// SQLite's `synchronous` level for a sync mode.
fn sync_level(sync: SyncMode) -> &'static str {
    match sync {
        SyncMode::Full => "FULL",
        SyncMode::Normal => "NORMAL",
    }
}

fn migrate(conn: &Connection, location: &str) -> Result<(), StoreError> {
    let err = |source: rusqlite::Error| StoreError::Backend {
        location: location.to_string(),
        source: Box::new(source),
    };
    // Up to date (the common case): no write lock needed.
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(err)?;
    if version == MIGRATIONS.len() as i64 {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE").map_err(err)?;
    let result = (|| {
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(err)?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(StoreError::SchemaTooNew {
                location: location.to_string(),
                found: version,
                known,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            conn.execute_batch(sql).map_err(err)?;
            conn.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(err)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT").map_err(err),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        self.fold_big_wal();
    }
}

impl SqliteStore {
    /// Folds a large WAL into the database and starts it over, if nothing
    /// else is using the database right now (no waiting: another process
    /// will do it later). Nothing is lost when this fails or never runs: the
    /// WAL is as durable as the database.
    fn fold_big_wal(&self) {
        let pages = u64::from(self.wal_pages.load(Ordering::Relaxed));
        if pages * WAL_FRAME_BYTES <= WAL_CHECKPOINT_BYTES {
            return;
        }
        // A reader holding a snapshot would keep the checkpoint from
        // finishing.
        drop(lock(&self.reader).take());
        lock(&self.memory_readers).clear();
        let conn = lock(&self.writer);
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        if conn.busy_timeout(Duration::ZERO).is_err() {
            return;
        }
        let folded = conn
            .query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .is_ok_and(|(busy, in_wal, folded)| busy == 0 && in_wal == folded);
        if folded {
            // Only a write starts the WAL over (a new salt, so a later open
            // reads nothing of what is behind the first frames). A fresh
            // process never could: on open SQLite counts every frame as
            // not yet folded. So this process writes a marker now: a count
            // of the times the WAL started over, since a row written again
            // unchanged writes no page. Its own durability does not matter
            // (synchronous=NORMAL: if it is lost, the WAL on disk holds only
            // pages the database already has); every later commit is as
            // durable as the store's mode again.
            let _ = conn.execute_batch(
                "PRAGMA synchronous = NORMAL;
                 BEGIN IMMEDIATE;
                 INSERT INTO records (ns, key, record)
                     VALUES ('store', 'wal-started-over', '1')
                     ON CONFLICT (ns, key) DO UPDATE
                     SET record = CAST(CAST(record AS INTEGER) + 1 AS TEXT);
                 COMMIT;",
            );
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            let _ = conn.pragma_update(None, "synchronous", sync_level(self.sync));
        }
        let _ = conn.busy_timeout(BUSY_TIMEOUT);
    }
}

/// Keeps `pages` at the number of pages in the WAL after each commit on
/// `conn`, and checkpoints (passively) when a commit leaves
/// [`AUTOCHECKPOINT_PAGES`] or more, as SQLite's automatic checkpoint, which
/// a WAL hook replaces, would.
fn count_wal_pages(conn: &mut Connection, pages: Arc<AtomicU32>) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
    conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, in_wal: i32| {
        let in_wal = u32::try_from(in_wal).unwrap_or(0);
        pages.store(in_wal, Ordering::Relaxed);
        if in_wal >= AUTOCHECKPOINT_PAGES {
            // As SQLite's own hook: a checkpoint that cannot finish now is
            // retried after a later commit.
            let _ = wal.checkpoint();
        }
        Ok(())
    }))
}

/// Locks a mutex; a panic in another thread while holding it leaves the
/// connection usable (any open transaction is rolled back on next use).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One audit row selected as `seq, hash, entry`. A hash of the wrong size
/// or type is left zeroed, and an entry that is not text read as empty:
/// such a row can never verify, so the break is reported at its seq rather
/// than as an error that hides where it is.
fn audit_row(r: &Row<'_>) -> rusqlite::Result<AuditRow> {
    let seq: i64 = r.get(0)?;
    let mut hash = [0u8; 32];
    if let Ok(b) = r.get_ref(1)?.as_blob()
        && b.len() == 32
    {
        hash.copy_from_slice(b);
    }
    let entry = match r.get_ref(2)?.as_str() {
        Ok(s) => s.to_string(),
        Err(_) => String::new(),
    };
    Ok(AuditRow {
        seq: seq as u64,
        hash,
        entry,
    })
}

/// The query for a page of decisions matching the fields given in `q`
/// (`?1` is `before`, then one parameter per given field in
/// [`DecisionFields::COLUMNS`] order, then the limit). Only the given
/// fields are in the WHERE clause, so the planner can walk the index of
/// one of them in seq order; column names come only from `COLUMNS`, and
/// every value is bound, never spliced into the text.
fn decisions_sql(q: &DecisionFields) -> String {
    let mut sql = String::from(
        // CROSS JOIN makes SQLite loop over the index table outside and
        // look each entry up by its primary key inside, whatever its
        // estimates, so the page stops after `limit` rows.
        "SELECT a.seq, a.hash, a.entry FROM decisions AS d CROSS JOIN audit AS a \
         ON a.seq = d.seq WHERE d.seq < ?1",
    );
    let mut n = 1;
    for (column, value) in DecisionFields::COLUMNS.iter().zip(q.values()) {
        if value.is_some() {
            n += 1;
            sql.push_str(&format!(" AND d.{column} = ?{n}"));
        }
    }
    sql.push_str(&format!(" ORDER BY d.seq DESC LIMIT ?{}", n + 1));
    sql
}

pub(crate) fn read_head(conn: &Connection) -> rusqlite::Result<Option<(u64, [u8; 32])>> {
    conn.prepare_cached("SELECT seq, hash FROM audit_head WHERE id = 1")?
        .query_row([], |r| {
            let seq: i64 = r.get(0)?;
            let hash: Vec<u8> = r.get(1)?;
            Ok((seq as u64, hash))
        })
        .optional()
        .map(|o| {
            o.map(|(seq, h)| {
                let mut hash = [0u8; 32];
                if h.len() == 32 {
                    hash.copy_from_slice(&h);
                }
                (seq, hash)
            })
        })
}

impl Store for SqliteStore {
    fn begin(&self) -> Result<Box<dyn Tx + '_>, StoreError> {
        let conn = lock(&self.writer);
        if !conn.is_autocommit() {
            conn.execute_batch("ROLLBACK").map_err(self.err())?;
        }
        conn.execute_batch("BEGIN IMMEDIATE").map_err(self.err())?;
        Ok(Box::new(SqliteTx::new(conn, self.location())))
    }

    fn scan_audit(
        &self,
        from: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        self.scan(
            "SELECT seq, hash, entry FROM audit WHERE seq >= ?1 ORDER BY seq",
            from,
            visit,
        )
    }

    fn scan_audit_back(
        &self,
        before: u64,
        visit: &mut dyn FnMut(AuditRow) -> bool,
    ) -> Result<(), StoreError> {
        let before = before.min(i64::MAX as u64);
        self.scan(
            "SELECT seq, hash, entry FROM audit WHERE seq < ?1 ORDER BY seq DESC",
            before,
            visit,
        )
        .map(|_| ())
    }

    fn audit_head(&self) -> Result<Option<(u64, [u8; 32])>, StoreError> {
        self.with_reader(|conn| read_head(conn).map_err(self.err()))
    }

    fn read_approval(&self, id: &ApprovalId) -> Result<Option<Approval>, StoreError> {
        let text: Option<String> = self.with_reader(|conn| {
            conn.prepare_cached("SELECT record FROM approvals WHERE id = ?1")
                .and_then(|mut s| {
                    s.query_row(params![id.to_string()], |r| r.get(0))
                        .optional()
                })
                .map_err(self.err())
        })?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| StoreError::Corrupt {
                location: self.location(),
                detail: format!("approval: {e}"),
            })
        })
        .transpose()
    }

    fn count_open_approvals(&self) -> Result<u64, StoreError> {
        self.with_reader(|conn| {
            conn.prepare_cached(
                "SELECT count(*) FROM approvals WHERE state IN ('pending', 'approved')",
            )
            .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
            .map(|n| n.max(0) as u64)
            .map_err(self.err())
        })
    }

    fn approval_ids_starting(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        // A range on the primary key, not LIKE: the prefix is the person's
        // text, and '%' or '_' in it must not match anything else.
        let end = format!("{prefix}\u{10FFFF}");
        self.with_reader(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id FROM approvals WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3",
                )
                .map_err(self.err())?;
            let rows = stmt
                .query_map(params![prefix, end, limit as i64], |r| {
                    r.get::<_, String>(0)
                })
                .map_err(self.err())?;
            rows.collect::<Result<Vec<_>, _>>().map_err(self.err())
        })
    }

    fn decisions(
        &self,
        q: &DecisionFields,
        before: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        if limit == 0 || before <= 1 {
            return Ok(Vec::new());
        }
        let before = before.min(i64::MAX as u64) as i64;
        let limit = memory::sql_limit(limit);
        let sql = decisions_sql(q);
        let mut args: Vec<&dyn rusqlite::ToSql> = vec![&before];
        let values = q.values();
        args.extend(values.iter().flatten().map(|v| v as &dyn rusqlite::ToSql));
        args.push(&limit);
        self.with_reader(|conn| {
            (|| {
                // At most one statement per combination of fields (64), so
                // the cache keeps the ones in use.
                let mut stmt = conn.prepare_cached(&sql)?;
                let rows = stmt.query_map(&args[..], audit_row)?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })()
            .map_err(self.err())
        })
    }

    fn decision_counts(&self, through: u64) -> Result<Vec<DecisionCount>, StoreError> {
        let through = through.min(i64::MAX as u64) as i64;
        self.with_reader(|conn| {
            (|| {
                let mut stmt = conn.prepare_cached(
                    "SELECT decision, layer, count(*) FROM decisions WHERE seq <= ?1 \
                     GROUP BY decision, layer",
                )?;
                let rows = stmt.query_map([through], |r| {
                    Ok(DecisionCount {
                        decision: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                        layer: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                        count: r.get::<_, i64>(2)?.max(0) as u64,
                    })
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })()
            .map_err(self.err())
        })
    }

    fn search_memories(&self, q: &MemoryQuery) -> Result<Vec<Memory>, StoreError> {
        let phrases = memory::phrases(&q.terms);
        if phrases.is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        self.with_memory_reader(|conn| memory::search_any(conn, &phrases, q))
    }

    fn search_memories_text(&self, text: &str, limit: usize) -> Result<Vec<Memory>, StoreError> {
        let Some(fts) = memory::all_words(text) else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        let q = MemoryQuery {
            terms: Vec::new(),
            min_confidence: 0.0,
            categories: Vec::new(),
            limit,
        };
        self.with_memory_reader(|conn| memory::search_ranked(conn, &fts, &q))
    }

    fn memories_rev(&self) -> Result<u64, StoreError> {
        // A short-lived process (one hook) asks this once, usually with no
        // memories at all: the idle writer answers without opening a reader
        // connection (~0.4 ms), which is all the knowledge layer then costs.
        if lock(&self.memory_readers).is_empty()
            && let Ok(conn) = self.writer.try_lock()
            && conn.is_autocommit()
        {
            return memory::rev(&conn).map_err(self.err());
        }
        self.with_memory_reader(|conn| memory::rev(conn).map_err(memory::RowError::Sql))
    }

    fn list_memories(
        &self,
        category: Option<Category>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        self.with_memory_reader(|conn| memory::list(conn, category, limit))
    }

    fn read_bypasses(&self) -> Result<Vec<Bypass>, StoreError> {
        // A short-lived process asks this once per call it judges: the idle
        // writer answers, as for the memories revision, without opening a
        // reader connection (which would read the whole schema again).
        let read = |conn: &Connection| -> rusqlite::Result<Vec<String>> {
            conn.prepare_cached("SELECT record FROM records WHERE ns = 'bypass'")?
                .query_map([], |r| r.get(0))?
                .collect()
        };
        let texts = match self.writer.try_lock() {
            Ok(conn) if conn.is_autocommit() => read(&conn).map_err(self.err())?,
            _ => self.with_reader(|conn| read(conn).map_err(self.err()))?,
        };
        texts
            .iter()
            .map(|t| {
                serde_json::from_str(t).map_err(|e| StoreError::Corrupt {
                    location: self.location(),
                    detail: format!("bypass: {e}"),
                })
            })
            .collect()
    }

    fn read_operators(&self) -> Result<Vec<Operator>, StoreError> {
        let texts: Vec<String> = self.with_reader(|conn| {
            conn.prepare_cached("SELECT record FROM records WHERE ns = 'operator' ORDER BY key")
                .and_then(|mut s| {
                    s.query_map([], |r| r.get(0))?
                        .collect::<rusqlite::Result<Vec<String>>>()
                })
                .map_err(self.err())
        })?;
        texts
            .iter()
            .map(|t| {
                serde_json::from_str(t).map_err(|e| StoreError::Corrupt {
                    location: self.location(),
                    detail: format!("operator: {e}"),
                })
            })
            .collect()
    }

    fn location(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    fn prepare_exit(&self) {
        self.fold_big_wal();
    }
}
