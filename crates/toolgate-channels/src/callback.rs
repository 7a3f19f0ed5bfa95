//! One entry point for every service's callbacks: the integrator's HTTP
//! handler hands over the headers and raw body, and gets a verified,
//! replay-checked [`Inbound`] or a refusal.

use crate::replay::ReplayGuard;
use crate::vote::{CallbackError, Inbound};
use crate::{discord, slack, telegram};
use reqwest::header::HeaderMap;
use std::fmt;

/// How one target's callbacks are verified. Holds secrets; its `Debug`
/// does not show them.
#[derive(Clone)]
pub struct CallbackAuth(Auth);

#[derive(Clone)]
enum Auth {
    Slack { signing_secret: String },
    Telegram { secret_token: String },
    Discord { public_key: String },
}

impl fmt::Debug for CallbackAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Auth::Discord { public_key } => write!(f, "CallbackAuth::Discord({public_key})"),
            _ => write!(f, "CallbackAuth::{}(<secret>)", self.kind()),
        }
    }
}

impl CallbackAuth {
    /// Slack, by the app's signing secret.
    pub fn slack(signing_secret: String) -> CallbackAuth {
        CallbackAuth(Auth::Slack { signing_secret })
    }

    /// Telegram, by the secret token given to `setWebhook`.
    pub fn telegram(secret_token: String) -> CallbackAuth {
        CallbackAuth(Auth::Telegram { secret_token })
    }

    /// Discord, by the application's public key (hex), checked here.
    pub fn discord(public_key_hex: &str) -> Result<CallbackAuth, CallbackError> {
        discord::parse_public_key(public_key_hex)?;
        Ok(CallbackAuth(Auth::Discord {
            public_key: public_key_hex.trim().to_string(),
        }))
    }

    /// The service: `"slack"`, `"telegram"` or `"discord"`.
    pub fn kind(&self) -> &'static str {
        match self.0 {
            Auth::Slack { .. } => "slack",
            Auth::Telegram { .. } => "telegram",
            Auth::Discord { .. } => "discord",
        }
    }

    /// Verifies one callback request (signature or secret token, and
    /// timestamp where the service sends one), parses it, and refuses it
    /// if `guard` has seen it. `body` must be the raw bytes as received.
    pub fn accept(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now_secs: i64,
        guard: &dyn ReplayGuard,
    ) -> Result<Inbound, CallbackError> {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        match &self.0 {
            Auth::Slack { signing_secret } => slack::accept(
                signing_secret,
                header(slack::TIMESTAMP_HEADER),
                header(slack::SIGNATURE_HEADER),
                body,
                now_secs,
                guard,
            )
            .map(|v| Inbound::Vote(Box::new(v))),
            Auth::Telegram { secret_token } => telegram::accept(
                secret_token,
                header(telegram::SECRET_HEADER),
                body,
                now_secs,
                guard,
            )
            .map(|v| Inbound::Vote(Box::new(v))),
            Auth::Discord { public_key } => discord::accept(
                public_key,
                header(discord::SIGNATURE_HEADER),
                header(discord::TIMESTAMP_HEADER),
                body,
                now_secs,
                guard,
            ),
        }
    }
}
