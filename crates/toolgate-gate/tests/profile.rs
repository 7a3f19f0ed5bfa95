//! A scope profile's layers through the gate: every layer's verdict is in
//! the audit chain under its rule name, and a block short-circuits.

mod common;

use common::*;
use serde_json::json;
use std::sync::Arc;
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy, Profile, Verdict};
use toolgate_gate::{Gate, ManualClock};

fn gate_with_profile(dir: &std::path::Path) -> (Gate, Arc<dyn toolgate_store::Store>) {
    let profile = Profile::parse_markdown(
        "---\nversion: 1\nprovider: {name: Dr. T}\nscope:\n  permitted_actions: [read, exec, order]\n  \
         prohibited_actions: [message]\nautonomy: {order: manual}\nactions:\n  - {class: order, tools: [\"mcp__ehr__*\"]}\n---\n",
        "t.profile.md",
    )
    .unwrap();
    let policy = Policy::default().with_profile(profile);
    let store = store(dir);
    let gate = Gate::new(
        Arc::new(Engine::new(policy)),
        store.clone(),
        Arc::new(ManualClock::new(T0)),
        Env::new("/home/dev", "/home/dev/proj"),
    );
    (gate, store)
}

fn audit(store: &dyn toolgate_store::Store) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    store
        .scan_audit(0, &mut |row| {
            out.push(serde_json::from_str(&row.entry).unwrap());
            true
        })
        .unwrap();
    out
}

fn rules_of(entries: &[serde_json::Value], trace: &str) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e["trace"] == trace && e["kind"] == "verdict")
        .filter_map(|e| e["data"]["rule"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn every_layer_is_audited_and_a_block_short_circuits() {
    let dir = TempDir::new("profile");
    let (gate, store) = gate_with_profile(&dir.0);
    let d = gate.check(&exec("ls -la | wc -l")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    let entries = audit(&*store);
    let trace = entries.last().unwrap()["trace"]
        .as_str()
        .unwrap()
        .to_string();
    let rules = rules_of(&entries, &trace);
    for r in [
        "tool_policy_lockdown",
        "exec_allowlist",
        "docker_sandbox",
        "safety_guard",
        "audit_trail",
    ] {
        assert!(rules.contains(&r.to_string()), "{r} missing from {rules:?}");
    }

    let msg = serde_json::from_value(json!({"tool": "message", "params": {"text": "hi"}})).unwrap();
    let d = gate.check(&msg).unwrap();
    assert_eq!(d.decision, Verdict::Block);
    let entries = audit(&*store);
    let trace = entries.last().unwrap()["trace"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        rules_of(&entries, &trace),
        vec!["tool_policy_lockdown".to_string()]
    );

    let order =
        serde_json::from_value(json!({"tool": "mcp__ehr__create_order", "params": {"drug": "x"}}))
            .unwrap();
    let d = gate.check(&order).unwrap();
    assert_eq!(
        d.decision,
        Verdict::Escalate,
        "manual: a person approves: {d:?}"
    );
    assert!(d.approval.is_some());
    assert!(toolgate_gate::verify(&*store).is_ok());
}
