//! A call's shell command is analysed once, whatever the layers that look
//! at it: the scope profile, the engine, the knowledge context and the
//! rules approver all share the analysis carried by the normalized call.

mod common;

use common::*;
use std::sync::Arc;
use toolgate_core::paths::Env;
use toolgate_core::shell::analyses_run_on_this_thread;
use toolgate_core::{Engine, Policy, Profile};
use toolgate_core::{Layer, Verdict};
use toolgate_gate::{Gate, KnowledgeBase, ManualClock};

/// A gate where every layer that reads commands is on: a scope profile, a
/// knowledge rule (so the knowledge context is extracted), and an approval
/// rule the rules approver checks.
fn gate_with_every_layer(dir: &std::path::Path) -> Gate {
    let sops = dir.join("sop");
    std::fs::create_dir_all(&sops).unwrap();
    std::fs::write(
        sops.join("fleet.ai.sop"),
        "# Fleet\n## Preflight\nrun `uptime` first\n",
    )
    .unwrap();
    let policy = format!(
        r#"
[approvals]
require_user = []
[[approvals.rule]]
name = "owners may apply staging manifests"
approve = ["exec(kubectl apply -f staging.yaml)"]
requester_roles = ["owner"]

[knowledge]
sop_dirs = [{:?}]
[[knowledge.rule]]
pattern = 'nothing-matches-this'
sop = "fleet"
"#,
        sops.display().to_string()
    );
    let profile = Profile::parse_markdown(
        "---\nversion: 1\nprovider: {name: Dr. T}\nscope:\n  permitted_actions: [read, exec]\nexec_allowlist: [kubectl, rm]\n---\n",
        "t.profile.md",
    )
    .unwrap();
    let policy = Policy::from_toml_str(&policy, "test.toml")
        .unwrap()
        .with_profile(profile);
    let env = Env::new("/home/dev", "/home/dev/proj");
    let gate = Gate::new(
        Arc::new(Engine::new(policy)),
        store(&dir.join("state")),
        Arc::new(ManualClock::new(T0)),
        env.clone(),
    );
    let kb = KnowledgeBase::new(
        gate.engine().policy().knowledge().clone(),
        &env,
        gate.knowledge().stats().clone(),
    );
    gate.with_knowledge(kb)
}

fn analyses_for(gate: &Gate, command: &str) -> (u64, toolgate_core::Decision) {
    let before = analyses_run_on_this_thread();
    let d = gate.check(&exec(command)).unwrap();
    (analyses_run_on_this_thread() - before, d)
}

#[test]
fn each_layer_shares_one_analysis_of_the_command() {
    let dir = TempDir::new("analysis-once");
    let gate = gate_with_every_layer(&dir.0);

    let (runs, d) = analyses_for(&gate, "ls -la | wc -l");
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert_eq!(runs, 1, "an allowed call");

    // Escalated by the engine, then approved by the rules approver: every
    // layer has looked at the command.
    let (runs, d) = analyses_for(&gate, "kubectl apply -f staging.yaml");
    assert_eq!(
        (d.decision, d.layer),
        (Verdict::Allow, Layer::Approval),
        "{d:?}"
    );
    assert!(d.reason.contains("rules_based"), "{}", d.reason);
    assert_eq!(runs, 1, "a call approved by a rule");

    let (runs, d) = analyses_for(&gate, "rm -rf /");
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert_eq!(runs, 1, "a blocked call");
}

#[test]
fn the_counter_counts() {
    // The check above means something only if analysing twice shows as 2.
    let env = Env::new("/home/dev", "/home/dev/proj");
    let before = analyses_run_on_this_thread();
    toolgate_core::shell::analyze("ls", &env);
    toolgate_core::shell::analyze("ls", &env);
    assert_eq!(analyses_run_on_this_thread() - before, 2);
    let memo = toolgate_core::shell::Analyses::default();
    memo.get("ls", &env);
    memo.get("ls", &env);
    memo.get("ls", &env.with_cwd("/tmp"));
    assert_eq!(analyses_run_on_this_thread() - before, 4);
}
