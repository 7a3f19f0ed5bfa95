//! The records a store keeps besides approvals, votes, memories and audit
//! entries (which are `toolgate_core` types): what each backend reads and
//! writes through [`crate::Tx`], and what the services above it build.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use toolgate_core::{AuditEvent, AuditKind, Layer, hex, rfc3339_ms};

/// An acknowledgement: someone confirmed they read `key` (an SOP
/// or memory id) for `scope` (a session, agent or project), until expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {
    /// What was acknowledged.
    pub key: String,
    /// Where the acknowledgement applies.
    pub scope: String,
    /// Who acknowledged.
    pub by: String,
    /// Why or how, if given.
    #[serde(default)]
    pub reason: Option<String>,
    /// When (Unix ms).
    pub created_ms: i64,
    /// Until when it holds (Unix ms).
    pub expires_ms: i64,
}

/// One emergency bypass of some layers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bypass {
    /// 16 random bytes, hex.
    pub id: String,
    /// The layers lifted.
    pub layers: Vec<Layer>,
    /// Why (redacted).
    pub reason: String,
    /// Who started it (an authenticated identity).
    pub by: String,
    /// When it started (Unix ms).
    pub started_ms: i64,
    /// When it lapses (Unix ms).
    pub until_ms: i64,
    /// When it was ended early, and by whom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<(i64, String)>,
}

impl Bypass {
    /// Whether it lifts its layers at `now_ms`.
    pub fn active(&self, now_ms: i64) -> bool {
        self.ended.is_none() && now_ms < self.until_ms
    }

    /// Who, until when and why, for reasons and the audit log.
    pub fn note(&self) -> String {
        format!(
            "bypass {} by {} until {}: {}",
            self.id,
            self.by,
            rfc3339_ms(self.until_ms),
            self.reason
        )
    }
}

/// A named operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operator {
    /// The name votes are recorded under (lowercase).
    pub name: String,
    /// SHA-256 of the current token, hex.
    pub token_sha256: String,
    /// When the operator was added (Unix ms).
    pub created_ms: i64,
    /// Who added them.
    pub created_by: String,
    /// When the current token was issued (Unix ms).
    pub token_issued_ms: i64,
    /// When they were removed, if they were: their token no longer works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_ms: Option<i64>,
    /// Chat identities that are this person's (`slack:U0123`,
    /// `telegram:123456`, `discord:8123…`, `email:a@example.com`): a vote
    /// arriving through that channel from that user is theirs.
    #[serde(default)]
    pub identities: Vec<String>,
}

impl Operator {
    /// Whether the operator may vote (not removed).
    pub fn active(&self) -> bool {
        self.removed_ms.is_none()
    }

    /// Whether `token` is this operator's current token (constant time).
    pub fn token_matches(&self, token: &str) -> bool {
        let presented = hex(&Sha256::digest(token.trim().as_bytes()));
        presented
            .as_bytes()
            .ct_eq(self.token_sha256.as_bytes())
            .into()
    }
}

/// Knowledge shown for one call, waiting to be acknowledged: which SOP
/// sections and memories (`keys`) were shown for the call with this binding
/// in this scope, and until when a retry may acknowledge them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shown {
    /// This record's id (random, handed to the agent).
    pub id: String,
    /// The binding hash of the call the knowledge was shown for.
    pub binding: String,
    /// Where an acknowledgement applies (a session, agent or project).
    pub scope: String,
    /// When it was shown (Unix ms).
    pub shown_ms: i64,
    /// After this (Unix ms) it can no longer be acknowledged, and
    /// `Tx::prune_shown` may delete it.
    pub expires_ms: i64,
    /// What was shown (`mem:<id>`, SOP section keys).
    pub keys: Vec<String>,
}

/// How many decisions of one kind the audit log holds: those that ended
/// in `decision` (`allow`, `block`, `escalate`) from the deciding `layer`
/// (empty where the entry named none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionCount {
    /// `data.decision`.
    pub decision: String,
    /// `data.layer`, or empty.
    pub layer: String,
    /// How many.
    pub count: u64,
}

/// The fields of a decision's audit entry that decisions are looked up by
/// (the filters of `GET /v1/decisions`). As index keys: what one decision
/// entry holds (`None` where the entry has no string there). As a query:
/// every field given must match exactly; `None` matches anything (and, as
/// the query parameters of `GET /v1/decisions`, deserializes from them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct DecisionFields {
    /// `allow`, `block` or `escalate` (`data.decision`).
    pub decision: Option<String>,
    /// The tool name as the agent sent it (`data.call.tool`).
    pub tool: Option<String>,
    /// `R0` … `R4` (`data.risk`).
    pub risk: Option<String>,
    /// The deciding layer (`data.layer`).
    pub layer: Option<String>,
    /// The agent (`data.call.agent`).
    pub agent: Option<String>,
    /// The session (`data.call.session`).
    pub session: Option<String>,
}

impl DecisionFields {
    /// The column names backends index the fields under, in the order of
    /// [`DecisionFields::values`].
    pub const COLUMNS: [&'static str; 6] =
        ["decision", "tool", "risk", "layer", "agent", "session"];

    /// The fields in the order of [`DecisionFields::COLUMNS`].
    pub fn values(&self) -> [Option<&str>; 6] {
        [
            self.decision.as_deref(),
            self.tool.as_deref(),
            self.risk.as_deref(),
            self.layer.as_deref(),
            self.agent.as_deref(),
            self.session.as_deref(),
        ]
    }

    /// The index keys of an event about to be appended; `None` unless it
    /// is a decision.
    pub fn of_event(event: &AuditEvent) -> Option<DecisionFields> {
        (event.kind == AuditKind::Decision).then(|| DecisionFields::of_data(&event.data))
    }

    /// The index keys of a stored entry (its canonical text); `None` unless
    /// it is a decision (or is not JSON).
    pub fn of_text(entry: &str) -> Option<DecisionFields> {
        let v: serde_json::Value = serde_json::from_str(entry).ok()?;
        (v.get("kind")?.as_str()? == "decision")
            .then(|| DecisionFields::of_data(v.get("data").unwrap_or(&serde_json::Value::Null)))
    }

    fn of_data(data: &serde_json::Value) -> DecisionFields {
        let text = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(str::to_string);
        let call = data.get("call");
        DecisionFields {
            decision: text(data.get("decision")),
            tool: text(call.and_then(|c| c.get("tool"))),
            risk: text(data.get("risk")),
            layer: text(data.get("layer")),
            agent: text(call.and_then(|c| c.get("agent"))),
            session: text(call.and_then(|c| c.get("session"))),
        }
    }
}
