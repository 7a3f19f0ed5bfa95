//! Discord's interaction callbacks: an Ed25519 signature over timestamp
//! and body by the application's public key, then a PING or a button
//! press. Discord itself sends badly signed requests now and then to check
//! that the endpoint refuses them.

use super::{APPROVE_PREFIX, DENY_PREFIX, is_snowflake};
use crate::crypto::unhex;
use crate::replay::ReplayGuard;
use crate::vote::{
    CallbackError, ChannelVote, Inbound, approval_id, first_use, fresh, malformed, parse_timestamp,
};
use ed25519_dalek::{Signature, VerifyingKey};
use serde::Deserialize;
use serde_json::{Value, json};

/// The header carrying the hex Ed25519 signature.
pub const SIGNATURE_HEADER: &str = "x-signature-ed25519";
/// The header carrying the signed timestamp (Unix seconds).
pub const TIMESTAMP_HEADER: &str = "x-signature-timestamp";
/// How far the timestamp may be from now. Discord's signature covers the
/// timestamp but Discord checks no window itself; five minutes, as Slack.
pub const WINDOW_SECS: i64 = 300;

/// The application's public key from hex (64 characters, from the
/// Developer Portal's General Information page).
pub fn parse_public_key(public_key_hex: &str) -> Result<VerifyingKey, CallbackError> {
    let misconfigured = || CallbackError::Misconfigured {
        detail: "the Discord public key is not 64 hex characters of an Ed25519 key; copy it \
                 from the application's General Information page"
            .into(),
    };
    let bytes: [u8; 32] = unhex(public_key_hex.trim())
        .and_then(|b| b.try_into().ok())
        .ok_or_else(misconfigured)?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| misconfigured())
}

/// Checks an interaction request: the timestamp is within [`WINDOW_SECS`]
/// of `now_secs`, and the signature verifies (strictly) over
/// `timestamp ‖ raw_body` under the public key. Pass the headers as
/// received (`None` when absent) and the body exactly as received.
pub fn verify(
    public_key_hex: &str,
    signature: Option<&str>,
    timestamp: Option<&str>,
    raw_body: &[u8],
    now_secs: i64,
) -> Result<(), CallbackError> {
    let key = parse_public_key(public_key_hex)?;
    let signature = signature.ok_or(CallbackError::MissingHeader {
        header: SIGNATURE_HEADER,
    })?;
    let timestamp = timestamp.ok_or(CallbackError::MissingHeader {
        header: TIMESTAMP_HEADER,
    })?;
    let ts = parse_timestamp(timestamp.trim())?;
    fresh(ts, now_secs, WINDOW_SECS)?;
    let bad = || CallbackError::BadSignature { what: "signature" };
    let sig: [u8; 64] = unhex(signature.trim())
        .and_then(|b| b.try_into().ok())
        .ok_or_else(bad)?;
    let mut message = Vec::with_capacity(timestamp.len() + raw_body.len());
    message.extend_from_slice(timestamp.trim().as_bytes());
    message.extend_from_slice(raw_body);
    key.verify_strict(&message, &Signature::from_bytes(&sig))
        .map_err(|_| bad())
}

/// Reads a verified interaction: type 1 is [`Inbound::Ping`]; type 3 on
/// one of toolgate's buttons is a vote. Anything else is
/// [`CallbackError::NotAVote`] or [`CallbackError::Malformed`]. Call it
/// only after [`verify`], or use [`accept`].
pub fn parse_interaction(json: &[u8]) -> Result<Inbound, CallbackError> {
    let i: Interaction = crate::json::from_slice(json)
        .map_err(|e| malformed(format!("the body is not a Discord interaction: {e}")))?;
    match i.kind {
        1 => return Ok(Inbound::Ping),
        3 => {}
        other => {
            return Err(CallbackError::NotAVote {
                detail: format!("a Discord interaction of type {other}"),
            });
        }
    }
    let id = i.id.filter(|id| is_snowflake(id));
    let id = id.ok_or_else(|| malformed("the interaction has no id"))?;
    let custom_id = i.data.and_then(|d| d.custom_id).unwrap_or_default();
    let (approve, approval) = match custom_id.split_once(':') {
        Some((APPROVE_PREFIX, rest)) => (true, rest),
        Some((DENY_PREFIX, rest)) => (false, rest),
        _ => {
            return Err(CallbackError::NotAVote {
                detail: format!(
                    "the button {:?} is not toolgate's",
                    crate::notice::clip(&custom_id, 64)
                ),
            });
        }
    };
    let approval = approval_id(approval)?;
    // In a server the presser is `member.user`; in a DM, `user`.
    let user = i
        .member
        .and_then(|m| m.user)
        .or(i.user)
        .map(|u| u.id)
        .filter(|u| is_snowflake(u))
        .ok_or_else(|| malformed("the interaction has no user id"))?;
    let message = i
        .message
        .ok_or_else(|| malformed("the interaction has no message"))?;
    let channel = i
        .channel_id
        .or(message.channel_id)
        .ok_or_else(|| malformed("the interaction has no channel_id"))?;
    Ok(Inbound::Vote(Box::new(ChannelVote {
        kind: "discord",
        user,
        approval_id: approval,
        approve,
        message_ref: json!({ "channel_id": channel, "message_id": message.id }),
        replay_key: format!("discord:{id}"),
        ack: json!({ "interaction_id": id }),
    })))
}

/// The whole check of one Discord interaction: [`verify`], then
/// [`parse_interaction`], then `guard` refuses an interaction id already
/// used (PINGs included).
pub fn accept(
    public_key_hex: &str,
    signature: Option<&str>,
    timestamp: Option<&str>,
    raw_body: &[u8],
    now_secs: i64,
    guard: &dyn ReplayGuard,
) -> Result<Inbound, CallbackError> {
    verify(public_key_hex, signature, timestamp, raw_body, now_secs)?;
    let inbound = parse_interaction(raw_body)?;
    let key = match &inbound {
        Inbound::Vote(vote) => vote.replay_key.clone(),
        Inbound::Ping => {
            let id: Option<String> = serde_json::from_slice::<Interaction>(raw_body)
                .ok()
                .and_then(|i| i.id);
            format!("discord:{}", id.unwrap_or_default())
        }
    };
    first_use(guard, &key, now_secs.saturating_add(WINDOW_SECS))?;
    Ok(inbound)
}

/// The answer to a PING: `{"type": 1}`.
pub fn pong() -> Value {
    json!({ "type": 1 })
}

/// The answer to an accepted button press: type 6, "deferred update",
/// which stops Discord's spinner and leaves the message to be edited when
/// the approval resolves.
pub fn ack_update() -> Value {
    json!({ "type": 6 })
}

/// An answer only the presser sees (a refused vote, a vote counted while
/// more are needed): type 4 with the ephemeral flag.
pub fn ephemeral(text: &str) -> Value {
    json!({
        "type": 4,
        "data": {
            "content": crate::notice::clip(text, 2000),
            "flags": 64,
            "allowed_mentions": { "parse": [] },
        },
    })
}

/// The parts of an interaction read here.
#[derive(Deserialize)]
struct Interaction {
    #[serde(rename = "type")]
    kind: u8,
    id: Option<String>,
    channel_id: Option<String>,
    data: Option<Data>,
    member: Option<Member>,
    user: Option<User>,
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Data {
    custom_id: Option<String>,
}

#[derive(Deserialize)]
struct Member {
    user: Option<User>,
}

#[derive(Deserialize)]
struct User {
    id: String,
}

#[derive(Deserialize)]
struct Message {
    id: String,
    channel_id: Option<String>,
}
