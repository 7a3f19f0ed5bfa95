//! Discord: a bot message with an embed and two buttons through `POST
//! /channels/{id}/messages`, edited to the outcome (buttons removed)
//! through `PATCH /channels/{id}/messages/{message}`; button presses come
//! back as Ed25519-signed interactions ([`verify`], [`parse_interaction`],
//! [`accept`]).

mod callback;

pub use callback::{
    SIGNATURE_HEADER, TIMESTAMP_HEADER, WINDOW_SECS, accept, ack_update, ephemeral,
    parse_interaction, parse_public_key, pong, verify,
};

use crate::channel::{Channel, ClientOptions, Delivered, DeliveryError};
use crate::config_error::ConfigError;
use crate::http::{Http, api_base, retry_after_secs, token_auth};
use crate::notice::{Notice, Resolution, clip, clip_marked, fit_rendered};
use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;

/// Discord's REST API, version 10.
pub const DEFAULT_API_BASE: &str = "https://discord.com/api/v10";
/// The prefix of the Approve button's `custom_id`, before `:<approval id>`.
pub const APPROVE_PREFIX: &str = "toolgate_approve";
/// The prefix of the Deny button's `custom_id`.
pub const DENY_PREFIX: &str = "toolgate_deny";

const HINT: &str = "check the bot token, the channel id, and that the bot can view the channel \
                    and send messages in it; retrying will not help";

/// Posts approvals to one Discord channel as a bot.
pub struct DiscordChannel {
    channel_id: String,
    base: String,
    auth: HeaderValue,
    http: Http,
}

impl fmt::Debug for DiscordChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiscordChannel")
            .field("channel_id", &self.channel_id)
            .field("api_base", &self.base)
            .field("bot_token", &"<set>")
            .finish_non_exhaustive()
    }
}

impl DiscordChannel {
    /// A channel posting to `channel_id` (a numeric snowflake) with the
    /// bot token, sent only as `Authorization: Bot <token>`.
    pub fn new(
        bot_token: &str,
        channel_id: &str,
        options: &ClientOptions,
    ) -> Result<DiscordChannel, ConfigError> {
        let invalid = |detail: String| ConfigError::invalid("discord", detail);
        let (token, auth) = token_auth("discord", "Bot", bot_token)?;
        let channel_id = channel_id.trim();
        if !is_snowflake(channel_id) {
            return Err(invalid(format!(
                "channel_id {channel_id:?} is not a Discord id (digits only; copy it with \
                 developer mode on)"
            )));
        }
        let base =
            api_base(options.api_base.as_deref().unwrap_or(DEFAULT_API_BASE)).map_err(invalid)?;
        let http = Http::new(
            format!("discord {channel_id}"),
            options.timeout,
            vec![token],
        )
        .map_err(invalid)?;
        Ok(DiscordChannel {
            channel_id: channel_id.to_string(),
            base,
            auth,
            http,
        })
    }

    /// Sends `body` to `path` and returns the answer's JSON.
    async fn call(&self, method: Method, path: &str, body: &Value) -> Result<Value, DeliveryError> {
        let request = self
            .http
            .client()
            .request(method, format!("{}{path}", self.base))
            .header(AUTHORIZATION, self.auth.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        let answer = self.http.send(request).await?;
        if answer.status.is_success() {
            return serde_json::from_slice(&answer.body).map_err(|e| {
                self.http
                    .malformed(format!("not Discord's JSON answer: {e}"))
            });
        }
        let said: Option<ApiError> = serde_json::from_slice(&answer.body).ok();
        if answer.status == StatusCode::TOO_MANY_REQUESTS {
            // The header is whole seconds; the body has the precise value.
            let wait = answer.retry_after.or_else(|| {
                said.as_ref()
                    .and_then(|s| s.retry_after)
                    .and_then(retry_after_secs)
            });
            return Err(self.http.rate_limited(wait));
        }
        let detail = said.map(|s| match (s.code, s.message) {
            (Some(code), Some(message)) => format!("{code} {message}"),
            (None, Some(message)) => message,
            (Some(code), None) => code.to_string(),
            (None, None) => String::new(),
        });
        Err(self.http.status_error(&answer, detail, HINT))
    }
}

/// Discord's error body.
#[derive(Deserialize)]
struct ApiError {
    message: Option<String>,
    code: Option<i64>,
    retry_after: Option<f64>,
}

#[async_trait]
impl Channel for DiscordChannel {
    fn kind(&self) -> &'static str {
        "discord"
    }

    fn target(&self) -> String {
        self.channel_id.clone()
    }

