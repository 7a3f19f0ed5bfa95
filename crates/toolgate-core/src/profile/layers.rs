//! The profile's layers on one call (seed 002), in order: tool policy
//! lockdown, exec allowlist, sandbox posture, safety guard (autonomy
//! tiers), audit. Each writes a verdict with its layer name even when it
//! passes or is switched off; the first that blocks ends the walk (later
//! layers are not consulted, as the seed's engine short-circuits).

use super::Profile;
use super::model::Tier;
use crate::engine::LayerVerdict;
use crate::model::{Layer, RiskClass, Verdict};
use crate::normalize::NormalizedCall;
use crate::paths::Env;
use crate::posture::Posture;
use crate::shell;

/// Read-only programs the exec allowlist always admits (seed 002's base
/// set, by name: a path is judged by its file name).
pub const BASE_ALLOWLIST: &[&str] = &[
    "cat", "ls", "head", "tail", "wc", "git", "grep", "find", "pwd", "echo", "date",
];

/// What the profile says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileJudgement {
    /// One verdict per layer consulted, in order.
    pub verdicts: Vec<LayerVerdict>,
    /// The strictest verdict and the layer and reason behind it (`None`:
    /// everything passed).
    pub stop: Option<(Verdict, Layer, String, &'static str)>,
}

fn verdict(layer: Layer, v: Verdict, class: RiskClass, rule: &str, reason: String) -> LayerVerdict {
    LayerVerdict {
        layer,
        verdict: v,
        class,
        reason,
        rule: Some(rule.to_string()),
    }
}

impl Profile {
    /// Judges a normalized call (in `env`, with the sandbox `posture`).
    pub fn judge(&self, n: &NormalizedCall, env: &Env, posture: &Posture) -> ProfileJudgement {
        let h = &self.doc.hardening;
        let mut out = ProfileJudgement {
            verdicts: Vec::new(),
            stop: None,
        };
        let classes = self.classes_of(n);
        let block = |out: &mut ProfileJudgement, layer, rule: &'static str, why: String| {
            out.verdicts.push(verdict(
                layer,
                Verdict::Block,
                RiskClass::R4,
                rule,
                why.clone(),
            ));
            out.stop = Some((Verdict::Block, layer, why, rule));
        };

        // 1. Tool policy lockdown.
        let names: Vec<&str> = std::iter::once(n.tool.as_str())
            .chain(std::iter::once(n.kind.as_str()))
            .chain(classes.iter().map(String::as_str))
            .collect();
        let scope = &self.doc.scope;
        let listed = |list: &[String]| {
            names
                .iter()
                .find(|n| list.iter().any(|l| l.eq_ignore_ascii_case(n)))
                .map(|s| s.to_string())
        };
        if !h.tool_policy_lockdown {
            out.verdicts.push(verdict(
                Layer::Scope,
                Verdict::Allow,
                RiskClass::R0,
                "tool_policy_lockdown",
                "tool policy lockdown is off in the profile".into(),
            ));
        } else if let Some(hit) = listed(&scope.prohibited_actions) {
            block(
                &mut out,
                Layer::Scope,
                "tool_policy_lockdown",
                format!("`{hit}` is a prohibited action in the scope profile"),
            );
            return out;
        } else if let Some(hit) = listed(&scope.permitted_actions) {
            out.verdicts.push(verdict(
                Layer::Scope,
                Verdict::Allow,
                RiskClass::R0,
                "tool_policy_lockdown",
                format!("`{hit}` is a permitted action"),
            ));
        } else {
            block(
                &mut out,
                Layer::Scope,
                "tool_policy_lockdown",
                format!(
                    "{} ({}) is not among the scope profile's permitted actions",
                    n.tool,
                    if classes.is_empty() {
                        "no action class".to_string()
                    } else {
                        format!("action {}", classes.join(", "))
                    }
                ),
            );
            return out;
        }

