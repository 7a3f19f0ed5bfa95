//! Shared set-up for the store's integration tests.
#![allow(dead_code)]

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use toolgate_core::paths::Env;
use toolgate_core::{Decision, ToolCall, Verdict};
use toolgate_core::{Engine, Policy};
use toolgate_gate::{Clock, Gate, ManualClock, VoteInput};
use toolgate_store::Store;
use toolgate_store_sqlite::{SqliteStore, SyncMode};

/// The store every test here runs on: these tests are the store's
/// conformance kit, written once against the [`Store`] trait. Each backend
/// must pass them; `TOOLGATE_TEST_STORE` names the backend (`sqlite`, the
/// default).
pub(crate) fn backend() -> String {
    std::env::var("TOOLGATE_TEST_STORE").unwrap_or_else(|_| "sqlite".to_string())
}

/// The database the kit runs on with `TOOLGATE_TEST_STORE=postgres`.
fn postgres_url() -> String {
    std::env::var("TOOLGATE_TEST_POSTGRES_URL")
        .expect("TOOLGATE_TEST_STORE=postgres needs TOOLGATE_TEST_POSTGRES_URL (postgres://…/test)")
}

/// The PostgreSQL schema standing for a test's place: its directory's
/// random name, so every handle a test opens on `dir` shares it.
fn schema_for(dir: &Path) -> String {
    let name = dir
        .ancestors()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy())
        .find(|n| n.starts_with("toolgate-test-"))
        .expect("a place made by TempDir::new");
    let suffix: String = name
        .chars()
        .rev()
        .take(16)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("kit_{suffix}")
}

/// A fresh temporary directory (and, on PostgreSQL, the schema standing
/// for it), removed when dropped: the schema by this guard's `Drop`, the
/// directory by the `tempfile` guard it holds, dropped right after.
pub(crate) struct TempDir(pub std::path::PathBuf, tempfile::TempDir);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        // The name ends in 16 random hex digits, which name the PostgreSQL
        // schema too (`schema_for`): tempfile adds no characters of its own.
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).unwrap();
        let name = toolgate_core::hex(&b);
        let dir = tempfile::Builder::new()
            .prefix(&format!("toolgate-test-{tag}-{name}"))
            .rand_bytes(0)
            .tempdir()
            .unwrap();
        TempDir(dir.path().to_path_buf(), dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if backend() == "postgres" {
            drop_schema(&schema_for(&self.0));
        }
    }
}

/// Drops a test's schema (best effort: a leftover is only clutter).
fn drop_schema(schema: &str) {
    let url = postgres_url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        if let Ok((client, conn)) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
            tokio::spawn(conn);
            let _ = client
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                .await;
        }
    });
}

pub(crate) const T0: i64 = 1_800_000_000_000;

/// True, with a line saying so, when the kit runs on a backend other than
/// SQLite: for the few tests that look into (or tamper with) the SQLite file
/// itself, which each backend's own tests cover in its own terms.
pub(crate) fn not_sqlite(why: &str) -> bool {
    let b = backend();
    if b == "sqlite" {
        return false;
    }
    eprintln!("skipped on {b}: {why}");
    true
}

/// A handle on the state kept at `dir` (the test's own place): each call
/// opens another one on the same state, as another process would.
pub(crate) fn store(dir: &Path) -> Arc<dyn Store> {
    match backend().as_str() {
        "sqlite" => Arc::new(SqliteStore::open(dir, SyncMode::Normal).unwrap()),
        "postgres" => Arc::new(
            toolgate_store_postgres::PostgresStore::connect_in_schema(
                &postgres_url(),
                &schema_for(dir),
            )
            .unwrap(),
        ),
        other => panic!("TOOLGATE_TEST_STORE={other}: no such store backend (sqlite, postgres)"),
    }
}

pub(crate) fn engine(policy: &str) -> Arc<Engine> {
    Arc::new(Engine::new(
        Policy::from_toml_str(policy, "test.toml").unwrap(),
    ))
}

pub(crate) fn gate(store: Arc<dyn Store>, policy: &str, clock: Arc<ManualClock>) -> Gate {
    Gate::new(
        engine(policy),
        store,
        clock,
        Env::new("/home/dev", "/home/dev/proj"),
    )
}

pub(crate) fn exec(cmd: &str) -> ToolCall {
    serde_json::from_value(json!({
        "tool": "exec",
        "params": {"command": cmd},
        "session": "agent:main:main",
        "cwd": "/home/dev/proj",
        "requester": {"id": "u1", "role": "owner"},
    }))
    .unwrap()
}

pub(crate) fn approval_id(d: &Decision) -> toolgate_core::ApprovalId {
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
    let id = &d.approval.as_ref().expect("escalation has an approval").id;
    toolgate_core::ApprovalId::parse(id).unwrap()
}

pub(crate) fn person(name: &str, approve: bool) -> VoteInput {
    VoteInput {
        identity: name.to_string(),
        approve,
        reason: None,
        channel: "test".to_string(),
        relayed: false,
    }
}

/// Makes each of `names` a named operator (one credential each), so
/// their votes count as people's where only named people count (R4, or a
/// quorum of two or more); returns their tokens.
pub(crate) fn named(s: &Arc<dyn Store>, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| {
            toolgate_gate::add_operator(&**s, &ManualClock::new(T0), n, &[], "test")
                .unwrap()
                .1
        })
        .collect()
}

pub(crate) fn now(c: &dyn Clock) -> i64 {
    c.now_ms()
}

pub(crate) fn dyn_store(s: &Arc<dyn Store>) -> &dyn Store {
    &**s
}
