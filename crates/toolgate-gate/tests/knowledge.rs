//! The knowledge gate through the store (docs/knowledge.md): SOPs and memories held
//! until acknowledged, advised, or skipped, by enforcement level; the
//! cooldown; acknowledgement by retry, by id and by tool; thresholds by
//! risk; fail-open and fail-closed; credentials kept out of the audit log.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use toolgate_core::knowledge::memory::{Category, Memory};
use toolgate_core::paths::Env;
use toolgate_core::{Layer, ToolCall, Verdict};
use toolgate_gate::{Gate, KnowledgeBase, ManualClock, add_memory};
use toolgate_store::Store;

const SECRET: &str = "vault-pw-Zq81xT";

struct World {
    _dir: TempDir,
    sops: std::path::PathBuf,
    store: Arc<dyn Store>,
    clock: Arc<ManualClock>,
    gate: Gate,
}

fn world(knowledge: &str) -> World {
    let dir = TempDir::new("knowledge");
    let sops = dir.0.join("sop");
    std::fs::create_dir_all(&sops).unwrap();
    let policy = format!(
        "[knowledge]\nsop_dirs = [{:?}]\n{knowledge}\n\n[[knowledge.rule]]\npattern = 'ssh|\\.163'\nsop = \"fleet\"\n",
        sops.display().to_string()
    );
    let store = store(&dir.0.join("state"));
    let clock = Arc::new(ManualClock::new(T0));
    let g = gate(store.clone(), &policy, clock.clone());
    let kb = KnowledgeBase::new(
        g.engine().policy().knowledge().clone(),
        &Env::new("/home/dev", "/home/dev/proj"),
        g.knowledge().stats().clone(),
    )
    .revalidating_always();
    let gate = g.with_knowledge(kb);
    World {
        _dir: dir,
        sops,
        store,
        clock,
        gate,
    }
}

fn write_fleet(sops: &Path) {
    std::fs::write(
        sops.join("fleet.ai.sop"),
        format!(
            "# Fleet\n## Preflight\nrun `uptime` on the host first\n## History\nold stuff\n\
             ## Credentials\npassword {SECRET}\n"
        ),
    )
    .unwrap();
}

fn in_session(mut c: ToolCall, session: &str) -> ToolCall {
    c.session = Some(session.to_string());
    c
}

fn memory(w: &World, text: &str, cats: &[Category], confidence: f64) -> u64 {
    let m = Memory {
        id: 0,
        text: text.to_string(),
        categories: cats.to_vec(),
        confidence,
        source: Some("test".into()),
        created_ms: 0,
    };
    add_memory(&*w.store, &*w.clock, m, "tester").unwrap().id
}

fn audit_text(store: &dyn Store) -> String {
    let mut all = String::new();
    store
        .scan_audit(0, &mut |row| {
            all.push_str(&row.entry);
            all.push('\n');
            true
        })
        .unwrap();
    all
}

fn ack_id(d: &toolgate_core::Decision) -> String {
    assert!(d.needs_ack(), "{d:?}");
    d.block_reason
        .as_deref()
        .unwrap()
        .split('|')
        .nth(1)
        .unwrap()
        .to_string()
}