        // 2. Exec allowlist: every program every command would run.
        let texts: Vec<&str> = n
            .command
            .iter()
            .chain(n.alt_commands.iter())
            .map(String::as_str)
            .collect();
        if !h.exec_approval {
            out.verdicts.push(verdict(
                Layer::Exec,
                Verdict::Allow,
                RiskClass::R0,
                "exec_allowlist",
                "exec allowlist is off in the profile".into(),
            ));
        } else if n.kind == crate::normalize::ToolKind::Exec || !texts.is_empty() {
            if texts.iter().all(|t| t.trim().is_empty()) {
                block(
                    &mut out,
                    Layer::Exec,
                    "exec_allowlist",
                    "empty command".into(),
                );
                return out;
            }
            for t in &texts {
                let a = shell::analyze(t, env);
                if let Some(o) = a.opaque.first() {
                    block(
                        &mut out,
                        Layer::Exec,
                        "exec_allowlist",
                        format!(
                            "the command cannot be read statically ({o:?}); the allowlist needs every program known"
                        ),
                    );
                    return out;
                }
                for cmd in &a.commands {
                    let program = cmd.program.rsplit('/').next().unwrap_or(&cmd.program);
                    if !self.exec_allowed(program) {
                        block(
                            &mut out,
                            Layer::Exec,
                            "exec_allowlist",
                            format!("`{program}` is not on the scope profile's exec allowlist"),
                        );
                        return out;
                    }
                }
            }
            out.verdicts.push(verdict(
                Layer::Exec,
                Verdict::Allow,
                RiskClass::R0,
                "exec_allowlist",
                "every program is on the exec allowlist".into(),
            ));
        }

        // 4. Sandbox posture.
        let seen = if posture.signals.is_empty() {
            "no container detected".to_string()
        } else {
            posture.signals.join("; ")
        };
        if h.require_sandbox && !posture.is_sandboxed() {
            block(
                &mut out,
                Layer::Posture,
                "require_sandbox",
                format!(
                    "the scope profile requires a container sandbox and none is certain ({seen})"
                ),
            );
            return out;
        }
        out.verdicts.push(verdict(
            Layer::Posture,
            Verdict::Allow,
            RiskClass::R0,
            "docker_sandbox",
            if !h.docker_sandbox && !h.require_sandbox {
                "sandbox reporting is off in the profile".into()
            } else if posture.is_sandboxed() {
                format!("running in a container: {seen}")
            } else {
                format!("not sandboxed ({seen}); reported, not enforced")
            },
        ));

        // 5. Safety guard: autonomy tiers of the call's action classes.
        if !h.safety_guard {
            out.verdicts.push(verdict(
                Layer::Scope,
                Verdict::Allow,
                RiskClass::R0,
                "safety_guard",
                "safety guard is off in the profile".into(),
            ));
        } else {
            let manual = classes
                .iter()
                .find(|c| self.doc.autonomy.get(*c) == Some(&Tier::Manual));
            match manual {
                Some(c) => {
                    let why = format!(
                        "`{c}` actions are manual in the scope profile: a person approves each"
                    );
                    out.verdicts.push(verdict(
                        Layer::Scope,
                        Verdict::Escalate,
                        RiskClass::R3,
                        "safety_guard",
                        why.clone(),
                    ));
                    out.stop = Some((Verdict::Escalate, Layer::Scope, why, "safety_guard"));
                }
                None => {
                    let tiers: Vec<String> = classes
                        .iter()
                        .map(|c| {
                            let t = self
                                .doc
                                .autonomy
                                .get(c)
                                .copied()
                                .unwrap_or(Tier::Supervised);
                            format!("{c}: {}", t.as_str())
                        })
                        .collect();
                    out.verdicts.push(verdict(
                        Layer::Scope,
                        Verdict::Allow,
                        RiskClass::R0,
                        "safety_guard",
                        if tiers.is_empty() {
                            "no action class with an autonomy tier".into()
                        } else {
                            format!("within autonomy ({})", tiers.join(", "))
                        },
                    ));
                }
            }
        }

        // 6. Audit: always written; the switch records consent only.
        out.verdicts.push(verdict(
            Layer::Policy,
            Verdict::Allow,
            RiskClass::R0,
            "audit_trail",
            if h.audit_trail {
                "audit trail on".into()
            } else {
                "the profile turns the audit trail off; toolgate records it anyway".into()
            },
        ));
        out
    }
}
