//! The raw shape of a policy file, as serde reads it. Every table refuses
//! unknown keys, and every value a user can get wrong keeps its span so the
//! error can point at it.

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPolicy {
    pub(super) workspace: Option<Spanned<String>>,
    pub(super) rules: Option<RawRules>,
    pub(super) risk: Option<RawRisk>,
    pub(super) approvals: Option<RawApprovals>,
    pub(super) knowledge: Option<RawKnowledge>,
    pub(super) hooks: Option<RawHooks>,
    pub(super) git: Option<RawGit>,
    pub(super) organization: Option<RawOrganization>,
    pub(super) profile: Option<Spanned<String>>,
    #[serde(default, rename = "test")]
    pub(super) tests: Vec<Spanned<RawTest>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRules {
    #[serde(default)]
    pub(super) deny: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) ask: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) never_block: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) always_ask: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRisk {
    pub(super) escalation_threshold: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawApprovals {
    pub(super) pending_ttl: Option<Spanned<String>>,
    pub(super) approval_window: Option<Spanned<String>>,
    pub(super) quorum: Option<RawQuorum>,
    pub(super) relay: Option<bool>,
    pub(super) max_open: Option<Spanned<i64>>,
    pub(super) max_open_per_session: Option<Spanned<i64>>,
    pub(super) max_open_per_agent: Option<Spanned<i64>>,
    pub(super) allow_weak_r4: Option<bool>,
    pub(super) require_user: Option<Vec<Spanned<String>>>,
    pub(super) allowed_approvers: Option<Vec<Spanned<String>>>,
    pub(super) disabled_approvers: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub(super) operators: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) rule: Vec<Spanned<RawApprovalRule>>,
    pub(super) model: Option<Spanned<toml::Table>>,
    pub(super) routing: Option<Spanned<toml::Table>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawApprovalRule {
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) approve: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) requester_roles: Vec<String>,
    pub(super) max_risk: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQuorum {
    #[serde(rename = "R0")]
    pub(super) r0: Option<Spanned<i64>>,
    #[serde(rename = "R1")]
    pub(super) r1: Option<Spanned<i64>>,
    #[serde(rename = "R2")]
    pub(super) r2: Option<Spanned<i64>>,
    #[serde(rename = "R3")]
    pub(super) r3: Option<Spanned<i64>>,
    #[serde(rename = "R4")]
    pub(super) r4: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTest {
    pub(super) call: Option<Spanned<RawCall>>,
    pub(super) expect: Option<Spanned<String>>,
    pub(super) name: Option<String>,
}

/// A [`ToolCall`](crate::model::ToolCall) as written in a test. It mirrors
/// the wire type but, unlike it, refuses unknown keys: a misspelt `parms`
/// in a test would otherwise test an empty call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCall {
    pub(super) tool: Option<Spanned<String>>,
    pub(super) params: Option<Spanned<toml::Table>>,
    pub(super) call_id: Option<String>,
    pub(super) agent: Option<String>,
    pub(super) session: Option<String>,
    pub(super) channel: Option<String>,
    pub(super) cwd: Option<String>,
    pub(super) requester: Option<RawRequester>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequester {
    pub(super) id: Option<String>,
    pub(super) role: Option<String>,
}

/// Converts TOML to JSON for test-call params. Datetimes become their RFC
/// 3339 text; floats JSON cannot hold (NaN, ±inf) are refused.
pub(super) fn toml_to_json(v: &toml::Value) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match v {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f)
                .map(J::Number)
                .ok_or_else(|| {
                    format!("the number {f} cannot be sent as JSON — use a finite number")
                })?
        }
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(items) => {
            J::Array(items.iter().map(toml_to_json).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => J::Object(table_to_json(t)?),
    })
}

pub(super) fn table_to_json(
    t: &toml::Table,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    t.iter()
        .map(|(k, v)| Ok((k.clone(), toml_to_json(v)?)))
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKnowledge {
    pub(super) enforcement: Option<Spanned<String>>,
    pub(super) block_categories: Option<Vec<Spanned<String>>>,
    pub(super) cooldown: Option<Spanned<String>>,
    pub(super) fail_open: Option<bool>,
    pub(super) show_credentials: Option<bool>,
    pub(super) sop_dirs: Option<Vec<Spanned<String>>>,
    pub(super) project_sops: Option<bool>,
    pub(super) project_roots: Option<Vec<Spanned<String>>>,
    pub(super) memory_categories: Option<Vec<Spanned<String>>>,
    pub(super) max_memories: Option<Spanned<i64>>,
    pub(super) thresholds: Option<RawThresholds>,
    pub(super) services: Option<Spanned<toml::Table>>,
    #[serde(default)]
    pub(super) rule: Vec<Spanned<RawSopRule>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThresholds {
    pub(super) critical: Option<Spanned<f64>>,
    pub(super) routine: Option<Spanned<f64>>,
    pub(super) experimental: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSopRule {
    pub(super) pattern: Option<Spanned<String>>,
    pub(super) sop: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) tools: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHooks {
    pub(super) hold: Option<Spanned<String>>,
    pub(super) host_prompt: Option<bool>,
    pub(super) allow_is_final: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGit {
    pub(super) protected_branches: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOrganization {
    pub(super) domains: Option<Vec<Spanned<String>>>,
    pub(super) code_orgs: Option<Vec<Spanned<String>>>,
    pub(super) private_channels: Option<Vec<Spanned<String>>>,
    pub(super) chat_workspaces: Option<Vec<Spanned<String>>>,
    pub(super) cloud_accounts: Option<Vec<Spanned<String>>>,
    pub(super) production: Option<Vec<Spanned<String>>>,
}
