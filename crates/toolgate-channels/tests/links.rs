//! Signed one-time links.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use toolgate_channels::{LinkAction, LinkError, LinkSigner, MemoryReplayGuard, ReplayGuard};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef-link-key";
const ID: &str = "0123456789abcdef0123456789abcdef";
const NOW: i64 = 1_800_000_000;

fn signer() -> LinkSigner {
    LinkSigner::new(KEY).unwrap()
}

#[test]
fn a_signed_link_verifies_to_its_claims() {
    let token = signer()
        .sign(ID, "alice", LinkAction::Deny, NOW + 600)
        .unwrap();
    assert!(
        token
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')),
        "URL-safe: {token}"
    );
    let claims = signer().verify(&token, NOW).unwrap();
    assert_eq!(claims.approval_id, ID);
    assert_eq!(claims.operator, "alice");
    assert_eq!(claims.action, LinkAction::Deny);
    assert_eq!(claims.expires_at_secs, NOW + 600);
    assert_eq!(claims.nonce.len(), 32);
    assert_eq!(claims.replay_key(), format!("link:{}", claims.nonce));
}

#[test]
fn every_link_has_its_own_nonce_and_is_used_once() {
    let a = signer()
        .sign(ID, "alice", LinkAction::Approve, NOW + 60)
        .unwrap();
    let b = signer()
        .sign(ID, "alice", LinkAction::Approve, NOW + 60)
        .unwrap();
    assert_ne!(a, b);
    let (ca, cb) = (
        signer().verify(&a, NOW).unwrap(),
        signer().verify(&b, NOW).unwrap(),
    );
    assert_ne!(ca.nonce, cb.nonce);
    let guard = MemoryReplayGuard::default();
    assert!(guard.first_use(&ca.replay_key(), ca.expires_at_secs));
    assert!(
        !guard.first_use(&ca.replay_key(), ca.expires_at_secs),
        "second use refused"
    );
    assert!(guard.first_use(&cb.replay_key(), cb.expires_at_secs));
}

#[test]
fn expired_links_are_refused() {
    let token = signer()
        .sign(ID, "alice", LinkAction::Approve, NOW)
        .unwrap();
    assert_eq!(signer().verify(&token, NOW), Err(LinkError::Expired));
    assert_eq!(signer().verify(&token, NOW + 1), Err(LinkError::Expired));
    assert!(signer().verify(&token, NOW - 1).is_ok());
}

#[test]
fn tampered_links_are_refused() {
    let token = signer()
        .sign(ID, "alice", LinkAction::Deny, NOW + 60)
        .unwrap();
    let (payload, mac) = token.split_once('.').unwrap();

    // Turn deny into approve and re-encode: the MAC no longer matches.
    let json = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let forged = URL_SAFE_NO_PAD.encode(json.replace("\"deny\"", "\"approve\""));
    assert_ne!(forged, payload);
    assert_eq!(
        signer().verify(&format!("{forged}.{mac}"), NOW),
        Err(LinkError::BadSignature)
    );
    // Longer expiry, other operator: same.
    let later =
        URL_SAFE_NO_PAD.encode(json.replace(&(NOW + 60).to_string(), &(NOW + 9999).to_string()));
    assert_eq!(
        signer().verify(&format!("{later}.{mac}"), NOW),
        Err(LinkError::BadSignature)
    );
    // A flipped MAC character.
    let mut bad_mac = mac.to_string().into_bytes();
    bad_mac[0] = if bad_mac[0] == b'A' { b'B' } else { b'A' };
    let bad_mac = String::from_utf8(bad_mac).unwrap();
    assert_eq!(
        signer().verify(&format!("{payload}.{bad_mac}"), NOW),
        Err(LinkError::BadSignature)
    );
    // Signed with another key.
    let other = LinkSigner::new(&[7u8; 32]).unwrap();
    assert_eq!(other.verify(&token, NOW), Err(LinkError::BadSignature));
}

#[test]
fn malformed_tokens_and_weak_keys_are_refused() {
    for junk in ["", "nodot", ".", "a.b", "!!!.???", &"x.".repeat(600)] {
        assert!(
            matches!(
                signer().verify(junk, NOW),
                Err(LinkError::Malformed(_) | LinkError::BadSignature)
            ),
            "{junk:?}"
        );
    }
    // A validly signed payload that is not a link's claims.
    let payload = URL_SAFE_NO_PAD.encode(br#"{"a":"x"}"#);
    let mac = {
        use hmac::{Hmac, KeyInit, Mac};
        let mut m = Hmac::<sha2::Sha256>::new_from_slice(KEY).unwrap();
        m.update(b"toolgate-link-v1.");
        m.update(payload.as_bytes());
        URL_SAFE_NO_PAD.encode(m.finalize().into_bytes())
    };
    assert!(matches!(
        signer().verify(&format!("{payload}.{mac}"), NOW),
        Err(LinkError::Malformed(_))
    ));

    assert_eq!(
        LinkSigner::new(b"short").unwrap_err(),
        LinkError::WeakKey(5)
    );
    assert!(
        signer()
            .sign("not-an-id", "alice", LinkAction::Approve, NOW)
            .is_err()
    );
    assert!(signer().sign(ID, "", LinkAction::Approve, NOW).is_err());
    assert!(!format!("{:?}", signer()).contains("0123456789abcdef"));
}
