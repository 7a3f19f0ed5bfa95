//! Telegram: a Bot API message with an inline keyboard through
//! `sendMessage`, edited to the outcome (keyboard removed) through
//! `editMessageText`; button presses come back as webhook updates carrying
//! a `callback_query` ([`verify_webhook`], [`parse_update`], [`accept`]).
//!
//! The Bot API puts the token in the URL path (`/bot<token>/<method>`),
//! and HTTP libraries put URLs in their errors, so every error here is
//! built without the URL and scrubbed of the token as well.

mod callback;

pub use callback::{SECRET_HEADER, accept, parse_update, verify_webhook};

use crate::channel::{Channel, ClientOptions, Delivered, DeliveryError};
use crate::config_error::ConfigError;
use crate::http::{Http, api_base, retry_after_secs};
use crate::notice::{Notice, Resolution, clip, clip_marked};
use async_trait::async_trait;
use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;

/// The Bot API.
pub const DEFAULT_API_BASE: &str = "https://api.telegram.org";
/// Telegram's limit on a button's `callback_data`, in bytes.
pub const MAX_CALLBACK_DATA: usize = 64;
/// Telegram's limit on a message's text, in characters.
const MAX_TEXT: usize = 4096;

const HINT: &str = "check the bot token, the chat id, and that the bot is a member of the chat \
                    allowed to post; retrying will not help";

/// Posts approvals to one Telegram chat as a bot.
pub struct TelegramChannel {
    chat_id: String,
    /// `{api_base}/bot{token}`: secret, never shown.
    endpoint: String,
    http: Http,
}

impl fmt::Debug for TelegramChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelegramChannel")
            .field("chat_id", &self.chat_id)
            .field("bot_token", &"<set>")
            .finish_non_exhaustive()
    }
}

impl TelegramChannel {
    /// A channel posting to `chat_id` (a numeric id such as `-1001234`, or
    /// `@channelname`) with the bot token from BotFather.
    pub fn new(
        bot_token: &str,
        chat_id: &str,
        options: &ClientOptions,
    ) -> Result<TelegramChannel, ConfigError> {
        let invalid = |detail: String| ConfigError::invalid("telegram", detail);
        let token = bot_token.trim();
        // Only these characters, so the token sits in the path unescaped
        // and scrubbing finds it exactly as written.
        if token.is_empty()
            || !token
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'_' | b'-'))
        {
            return Err(invalid(
                "the bot token is empty or not of the form 123456:ABC-…; copy it from BotFather again"
                    .into(),
            ));
        }
        let chat_id = chat_id.trim();
        let numeric = chat_id.parse::<i64>().is_ok();
        let username = chat_id.len() > 1
            && chat_id.starts_with('@')
            && chat_id[1..]
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_');
        if !numeric && !username {
            return Err(invalid(format!(
                "chat_id {chat_id:?} is neither a numeric chat id nor @channelname"
            )));
        }
        let base =
            api_base(options.api_base.as_deref().unwrap_or(DEFAULT_API_BASE)).map_err(invalid)?;
        let http = Http::new(
            format!("telegram {chat_id}"),
            options.timeout,
            vec![token.to_string()],
        )
        .map_err(invalid)?;
        Ok(TelegramChannel {
            chat_id: chat_id.to_string(),
            endpoint: format!("{base}/bot{token}"),
            http,
        })
    }

    /// Stops the button's spinner on the presser's screen and shows them
    /// `text` (clipped to Telegram's 200 characters), if any. Call it for
    /// every callback query, refused ones included, with the id from the
    /// vote's `ack.callback_query_id`.
    pub async fn answer_callback_query(
        &self,
        callback_query_id: &str,
        text: Option<&str>,
    ) -> Result<(), DeliveryError> {
        let mut body = json!({ "callback_query_id": callback_query_id });
        if let Some(text) = text {
            body["text"] = json!(clip(text, 200));
        }
        self.call("answerCallbackQuery", &body).await.map(drop)
    }

    /// The chat id as the API wants it: a number when it is one.
    fn chat(&self) -> Value {
        match self.chat_id.parse::<i64>() {
            Ok(n) => json!(n),
            Err(_) => json!(self.chat_id),
        }
    }

    /// Calls `method` and returns its `result` once Telegram says
    /// `ok: true`.
    async fn call(&self, method: &str, body: &Value) -> Result<Value, DeliveryError> {
        let request = self
            .http
            .client()
            .post(format!("{}/{method}", self.endpoint))
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        let answer = self.http.send(request).await?;
        let Ok(parsed) = serde_json::from_slice::<ApiAnswer>(&answer.body) else {
            if !answer.status.is_success() {
                return Err(self.http.status_error(&answer, None, HINT));
            }
            return Err(self
                .http
                .malformed(format!("{method}: not the Bot API's JSON answer")));
        };
        if parsed.ok == Some(true) && answer.status.is_success() {
            return parsed.result.ok_or_else(|| {
                self.http
                    .malformed(format!("{method}: the answer has no result"))
            });
        }
        if parsed.ok.is_none() && answer.status.is_success() {
            return Err(self
                .http
                .malformed(format!("{method}: the answer has no `ok` field")));
        }
        let description = parsed.description.unwrap_or_default();
        let code = parsed
            .error_code
            .unwrap_or(i64::from(answer.status.as_u16()));
        if code == 429 || answer.status == StatusCode::TOO_MANY_REQUESTS {
            let wait = parsed
                .parameters
                .and_then(|p| p.retry_after)
                .and_then(retry_after_secs)
                .or(answer.retry_after);
            return Err(self.http.rate_limited(wait));
        }
        if (500..600).contains(&code) {
            return Err(self.http.server(format!("{method}: {code} {description}")));
        }
        Err(self
            .http
            .refused(format!("{method}: {code} {description}"), HINT))
    }
}

