//! Shared set-up for the store's integration tests.
#![allow(dead_code)]

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use toolgate_core::engine::Engine;
use toolgate_core::model::{Decision, ToolCall, Verdict};
use toolgate_core::paths::Env;
use toolgate_core::policy::Policy;
use toolgate_store::{Clock, Gate, ManualClock, SqliteStore, Store, SyncMode, VoteInput};

/// A fresh temporary directory, removed when dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).unwrap();
        let name = toolgate_core::hex::hex(&b);
        let p = std::env::temp_dir().join(format!("toolgate-test-{tag}-{name}"));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub const T0: i64 = 1_800_000_000_000;

pub fn store(dir: &Path) -> Arc<SqliteStore> {
    Arc::new(SqliteStore::open(dir, SyncMode::Normal).unwrap())
}

pub fn engine(policy: &str) -> Arc<Engine> {
    Arc::new(Engine::new(
        Policy::from_toml_str(policy, "test.toml").unwrap(),
    ))
}

pub fn gate(store: Arc<SqliteStore>, policy: &str, clock: Arc<ManualClock>) -> Gate {
    Gate::new(
        engine(policy),
        store,
        clock,
        Env::new("/home/dev", "/home/dev/proj"),
    )
}

pub fn exec(cmd: &str) -> ToolCall {
    serde_json::from_value(json!({
        "tool": "exec",
        "params": {"command": cmd},
        "session": "agent:main:main",
        "cwd": "/home/dev/proj",
        "requester": {"id": "u1", "role": "owner"},
    }))
    .unwrap()
}

pub fn approval_id(d: &Decision) -> toolgate_core::approval::ApprovalId {
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
    let id = &d.approval.as_ref().expect("escalation has an approval").id;
    toolgate_core::approval::ApprovalId::parse(id).unwrap()
}

pub fn person(name: &str, approve: bool) -> VoteInput {
    VoteInput {
        identity: name.to_string(),
        approve,
        reason: None,
        channel: "test".to_string(),
        relayed: false,
    }
}

pub fn now(c: &dyn Clock) -> i64 {
    c.now_ms()
}

pub fn dyn_store(s: &Arc<SqliteStore>) -> &dyn Store {
    &**s
}
