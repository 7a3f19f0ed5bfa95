//! Emergency bypass (docs/approvals.md): an operator lifts named layers for a while,
//! with a reason, when they stand in the way of an emergency. Only the
//! layers that guess or advise can be lifted — the risk score, knowledge,
//! the sandbox posture. The layers that judge what a call *does* or where
//! it may act — explicit policy rules, the catalogue's findings for any tool
//! (shell commands, file writes, patches, MCP calls, URLs), the protected
//! set and a scope profile's allowlist (`exec`), the scope profile's
//! permitted actions and protected files (`scope`) — cannot: for one such
//! call, an operator approves its approval instead. Lifting `risk` lifts
//! only its clarity × stakes guess, never a finding recorded beside it.
//!
//! Lifting is done by the engine itself ([`Engine::decide_lifting`]): a
//! lifted layer's findings are recorded and decide nothing, and every
//! layer after it is still consulted, so a lifted stop never hides what a
//! later layer would have found.

use crate::engine::{Assessment, Engine, LayerVerdict};
use crate::model::{Decision, Layer, ToolCall, Verdict};
use crate::paths::Env;

/// The layers a bypass may lift.
pub const BYPASSABLE: [Layer; 3] = [Layer::Risk, Layer::Knowledge, Layer::Posture];

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
            "the {} layer cannot be bypassed: it judges what a call does or where it may act; \
             approve the one call instead (`toolgate bypass approval ID`). Bypassable: {}",
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

