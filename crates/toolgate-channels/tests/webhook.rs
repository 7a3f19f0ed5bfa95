//! The signed webhook against a local receiver.

mod common;

use common::{Fake, Reply, assert_clean, closed_base, notice, now_secs};
use reqwest::header::{HeaderMap, HeaderValue};
use std::time::Duration;
use toolgate_channels::webhook::{self, DEFAULT_TOLERANCE_SECS};
use toolgate_channels::{
    CallbackError, Channel, ClientOptions, DeliveryError, MemoryReplayGuard, Resolution,
    WebhookChannel,
};

const SECRET: &str = "whsec-0123456789-abcdef-SECRET";
const QUERY_TOKEN: &str = "qtok-SHOULD-NOT-LEAK";

fn channel(base: &str, timeout_ms: u64) -> WebhookChannel {
    let options = ClientOptions {
        api_base: None,
        timeout: Duration::from_millis(timeout_ms),
    };
    WebhookChannel::new(
        &format!("{base}/hooks/toolgate?token={QUERY_TOKEN}"),
        SECRET,
        &options,
    )
    .unwrap()
}

fn headers_of(seen: &common::Seen) -> HeaderMap {
    let mut map = HeaderMap::new();
    for name in [
        webhook::TIMESTAMP_HEADER,
        webhook::DELIVERY_HEADER,
        webhook::SIGNATURE_HEADER,
    ] {
        if let Some(v) = seen.headers.get(name) {
            map.insert(name, v.clone());
        }
    }
    map
}

#[tokio::test]
async fn delivers_a_signed_event_the_receiver_can_verify() {
    let fake = Fake::start(Reply::text(204, "")).await;
    let ch = channel(&fake.base, 2000);
    assert_eq!(ch.kind(), "webhook");
    assert!(ch.target().ends_with("/hooks/toolgate"));
    assert_clean(&ch.target(), &[QUERY_TOKEN]);
    let delivered = ch.deliver(&notice()).await.unwrap();

    let seen = fake.only();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/hooks/toolgate");
    assert_eq!(seen.header("content-type"), Some("application/json"));
    let body = seen.json();
    assert_eq!(body["type"], "approval.requested");
    assert_eq!(body["approval"]["approval_id"], common::APPROVAL);
    assert_eq!(body["approval"]["need"], 2);
    assert!(body["resolution"].is_null());
    assert_eq!(body["delivery"], delivered.message_ref["delivery"]);
    assert_eq!(
        seen.header(webhook::DELIVERY_HEADER),
        body["delivery"].as_str()
    );

    let headers = headers_of(&seen);
    let verified = webhook::verify(
        SECRET,
        &headers,
        &seen.body,
        now_secs(),
        DEFAULT_TOLERANCE_SECS,
    )
    .unwrap();
    assert_eq!(verified.delivery, body["delivery"].as_str().unwrap());
    // The signature is exactly HMAC(secret, "{ts}.{body}").
    assert_eq!(
        seen.header(webhook::SIGNATURE_HEADER).unwrap(),
        webhook::signature(SECRET, verified.timestamp, &seen.body)
    );
}

#[tokio::test]
async fn resolution_posts_an_approval_resolved_event() {
    let fake = Fake::start(Reply::text(200, "ok")).await;
    let ch = channel(&fake.base, 2000);
    let delivered = ch.deliver(&notice()).await.unwrap();
    let resolution = Resolution::Denied {
        by: "alice".into(),
        reason: Some("not today".into()),
    };
    ch.resolved(&delivered, &notice(), &resolution)
        .await
        .unwrap();
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    let body = seen[1].json();
    assert_eq!(body["type"], "approval.resolved");
    assert_eq!(body["resolution"]["outcome"], "denied");
    assert_eq!(body["resolution"]["by"], "alice");
    // A new delivery id per send.
    assert_ne!(body["delivery"], seen[0].json()["delivery"]);
    webhook::verify(
        SECRET,
        &headers_of(&seen[1]),
        &seen[1].body,
        now_secs(),
        300,
    )
    .unwrap();
}