    async fn deliver(&self, notice: &Notice) -> Result<Delivered, DeliveryError> {
        self.http.check_approval_id(&notice.approval_id)?;
        let body = json!({
            "content": clip(&format!("\u{1f510} {}", escape(&notice.title())), 2000),
            "embeds": [request_embed(notice)],
            "components": [{
                "type": 1,
                "components": [
                    button(3, "Approve", APPROVE_PREFIX, &notice.approval_id),
                    button(4, "Deny", DENY_PREFIX, &notice.approval_id),
                ],
            }],
            // Nothing in a summary may ping @everyone or anyone else.
            "allowed_mentions": { "parse": [] },
        });
        let path = format!("/channels/{}/messages", self.channel_id);
        let answer = self.call(Method::POST, &path, &body).await?;
        let id = answer.get("id").and_then(Value::as_str);
        let channel = answer.get("channel_id").and_then(Value::as_str);
        let (Some(id), Some(channel)) = (id, channel) else {
            return Err(self
                .http
                .malformed("the answer has no message id or channel_id"));
        };
        Ok(Delivered {
            kind: "discord".into(),
            target: self.channel_id.clone(),
            message_ref: json!({ "channel_id": channel, "message_id": id }),
        })
    }

    async fn resolved(
        &self,
        delivered: &Delivered,
        notice: &Notice,
        resolution: &Resolution,
    ) -> Result<(), DeliveryError> {
        let field = |name: &str| delivered.message_ref.get(name).and_then(Value::as_str);
        // Both go into the URL path, so only digits are accepted.
        let (Some(channel), Some(message)) = (field("channel_id"), field("message_id")) else {
            return Err(self.http.invalid(
                "the stored message reference has no Discord channel_id and message_id; it was \
                 not made by this adapter, so the message cannot be edited",
            ));
        };
        if !is_snowflake(channel) || !is_snowflake(message) {
            return Err(self
                .http
                .invalid("the stored message reference holds ids that are not Discord ids"));
        }
        let body = json!({
            "content": clip(&format!("{} {}", resolution.mark(), escape(&notice.title())), 2000),
            "embeds": [{
                "title": clip(&escape(&notice.title()), 256),
                "description": fit_rendered(4096, |m| format!(
                    "{}\n\n{}",
                    escape(&notice.command_text(m * 3 / 4)),
                    escape(&clip_marked(&resolution.sentence(), m / 4))
                )),
                "color": outcome_color(resolution),
            }],
            "components": [],
            "allowed_mentions": { "parse": [] },
        });
        let path = format!("/channels/{channel}/messages/{message}");
        self.call(Method::PATCH, &path, &body).await.map(drop)
    }
}

fn request_embed(n: &Notice) -> Value {
    let expiry = n.expires_at_ms.div_euclid(1000);
    let mut fields = vec![
        field("Risk", &n.risk),
        field("Tool", &n.tool),
        field("Votes", &n.votes_text()),
        // Discord renders `<t:…:R>` as "in 5 minutes" in each reader's time.
        json!({ "name": "Expires", "value": format!("<t:{expiry}:R>"), "inline": true }),
    ];
    if let Some(agent) = &n.agent {
        fields.push(field("Agent", agent));
    }
    if let Some(session) = &n.session {
        fields.push(field("Session", session));
    }
    // The command goes in the description, escaped (a title would cut it
    // at 256 characters); the reason after it.
    let description = fit_rendered(3900, |m| {
        format!(
            "{}\n\n**Reason:** {}",
            escape(&n.command_text(m * 3 / 4)),
            escape(&clip_marked(&n.reason, m / 4))
        )
    });
    let mut description = description;
    if let Some(url) = &n.dashboard_url {
        description.push_str(&format!("\n[Open in the dashboard]({url})"));
    }
    json!({
        "title": clip(&escape(&n.title()), 256),
        "description": clip(&description, 4096),
        "color": risk_color(&n.risk),
        "fields": fields,
    })
}

fn field(name: &str, value: &str) -> Value {
    let value = fit_rendered(1024, |m| escape(&clip_marked(value, m)));
    json!({ "name": name, "value": value, "inline": true })
}

fn button(style: u8, label: &str, prefix: &str, approval_id: &str) -> Value {
    json!({
        "type": 2,
        "style": style,
        "label": label,
        "custom_id": format!("{prefix}:{approval_id}"),
    })
}

/// Amber for middling risk, red for the top classes.
fn risk_color(risk: &str) -> u32 {
    match risk {
        "R3" | "R4" => 0xd9_3025,
        "R2" => 0xe0_a800,
        _ => 0x58_65f2,
    }
}

fn outcome_color(r: &Resolution) -> u32 {
    match r {
        Resolution::Approved { .. } => 0x2e_a043,
        Resolution::Denied { .. } => 0xd9_3025,
        _ => 0x80_8080,
    }
}

/// Backslash before Discord's markdown characters, so a summary shows as
/// typed (and cannot fake a link or a heading).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*'
                | '_'
                | '~'
                | '`'
                | '|'
                | '>'
                | '#'
                | '['
                | ']'
                | '('
                | ')'
                | '-'
                | '<'
                | '@'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Discord id: 1 to 20 digits.
pub(crate) fn is_snowflake(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|c| c.is_ascii_digit())
}
