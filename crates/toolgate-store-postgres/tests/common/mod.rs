//! Shared set-up for the PostgreSQL store's tests: a fresh schema per test
//! in the database named by `TOOLGATE_TEST_POSTGRES_URL`, dropped at the end.
#![allow(dead_code)]

use serde_json::json;
use toolgate_core::{
    Approval, ApprovalId, ApprovalState, ApproverKind, BindingHash, QuorumRule, RiskClass,
};
use toolgate_store_postgres::PostgresStore;

/// The variable naming the test database.
pub(crate) const URL_VAR: &str = "TOOLGATE_TEST_POSTGRES_URL";

pub(crate) const T0: i64 = 1_800_000_000_000;

/// A schema of the test's own, dropped (with everything in it) on drop.
pub(crate) struct Db {
    pub url: String,
    pub schema: String,
}

/// The test's database, or `None` (with a line saying the test was
/// skipped, and why) when the variable is unset.
pub(crate) fn db(test: &str) -> Option<Db> {
    let Ok(url) = std::env::var(URL_VAR) else {
        eprintln!(
            "skipped {test}: {URL_VAR} is unset (set it to a PostgreSQL database, \
             e.g. postgres://postgres@127.0.0.1:5432/test, to run it)"
        );
        return None;
    };
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    let schema = format!("tg_test_{}", toolgate_core::hex(&b));
    Some(Db { url, schema })
}

impl Db {
    /// A new handle on the test's schema, as another process would open.
    pub(crate) fn store(&self) -> PostgresStore {
        PostgresStore::connect_in_schema(&self.url, &self.schema).unwrap()
    }

    /// Runs SQL in the test's schema on a connection of its own, outside
    /// the store (to look at or tamper with what it wrote).
    pub(crate) fn sql(&self, sql: &str) -> Vec<tokio_postgres::SimpleQueryMessage> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let task = tokio::spawn(conn);
            let out = client
                .simple_query(&format!("SET search_path TO {}; {sql}", self.schema))
                .await
                .unwrap();
            drop(client);
            let _ = task.await;
            out
        })
    }

    /// The first column of each row `sql` returns.
    pub(crate) fn column(&self, sql: &str) -> Vec<String> {
        self.sql(sql)
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => {
                    Some(r.get(0).unwrap_or("NULL").to_string())
                }
                _ => None,
            })
            .collect()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let schema = self.schema.clone();
        let url = self.url.clone();
        // Never panic in drop (a failing test is already unwinding).
        let _ = std::panic::catch_unwind(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok((client, conn)) =
                    tokio_postgres::connect(&url, tokio_postgres::NoTls).await
                {
                    let task = tokio::spawn(conn);
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                        .await;
                    drop(client);
                    let _ = task.await;
                }
            })
        });
    }
}

/// An approval id from a small number (distinct numbers, distinct ids).
pub(crate) fn id(n: u8) -> ApprovalId {
    let mut b = [0u8; 16];
    b[0] = n;
    b[15] = 0xa5;
    ApprovalId::from_random(b)
}

/// A binding hash from a small number.
pub(crate) fn binding(n: u8) -> BindingHash {
    BindingHash([n; 32])
}

/// A pending approval created at `created_ms`, expiring an hour later
/// (built from JSON, so fields added later with defaults need no change
/// here).
pub(crate) fn approval(id: ApprovalId, binding: BindingHash, created_ms: i64) -> Approval {
    serde_json::from_value(json!({
        "id": id,
        "binding": binding,
        "state": ApprovalState::Pending,
        "risk": RiskClass::R3,
        "reason": "deletes files",
        "summary": "rm -rf build",
        // A number a double cannot hold: must come back exactly.
        "call": {"tool": "exec", "params": {"command": "rm -rf build", "n": 12345678901234567890u64}},
        "requester": "agent-1",
        "session": "s1",
        "agent": "claude",
        "cwd": "/home/dev/proj",
        "quorum": QuorumRule {
            min_approvals: 1,
            require_user: true,
            approvers: vec![ApproverKind::UserRequest],
            operators: Vec::new(),
        },
        "relay": false,
        "created_ms": created_ms,
        "expires_ms": created_ms + 3_600_000,
        "window_ms": 600_000,
        "generation": 0,
    }))
    .unwrap()
}

/// `a` approved at `now_ms`, usable for its window.
pub(crate) fn approved(mut a: Approval, now_ms: i64) -> Approval {
    a.state = ApprovalState::Approved;
    a.usable_until_ms = Some(now_ms + a.window_ms);
    a.resolved_ms = Some(now_ms);
    a.resolution = Some("approved by alice".to_string());
    a
}