#[tokio::test]
async fn tampered_stale_unsigned_and_replayed_requests_are_refused() {
    let fake = Fake::start(Reply::text(200, "")).await;
    channel(&fake.base, 2000).deliver(&notice()).await.unwrap();
    let seen = fake.only();
    let headers = headers_of(&seen);
    let now = now_secs();

    let mut body = seen.body.clone();
    body[10] ^= 1;
    assert_eq!(
        webhook::verify(SECRET, &headers, &body, now, 300),
        Err(CallbackError::BadSignature { what: "signature" })
    );
    assert!(matches!(
        webhook::verify("another-secret-entirely", &headers, &seen.body, now, 300),
        Err(CallbackError::BadSignature { .. })
    ));
    assert!(matches!(
        webhook::verify(SECRET, &headers, &seen.body, now + 301, 300),
        Err(CallbackError::Stale { .. })
    ));
    let mut unsigned = headers.clone();
    unsigned.remove(webhook::SIGNATURE_HEADER);
    assert_eq!(
        webhook::verify(SECRET, &unsigned, &seen.body, now, 300),
        Err(CallbackError::MissingHeader {
            header: webhook::SIGNATURE_HEADER
        })
    );
    // A signature made for another timestamp does not carry over.
    let mut moved = headers.clone();
    moved.insert(
        webhook::TIMESTAMP_HEADER,
        HeaderValue::from_str(&(now + 1).to_string()).unwrap(),
    );
    assert!(webhook::verify(SECRET, &moved, &seen.body, now, 300).is_err());

    let guard = MemoryReplayGuard::default();
    webhook::accept(SECRET, &headers, &seen.body, now, 300, &guard).unwrap();
    assert_eq!(
        webhook::accept(SECRET, &headers, &seen.body, now, 300, &guard),
        Err(CallbackError::Replayed)
    );
}

#[tokio::test]
async fn rotation_accepts_any_listed_signature() {
    let body = br#"{"type":"approval.requested"}"#;
    let now = now_secs();
    let mut headers = HeaderMap::new();
    headers.insert(webhook::TIMESTAMP_HEADER, now.to_string().parse().unwrap());
    headers.insert(webhook::DELIVERY_HEADER, "abc123".parse().unwrap());
    let old = webhook::signature("old-secret-0123456789", now, body);
    let new = webhook::signature(SECRET, now, body);
    headers.insert(
        webhook::SIGNATURE_HEADER,
        format!("{old}, {new}").parse().unwrap(),
    );
    assert!(webhook::verify(SECRET, &headers, body, now, 300).is_ok());
    headers.insert(webhook::SIGNATURE_HEADER, old.parse().unwrap());
    assert!(webhook::verify(SECRET, &headers, body, now, 300).is_err());
}

#[tokio::test]
async fn failures_are_classified_and_never_show_secrets() {
    let fake = Fake::start(Reply::text(200, "")).await;
    fake.script([
        Reply::Slow(Duration::from_secs(3)),
        Reply::text(500, "boom"),
        Reply::Raw(429, vec![("retry-after", "7".into())], String::new()),
        Reply::text(400, &format!("bad {SECRET}")),
        Reply::text(404, ""),
    ]);
    let ch = channel(&fake.base, 300);
    let mut errors = Vec::new();
    for _ in 0..5 {
        errors.push(ch.deliver(&notice()).await.unwrap_err());
    }
    assert!(matches!(errors[0], DeliveryError::Timeout { .. }));
    assert!(matches!(errors[1], DeliveryError::Server { .. }));
    assert_eq!(errors[2].retry_after(), Some(Duration::from_secs(7)));
    assert!(matches!(errors[3], DeliveryError::Refused { .. }));
    assert!(matches!(errors[4], DeliveryError::Refused { .. }));
    for (i, e) in errors.iter().enumerate() {
        assert_eq!(e.is_retryable(), i < 3, "{e}");
        assert_clean(&e.to_string(), &[SECRET, QUERY_TOKEN]);
        assert_clean(&format!("{e:?}"), &[SECRET, QUERY_TOKEN]);
    }

    let down = channel(&closed_base().await, 300);
    let e = down.deliver(&notice()).await.unwrap_err();
    assert!(matches!(e, DeliveryError::Connection { .. }), "{e}");
    assert!(e.is_retryable());
    assert_clean(&e.to_string(), &[SECRET, QUERY_TOKEN]);
    assert_clean(&format!("{down:?}"), &[SECRET, QUERY_TOKEN]);
}

#[test]
fn weak_secrets_and_credentialed_urls_are_refused() {
    let o = ClientOptions::default();
    let e = WebhookChannel::new("https://h.invalid/x", "short", &o).unwrap_err();
    assert!(e.to_string().contains("shorter than 16"), "{e}");
    assert_clean(&e.to_string(), &["short\""]);
    assert!(WebhookChannel::new("https://u:p@h.invalid/x", SECRET, &o).is_err());
    assert!(WebhookChannel::new("file:///etc/passwd", SECRET, &o).is_err());
}
