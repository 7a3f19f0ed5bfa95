//! Knowledge lookup time (target: p99 ≤ 2 ms with 10,000 memories and 500
//! SOP rules; docs/performance.md). Prints figures; asserts
//! nothing about time. Run with `cargo bench -p toolgate-gate --bench knowledge`.
//!
//! A lookup is everything the layer does for one call before enforcement:
//! normalizing it, extracting its context (shell analysis included),
//! matching the 500 rules, reading the SOPs they name (cached) and
//! searching the memories (FTS5, cached by revision).

use std::sync::Arc;
use std::time::Instant;
use toolgate_core::knowledge::memory::{Category, Memory};
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy};
use toolgate_core::{RiskClass, ToolCall};
use toolgate_gate::{Gate, KnowledgeBase, KnowledgeStats, SystemClock, import_memories};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

const MEMORIES: usize = 10_000;
const RULES: usize = 500;

/// A small deterministic generator (xorshift), so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, v: &'a [String]) -> &'a str {
        &v[(self.next() % v.len() as u64) as usize]
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(name: &str, mut us: Vec<u64>) {
    us.sort_unstable();
    println!(
        "{name:<44} n={:>6}  p50 {:>5} µs  p90 {:>5} µs  p99 {:>5} µs  max {:>6} µs",
        us.len(),
        percentile(&us, 0.5),
        percentile(&us, 0.9),
        percentile(&us, 0.99),
        us[us.len() - 1]
    );
}

