//! Generic webhook: a signed JSON POST per event, for anything that is not
//! a chat service (a pager, a ticket system, a custom bot).
//!
//! Each request carries `X-Toolgate-Timestamp` (Unix seconds),
//! `X-Toolgate-Delivery` (a random id, new on every send, retries
//! included) and `X-Toolgate-Signature: v1=<hex HMAC-SHA256(secret,
//! "{timestamp}.{body}")>`. Receivers check it with [`verify`] (or
//! [`accept`], which also refuses replays) and should de-duplicate events
//! on `approval.approval_id` and `type`, since a send that timed out may
//! have arrived and is sent again.

use crate::channel::{Channel, ClientOptions, Delivered, DeliveryError};
use crate::config_error::ConfigError;
use crate::crypto::{ct_eq, hex, hmac_sha256, random_hex, unhex};
use crate::http::Http;
use crate::notice::{Notice, Resolution};
use crate::replay::ReplayGuard;
use crate::vote::{CallbackError, fresh, parse_timestamp};
use async_trait::async_trait;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use serde_json::json;
use std::fmt;

/// The timestamp header.
pub const TIMESTAMP_HEADER: &str = "x-toolgate-timestamp";
/// The delivery id header.
pub const DELIVERY_HEADER: &str = "x-toolgate-delivery";
/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-toolgate-signature";
/// How far a timestamp may be from the receiver's clock by default.
pub const DEFAULT_TOLERANCE_SECS: i64 = 300;
/// The shortest secret accepted: shorter ones can be guessed.
pub const MIN_SECRET_LEN: usize = 16;

/// Posts `approval.requested` and `approval.resolved` events to one URL.
pub struct WebhookChannel {
    url: Url,
    target: String,
    secret: String,
    http: Http,
}

impl fmt::Debug for WebhookChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookChannel")
            .field("target", &self.target)
            .field("secret", &"<set>")
            .finish_non_exhaustive()
    }
}

impl WebhookChannel {
    /// A webhook to `url` (http or https, no credentials in it) signing
    /// with `secret` (at least [`MIN_SECRET_LEN`] characters). Only
    /// `options.timeout` applies; the URL is the whole address.
    pub fn new(
        url: &str,
        secret: impl Into<String>,
        options: &ClientOptions,
    ) -> Result<WebhookChannel, ConfigError> {
        let invalid = |detail: String| ConfigError::invalid("webhook", detail);
        let secret = secret.into();
        if secret.chars().count() < MIN_SECRET_LEN {
            return Err(invalid(format!(
                "the secret is shorter than {MIN_SECRET_LEN} characters; generate one with \
                 `openssl rand -hex 32`"
            )));
        }
        let parsed = Url::parse(url).map_err(|e| invalid(format!("url is not a URL ({e})")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid("url must be http or https".into()));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(invalid(
                "url must not carry a user or password; the receiver checks the signature".into(),
            ));
        }
        let target = format!(
            "{}{}",
            parsed.host_str().unwrap_or_default(),
            match parsed.port() {
                Some(port) => format!(":{port}{}", parsed.path()),
                None => parsed.path().to_string(),
            }
        );
        // A query may hold a token of the receiver's; keep it out of
        // errors along with the secret.
        let mut secrets = vec![secret.clone()];
        secrets.extend(parsed.query().map(str::to_string));
        let http =
            Http::new(format!("webhook {target}"), options.timeout, secrets).map_err(invalid)?;
        Ok(WebhookChannel {
            url: parsed,
            target,
            secret,
            http,
        })
    }

    async fn post(
        &self,
        kind: &str,
        notice: &Notice,
        resolution: Option<&Resolution>,
    ) -> Result<String, DeliveryError> {
        let delivery = random_hex(16);
        let now_ms = now_ms();
        let body = json!({
            "type": kind,
            "delivery": delivery,
            "sent_at_ms": now_ms,
            "approval": notice,
            "resolution": resolution,
        })
        .to_string();
        let timestamp = now_ms.div_euclid(1000);
        let request = self
            .http
            .client()
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(DELIVERY_HEADER, delivery.as_str())
            .header(
                SIGNATURE_HEADER,
                signature(&self.secret, timestamp, body.as_bytes()),
            )
            .body(body);
        let answer = self.http.send(request).await?;
        if !answer.status.is_success() {
            // The receiver's body is not read into the error: it is not a
            // known API and might echo what it was sent.
            return Err(self.http.status_error(
                &answer,
                None,
                "check the webhook url and that the receiver accepts the signature",
            ));
        }
        Ok(delivery)
    }
}

