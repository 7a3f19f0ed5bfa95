//! Signed approve/deny links, for email or any channel without buttons.
//!
//! A token is `base64url(payload) "." base64url(HMAC-SHA256(key,
//! "toolgate-link-v1." base64url(payload)))`, the payload a small JSON
//! object naming the approval, the operator, the action, the expiry and a
//! random nonce. It is a bearer credential for one vote by one operator:
//! whoever holds it can cast that vote, once, until it expires.
//!
//! Serving one: on GET show a confirmation page and do not vote, because
//! mail scanners and link previews fetch every link they see; vote only on
//! the POST from that page. Before voting, pass
//! [`LinkClaims::replay_key`] through a [`crate::ReplayGuard`] (kept until
//! [`LinkClaims::expires_at_secs`]) so each link votes at most once.

use crate::crypto::{ct_eq, hmac_sha256, is_approval_id, random_hex};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The shortest key accepted, in bytes.
pub(crate) const MIN_KEY_LEN: usize = 32;
/// The longest token looked at; real ones are about 250 characters.
const MAX_TOKEN_LEN: usize = 1024;
/// Domain separation: a MAC made for anything else never verifies here.
const CONTEXT: &[u8] = b"toolgate-link-v1.";

/// What a link does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkAction {
    /// Vote to approve.
    Approve,
    /// Vote to deny.
    Deny,
}

/// What a verified token grants. Only ever made by [`LinkSigner::verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkClaims {
    /// The approval, 32 lowercase hex characters.
    #[serde(rename = "a")]
    pub approval_id: String,
    /// The operator the vote is cast as.
    #[serde(rename = "o")]
    pub operator: String,
    /// Approve or deny.
    #[serde(rename = "x")]
    pub action: LinkAction,
    /// When the link stops working, Unix seconds.
    #[serde(rename = "e")]
    pub expires_at_secs: i64,
    /// 16 random bytes as hex: what makes each link single-use.
    #[serde(rename = "n")]
    pub nonce: String,
}

impl LinkClaims {
    /// The key to pass through a [`crate::ReplayGuard`] before voting.
    pub fn replay_key(&self) -> String {
        format!("link:{}", self.nonce)
    }
}

/// Why a link was refused. Never a vote; messages hold nothing secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// The signing key is too short to resist guessing.
    #[error(
        "the link signing key is {0} bytes; use at least {MIN_KEY_LEN} random bytes (e.g. \
         `openssl rand -hex 32`)"
    )]
    WeakKey(usize),
    /// What was asked to be signed is not signable.
    #[error("cannot sign this link: {0}")]
    BadInput(&'static str),
    /// The token is not a token (truncated in transit, mangled by a mail
    /// client, or made up).
    #[error("the link is malformed ({0}); open it from the original message again")]
    Malformed(&'static str),
    /// The MAC does not match: altered, or signed with another key.
    #[error("the link's signature does not match; it was altered or made with another key")]
    BadSignature,
    /// The link's time is up.
    #[error("the link expired; vote in the dashboard or ask for a new link")]
    Expired,
}

/// Makes and checks signed links under one key.
pub struct LinkSigner {
    key: Vec<u8>,
}

impl fmt::Debug for LinkSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkSigner { key: <set> }")
    }
}

impl LinkSigner {
    /// A signer with `key`, which must be at least 32 bytes (`MIN_KEY_LEN`)
    /// of randomness kept by the daemon alone.
    pub fn new(key: &[u8]) -> Result<LinkSigner, LinkError> {
        if key.len() < MIN_KEY_LEN {
            return Err(LinkError::WeakKey(key.len()));
        }
        Ok(LinkSigner { key: key.to_vec() })
    }

    /// A URL-safe token letting `operator` cast `action` on `approval_id`
    /// once, until `expires_at_secs`.
    pub fn sign(
        &self,
        approval_id: &str,
        operator: &str,
        action: LinkAction,
        expires_at_secs: i64,
    ) -> Result<String, LinkError> {
        if !is_approval_id(approval_id) {
            return Err(LinkError::BadInput(
                "the approval id is not 32 lowercase hex characters",
            ));
        }
        if operator.is_empty() || operator.len() > 128 {
            return Err(LinkError::BadInput(
                "the operator name is empty or over 128 bytes",
            ));
        }
        let claims = LinkClaims {
            approval_id: approval_id.to_string(),
            operator: operator.to_string(),
            action,
            expires_at_secs,
            nonce: random_hex(16),
        };
        let json =
            serde_json::to_vec(&claims).map_err(|_| LinkError::BadInput("unserializable"))?;
        let payload = URL_SAFE_NO_PAD.encode(json);
        let mac = hmac_sha256(&self.key, &[CONTEXT, payload.as_bytes()]);
        Ok(format!("{payload}.{}", URL_SAFE_NO_PAD.encode(mac)))
    }

    /// The claims of `token` if its MAC matches (checked in constant time,
    /// before anything in the payload is read) and it has not expired at
    /// `now_secs`. Does not refuse reuse: see the module docs.
    pub fn verify(&self, token: &str, now_secs: i64) -> Result<LinkClaims, LinkError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(LinkError::Malformed("too long"));
        }
        let (payload, mac) = token
            .split_once('.')
            .ok_or(LinkError::Malformed("no signature part"))?;
        let mac = URL_SAFE_NO_PAD
            .decode(mac)
            .map_err(|_| LinkError::Malformed("the signature is not base64url"))?;
        let expected = hmac_sha256(&self.key, &[CONTEXT, payload.as_bytes()]);
        if !ct_eq(&mac, &expected) {
            return Err(LinkError::BadSignature);
        }
        let json = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| LinkError::Malformed("the payload is not base64url"))?;
        let claims: LinkClaims = serde_json::from_slice(&json)
            .map_err(|_| LinkError::Malformed("the payload is not a link's"))?;
        if !is_approval_id(&claims.approval_id)
            || claims.nonce.len() != 32
            || claims.operator.is_empty()
        {
            return Err(LinkError::Malformed(
                "the payload's fields are out of range",
            ));
        }
        if now_secs >= claims.expires_at_secs {
            return Err(LinkError::Expired);
        }
        Ok(claims)
    }
}
