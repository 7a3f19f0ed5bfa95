//! The daemon proves its answers: a hook (or the MCP proxy) sends a fresh
//! random nonce with its check, and the daemon answers with an Ed25519
//! signature, made with its [`toolgate_gate::DaemonKey`], over that nonce,
//! the request body it judged, the status and decision it answers and the
//! whole response body. The hook verifies it with the public key pinned at
//! install; an answer that does not prove itself is a denial. So a program
//! that took the daemon's address (the daemon down, a port squatted) cannot
//! answer for it, and a proof cannot be replayed onto another call or
//! another nonce.
//!
//! The message signed is [`message`]: one definition, used by both sides.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use toolgate_gate::{DaemonKey, PublicKey};

use crate::api::{BODY_READ_TIMEOUT, MAX_BODY};
use crate::error::ApiError;

/// The request header carrying the caller's nonce (hex).
pub const NONCE_HEADER: &str = "x-toolgate-nonce";
/// The answer header carrying the daemon's signature (128 hex digits).
pub const SIGNATURE_HEADER: &str = "x-toolgate-signature";
/// Bytes of randomness in a nonce the CLI sends.
pub const NONCE_BYTES: usize = 16;
/// What a signed message starts with: the scheme and its version, so a
/// signature made for anything else the key signs can never pass as one.
const DOMAIN: &str = "toolgate-daemon-answer/v1";

/// Whether `nonce` is acceptable: 32 to 128 hex digits.
pub fn valid_nonce(nonce: &str) -> bool {
    (32..=128).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The bytes the daemon signs for one answer: the domain, the nonce, the
/// SHA-256 of the request body as received, the status, the decision
/// (`allow`, `block`, `escalate`; empty for an answer that carries none)
/// and the SHA-256 of the response body, one per line.
pub fn message(nonce: &str, request: &[u8], status: u16, decision: &str, body: &[u8]) -> Vec<u8> {
    format!(
        "{DOMAIN}\n{nonce}\n{}\n{status}\n{decision}\n{}\n",
        toolgate_core::hex(&Sha256::digest(request)),
        toolgate_core::hex(&Sha256::digest(body))
    )
    .into_bytes()
}

/// Why an answer did not prove it came from the pinned daemon.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// No signature header at all.
    #[error(
        "the answer carries no signature: whatever answered is not a toolgate daemon that holds \
         the pinned key (an old daemon, or another program on its address)"
    )]
    Missing,
    /// A signature that does not verify for this nonce, request and answer.
    #[error(
        "the answer's signature does not verify with the pinned daemon key: another program \
         answered on the daemon's address, the daemon's key changed (pin the new one with \
         toolgate install), or the answer was altered or replayed"
    )]
    Bad,
}

/// Checks the daemon's `signature` over an answer to the request `request`
/// sent with `nonce`: `status`, `decision` (as the caller read it from
/// `body`) and `body`. `Ok` only when the pinned `key` signed exactly that.
pub fn verify(
    key: &PublicKey,
    nonce: &str,
    request: &[u8],
    status: u16,
    decision: &str,
    body: &[u8],
    signature: Option<&str>,
) -> Result<(), ProofError> {
    let signature = signature.ok_or(ProofError::Missing)?;
    if key.verify(&message(nonce, request, status, decision, body), signature) {
        Ok(())
    } else {
        Err(ProofError::Bad)
    }
}

