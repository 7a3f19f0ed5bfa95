//! Targets as configured: one `[[approvals.routing.target]]` table each.
//!
//! ```toml
//! [[approvals.routing.target]]
//! name = "ops-slack"
//! kind = "slack"
//! channel = "C0123"
//! bot_token_env = "SLACK_BOT_TOKEN"        # secrets come from the environment
//! signing_secret_env = "SLACK_SIGNING_SECRET"
//! # api_base = "http://127.0.0.1:9999"     # optional, for testing
//! # timeout = "5s"                         # optional
//! ```
//!
//! Secrets are named by environment variable, never written in the file;
//! unknown keys are refused, so a typo is an error rather than a setting
//! silently ignored.

use crate::callback::CallbackAuth;
use crate::channel::{Channel, ClientOptions, DEFAULT_TIMEOUT};
use crate::config_error::ConfigError;
use crate::discord::DiscordChannel;
use crate::slack::SlackChannel;
use crate::telegram::TelegramChannel;
use crate::webhook::WebhookChannel;
use serde::{Deserialize, Deserializer};
use std::sync::Arc;
use std::time::Duration;

/// The longest per-request timeout accepted.
const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// Reads environment variables; `std::env::var(..).ok()` in the daemon, a
/// map in tests.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// One configured target, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ChannelConfig {
    /// `kind = "webhook"`.
    Webhook(WebhookConfig),
    /// `kind = "slack"`.
    Slack(SlackConfig),
    /// `kind = "telegram"`.
    Telegram(TelegramConfig),
    /// `kind = "discord"`.
    Discord(DiscordConfig),
}

/// A signed webhook target.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// The target's name, for status and errors.
    pub name: String,
    /// Where to POST (http or https).
    pub url: String,
    /// The variable holding the signing secret.
    pub secret_env: String,
    /// Per-request timeout, like `"5s"`.
    #[serde(default, deserialize_with = "de_timeout")]
    pub timeout: Option<Duration>,
}

/// A Slack channel.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// The target's name.
    pub name: String,
    /// The channel id (`C0123`).
    pub channel: String,
    /// The variable holding the bot token (`xoxb-…`).
    pub bot_token_env: String,
    /// The variable holding the app's signing secret, to verify presses.
    pub signing_secret_env: String,
    /// The Web API base, for tests.
    pub api_base: Option<String>,
    /// Per-request timeout.
    #[serde(default, deserialize_with = "de_timeout")]
    pub timeout: Option<Duration>,
}

/// A Telegram chat.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelegramConfig {
    /// The target's name.
    pub name: String,
    /// The chat id, a number (`-1001234`) or `"@channelname"`.
    #[serde(deserialize_with = "de_id")]
    pub chat_id: String,
    /// The variable holding the bot token.
    pub bot_token_env: String,
    /// The variable holding the secret token given to `setWebhook`.
    pub webhook_secret_env: String,
    /// The Bot API base, for tests.
    pub api_base: Option<String>,
    /// Per-request timeout.
    #[serde(default, deserialize_with = "de_timeout")]
    pub timeout: Option<Duration>,
}

/// A Discord channel.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscordConfig {
    /// The target's name.
    pub name: String,
    /// The channel id (a snowflake, string or number).
    #[serde(deserialize_with = "de_id")]
    pub channel_id: String,
    /// The variable holding the bot token.
    pub bot_token_env: String,
    /// The application's public key, hex; public, so it may be in the file.
    pub public_key: String,
    /// The REST API base, for tests.
    pub api_base: Option<String>,
    /// Per-request timeout.
    #[serde(default, deserialize_with = "de_timeout")]
    pub timeout: Option<Duration>,
}

impl ChannelConfig {
    /// The target's configured name.
    pub fn name(&self) -> &str {
        match self {
            ChannelConfig::Webhook(c) => &c.name,
            ChannelConfig::Slack(c) => &c.name,
            ChannelConfig::Telegram(c) => &c.name,
            ChannelConfig::Discord(c) => &c.name,
        }
    }

