//! The shared corpus of tool-call shapes (`tests/corpus/tool_call_shapes.json`,
//! also read by the OpenClaw plugin's tests): every bridge shape any runtime
//! sends unwraps to the call it wraps, and every case is judged as labelled
//! (`stopped` = blocked or escalated).

use serde_json::Value;
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy};
use toolgate_core::{ToolCall, Verdict, unwrap_bridges};

const SHAPES: &str = include_str!("corpus/tool_call_shapes.json");
const DEFAULT_POLICY: &str = include_str!("../../../policies/default.toml");

#[test]
fn every_shape_is_unwrapped_and_judged_as_labelled() {
    let engine = Engine::new(Policy::from_toml_str(DEFAULT_POLICY, "default.toml").unwrap());
    let env = Env::new("/home/dev", "/home/dev/proj");
    let cases: Vec<Value> = serde_json::from_str(SHAPES).expect("the shapes corpus is JSON");
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for case in &cases {
        let note = case["note"].as_str().unwrap();
        let call: ToolCall = serde_json::from_value(case["call"].clone()).unwrap();
        if let Some(inner) = case.get("inner") {
            let u = unwrap_bridges(&call);
            let found = u.calls.iter().any(|c| {
                c.tool == inner["tool"].as_str().unwrap()
                    && Value::Object(c.params.clone()) == inner["params"]
            });
            if !found {
                wrong.push(format!("{note}: not unwrapped to {inner}: {:?}", u.calls));
            }
        }
        let got = engine.decide(&call, &env).decision;
        let ok = match case["expect"].as_str().unwrap() {
            "allow" => got.decision == Verdict::Allow,
            "block" => got.decision == Verdict::Block,
            "escalate" => got.decision == Verdict::Escalate,
            "stopped" => got.decision != Verdict::Allow,
            other => panic!("{note}: unknown expectation {other}"),
        };
        if !ok {
            wrong.push(format!(
                "{note}: expected {}, got {} ({})",
                case["expect"],
                got.decision.as_str(),
                got.reason
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
