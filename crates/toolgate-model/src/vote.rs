//! From a model outcome to an approval factor's vote: the only place the
//! model's answer meets policy, and a pure function so the whole mapping
//! can be tested and audited.

use crate::assessment::confident_enough;
use crate::outcome::ModelOutcome;
use toolgate_core::{FactorVote, RiskClass};

/// The `llm_evaluation` factor's vote for one call, given what the model
/// said, the static rules' class, the highest class the policy lets the
/// model approve, and the policy's minimum confidence:
///
/// * any abstention, or a confidence below `min_confidence` → `Abstain`;
/// * the model rates the call R4 and the static class is R3 or R4 → `Deny`
///   (two independent judges agree it is dangerous). Checked first, so no
///   `max_auto_approve`, however high, can turn an R4 answer into approval;
/// * the model's class is at most `max_auto_approve` and at most the
///   static class (the model may confirm or lower risk, never be the one
///   that raises it into approval) → `Approve`;
/// * anything else → `Abstain`: a person or another factor decides.
///
/// Reasons name the model's class, confidence and labels, and are audited.
pub fn vote_for(
    outcome: &ModelOutcome,
    static_class: RiskClass,
    max_auto_approve: RiskClass,
    min_confidence: f64,
) -> FactorVote {
    let ModelOutcome::Assessed(a) = outcome else {
        return FactorVote::Abstain;
    };
    if !confident_enough(a.confidence(), min_confidence) {
        return FactorVote::Abstain;
    }
    let class = a.risk_class();
    let labels = if a.labels().is_empty() {
        "no labels".to_string()
    } else {
        format!("labels: {}", a.labels().join(", "))
    };
    let said = format!(
        "model assessed {class} with confidence {:.2} ({labels})",
        a.confidence()
    );
    if class == RiskClass::R4 && static_class >= RiskClass::R3 {
        return FactorVote::Deny(format!(
            "{said}: high impact, and the static rules rated it {static_class}"
        ));
    }
    if class <= max_auto_approve && class <= static_class {
        return FactorVote::Approve(format!(
            "{said}: within the auto-approve limit {max_auto_approve} and the static \
             class {static_class}"
        ));
    }
    FactorVote::Abstain
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assessment::ModelAssessment;
    use crate::outcome::Abstention;
    use RiskClass::*;

    const CLASSES: [RiskClass; 5] = [R0, R1, R2, R3, R4];

    fn assessed(class: RiskClass, confidence: f64) -> ModelOutcome {
        let labels = vec!["destructive".to_string(), "outside-workspace".to_string()];
        ModelOutcome::Assessed(ModelAssessment::new(class, confidence, labels, "why").unwrap())
    }

    /// The rule written as a table of cases rather than as the code's
    /// comparisons: which (model, static) pairs deny, and which approve for
    /// a given limit.
    fn expected(
        model: RiskClass,
        stat: RiskClass,
        max: RiskClass,
        confident: bool,
    ) -> &'static str {
        if !confident {
            return "abstain";
        }
        let denies = matches!((model, stat), (R4, R3) | (R4, R4));
        if denies {
            return "deny";
        }
        let rank = |c: RiskClass| CLASSES.iter().position(|&x| x == c).unwrap();
        if rank(model) <= rank(max) && rank(model) <= rank(stat) {
            "approve"
        } else {
            "abstain"
        }
    }

    fn kind(v: &FactorVote) -> &'static str {
        match v {
            FactorVote::Approve(_) => "approve",
            FactorVote::Deny(_) => "deny",
            FactorVote::Abstain => "abstain",
        }
    }

    #[test]
    fn the_whole_matrix() {
        let mut counts = [0usize; 3];
        for model in CLASSES {
            for stat in CLASSES {
                for max in CLASSES {
                    for (confidence, confident) in [(0.69, false), (0.7, true), (0.95, true)] {
                        let vote = vote_for(&assessed(model, confidence), stat, max, 0.7);
                        let want = expected(model, stat, max, confident);
                        assert_eq!(
                            kind(&vote),
                            want,
                            "model {model}, static {stat}, max {max}, confidence {confidence}"
                        );
                        counts[["approve", "deny", "abstain"]
                            .iter()
                            .position(|k| *k == want)
                            .unwrap()] += 1;
                    }
                }
            }
        }
        // Every branch is reached as often as counting by hand says: per
        // confident level, approve needs static ≥ model ≤ max (Σ(5−m)² =
        // 55, less model = static = max = R4, which denies); deny is
        // (R4, R3|R4) for any of 5 limits.
        assert_eq!(counts, [54 * 2, 10 * 2, 375 - 128]);
    }

    #[test]
    fn abstentions_always_abstain() {
        let abstentions = [
            Abstention::Timeout,
            Abstention::Unreachable("refused".into()),
            Abstention::HttpStatus(500),
            Abstention::Malformed("x".into()),
            Abstention::LowConfidence(0.1),
        ];
        for a in abstentions {
            for stat in CLASSES {
                let outcome = ModelOutcome::Abstained(a.clone());
                assert_eq!(vote_for(&outcome, stat, R4, 0.0), FactorVote::Abstain);
            }
        }
    }

    #[test]
    fn reasons_name_class_confidence_and_labels() {
        let FactorVote::Approve(why) = vote_for(&assessed(R1, 0.9), R2, R1, 0.7) else {
            panic!("expected approval");
        };
        assert!(why.contains("R1") && why.contains("0.90"), "{why}");
        assert!(why.contains("destructive, outside-workspace"), "{why}");
        let FactorVote::Deny(why) = vote_for(&assessed(R4, 0.8), R3, R1, 0.7) else {
            panic!("expected denial");
        };
        assert!(
            why.contains("R4") && why.contains("static rules rated it R3"),
            "{why}"
        );
    }

    #[test]
    fn a_nan_minimum_never_approves() {
        assert_eq!(
            vote_for(&assessed(R0, 1.0), R4, R4, f64::NAN),
            FactorVote::Abstain
        );
    }

    #[test]
    fn the_model_never_approves_r4() {
        for stat in CLASSES {
            assert!(!matches!(
                vote_for(&assessed(R4, 1.0), stat, R4, 0.0),
                FactorVote::Approve(_)
            ));
        }
    }
}
