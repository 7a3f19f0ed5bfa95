//! Slack: a Block Kit message with Approve and Deny buttons through
//! `chat.postMessage`, rewritten with the outcome through `chat.update`;
//! button presses come back as signed interaction callbacks
//! ([`verify_request`], [`parse_interaction`], [`accept`]).

mod blocks;
mod callback;

pub use callback::{
    SIGNATURE_HEADER, TIMESTAMP_HEADER, WINDOW_SECS, accept, parse_interaction, verify_request,
};

use crate::channel::{Channel, ClientOptions, Delivered, DeliveryError};
use crate::config_error::ConfigError;
use crate::http::{Http, api_base, token_auth};
use crate::notice::{Notice, Resolution};
use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;

/// Slack's Web API.
pub const DEFAULT_API_BASE: &str = "https://slack.com/api";
/// The `action_id` of the Approve button.
pub const APPROVE_ACTION: &str = "toolgate_approve";
/// The `action_id` of the Deny button.
pub const DENY_ACTION: &str = "toolgate_deny";

/// API error codes Slack documents as temporary: worth another try.
const TEMPORARY_ERRORS: &[&str] = &[
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
];

/// What to check when Slack refuses a request.
const HINT: &str = "check the bot token, that the bot is in the channel and has the chat:write \
                    scope; retrying will not help";

/// Posts approvals to one Slack channel as a bot.
pub struct SlackChannel {
    channel: String,
    base: String,
    auth: HeaderValue,
    http: Http,
}

impl fmt::Debug for SlackChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlackChannel")
            .field("channel", &self.channel)
            .field("api_base", &self.base)
            .field("bot_token", &"<set>")
            .finish_non_exhaustive()
    }
}

impl SlackChannel {
    /// A channel posting to `channel` (an id such as `C0123`) with the
    /// bot token `bot_token` (`xoxb-…`, sent only as a Bearer header).
    pub fn new(
        bot_token: &str,
        channel: &str,
        options: &ClientOptions,
    ) -> Result<SlackChannel, ConfigError> {
        let invalid = |detail: String| ConfigError::invalid("slack", detail);
        let (token, auth) = token_auth("slack", "Bearer", bot_token)?;
        let channel = channel.trim();
        if channel.is_empty() || channel.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid(format!(
                "channel {channel:?} is not a channel id; use the id (like C0123), not the name"
            )));
        }
        let base =
            api_base(options.api_base.as_deref().unwrap_or(DEFAULT_API_BASE)).map_err(invalid)?;
        let http =
            Http::new(format!("slack {channel}"), options.timeout, vec![token]).map_err(invalid)?;
        Ok(SlackChannel {
            channel: channel.to_string(),
            base,
            auth,
            http,
        })
    }

    /// Calls the Web API `method` with a JSON body and returns the answer
    /// once Slack says `ok: true`.
    async fn call(&self, method: &str, body: &Value) -> Result<ApiAnswer, DeliveryError> {
        let request = self
            .http
            .client()
            .post(format!("{}/{method}", self.base))
            .header(AUTHORIZATION, self.auth.clone())
            .header(CONTENT_TYPE, "application/json; charset=utf-8")
            .body(body.to_string());
        let answer = self.http.send(request).await?;
        if !answer.status.is_success() {
            let detail = serde_json::from_slice::<ApiAnswer>(&answer.body)
                .ok()
                .and_then(|a| a.error);
            return Err(self.http.status_error(&answer, detail, HINT));
        }
        let parsed: ApiAnswer = serde_json::from_slice(&answer.body).map_err(|e| {
            self.http
                .malformed(format!("{method}: not Slack's JSON answer: {e}"))
        })?;
        match (parsed.ok, parsed.error.as_deref()) {
            (Some(true), _) => Ok(parsed),
            (Some(false), Some("ratelimited")) => Err(self.http.rate_limited(answer.retry_after)),
            (Some(false), Some(code)) if TEMPORARY_ERRORS.contains(&code) => {
                Err(self.http.server(format!("{method}: {code}")))
            }
            (Some(false), code) => Err(self.http.refused(
                format!("{method}: {}", code.unwrap_or("no error code")),
                HINT,
            )),
            (None, _) => Err(self
                .http
                .malformed(format!("{method}: the answer has no `ok` field"))),
        }
    }
}

/// The fields of a Web API answer used here.
#[derive(Deserialize)]
struct ApiAnswer {
    ok: Option<bool>,
    error: Option<String>,
    channel: Option<String>,
    ts: Option<String>,
}

#[async_trait]
impl Channel for SlackChannel {
    fn kind(&self) -> &'static str {
        "slack"
    }

    fn target(&self) -> String {
        self.channel.clone()
    }

    async fn deliver(&self, notice: &Notice) -> Result<Delivered, DeliveryError> {
        self.http.check_approval_id(&notice.approval_id)?;
        let body = json!({
            "channel": self.channel,
            "text": blocks::fallback_text(notice),
            "blocks": blocks::request(notice),
            // Slack's markup off for the text, on top of its escaping; no
            // names turned into mentions.
            "mrkdwn": false,
            "parse": "none",
            "link_names": false,
            "unfurl_links": false,
            "unfurl_media": false,
        });
        let answer = self.call("chat.postMessage", &body).await?;
        let (Some(channel), Some(ts)) = (answer.channel, answer.ts) else {
            return Err(self
                .http
                .malformed("chat.postMessage: the answer has no channel or ts"));
        };
        Ok(Delivered {
            kind: "slack".into(),
            target: self.channel.clone(),
            message_ref: json!({ "channel": channel, "ts": ts }),
        })
    }

    async fn resolved(
        &self,
        delivered: &Delivered,
        notice: &Notice,
        resolution: &Resolution,
    ) -> Result<(), DeliveryError> {
        let field = |name: &str| delivered.message_ref.get(name).and_then(Value::as_str);
        let (Some(channel), Some(ts)) = (field("channel"), field("ts")) else {
            return Err(self.http.invalid(
                "the stored message reference has no Slack channel and ts; it was not made by \
                 this adapter, so the message cannot be updated",
            ));
        };
        let body = json!({
            "channel": channel,
            "ts": ts,
            "text": blocks::resolved_text(resolution),
            "blocks": blocks::resolved(notice, resolution),
            "mrkdwn": false,
            "parse": "none",
            "link_names": false,
        });
        self.call("chat.update", &body).await.map(drop)
    }
}
