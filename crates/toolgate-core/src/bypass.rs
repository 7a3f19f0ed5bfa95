//! Emergency bypass (seed 004): an operator lifts named layers for a while,
//! with a reason, when they stand in the way of an emergency. The layers
//! that judge what a call *does* — explicit policy rules and the exec
//! catalogue (`rm -rf /`, force pushes, exfiltration) — cannot be lifted:
//! for one such call, an operator approves its approval instead.

use crate::engine::{Assessment, LayerVerdict};
use crate::model::{Decision, Layer, Verdict};

/// The layers a bypass may lift.
pub const BYPASSABLE: [Layer; 4] = [Layer::Scope, Layer::Risk, Layer::Knowledge, Layer::Posture];

/// The rule name on the verdict a bypass adds to the calls it lets through.
pub const BYPASS_RULE: &str = "bypass";

/// Checks that `layers` names at least one layer and only bypassable ones;
/// the error says which cannot be and what to do instead.
pub fn check_layers(layers: &[Layer]) -> Result<(), String> {
    if layers.is_empty() {
        return Err(format!(
            "name the layers to bypass (any of {})",
            names(&BYPASSABLE)
        ));
    }
    if let Some(l) = layers.iter().find(|l| !BYPASSABLE.contains(l)) {
        return Err(format!(
            "the {} layer cannot be bypassed: it judges what a call does; approve the one call \
             instead (`toolgate bypass approval ID`). Bypassable: {}",
            l.as_str(),
            names(&BYPASSABLE)
        ));
    }
    Ok(())
}

/// Parses a layer's wire name (`knowledge`, `risk`, …).
pub fn parse_layer(name: &str) -> Option<Layer> {
    [
        Layer::Policy,
        Layer::Exec,
        Layer::Scope,
        Layer::Risk,
        Layer::Knowledge,
        Layer::Posture,
        Layer::Approval,
    ]
    .into_iter()
    .find(|l| l.as_str() == name.trim().to_ascii_lowercase())
}

fn names(layers: &[Layer]) -> String {
    layers
        .iter()
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Lifts `layers` from an assessment: when the layer that decided is one
/// of them, the decision falls to the strictest verdict of the layers left
/// (block over escalate, then the higher class), or to allow when none is
/// left; `note` (who bypassed, until when, why) is added as a verdict of
/// the lifted layer and to the reason. Returns whether anything changed.
pub fn lift(assessment: &mut Assessment, layers: &[Layer], note: &str) -> bool {
    let d = &assessment.decision;
    if d.decision == Verdict::Allow || !layers.contains(&d.layer) {
        return false;
    }
    let lifted = d.layer;
    let left = assessment
        .verdicts
        .iter()
        .filter(|v| v.verdict != Verdict::Allow && !layers.contains(&v.layer))
        .max_by_key(|v| (strictness(v.verdict), v.class))
        .cloned();
    let decision = match left {
        Some(v) => Decision::new(v.verdict, v.class, d.score, v.layer, &v.reason),
        None => Decision::new(
            Verdict::Allow,
            d.risk,
            d.score,
            lifted,
            &format!("the {} layer is bypassed ({note})", lifted.as_str()),
        ),
    };
    assessment.verdicts.push(LayerVerdict {
        layer: lifted,
        verdict: Verdict::Allow,
        class: d.risk,
        reason: format!("bypassed ({note})"),
        rule: Some(BYPASS_RULE.to_string()),
    });
    assessment.decision = decision;
    true
}

fn strictness(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Escalate => 1,
        Verdict::Block => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::model::{RiskClass, ToolCall};
    use crate::paths::Env;
    use crate::policy::Policy;

    fn assess(policy: &str, call: &str) -> Assessment {
        let engine = Engine::new(Policy::from_toml_str(policy, "p.toml").unwrap());
        let call: ToolCall = serde_json::from_str(call).unwrap();
        engine.decide(&call, &Env::new("/home/dev", "/home/dev/proj"))
    }

    #[test]
    fn only_the_layers_that_guess_or_advise_can_be_lifted() {
        assert!(check_layers(&[Layer::Knowledge, Layer::Risk]).is_ok());
        let e = check_layers(&[Layer::Risk, Layer::Exec]).unwrap_err();
        assert!(e.contains("exec layer cannot be bypassed"), "{e}");
        assert!(check_layers(&[Layer::Policy]).is_err());
        assert!(check_layers(&[]).is_err());
        assert_eq!(parse_layer(" Knowledge"), Some(Layer::Knowledge));
        assert_eq!(parse_layer("sandbox"), None);
    }

    #[test]
    fn a_lifted_layer_leaves_the_strictest_verdict_of_the_others() {
        // Escalated by the score alone: lifting the risk layer allows it.
        let mut a = assess(
            "[risk]\nescalation_threshold = 2\n",
            r#"{"tool":"exec","params":{"command":"ls -la"}}"#,
        );
        assert_eq!(a.decision.decision, Verdict::Escalate);
        assert!(lift(&mut a, &[Layer::Risk], "by alice until 10:00: outage"));
        assert_eq!(a.decision.decision, Verdict::Allow);
        assert!(
            a.decision.reason.contains("outage"),
            "{}",
            a.decision.reason
        );
        assert_eq!(
            a.verdicts.last().unwrap().rule.as_deref(),
            Some(BYPASS_RULE)
        );
        // The catalogue's findings stay whatever is lifted.
        let mut a = assess("", r#"{"tool":"exec","params":{"command":"rm -rf /"}}"#);
        assert_eq!(a.decision.decision, Verdict::Block);
        assert!(!lift(&mut a, &[Layer::Risk, Layer::Knowledge], "x"));
        assert_eq!(a.decision.decision, Verdict::Block);
        assert_eq!(a.decision.risk, RiskClass::R4);
        // An allow stays an allow.
        let mut a = assess("", r#"{"tool":"exec","params":{"command":"ls"}}"#);
        assert!(!lift(&mut a, &[Layer::Risk], "x"));
    }
}
