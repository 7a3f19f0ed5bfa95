//! The scope profile's shape (docs/profiles.md): who the agent
//! acts for, what it may and may not do, how autonomously per kind of
//! action, and which hardening layers are on. Every table refuses unknown
//! keys: a typo must not silently switch a layer off.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The whole profile, as its YAML frontmatter gives it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileDoc {
    /// The format version; only 1 exists.
    pub version: u32,
    /// On whose behalf the agent acts.
    pub provider: Provider,
    /// What the agent may and may not do.
    pub scope: Scope,
    /// Autonomy tier per action class (`chart: autonomous`, …).
    #[serde(default)]
    pub autonomy: BTreeMap<String, Tier>,
    /// Which layers are on (each defaults to on, except `require_sandbox`).
    #[serde(default)]
    pub hardening: Hardening,
    /// How tool calls map to action classes.
    #[serde(default)]
    pub actions: Vec<ActionRule>,
    /// Programs the exec allowlist admits besides the read-only base set.
    #[serde(default)]
    pub exec_allowlist: Vec<String>,
}

/// The credentialed person or organisation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    /// Their name.
    pub name: String,
    /// Their licence, if the profession has one.
    #[serde(default)]
    pub license: Option<License>,
    /// Their specialty.
    #[serde(default)]
    pub specialty: Option<String>,
    /// Where they practise.
    #[serde(default)]
    pub institution: Option<String>,
}

/// A professional licence.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct License {
    /// Its kind (`MD`, `RN`, `CPA`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Where it is valid.
    #[serde(default)]
    pub state: Option<String>,
    /// Its number.
    #[serde(default)]
    pub number: Option<String>,
}

/// The scope boundaries.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Action classes or tool names (or kinds) the agent may use.
    pub permitted_actions: Vec<String>,
    /// Action classes or tool names it must never use; beats permitted.
    #[serde(default)]
    pub prohibited_actions: Vec<String>,
    /// Limits the institution sets, told to the agent.
    #[serde(default)]
    pub institutional_limitations: Vec<String>,
}

/// How autonomously an action class may run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Tier {
    /// Within scope, it runs.
    Autonomous,
    /// It runs as the rest of the policy decides.
    Supervised,
    /// A person approves every call.
    Manual,
}

impl Tier {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The hardening switches (one per profile layer, and `require_sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hardening {
    /// Layer 1: only permitted actions; prohibited beats permitted; anything
    /// in neither is denied.
    pub tool_policy_lockdown: bool,
    /// Layer 2: every program a shell command runs must be on the allowlist.
    pub exec_approval: bool,
    /// Layer 3: the profile's rules go into the protocol text.
    pub protocol_injection: bool,
    /// Layer 4: report whether toolgate runs in a container.
    pub docker_sandbox: bool,
    /// Layer 4, enforced: refuse every call outside a container.
    pub require_sandbox: bool,
    /// Layer 5: autonomy tiers (manual → a person approves).
    pub safety_guard: bool,
    /// Layer 6: the audit trail. Always written; off only records that the
    /// profile asked for it off.
    pub audit_trail: bool,
}

impl Default for Hardening {
    fn default() -> Self {
        Hardening {
            tool_policy_lockdown: true,
            exec_approval: true,
            protocol_injection: true,
            docker_sandbox: true,
            require_sandbox: false,
            safety_guard: true,
            audit_trail: true,
        }
    }
}

/// Calls of these tools (and, if given, touching a path that matches
/// `paths`) are of action class `class`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRule {
    /// The action class (`chart`, `order`, `charge`, `perform`, …).
    pub class: String,
    /// Tool names or kinds (`write`, `exec`, `mcp__ehr__create_order`, a
    /// trailing `*` for a prefix: `mcp__ehr__*`), compared without case.
    pub tools: Vec<String>,
    /// A regex over the absolute, normalized paths the call touches (`..`
    /// resolved); the rule applies only when one matches. Never over free
    /// params: an agent chooses those, and could claim any class with them.
    #[serde(default)]
    pub paths: Option<String>,
}
