//! The contract every adapter keeps: deliver a notice, later show how it
//! ended, and fail in a way that says whether trying again can help.

use crate::notice::{Notice, Resolution};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How long one request to a chat service may take when nothing else is
/// configured: long enough for a slow API, short enough that a dead one is
/// noticed and retried while the approval is still pending.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings every adapter's HTTP client shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// The service's API base URL; `None` means the real service's public
    /// one. Tests point it at a local fake.
    pub api_base: Option<String>,
    /// The limit on each request, connect to last body byte.
    pub timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            api_base: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// A place approvals are sent: a webhook, a Slack channel, a Telegram chat
/// or a Discord channel. Implementations are cheap to share as
/// `Arc<dyn Channel>` and hold their secrets privately: no method returns
/// or displays them.
#[async_trait]
pub trait Channel: Send + Sync {
    /// The adapter: `"webhook"`, `"slack"`, `"telegram"` or `"discord"`.
    fn kind(&self) -> &'static str;

    /// Where messages go, in words safe to show and log (a channel id, a
    /// chat id, a URL's host and path); never a token or secret.
    fn target(&self) -> String;

    /// Sends the approval request. On success the returned [`Delivered`]
    /// says which message to update later; store it.
    async fn deliver(&self, notice: &Notice) -> Result<Delivered, DeliveryError>;

    /// Shows how the approval ended on the message `delivered` names, with
    /// no buttons left to press (for a webhook: posts an
    /// `approval.resolved` event). Safe to call more than once.
    async fn resolved(
        &self,
        delivered: &Delivered,
        notice: &Notice,
        resolution: &Resolution,
    ) -> Result<(), DeliveryError>;
}

/// Where a notice landed, kept so the message can be updated when the
/// approval ends and so incoming votes can be matched to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivered {
    /// The adapter's [`Channel::kind`].
    pub kind: String,
    /// The adapter's [`Channel::target`].
    pub target: String,
    /// The service's handle on the message: Slack `{channel, ts}`,
    /// Telegram `{chat_id, message_id}`, Discord `{channel_id,
    /// message_id}`, webhook `{delivery}`.
    pub message_ref: serde_json::Value,
}

/// Why a delivery or update failed. [`DeliveryError::is_retryable`] tells
/// the two families apart: the service being slow, unreachable, broken or
/// busy (try again later) versus the request itself being refused (fix the
/// configuration; resending the same request cannot help).
///
/// No message contains a bot token, a signing secret or a URL carrying
/// one: adapters strip them before building these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// No complete answer within the timeout.
    #[error("{to}: no answer within {}; the service is slow or down, retry later", ms(*.after))]
    Timeout {
        /// `"<kind> <target>"`.
        to: String,
        /// The timeout that ran out.
        after: Duration,
    },
    /// The service could not be reached at all.
    #[error(
        "{to}: could not reach the service ({detail}); check the network and api_base, retry later"
    )]
    Connection {
        /// `"<kind> <target>"`.
        to: String,
        /// What the network layer said, secrets removed.
        detail: String,
    },
    /// A 5xx answer, or an API error the service documents as temporary.
    #[error("{to}: the service failed ({detail}); retry later")]
    Server {
        /// `"<kind> <target>"`.
        to: String,
        /// The status or API error code.
        detail: String,
    },
    /// HTTP 429: too many requests. `retry_after` is how long the service
    /// asked to wait, when it said.
    #[error("{to}: rate limited by the service; {}", wait_text(*.retry_after))]
    RateLimited {
        /// `"<kind> <target>"`.
        to: String,
        /// The service's Retry-After.
        retry_after: Option<Duration>,
    },
    /// The service refused the request (a 4xx other than 429, or an API
    /// error such as Slack's `channel_not_found`).
    #[error("{to}: the service refused the request ({detail}); {hint}")]
    Refused {
        /// `"<kind> <target>"`.
        to: String,
        /// The status and the service's own error text, secrets removed.
        detail: String,
        /// What to check.
        hint: &'static str,
    },
    /// A success status whose body is not the API's answer. Not retried:
    /// the request may well have been accepted (resending could post
    /// twice), and an answer of the wrong shape usually means `api_base`
    /// points somewhere else.
    #[error(
        "{to}: the answer could not be understood ({detail}); check api_base points at the real API"
    )]
    Malformed {
        /// `"<kind> <target>"`.
        to: String,
        /// What was wrong with it.
        detail: String,
    },
    /// The adapter cannot send this at all (a message reference from
    /// another adapter, a button payload over the service's limit…).
    #[error("{to}: {detail}")]
    Invalid {
        /// `"<kind> <target>"`.
        to: String,
        /// What is wrong and what to change.
        detail: String,
    },
}

impl DeliveryError {
    /// Whether sending the same request again later may succeed: timeouts,
    /// connection failures, 5xx, 429 and temporary API errors.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            DeliveryError::Timeout { .. }
                | DeliveryError::Connection { .. }
                | DeliveryError::Server { .. }
                | DeliveryError::RateLimited { .. }
        )
    }

    /// How long the service asked to wait before the next try (429's
    /// Retry-After), if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            DeliveryError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

fn wait_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!("it asked to wait {}, retry after that", ms(d)),
        None => "wait a little before retrying".to_string(),
    }
}