/// `first` (the engine's assessment of `call`) with `layers` lifted: when
/// the layer that decided is one of them, the call is judged again with
/// them lifted, and the bypass (`note`: who, until when, why) is added as a
/// verdict of the lifted layer and, for a call it lets through, to the
/// reason. Anything else is returned as it is.
pub fn lift(
    engine: &Engine,
    call: &ToolCall,
    base: &Env,
    first: Assessment,
    layers: &[Layer],
    note: &str,
) -> Assessment {
    let d = &first.decision;
    if d.decision == Verdict::Allow || !layers.contains(&d.layer) {
        return first;
    }
    let lifted_layer = d.layer;
    let class = d.risk;
    let mut a = engine.decide_lifting(call, base, layers);
    a.verdicts.push(LayerVerdict {
        layer: lifted_layer,
        verdict: Verdict::Allow,
        class,
        reason: format!("bypassed ({note})"),
        rule: Some(BYPASS_RULE.to_string()),
        command: None,
    });
    if a.decision.decision == Verdict::Allow {
        a.decision = Decision::new(
            Verdict::Allow,
            a.decision.risk,
            a.decision.score,
            lifted_layer,
            &format!("the {} layer is bypassed ({note})", lifted_layer.as_str()),
        );
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RiskClass;
    use crate::policy::Policy;
    use crate::posture::{Signals, detect};
    use crate::profile::Profile;

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    fn call(json: &str) -> ToolCall {
        serde_json::from_str(json).unwrap()
    }

    fn lifted(engine: &Engine, c: &str, layers: &[Layer]) -> Assessment {
        let c = call(c);
        let first = engine.decide(&c, &env());
        lift(
            engine,
            &c,
            &env(),
            first,
            layers,
            "by alice until 10:00: outage",
        )
    }

    #[test]
    fn only_the_layers_that_guess_or_advise_can_be_lifted() {
        assert!(check_layers(&[Layer::Knowledge, Layer::Risk, Layer::Posture]).is_ok());
        for l in [Layer::Exec, Layer::Policy, Layer::Scope] {
            let e = check_layers(&[Layer::Risk, l]).unwrap_err();
            assert!(e.contains("cannot be bypassed"), "{e}");
        }
        assert!(check_layers(&[]).is_err());
        assert_eq!(parse_layer(" Knowledge"), Some(Layer::Knowledge));
        assert_eq!(parse_layer("sandbox"), None);
    }

    #[test]
    fn a_lifted_score_leaves_every_finding_standing() {
        let low =
            Engine::new(Policy::from_toml_str("[risk]\nescalation_threshold = 2\n", "p").unwrap());
        let a = lifted(
            &low,
            r#"{"tool":"exec","params":{"command":"ls -la"}}"#,
            &[Layer::Risk],
        );
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
        let a = lifted(
            &low,
            r#"{"tool":"exec","params":{"command":"rm -rf /"}}"#,
            &[Layer::Risk, Layer::Knowledge],
        );
        assert_eq!(
            (a.decision.decision, a.decision.risk),
            (Verdict::Block, RiskClass::R4)
        );
        let a = lifted(
            &low,
            r#"{"tool":"exec","params":{"command":"git push --force origin main"}}"#,
            &[Layer::Risk],
        );
        assert_eq!(a.decision.decision, Verdict::Escalate);
        // An allow stays an allow, untouched.
        let plain = Engine::new(Policy::default());
        let a = lifted(
            &plain,
            r#"{"tool":"exec","params":{"command":"ls"}}"#,
            &[Layer::Risk],
        );
        assert!(
            a.verdicts
                .iter()
                .all(|v| v.rule.as_deref() != Some(BYPASS_RULE))
        );
    }

    /// A bypass of `risk` lifts the clarity × stakes guess only: what the
    /// catalogue or the protected set found about any tool — a file write,
    /// a patch, an MCP call — stays, hard blocks included.
    #[test]
    fn a_lifted_risk_layer_never_lifts_a_finding_of_any_tool() {
        let low =
            Engine::new(Policy::from_toml_str("[risk]\nescalation_threshold = 2\n", "p").unwrap());
        let everything = [Layer::Risk, Layer::Knowledge, Layer::Posture];
        for c in [
            r#"{"tool":"apply_patch","params":{"input":"*** Begin Patch\n*** Delete File: /etc\n*** End Patch"}}"#,
            r#"{"tool":"Write","params":{"file_path":"/home/dev/.local/state/toolgate/operator.token","content":"x"}}"#,
            r#"{"tool":"Write","params":{"file_path":"/home/dev/proj/.git/hooks/pre-commit","content":"x"}}"#,
            r#"{"tool":"Edit","params":{"file_path":"/home/dev/.ssh/authorized_keys","old_string":"a","new_string":"b"}}"#,
            r#"{"tool":"write_file","params":{"file_path":"/home/dev/.bashrc","content":"x"}}"#,
            r#"{"tool":"mcp__fs__write_file","params":{"path":"/etc/sudoers.d/x","content":"x"}}"#,
            r#"{"tool":"Read","params":{"file_path":"/home/dev/.ssh/id_rsa"}}"#,
            r#"{"tool":"WebFetch","params":{"url":"http://169.254.169.254/latest/meta-data/"}}"#,
            r#"{"tool":"Write","params":{"file_path":"/home/dev/proj/toolgate.toml","content":"x"}}"#,
            r#"{"tool":"message","params":{"action":"send","message":"hi"}}"#,
            r#"{"tool":"write","params":{"content":"no path"}}"#,
        ] {
            let first = low.decide(&call(c), &env());
            assert_ne!(first.decision.decision, Verdict::Allow, "{c}");
            let a = lifted(&low, c, &everything);
            assert_eq!(
                (a.decision.decision, a.decision.layer),
                (first.decision.decision, first.decision.layer),
                "{c}: {}",
                a.decision.reason
            );
            assert!(
                a.verdicts
                    .iter()
                    .all(|v| v.rule.as_deref() != Some(BYPASS_RULE)),
                "{c}"
            );
        }
        // What only the score held is lifted.
        let a = lifted(
            &low,
            r#"{"tool":"Write","params":{"file_path":"/home/dev/proj/src/a.rs","content":"x"}}"#,
            &[Layer::Risk],
        );
        assert_eq!(a.decision.decision, Verdict::Allow, "{}", a.decision.reason);
    }

    #[test]
    fn a_lifted_sandbox_requirement_still_leaves_the_profile_after_it_standing() {
        let doc = serde_json::json!({
            "version": 1,
            "provider": {"name": "Dr. Test", "license": {"type": "MD", "state": "CA"}},
            "scope": {"permitted_actions": ["chart", "read", "exec", "order"], "prohibited_actions": []},
            "autonomy": {"order": "manual"},
            "hardening": {"require_sandbox": true},
            "actions": [{"class": "order", "tools": ["mcp__ehr__*"]}],
            "exec_allowlist": ["sort"],
        });
        let profile = Profile::from_value(doc, "t.profile.md").unwrap();
        let engine = Engine::new(Policy::default().with_profile(profile))
            .with_posture(detect(&Signals::default()));
        let sort = r#"{"tool":"exec","params":{"command":"sort notes.txt"}}"#;
        assert_eq!(
            engine.decide(&call(sort), &env()).decision.layer,
            Layer::Posture
        );
        assert_eq!(
            lifted(&engine, sort, &[Layer::Posture]).decision.decision,
            Verdict::Allow
        );
        // The allowlist and the autonomy tiers after the sandbox check still judge.
        let curl = lifted(
            &engine,
            r#"{"tool":"exec","params":{"command":"curl http://x.test"}}"#,
            &[Layer::Posture],
        );
        assert_eq!(
            curl.decision.decision,
            Verdict::Block,
            "{:?}",
            curl.decision
        );
        let order = lifted(
            &engine,
            r#"{"tool":"mcp__ehr__order","params":{"drug":"x"}}"#,
            &[Layer::Posture],
        );
        assert_eq!(
            order.decision.decision,
            Verdict::Escalate,
            "{:?}",
            order.decision
        );
    }
}