#[async_trait]
impl Channel for WebhookChannel {
    fn kind(&self) -> &'static str {
        "webhook"
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    async fn deliver(&self, notice: &Notice) -> Result<Delivered, DeliveryError> {
        let delivery = self.post("approval.requested", notice, None).await?;
        Ok(Delivered {
            kind: "webhook".into(),
            target: self.target.clone(),
            message_ref: json!({ "delivery": delivery }),
        })
    }

    async fn resolved(
        &self,
        _delivered: &Delivered,
        notice: &Notice,
        resolution: &Resolution,
    ) -> Result<(), DeliveryError> {
        self.post("approval.resolved", notice, Some(resolution))
            .await
            .map(drop)
    }
}

/// The `X-Toolgate-Signature` value for `body` sent at `timestamp`:
/// `v1=` and the hex HMAC-SHA256 of `"{timestamp}.{body}"`.
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let prefix = format!("{timestamp}.");
    let mac = hmac_sha256(secret.as_bytes(), &[prefix.as_bytes(), body]);
    format!("v1={}", hex(&mac))
}

/// A webhook request that passed [`verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The sender's delivery id (`X-Toolgate-Delivery`).
    pub delivery: String,
    /// The signed timestamp, Unix seconds.
    pub timestamp: i64,
}

/// Checks a received webhook: the timestamp is within `tolerance_secs` of
/// `now_secs`, and one of the `v1=` signatures (several may be sent,
/// comma-separated, while a secret is rotated) matches `body` under
/// `secret`, compared in constant time. Does not refuse replays: pass
/// [`Verified::delivery`] through a [`ReplayGuard`], or call [`accept`].
pub fn verify(
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
    now_secs: i64,
    tolerance_secs: i64,
) -> Result<Verified, CallbackError> {
    if secret.is_empty() {
        return Err(CallbackError::Misconfigured {
            detail: "the webhook secret is empty".into(),
        });
    }
    let header = |name: &'static str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .ok_or(CallbackError::MissingHeader { header: name })
    };
    let ts_text = header(TIMESTAMP_HEADER)?;
    let delivery = header(DELIVERY_HEADER)?;
    let signatures = header(SIGNATURE_HEADER)?;
    let timestamp = parse_timestamp(ts_text)?;
    fresh(timestamp, now_secs, tolerance_secs)?;
    if delivery.is_empty()
        || delivery.len() > 128
        || !delivery
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    {
        return Err(crate::vote::malformed(
            "the delivery id is not a short token",
        ));
    }
    let prefix = format!("{timestamp}.");
    let expected = hmac_sha256(secret.as_bytes(), &[prefix.as_bytes(), body]);
    // Every candidate is compared, so the time taken does not say which
    // one (if any) matched.
    let mut matched = false;
    for candidate in signatures.split(',').map(str::trim) {
        if let Some(given) = candidate.strip_prefix("v1=").and_then(unhex) {
            matched |= ct_eq(&given, &expected);
        }
    }
    if !matched {
        return Err(CallbackError::BadSignature { what: "signature" });
    }
    Ok(Verified {
        delivery: delivery.to_string(),
        timestamp,
    })
}

/// [`verify`], then refuses a delivery id seen before (kept by `guard`
/// until the timestamp leaves the window).
pub fn accept(
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
    now_secs: i64,
    tolerance_secs: i64,
    guard: &dyn ReplayGuard,
) -> Result<Verified, CallbackError> {
    let verified = verify(secret, headers, body, now_secs, tolerance_secs)?;
    crate::vote::first_use(
        guard,
        &format!("webhook:{}", verified.delivery),
        verified.timestamp.saturating_add(tolerance_secs),
    )?;
    Ok(verified)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
