//! The public wire types: [`ToolCall`] in, [`Decision`] out
//! (docs/http-api.md, "ToolCall and Decision").
//!
//! These are contracts. Fields are only ever added, never renamed or removed.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// One tool call as an agent runtime reports it, before normalization.
///
/// Only `tool` and `params` are required. Read from a client
/// ([`crate::input::tool_call`]), a key that is not one of these fields is
/// refused: a misspelled key must not leave the call judged without it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The runtime's own tool name (`exec`, `Bash`, `run_shell_command`, `mcp__fs__write_file`, …).
    pub tool: String,
    /// The tool's parameters with the runtime's own field names.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// The runtime's id for this call, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The agent that made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The session the call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The channel the session talks on (telegram, slack, cli, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The working directory relative paths resolve against; also the default workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Who asked for the call (the requester can never approve it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester: Option<Requester>,
    /// The agent's home directory (`$HOME` where the agent runs): `~` and
    /// `$HOME` in the call resolve against it. Hooks send it, so a daemon
    /// running as another user judges the agent's paths as the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// The OS user the agent runs as (`$USER`), as the hook saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// The person or system on whose behalf the agent acts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requester {
    /// A stable identity (user id, sender id).
    #[serde(default)]
    pub id: Option<String>,
    /// A role name such as `owner` or `guest`.
    #[serde(default)]
    pub role: Option<String>,
}

/// The three answers toolgate gives.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Verdict {
    /// The call may run.
    Allow,
    /// The call may run only after approval.
    Escalate,
    /// The call must not run; no approval can unlock it.
    Block,
}

impl Verdict {
    /// The lowercase wire name (the serde name too).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The risk taxonomy R0..R4, ordered from harmless to high impact.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(ascii_case_insensitive)]
pub enum RiskClass {
    /// Read only, no external mutation.
    R0,
    /// Local workspace mutation.
    R1,
    /// External read or low-impact external action.
    R2,
    /// External mutation or irreversible side effect.
    R3,
    /// High impact: destructive system commands, security boundary changes.
    R4,
}

impl RiskClass {
    /// The wire name (`"R0"` … `"R4"`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses `"R0"` … `"R4"` (case-insensitive, surrounding blanks
    /// ignored).
    pub fn parse(s: &str) -> Option<RiskClass> {
        s.trim().parse().ok()
    }
}

impl fmt::Display for RiskClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The layer that decided (or, for an allow, the last one consulted).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Layer {
    /// Explicit policy rules, never-block and always-ask lists.
    Policy,
    /// What a call does: the dangerous-operation catalogue and the
    /// protected set, for every tool (shell analysis for commands; paths,
    /// URLs and actions for other tools). No bypass lifts it.
    Exec,
    /// Scope profiles (permitted / prohibited actions).
    Scope,
    /// Risk class and clarity × stakes score (a guess, which a bypass may lift).
    Risk,
    /// SOP and memory matching.
    Knowledge,
    /// Sandbox posture.
    Posture,
    /// A live one-time approval.
    Approval,
}

impl Layer {
    /// The lowercase wire name (the serde name too).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A pending approval referenced by an escalation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRef {
    /// The approval id (≥ 128 random bits).
    pub id: String,
    /// When the pending approval expires (RFC 3339).
    pub expires_at: String,
    /// How many approvals the quorum needs.
    pub min_approvals: u32,
    /// Where an operator can approve it, when a daemon serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve_url: Option<String>,
}

/// toolgate's answer for one call (docs/http-api.md, "ToolCall and Decision").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// allow, block or escalate.
    pub decision: Verdict,
    /// The risk class of the call.
    pub risk: RiskClass,
    /// The clarity × stakes score, 1..=100 (each factor 1..10).
    pub score: u32,
    /// The layer that decided.
    pub layer: Layer,
    /// A sentence a person can read.
    pub reason: String,
    /// The agent-parseable protocol line: `TOOLGATE_BLOCK|reason` or
    /// `TOOLGATE_ESCALATE|<approval id>|reason`; absent on allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
    /// The pending approval, when one was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRef>,
    /// Knowledge to show the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Rewritten params, if any layer rewrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    /// The audit sequence number, when the decision was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_seq: Option<u64>,
    /// Microseconds spent deciding, measured by the caller.
    pub elapsed_us: u64,
}

/// Prefix of the agent-parseable protocol line for a hard block.
pub(crate) const BLOCK_PREFIX: &str = "TOOLGATE_BLOCK";
/// Prefix of the agent-parseable protocol line for an escalation.
pub(crate) const ESCALATE_PREFIX: &str = "TOOLGATE_ESCALATE";
/// Prefix of the protocol line of a call held until knowledge is
/// acknowledged: `TOOLGATE_ACK|<id>|reason` (a `block` decision that a
/// retry of the same call, or acknowledging the id, lifts).
pub(crate) const ACK_PREFIX: &str = "TOOLGATE_ACK";

impl Decision {
    /// A decision saying `why` (without a verb: the reason is prefixed with
    /// "allowed:", "needs approval:" or "blocked:"), with the matching
    /// protocol line, no approval, and nothing measured or recorded yet.
    pub fn new(verdict: Verdict, risk: RiskClass, score: u32, layer: Layer, why: &str) -> Decision {
        let reason = match verdict {
            Verdict::Allow => format!("allowed: {why}"),
            Verdict::Escalate => format!("needs approval: {why}"),
            Verdict::Block => format!("blocked: {why}"),
        };
        Decision {
            decision: verdict,
            risk,
            score,
            layer,
            block_reason: Decision::protocol_line(verdict, None, &reason),
            reason,
            approval: None,
            context: None,
            params: None,
            audit_seq: None,
            elapsed_us: 0,
        }
    }

    /// True when this is a block that acknowledging knowledge lifts (its
    /// protocol line is `TOOLGATE_ACK|<id>|…`).
    pub fn needs_ack(&self) -> bool {
        self.decision == Verdict::Block
            && self.block_reason.as_deref().is_some_and(|l| {
                l.starts_with(ACK_PREFIX) && l[ACK_PREFIX.len()..].starts_with('|')
            })
    }

    /// The `TOOLGATE_ACK|<id>|reason` line for knowledge shown under `id`.
    pub fn ack_line(id: &str, reason: &str) -> String {
        format!("{ACK_PREFIX}|{id}|{}", reason.replace('|', "/"))
    }

    /// Builds the protocol line for a verdict. Pipes in the reason are replaced
    /// so an agent splitting on `|` always sees the documented fields.
    pub fn protocol_line(
        verdict: Verdict,
        approval_id: Option<&str>,
        reason: &str,
    ) -> Option<String> {
        let reason = reason.replace('|', "/");
        match verdict {
            Verdict::Allow => None,
            Verdict::Block => Some(format!("{BLOCK_PREFIX}|{reason}")),
            Verdict::Escalate => Some(format!(
                "{ESCALATE_PREFIX}|{}|{reason}",
                approval_id.unwrap_or("")
            )),
        }
    }
}

/// One layer's verdict on a call, kept for the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerVerdict {
    /// The layer.
    pub layer: Layer,
    /// What it said.
    pub verdict: Verdict,
    /// The risk class it saw.
    pub class: RiskClass,
    /// Why, in a sentence.
    pub reason: String,
    /// The policy rule or catalogue entry behind it, if any.
    pub rule: Option<String>,
    /// The sub-command it is about, as the analyzer read it (program and
    /// arguments), when the call is a shell command; for showing a person
    /// which part of a compound command triggered it.
    pub command: Option<String>,
}
