//! The model approver (`llm_evaluation`, the fast model stage) as
//! the daemon runs it: built from the policy's `[approvals.model]`, asked
//! by `Gate::run_factors` after an escalation is committed, only about
//! escalations the static stage is unsure of, within its own timeout. The
//! policy's quorum, not the model, decides; the model's vote (with its
//! class, confidence, labels and rationale) is audited like anyone's.

use std::sync::{Arc, OnceLock};
use toolgate_core::paths::Env;
use toolgate_core::shell::Analyses;
use toolgate_core::{
    Approver, Engine, FactorVote, LayerVerdict, RiskClass, ToolCall, Verdict, is_unsure,
};
use toolgate_core::{ApproverKind, ModelStage};
use toolgate_gate::Gate;
use toolgate_model::{
    ContextPackage, ModelClient, ModelConfig, ModelOutcome, StaticAssessment, vote_for,
};

/// The identity the model's votes carry (one vote per approval).
pub const IDENTITY: &str = "llm_evaluation";

/// The `llm_evaluation` approver over an OpenAI-compatible endpoint.
pub struct ModelApprover {
    config: ModelConfig,
    key: Option<String>,
    /// Built on first use: a hook process whose call is allowed (most)
    /// never pays for an HTTP client.
    client: OnceLock<Result<ModelClient, String>>,
    max_auto_approve: RiskClass,
    min_confidence: f64,
}

impl ModelApprover {
    /// The approver `stage` describes, reading its key from the environment
    /// variable it names; the error says what to fix.
    pub fn from_stage(stage: &ModelStage) -> Result<ModelApprover, String> {
        let config = ModelConfig::from_stage(stage)?;
        let min_confidence = config.min_confidence;
        let key = config
            .key_from_env()
            .map_err(|e| format!("[approvals.model] (line {}): {e}", stage.line))?;
        Ok(ModelApprover {
            config,
            key,
            client: OnceLock::new(),
            max_auto_approve: stage.max_auto_approve,
            min_confidence,
        })
    }

    fn client(&self) -> Result<&ModelClient, &str> {
        self.client
            .get_or_init(|| {
                ModelClient::new(self.config.clone(), self.key.clone())
                    .map_err(|e| format!("[approvals.model]: {e}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl Approver for ModelApprover {
    fn kind(&self) -> ApproverKind {
        ApproverKind::LlmEvaluation
    }

    fn identity(&self) -> String {
        IDENTITY.to_string()
    }

    fn evaluate(
        &self,
        engine: &Engine,
        call: &ToolCall,
        base: &Env,
        class: RiskClass,
        _analyses: &Analyses,
    ) -> FactorVote {
        // The static stage's own answer says whether it was sure.
        let assessment = engine.decide(call, base);
        if !is_unsure(&assessment) {
            return FactorVote::Abstain;
        }
        let reasons = concerns(&assessment.verdicts);
        let ctx = ContextPackage::from_normalized(
            call,
            &assessment.call,
            StaticAssessment {
                risk_class: class,
                reasons,
            },
        );
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "the model approver cannot run; it abstains");
                return FactorVote::Abstain;
            }
        };
        let outcome = client.assess_blocking(&ctx);
        let label = match &outcome {
            ModelOutcome::Assessed(_) => "assessed",
            ModelOutcome::Abstained(a) => {
                tracing::info!(abstained = %a, "the model approver abstained");
                "abstained"
            }
        };
        metrics::counter!("toolgate_model_assessments_total", "outcome" => label).increment(1);
        vote_for(&outcome, class, self.max_auto_approve, self.min_confidence)
    }
}

/// The reasons of the layers that did not simply allow.
fn concerns(verdicts: &[LayerVerdict]) -> Vec<String> {
    verdicts
        .iter()
        .filter(|v| v.verdict != Verdict::Allow)
        .map(|v| v.reason.clone())
        .collect()
}

/// `gate` with the model approver its policy configures, if it can be
/// built. One that cannot (a key variable unset, a bad URL) is left out
/// and logged: the quorum is then computed without it, which is stricter
/// (a policy that needs its vote blocks with `insufficient-factors`).
pub fn attach(gate: Gate) -> Gate {
    let Some(stage) = gate.engine().policy().approvals().model.clone() else {
        return gate;
    };
    match ModelApprover::from_stage(&stage) {
        Ok(approver) => gate.with_llm_approver(Arc::new(approver)),
        Err(e) => {
            tracing::error!(error = %e, "the model approver is not available; deciding without it");
            gate
        }
    }
}
