#![no_main]
//! The stateful gate must never panic on any tool call, must record every
//! decision, and must keep its audit chain verifiable.
//!
//! Input that parses as a `ToolCall` is checked as is, anything else is
//! wrapped as an exec command. An escalation is then relayed (the policy
//! opts in) with the call's own session and retried; the relay call itself
//! is checked with the fuzzed params too, so junk ids and params reach the
//! relay path.

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy};
use toolgate_core::{ToolCall, Verdict};
use toolgate_gate::{Gate, SystemClock};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

fn gate() -> &'static (Gate, Arc<SqliteStore>) {
    static GATE: OnceLock<(Gate, Arc<SqliteStore>)> = OnceLock::new();
    GATE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("toolgate-fuzz-gate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Arc::new(SqliteStore::open(&dir, SyncMode::Normal).expect("store"));
        let policy =
            Policy::from_toml_str("[approvals]\nrelay = true\n", "fuzz.toml").expect("policy");
        let gate = Gate::new(
            Arc::new(Engine::new(policy)),
            store.clone(),
            Arc::new(SystemClock),
            Env::new("/home/dev", "/home/dev/proj"),
        );
        (gate, store)
    })
}

fuzz_target!(|data: &[u8]| {
    let (gate, store) = gate();
    let call = match serde_json::from_slice::<ToolCall>(data) {
        Ok(call) => call,
        Err(_) => {
            let Ok(text) = std::str::from_utf8(data) else {
                return;
            };
            let mut params = serde_json::Map::new();
            params.insert(
                "command".into(),
                serde_json::Value::String(text.to_string()),
            );
            ToolCall {
                tool: "exec".into(),
                params,
                session: Some("s".into()),
                ..ToolCall::default()
            }
        }
    };
    let d = gate.check(&call).expect("the store works");
    assert!(d.audit_seq.is_some(), "every decision is recorded");
    if d.decision == Verdict::Escalate {
        let id = d
            .approval
            .as_ref()
            .expect("an escalation carries its approval")
            .id
            .clone();
        let mut params = serde_json::Map::new();
        params.insert("id".into(), serde_json::Value::String(id));
        let relay = ToolCall {
            tool: "toolgate_approve".into(),
            params,
            session: call.session.clone(),
            ..ToolCall::default()
        };
        let r = gate.check(&relay).expect("the store works");
        let retry = gate.check(&call).expect("the store works");
        if r.decision == Verdict::Allow && r.reason.contains("retry") {
            assert_eq!(
                retry.decision,
                Verdict::Allow,
                "a relayed approval unlocks the retry once: {retry:?}"
            );
            assert_ne!(
                gate.check(&call).expect("store").decision,
                Verdict::Allow,
                "only once"
            );
        }
    }
    let head = store_head(store);
    if head % 997 < 8 {
        toolgate_gate::verify(&**store).expect("the audit chain verifies");
    }
});

fn store_head(store: &SqliteStore) -> u64 {
    use toolgate_store::Store;
    store.audit_head().ok().flatten().map_or(0, |(seq, _)| seq)
}
