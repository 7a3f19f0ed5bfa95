//! What comes back from a channel: a person's vote, once its callback has
//! been verified, and every reason a callback is refused instead.

use crate::channel::Delivered;
use crate::crypto::is_approval_id;
use crate::replay::ReplayGuard;
use serde::Serialize;

/// A button press on a channel, verified and parsed.
///
/// `user` is the channel's own id for the person (Slack `U0123`, a
/// Telegram numeric id, a Discord snowflake), not a toolgate operator: the
/// caller maps it to an operator through the operator's registered
/// identity (`slack:U0123`) and refuses votes from unknown users. The
/// caller should also check [`ChannelVote::came_from`] against the
/// [`Delivered`] stored for `approval_id`, because a user of a chat can
/// make their client send any button payload for a message they see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelVote {
    /// The adapter it came through: `"slack"`, `"telegram"` or `"discord"`.
    pub kind: &'static str,
    /// The channel's id for the person who pressed the button.
    pub user: String,
    /// The approval voted on; always 32 lowercase hex characters.
    pub approval_id: String,
    /// `true` to approve, `false` to deny.
    pub approve: bool,
    /// The message the button was on, in the same shape as
    /// [`Delivered::message_ref`].
    pub message_ref: serde_json::Value,
    /// Unique per callback; what was put through the [`ReplayGuard`].
    pub replay_key: String,
    /// What the service needs to acknowledge the press: Slack
    /// `{response_url}`, Telegram `{callback_query_id}`, Discord
    /// `{interaction_id}`.
    pub ack: serde_json::Value,
}

impl ChannelVote {
    /// Whether the vote was cast on the message `delivered` describes
    /// (same adapter, same message).
    pub fn came_from(&self, delivered: &Delivered) -> bool {
        delivered.kind == self.kind && delivered.message_ref == self.message_ref
    }
}

/// A verified callback: a vote, or a service's own liveness check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// Someone pressed Approve or Deny (boxed: a vote is large, a ping is
    /// nothing).
    Vote(Box<ChannelVote>),
    /// Discord's PING; answer with [`crate::discord::pong`].
    Ping,
}

/// Why a callback was refused. Every case is a refusal: nothing here is a
/// vote, and the caller should answer the request with an error status
/// (401 for signature, staleness and replay; 400 otherwise). Messages hold
/// no secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// A header the service always sends is missing.
    #[error(
        "the request has no {header} header, so it cannot be verified; it did not come from \
         the service (or a proxy dropped the header) and is refused"
    )]
    MissingHeader {
        /// The header's name.
        header: &'static str,
    },
    /// The signature or secret token does not match.
    #[error(
        "the {what} does not match; the request is refused. If real button presses fail \
         this way, check the configured signing secret or public key"
    )]
    BadSignature {
        /// What was checked (`"signature"`, `"secret token"`).
        what: &'static str,
    },
    /// The timestamp is outside the allowed window.
    #[error(
        "the request's timestamp is {age_secs} s away from now, outside the {window_secs} s \
         window; it is refused as a possible replay (if this keeps happening, check the clock)"
    )]
    Stale {
        /// How far the timestamp is from now, in seconds.
        age_secs: i64,
        /// The window allowed.
        window_secs: i64,
    },
    /// This exact callback was already accepted once.
    #[error("this callback was already used once; the replay is refused")]
    Replayed,
    /// The body is not what the service sends.
    #[error("the callback is malformed ({detail}); it is refused")]
    Malformed {
        /// What is wrong.
        detail: String,
    },
    /// A well-formed callback that is not a toolgate vote (another app's
    /// button, another interaction type). Answer it with success and
    /// ignore it.
    #[error("not a toolgate vote ({detail}); ignored")]
    NotAVote {
        /// What it was instead.
        detail: String,
    },
    /// The approval id in the payload is not 32 lowercase hex characters.
    #[error("the approval id {id:?} is not 32 lowercase hex characters; the vote is refused")]
    BadApprovalId {
        /// The id as sent, cut short.
        id: String,
    },
    /// The verifier itself is unusable (an empty secret, a bad public key).
    #[error("callbacks cannot be verified: {detail}")]
    Misconfigured {
        /// What to fix.
        detail: String,
    },
}

impl CallbackError {
    /// Whether the request failed authentication (bad or missing
    /// signature, stale, replayed): answer 401 and do not log it as a vote.
    pub fn is_unauthenticated(&self) -> bool {
        matches!(
            self,
            CallbackError::MissingHeader { .. }
                | CallbackError::BadSignature { .. }
                | CallbackError::Stale { .. }
                | CallbackError::Replayed
        )
    }
}

/// `Malformed` with `detail` cut to a readable length.
pub(crate) fn malformed(detail: impl AsRef<str>) -> CallbackError {
    CallbackError::Malformed {
        detail: crate::notice::clip(detail.as_ref(), 200),
    }
}

/// `id` if it is an approval id, else [`CallbackError::BadApprovalId`].
pub(crate) fn approval_id(id: &str) -> Result<String, CallbackError> {
    if is_approval_id(id) {
        Ok(id.to_string())
    } else {
        Err(CallbackError::BadApprovalId {
            id: crate::notice::clip(id, 64),
        })
    }
}

/// A Unix-seconds timestamp of digits only (no sign, no spaces), as the
/// webhook, Slack and Discord signatures cover it.
pub(crate) fn parse_timestamp(text: &str) -> Result<i64, CallbackError> {
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|c| c.is_ascii_digit()) {
        return Err(malformed("the timestamp is not Unix seconds"));
    }
    text.parse()
        .map_err(|_| malformed("the timestamp is not Unix seconds"))
}

/// Refuses `ts` unless it is within `window` seconds of `now` (either
/// side: a timestamp from the future is as suspect as an old one).
pub(crate) fn fresh(ts: i64, now: i64, window: i64) -> Result<(), CallbackError> {
    let age = now.saturating_sub(ts);
    if age.saturating_abs() > window {
        return Err(CallbackError::Stale {
            age_secs: age,
            window_secs: window,
        });
    }
    Ok(())
}

/// Passes `key` through `guard`, refusing a second use.
pub(crate) fn first_use(
    guard: &dyn ReplayGuard,
    key: &str,
    keep_until_secs: i64,
) -> Result<(), CallbackError> {
    if guard.first_use(key, keep_until_secs) {
        Ok(())
    } else {
        Err(CallbackError::Replayed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freshness_refuses_both_directions() {
        assert!(fresh(1000, 1000, 300).is_ok());
        assert!(fresh(700, 1000, 300).is_ok());
        assert!(matches!(
            fresh(699, 1000, 300),
            Err(CallbackError::Stale { age_secs: 301, .. })
        ));
        assert!(fresh(1301, 1000, 300).is_err());
        assert!(fresh(i64::MIN, 1000, 300).is_err());
    }
}