#[test]
fn strict_holds_until_a_retry_acknowledges_then_the_cooldown_lapses() {
    let w = world("");
    write_fleet(&w.sops);
    let call = exec("ssh web1 uptime");
    let d = w.gate.check(&call).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert_eq!(d.layer, Layer::Knowledge);
    let id = ack_id(&d);
    let ctx = d.context.clone().unwrap();
    assert!(ctx.contains("run `uptime` on the host first"), "{ctx}");
    assert!(!ctx.contains("old stuff"), "only the three sections: {ctx}");
    assert!(
        !ctx.contains(SECRET),
        "credentials withheld by default: {ctx}"
    );
    assert!(ctx.contains(&format!("toolgate knowledge ack {id}")));

    // The same call again: acknowledged by retrying, allowed, knowledge attached.
    w.clock.advance(1000);
    let d = w.gate.check(&call).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert!(d.context.as_deref().unwrap().contains("uptime"));
    // Another call the same SOP covers, same session: not held again.
    let d = w.gate.check(&exec("ssh web2 df -h")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert_eq!(d.context, None, "acknowledged knowledge is not repeated");
    // Another session has not acknowledged it.
    let d = w
        .gate
        .check(&in_session(exec("ssh web2 df -h"), "other"))
        .unwrap();
    assert!(d.needs_ack(), "{d:?}");
    // After the cooldown (5 min) it holds again.
    w.clock.advance(5 * 60 * 1000 + 1);
    let d = w.gate.check(&exec("ssh web2 df -h")).unwrap();
    assert!(d.needs_ack(), "{d:?}");
    // A retry after the cooldown does not count: it is shown again.
    let d = w.gate.check(&call).unwrap();
    assert!(d.needs_ack(), "{d:?}");
    let snap = w.gate.knowledge().stats().snapshot();
    assert_eq!(snap.acked_by_retry, 1, "{snap:?}");
    assert!(snap.held >= 3 && snap.interceptions >= 6, "{snap:?}");
    assert!(toolgate_gate::verify(&*w.store).is_ok());
    let audit = audit_text(&*w.store);
    assert!(audit.contains("knowledge.shown") && audit.contains("knowledge.acked"));
    assert!(!audit.contains(SECRET), "credentials never audited");
}

#[test]
fn explicit_acknowledgement_by_id_and_by_tool() {
    let w = world("");
    write_fleet(&w.sops);
    let d = w.gate.check(&exec("ssh web1 uptime")).unwrap();
    let id = ack_id(&d);
    assert!(w.gate.acknowledge("deadbeef", "me", None).is_err());
    let shown = w.gate.acknowledge(&id, "operator", None).unwrap();
    assert_eq!(shown.keys.len(), 1);
    let d = w.gate.check(&exec("ssh web9 ls")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");

    // The tool: only the session the knowledge was shown to.
    let d = w
        .gate
        .check(&in_session(exec("ssh web1 uptime"), "s2"))
        .unwrap();
    let id = ack_id(&d);
    let tool = |session: &str| {
        in_session(
            serde_json::from_value(json!({"tool": "toolgate_ack", "params": {"id": id}})).unwrap(),
            session,
        )
    };
    let d = w.gate.check(&tool("s3")).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    let d = w.gate.check(&tool("s2")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    let d = w
        .gate
        .check(&in_session(exec("ssh web7 ls"), "s2"))
        .unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert_eq!(w.gate.knowledge().stats().snapshot().acked_explicitly, 2);
    // A tool that only shares the name is judged like any other call.
    let imposter: ToolCall = serde_json::from_value(
        json!({"tool": "toolgate_ack", "params": {"id": id, "command": "rm -rf /"}}),
    )
    .unwrap();
    let d = w.gate.check(&imposter).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert_ne!(d.layer, Layer::Knowledge, "{d:?}");
}

#[test]
fn advisory_and_disabled() {
    let w = world("enforcement = \"advisory\"");
    write_fleet(&w.sops);
    let d = w.gate.check(&exec("ssh web1 uptime")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert!(d.context.unwrap().contains("uptime"));
    assert_eq!(w.gate.knowledge().stats().snapshot().injections, 1);

    let w = world("enforcement = \"disabled\"");
    write_fleet(&w.sops);
    let d = w.gate.check(&exec("ssh web1 uptime")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert_eq!(d.context, None);
    assert_eq!(w.gate.knowledge().stats().snapshot().interceptions, 0);
}

#[test]
fn category_enforces_only_blocking_categories() {
    let w = world("enforcement = \"category\"\nblock_categories = [\"security\"]");
    memory(
        &w,
        "the grafana host runs out of disk",
        &[Category::Technical],
        0.9,
    );
    let d = w
        .gate
        .check(&exec("curl http://grafana.internal/api"))
        .unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert!(d.context.unwrap().contains("runs out of disk"));
    memory(
        &w,
        "never expose grafana publicly",
        &[Category::Security],
        0.95,
    );
    let d = w
        .gate
        .check(&exec("curl http://grafana.internal/api"))
        .unwrap();
    assert!(d.needs_ack(), "{d:?}");
    let ctx = d.context.unwrap();
    assert!(
        ctx.contains("never expose") && ctx.contains("confidence 0.95"),
        "{ctx}"
    );
}

#[test]
fn thresholds_follow_the_risk_class() {
    let w = world("enforcement = \"advisory\"");
    memory(&w, "backup01 is slow on Mondays", &[Category::Process], 0.3);
    memory(&w, "backup01: dry-run first", &[Category::Process], 0.6);
    memory(&w, "backup01 keeps no snapshots", &[Category::Process], 0.9);
    let shown = |cmd: &str| {
        let d = w.gate.check(&exec(cmd)).unwrap();
        let ctx = d.context.clone().unwrap_or_default();
        let n = ["slow", "dry-run", "snapshots"].map(|t| ctx.contains(t));
        (d.risk, n)
    };
    // Routine (R1, ≥ 0.5): the two more confident ones.
    let (risk, n) = shown("ping -c1 backup01");
    assert_eq!(risk, toolgate_core::RiskClass::R1);
    assert_eq!(n, [false, true, true]);
    // Critical (R4, ≥ 0.8): only the most confident.
    let (risk, n) = shown("ssh backup01 'rm -rf /srv/x'");
    assert!(risk >= toolgate_core::RiskClass::R3);
    assert_eq!(n, [false, false, true]);
}

#[test]
fn a_failing_source_fails_open_by_default_and_closed_when_configured() {
    let w = world("");
    // A directory where the SOP file should be: reading it fails.
    std::fs::create_dir_all(w.sops.join("fleet.ai.sop")).unwrap();
    let d = w.gate.check(&exec("ssh web1 uptime")).unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    let snap = w.gate.knowledge().stats().snapshot();
    assert_eq!(snap.source_errors, 1);
    assert!(snap.last_error.unwrap().1.contains("fleet.ai.sop"));
    assert!(audit_text(&*w.store).contains("knowledge.error"));

    let w = world("fail_open = false");
    std::fs::create_dir_all(w.sops.join("fleet.ai.sop")).unwrap();
    let d = w.gate.check(&exec("ssh web1 uptime")).unwrap();
    assert_eq!(d.decision, Verdict::Block, "{d:?}");
    assert_eq!(d.layer, Layer::Knowledge);
    assert!(d.reason.contains("fail_open"), "{d:?}");
    assert_eq!(w.gate.knowledge().stats().snapshot().failed_closed, 1);
}

#[test]
fn credentials_shown_only_where_the_policy_says_and_never_audited() {
    let w = world("show_credentials = true");
    write_fleet(&w.sops);
    memory(
        &w,
        &format!("ssh to 10.0.0.163 as root: password {SECRET}2"),
        &[Category::Credentials],
        0.9,
    );
    let d = w.gate.check(&exec("ssh 10.0.0.163 uptime")).unwrap();
    let ctx = d.context.unwrap();
    assert!(ctx.contains(&format!("password {SECRET}")), "{ctx}");
    assert!(ctx.contains(&format!("password {SECRET}2")), "{ctx}");
    assert!(!audit_text(&*w.store).contains(SECRET));
}

#[test]
fn an_edited_sop_asks_again_and_escalations_follow_acknowledgement() {
    let w = world("");
    write_fleet(&w.sops);
    let call = exec("ssh web1 uptime");
    assert!(w.gate.check(&call).unwrap().needs_ack());
    w.clock.advance(1000);
    assert_eq!(w.gate.check(&call).unwrap().decision, Verdict::Allow);
    std::fs::write(
        w.sops.join("fleet.ai.sop"),
        "## Gotchas\nweb1 reboots at 3am\n",
    )
    .unwrap();
    let d = w.gate.check(&call).unwrap();
    assert!(d.needs_ack(), "edited SOP: {d:?}");
    assert!(d.context.unwrap().contains("reboots at 3am"));

    // A call that needs approval: knowledge first, then the approval.
    let push = exec("ssh web1 'rm -rf /srv/app/releases'");
    let d = w.gate.check(&push).unwrap();
    assert!(d.needs_ack(), "{d:?}");
    w.clock.advance(1000);
    let d = w.gate.check(&push).unwrap();
    assert_eq!(d.decision, Verdict::Escalate, "{d:?}");
    assert!(d.context.is_some());
}

#[test]
fn blocked_calls_skip_the_lookup() {
    let w = world("");
    write_fleet(&w.sops);
    let d = w.gate.check(&exec("ssh web1 'rm -rf /'")).unwrap();
    assert_eq!(d.decision, Verdict::Block);
    assert_ne!(d.layer, Layer::Knowledge);
    assert_eq!(w.gate.knowledge().stats().snapshot().interceptions, 0);
}

#[test]
fn a_retry_with_cosmetic_changes_acknowledges_but_not_in_the_same_instant() {
    let w = world("");
    write_fleet(&w.sops);
    let with_description = |d: &str| {
        let mut c = exec("ssh web1 uptime");
        c.params.insert("description".into(), json!(d));
        c
    };
    assert!(
        w.gate
            .check(&with_description("check load"))
            .unwrap()
            .needs_ack()
    );
    // A parallel call in the same instant has not "seen" it.
    assert!(w.gate.check(&exec("ssh web4 ls")).unwrap().needs_ack());
    w.clock.advance(2000);
    let d = w
        .gate
        .check(&with_description("Check the load on web1"))
        .unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
}

#[test]
fn a_memory_id_is_never_reused() {
    let w = world("enforcement = \"advisory\"");
    let a = memory(&w, "first lesson about web1", &[Category::Process], 0.9);
    assert!(toolgate_gate::remove_memory(&*w.store, &*w.clock, a, "t").unwrap());
    let b = memory(&w, "second lesson about web1", &[Category::Process], 0.9);
    assert_ne!(a, b);
}

#[test]
fn a_project_named_oddly_still_gets_its_own_sops_when_enabled() {
    // A project whose name cannot name an SOP file (a space) still gets the
    // SOPs in its own directory.
    let root = TempDir::new("projects");
    let proj = root.0.join("my app");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("deploy.ai.sop"),
        "## Gotchas\nthe app has no staging\n",
    )
    .unwrap();
    let w = world(&format!(
        "project_sops = true\nproject_roots = [{:?}]",
        root.0.display().to_string()
    ));
    let mut c = exec("make deploy");
    c.cwd = Some(proj.display().to_string());
    let d = w.gate.check(&c).unwrap();
    assert!(d.needs_ack(), "{d:?}");
    assert!(d.context.unwrap().contains("no staging"));
}

#[test]
fn a_knowledge_bypass_lets_a_held_call_through_with_its_knowledge_shown() {
    let w = world("");
    write_fleet(&w.sops);
    let d = w.gate.check(&exec("ssh web1 uptime")).unwrap();
    assert!(d.needs_ack(), "held without a bypass: {d:?}");
    let b = toolgate_gate::start_bypass(
        &*w.store,
        &*w.clock,
        &[Layer::Knowledge],
        std::time::Duration::from_secs(600),
        "the SOP server is down, incident 9",
        "alice",
    )
    .unwrap();
    let d = w
        .gate
        .check(&in_session(exec("ssh web3 uptime"), "s-bypass"))
        .unwrap();
    assert_eq!(d.decision, Verdict::Allow, "{d:?}");
    assert!(
        d.context.as_deref().unwrap().contains("uptime"),
        "still shown"
    );
    let audit = audit_text(&*w.store);
    assert!(
        audit.contains("incident 9") && audit.contains("\"rule\":\"bypass\""),
        "{audit}"
    );
    // Ended: held again.
    toolgate_gate::end_bypass(&*w.store, &*w.clock, &b.id, "alice").unwrap();
    let d = w
        .gate
        .check(&in_session(exec("ssh web4 uptime"), "s-after"))
        .unwrap();
    assert!(d.needs_ack(), "{d:?}");
}