fn main() {
    let root =
        std::env::temp_dir().join(format!("toolgate-bench-knowledge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let sops = root.join("sop");
    std::fs::create_dir_all(&sops).expect("sop dir");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let services: Vec<String> = (0..RULES).map(|i| format!("svc{i}")).collect();
    let hosts: Vec<String> = (0..2000).map(|i| format!("host{i}.lan")).collect();
    let words: Vec<String> = [
        "deploy", "restart", "backup", "migrate", "rotate", "logs", "disk", "memory", "cpu",
        "replica", "primary", "failover", "cache", "queue", "index", "vacuum", "snapshot",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();

    // 500 rules, each naming an SOP file with all three sections.
    let mut policy = format!(
        "[knowledge]\nenforcement = \"strict\"\nsop_dirs = [{:?}]\n",
        sops.display().to_string()
    );
    for (i, svc) in services.iter().enumerate() {
        policy.push_str(&format!(
            "[[knowledge.rule]]\npattern = '\\b{svc}\\b|:{}\\b'\nsop = \"sop{i}\"\n",
            9000 + i
        ));
        std::fs::write(
            sops.join(format!("sop{i}.ai.sop")),
            format!(
                "# {svc}\n## Preflight\n- check {svc} health first\n- announce in #ops\n\
                 ## Gotchas\n- {svc} restarts take 90 s\n## Credentials\n- vault path ops/{svc}\n\
                 ## History\nlong story\n"
            ),
        )
        .expect("write sop");
    }
    let t = Instant::now();
    let policy = Policy::from_toml_str(&policy, "bench.toml").expect("policy");
    println!(
        "policy with {RULES} knowledge rules parsed and compiled in {:?}",
        t.elapsed()
    );

    let store = Arc::new(SqliteStore::open(&root.join("state"), SyncMode::Normal).expect("store"));
    let clock = SystemClock;
    let memories: Vec<Memory> = (0..MEMORIES)
        .map(|i| Memory {
            id: 0,
            text: format!(
                "{} on {} needs {} before {}; {}",
                rng.pick(&services),
                rng.pick(&hosts),
                rng.pick(&words),
                rng.pick(&words),
                i
            ),
            categories: vec![[Category::Process, Category::Technical, Category::Gotchas][i % 3]],
            confidence: (i % 100) as f64 / 100.0,
            source: Some("bench".into()),
            created_ms: 0,
        })
        .collect();
    let t = Instant::now();
    import_memories(&*store, &clock, memories, "bench").expect("import");
    println!("{MEMORIES} memories imported in {:?}", t.elapsed());

    let env = Env::new("/home/dev", "/home/dev/proj");
    let engine = Arc::new(Engine::new(policy));
    let gate = Gate::new(
        engine.clone(),
        store.clone(),
        Arc::new(SystemClock),
        env.clone(),
    );
    let fresh = || {
        KnowledgeBase::new(
            engine.policy().knowledge().clone(),
            &env,
            Arc::new(KnowledgeStats::default()),
        )
    };
    let call = |cmd: String| -> ToolCall {
        serde_json::from_value(serde_json::json!({"tool": "exec", "params": {"command": cmd}}))
            .expect("call")
    };
    // The engine normalizes a call before the knowledge layer sees it.
    let normalized = |c: &ToolCall| toolgate_core::normalize(c, &env);
    let calls: Vec<ToolCall> = (0..5000)
        .map(|i| {
            call(format!(
                "ssh {} 'systemctl {} {}' && curl -s http://{}:{}/health # {i}",
                rng.pick(&hosts),
                rng.pick(&words),
                rng.pick(&services),
                rng.pick(&hosts),
                9000 + (rng.next() % RULES as u64)
            ))
        })
        .collect();
    let risks = [RiskClass::R0, RiskClass::R1, RiskClass::R3];

    // The pure parts alone: context extraction, then rule matching.
    let settings = engine.policy().knowledge().clone();
    let mut extract_us = Vec::new();
    let mut match_us = Vec::new();
    for c in calls.iter().take(2000) {
        let t = Instant::now();
        let n = toolgate_core::normalize(c, &env);
        let ctx = toolgate_core::knowledge::context::extract(&n, &env, &settings.context);
        extract_us.push(t.elapsed().as_micros() as u64);
        let t = Instant::now();
        let w = settings.sops_for(&ctx);
        std::hint::black_box(w);
        match_us.push(t.elapsed().as_micros() as u64);
    }
    report("context extraction (normalize + shell)", extract_us);
    report("rule matching (500 patterns)", match_us);

    // Cold: a new knowledge base (empty caches) per call.
    let mut cold = Vec::new();
    let mut found = 0usize;
    for (i, c) in calls.iter().take(500).enumerate() {
        let kb = fresh();
        let l = kb.lookup(&*store, &normalized(c), &env, risks[i % 3]);
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        found += l.found.sops.len() + l.found.memories.len();
        cold.push(l.elapsed_us);
    }
    println!("({found} items found over 500 cold lookups)");
    report("lookup, caches cold (SOP read + FTS search)", cold);

    // Warm caches, distinct calls: SOP files cached, memory searches new.
    let kb = fresh();
    for c in calls.iter().take(200) {
        kb.lookup(&*store, &normalized(c), &env, RiskClass::R1);
    }
    let warm: Vec<u64> = calls
        .iter()
        .skip(200)
        .map(|c| {
            kb.lookup(&*store, &normalized(c), &env, RiskClass::R1)
                .elapsed_us
        })
        .collect();
    report("lookup, distinct calls (SOP cache warm)", warm);

    // Repeated calls: everything from cache.
    let repeat: Vec<u64> = (0..5000)
        .map(|i| {
            kb.lookup(&*store, &normalized(&calls[i % 50]), &env, RiskClass::R1)
                .elapsed_us
        })
        .collect();
    report("lookup, repeated calls (all cached)", repeat);
    let s = kb.stats().snapshot();
    println!(
        "cache: {} memory-search hits, {} misses; SOP files: {} cache hits, {} reads",
        s.cache_hits, s.cache_misses, s.sop_cache_hits, s.sop_reads
    );

    // The whole gate (decide + knowledge + durable record), for scale.
    let whole: Vec<u64> = calls
        .iter()
        .skip(1000)
        .take(1000)
        .map(|c| {
            let t = Instant::now();
            let _ = gate.check(c).expect("check");
            t.elapsed().as_micros() as u64
        })
        .collect();
    report("gate.check incl. knowledge and commit", whole);
    println!("target (docs/performance.md): knowledge lookup p99 <= 2 ms (2000 µs)");
    let _ = std::fs::remove_dir_all(&root);
}
