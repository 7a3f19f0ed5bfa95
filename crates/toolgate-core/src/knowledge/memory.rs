//! Memories (docs/knowledge.md): short lessons people or agents
//! recorded — "the billing DB has no replica; pg_dump locks it for minutes" —
//! each with categories, a confidence and a source. The store keeps them and
//! searches them; this module owns their shape and the JSONL line format.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a memory is about. A memory may have several.
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
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
pub enum Category {
    /// How things are done here: steps, order, who to ask.
    Process,
    /// How a system behaves.
    Technical,
    /// Security boundaries and incidents.
    Security,
    /// Traps that bit someone before.
    #[strum(to_string = "gotchas", serialize = "gotcha")]
    Gotchas,
    /// Where secrets are and how to use them. Never written to the audit
    /// log; shown to the agent only where the policy says so.
    #[strum(to_string = "credentials", serialize = "credential")]
    Credentials,
    /// Anything else.
    General,
}

impl Category {
    /// Every category, in order.
    pub const ALL: [Category; 6] = [
        Category::Process,
        Category::Technical,
        Category::Security,
        Category::Gotchas,
        Category::Credentials,
        Category::General,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses a name, case-insensitively; `gotcha` and `credential` too.
    pub fn parse(s: &str) -> Option<Category> {
        s.trim().parse().ok()
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// The store's id (assigned on insert; 0 before).
    #[serde(default)]
    pub id: u64,
    /// The lesson itself.
    pub text: String,
    /// What it is about; at least one (`general` when none was given).
    #[serde(default)]
    pub categories: Vec<Category>,
    /// How sure whoever recorded it was, 0.0..=1.0.
    pub confidence: f64,
    /// Where it came from (an incident, a person, a document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When it was recorded (Unix ms; 0 when unknown).
    #[serde(default)]
    pub created_ms: i64,
}

impl Memory {
    /// The acknowledgement key of this memory (`mem:<id>`).
    pub fn key(&self) -> String {
        format!("mem:{}", self.id)
    }

    /// True when it holds credentials (never audited in clear).
    pub fn is_credentials(&self) -> bool {
        self.categories.contains(&Category::Credentials)
    }
}

/// The longest memory text accepted, in bytes.
pub const MAX_MEMORY_TEXT: usize = 16 * 1024;

/// What a JSONL line or `toolgate memory add` may give; [`MemoryInput::validate`]
/// turns it into a [`Memory`] or says what to fix.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryInput {
    /// Kept from an export; ignored on import (the store assigns ids).
    #[serde(default)]
    pub id: Option<u64>,
    /// The lesson (required, non-empty, ≤ 16 KiB).
    #[serde(default)]
    pub text: Option<String>,
    /// Category names; empty means `general`.
    #[serde(default)]
    pub categories: Vec<String>,
    /// 0.0..=1.0; required.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Where it came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Kept from an export; ignored on import.
    #[serde(default)]
    pub created_ms: Option<i64>,
}

impl MemoryInput {
    /// A memory, or a message saying what is wrong and how to fix it.
    /// `now_ms` stamps it.
    pub fn validate(self, now_ms: i64) -> Result<Memory, String> {
        let text = self.text.unwrap_or_default().trim().to_string();
        if text.is_empty() {
            return Err("the memory has no text — give \"text\": \"the lesson\"".into());
        }
        if text.len() > MAX_MEMORY_TEXT {
            return Err(format!(
                "the memory text is {} bytes; the limit is {MAX_MEMORY_TEXT} — split it into \
                 smaller memories",
                text.len()
            ));
        }
        let Some(confidence) = self.confidence else {
            return Err(
                "the memory has no confidence — give \"confidence\": a number from 0 to 1".into(),
            );
        };
        if !(0.0..=1.0).contains(&confidence) || confidence.is_nan() {
            return Err(format!(
                "confidence {confidence} is out of range — use a number from 0 to 1"
            ));
        }
        let mut categories = Vec::new();
        for c in &self.categories {
            let cat = Category::parse(c).ok_or_else(|| {
                format!(
                    "unknown category {c:?} — use process, technical, security, gotchas, \
                     credentials or general"
                )
            })?;
            if !categories.contains(&cat) {
                categories.push(cat);
            }
        }
        if categories.is_empty() {
            categories.push(Category::General);
        }
        categories.sort();
        let source = self
            .source
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        Ok(Memory {
            id: 0,
            text,
            categories,
            confidence,
            source,
            created_ms: now_ms,
        })
    }
}

/// A search for the memories that apply to a call.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryQuery {
    /// Words or phrases; a memory matches when its text contains any of
    /// them as whole words (a phrase's words in order).
    pub terms: Vec<String>,
    /// Only memories at least this confident.
    pub min_confidence: f64,
    /// Only memories with one of these categories (empty: any).
    pub categories: Vec<Category>,
    /// At most this many, best match first.
    pub limit: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_validated_with_advice() {
        let ok: MemoryInput = serde_json::from_str(
            r#"{"text":" pg_dump locks billing ","categories":["Gotcha","process","gotchas"],"confidence":0.9,"source":"inc-42"}"#,
        )
        .unwrap();
        let m = ok.validate(7).unwrap();
        assert_eq!(m.text, "pg_dump locks billing");
        assert_eq!(m.categories, vec![Category::Process, Category::Gotchas]);
        assert_eq!(m.created_ms, 7);
        let bad = |j: &str| {
            serde_json::from_str::<MemoryInput>(j)
                .map_err(|e| e.to_string())
                .and_then(|i| i.validate(0))
                .unwrap_err()
        };
        assert!(bad(r#"{"confidence":0.5}"#).contains("no text"));
        assert!(bad(r#"{"text":"x"}"#).contains("no confidence"));
        assert!(bad(r#"{"text":"x","confidence":1.5}"#).contains("out of range"));
        assert!(bad(r#"{"text":"x","confidence":0.5,"categories":["misc"]}"#).contains("unknown"));
        assert!(bad(r#"{"text":"x","confidence":0.5,"colour":1}"#).contains("unknown field"));
        let none: MemoryInput = serde_json::from_str(r#"{"text":"x","confidence":0}"#).unwrap();
        assert_eq!(
            none.validate(0).unwrap().categories,
            vec![Category::General]
        );
    }
}