/// The `decision` a JSON answer body carries, or `""`.
pub fn decision_of(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("decision")
                .and_then(|d| d.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Middleware: when the request names a nonce, signs the answer (see
/// [`message`]) into [`SIGNATURE_HEADER`]. Requests without one pass
/// untouched, at no cost; a malformed nonce is a 400.
pub async fn sign(State(key): State<Arc<DaemonKey>>, req: Request, next: Next) -> Response {
    let Some(nonce) = req.headers().get(NONCE_HEADER) else {
        return next.run(req).await;
    };
    let nonce = match nonce.to_str() {
        Ok(n) if valid_nonce(n.trim()) => n.trim().to_string(),
        _ => {
            return ApiError::bad_request(format!("{NONCE_HEADER} must be 32 to 128 hex digits"))
                .into_response();
        }
    };
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(BODY_READ_TIMEOUT, axum::body::to_bytes(body, MAX_BODY));
    let request = match read.await {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return ApiError::too_large(format!(
                "the body is larger than {} KiB: send one tool call per request",
                MAX_BODY / 1024
            ))
            .into_response();
        }
        Err(_) => {
            return ApiError::bad_request(format!(
                "the body did not arrive within {} s",
                BODY_READ_TIMEOUT.as_secs()
            ))
            .into_response();
        }
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(request.clone())))
        .await;
    let (mut parts, body) = response.into_parts();
    // Answers here are a Decision or an error: small, and complete once the
    // handler returns (a `?wait` check returns when the wait ends).
    let Ok(body) = axum::body::to_bytes(body, 4 << 20).await else {
        return ApiError::internal("the answer could not be signed").into_response();
    };
    let signed = message(
        &nonce,
        &request,
        parts.status.as_u16(),
        &decision_of(&body),
        &body,
    );
    if let Ok(v) = HeaderValue::from_str(&key.sign(&signed)) {
        parts.headers.insert(SIGNATURE_HEADER, v);
    }
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: &str = "00112233445566778899aabbccddeeff";

    fn signed(key: &DaemonKey, nonce: &str, body: &[u8]) -> String {
        key.sign(&message(nonce, b"{\"tool\":\"exec\"}", 200, "allow", body))
    }

    #[test]
    fn a_proof_holds_only_for_its_nonce_request_status_decision_and_body() {
        let key = DaemonKey::from_seed([3; 32]);
        let public = key.public();
        let body = br#"{"decision":"allow"}"#;
        let req = b"{\"tool\":\"exec\"}".as_slice();
        let sig = signed(&key, NONCE, body);
        assert_eq!(
            verify(&public, NONCE, req, 200, "allow", body, Some(&sig)),
            Ok(())
        );
        // Replayed onto another nonce (a fresh call).
        let other = "ffeeddccbbaa99887766554433221100";
        assert_eq!(
            verify(&public, other, req, 200, "allow", body, Some(&sig)),
            Err(ProofError::Bad)
        );
        // The request it answers is another one.
        assert_eq!(
            verify(&public, NONCE, b"{}", 200, "allow", body, Some(&sig)),
            Err(ProofError::Bad)
        );
        // The decision or the body altered.
        assert_eq!(
            verify(&public, NONCE, req, 200, "block", body, Some(&sig)),
            Err(ProofError::Bad)
        );
        let altered = br#"{"decision":"allow","reason":"x"}"#;
        assert_eq!(
            verify(&public, NONCE, req, 200, "allow", altered, Some(&sig)),
            Err(ProofError::Bad)
        );
        assert_eq!(
            verify(&public, NONCE, req, 500, "allow", body, Some(&sig)),
            Err(ProofError::Bad)
        );
        // Missing, junk, or another key's signature.
        assert_eq!(
            verify(&public, NONCE, req, 200, "allow", body, None),
            Err(ProofError::Missing)
        );
        assert_eq!(
            verify(&public, NONCE, req, 200, "allow", body, Some("00")),
            Err(ProofError::Bad)
        );
        let stranger = DaemonKey::from_seed([4; 32]);
        let forged = signed(&stranger, NONCE, body);
        assert_eq!(
            verify(&public, NONCE, req, 200, "allow", body, Some(&forged)),
            Err(ProofError::Bad)
        );
    }

    #[test]
    fn nonces_are_hex_of_a_sane_length() {
        assert!(valid_nonce(NONCE));
        assert!(valid_nonce(&"a".repeat(128)));
        assert!(!valid_nonce(&"a".repeat(31)));
        assert!(!valid_nonce(&"a".repeat(129)));
        assert!(!valid_nonce(&format!("{}g", &NONCE[1..])));
        assert!(!valid_nonce(""));
    }

    #[test]
    fn the_decision_is_read_from_the_body() {
        assert_eq!(decision_of(br#"{"decision":"block","x":1}"#), "block");
        assert_eq!(decision_of(br#"{"error":{}}"#), "");
        assert_eq!(decision_of(b"not json"), "");
    }
}
