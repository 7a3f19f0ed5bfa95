//! What an approval is bound to, and how approvals are named.

use crate::hex::{hex, unhex};
use crate::model::ToolCall;
use crate::paths::Env;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fmt;

/// SHA-256 over the RFC 8785 canonical JSON of `{tool, params, scope}`,
/// where scope is `{agent, session, cwd, home, workspace}`: who asked, and
/// the environment the call was judged in (absent fields are `null`).
///
/// Every nested key and value counts; key order and whitespace do not. The
/// scope keeps an approval given in one session or directory from unlocking
/// the same words somewhere else (`rm -rf build` in another checkout), even
/// when the call itself names no directory and the gate's own is used.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BindingHash(pub [u8; 32]);

/// Computes the binding hash of a call. Always hashes the call as the agent
/// sent it (never a redacted copy).
///
/// RFC 8785 writes every number as an IEEE double, which would make two
/// integers beyond 2^53 (chat and snowflake ids) hash alike. Such integers
/// are hashed by their exact digits instead: written as strings, with the
/// JSON pointers of where they were listed beside the params, so they still
/// differ from a string holding the same digits.
pub fn binding_hash(call: &ToolCall, env: &Env) -> BindingHash {
    let (params, big) = exact_integers(&Value::Object(call.params.clone()));
    let mut subject = json!({
        "tool": call.tool,
        "params": params,
        "scope": {
            "agent": call.agent,
            "session": call.session,
            "cwd": env.cwd,
            "home": env.home,
            "workspace": env.workspace,
        },
    });
    if !big.is_empty() {
        subject["big_integers"] = json!(big);
    }
    // Serializing a `Value` cannot fail: its keys are strings and its numbers
    // are already finite.
    let canonical = serde_json_canonicalizer::to_vec(&subject).unwrap_or_default();
    BindingHash(Sha256::digest(&canonical).into())
}

/// Integers a double cannot hold exactly (beyond ±2^53).
fn is_big_integer(n: &serde_json::Number) -> bool {
    const EXACT: u64 = 1 << 53;
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u > EXACT,
        (None, Some(i)) => i.unsigned_abs() > EXACT,
        _ => false,
    }
}

/// The first number in `v` that no approval can be bound to exactly: a
/// floating-point value that is a whole number of magnitude 2^53 or more
/// (an integer too large for 64 bits, or written in exponent form), where
/// many different texts read as the same double. `None` when there is none.
pub fn unbindable_number(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            (f.fract() == 0.0 && f.abs() >= 9_007_199_254_740_992.0).then(|| n.to_string())
        }
        Value::Array(items) => items.iter().find_map(unbindable_number),
        Value::Object(m) => m.values().find_map(unbindable_number),
        _ => None,
    }
}

/// A copy of `v` with every integer beyond ±2^53 replaced by its exact
/// decimal string, and the JSON pointers (RFC 6901) of those places in
/// document order. Canonical JSON of the copy loses nothing.
pub(crate) fn exact_integers(v: &Value) -> (Value, Vec<String>) {
    fn walk(v: &Value, path: &mut String, out: &mut Vec<String>) -> Value {
        match v {
            Value::Number(n) if is_big_integer(n) => {
                out.push(path.clone());
                Value::String(n.to_string())
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let len = path.len();
                        path.push_str(&format!("/{i}"));
                        let r = walk(x, path, out);
                        path.truncate(len);
                        r
                    })
                    .collect(),
            ),
            // Keys in sorted order, whatever order the call listed them in:
            // the pointers' order is part of the binding, and the sender
            // chooses the key order.
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort_unstable();
                Value::Object(
                    keys.into_iter()
                        .map(|k| {
                            let len = path.len();
                            path.push('/');
                            path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                            let r = walk(&m[k], path, out);
                            path.truncate(len);
                            (k.clone(), r)
                        })
                        .collect(),
                )
            }
            other => other.clone(),
        }
    }
    let mut out = Vec::new();
    let copy = walk(v, &mut String::new(), &mut out);
    (copy, out)
}

impl BindingHash {
    /// Lowercase hex, 64 characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Parses 64 hex characters.
    pub fn from_hex(s: &str) -> Result<BindingHash, IdError> {
        let mut out = [0u8; 32];
        unhex(s, &mut out).ok_or(IdError::Hash)?;
        Ok(BindingHash(out))
    }
}

impl fmt::Display for BindingHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for BindingHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BindingHash({})", self.to_hex())
    }
}

/// An approval's id: 128 random bits as 32 lowercase hex characters.
///
/// The bits come from the caller (the core has no randomness of its own);
/// the store crate draws them from the operating system. Guessing a live id
/// is as hard as guessing a 128-bit key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApprovalId([u8; 16]);

/// A malformed approval id or hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Not 32 hex characters.
    #[error(
        "not an approval id: ids are 32 hex characters, as printed after TOOLGATE_ESCALATE| \
         or by `toolgate approvals list`"
    )]
    Id,
    /// Not 64 hex characters.
    #[error("not a binding hash: hashes are 64 hex characters")]
    Hash,
}

impl ApprovalId {
    /// The id made of these random bytes.
    pub fn from_random(bytes: [u8; 16]) -> ApprovalId {
        ApprovalId(bytes)
    }

    /// Parses the 32-hex-character form (surrounding whitespace ignored,
    /// either case accepted).
    pub fn parse(s: &str) -> Result<ApprovalId, IdError> {
        let mut out = [0u8; 16];
        unhex(s.trim(), &mut out).ok_or(IdError::Id)?;
        Ok(ApprovalId(out))
    }
}

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl fmt::Debug for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApprovalId({self})")
    }
}

macro_rules! hex_serde {
    ($t:ty, $parse:expr) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}
hex_serde!(ApprovalId, ApprovalId::parse);
hex_serde!(BindingHash, BindingHash::from_hex);
