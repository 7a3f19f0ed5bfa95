//! Telegram's webhook updates. The Bot API signs nothing per request: the
//! only proof of origin is the secret token set with `setWebhook`, echoed
//! in a header, so it is compared in constant time and the callback
//! query's id is put through the replay guard.

use crate::replay::ReplayGuard;
use crate::vote::{CallbackError, ChannelVote, approval_id, first_use, malformed};
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

/// The header carrying the webhook's secret token.
pub const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";
/// How long a callback query id is remembered: Telegram gives no
/// timestamp to bound it, and a day is long past any pending approval.
const KEEP_SECS: i64 = 86_400;

/// Checks the `X-Telegram-Bot-Api-Secret-Token` header (`None` when
/// absent) against the secret given to `setWebhook`. The comparison is of
/// SHA-256 digests in constant time, so neither the content nor the length
/// of the secret shows in the timing.
pub fn verify_webhook(expected_secret: &str, header: Option<&str>) -> Result<(), CallbackError> {
    if expected_secret.is_empty() {
        return Err(CallbackError::Misconfigured {
            detail: "the Telegram webhook secret is empty; set one with setWebhook's secret_token"
                .into(),
        });
    }
    let given = header.ok_or(CallbackError::MissingHeader {
        header: SECRET_HEADER,
    })?;
    let a = Sha256::digest(expected_secret.as_bytes());
    let b = Sha256::digest(given.as_bytes());
    if !crate::crypto::ct_eq(&a, &b) {
        return Err(CallbackError::BadSignature {
            what: "secret token",
        });
    }
    Ok(())
}

/// Reads a verified update as a vote: its `callback_query` with data
/// `a:<approval id>` or `d:<approval id>`. Other updates (messages, other
/// buttons) are [`CallbackError::NotAVote`]. Call it only after
/// [`verify_webhook`], or use [`accept`].
pub fn parse_update(json: &[u8]) -> Result<ChannelVote, CallbackError> {
    let update: Update = crate::json::from_slice(json)
        .map_err(|e| malformed(format!("the body is not a Telegram update: {e}")))?;
    let Some(query) = update.callback_query else {
        return Err(CallbackError::NotAVote {
            detail: "a Telegram update without a button press".into(),
        });
    };
    if query.id.trim().is_empty() {
        return Err(malformed("the callback query has an empty id"));
    }
    let data = query.data.unwrap_or_default();
    let (approve, id) = match data.split_once(':') {
        Some(("a", id)) => (true, id),
        Some(("d", id)) => (false, id),
        _ => {
            return Err(CallbackError::NotAVote {
                detail: format!(
                    "callback data {:?} is not toolgate's",
                    crate::notice::clip(&data, 64)
                ),
            });
        }
    };
    let id = approval_id(id)?;
    let message = query
        .message
        .ok_or_else(|| malformed("the callback query has no message"))?;
    Ok(ChannelVote {
        kind: "telegram",
        user: query.from.id.to_string(),
        approval_id: id,
        approve,
        message_ref: json!({ "chat_id": message.chat.id, "message_id": message.message_id }),
        replay_key: format!("telegram:{}", query.id),
        ack: json!({ "callback_query_id": query.id }),
    })
}

/// The whole check of one Telegram update: [`verify_webhook`], then
/// [`parse_update`], then `guard` refuses a callback query already used.
pub fn accept(
    expected_secret: &str,
    header: Option<&str>,
    json: &[u8],
    now_secs: i64,
    guard: &dyn ReplayGuard,
) -> Result<ChannelVote, CallbackError> {
    verify_webhook(expected_secret, header)?;
    let vote = parse_update(json)?;
    first_use(guard, &vote.replay_key, now_secs.saturating_add(KEEP_SECS))?;
    Ok(vote)
}

/// The parts of an update read here.
#[derive(Deserialize)]
struct Update {
    callback_query: Option<CallbackQuery>,
}

#[derive(Deserialize)]
struct CallbackQuery {
    id: String,
    from: User,
    data: Option<String>,
    message: Option<Message>,
}

#[derive(Deserialize)]
struct User {
    id: i64,
}

#[derive(Deserialize)]
struct Message {
    message_id: i64,
    chat: Chat,
}

#[derive(Deserialize)]
struct Chat {
    id: i64,
}
