//! The MCP corpora (`tests/corpus/mcp/<family>.jsonl`): tool calls in the
//! exact shapes of real MCP servers, judged with the default policy plus
//! the organisation in `tests/corpus/mcp/organization.toml`. Every line is
//! judged as labelled (`allow`, `stop` = escalated or blocked, `block`),
//! except lines marked `known_miss`, which are listed, counted and kept
//! below a ceiling so that the list only shrinks.

use std::path::Path;
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy, ToolCall, Verdict};

const DEFAULT_POLICY: &str = include_str!("../../../policies/default.toml");

/// The families the corpus must cover (issue 31).
const FAMILIES: &[&str] = &[
    "code_hosting",
    "chat",
    "email",
    "calendar",
    "docs",
    "tickets",
    "payments",
    "cloud",
    "kubernetes",
    "hosting",
    "monitoring",
    "databases",
    "filesystem",
    "memory",
    "fetch_browser",
    "code_runners",
    "openclaw",
];

/// The most lines that may be marked `known_miss`.
const MAX_KNOWN_MISSES: usize = 25;

fn corpus_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/mcp")
}

fn engine(with_org: bool) -> Engine {
    let org =
        std::fs::read_to_string(corpus_dir().join("organization.toml")).expect("organization.toml");
    let src = if with_org {
        format!("{DEFAULT_POLICY}\n{org}")
    } else {
        DEFAULT_POLICY.to_string()
    };
    Engine::new(
        Policy::from_toml_str(&src, "default+organization").expect("the corpus policy parses"),
    )
}

fn lines() -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for family in FAMILIES {
        let path = corpus_dir().join(format!("{family}.jsonl"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            out.push((format!("{family}.jsonl:{}", i + 1), v));
        }
    }
    out
}

fn judged_as(expect: &str, got: Verdict) -> bool {
    match expect {
        "allow" => got == Verdict::Allow,
        "stop" => got != Verdict::Allow,
        "block" => got == Verdict::Block,
        other => panic!("unknown expectation {other}"),
    }
}

#[test]
fn every_mcp_family_is_judged_as_labelled() {
    let engine = engine(true);
    let env = Env::new("/home/dev", "/home/dev/proj");
    let mut wrong = Vec::new();
    let mut known = Vec::new();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let all = lines();
    for (at, v) in &all {
        let call: ToolCall =
            serde_json::from_value(v["call"].clone()).unwrap_or_else(|e| panic!("{at}: {e}"));
        let expect = v["expect"].as_str().unwrap_or("");
        *counts.entry(expect.to_string()).or_default() += 1;
        let d = engine.decide(&call, &env).decision;
        let line = format!(
            "{at} [{expect}] {} → {} {} ({})",
            call.tool, d.decision, d.reason, v["note"]
        );
        match (judged_as(expect, d.decision), v.get("known_miss").is_some()) {
            (false, false) => wrong.push(line),
            (false, true) => known.push(line),
            (true, true) => println!("now judged as labelled, unmark it: {line}"),
            (true, false) => {}
        }
    }
    println!(
        "{} MCP corpus lines: {counts:?}; {} known misses:\n{}",
        all.len(),
        known.len(),
        known.join("\n")
    );
    assert!(all.len() >= 500, "{} lines", all.len());
    assert!(
        counts.get("block").copied().unwrap_or(0) >= 40,
        "too few block lines: {counts:?}"
    );
    assert!(
        known.len() <= MAX_KNOWN_MISSES,
        "{} known misses, more than {MAX_KNOWN_MISSES}",
        known.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} MCP calls judged wrongly:\n{}",
        wrong.len(),
        all.len(),
        wrong.join("\n")
    );
}

/// Without `[organization]` nobody is inside: no message to anyone runs
/// unasked, while reads, drafts and test-mode payments still do.
#[test]
fn without_the_organization_section_no_recipient_is_inside() {
    let engine = engine(false);
    let env = Env::new("/home/dev", "/home/dev/proj");
    let call = |tool: &str, params: serde_json::Value| ToolCall {
        tool: tool.to_string(),
        params: params.as_object().cloned().unwrap_or_default(),
        cwd: Some("/home/dev/proj".into()),
        ..ToolCall::default()
    };
    let decide = |c: ToolCall| engine.decide(&c, &env).decision.decision;
    assert_ne!(
        decide(call(
            "mcp__gmail__send_email",
            serde_json::json!({"to": ["bob@acme.com"], "subject": "x", "body": "y"})
        )),
        Verdict::Allow
    );
    assert_ne!(
        decide(call(
            "mcp__slack__slack_post_message",
            serde_json::json!({"channel_id": "#dev-team", "text": "hi"})
        )),
        Verdict::Allow
    );
    for (tool, params) in [
        (
            "mcp__gmail__draft_email",
            serde_json::json!({"to": ["bob@acme.com"], "subject": "x", "body": "y"}),
        ),
        (
            "mcp__stripe-test__create_refund",
            serde_json::json!({"payment_intent": "pi_1", "amount": 100}),
        ),
        ("mcp__stripe__list_charges", serde_json::json!({"limit": 3})),
        (
            "mcp__github__list_issues",
            serde_json::json!({"owner": "acme", "repo": "api"}),
        ),
        (
            "mcp__github__create_issue",
            serde_json::json!({"owner": "acme", "repo": "api", "title": "Bug"}),
        ),
        (
            "mcp__postgres__query",
            serde_json::json!({"sql": "SELECT 1"}),
        ),
    ] {
        assert_eq!(decide(call(tool, params)), Verdict::Allow, "{tool}");
    }
}
