//! The daemon proves its `/v1/check` answers to a caller that sends a
//! nonce: the signature verifies with the daemon's key for that nonce, the
//! request body sent and the answer received, and for nothing else; a
//! caller sending none gets no signature; a malformed nonce is refused.

use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::paths::Env;
use toolgate_gate::{DaemonKey, SystemClock};
use toolgate_server::proof::{self, NONCE_HEADER, SIGNATURE_HEADER};
use toolgate_server::{Listening, PolicySource, Server, ServerConfig, Tokens};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

const AGENT: &str = "agent-token-for-proof-tests-0123456789";
const OPERATOR: &str = "operator-token-for-proof-tests-0123456789";

async fn start(dir: &std::path::Path, key: DaemonKey) -> String {
    let store = Arc::new(SqliteStore::open(&dir.join("state"), SyncMode::Normal).unwrap());
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        store,
        clock: Arc::new(SystemClock),
        tokens: Tokens::new(AGENT, OPERATOR).unwrap(),
        policy: PolicySource {
            loader: Arc::new(|| toolgate_bundle::builtin().map_err(|e| e.to_string())),
        },
        base: Env::new("/home/t", "/home/t/proj"),
        link_key: None,
    };
    let listening = Listening {
        daemon_key: Some(key),
        ..Listening::default()
    };
    let server = Server::bind_with(config, listening).await.unwrap();
    let url = format!("http://{}", server.local_addr().unwrap());
    tokio::spawn(server.run(std::future::pending()));
    url
}

#[tokio::test]
async fn answers_are_signed_for_the_nonce_the_request_and_the_decision() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let public = DaemonKey::from_seed([11; 32]).public();
    let url = start(dir.path(), DaemonKey::from_seed([11; 32])).await;
    let http = reqwest::Client::new();
    let nonce = "0123456789abcdef0123456789abcdef";
    for (cmd, want) in [
        ("ls", "allow"),
        ("rm -rf /", "block"),
        ("git push origin main", "escalate"),
    ] {
        let body =
            json!({"tool": "exec", "params": {"command": cmd}, "cwd": "/home/t/proj"}).to_string();
        let r = http
            .post(format!("{url}/v1/check"))
            .bearer_auth(AGENT)
            .header(NONCE_HEADER, nonce)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let sig = r
            .headers()
            .get(SIGNATURE_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let answer = r.bytes().await.unwrap();
        let v: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(v["decision"], want, "{cmd}: {v}");
        assert_eq!(
            proof::verify(
                &public,
                nonce,
                body.as_bytes(),
                200,
                want,
                &answer,
                sig.as_deref()
            ),
            Ok(()),
            "{cmd}"
        );
        // Not for another nonce, request or decision.
        let other = "ffffffffffffffffffffffffffffffff";
        assert!(
            proof::verify(
                &public,
                other,
                body.as_bytes(),
                200,
                want,
                &answer,
                sig.as_deref()
            )
            .is_err()
        );
        assert!(proof::verify(&public, nonce, b"{}", 200, want, &answer, sig.as_deref()).is_err());
        assert!(
            proof::verify(
                &public,
                nonce,
                body.as_bytes(),
                200,
                "allow",
                b"{}",
                sig.as_deref()
            )
            .is_err()
        );
    }
    // No nonce: no signature (and no signing work).
    let r = http
        .post(format!("{url}/v1/check"))
        .bearer_auth(AGENT)
        .body(json!({"tool": "exec", "params": {"command": "ls"}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get(SIGNATURE_HEADER).is_none());
    // A malformed nonce is refused.
    let r = http
        .post(format!("{url}/v1/check"))
        .bearer_auth(AGENT)
        .header(NONCE_HEADER, "not-hex")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // A refused token is signed too (the status is part of what is signed).
    let r = http
        .post(format!("{url}/v1/check"))
        .bearer_auth("wrong-token-0123456789")
        .header(NONCE_HEADER, nonce)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let sig = r
        .headers()
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let answer = r.bytes().await.unwrap();
    assert_eq!(
        proof::verify(&public, nonce, b"{}", 401, "", &answer, sig.as_deref()),
        Ok(())
    );
}
