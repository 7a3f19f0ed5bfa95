//! The records a store keeps besides approvals, votes, memories and audit
//! entries (which are `toolgate_core` types): what each backend reads and
//! writes through [`crate::Tx`], and what the services above it build.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use toolgate_core::hex::hex;
use toolgate_core::model::Layer;
use toolgate_core::time::rfc3339_ms;

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
