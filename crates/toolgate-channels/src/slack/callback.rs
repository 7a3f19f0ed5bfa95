//! Slack's interaction callbacks: the v0 request signature, then the
//! `block_actions` payload of a button press.

use super::{APPROVE_ACTION, DENY_ACTION};
use crate::crypto::{ct_eq, hmac_sha256, unhex};
use crate::replay::ReplayGuard;
use crate::vote::{
    CallbackError, ChannelVote, approval_id, first_use, fresh, malformed, parse_timestamp,
};
use serde::Deserialize;
use serde_json::json;

/// The header carrying the request's timestamp.
pub const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";
/// The header carrying the `v0=` signature.
pub const SIGNATURE_HEADER: &str = "x-slack-signature";
/// How far the timestamp may be from now: Slack's documented five minutes.
pub const WINDOW_SECS: i64 = 300;

/// Checks Slack's request signature: `signature` must be `v0=` and the
/// hex HMAC-SHA256 of `v0:{timestamp}:{raw_body}` under the app's signing
/// secret (compared in constant time), and `timestamp` within
/// [`WINDOW_SECS`] of `now_secs`. Pass the headers as received (`None`
/// when absent) and the body exactly as received, before any parsing.
pub fn verify_request(
    signing_secret: &str,
    timestamp: Option<&str>,
    signature: Option<&str>,
    raw_body: &[u8],
    now_secs: i64,
) -> Result<(), CallbackError> {
    if signing_secret.is_empty() {
        return Err(CallbackError::Misconfigured {
            detail:
                "the Slack signing secret is empty; set it from the app's Basic Information page"
                    .into(),
        });
    }
    let timestamp = timestamp.ok_or(CallbackError::MissingHeader {
        header: TIMESTAMP_HEADER,
    })?;
    let signature = signature.ok_or(CallbackError::MissingHeader {
        header: SIGNATURE_HEADER,
    })?;
    let ts = parse_timestamp(timestamp.trim())?;
    fresh(ts, now_secs, WINDOW_SECS)?;
    let given = signature
        .trim()
        .strip_prefix("v0=")
        .and_then(unhex)
        .ok_or(CallbackError::BadSignature { what: "signature" })?;
    let base = format!("v0:{ts}:");
    let expected = hmac_sha256(signing_secret.as_bytes(), &[base.as_bytes(), raw_body]);
    if !ct_eq(&given, &expected) {
        return Err(CallbackError::BadSignature { what: "signature" });
    }
    Ok(())
}

/// Reads a verified interaction body (`application/x-www-form-urlencoded`
/// with a `payload` field of JSON) as a vote. Only `block_actions` presses
/// of toolgate's own buttons are votes; anything else is
/// [`CallbackError::NotAVote`] or [`CallbackError::Malformed`]. Call it
/// only after [`verify_request`], or use [`accept`].
pub fn parse_interaction(raw_body: &[u8]) -> Result<ChannelVote, CallbackError> {
    let mut payloads = form_urlencoded::parse(raw_body).filter(|(k, _)| k == "payload");
    let payload = payloads
        .next()
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| malformed("the body has no `payload` field"))?;
    if payloads.next().is_some() {
        // Which copy counts would depend on the reader.
        return Err(malformed("the body has more than one `payload` field"));
    }
    let p: Payload = crate::json::from_slice(payload.as_bytes())
        .map_err(|e| malformed(format!("the payload is not Slack's interaction JSON: {e}")))?;
    if p.kind != "block_actions" {
        return Err(CallbackError::NotAVote {
            detail: format!("a Slack `{}` interaction", p.kind),
        });
    }
    let action = p
        .actions
        .first()
        .ok_or_else(|| malformed("the payload has no actions"))?;
    let approve = match action.action_id.as_str() {
        APPROVE_ACTION => true,
        DENY_ACTION => false,
        other => {
            return Err(CallbackError::NotAVote {
                detail: format!("the Slack action {:?} is not toolgate's", clip(other)),
            });
        }
    };
    let id = approval_id(action.value.as_deref().unwrap_or_default())?;
    let user = nonempty(p.user.and_then(|u| u.id), "user.id")?;
    let channel = p
        .channel
        .and_then(|c| c.id)
        .or_else(|| p.container.as_ref().and_then(|c| c.channel_id.clone()));
    let channel = nonempty(channel, "channel.id")?;
    let ts = p
        .message
        .and_then(|m| m.ts)
        .or_else(|| p.container.and_then(|c| c.message_ts));
    let ts = nonempty(ts, "message.ts")?;
    // trigger_id is unique per interaction; action_ts with the user is the
    // fallback for payloads without one.
    let unique = match (p.trigger_id, action.action_ts.as_deref()) {
        (Some(t), _) if !t.is_empty() => t,
        (_, Some(a)) if !a.is_empty() => format!("{user}:{a}"),
        _ => {
            return Err(malformed(
                "the payload has neither trigger_id nor action_ts",
            ));
        }
    };
    Ok(ChannelVote {
        kind: "slack",
        user,
        approval_id: id,
        approve,
        message_ref: json!({ "channel": channel, "ts": ts }),
        replay_key: format!("slack:{unique}"),
        ack: json!({ "response_url": p.response_url }),
    })
}

/// The whole check of one Slack callback: [`verify_request`], then
/// [`parse_interaction`], then `guard` refuses a callback already used.
pub fn accept(
    signing_secret: &str,
    timestamp: Option<&str>,
    signature: Option<&str>,
    raw_body: &[u8],
    now_secs: i64,
    guard: &dyn ReplayGuard,
) -> Result<ChannelVote, CallbackError> {
    verify_request(signing_secret, timestamp, signature, raw_body, now_secs)?;
    let vote = parse_interaction(raw_body)?;
    first_use(
        guard,
        &vote.replay_key,
        now_secs.saturating_add(WINDOW_SECS),
    )?;
    Ok(vote)
}

fn nonempty(value: Option<String>, name: &str) -> Result<String, CallbackError> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(malformed(format!("the payload has no {name}"))),
    }
}

fn clip(text: &str) -> String {
    crate::notice::clip(text, 64)
}

/// The parts of a `block_actions` payload read here; Slack sends many
/// more, which are ignored.
#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type")]
    kind: String,
    user: Option<Id>,
    #[serde(default)]
    actions: Vec<Action>,
    channel: Option<Id>,
    message: Option<Message>,
    container: Option<Container>,
    response_url: Option<String>,
    trigger_id: Option<String>,
}

#[derive(Deserialize)]
struct Id {
    id: Option<String>,
}

#[derive(Deserialize)]
struct Action {
    action_id: String,
    value: Option<String>,
    action_ts: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    ts: Option<String>,
}

#[derive(Deserialize)]
struct Container {
    channel_id: Option<String>,
    message_ts: Option<String>,
}