/// The envelope of every Bot API answer.
#[derive(Deserialize)]
struct ApiAnswer {
    ok: Option<bool>,
    result: Option<Value>,
    description: Option<String>,
    error_code: Option<i64>,
    parameters: Option<Parameters>,
}

#[derive(Deserialize)]
struct Parameters {
    retry_after: Option<f64>,
}

#[async_trait]
impl Channel for TelegramChannel {
    fn kind(&self) -> &'static str {
        "telegram"
    }

    fn target(&self) -> String {
        self.chat_id.clone()
    }

    async fn deliver(&self, notice: &Notice) -> Result<Delivered, DeliveryError> {
        self.http.check_approval_id(&notice.approval_id)?;
        let approve = format!("a:{}", notice.approval_id);
        let deny = format!("d:{}", notice.approval_id);
        if approve.len() > MAX_CALLBACK_DATA || deny.len() > MAX_CALLBACK_DATA {
            return Err(self.http.invalid(format!(
                "the button data is over Telegram's {MAX_CALLBACK_DATA}-byte limit"
            )));
        }
        let body = json!({
            "chat_id": self.chat(),
            "text": clip(&request_text(notice), MAX_TEXT),
            "link_preview_options": { "is_disabled": true },
            "reply_markup": { "inline_keyboard": [[
                { "text": "\u{2705} Approve", "callback_data": approve },
                { "text": "\u{26d4} Deny", "callback_data": deny },
            ]] },
        });
        let result = self.call("sendMessage", &body).await?;
        let message_id = result.get("message_id").and_then(Value::as_i64);
        let chat_id = result.pointer("/chat/id").and_then(Value::as_i64);
        let (Some(message_id), Some(chat_id)) = (message_id, chat_id) else {
            return Err(self
                .http
                .malformed("sendMessage: the result has no message_id or chat.id"));
        };
        Ok(Delivered {
            kind: "telegram".into(),
            target: self.chat_id.clone(),
            message_ref: json!({ "chat_id": chat_id, "message_id": message_id }),
        })
    }

    async fn resolved(
        &self,
        delivered: &Delivered,
        notice: &Notice,
        resolution: &Resolution,
    ) -> Result<(), DeliveryError> {
        let r = &delivered.message_ref;
        let (Some(chat_id), Some(message_id)) = (
            r.get("chat_id").and_then(Value::as_i64),
            r.get("message_id").and_then(Value::as_i64),
        ) else {
            return Err(self.http.invalid(
                "the stored message reference has no Telegram chat_id and message_id; it was \
                 not made by this adapter, so the message cannot be edited",
            ));
        };
        let text = format!(
            "{}\n{}\n\n{} {}",
            defuse(&notice.title()),
            defuse(&notice.command_text(3000)),
            resolution.mark(),
            defuse(&clip_marked(&resolution.sentence(), 500))
        );
        let body = json!({
            "chat_id": chat_id,
            "message_id": message_id,
            "text": clip(&text, MAX_TEXT),
            "link_preview_options": { "is_disabled": true },
            // An empty keyboard: the buttons go.
            "reply_markup": { "inline_keyboard": [] },
        });
        match self.call("editMessageText", &body).await {
            // A second edit with the same text: it already shows this.
            Err(DeliveryError::Refused { detail, .. })
                if detail.contains("message is not modified") =>
            {
                Ok(())
            }
            other => other.map(drop),
        }
    }
}

/// The request as plain text (no parse mode, so nothing in it can be read
/// as markup, and no link can hide behind other words).
fn request_text(n: &Notice) -> String {
    let mut text = format!(
        "\u{1f510} {}\n{}\n\nReason: {}\nVotes: {}\nExpires: {}",
        defuse(&n.title()),
        defuse(&n.command_text(3000)),
        defuse(&clip_marked(&n.reason, 500)),
        n.votes_text(),
        n.expires_text()
    );
    if let Some(agent) = &n.agent {
        text.push_str(&format!("\nAgent: {}", defuse(&clip_marked(agent, 100))));
    }
    if let Some(session) = &n.session {
        text.push_str(&format!(
            "\nSession: {}",
            defuse(&clip_marked(session, 100))
        ));
    }
    // A link in the text rather than a URL button: Telegram refuses the
    // whole message when a button's URL is one it dislikes (a private
    // host), and the vote buttons matter more.
    if let Some(url) = &n.dashboard_url {
        text.push_str(&format!("\nDashboard: {url}"));
    }
    text
}

/// Text the agent may have written, made unable to mention anyone: even in
/// plain text Telegram turns `@name` into a mention that notifies that
/// person. A word joiner (invisible) after each `@` breaks the mention
/// and leaves the text reading the same.
fn defuse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        out.push(c);
        if c == '@' {
            out.push('\u{2060}');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_broken_and_the_text_reads_the_same() {
        let out = defuse("ping @admin and @channel: mail a@b.c");
        assert!(!out.contains("@a") && !out.contains("@c") && !out.contains("@b"));
        assert_eq!(
            out.replace('\u{2060}', ""),
            "ping @admin and @channel: mail a@b.c"
        );
    }
}
