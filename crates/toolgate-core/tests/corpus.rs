//! The command corpora: every dangerous command must be stopped (blocked or
//! escalated), every ordinary one allowed, every tool call judged as labelled.

use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy};
use toolgate_core::{ToolCall, Verdict};

const DEFAULT_POLICY: &str = include_str!("../../../policies/default.toml");

fn engine() -> Engine {
    Engine::new(
        Policy::from_toml_str(DEFAULT_POLICY, "policies/default.toml")
            .expect("default policy parses"),
    )
}

fn env() -> Env {
    Env::new("/home/dev", "/home/dev/proj")
}

/// Decodes the corpus escapes in one pass: `\n`, `\t`, `\\`.
fn decode(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn load(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (cat, cmd) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("corpus line without a tab: {l}"));
            (cat.to_string(), decode(cmd))
        })
        .collect()
}

fn bash(command: &str) -> ToolCall {
    ToolCall {
        tool: "Bash".into(),
        params: serde_json::json!({ "command": command })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..ToolCall::default()
    }
}

/// One corpus per class of issue 30 (docs/catalogue.md): what must be
/// stopped (`stop`) or hard-blocked (`block`). Lines marked `# not yet:`
/// are known gaps, kept where the next change can pick them up.
const CLASS_DANGEROUS: &[(&str, &str)] = &[
    ("infra_cli", include_str!("corpus/dangerous_infra_cli.tsv")),
    ("http", include_str!("corpus/dangerous_http.tsv")),
    ("hidden", include_str!("corpus/dangerous_hidden.tsv")),
    ("supply", include_str!("corpus/dangerous_supply.tsv")),
    (
        "other_users",
        include_str!("corpus/dangerous_other_users.tsv"),
    ),
];

/// Their counter-examples: ordinary calls of the same programs.
const CLASS_BENIGN: &[(&str, &str)] = &[
    ("infra_cli", include_str!("corpus/benign_infra_cli.tsv")),
    ("http", include_str!("corpus/benign_http.tsv")),
    ("supply", include_str!("corpus/benign_supply.tsv")),
    ("idioms", include_str!("corpus/benign_idioms.tsv")),
];

#[test]
fn dangerous_commands_are_stopped() {
    let engine = engine();
    let env = env();
    let mut cases = load(include_str!("corpus/dangerous.tsv"));
    cases.extend(load(include_str!("corpus/dangerous_redteam.tsv")));
    cases.extend(load(include_str!("corpus/dangerous_agents.tsv")));
    cases.extend(load(include_str!("corpus/dangerous_trees.tsv")));
    cases.extend(load(include_str!("corpus/dangerous_gate.tsv")));
    for (_, text) in CLASS_DANGEROUS {
        cases.extend(load(text));
    }
    assert!(cases.len() >= 150, "corpus too small: {}", cases.len());
    let mut allowed = Vec::new();
    for (cat, cmd) in &cases {
        let d = engine.decide(&bash(cmd), &env).decision;
        if d.decision == Verdict::Allow {
            allowed.push(format!("[{cat}] {cmd:?} → {}", d.reason));
        }
    }
    assert!(
        allowed.is_empty(),
        "{} of {} dangerous commands were allowed:\n{}",
        allowed.len(),
        cases.len(),
        allowed.join("\n")
    );
}

#[test]
fn ordinary_commands_are_allowed() {
    let engine = engine();
    let env = env();
    let mut cases = load(include_str!("corpus/benign.tsv"));
    cases.extend(load(include_str!("corpus/benign_redteam.tsv")));
    cases.extend(load(include_str!("corpus/benign_agents.tsv")));
    cases.extend(load(include_str!("corpus/benign_trees.tsv")));
    cases.extend(load(include_str!("corpus/benign_gate.tsv")));
    for (_, text) in CLASS_BENIGN {
        cases.extend(load(text));
    }
    assert!(cases.len() >= 100, "corpus too small: {}", cases.len());
    let mut stopped = Vec::new();
    for (cat, cmd) in &cases {
        let d = engine.decide(&bash(cmd), &env).decision;
        if d.decision != Verdict::Allow {
            stopped.push(format!("[{cat}] {cmd:?} → {} {}", d.decision, d.reason));
        }
    }
    assert!(
        stopped.is_empty(),
        "{} of {} ordinary commands were stopped:\n{}",
        stopped.len(),
        cases.len(),
        stopped.join("\n")
    );
}

/// Attacks on the gate itself: those labelled `block…` are blocked (no
/// approval unlocks them), the others at least escalated.
#[test]
fn attacks_on_the_gate_are_blocked_as_labelled() {
    let engine = engine();
    let env = env();
    let cases = load(include_str!("corpus/dangerous_gate.tsv"));
    assert!(cases.len() >= 100, "corpus too small: {}", cases.len());
    let mut wrong = Vec::new();
    for (cat, cmd) in &cases {
        let d = engine.decide(&bash(cmd), &env).decision;
        let ok = if cat.starts_with("block") {
            d.decision == Verdict::Block
        } else {
            d.decision != Verdict::Allow
        };
        if !ok {
            wrong.push(format!("[{cat}] {cmd:?} → {} {}", d.decision, d.reason));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} attacks on the gate were judged wrongly:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn tool_calls_are_judged_as_labelled() {
    let engine = engine();
    let env = env();
    let mut wrong = Vec::new();
    let mut n = 0;
    for line in include_str!("corpus/tool_calls.jsonl")
        .lines()
        .chain(include_str!("corpus/tool_calls_by_class.jsonl").lines())
        .filter(|l| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
        let call: ToolCall =
            serde_json::from_value(v["call"].clone()).expect("corpus call is a ToolCall");
        let expect = v["expect"].as_str().unwrap_or("");
        let d = engine.decide(&call, &env).decision;
        let ok = match expect {
            "allow" => d.decision == Verdict::Allow,
            "stop" => d.decision != Verdict::Allow,
            "block" => d.decision == Verdict::Block,
            other => panic!("unknown expectation {other}"),
        };
        n += 1;
        if !ok {
            wrong.push(format!(
                "{} ({}) → {} {}",
                v["note"], call.tool, d.decision, d.reason
            ));
        }
    }
    assert!(n >= 50);
    assert!(
        wrong.is_empty(),
        "{} of {n} tool calls judged wrongly:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The hard-block class: every line labelled `block` in the class corpora
/// is blocked (no approval runs it), every `stop` at least escalated.
#[test]
fn class_corpora_are_judged_as_labelled() {
    let engine = engine();
    let env = env();
    let mut wrong = Vec::new();
    let mut blocks = 0;
    for (class, text) in CLASS_DANGEROUS {
        for (cat, cmd) in load(text) {
            let d = engine.decide(&bash(&cmd), &env).decision;
            let ok = match cat.as_str() {
                "block" => {
                    blocks += 1;
                    d.decision == Verdict::Block
                }
                "stop" => d.decision != Verdict::Allow,
                other => panic!("{class}: unknown label {other}"),
            };
            if !ok {
                wrong.push(format!(
                    "[{class}/{cat}] {cmd:?} → {} {}",
                    d.decision, d.reason
                ));
            }
        }
    }
    assert!(blocks >= 100, "too few hard-block cases: {blocks}");
    assert!(
        wrong.is_empty(),
        "{} class cases were judged wrongly:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