    /// The adapter kind, as [`Channel::kind`] says it.
    pub fn kind(&self) -> &'static str {
        match self {
            ChannelConfig::Webhook(_) => "webhook",
            ChannelConfig::Slack(_) => "slack",
            ChannelConfig::Telegram(_) => "telegram",
            ChannelConfig::Discord(_) => "discord",
        }
    }

    /// The channel this target describes, secrets read through `env`.
    pub fn build(&self, env: Env<'_>) -> Result<Arc<dyn Channel>, ConfigError> {
        let label = self.label();
        let built: Result<Arc<dyn Channel>, ConfigError> = (|| match self {
            ChannelConfig::Webhook(c) => {
                let secret = secret(env, "secret_env", &c.secret_env)?;
                Ok(Arc::new(WebhookChannel::new(
                    &c.url,
                    secret,
                    &options(None, c.timeout),
                )?) as _)
            }
            ChannelConfig::Slack(c) => {
                let token = secret(env, "bot_token_env", &c.bot_token_env)?;
                let o = options(c.api_base.clone(), c.timeout);
                Ok(Arc::new(SlackChannel::new(&token, &c.channel, &o)?) as _)
            }
            ChannelConfig::Telegram(c) => {
                let token = secret(env, "bot_token_env", &c.bot_token_env)?;
                let o = options(c.api_base.clone(), c.timeout);
                Ok(Arc::new(TelegramChannel::new(&token, &c.chat_id, &o)?) as _)
            }
            ChannelConfig::Discord(c) => {
                let token = secret(env, "bot_token_env", &c.bot_token_env)?;
                let o = options(c.api_base.clone(), c.timeout);
                Ok(Arc::new(DiscordChannel::new(&token, &c.channel_id, &o)?) as _)
            }
        })();
        built.map_err(|e| e.about(&label))
    }

    /// How this target's button presses are verified, secrets read
    /// through `env`; `None` for a webhook, which receives no callbacks.
    pub fn callback_auth(&self, env: Env<'_>) -> Result<Option<CallbackAuth>, ConfigError> {
        let auth = match self {
            ChannelConfig::Webhook(_) => return Ok(None),
            ChannelConfig::Slack(c) => {
                secret(env, "signing_secret_env", &c.signing_secret_env).map(CallbackAuth::slack)
            }
            ChannelConfig::Telegram(c) => {
                secret(env, "webhook_secret_env", &c.webhook_secret_env).map(CallbackAuth::telegram)
            }
            ChannelConfig::Discord(c) => CallbackAuth::discord(&c.public_key)
                .map_err(|e| ConfigError::invalid("", format!("public_key: {e}"))),
        };
        auth.map(Some).map_err(|e| e.about(&self.label()))
    }

    fn label(&self) -> String {
        format!("target {:?} ({})", self.name(), self.kind())
    }
}

fn options(api_base: Option<String>, timeout: Option<Duration>) -> ClientOptions {
    ClientOptions {
        api_base,
        timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
    }
}

/// The value of the variable `var`, named by the setting `field`. The
/// target's name is filled in by the caller.
fn secret(env: Env<'_>, field: &'static str, var: &str) -> Result<String, ConfigError> {
    if var.is_empty() || !var.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        // Not echoed: a value that is not a variable name may be the
        // secret itself, pasted in the wrong place.
        return Err(ConfigError::invalid(
            "",
            format!(
                "{field} must name an environment variable (letters, digits and underscores); \
                 if the secret itself was pasted there, remove it from the file and rotate it"
            ),
        ));
    }
    match env(var) {
        Some(value) if !value.trim().is_empty() => Ok(value.trim().to_string()),
        _ => Err(ConfigError::MissingEnv {
            target: String::new(),
            field,
            var: var.to_string(),
        }),
    }
}

fn de_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text = String::deserialize(d)?;
    let timeout = humantime::parse_duration(&text).map_err(|e| {
        serde::de::Error::custom(format!(
            "timeout {text:?} is not a duration ({e}); write it like \"5s\" or \"800ms\""
        ))
    })?;
    if timeout.is_zero() || timeout > MAX_TIMEOUT {
        return Err(serde::de::Error::custom(format!(
            "timeout {text:?} is out of range; use more than 0 and at most 60s"
        )));
    }
    Ok(Some(timeout))
}

/// An id written as a TOML string or integer.
fn de_id<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Number(i64),
        Text(String),
    }
    Ok(match Id::deserialize(d)? {
        Id::Number(n) => n.to_string(),
        Id::Text(t) => t,
    })
}
